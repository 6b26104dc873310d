// SPDX-License-Identifier: GPL-2.0

//! The netlink decoders against replies recorded in the lab (two nodes,
//! two links, after a transfer): a dump of ri2n0 and the events of a
//! carrier loss and a blackhole, with the kernel's own records of the
//! dump's moment (then a procfs file) to compare with.

use ri2n_core::params::SPECS;
use ri2n_core::uapi::{self, Reason};
use ri2n_state::nl::{decode_dump, decode_event, decode_recording, encode_recording};
use ri2n_state::{parse, to_records};

const DUMP: &[u8] = include_bytes!("data/two-links.nl");
const SAME: &str = include_str!("data/two-links-same.txt");
const EVENTS: &[u8] = include_bytes!("data/events.nl");

#[test]
fn a_recorded_dump_decodes_to_what_procfs_says() {
    let msgs = decode_recording(DUMP).unwrap();
    assert_eq!(msgs.len(), 2, "the device's message, then one of peers");
    let nl = decode_dump(&msgs).unwrap();
    let pf = parse(SAME).unwrap();
    assert_eq!(nl.name(), "ri2n0");
    for k in ["name", "mac", "mtu", "state", "epoch"] {
        assert_eq!(nl.device.get(k), pf.device.get(k), "device {k}");
    }
    assert_eq!(nl.params, pf.params, "every parameter, in order");
    assert_eq!(nl.params.pairs.len(), SPECS.len());
    assert_eq!(nl.auth, pf.auth);
    let names = |s: &ri2n_state::State| -> Vec<String> {
        s.slaves.iter().map(|r| r.str("name").to_string()).collect()
    };
    assert_eq!(names(&nl), names(&pf));
    let keys =
        |r: &ri2n_state::Record| -> Vec<String> { r.pairs.iter().map(|p| p.0.clone()).collect() };
    // procfs lacks the counters added since (events_dropped).
    let pf_counters = keys(&pf.counters);
    let nl_counters = keys(&nl.counters);
    assert_eq!(&nl_counters[..pf_counters.len()], &pf_counters[..]);
    assert_eq!(nl_counters.len(), uapi::COUNTERS.len());
    assert_eq!(keys(&nl.peers_summary), keys(&pf.peers_summary));
    assert_eq!(keys(&nl.slaves[0]), keys(&pf.slaves[0]));
    // The transfer's counts had settled: the same at both readings.
    assert_eq!(nl.counters.num("tx_packets"), pf.counters.num("tx_packets"));
    assert_eq!(nl.peers.len(), pf.peers.len());
    for (a, b) in nl.peers.iter().zip(&pf.peers) {
        assert_eq!(a.mac(), b.mac());
        assert_eq!(keys(&a.rec), keys(&b.rec));
        assert_eq!(a.rec.get("epoch"), b.rec.get("epoch"));
        assert_eq!(a.endpoints.len(), 2);
        for (x, y) in a.endpoints.iter().zip(&b.endpoints) {
            assert_eq!(keys(x), keys(y));
            for k in ["peer", "link", "slave", "state", "fails", "peer_slave_mac"] {
                assert_eq!(x.get(k), y.get(k), "endpoint {k}");
            }
        }
    }
}

#[test]
fn recorded_events_decode_in_order() {
    let msgs = decode_recording(EVENTS).unwrap();
    let evs: Vec<_> = msgs.iter().map(|m| decode_event(m).unwrap()).collect();
    assert_eq!(evs[0].reason, Some(Reason::CarrierDown));
    assert_eq!(evs[0].slave.as_deref(), Some("eth1"));
    assert_eq!(evs[0].peer, None);
    assert_eq!(evs[1].reason, Some(Reason::CarrierUp));
    let fail = evs
        .iter()
        .find(|e| e.reason == Some(Reason::Failed))
        .unwrap();
    assert_eq!(fail.states, Some(("up", "failed")));
    assert_eq!(fail.link, Some(1));
    assert!(fail.peer.as_deref().is_some_and(|p| p.len() == 17));
    let back = evs
        .iter()
        .rfind(|e| e.states.is_some_and(|s| s.1 == "up"))
        .unwrap();
    assert_eq!(back.states.unwrap().0, "failed");
    assert!(evs.windows(2).all(|w| w[0].time_ns <= w[1].time_ns));
    assert!(evs
        .iter()
        .all(|e| e.dev == "ri2n0" && e.ifindex > 0 && e.dropped == 0));
}

#[test]
fn the_records_of_a_dump_read_back_the_same() {
    let nl = decode_dump(&decode_recording(DUMP).unwrap()).unwrap();
    let text = to_records(&nl);
    assert!(text.starts_with("ri2n-state version=1 protocol="));
    assert!(text.ends_with("\nend\n"));
    assert_eq!(parse(&text).unwrap(), nl);
}

#[test]
fn a_recording_round_trips() {
    let msgs = decode_recording(DUMP).unwrap();
    assert_eq!(encode_recording(&msgs), DUMP);
}

#[test]
fn every_cut_is_an_error_never_a_panic() {
    for n in 0..DUMP.len() {
        if let Ok(msgs) = decode_recording(&DUMP[..n]) {
            // Cut between messages: a dump without its peers, or nothing.
            let _ = decode_dump(&msgs);
        }
    }
    // A message without the device first.
    let msgs = decode_recording(DUMP).unwrap();
    assert!(decode_dump(&msgs[1..]).is_err());
    assert!(decode_dump(&[]).is_err());
}

/// Replies recorded in the lab (`RI2N_RECORD_REPLIES`): `ri2n set ri2n0
/// maxbuf 512` (refused), `ri2n set ri2n0 hbweight 3` (acked), `ri2n get
/// ri2n0 param hbweight` (a dump); each after the controller's answer
/// naming the family.
const REPLIES: &[u8] = include_bytes!("data/replies.nl");

#[test]
fn recorded_replies_say_what_the_kernel_did() {
    use neli::consts::nl::NlmF;
    use ri2n_state::nl::{decode_replies, take_reply, NlError};
    let bufs = decode_replies(REPLIES).unwrap();
    let seq =
        |b: &neli::types::NlBuffer<u16, ri2n_state::nl::Msg>| *b.iter().next().unwrap().nl_seq();
    let mut it = bufs.into_iter();
    let family = |it: &mut std::vec::IntoIter<_>| {
        let b = it.next().unwrap();
        let s = seq(&b);
        let mut out = Vec::new();
        assert!(
            take_reply(b, s, NlmF::empty(), &mut out).unwrap(),
            "one answer"
        );
        assert_eq!(out.len(), 1);
    };
    family(&mut it);
    let b = it.next().unwrap();
    let s = seq(&b);
    match take_reply(b, s, NlmF::ACK, &mut Vec::new()) {
        Err(NlError::Refused(r)) => {
            assert_eq!(r.errno, libc::EINVAL);
            assert_eq!(
                r.msg.as_deref(),
                Some("maxbuf must be 1..=511 packets, not 512")
            );
        }
        other => panic!("{other:?}"),
    }
    family(&mut it);
    let b = it.next().unwrap();
    let s = seq(&b);
    let mut out = Vec::new();
    assert!(take_reply(b, s, NlmF::ACK, &mut out).unwrap(), "acked");
    assert!(out.is_empty());
    family(&mut it);
    // The dump: its messages, in one buffer or more, then the end.
    let mut out = Vec::new();
    let mut done = false;
    for b in it {
        let s = seq(&b);
        done = take_reply(b, s, NlmF::DUMP, &mut out).unwrap();
    }
    assert!(done, "the dump ended");
    let msgs: Vec<_> = out
        .iter()
        .filter_map(|m| m.get_payload().cloned())
        .collect();
    let st = decode_dump(&msgs).unwrap();
    assert_eq!(st.params.num("hbweight"), 3);
    // A reply to another request is not this one's.
    let b = decode_replies(REPLIES).unwrap().remove(1);
    let s = seq(&b);
    assert!(!take_reply(b, s.wrapping_add(1), NlmF::ACK, &mut Vec::new()).unwrap());
}
