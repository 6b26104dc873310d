// SPDX-License-Identifier: GPL-2.0

//! The protocol engine (core/node.rs) between two nodes in virtual time
//! (`ri2n_core::pair`): each fault a lab test injects into QEMU guests,
//! here deterministic and over many random phases in milliseconds. Each
//! test names the rule it checks; each fails with that rule taken out.

use ri2n_core::node::{Frame, HeartbeatIn};
use ri2n_core::pair::{Pair, MS};
use ri2n_core::params::Params;

/// Random phases (heartbeat timers) tried per scenario.
const SEEDS: u64 = 16;

fn pair(seed: u64) -> Pair {
    Pair::new(2, Params::default(), seed)
}

/// Rule: a port that loses carrier is out of use at once, and the peer
/// hears of it at once in a heartbeat on every link left
/// (`Peer::carrier_changed`); it is back in use as soon as carrier is.
#[test]
fn carrier_loss_is_told_at_once() {
    for seed in 0..SEEDS {
        let mut pr = pair(seed);
        pr.stream(0, MS / 4, 3000 * MS);
        pr.set_carrier(0, 1, false);
        assert_eq!(
            pr.nodes[0].sendable() & 2,
            0,
            "seed {seed}: A still sends on its dead port"
        );
        let b_stops = pr.watch(MS / 10, 1000 * MS, true, |p| p.nodes[1].sendable() & 2 == 0);
        assert!(
            b_stops.is_some_and(|t| t <= MS),
            "seed {seed}: B stopped after {b_stops:?} ns"
        );
        pr.set_carrier(0, 1, true);
        let back = pr.watch(MS / 10, 1000 * MS, true, |p| {
            p.nodes[0].sendable() & p.nodes[1].sendable() & 2 != 0
        });
        assert!(
            back.is_some_and(|t| t <= MS),
            "seed {seed}: back in use after {back:?} ns"
        );
    }
}

/// Rule: under load, the receiver fails a link that stops delivering while
/// another passes FT_HTHRESH (SLOW_TOUT, §4.4), tells the sender at once
/// (`Peer::tell`), and a heartbeat brings it back when it heals.
#[test]
fn blackhole_under_load() {
    let mut worst = (0, 0);
    for seed in 0..SEEDS {
        let mut pr = pair(seed);
        pr.stream(0, MS / 4, 3000 * MS);
        let cut = pr.now;
        pr.blackhole(1, true);
        let stop = pr.watch(MS / 4, 2000 * MS, true, |p| p.nodes[0].sendable() & 2 == 0);
        let stop = stop.unwrap_or_else(|| panic!("seed {seed}: A never stopped using link 1"));
        assert!(
            stop <= 200 * MS,
            "seed {seed}: A stopped after {} ms",
            stop / MS
        );
        // B's verdict reaches A in the heartbeat it sends at once.
        if let Some(b) = pr.nodes[1].first(cut, 1, |t| t.failed) {
            let a = pr.nodes[0].first(b, 1, |t| t.peer_failed);
            assert!(
                a.is_some_and(|a| a - b <= MS),
                "seed {seed}: B failed link 1 at {b}, A heard at {a:?}"
            );
        }
        pr.blackhole(1, false);
        let back = pr.watch(MS / 4, 3000 * MS, true, |p| p.nodes[0].sendable() & 2 != 0);
        let back = back.unwrap_or_else(|| panic!("seed {seed}: link 1 never back"));
        assert!(back <= 300 * MS, "seed {seed}: back after {} ms", back / MS);
        worst = (worst.0.max(stop), worst.1.max(back));
    }
    eprintln!(
        "blackhole under load: out of use within {} ms, back within {} ms",
        worst.0 / MS,
        worst.1 / MS
    );
}

/// Rule: idle, a link whose heartbeat is missing while another's arrived
/// is probed (`Detector::probe_due`), and failed when the probe goes
/// unanswered: detection within an HBSPAN plus a probe round, not
/// FT_HTHRESH / HBWEIGHT heartbeats (8 s).
#[test]
fn idle_blackhole_is_probed() {
    let p = Params::default();
    for seed in 0..SEEDS {
        let mut pr = pair(seed);
        pr.run_ms(5000);
        let cut = pr.now;
        pr.blackhole(1, true);
        pr.run_ms(5000);
        let fail = pr.nodes[0]
            .first(cut, 1, |t| t.failed | t.peer_failed)
            .map(|t| t - cut);
        assert!(
            fail.is_some_and(|t| t <= p.hbspan().0 + 300 * MS),
            "seed {seed}: idle link failed after {fail:?} ns"
        );
        let heal = pr.now;
        pr.blackhole(1, false);
        pr.run_ms(5000);
        let back = pr.nodes[0]
            .first(heal, 1, |t| t.recovered | t.peer_recovered)
            .map(|t| t - heal);
        assert!(
            back.is_some_and(|t| t <= 300 * MS),
            "seed {seed}: idle link back after {back:?} ns"
        );
        assert_eq!(pr.nodes[0].peer.det.usable() & 2, 2, "seed {seed}");
    }
}

/// Rule: a link that delivers only one way is failed by the receiver, and
/// the sender stops using it on the receiver's word (the heartbeat's
/// `down` bits), though its own direction works.
#[test]
fn one_way_loss_stops_the_sender() {
    for seed in 0..SEEDS {
        let mut pr = pair(seed);
        pr.stream(0, MS / 4, 3000 * MS);
        pr.faults[0][1].blackhole = true;
        let stop = pr.watch(MS / 4, 2000 * MS, true, |p| p.nodes[0].sendable() & 2 == 0);
        assert!(
            stop.is_some_and(|t| t <= 200 * MS),
            "seed {seed}: A stopped after {stop:?} ns"
        );
        // And stays out of use while the fault lasts.
        pr.watch(MS / 4, 2000 * MS, true, |_| false);
        assert_eq!(
            pr.nodes[0].sendable() & 2,
            0,
            "seed {seed}: A went back to a one-way link"
        );
    }
}

/// Rule: a link that loses frames (20 %) is taken out of use for loss by
/// the sender, from the counts the receiver echoes; it comes back once
/// its probes arrive whole; the healthy link is never blamed.
#[test]
fn lossy_link_out_and_back() {
    for seed in 0..SEEDS {
        let mut pr = pair(seed);
        pr.stream(0, MS / 4, 3000 * MS);
        let cut = pr.now;
        pr.faults[0][1].loss = 0.2;
        pr.faults[1][1].loss = 0.2;
        pr.stream(0, MS / 4, cut + 5000 * MS);
        let out = pr.nodes[0].first(cut, 1, |t| t.lossy).map(|t| t - cut);
        assert!(
            out.is_some_and(|t| t <= 2000 * MS),
            "seed {seed}: out of use after {out:?} ns"
        );
        assert_eq!(
            pr.nodes[0].sendable() & 2,
            0,
            "seed {seed}: lossy link in use"
        );
        let heal = pr.now;
        pr.faults[0][1].loss = 0.0;
        pr.faults[1][1].loss = 0.0;
        pr.stream(0, MS / 4, heal + 5000 * MS);
        let back = pr.nodes[0].first(heal, 1, |t| t.lossless).map(|t| t - heal);
        assert!(
            back.is_some_and(|t| t <= 2000 * MS),
            "seed {seed}: back after {back:?} ns"
        );
        assert_eq!(
            pr.nodes[0].first(0, 0, |t| t.lossy | t.failed),
            None,
            "seed {seed}: link 0 blamed"
        );
    }
}

/// Rule: frames that arrive more than FAST_TOUT after the window passed
/// their numbers (a link others' traffic delays) count as lost to their
/// sender, which takes the link out of use as a lossy one, and back when
/// it is on time again.
#[test]
fn late_link_counts_as_lossy() {
    for seed in 0..SEEDS {
        let mut pr = pair(seed);
        pr.stream(0, MS / 4, 3000 * MS);
        let cut = pr.now;
        pr.faults[0][1].delay = 3 * Params::default().fast_tout().0;
        pr.stream(0, MS / 4, cut + 5000 * MS);
        let out = pr.nodes[0].first(cut, 1, |t| t.lossy).map(|t| t - cut);
        assert!(
            out.is_some_and(|t| t <= 2000 * MS),
            "seed {seed}: late link out of use after {out:?} ns"
        );
        assert!(
            pr.nodes[1].peer.det.endpoints[1].rx_late > 0,
            "seed {seed}: no frame counted late"
        );
        assert_eq!(
            pr.nodes[1].peer.det.endpoints[0].rx_late, 0,
            "seed {seed}: the free link counted late"
        );
        let heal = pr.now;
        pr.faults[0][1].delay = 0;
        pr.stream(0, MS / 4, heal + 5000 * MS);
        let back = pr.nodes[0].first(heal, 1, |t| t.lossless).map(|t| t - heal);
        assert!(
            back.is_some_and(|t| t <= 3000 * MS),
            "seed {seed}: back after {back:?} ns"
        );
    }
}

/// Rule: a restarted node heartbeats its peers at once (`Peer::start`),
/// whose windows take its new epoch and numbering: everything it sends
/// after goes up, in order, with no FAST_TOUT wait.
#[test]
fn restart_resynchronises_at_once() {
    for seed in 0..SEEDS {
        let mut pr = pair(seed);
        pr.stream(1, MS / 4, 3000 * MS);
        let cut = pr.now;
        pr.restart(1);
        let first_new = pr.sent(1);
        pr.stream(1, MS / 4, cut + 1000 * MS);
        let taken = pr.nodes[0].restarts.first().map(|r| r.0 - cut);
        assert!(
            taken.is_some_and(|t| t <= MS),
            "seed {seed}: restart taken after {taken:?} ns"
        );
        let new: Vec<u64> = pr.nodes[0]
            .up
            .iter()
            .copied()
            .filter(|&x| x >= first_new)
            .collect();
        assert!(
            new.windows(2).all(|w| w[0] < w[1]),
            "seed {seed}: the new numbering went up out of order"
        );
        // All but what is still on the wire.
        let sent = pr.sent(1) - first_new;
        assert!(
            new.len() as u64 + 2 >= sent,
            "seed {seed}: {} of {sent} went up",
            new.len()
        );
        assert_eq!(
            pr.nodes[0].peer.rx.window.stats.timeout, 0,
            "seed {seed}: a packet waited FAST_TOUT"
        );
    }
}

/// Rule (keyed): a heartbeat is taken only with a counter above the last
/// from its link (`Peer::sealed_fresh`), so that recorded heartbeats
/// replayed on a dead link neither keep it alive nor count anywhere.
#[test]
fn replayed_heartbeats_do_not_keep_a_link_alive() {
    for seed in 0..SEEDS {
        let mut pr = pair(seed).keyed();
        pr.tap = true;
        pr.stream(0, MS / 4, 5000 * MS);
        let recorded: Vec<_> = pr
            .tapped
            .iter()
            .filter(|t| t.from == 1 && t.link == 1 && matches!(t.frame, Frame::Heartbeat(_)))
            .copied()
            .collect();
        assert!(!recorded.is_empty(), "seed {seed}: nothing recorded");
        pr.tap = false;
        pr.blackhole(1, true);
        let end = pr.now + 1000 * MS;
        let mut i = 0;
        while pr.now < end {
            pr.run_until(pr.now + MS);
            pr.send_data(0, 1500);
            let r = recorded[i % recorded.len()];
            pr.inject(0, 1, r.frame, None, r.sealed);
            i += 1;
        }
        assert!(
            pr.nodes[0].refused.replays >= 900,
            "seed {seed}: {} replays refused",
            pr.nodes[0].refused.replays
        );
        assert_eq!(
            pr.nodes[0].sendable() & 2,
            0,
            "seed {seed}: replays kept a dead link in use"
        );
    }
}

/// Rule (keyed): frames of a peer's older epoch are refused while the peer
/// is live (`PeerRx::sealed_epoch`): recorded data replayed after its
/// restart goes nowhere.
#[test]
fn older_epoch_is_refused_from_a_live_peer() {
    for seed in 0..SEEDS {
        let mut pr = pair(seed).keyed();
        pr.tap = true;
        pr.stream(1, MS / 4, 3000 * MS);
        // Numbers just ahead of where the new numbering will stand: the
        // window would take them, but for their epoch.
        let old: Vec<_> = pr
            .tapped
            .iter()
            .filter(|t| t.from == 1 && matches!(t.frame, Frame::Data(_)))
            .copied()
            .skip(450)
            .take(200)
            .collect();
        pr.restart(1);
        pr.stream(1, MS / 4, pr.now + 100 * MS);
        let (up, replays) = (pr.nodes[0].up.len(), pr.nodes[0].refused.replays);
        for r in &old {
            pr.inject(0, r.link, r.frame, r.pkt, r.sealed);
        }
        assert_eq!(
            pr.nodes[0].up.len(),
            up,
            "seed {seed}: an old epoch's packet went up"
        );
        assert_eq!(
            pr.nodes[0].refused.replays - replays,
            old.len() as u64,
            "seed {seed}"
        );
        assert_eq!(
            pr.nodes[0].restarts.len(),
            1,
            "seed {seed}: the old epoch restarted the window"
        );
    }
}

/// Rule (keyed): an older epoch stays refused however long the peer was
/// silent (`PeerRx::sealed_epoch`): a recording of its last incarnation,
/// replayed once it falls quiet, neither restarts its window nor goes up.
#[test]
fn older_epoch_is_refused_after_the_peer_falls_silent() {
    for seed in 0..SEEDS {
        let mut pr = pair(seed).keyed();
        pr.tap = true;
        pr.stream(1, MS / 4, 3000 * MS);
        let old: Vec<_> = pr
            .tapped
            .iter()
            .filter(|t| t.from == 1 && !matches!(t.frame, Frame::Bcast(_)))
            .copied()
            .skip(450)
            .take(200)
            .collect();
        pr.tap = false;
        pr.restart(1);
        pr.stream(1, MS / 4, pr.now + 100 * MS);
        // Node 1 falls quiet for four HBSPANs.
        pr.blackhole(0, true);
        pr.blackhole(1, true);
        pr.run_ms(4 * pr.p.hbspan().as_ms());
        let up = pr.nodes[0].up.len();
        for r in &old {
            pr.inject(0, r.link, r.frame, r.pkt, r.sealed);
        }
        assert_eq!(
            pr.nodes[0].up.len(),
            up,
            "seed {seed}: an old epoch's packet went up"
        );
        assert_eq!(
            pr.nodes[0].restarts.len(),
            1,
            "seed {seed}: the old epoch restarted the window"
        );
    }
}

/// Rule: a heartbeat that asks for an answer (`HB_PROBE`) is answered at
/// once, on its link.
#[test]
fn probe_is_answered_at_once() {
    let mut pr = pair(1);
    pr.run_ms(3000);
    pr.tap = true;
    let at = pr.now;
    let hb = HeartbeatIn {
        next: pr.nodes[1].tx.tx_seq,
        epoch: pr.nodes[1].epoch as u32,
        flags: ri2n_core::header::HB_PROBE,
        peer_link: 1,
        ..Default::default()
    };
    pr.inject(0, 1, Frame::Heartbeat(hb), None, None);
    pr.run_until(pr.now + 1);
    let answered = pr.tapped.iter().any(|t| {
        t.at == at && t.from == 0 && t.link == 1 && matches!(t.frame, Frame::Heartbeat(_))
    });
    assert!(answered, "no answer on link 1 at once");
}

/// Rule: the scheduler levels the links' bytes only over what went out
/// lately (`Params::level_after`), so a trickle of short frames after a
/// long one (a ping after a transfer's last segment) reaches both links,
/// and neither receiver fails a healthy link for the silence the byte
/// count alone would leave on it (24 frames of 58 bytes after one of
/// 1,442: without the rule, 1 of 16 pairs fails a link at 10 ms apart,
/// 15 at 40 and at 90 ms). Ping-like: each frame answered in 1 ms.
#[test]
fn a_trickle_after_a_long_frame_fails_no_link() {
    for gap in [10, 11, 12, 40, 80, 90] {
        for seed in 0..SEEDS {
            let mut pr = pair(seed);
            // Past the first heartbeats and probes of two new peers.
            pr.run_ms(2000);
            let from = pr.now;
            for _round in 0..8 {
                pr.send_data(0, 1442);
                pr.run_ms(1);
                pr.send_data(1, 1442);
                for _ in 0..24 {
                    pr.run_ms(gap);
                    pr.send_data(0, 58);
                    pr.run_ms(1);
                    pr.send_data(1, 58);
                }
            }
            pr.run_ms(500);
            for side in 0..2 {
                for l in 0..2 {
                    let f = pr.nodes[side].first(from, l, |t| t.failed);
                    assert!(
                        f.is_none(),
                        "gap {gap} ms, seed {seed}: node {side} failed link {l} {} ms into the trickle",
                        f.map_or(0, |f| (f - from) / MS)
                    );
                }
            }
        }
    }
}

/// Rule: a healthy idle pair sends its periodic heartbeats, one per link
/// each HBSPAN, and next to nothing beside: a peer's heartbeats leave
/// together (`Peer::heartbeat_due` for every link at once), so no link
/// falls silent for SLOW_TOUT while the other speaks, and no probe round
/// starts. A round would add two probes and two answers a side.
#[test]
fn an_idle_pair_sends_its_periodic_heartbeats_and_no_probes() {
    for seed in 0..SEEDS {
        let mut pr = pair(seed);
        pr.send_data(0, 100);
        pr.send_data(1, 100);
        pr.run_ms(3000);
        let sent = [pr.nodes[0].hb_sent, pr.nodes[1].hb_sent];
        let secs = 20;
        pr.run_ms(secs * 1000);
        let periodic = 2 * secs * 1000 / pr.p.hbspan().as_ms();
        for (side, sent) in sent.iter().enumerate() {
            let d = pr.nodes[side].hb_sent - sent;
            assert!(
                d <= periodic + 2,
                "seed {seed}: node {side} sent {d} heartbeats in {secs} s idle, periodic {periodic}"
            );
        }
    }
}

/// Rule: a node that stops for a while (a guest its host descheduled)
/// fails no link, on either side. Every link falls silent at once; on
/// resuming, the stopped node takes one link's queued frames before the
/// other's, so its first link passes FT_HTHRESH while the other still
/// waits, and the peer's answers come behind both queues. The links that
/// delivered until the stop are held (`Detector`'s hold after a gap on
/// every link) and judged by a probe round instead (without the hold,
/// 16 of 16 pairs fail a link). Bulk one way, its acknowledgements the
/// other, as ri2n_stall's TCP; 16 stops of 150 to 400 ms.
#[test]
fn a_node_that_stops_fails_no_link() {
    let mut failed = Vec::new();
    for seed in 0..SEEDS {
        let mut pr = pair(seed);
        // Data every 0.1 ms from node 0, an acknowledgement every 0.2 ms
        // from node 1, for `ms`.
        let bulk = |pr: &mut Pair, ms: u64| {
            for step in 0..ms * 10 {
                pr.run_until(pr.now + MS / 10);
                pr.send_data(0, 1500);
                if step % 2 == 1 {
                    pr.send_data(1, 66);
                }
            }
        };
        bulk(&mut pr, 3000);
        let from = pr.now;
        for ms in [150, 400, 200, 300, 150, 400, 250, 350] {
            for side in [1, 0] {
                pr.stop(side, ms * MS);
                bulk(&mut pr, ms + 1000);
            }
        }
        pr.run_ms(100);
        for side in 0..2 {
            for l in 0..2 {
                let failed_at = pr.nodes[side].first(from, l, |t| t.failed);
                let lossy_at = pr.nodes[side].first(from, l, |t| t.lossy);
                for (what, at) in [("failed", failed_at), ("took for lossy", lossy_at)] {
                    if let Some(t) = at {
                        failed.push(format!(
                            "seed {seed}: node {side} {what} link {l} {} ms into the stops",
                            (t - from) / MS
                        ));
                    }
                }
            }
        }
        // Every packet goes up but those B's full rings dropped.
        let (up, dropped) = (pr.nodes[1].up.len() as u64, pr.nodes[1].ring_drops);
        assert_eq!(
            up + dropped,
            pr.sent(0),
            "seed {seed}: {up} up and {dropped} dropped of {} sent",
            pr.sent(0)
        );
    }
    assert!(failed.is_empty(), "{} failures: {failed:#?}", failed.len());
}

/// Rule: a link the peer reports down brings only its retries, every
/// HBSPAN / 8, and they weigh nothing in the judgement
/// (`heartbeat::retry`); nor does an endpoint weigh more than one
/// heartbeat per 3/4 HBSPAN (`Detector::weighs`). Either keeps a one-way
/// fault left idle from failing another link. B's frames on link 1 are
/// lost, A fails the link and tells B; then both are idle for 5 s while A
/// retries link 1. Weighed like heartbeats, the retries took B's counter
/// past FT_HTHRESH about once a second and failed its healthy link 0
/// whenever A's last heartbeat there was over SLOW_TOUT old: with both
/// rules taken out, 16 of 16 pairs fail it (with either alone, none).
#[test]
fn a_one_way_fault_left_idle_fails_no_other_link() {
    let mut failed = Vec::new();
    for seed in 0..SEEDS {
        let mut pr = pair(seed);
        pr.stream(1, MS / 4, 3000 * MS);
        pr.faults[1][1].blackhole = true;
        pr.stream(1, MS / 4, pr.now + 1000 * MS);
        assert_eq!(
            pr.nodes[1].sendable() & 2,
            0,
            "seed {seed}: B still sends on the link A cannot hear"
        );
        let from = pr.now;
        pr.run_ms(5000);
        // A fails link 1 (it hears nothing there); nothing else fails.
        for (side, l) in [(0, 0), (1, 0), (1, 1)] {
            if let Some(t) = pr.nodes[side].first(from, l, |t| t.failed) {
                failed.push(format!(
                    "seed {seed}: node {side} failed link {l} {} ms into the idle time",
                    (t - from) / MS
                ));
            }
        }
    }
    assert!(failed.is_empty(), "{} failures: {failed:#?}", failed.len());
}
