//! The reorder window and the loss detector, rule by rule (driver paper
//! §4.5, §4.6, §5.5). Each step reads as a sentence of the spec.

mod common;
use common::{Rx, MS};
use ri2n_core::params::Param;
use ri2n_core::seq::Seq;
use ri2n_core::time::Instant;

const NIC1: usize = 0;
const NIC2: usize = 1;

#[test]
fn fig6_loss_detected_when_every_nic_has_passed_it() {
    // Packets 101..106 over two NICs; 103 (on NIC1) is lost.
    let mut r = Rx::new(2);
    assert_eq!(r.arrive(NIC1, 101, 0), [101]);
    assert_eq!(r.arrive(NIC2, 102, 0), [102]);
    // NIC2 passed 103, but NIC1 may still bring it: hold.
    assert_eq!(r.arrive(NIC2, 104, 0), [] as [u32; 0]);
    assert_eq!(r.arrive(NIC2, 105, 0), [] as [u32; 0]);
    // NIC1 passed 103 too: it is lost; no FAST_TOUT wait.
    assert_eq!(r.arrive(NIC1, 106, 1), [104, 105, 106]);
    assert_eq!(
        r.rx.window.stats.loss, 2,
        "104 and 105 released by loss detection"
    );
    assert_eq!(r.rx.window.stats.gaps, 1, "103 given up");
    assert_eq!(r.rx.window.stats.timeout, 0);
    assert_eq!(r.held(), 0);
}

#[test]
fn fig6_tail_loss_needs_fast_tout() {
    // 105 and 106, the last packets of each link, are lost: nothing passes
    // them, so only FAST_TOUT releases 107 (held behind them).
    let mut r = Rx::new(2);
    assert_eq!(r.arrive(NIC1, 103, 0), [103]);
    assert_eq!(r.arrive(NIC2, 104, 0), [104]);
    assert_eq!(
        r.arrive(NIC2, 107, 1),
        [] as [u32; 0],
        "NIC1 has not passed 105"
    );
    assert_eq!(
        r.sweep(20),
        [] as [u32; 0],
        "19 ms after arrival: still held"
    );
    assert_eq!(r.sweep(21), [107], "FAST_TOUT (20 ms) after arrival");
    assert_eq!(r.rx.window.stats.timeout, 1);
    assert_eq!(r.rx.window.stats.gaps, 2, "105 and 106 given up");
}

#[test]
fn in_order_goes_up_at_once_and_fills_release_followers() {
    let mut r = Rx::new(2);
    assert_eq!(r.arrive(NIC1, 1, 0), [1]);
    assert_eq!(r.arrive(NIC1, 3, 0), [] as [u32; 0]);
    assert_eq!(r.arrive(NIC1, 5, 0), [] as [u32; 0]);
    assert_eq!(r.arrive(NIC2, 2, 0), [2, 3]);
    assert_eq!(r.arrive(NIC2, 4, 0), [4, 5]);
    assert_eq!(r.rx.window.stats.in_order, 5);
    assert_eq!(r.rx.window.stats.held, 2);
}

#[test]
fn fast_tout_releases_everything_below_the_expired_packet() {
    let mut r = Rx::new(2);
    r.arrive(NIC1, 10, 0);
    assert_eq!(r.arrive(NIC2, 14, 0), [] as [u32; 0]);
    assert_eq!(r.arrive(NIC2, 12, 5), [] as [u32; 0]);
    // 14 expires first (oldest): 12 goes up with it, 11 and 13 are given up.
    assert_eq!(r.sweep(20), [12, 14]);
    assert_eq!(r.rx.window.next_expected(), Seq(15));
    // 11 arrives after all: late, still handed up, not dropped.
    assert_eq!(r.arrive(NIC1, 11, 21), [11]);
    assert_eq!(r.rx.window.stats.late, 1);
}

#[test]
fn a_late_packet_tells_whether_the_loss_detector_gave_it_up() {
    let mut r = Rx::new(2);
    r.arrive(NIC1, 10, 0);
    r.arrive(NIC2, 12, 0);
    // 11 waited FAST_TOUT: a late 11 is a slow link, not a loss-rule error.
    assert_eq!(r.sweep(20), [12]);
    assert_eq!(r.arrive(NIC1, 11, 21), [11]);
    assert_eq!(
        (r.rx.window.stats.late, r.rx.window.stats.late_loss),
        (1, 0)
    );
    // Both links pass 13: it is lost. If it then arrives anyway (a link that
    // reordered, or one failed while it still carried packets), that is the
    // loss detector's doing, and counted as such, once.
    r.arrive(NIC2, 14, 22);
    assert_eq!(r.arrive(NIC1, 15, 22), [14, 15]);
    assert_eq!(r.arrive(NIC1, 13, 23), [13]);
    assert_eq!(
        (r.rx.window.stats.late, r.rx.window.stats.late_loss),
        (2, 1)
    );
    assert_eq!(
        r.arrive(NIC2, 13, 23),
        [13],
        "a second copy is late, but no longer the detector's"
    );
    assert_eq!(
        (r.rx.window.stats.late, r.rx.window.stats.late_loss),
        (3, 1)
    );
}

#[test]
fn fast_tout_is_also_checked_on_arrival() {
    let mut r = Rx::new(2);
    r.arrive(NIC1, 0, 0);
    r.arrive(NIC1, 2, 0);
    // No sweep ran; the next arrival finds 2 expired.
    assert_eq!(r.arrive(NIC1, 4, 25), [2]);
}

#[test]
fn maxbuf_flushes_everything_held() {
    let mut r = Rx::new(2);
    r.p.set(Param::Maxbuf, 3).unwrap();
    r.arrive(NIC1, 0, 0);
    for s in [2, 4, 6] {
        assert_eq!(r.arrive(NIC1, s, 0), [] as [u32; 0]);
    }
    assert_eq!(r.held(), 3);
    assert_eq!(r.arrive(NIC1, 8, 0), [2, 4, 6, 8], "one more than MAXBUF");
    assert_eq!(r.held(), 0);
    assert_eq!(r.rx.window.stats.flushes, 1);
    assert_eq!(r.rx.window.next_expected(), Seq(9));
}

#[test]
fn a_packet_a_whole_window_ahead_flushes_and_jumps() {
    let mut r = Rx::new(1);
    r.active = 0; // no loss detection: isolate the window
    r.arrive(NIC1, 0, 0);
    r.arrive(NIC1, 2, 0);
    assert_eq!(r.arrive(NIC1, 1000, 0), [2, 1000]);
    assert_eq!(r.rx.window.stats.jumps, 1);
    assert_eq!(r.rx.window.next_expected(), Seq(1001));
}

#[test]
fn sequence_numbers_wrap() {
    let mut r = Rx::new(2);
    let base = u32::MAX - 2;
    assert_eq!(r.arrive(NIC1, base, 0), [base]);
    assert_eq!(r.arrive(NIC1, base.wrapping_add(2), 0), [] as [u32; 0]);
    assert_eq!(r.arrive(NIC1, base.wrapping_add(3), 0), [] as [u32; 0]);
    assert_eq!(
        r.arrive(NIC2, base.wrapping_add(1), 0),
        [u32::MAX - 1, u32::MAX, 0]
    );
    assert_eq!(r.rx.window.next_expected(), Seq(1));
}

#[test]
fn a_duplicate_of_a_held_packet_is_dropped() {
    let mut r = Rx::new(2);
    r.arrive(NIC1, 0, 0);
    r.arrive(NIC1, 2, 0);
    let mut up = Vec::new();
    let p = r.p;
    let dup =
        r.rx.data(NIC2, Seq(2), 2, r.now, 0, &p, &mut r.bufs, &mut |x| {
            up.push(x)
        });
    assert_eq!(dup, Some(2));
    assert_eq!(r.rx.window.stats.duplicates, 1);
}

#[test]
fn a_link_that_never_delivered_blocks_loss_detection() {
    // NIC2's first packet (1) may still be on its way.
    let mut r = Rx::new(2);
    r.arrive(NIC1, 0, 0);
    assert_eq!(r.arrive(NIC1, 2, 0), [] as [u32; 0]);
    assert_eq!(r.arrive(NIC1, 4, 1), [] as [u32; 0]);
    assert_eq!(r.arrive(NIC2, 1, 2), [1, 2]);
}

/// 0 arrives on NIC1 and 1 on NIC2 at `t_ms`; then NIC2 goes out of use.
fn nic2_leaves_after_1(r: &mut Rx, t_ms: u64) {
    r.arrive(NIC1, 0, t_ms);
    r.arrive(NIC2, 1, t_ms);
    r.active = 1 << NIC1;
}

#[test]
fn a_failed_link_takes_no_part_in_loss_detection() {
    let mut r = Rx::new(2);
    nic2_leaves_after_1(&mut r, 0); // NIC2 failed
    r.sweep(1);
    // 2 went on NIC2 before it failed and is lost; FAST_TOUT after the
    // failure, NIC1 alone decides.
    let t = 2 + r.fast_tout().0 / MS;
    assert_eq!(r.arrive(NIC1, 3, t), [3]);
    assert_eq!(r.rx.window.stats.loss, 1);
}

#[test]
fn a_link_that_just_left_takes_part_for_fast_tout() {
    // The peer stopped sending on NIC2 (it says it hears nothing from us
    // there, or we judged NIC2 failed) while 2 was on its way on it.
    let mut r = Rx::new(2);
    nic2_leaves_after_1(&mut r, 0);
    assert_eq!(
        r.arrive(NIC1, 3, 1),
        [] as [u32; 0],
        "NIC2 may still bring 2"
    );
    assert_eq!(r.arrive(NIC1, 4, 2), [] as [u32; 0]);
    assert_eq!(
        r.arrive(NIC2, 2, 3),
        [2, 3, 4],
        "in order, not given up then late"
    );
    assert_eq!(
        (r.rx.window.stats.loss, r.rx.window.stats.late_loss),
        (0, 0)
    );
}

#[test]
fn a_link_whose_slave_lost_carrier_leaves_at_once() {
    let mut r = Rx::new(2);
    nic2_leaves_after_1(&mut r, 0);
    r.rx.loss.no_carrier(1 << NIC2);
    // 2 went on NIC2, whose slave lost carrier: it cannot come.
    assert_eq!(r.arrive(NIC1, 3, 1), [3]);
    assert_eq!(r.rx.window.stats.loss, 1);
}

#[test]
fn a_link_that_left_and_brought_nothing_is_given_up_after_fast_tout() {
    let mut r = Rx::new(2);
    r.p.set(Param::FastTout, 50).unwrap();
    nic2_leaves_after_1(&mut r, 0);
    r.sweep(1);
    assert_eq!(r.arrive(NIC1, 3, 10), [] as [u32; 0]);
    assert_eq!(r.sweep(51), [] as [u32; 0], "50 ms after NIC2 left");
    // The loss rule, not the window's timeout (3 has waited 42 ms).
    assert_eq!(r.sweep(52), [3]);
    assert_eq!((r.rx.window.stats.loss, r.rx.window.stats.timeout), (1, 0));
}

#[test]
fn a_second_departure_does_not_bring_back_a_link_whose_grace_ran_out() {
    let mut r = Rx::new(3);
    r.p.set(Param::FastTout, 50).unwrap();
    r.arrive(NIC1, 0, 0);
    r.arrive(NIC2, 1, 0);
    r.arrive(2, 2, 0);
    r.active = 0b101; // NIC2 leaves at 1 ms
    r.sweep(1);
    // Nothing calls between (an idle peer): NIC2's grace ran out unseen.
    r.active = 0b001; // the third leaves at 100 ms, its frame 4 on its way
    r.sweep(100);
    assert_eq!(
        r.arrive(NIC1, 5, 101),
        [] as [u32; 0],
        "the third may still bring 4"
    );
    // 3 was on NIC2, out of use for 99 ms: given up once the third passed it.
    assert_eq!(r.arrive(2, 4, 102), [4, 5]);
    assert_eq!(r.rx.window.stats.loss, 1);
}

#[test]
fn a_link_that_leaves_in_a_heartbeat_takes_part_for_fast_tout() {
    // The peer's news comes in a heartbeat on NIC1 (its detector's down
    // bits), the data still on NIC2.
    let mut r = Rx::new(2);
    r.arrive(NIC1, 0, 0);
    r.arrive(NIC2, 1, 0);
    r.arrive(NIC1, 3, 1);
    r.active = 1 << NIC1;
    let (mut up, p) = (Vec::new(), r.p);
    r.rx.heartbeat(
        NIC1,
        Seq(4),
        7,
        Instant(2 * MS),
        r.active,
        &p,
        &mut r.bufs,
        &mut |x| up.push(x),
    );
    assert!(up.is_empty(), "2 may still come on NIC2");
    assert_eq!(r.arrive(NIC2, 2, 3), [2, 3]);
    assert_eq!(r.rx.window.stats.late_loss, 0);
}

#[test]
fn the_grace_survives_the_millisecond_clock_wrapping() {
    let mut r = Rx::new(2);
    let t0 = (1u64 << 32) - 2; // ms: 2 before the 32-bit clock wraps
    nic2_leaves_after_1(&mut r, t0);
    assert_eq!(r.arrive(NIC1, 3, t0 + 1), [] as [u32; 0]);
    assert_eq!(
        r.arrive(NIC1, 4, t0 + 5),
        [] as [u32; 0],
        "3 ms after the wrap, within FAST_TOUT"
    );
    assert_eq!(r.arrive(NIC2, 2, t0 + 6), [2, 3, 4]);
}

#[test]
fn a_heartbeat_passes_its_link() {
    // The peer's heartbeat on NIC1 says "next is 6": NIC1 has passed 5.
    let mut r = Rx::new(2);
    r.arrive(NIC1, 0, 0);
    r.arrive(NIC2, 1, 0);
    r.arrive(NIC2, 3, 0);
    assert_eq!(r.arrive(NIC2, 5, 0), [] as [u32; 0]);
    let mut up = Vec::new();
    let p = r.p;
    r.rx.heartbeat(
        NIC1,
        Seq(6),
        7,
        r.now,
        r.active,
        &p,
        &mut r.bufs,
        &mut |x| up.push(x),
    );
    assert_eq!(up, [3, 5], "2 and 4 (on NIC1) are lost");
}

#[test]
fn a_new_epoch_resyncs_the_window() {
    let mut r = Rx::new(2);
    let p = r.p;
    let mut up = Vec::new();
    r.rx.heartbeat(
        NIC1,
        Seq(0),
        111,
        r.now,
        r.active,
        &p,
        &mut r.bufs,
        &mut |x| up.push(x),
    );
    r.arrive(NIC1, 5000, 0);
    r.arrive(NIC1, 5002, 0);
    // The peer reboots: epoch 222, numbering from 0.
    let e = r.rx.heartbeat(
        NIC1,
        Seq(0),
        222,
        r.now,
        r.active,
        &p,
        &mut r.bufs,
        &mut |x| up.push(x),
    );
    assert_eq!(e, ri2n_core::rx::Epoch::Restarted);
    assert_eq!(up, [5002], "held packets of the old incarnation go up");
    assert_eq!(
        r.arrive(NIC1, 0, 1),
        [0],
        "the new numbering is in order at once"
    );
    assert_eq!(r.rx.window.stats.resyncs, 1);
}

#[test]
fn a_restart_without_heartbeat_is_recognised_by_a_run_far_behind() {
    let mut r = Rx::new(2);
    r.arrive(NIC1, 1_000_000, 0);
    r.arrive(NIC2, 1_000_001, 0);
    for s in 0..8u32 {
        let nic = s as usize % 2;
        assert_eq!(
            r.arrive(nic, s, 1),
            [s],
            "far behind: handed up, never held or dropped"
        );
    }
    assert_eq!(r.rx.window.stats.resyncs, 1);
    // The loss marks of the old numbering are gone: NIC2 must pass 8 first.
    assert_eq!(
        r.arrive(NIC1, 10, 2),
        [] as [u32; 0],
        "resynced: 8 and 9 are missing"
    );
    assert_eq!(r.arrive(NIC2, 8, 2), [8]);
    assert_eq!(r.arrive(NIC2, 9, 2), [9, 10]);
}

#[test]
fn stragglers_far_behind_do_not_resync() {
    let mut r = Rx::new(2);
    r.arrive(NIC1, 10_000, 0);
    for i in 0..20u32 {
        // An old straggler, then a fresh in-order packet, alternately.
        assert_eq!(r.arrive(NIC2, 100 + i, 1), [100 + i]);
        assert_eq!(r.arrive(NIC1, 10_001 + i, 1), [10_001 + i]);
    }
    assert_eq!(r.rx.window.stats.resyncs, 0);
}

#[test]
fn a_window_holds_a_buffer_only_while_packets_wait() {
    let mut r = Rx::new(2);
    r.arrive(NIC1, 1, 0);
    assert!(!r.rx.window.has_buf(), "in order: no buffer");
    r.arrive(NIC1, 3, 0);
    assert!(r.rx.window.has_buf());
    assert_eq!(r.bufs.out, 1);
    assert_eq!(r.arrive(NIC2, 2, 0), [2, 3]);
    assert!(!r.rx.window.has_buf(), "given back once nothing waits");
    assert_eq!(r.bufs.out, 0);
}

#[test]
fn without_a_buffer_a_packet_goes_up_at_once_and_its_gap_is_given_up() {
    let mut r = Rx::new(2);
    r.bufs.max = 0;
    assert_eq!(r.arrive(NIC1, 1, 0), [1]);
    assert_eq!(r.arrive(NIC1, 3, 0), [3], "nowhere to wait");
    assert_eq!(r.rx.window.stats.unbuffered, 1);
    assert_eq!(r.rx.window.stats.gaps, 1);
    assert_eq!(r.arrive(NIC2, 2, 0), [2], "late, still handed up");
    assert_eq!(r.rx.window.stats.late, 1);
    assert_eq!(r.rx.window.next_expected(), Seq(4));
}

#[test]
fn late_loss_is_told_after_the_buffer_went_back() {
    // 2 is given up by the loss rule; the window then holds nothing and
    // gives its buffer back, yet 2 arriving afterwards is still told apart.
    let mut r = Rx::new(2);
    r.arrive(NIC1, 1, 0);
    r.arrive(NIC1, 3, 0);
    assert_eq!(r.arrive(NIC2, 4, 0), [3, 4], "both links passed 2");
    assert_eq!(r.bufs.out, 0);
    assert_eq!(r.arrive(NIC2, 2, 1), [2]);
    assert_eq!(
        (r.rx.window.stats.late, r.rx.window.stats.late_loss),
        (1, 1)
    );
}

#[test]
fn a_packet_held_after_the_clock_was_read_has_not_waited() {
    // Another CPU held 104 at 10 ms while this one, whose clock read
    // 9.9 ms, waited for the peer's lock: 104 has not waited FAST_TOUT (a
    // wrapped age released it at once: in ri2n_rx_lock's first run with
    // receive holding packets without the state lock, 11 timeouts, each
    // followed by its packet late).
    let mut r = Rx::new(2);
    assert_eq!(r.arrive(NIC1, 101, 0), [101]);
    assert_eq!(r.arrive(NIC2, 102, 0), [102]);
    assert_eq!(r.arrive(NIC2, 104, 10), [] as [u32; 0]);
    r.now = Instant(9 * MS + MS * 9 / 10);
    let mut up = Vec::new();
    r.rx.sweep(r.now, r.active, &r.p, &mut r.bufs, &mut |x| up.push(x));
    assert_eq!(up, [] as [u32; 0]);
    assert!(r
        .rx
        .window
        .deadline(r.now, r.fast_tout())
        .is_some_and(|d| d.0 >= (9 * MS + MS * 9 / 10) + r.fast_tout().0));
    assert_eq!(r.rx.window.stats.timeout, 0);
    assert_eq!(r.arrive(NIC1, 103, 11), [103, 104]);
}

#[test]
fn what_comes_fast_tout_after_the_window_passed_it_is_late() {
    // NIC1 delivers 0..=200, one a ms; NIC2's frames (and heartbeats) come
    // 60 ms behind: well past FAST_TOUT (20 ms) of the window giving
    // their numbers up. Of the numbers it gave up, a frame or a heartbeat
    // that comes that late is late (the window's mark tells so at least
    // half the time); one that comes a ms after is not.
    let mut r = Rx::new(2);
    let (ft, p) = (r.p.fast_tout().as_ms(), r.p);
    assert_eq!(ft, 20);
    let (mut late, mut lagging, mut slow) = (0, 0, 0);
    for t in 0..200u64 {
        // NIC2's number 2t + 1 left at t and comes at t + 60.
        r.arrive(NIC1, 2 * t as u32, t);
        if t >= 60 {
            let s = 2 * (t - 60) as u32 + 1;
            let now = Instant(t * MS);
            if r.rx.late_frames(Seq(s), 1, now, &p) == 1 {
                late += 1;
            }
            // A heartbeat that left with NIC2's frame, saying next = s.
            if r.rx.lagging(Seq(s), now, &p) {
                lagging += 1;
            }
            // A merged run counts the numbers the mark had passed, each
            // as a frame of its own would.
            let each = (0..8)
                .filter(|&i| r.rx.late_frames(Seq(s + i), 1, now, &p) == 1)
                .count() as u32;
            assert_eq!(r.rx.late_frames(Seq(s), 8, now, &p), each, "run from {s}");
            slow += 1;
            r.arrive(NIC2, s, t);
        }
    }
    assert!(
        late * 2 >= slow && lagging * 2 >= slow,
        "{late} and {lagging} of {slow}"
    );
    // Frames 8 ms behind NIC1's: given up when the window filled (MAXBUF
    // 4), but none comes FAST_TOUT after.
    let mut r = Rx::new(2);
    r.p.set(Param::Maxbuf, 4).unwrap();
    let p = r.p;
    for t in 0..200u64 {
        r.arrive(NIC1, 2 * t as u32, t);
        if t >= 8 {
            let s = 2 * (t - 8) as u32 + 1;
            let now = Instant(t * MS);
            assert_eq!(r.rx.late_frames(Seq(s), 1, now, &p), 0, "{s}");
            assert!(!r.rx.lagging(Seq(s), now, &p));
            r.arrive(NIC2, s, t);
        }
    }
    assert!(r.rx.window.stats.late > 100, "{:?}", r.rx.window.stats);
}
