//! Keyed frames (core/auth.rs): tags, keys and their rotation, and the
//! rules that refuse replays (strict window, strict broadcast filter,
//! heartbeat counters, epochs).

mod common;

use common::*;
use ri2n_core::auth::*;
use ri2n_core::dedup::Dedup;
use ri2n_core::header::*;
use ri2n_core::heap::{Buf, HeapBufs};
use ri2n_core::params::Params;
use ri2n_core::rx::{Epoch, PeerRx, SealedEpoch};
use ri2n_core::seq::Seq;
use ri2n_core::time::Instant;

const ADDRS: [u8; 12] = [2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1];

fn key(b: u8) -> Key {
    Key::from_bytes(&[b; KEY_LEN])
}

/// A sealed data frame's header as the driver builds it.
fn sealed(k: &Key, seq: u32, epoch: u64) -> [u8; SEALED_LEN] {
    let mut h = [0u8; SEALED_LEN];
    Header {
        kind: Kind::Data,
        protocol: 0x0800,
        seq: Seq(seq),
    }
    .encode_sealed(epoch, &mut h);
    let tag = Msg::new(&ADDRS, &h, &[]).tag(k);
    h[16..].copy_from_slice(&tag);
    h
}

fn verifies(keys: &Keys, h: &[u8; SEALED_LEN]) -> bool {
    match Header::decode(h) {
        Ok((_, Some(seal))) => keys.verify(&Msg::new(&ADDRS, h, &[]), &seal.tag),
        _ => false,
    }
}

#[test]
fn a_sealed_header_round_trips() {
    let h = sealed(&key(1), 7, 0x0123_4567_89ab_cdef);
    assert_eq!(h[0], VERSION_SEALED);
    let (hdr, seal) = Header::decode(&h).unwrap();
    assert_eq!(
        hdr,
        Header {
            kind: Kind::Data,
            protocol: 0x0800,
            seq: Seq(7)
        }
    );
    assert_eq!(seal.unwrap().epoch, 0x0123_4567_89ab_cdef);
    assert_eq!(&seal.unwrap().tag[..], &h[16..]);
}

#[test]
fn a_tag_covers_addresses_header_and_epoch_and_needs_the_key() {
    let mut keys = Keys::default();
    keys.seal_with(Some(key(1)));
    let good = sealed(&key(1), 7, 99);
    assert!(verifies(&keys, &good));
    // Every covered byte changed alone breaks the tag.
    for i in 0..16 {
        let mut h = good;
        h[i] ^= 1;
        if h[0] != VERSION_SEALED {
            continue;
        }
        assert!(!verifies(&keys, &h), "byte {} not covered", i);
    }
    let (_, seal) = Header::decode(&good).unwrap();
    let mut other = ADDRS;
    other[11] ^= 1;
    assert!(
        !keys.verify(&Msg::new(&other, &good, &[]), &seal.unwrap().tag),
        "source MAC not covered"
    );
    assert!(
        !verifies(&keys, &sealed(&key(2), 7, 99)),
        "another key's tag"
    );
    assert!(
        !Keys::default().verify(&Msg::new(&ADDRS, &good, &[]), &seal.unwrap().tag),
        "no key verifies nothing"
    );
}

#[test]
fn a_heartbeat_tag_covers_its_payload() {
    let k = key(3);
    let hb = Heartbeat {
        epoch: 5,
        flags: 0,
        link: 1,
        down: 0,
        probe_shift: 0,
        counts: Some(Counts {
            tx: 1,
            echo_tx: 2,
            echo_rx: 3,
        }),
        counter: Some(0x0102_0304_0506_0708),
    };
    let mut p = [0u8; HEARTBEAT_SEALED_LEN];
    assert_eq!(hb.encode(&mut p), HEARTBEAT_SEALED_LEN);
    assert_eq!(Heartbeat::decode(&p), Ok(hb));
    assert_eq!(Heartbeat::decode(&p[..27]), Err(DecodeError::Short));
    let mut h = [0u8; SEALED_LEN];
    Header {
        kind: Kind::Heartbeat,
        protocol: 0,
        seq: Seq(1),
    }
    .encode_sealed(5, &mut h);
    let tag = Msg::new(&ADDRS, &h, &p).tag(&k);
    for i in 0..p.len() {
        let mut q = p;
        q[i] ^= 0x80;
        assert_ne!(
            Msg::new(&ADDRS, &h, &q).tag(&k),
            tag,
            "payload byte {} not covered",
            i
        );
    }
}

#[test]
fn tags_compare_whole() {
    let a = [1u8, 2, 3, 4, 5, 6, 7, 8];
    let mut b = a;
    assert!(tags_equal(&a, &b));
    b[7] = 0;
    assert!(!tags_equal(&a, &b));
}

#[test]
fn keys_parse_from_32_hex_digits_only_and_never_print() {
    let k = Key::parse_hex("000102030405060708090a0b0c0d0e0f").unwrap();
    assert_eq!(k, Key::from_bytes(&core::array::from_fn(|i| i as u8)));
    assert_eq!(
        Key::parse_hex("000102030405060708090A0B0C0D0E0F"),
        Some(k.clone())
    );
    assert_eq!(Key::parse_hex("000102"), None);
    assert_eq!(Key::parse_hex("000102030405060708090a0b0c0d0e0g"), None);
    let shown = format!("{:?}", k);
    assert!(
        !shown.contains("0001") && shown.contains(&format!("{:08x}", k.id())),
        "{}",
        shown
    );
    assert_ne!(key(1).id(), key(2).id());
}

#[test]
fn a_rotation_never_leaves_a_sender_whose_key_the_receiver_refuses() {
    // Two nodes; each step is done on a first, then on b.
    let (k1, k2) = (key(1), key(2));
    let mut a = Keys::default();
    a.seal_with(Some(k1.clone()));
    let mut b = a.clone();
    let both_ok = |a: &Keys, b: &Keys| {
        let fa = sealed(a.sealing().unwrap(), 1, 1);
        let fb = sealed(b.sealing().unwrap(), 1, 1);
        verifies(b, &fa) && verifies(a, &fb)
    };
    let steps: [&dyn Fn(&mut Keys); 3] = [
        &|k| k.accept(Some(k2.clone())),
        &|k| k.seal_with(Some(k2.clone())),
        &|k| k.accept(None),
    ];
    for step in steps {
        step(&mut a);
        assert!(both_ok(&a, &b));
        step(&mut b);
        assert!(both_ok(&a, &b));
    }
    assert_eq!(a.sealing(), Some(&k2));
    assert_eq!(a.accepted(), None);
    assert!(!verifies(&a, &sealed(&k1, 1, 1)), "the old key is gone");
    a.seal_with(None);
    assert!(!a.on() && a.accepted().is_none());
}

#[test]
fn heartbeat_counters_refuse_replays_per_sender_link() {
    let mut c = HbCounter::default();
    let (x, y) = (c.next(1000), c.next(1000));
    assert!(y > x && x >= 1000);
    assert!(c.next(5) > y, "never goes back, whatever the clock says");
    let mut r = HbReplay::default();
    assert!(r.accept(0, x));
    assert!(r.accept(1, x), "another sender link has its own record");
    assert!(!r.accept(0, x), "the same heartbeat again");
    assert!(r.accept(0, y));
    assert!(!r.accept(0, x), "an older one");
    assert!(!r.accept(8, y + 1), "no such link");
    r.reset();
    assert!(r.accept(0, x));
}

#[test]
fn epochs_order_by_creation_time_and_never_wrap() {
    assert!(epoch_newer(2, 1));
    assert!(!epoch_newer(1, 2));
    assert!(!epoch_newer(7, 7));
    // An incarnation 25 days older (past a 32-bit millisecond wrap) is
    // still older.
    let now = 1_800_000_000_123u64;
    assert!(!epoch_newer(now - 25 * 86_400_000, now));
    assert_eq!(epoch_at(0), 1, "never 0");
    assert_eq!(epoch_at(now), now);
    // Unkeyed heartbeats carry the low 32 bits: the same incarnation.
    assert!(same_epoch(now, now as u32 as u64));
    assert!(same_epoch(now as u32 as u64, now));
    assert!(!same_epoch(now, now + 1));
    assert!(
        !same_epoch(now, now + (1 << 32)),
        "both known whole: different"
    );
}

#[test]
fn an_older_epoch_is_a_replay_however_long_the_peer_was_silent() {
    let mut rx: PeerRx<u32, Buf<u32>> = PeerRx::default();
    assert_eq!(
        rx.sealed_epoch(100),
        SealedEpoch::Same,
        "the first epoch heard"
    );
    assert_eq!(rx.take_epoch(100, &mut |_| {}), Epoch::Same);
    assert_eq!(rx.sealed_epoch(100), SealedEpoch::Same);
    assert_eq!(rx.sealed_epoch(101), SealedEpoch::New);
    assert_eq!(rx.sealed_epoch(99), SealedEpoch::Stale);
}

#[test]
fn a_forgotten_peer_is_recalled_with_what_it_was() {
    let mut rx: PeerRx<u32, Buf<u32>> = PeerRx::default();
    assert_eq!(rx.record(), None, "nothing sealed heard");
    rx.window.set_strict(true);
    rx.take_epoch(1_795_000_000_000, &mut |_| {});
    assert!(rx.hb_seen.accept(0, 500));
    assert!(rx.hb_seen.accept(1, 700));
    let mut bufs = HeapBufs::default();
    let mut up = Vec::new();
    for s in 10..20 {
        let left = rx
            .window
            .receive(Seq(s), Instant(0), s, 64, &mut bufs, &mut |p| up.push(p));
        up.extend(left);
    }
    let r = rx.record().expect("a record");
    assert_eq!((r.epoch, r.counter, r.next), (1_795_000_000_000, 700, 20));
    let mut mem = Records::new(vec![Record::default(); 4], 99);
    let (a, b) = ([2, 0, 0, 0, 0, 1], [2, 0, 0, 0, 0, 2]);
    mem.keep(&a, r);
    assert_eq!(mem.find(&a).map(|r| r.next), Some(20));
    assert_eq!(mem.find(&b), None, "another MAC has no record");
    // The peer comes back: its older incarnation, heartbeats heard and
    // data handed up stay refused.
    let mut back: PeerRx<u32, Buf<u32>> = PeerRx::default();
    back.recall(&mem.find(&a).unwrap());
    assert_eq!(back.sealed_epoch(1_794_000_000_000), SealedEpoch::Stale);
    assert!(!back.hb_seen.accept(0, 700));
    assert!(back.hb_seen.accept(0, 701));
    assert!(!back.window.would_take(Seq(15)));
    assert!(back.window.would_take(Seq(20)));
}

#[test]
fn a_new_epoch_from_data_restarts_the_window_at_its_next_packet() {
    let p = Params::default();
    let mut bufs: HeapBufs<u32> = HeapBufs::default();
    let mut rx: PeerRx<u32, Buf<u32>> = PeerRx::default();
    rx.window.set_strict(true);
    let mut up = Vec::new();
    rx.take_epoch(100, &mut |x| up.push(x));
    for s in [10u32, 11, 13] {
        rx.data(0, Seq(s), s, Instant(0), 3, &p, &mut bufs, &mut |x| {
            up.push(x)
        });
    }
    assert_eq!(up, [10, 11], "13 waits for 12 (two links)");
    assert_eq!(rx.take_epoch(200, &mut |x| up.push(x)), Epoch::Restarted);
    assert_eq!(up, [10, 11, 13], "what was held goes up");
    rx.data(0, Seq(0), 1000, Instant(MS), 1, &p, &mut bufs, &mut |x| {
        up.push(x)
    });
    rx.data(0, Seq(1), 1001, Instant(MS), 1, &p, &mut bufs, &mut |x| {
        up.push(x)
    });
    assert_eq!(
        &up[3..],
        [1000, 1001],
        "the new numbering starts where its first packet says"
    );
}

#[test]
fn a_strict_window_takes_each_number_once() {
    let p = Params::default();
    let mut rx: PeerRx<u32, Buf<u32>> = PeerRx::default();
    rx.window.set_strict(true);
    let mut up = Vec::new();
    let recv = |rx: &mut PeerRx<u32, Buf<u32>>, s: u32, ms: u64, up: &mut Vec<u32>| {
        let mut bufs: HeapBufs<u32> = HeapBufs::default();
        rx.data(0, Seq(s), s, Instant(ms * MS), 1, &p, &mut bufs, &mut |x| {
            up.push(x)
        })
    };
    for s in [1, 2, 3] {
        assert_eq!(recv(&mut rx, s, 0, &mut up), None);
    }
    assert_eq!(
        recv(&mut rx, 2, 0, &mut up),
        Some(2),
        "a replay of a number handed up"
    );
    // 5 waits; FAST_TOUT gives 4 up; 4 may then come late, once.
    assert_eq!(recv(&mut rx, 5, 1, &mut up), None);
    rx.sweep(
        Instant(100 * MS),
        1,
        &p,
        &mut HeapBufs::default(),
        &mut |x| up.push(x),
    );
    assert_eq!(up, [1, 2, 3, 5]);
    assert_eq!(
        recv(&mut rx, 4, 101, &mut up),
        None,
        "a late packet whose number was given up"
    );
    assert_eq!(recv(&mut rx, 4, 101, &mut up), Some(4), "... but only once");
    assert_eq!(up, [1, 2, 3, 5, 4]);
    // Far behind: refused, and no run of it resynchronises.
    for i in 0..20u32 {
        assert!(recv(&mut rx, 4_000_000_000u32.wrapping_add(i), 102, &mut up).is_some());
    }
    assert_eq!(rx.window.stats.resyncs, 0);
    assert_eq!(rx.window.stats.replays, 22);
    assert_eq!(
        recv(&mut rx, 6, 102, &mut up),
        None,
        "the numbering goes on"
    );
    assert_eq!(up.last(), Some(&6));
}

#[test]
fn a_window_that_is_not_strict_still_hands_late_packets_up() {
    let p = Params::default();
    let mut bufs: HeapBufs<u32> = HeapBufs::default();
    let mut rx: PeerRx<u32, Buf<u32>> = PeerRx::default();
    let mut up = Vec::new();
    for s in [1, 2, 2] {
        assert_eq!(
            rx.data(0, Seq(s), s, Instant(0), 1, &p, &mut bufs, &mut |x| up
                .push(x)),
            None
        );
    }
    assert_eq!(up, [1, 2, 2], "unkeyed: late goes up (TCP sorts it out)");
}

#[test]
fn a_strict_broadcast_filter_refuses_old_numbers() {
    let mut d = Dedup::default();
    assert!(d.accept_strict(Seq(1000)));
    assert!(!d.accept_strict(Seq(1000)));
    assert!(d.accept_strict(Seq(999)));
    assert!(
        !d.accept_strict(Seq(500)),
        "older than the bitmap: a replay"
    );
    assert!(d.accept(Seq(500)), "unkeyed: taken for a restart");
    d.reset();
    assert!(d.accept_strict(Seq(3)), "after an epoch change, any number");
}

#[test]
fn numbers_from_before_the_key_do_not_refuse_the_first_sealed_ones() {
    // Unkeyed, a forger's broadcasts in a sender's name, numbered far
    // ahead of the sender's own, moved the filter there (seen in
    // ri2n_auth: the keyed pair's ARP refused ever after, as replays).
    let mut d = Dedup::default();
    let own = 0x1234_0000u32;
    assert!(d.accept(Seq(own)));
    for s in 0..10 {
        assert!(
            d.accept(Seq(own + 5000 + s)),
            "unkeyed: taken for a restart"
        );
    }
    assert!(!d.verified());
    // Keys on: the sender's next sealed broadcasts go up, once each.
    assert!(
        d.accept_strict(Seq(own + 1)),
        "the first sealed number starts afresh"
    );
    assert!(d.verified());
    assert!(d.is_new(Seq(own + 2)) && !d.too_old(Seq(own + 2)));
    assert!(d.accept_strict(Seq(own + 2)));
    assert!(!d.accept_strict(Seq(own + 2)), "a copy");
    assert!(
        !d.accept_strict(Seq(own - 1000)),
        "older than the bitmap: a replay"
    );
    // And a verified filter stays strict.
    assert!(!d.accept_strict(Seq(own + 1)));
}

#[test]
fn a_replay_is_judged_before_it_counts_anywhere() {
    let p = Params::default();
    let mut bufs: HeapBufs<u32> = HeapBufs::default();
    let mut rx: PeerRx<u32, Buf<u32>> = PeerRx::default();
    rx.window.set_strict(true);
    let w = |rx: &PeerRx<u32, Buf<u32>>, s: u32| rx.window.would_take(Seq(s));
    assert!(w(&rx, 12345), "not started: anything");
    let mut up = Vec::new();
    for s in [10u32, 11, 13] {
        rx.data(0, Seq(s), s, Instant(0), 3, &p, &mut bufs, &mut |x| {
            up.push(x)
        });
    }
    assert!(!w(&rx, 11), "handed up");
    assert!(!w(&rx, 13), "held");
    assert!(
        w(&rx, 12) && w(&rx, 14),
        "expected, or ahead in an empty slot"
    );
    assert!(
        w(&rx, 9),
        "below the first number: may come once from a slower link"
    );
    assert!(w(&rx, 12 + 600), "a jump");
    assert!(
        !w(&rx, 12u32.wrapping_add(1 << 30)),
        "2^30 ahead: a recording from long ago"
    );
    assert!(!w(&rx, 12u32.wrapping_sub(600)), "far behind");
    let stats = rx.window.stats;
    let _ = (w(&rx, 11), w(&rx, 13));
    assert_eq!(rx.window.stats, stats, "no side effect");
}

#[test]
fn after_a_jump_a_packet_handed_up_is_not_taken_again() {
    let p = Params::default();
    let mut bufs: HeapBufs<u32> = HeapBufs::default();
    let mut rx: PeerRx<u32, Buf<u32>> = PeerRx::default();
    rx.window.set_strict(true);
    let mut up = Vec::new();
    for s in [0u32, 100, 700] {
        assert_eq!(
            rx.data(0, Seq(s), s, Instant(0), 3, &p, &mut bufs, &mut |x| up
                .push(x)),
            None
        );
    }
    assert_eq!(up, [0, 100, 700]);
    assert!(
        !rx.window.would_take(Seq(100)),
        "100 went up before the jump"
    );
    assert!(
        rx.window.would_take(Seq(650)),
        "a gap the jump passed may still come"
    );
    assert_eq!(
        rx.data(0, Seq(650), 650, Instant(0), 3, &p, &mut bufs, &mut |x| up
            .push(x)),
        None
    );
    assert!(rx
        .data(0, Seq(650), 650, Instant(0), 3, &p, &mut bufs, &mut |x| up
            .push(x))
        .is_some());
}

#[test]
fn a_broadcast_filter_judges_without_recording() {
    let mut d = Dedup::default();
    assert!(d.is_new(Seq(7)));
    assert!(d.accept_strict(Seq(7)));
    assert!(!d.is_new(Seq(7)));
    assert!(d.is_new(Seq(8)) && d.is_new(Seq(6)));
    assert!(d.is_new(Seq(8)), "judging records nothing");
}

#[test]
fn a_peer_that_forgot_us_is_followed_by_its_heartbeat_not_by_its_data() {
    let p = Params::default();
    let mut bufs: HeapBufs<u32> = HeapBufs::default();
    let mut rx: PeerRx<u32, Buf<u32>> = PeerRx::default();
    rx.window.set_strict(true);
    let mut up = Vec::new();
    rx.take_epoch(100, &mut |x| up.push(x));
    for s in 5000u32..5010 {
        rx.data(0, Seq(s), s, Instant(0), 1, &p, &mut bufs, &mut |x| {
            up.push(x)
        });
    }
    // The peer aged us out and made us anew: same epoch, numbers from 0.
    assert!(!rx.window.would_take(Seq(0)), "data alone: a replay");
    rx.heartbeat(0, Seq(0), 100, Instant(0), 1, &p, &mut bufs, &mut |x| {
        up.push(x)
    });
    assert!(
        rx.window.would_take(Seq(0)),
        "after its heartbeat: its numbering"
    );
    assert_eq!(
        rx.data(0, Seq(0), 7, Instant(0), 1, &p, &mut bufs, &mut |x| up
            .push(x)),
        None
    );
    assert_eq!(up.last(), Some(&7));
    // A heartbeat a little behind (it overtook nothing) changes nothing.
    let resyncs = rx.window.stats.resyncs;
    rx.heartbeat(0, Seq(0), 100, Instant(0), 1, &p, &mut bufs, &mut |x| {
        up.push(x)
    });
    assert_eq!(rx.window.stats.resyncs, resyncs);
}

#[test]
fn each_segment_of_a_sealed_gso_packet_gets_its_number_and_a_tag_that_verifies() {
    // tx_gso: the slave cuts a GSO packet whose header the sender sealed
    // for its first number; each segment's header is made afresh.
    let (k, first) = (key(7), sealed(&key(7), 0xffff_fffe, 42));
    let mut ks = Keys::default();
    ks.seal_with(Some(k.clone()));
    for i in 0..4u32 {
        let mut h = first;
        assert!(shim_for_segment(&mut h, i, &ADDRS, Some(&k)));
        let (hdr, seal) = Header::decode(&h).unwrap();
        assert_eq!(
            hdr.seq,
            Seq(0xffff_fffe_u32.wrapping_add(i)),
            "numbers wrap"
        );
        let seal = seal.unwrap();
        assert_eq!(seal.epoch, 42);
        assert!(
            ks.verify(&Msg::new(&ADDRS, &h, &[]), &seal.tag),
            "segment {i}"
        );
        assert_eq!(
            h,
            sealed(&k, 0xffff_fffe_u32.wrapping_add(i), 42),
            "as if sealed one by one"
        );
    }
    // The key went meanwhile: the packet cannot be sealed (dropped).
    let mut h = first;
    assert!(!shim_for_segment(&mut h, 1, &ADDRS, None));
    // Unsealed: the number only.
    let mut h = [0u8; HEADER_LEN];
    Header {
        kind: Kind::Data,
        protocol: 0x0800,
        seq: Seq(9),
    }
    .encode(&mut h);
    assert!(shim_for_segment(&mut h, 3, &ADDRS, None));
    assert_eq!(Header::decode(&h).unwrap().0.seq, Seq(12));
}

#[test]
fn gro_merges_a_sealed_frame_only_if_it_follows_and_its_tag_verifies() {
    let k = key(7);
    let mut ks = Keys::default();
    ks.seal_with(Some(k.clone()));
    let held = sealed(&k, 100, 42);
    let c = |shim: &[u8], count: u32, addrs: &[u8; 12], keys: Option<&Keys>| {
        shim_continues(&held, shim, count, addrs, keys)
    };
    // The third frame of the run (the held packet merged two).
    assert!(c(&sealed(&k, 102, 42), 2, &ADDRS, Some(&ks)));
    assert!(!c(&sealed(&k, 103, 42), 2, &ADDRS, Some(&ks)), "not next");
    assert!(
        !c(&sealed(&k, 102, 43), 2, &ADDRS, Some(&ks)),
        "another epoch"
    );
    // A forger's frame, next in line, with a tag it guessed or took from
    // another frame: not merged (it goes up alone and is refused there).
    let mut forged = sealed(&k, 102, 42);
    forged[20] ^= 1;
    assert!(!c(&forged, 2, &ADDRS, Some(&ks)));
    let mut other = sealed(&k, 101, 42);
    other[4..8].copy_from_slice(&102u32.to_be_bytes());
    assert!(!c(&other, 2, &ADDRS, Some(&ks)), "a tag of another number");
    assert!(
        !c(&sealed(&key(8), 102, 42), 2, &ADDRS, Some(&ks)),
        "another key"
    );
    let mut to_other = ADDRS;
    to_other[0] ^= 0x10;
    assert!(
        !c(&sealed(&k, 102, 42), 2, &to_other, Some(&ks)),
        "other addresses"
    );
    assert!(!c(&sealed(&k, 102, 42), 2, &ADDRS, None), "no key here");
    // During a rotation the other accepted key verifies too.
    let mut rot = Keys::default();
    rot.seal_with(Some(key(8)));
    rot.accept(Some(k.clone()));
    assert!(c(&sealed(&k, 101, 42), 1, &ADDRS, Some(&rot)));
    // A forged head: its first follower does not join it (receive would
    // refuse the whole packet for the head's tag).
    let mut head = sealed(&k, 100, 42);
    head[17] ^= 1;
    assert!(!shim_continues(
        &head,
        &sealed(&k, 101, 42),
        1,
        &ADDRS,
        Some(&ks)
    ));
    // Unsealed: the same header but for the number, on a device without keys.
    let plain = |seq: u32, proto: u16| {
        let mut h = [0u8; HEADER_LEN];
        Header {
            kind: Kind::Data,
            protocol: proto,
            seq: Seq(seq),
        }
        .encode(&mut h);
        h
    };
    assert!(shim_continues(
        &plain(5, 0x0800),
        &plain(7, 0x0800),
        2,
        &ADDRS,
        None
    ));
    assert!(
        !shim_continues(&plain(5, 0x0800), &plain(7, 0x0800), 2, &ADDRS, Some(&ks)),
        "a device with keys refuses them"
    );
    assert!(
        !shim_continues(&plain(5, 0x0800), &plain(8, 0x0800), 2, &ADDRS, None),
        "not next"
    );
    assert!(
        !shim_continues(&plain(5, 0x0800), &plain(7, 0x86dd), 2, &ADDRS, None),
        "another protocol"
    );
    assert!(
        !shim_continues(&plain(5, 0x0800), &sealed(&k, 7, 42), 2, &ADDRS, Some(&ks)),
        "lengths differ"
    );
    // One-switch mode: the origin (past the number) the same too.
    let from = |seq: u32, link: u8| {
        let mut h = [0u8; MAX_HEADER_LEN];
        let o = Origin {
            mac: [2, 0, 0, 0, 0, 1],
            link,
        };
        let n = Header {
            kind: Kind::Data,
            protocol: 0x0800,
            seq: Seq(seq),
        }
        .encode_full(Some(&o), None, &mut h);
        h[..n].to_vec()
    };
    assert!(shim_continues(&from(5, 0), &from(7, 0), 2, &ADDRS, None));
    assert!(
        !shim_continues(&from(5, 0), &from(7, 1), 2, &ADDRS, None),
        "another origin"
    );
}

#[test]
fn a_key_is_wiped_when_dropped() {
    let mut k = key(3);
    assert!(!k.is_wiped());
    k.wipe();
    assert!(k.is_wiped(), "wipe leaves zeros");
    // Dropped in place: what its memory holds afterwards.
    let mut slot = core::mem::MaybeUninit::new(key(4));
    // SAFETY: initialised just above, dropped once; the bytes stay ours.
    unsafe { core::ptr::drop_in_place(slot.as_mut_ptr()) };
    let words: [u64; 2] = unsafe { core::mem::transmute_copy(&slot) };
    assert_eq!(words, [0, 0], "a dropped key leaves zeros");
}
