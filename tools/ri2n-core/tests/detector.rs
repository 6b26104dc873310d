//! Failure and recovery detection per endpoint (driver paper §4.4, §5.7),
//! with the paper's Table 2 values: FT_HTHRESH 10, FT_LTHRESH 1,
//! SLOW_TOUT 100 ms, HBWEIGHT 3.

use ri2n_core::detector::{Detector, Transitions, LOSSY_SILENT_PROBES};
use ri2n_core::header::Counts;
use ri2n_core::params::{Param, Params};
use ri2n_core::seq::Seq;
use ri2n_core::time::{Duration, Instant};

const L0: usize = 0;
const L1: usize = 1;

fn ms(t: u64) -> Instant {
    Instant(t * 1_000_000)
}

#[test]
fn a_silent_link_fails_when_another_counter_exceeds_ft_hthresh() {
    let p = Params::default();
    let mut d = Detector::new(2, ms(0));
    // L1 delivers nothing; L0 delivers 10 packets by 100 ms: not yet over.
    for t in 1..=10 {
        assert!(d.data(L0, ms(10 * t), &p).is_empty());
    }
    // The 11th exceeds FT_HTHRESH: L1 counts 0 <= FT_LTHRESH, silent 110 ms >= SLOW_TOUT.
    let t = d.data(L0, ms(110), &p);
    assert_eq!(
        t,
        Transitions {
            failed: 1 << L1,
            ..Default::default()
        }
    );
    assert!(d.endpoints[L1].failed);
    assert_eq!(d.endpoints[L1].fails, 1);
    assert_eq!(d.usable(), 1 << L0);
    // The window started again.
    assert_eq!(d.endpoints[L0].counter, 0);
}

/// `link` delivers a frame every 5 ms over `from..=to` ms: a run of
/// arrivals, in which another link's silence counts.
fn run(d: &mut Detector, link: usize, from: u64, to: u64, p: &Params) {
    for t in (from..=to).step_by(5) {
        d.data(link, ms(t), p);
    }
}

/// The first of `link`'s frames, one every millisecond over `from..to`
/// ms, whose judgement failed a link: when, and which.
fn first_failure(
    d: &mut Detector,
    link: usize,
    from: u64,
    to: u64,
    p: &Params,
) -> Option<(u64, u8)> {
    (from..to).find_map(|t| {
        Some(d.data(link, ms(t), p).failed)
            .filter(|&f| f != 0)
            .map(|f| (t, f))
    })
}

/// Both links deliver a frame each every millisecond over `from..to` ms.
fn stream(d: &mut Detector, from: u64, to: u64, p: &Params) {
    for t in from..to {
        assert!(d.data(L0, ms(t), p).is_empty());
        assert!(d.data(L1, ms(t), p).is_empty());
    }
}

#[test]
fn a_stop_of_this_node_fails_no_link() {
    // The node stops for 150 ms (a descheduled vCPU) under a stream, then
    // takes L1's queue before L0's (ri2n_congested on a busy host: "no
    // link to n1 failed").
    let p = Params::default();
    let mut d = Detector::new(2, ms(0));
    stream(&mut d, 0, 200, &p);
    for _ in 0..30 {
        assert!(
            d.data(L1, ms(350), &p).is_empty(),
            "L1's queue first: L0 is not silent, this node was"
        );
    }
    for _ in 0..30 {
        assert!(d.data(L0, ms(350), &p).is_empty());
    }
    stream(&mut d, 351, 600, &p);
    assert_eq!(d.usable(), 0b11);
    assert_eq!(d.endpoints[L0].fails + d.endpoints[L1].fails, 0);
}

#[test]
fn a_link_that_dies_in_a_stop_is_found_by_a_probe_round_then_by_the_counters() {
    let p = Params::default();
    let mut d = Detector::new(2, ms(0));
    stream(&mut d, 0, 200, &p);
    // After the stop only L1 delivers: a new run, so no counter judgement
    // yet, but L0 has been silent for SLOW_TOUT while L1 delivers.
    for _ in 0..30 {
        assert!(d.data(L1, ms(350), &p).is_empty());
    }
    assert_eq!(d.probe_due(ms(350), 0b11, &p), 0b11);
    d.heartbeat(L1, ms(352), L1, 0, &p);
    assert_eq!(
        d.probe_end(ms(372), &p).failed,
        1 << L0,
        "L1 answered, L0 did not"
    );

    // Without the probe round, the counters take over once the run has
    // lasted SLOW_TOUT (L1 frames every ms from 350 ms).
    let mut d = Detector::new(2, ms(0));
    stream(&mut d, 0, 200, &p);
    let (t, failed) = first_failure(&mut d, L1, 350, 600, &p).expect("L0 failed by the counters");
    assert_eq!(failed, 1 << L0);
    assert!(
        (450..=461).contains(&t),
        "failed at {t} ms: SLOW_TOUT into the run, at the next judgement"
    );
}

#[test]
fn a_second_stop_within_the_hold_keeps_it() {
    // This node stops for 150 ms, resumes and takes L0's queue, and stops
    // again for 40 ms before it took L1's (a host that took the vCPU back).
    // L1 delivered until the first gap: the second gap, which began after
    // L0's queue, must not make its silence look like its own.
    let p = Params::default();
    let mut d = Detector::new(2, ms(0));
    stream(&mut d, 0, 200, &p);
    for _ in 0..5 {
        assert!(d.data(L0, ms(350), &p).is_empty());
    }
    for _ in 0..30 {
        assert!(
            d.data(L0, ms(392), &p).is_empty(),
            "L1 held across the second stop"
        );
    }
    for _ in 0..30 {
        assert!(d.data(L1, ms(393), &p).is_empty());
    }
    stream(&mut d, 394, 600, &p);
    assert_eq!(d.endpoints[L0].fails + d.endpoints[L1].fails, 0);
}

#[test]
fn gaps_in_the_traffic_keep_a_hold_once() {
    // L1 dies as a stream stops; then a burst every 50 ms on L0 (a
    // request of 4 frames): every burst begins a new run. The hold is kept
    // across the first such gap, not from run to run: the counters fail
    // L1 at the first verdict after that (350 ms), not one gap later (500).
    let p = Params::default();
    let mut d = Detector::new(2, ms(0));
    stream(&mut d, 0, 200, &p);
    let failed = (0..40u64).find_map(|i| {
        let t = 250 + 50 * i;
        let f = d.data_run(L0, 4, ms(t), &p).failed;
        (f != 0).then_some((t, f))
    });
    let (t, f) = failed.expect("L1 failed");
    assert_eq!(f, 1 << L1);
    assert!(t <= 450, "failed at {t} ms");
}

#[test]
fn an_echo_from_before_the_link_started_again_is_no_answer() {
    // The link's count started again (a slave re-added): the peer still
    // echoes what it heard before, more than we have sent since.
    let p = Params::default();
    let mut d = Detector::new(2, ms(0));
    for _ in 0..5 {
        d.sent(L0);
        d.sent(L1);
    }
    d.data(L1, ms(0), &p);
    d.data(L0, ms(150), &p);
    assert_eq!(d.probe_due(ms(150), BOTH, &p), BOTH);
    d.heartbeat_echoed(L0, ms(152), L0, 0, Seq(10), Some(70_000), &p);
    assert!(d.probe_end(ms(170), &p).is_empty());
}

#[test]
fn frames_queued_before_a_probe_round_are_no_answer_to_it() {
    // ri2n_stall ("failed, nothing received for 272 ms"): this node resumed from a stop of 250 ms and took L0's queued
    // frames; a probe round opened; L1's queued frames waited for the
    // receive softirq beyond FAST_TOUT on a busy host. L0's frames were
    // sent before the round: no answer, no verdict against L1.
    let p = Params::default();
    let mut d = Detector::new(2, ms(0));
    stream(&mut d, 0, 200, &p);
    for _ in 0..8 {
        assert!(d.data(L0, ms(450), &p).is_empty());
    }
    assert_eq!(d.probe_due(ms(450), BOTH, &p), BOTH);
    d.data(L0, ms(455), &p);
    assert!(
        d.probe_end(ms(472), &p).is_empty(),
        "L1's queue may still be waiting"
    );
    for _ in 0..8 {
        assert!(d.data(L1, ms(478), &p).is_empty());
    }
    stream(&mut d, 479, 700, &p);
    assert_eq!(d.usable(), BOTH);
    assert_eq!(d.endpoints[L0].fails + d.endpoints[L1].fails, 0);
}

#[test]
fn a_heartbeat_that_left_before_the_round_is_no_answer() {
    // As above, with a heartbeat in L0's queue: the peer's answer to one of
    // our loss reports before the stop (under load, every 100 ms). It
    // echoes a heartbeat of ours from before the round; only one that
    // echoes ours of the round answers it.
    let p = Params::default();
    let mut d = Detector::new(2, ms(0));
    stream(&mut d, 0, 200, &p);
    for _ in 0..100 {
        d.sent(L0);
        d.sent(L1);
    }
    for _ in 0..8 {
        assert!(d.data(L0, ms(450), &p).is_empty());
    }
    assert_eq!(d.probe_due(ms(450), BOTH, &p), BOTH);
    d.heartbeat_echoed(L0, ms(452), L0, 0, Seq(10), Some(60), &p);
    assert!(
        d.probe_end(ms(472), &p).is_empty(),
        "the heartbeat echoed our 60th frame, sent before the round (100)"
    );
    // A round later, L1 still silent: L0's answer echoes this round's
    // heartbeat (sent as the 100th frame or later).
    d.data(L0, ms(560), &p);
    assert_eq!(d.probe_due(ms(560), BOTH, &p), BOTH);
    d.heartbeat_echoed(L0, ms(562), L0, 0, Seq(11), Some(100), &p);
    assert_eq!(d.probe_end(ms(582), &p).failed, 1 << L1);
}

#[test]
fn the_round_waits_fast_tout_after_its_first_answer() {
    // A slow host: the answer on L0 comes 15 ms into the round, L1's 12 ms
    // after it. One link may lag another by FAST_TOUT: L1 is spared. Had
    // it stayed silent, it fails FAST_TOUT after L0's answer.
    let p = Params::default();
    for l1_answers in [true, false] {
        let mut d = Detector::new(2, ms(0));
        d.data(L1, ms(0), &p);
        d.data(L0, ms(150), &p);
        assert_eq!(d.probe_due(ms(150), BOTH, &p), BOTH);
        d.heartbeat(L0, ms(165), L0, 0, &p);
        assert_eq!(
            d.next_due(ms(165), BOTH, &p, Duration::from_ms(1000)),
            Some(ms(185))
        );
        assert!(d.probe_end(ms(170), &p).is_empty());
        if l1_answers {
            d.heartbeat(L1, ms(177), L1, 0, &p);
        }
        assert!(
            d.probe_end(ms(184), &p).is_empty(),
            "FAST_TOUT after the first answer not yet over"
        );
        let failed = d.probe_end(ms(185), &p).failed;
        assert_eq!(failed, if l1_answers { 0 } else { 1 << L1 });
    }
}

#[test]
fn an_overtaken_heartbeat_is_no_answer() {
    // A heartbeat that left before one already taken (it waited in a
    // longer queue) left before the round too.
    let p = Params::default();
    let mut d = Detector::new(2, ms(0));
    d.heartbeat_numbered(L1, ms(0), L1, 0, Seq(500), &p);
    d.heartbeat_numbered(L0, ms(0), L0, 0, Seq(500), &p);
    d.heartbeat_numbered(L0, ms(149), L0, 0, Seq(1000), &p);
    d.data(L0, ms(150), &p);
    assert_eq!(d.probe_due(ms(150), BOTH, &p), BOTH);
    d.heartbeat_numbered(L0, ms(152), L0, 0, Seq(900), &p);
    assert!(d.probe_end(ms(170), &p).is_empty());
    assert_eq!(d.usable(), BOTH);
}

#[test]
fn within_a_run_the_verdict_is_at_once() {
    // L1 dies at 200 ms in a stream: the first judgement 100 ms later
    // fails it, without a probe round.
    let p = Params::default();
    let mut d = Detector::new(2, ms(0));
    stream(&mut d, 0, 200, &p);
    let (t, failed) = first_failure(&mut d, L0, 200, 400, &p).expect("L1 failed by the counters");
    assert_eq!(failed, 1 << L1);
    assert!((299..=311).contains(&t), "failed at {t} ms");
    assert!(!d.probing());
}

#[test]
fn a_link_silent_before_a_pause_of_the_peer_is_judged_at_once() {
    // A cable cut at 200 ms under TCP: L0 delivers to 260 ms, TCP pauses
    // in recovery until 300 ms, then L0 goes on. L1 was silent 60 ms before
    // the gap began, over SLOW_TOUT / 2: no stop's silence, and the first
    // judgement after SLOW_TOUT of it fails L1, without a probe round.
    let p = Params::default();
    let mut d = Detector::new(2, ms(0));
    stream(&mut d, 0, 200, &p);
    for t in 200..260 {
        assert!(d.data(L0, ms(t), &p).is_empty());
    }
    let (t, failed) = first_failure(&mut d, L0, 300, 400, &p).expect("L1 failed by the counters");
    assert_eq!(failed, 1 << L1);
    assert!((300..=311).contains(&t), "failed at {t} ms");
}

#[test]
fn a_healthy_link_silent_for_a_while_before_a_stop_is_held() {
    // L1 starved for 40 ms (a trickle, core/sched.rs), then a stop of
    // 120 ms, then L0's queue first: L1 is held, not failed.
    let p = Params::default();
    let mut d = Detector::new(2, ms(0));
    stream(&mut d, 0, 200, &p);
    for t in 200..240 {
        d.data(L0, ms(t), &p);
    }
    for _ in 0..30 {
        assert!(
            d.data(L0, ms(360), &p).is_empty(),
            "L1 silent 160 ms, 120 of them the stop's"
        );
    }
    assert!(d.data(L1, ms(361), &p).is_empty());
}

#[test]
fn a_burst_from_a_new_peer_is_judged_at_once() {
    // A peer made at 0 (by our sending) whose first frames come at 150 ms,
    // all on L0: L1 never delivered, and nothing holds it.
    let p = Params::default();
    let mut d = Detector::new(2, ms(0));
    for t in 0..10 {
        assert!(d.data(L0, ms(150 + t), &p).is_empty());
    }
    assert_eq!(d.data(L0, ms(160), &p).failed, 1 << L1);
}

#[test]
fn the_run_clock_wraps() {
    // Runs are timed in 32-bit ms: a stream across the wrap is one run,
    // and a dead link in it is failed on time.
    let p = Params::default();
    let start = (1u64 << 32) - 50;
    let mut d = Detector::new(2, ms(start));
    let (t, failed) =
        first_failure(&mut d, L0, start, start + 300, &p).expect("L1 failed by the counters");
    assert_eq!(failed, 1 << L1);
    let t = t - start;
    assert!((100..=111).contains(&t), "failed {t} ms after the start");
}

#[test]
fn slow_tout_filters_bursts() {
    let p = Params::default();
    let mut d = Detector::new(2, ms(0));
    d.data(L1, ms(50), &p);
    // L0 bursts 11 packets while L1's last packet is only 60 ms old.
    let mut t = Transitions::default();
    for _ in 0..11 {
        t = d.data(L0, ms(110), &p);
    }
    assert!(t.is_empty(), "L1 received within SLOW_TOUT: not failed");
    assert_eq!(d.usable(), 0b11);
    assert_eq!(
        d.endpoints[L0].counter, 0,
        "judged anyway: counters restart"
    );
}

#[test]
fn a_counter_above_ft_lthresh_is_not_failed() {
    let p = Params::default();
    let mut d = Detector::new(2, ms(0));
    d.data(L1, ms(0), &p);
    d.data(L1, ms(0), &p);
    let mut t = Transitions::default();
    for _ in 0..11 {
        t = d.data(L0, ms(500), &p);
    }
    assert!(t.is_empty(), "L1 counted 2 > FT_LTHRESH");
}

#[test]
fn heartbeats_weigh_hbweight_so_an_idle_peer_is_still_judged() {
    let p = Params::default();
    let mut d = Detector::new(2, ms(0));
    // Only heartbeats, and only on L0: 3 each; the 4th makes 12 > 10. Each
    // follows a silence of the whole peer, but L1 was silent long before
    // it: no stop's silence.
    for i in 1..=3 {
        assert!(d.heartbeat(L0, ms(2000 * i), L0, 0, &p).is_empty());
    }
    assert_eq!(d.endpoints[L0].counter, 9);
    let t = d.heartbeat(L0, ms(8000), L0, 0, &p);
    assert_eq!(t.failed, 1 << L1);
}

#[test]
fn heartbeats_weigh_hbweight_within_a_run() {
    // HBSPAN 10 ms: the heartbeats alone make a run; 3 each, the 4th of
    // every 4 makes 12 > 10 and judges, and the first judgement SLOW_TOUT
    // into the run fails L1.
    let p = Params::from_values(&[(Param::Hbspan, 10)]).unwrap();
    let mut d = Detector::new(2, ms(0));
    let mut failed_at = None;
    for i in 1..=20 {
        if d.heartbeat(L0, ms(10 * i), L0, 0, &p).failed == 1 << L1 {
            failed_at = Some(10 * i);
            break;
        }
    }
    assert_eq!(failed_at, Some(120));
}

#[test]
fn a_heartbeat_on_a_failed_endpoint_recovers_it() {
    let p = Params::default();
    let mut d = Detector::new(2, ms(0));
    run(&mut d, L0, 0, 200, &p);
    assert!(d.endpoints[L1].failed);
    let t = d.heartbeat(L1, ms(2000), L1, 0, &p);
    assert_eq!(t.recovered, 1 << L1);
    assert_eq!(d.endpoints[L1].recoveries, 1);
    assert_eq!(d.usable(), 0b11);
    assert_eq!(d.endpoints[L1].counter, 0, "recovery adds no weight");
}

#[test]
fn data_alone_never_recovers_a_failed_endpoint() {
    let p = Params::default();
    let mut d = Detector::new(2, ms(0));
    run(&mut d, L0, 0, 200, &p);
    d.data(L1, ms(300), &p);
    assert!(
        d.endpoints[L1].failed,
        "only a heartbeat proves recovery (§5.7)"
    );
}

#[test]
fn the_peer_reporting_a_link_down_stops_our_sending_on_it() {
    // One-way failure: our frames on L1 do not reach the peer; its
    // heartbeats on L1 still reach us and say so.
    let p = Params::default();
    let mut d = Detector::new(2, ms(0));
    let t = d.heartbeat(L1, ms(10), L1, 1 << L1, &p);
    assert_eq!(t.peer_failed, 1 << L1);
    assert_eq!(d.usable(), 1 << L0);
    assert!(!d.endpoints[L1].failed, "our own receive direction is fine");
    let t = d.heartbeat(L1, ms(2010), L1, 0, &p);
    assert_eq!(t.peer_recovered, 1 << L1);
    assert_eq!(d.usable(), 0b11);
}

#[test]
fn a_link_the_peer_reports_down_is_judged_by_its_retries_not_its_data() {
    // One-way failure under a stream on L0 (ri2n_oneway): the peer hears
    // nothing from us on L1, so it sends us no data there, only its
    // retries, every HBSPAN / 8. Their silence between is no failure
    // (judged as one, the link fails and recovers every 250 ms).
    let p = Params::default();
    let mut d = Detector::new(2, ms(0));
    d.heartbeat(L1, ms(0), L1, 1 << L1, &p);
    assert!(d.endpoints[L1].peer_failed);
    let retry = p.hbspan().as_ms() / 8;
    for k in 0..8 {
        let t0 = k * retry;
        run(&mut d, L0, t0 + 1, t0 + retry - 1, &p);
        d.heartbeat(L1, ms(t0 + retry), L1, 1 << L1, &p);
    }
    assert_eq!(d.endpoints[L1].fails, 0);
    // The retries stop too (the link died both ways): failed once silent
    // for two retry periods beyond SLOW_TOUT.
    let last = 8 * retry;
    let (t, f) = first_failure(&mut d, L0, last + 1, last + 1000, &p).expect("L1 failed");
    assert_eq!(f, 1 << L1);
    assert!(
        (last + 2 * retry + 100..=last + 2 * retry + 115).contains(&t),
        "failed at {} ms after the last retry",
        t - last
    );
}

/// An idle peer that cannot use our `down` link: its heartbeats on the
/// others every HBSPAN from `from` to `to` ms (none on `dead`), its retries
/// on `down` every HBSPAN / 8, each saying so. Returns the first verdict:
/// when, and which links failed.
fn idle_peer_retrying(
    d: &mut Detector,
    n: usize,
    down: usize,
    dead: Option<usize>,
    from: u64,
    to: u64,
    p: &Params,
) -> Option<(u64, u8)> {
    let retry = p.hbspan().as_ms() / 8;
    for t in (from..to).step_by(retry as usize) {
        let mut f = d.heartbeat(down, ms(t), down, 1 << down, p).failed;
        if t % p.hbspan().as_ms() == 0 {
            for l in (0..n).filter(|&l| l != down && Some(l) != dead) {
                f |= d.heartbeat(l, ms(t + 1), l, 1 << down, p).failed;
            }
        }
        if f != 0 {
            return Some((t, f));
        }
    }
    None
}

#[test]
fn the_retries_on_a_link_the_peer_reports_down_judge_no_other_link() {
    // One-way failure on L1 (ri2n_oneway on the debug kernel): the peer
    // retries L1 every HBSPAN / 8 and is otherwise idle. Weighed HBWEIGHT
    // like heartbeats, four retries (~1 s) judged L0, which had had no
    // heartbeat since the last verdict half the time: failed, though
    // healthy, and the peer had no link to us until its next heartbeat.
    let p = Params::default();
    let mut d = Detector::new(2, ms(0));
    assert_eq!(idle_peer_retrying(&mut d, 2, L1, None, 0, 30_000, &p), None);
    assert!(d.endpoints[L1].peer_failed);
    assert_eq!(d.usable(), 1 << L0);
    // Three links: the healthy two still judge each other by their
    // heartbeats, every FT_HTHRESH / HBWEIGHT of them: a dead one is
    // found, and the retried one is not judged by their counts.
    const L2: usize = 2;
    let mut d = Detector::new(3, ms(0));
    assert_eq!(idle_peer_retrying(&mut d, 3, L2, None, 0, 30_000, &p), None);
    let (t, f) =
        idle_peer_retrying(&mut d, 3, L2, Some(L0), 30_000, 60_000, &p).expect("dead L0 found");
    assert_eq!(f, 1 << L0);
    // A verdict every fourth heartbeat (FT_HTHRESH / HBWEIGHT): the first
    // after L0 died may still count its last one; the second fails it.
    assert!(
        t <= 30_000 + 8 * p.hbspan().as_ms(),
        "found after {} ms",
        t - 30_000
    );
    assert_eq!(d.endpoints[L2].fails, 0);
}

#[test]
fn heartbeats_faster_than_hbspan_on_one_link_judge_no_other_link() {
    // An idle pair, L1 lossy (ri2n_lossy): each side probes it every
    // LOSS_PROBE_MS and the other answers each, while L0 brings a
    // heartbeat every HBSPAN. Weighed HBWEIGHT each, the probes judged the
    // links every 20 ms, and L0 failed SLOW_TOUT after each heartbeat
    // (ri2n_lossy: 9 and 19 failures in 5 s idle). A link's heartbeats
    // weigh once per 3/4 HBSPAN at most; the others just arrive.
    use ri2n_core::detector::LOSS_PROBE_MS;
    let p = Params::default();
    let mut d = Detector::new(2, ms(0));
    for t in (1..30_000).step_by(LOSS_PROBE_MS as usize) {
        let mut f = d.heartbeat(L1, ms(t), L1, 0, &p).failed;
        if t % p.hbspan().as_ms() == 1 {
            f |= d.heartbeat(L0, ms(t), L0, 0, &p).failed;
        }
        assert_eq!(f, 0, "a link failed at {t} ms");
    }
    // The weighed heartbeats still judge: L0 dead, L1's found it.
    let (mut t, mut f) = (30_001, 0);
    while f == 0 && t < 60_000 {
        f = d.heartbeat(L1, ms(t), L1, 0, &p).failed;
        t += LOSS_PROBE_MS;
    }
    assert_eq!(f, 1 << L0);
    assert!(
        t <= 30_000 + 4 * p.hbspan().as_ms(),
        "found after {} ms",
        t - 30_000
    );
}

#[test]
fn a_link_the_peer_reports_up_again_is_given_slow_tout_to_deliver() {
    // The peer's news that L1 is back comes on L0 before anything on L1,
    // which has been silent since the peer's last retry: no verdict on L1
    // for SLOW_TOUT from then.
    let p = Params::default();
    let mut d = Detector::new(2, ms(0));
    d.heartbeat(L1, ms(0), L1, 1 << L1, &p);
    run(&mut d, L0, 1, 240, &p);
    d.heartbeat(L1, ms(250), L1, 1 << L1, &p);
    run(&mut d, L0, 251, 490, &p);
    let t = d.heartbeat(L0, ms(495), L0, 0, &p);
    assert_eq!(t.peer_recovered, 1 << L1);
    assert_eq!(first_failure(&mut d, L0, 496, 590, &p), None);
    d.heartbeat(L1, ms(591), L1, 0, &p);
    assert_eq!((d.endpoints[L1].fails, d.usable()), (0, 0b11));
}

#[test]
fn a_heartbeat_overtaken_by_a_later_one_does_not_undo_its_news() {
    // The peer recovers L1 between two heartbeats: the one saying L1 is
    // down waited behind data on L0 and arrives after the one on L1 that
    // says it is up (make demo: "peer receives nothing from us" half a
    // millisecond after "receives again").
    use ri2n_core::detector::HB_REORDER;
    let p = Params::default();
    let mut d = Detector::new(2, ms(0));
    let t = d.heartbeat_numbered(L1, ms(10), L1, 1 << L1, Seq(1000), &p);
    assert_eq!(t.peer_failed, 1 << L1);
    let t = d.heartbeat_numbered(L1, ms(2000), L1, 0, Seq(5000), &p);
    assert_eq!(t.peer_recovered, 1 << L1);
    // Left before the last one taken: its link works, its down bits are old.
    let t = d.heartbeat_numbered(L0, ms(2001), L0, 1 << L1, Seq(4900), &p);
    assert!(t.is_empty(), "{t:?}");
    assert_eq!(d.usable(), 0b11);
    assert_eq!(d.endpoints[L0].rx_heartbeats, 1);
    // One that left with no frame between (the same number) is news.
    let t = d.heartbeat_numbered(L0, ms(2002), L0, 1 << L1, Seq(5000), &p);
    assert_eq!(t.peer_failed, 1 << L1);
    let t = d.heartbeat_numbered(L1, ms(4000), L1, 0, Seq(6000), &p);
    assert_eq!(t.peer_recovered, 1 << L1);
    // A peer that restarted numbers anew, lower: news again.
    d.renumbered();
    let t = d.heartbeat_numbered(L0, ms(4001), L0, 1 << L1, Seq(3), &p);
    assert_eq!(t.peer_failed, 1 << L1);
    // So is a number far behind (a peer that forgot us starts from 0).
    let t = d.heartbeat_numbered(L1, ms(6000), L1, 0, Seq(10 + HB_REORDER as u32), &p);
    assert_eq!(t.peer_recovered, 1 << L1);
    let t = d.heartbeat_numbered(L0, ms(6001), L0, 1 << L1, Seq(9), &p);
    assert_eq!(t.peer_failed, 1 << L1);
    // And one a little behind that comes SLOW_TOUT after the newest: a
    // peer that forgot us early on (its numbers below 65536 too) and
    // numbers from 0 again, in the same epoch. Its news is never ignored
    // for longer than that.
    let t = d.heartbeat_numbered(L1, ms(8000), L1, 0, Seq(500), &p);
    assert_eq!(t.peer_recovered, 1 << L1);
    let t = d.heartbeat_numbered(L0, ms(8050), L0, 1 << L1, Seq(2), &p);
    assert!(
        t.is_empty(),
        "within SLOW_TOUT it is taken for a late one: {t:?}"
    );
    let t = d.heartbeat_numbered(L0, ms(8100), L0, 1 << L1, Seq(3), &p);
    assert_eq!(
        t.peer_failed,
        1 << L1,
        "SLOW_TOUT after the newest, it is news"
    );
    let t = d.heartbeat_numbered(L1, ms(10100), L1, 0, Seq(4), &p);
    assert_eq!(t.peer_recovered, 1 << L1);
    // Numbers wrap.
    let t = d.heartbeat_numbered(L0, ms(12100), L0, 1 << L1, Seq(u32::MAX - 5), &p);
    assert_eq!(t.peer_failed, 1 << L1);
    let t = d.heartbeat_numbered(L1, ms(12101), L1, 0, Seq(3), &p);
    assert_eq!(t.peer_recovered, 1 << L1, "3 is after u32::MAX - 5");
    let t = d.heartbeat_numbered(L0, ms(12102), L0, 1 << L1, Seq(u32::MAX - 4), &p);
    assert!(t.is_empty(), "u32::MAX - 4 is before 3: {t:?}");
    // Time is kept in whole milliseconds over 49 days: 65.536 s after the
    // newest, a number behind is news (a 16-bit clock took it for late).
    let t = d.heartbeat_numbered(L0, ms(12101 + 65_536), L0, 1 << L1, Seq(2), &p);
    assert_eq!(t.peer_failed, 1 << L1);
}

#[test]
fn flapping_is_counted() {
    let p = Params::default();
    let mut d = Detector::new(2, ms(0));
    let mut now = 0;
    for _ in 0..3 {
        now += 1000;
        run(&mut d, L0, now - 150, now, &p);
        d.heartbeat(L1, ms(now + 1), L1, 0, &p);
    }
    assert_eq!(d.endpoints[L1].fails, 3);
    assert_eq!(d.endpoints[L1].recoveries, 3);
}

#[test]
fn news_of_a_dead_link_arrives_on_another_link() {
    // The peer lost carrier on its link 1: it cannot tell us there, so its
    // heartbeat on link 0 says so.
    let p = Params::default();
    let mut d = Detector::new(2, ms(0));
    d.heartbeat(L0, ms(0), L0, 0, &p);
    d.heartbeat(L1, ms(0), L1, 0, &p);
    let t = d.heartbeat(L0, ms(5), L0, 1 << L1, &p);
    assert_eq!(t.peer_failed, 1 << L1);
    assert_eq!(d.usable(), 1 << L0);
}

#[test]
fn changed_marks_going_out_of_use_and_back_not_every_flag() {
    // The peer reports L1 down at 5 ms; our own judgement fails it once
    // silent for HBSPAN / 4 beyond SLOW_TOUT (no retry of the peer's came
    // meanwhile): it left service at 5 ms, and returns when both flags
    // clear.
    let p = Params::default();
    let mut d = Detector::new(2, ms(0));
    d.heartbeat(L0, ms(0), L0, 0, &p);
    d.heartbeat(L1, ms(0), L1, 0, &p);
    d.heartbeat(L0, ms(5), L0, 1 << L1, &p);
    assert_eq!(d.endpoints[L1].changed, ms(5));
    run(&mut d, L0, 5, 700, &p);
    assert!(d.endpoints[L1].failed && d.endpoints[L1].peer_failed);
    assert_eq!(
        d.endpoints[L1].changed,
        ms(5),
        "failing an endpoint already out of use"
    );
    // Its heartbeat recovers our side; the peer still says down.
    d.heartbeat(L1, ms(800), L1, 1 << L1, &p);
    assert!(!d.endpoints[L1].failed);
    assert_eq!(d.endpoints[L1].changed, ms(5));
    d.heartbeat(L0, ms(810), L0, 0, &p);
    assert_eq!(d.usable(), 0b11);
    assert_eq!(d.endpoints[L1].changed, ms(810));
}

#[test]
fn link_numbering_may_differ_between_nodes() {
    // The peer listed its slaves the other way round: its link 0 is our L1.
    let p = Params::default();
    let mut d = Detector::new(2, ms(0));
    d.heartbeat(L1, ms(0), 0, 0, &p);
    d.heartbeat(L0, ms(0), 1, 0, &p);
    // It says its link 0 is down: that is our L1.
    let t = d.heartbeat(L0, ms(5), 1, 1 << 0, &p);
    assert_eq!(t.peer_failed, 1 << L1);
    assert_eq!(d.usable(), 1 << L0);
}

#[test]
fn a_down_bit_for_an_unlearned_link_changes_nothing() {
    let p = Params::default();
    let mut d = Detector::new(2, ms(0));
    let t = d.heartbeat(L0, ms(0), L0, 1 << 1, &p);
    assert!(
        t.peer_failed == 0,
        "peer link 1 not yet mapped to one of ours"
    );
    assert_eq!(d.usable(), 0b11);
}

const BOTH: u8 = 1 << L0 | 1 << L1;

#[test]
fn a_link_that_dies_while_traffic_stalls_is_found_by_a_probe_round() {
    let p = Params::default();
    let mut d = Detector::new(2, ms(0));
    // Both links deliver until 10 ms; then L1 dies and the traffic stalls
    // after a few packets on L0, far from FT_HTHRESH.
    for t in 0..5 {
        d.data(L0, ms(2 * t), &p);
        d.data(L1, ms(2 * t + 1), &p);
    }
    for t in 0..3 {
        assert!(d.data(L0, ms(50 + t), &p).is_empty());
    }
    // Not before L1 has been silent for SLOW_TOUT.
    assert_eq!(d.probe_due(ms(100), BOTH, &p), 0);
    assert_eq!(
        d.probe_due(ms(110), BOTH, &p),
        BOTH,
        "L1 silent 101 ms, L0 delivered 58 ms ago"
    );
    assert_eq!(d.probe_due(ms(111), BOTH, &p), 0, "one round at a time");
    // L0 answers; L1 does not. Nothing is decided before FAST_TOUT from
    // that answer.
    assert!(d.heartbeat(L0, ms(111), L0, 0, &p).is_empty());
    assert!(d.probe_end(ms(130), &p).is_empty());
    let t = d.probe_end(ms(131), &p);
    assert_eq!(
        t,
        Transitions {
            failed: 1 << L1,
            ..Default::default()
        }
    );
    assert_eq!(d.usable(), 1 << L0);
    // A heartbeat on L1 brings it back, as always.
    assert_eq!(d.heartbeat(L1, ms(2000), L1, 0, &p).recovered, 1 << L1);
}

#[test]
fn a_probed_link_that_answers_is_spared_whatever_its_counter() {
    let p = Params::default();
    let mut d = Detector::new(2, ms(0));
    // Sparse traffic alternating over the links: L1 is silent for long
    // stretches though alive.
    d.data(L1, ms(0), &p);
    d.data(L0, ms(500), &p);
    assert_eq!(d.probe_due(ms(500), BOTH, &p), BOTH);
    // Both answer, L0 first: L1's answer a little later still counts.
    d.heartbeat(L0, ms(501), L0, 0, &p);
    d.heartbeat(L1, ms(505), L1, 0, &p);
    assert!(d.probe_end(ms(520), &p).is_empty());
    assert_eq!(d.usable(), BOTH);
}

#[test]
fn a_link_that_delivered_just_before_the_round_is_not_failed_for_a_late_answer() {
    // Congested switch ports (ri2n_congested): the peer's frames stall
    // on both links while our data fills the queues toward it. L1 has
    // been silent for SLOW_TOUT, L0 delivered 30 ms before the round; L1's
    // answer comes back at once, L0's waits behind a full queue for longer
    // than FAST_TOUT. L0 was never the suspect.
    let p = Params::default();
    let mut d = Detector::new(2, ms(0));
    d.data(L1, ms(0), &p);
    d.data(L0, ms(80), &p);
    assert_eq!(d.probe_due(ms(110), BOTH, &p), BOTH);
    d.heartbeat(L1, ms(115), L1, 0, &p);
    assert!(
        d.probe_end(ms(135), &p).is_empty(),
        "L0 was silent 30 ms when the round opened, not SLOW_TOUT"
    );
    assert_eq!(d.usable(), BOTH);
    // Its answer arrives late; had L0 died instead, the next round (L0
    // silent for SLOW_TOUT by then) finds it.
    d.data(L1, ms(150), &p);
    assert_eq!(d.probe_due(ms(210), BOTH, &p), BOTH);
    d.heartbeat(L1, ms(212), L1, 0, &p);
    assert_eq!(d.probe_end(ms(232), &p).failed, 1 << L0);
}

#[test]
fn no_probe_round_when_every_link_is_silent_or_unusable() {
    let p = Params::default();
    let mut d = Detector::new(2, ms(0));
    d.heartbeat(L0, ms(0), L0, 0, &p);
    d.heartbeat(L1, ms(0), L1, 0, &p);
    // An idle peer: both silent. Heartbeats and their counters judge it.
    assert_eq!(d.probe_due(ms(1000), BOTH, &p), 0);
    // L1 without carrier on our side is no suspect.
    d.data(L0, ms(1000), &p);
    assert_eq!(d.probe_due(ms(1001), 1 << L0, &p), 0);
    // Nor is a link the peer says it does not receive on: it stopped
    // sending on it, so its silence is expected.
    d.heartbeat(L0, ms(1002), L0, 1 << L1, &p);
    assert!(d.endpoints[L1].peer_failed);
    assert_eq!(d.probe_due(ms(1003), BOTH, &p), 0);
}

#[test]
fn a_round_with_no_answer_at_all_fails_nothing() {
    let p = Params::default();
    let mut d = Detector::new(2, ms(0));
    d.data(L1, ms(0), &p);
    d.data(L0, ms(150), &p);
    assert_eq!(d.probe_due(ms(151), BOTH, &p), BOTH);
    // The peer went away entirely: no evidence against one link.
    assert!(d.probe_end(ms(200), &p).is_empty());
    assert_eq!(d.usable(), BOTH);
    // The next round waits SLOW_TOUT after the last.
    d.data(L0, ms(240), &p);
    assert_eq!(d.probe_due(ms(250), BOTH, &p), 0);
    assert_eq!(d.probe_due(ms(251), BOTH, &p), BOTH);
}

#[test]
fn failed_links_are_probed_every_eighth_of_hbspan() {
    let p = Params::default();
    let mut d = Detector::new(2, ms(0));
    assert_eq!(d.retry_due(ms(1000), BOTH, &p), 0, "nothing failed");
    run(&mut d, L0, 0, 210, &p);
    assert_eq!(d.failed(), 1 << L1);
    assert_eq!(d.retry_due(ms(260), BOTH, &p), 1 << L1);
    assert_eq!(
        d.retry_due(ms(300), BOTH, &p),
        0,
        "HBSPAN 2000 / 8 = 250 ms apart"
    );
    assert_eq!(d.retry_due(ms(510), 1 << L0, &p), 0, "not without carrier");
    assert_eq!(d.retry_due(ms(510), BOTH, &p), 1 << L1);
    // The answer recovers it; no more retries.
    assert_eq!(d.heartbeat(L1, ms(511), L1, 0, &p).recovered, 1 << L1);
    assert_eq!(d.retry_due(ms(1000), BOTH, &p), 0);
}

#[test]
fn a_vacated_link_starts_afresh_and_a_new_one_is_judged() {
    let p = Params::default();
    let mut d = Detector::new(2, ms(0));
    // L1 fails; the peer's heartbeat on our L0 says it left on its link 0.
    run(&mut d, L0, 0, 170, &p);
    d.heartbeat(L0, ms(200), 0, 0, &p);
    assert!(d.endpoints[L1].failed);
    // L1's slave is released and another NIC takes its index.
    d.set_links(2, 1 << L1, ms(300));
    assert!(!d.endpoints[L1].failed, "nothing of the old NIC's state");
    assert_eq!(d.endpoints[L1].fails, 0);
    assert_eq!(
        d.endpoints[L1].last_rx,
        ms(300),
        "SLOW_TOUT counts from now"
    );
    assert_eq!(d.usable(), 0b11);
    assert_eq!(d.endpoints[L0].rx_heartbeats, 1, "other links untouched");
    // A third link is added: usable at once, and judged like the others.
    d.set_links(3, 0, ms(400));
    assert_eq!(d.usable(), 0b111);
    for t in (400..=540).step_by(5) {
        d.data(L0, ms(t), &p);
        d.data(L1, ms(t), &p);
    }
    assert!(d.endpoints[2].failed, "the new link delivered nothing");
    assert!(!d.endpoints[L1].failed);
}

/// The peer's side of one link, as far as the counts go.
#[derive(Default)]
struct Peer {
    /// Frames it received from us.
    got: u32,
    /// Frames it sent us.
    sent: u32,
    /// What its next heartbeat echoes.
    echo: (u32, u32),
}

/// We send `n` data frames on `link`, `lost` of them lost, then a
/// heartbeat that arrives; the peer answers with one. Returns what its
/// echo made of our link.
fn round(
    d: &mut Detector,
    peer: &mut Peer,
    link: usize,
    n: u32,
    lost: u32,
    t: u64,
    p: &Params,
) -> Transitions {
    round_down(d, peer, link, n, lost, t, 0, p)
}

/// [`round`], the peer's heartbeat saying its links `down` are unusable.
#[allow(clippy::too_many_arguments)]
fn round_down(
    d: &mut Detector,
    peer: &mut Peer,
    link: usize,
    n: u32,
    lost: u32,
    t: u64,
    down: u8,
    p: &Params,
) -> Transitions {
    for _ in 0..n {
        d.sent(link);
    }
    peer.got += n - lost;
    let c = d.counts(link).unwrap();
    d.sent(link);
    peer.echo = (c.tx, peer.got);
    peer.got += 1;
    let answer = Counts {
        tx: peer.sent,
        echo_tx: peer.echo.0,
        echo_rx: peer.echo.1,
    };
    peer.sent += 1;
    let tr = d.report(link, answer, ms(t), p);
    d.heartbeat(link, ms(t), link, down, p);
    tr
}

/// The defaults with lossy-link detection on, at 0.5 % (it is off by
/// default).
fn lossy_params() -> Params {
    let mut p = Params::default();
    p.set(ri2n_core::params::Param::LossThresh, 5).unwrap();
    p
}

#[test]
fn a_lossy_link_goes_out_of_use_and_comes_back() {
    let p = lossy_params(); // loss_thresh 5 (0.5 %)
    let mut d = Detector::new(2, ms(0));
    let (mut peer, mut peer0) = (Peer::default(), Peer::default());
    // The first echo only sets the reference.
    assert!(round(&mut d, &mut peer, L1, 0, 0, 0, &p).is_empty());
    round(&mut d, &mut peer0, L0, 0, 0, 0, &p);
    // 0.2 % loss: kept. L0 beside it is clean.
    for i in 0..10 {
        assert_eq!(round(&mut d, &mut peer0, L0, 1100, 0, 100 + i, &p).lossy, 0);
        assert_eq!(round(&mut d, &mut peer, L1, 1100, 2, 100 + i, &p).lossy, 0);
    }
    assert_ne!(d.usable() & (1 << L1), 0);
    assert!(
        d.endpoints[L1].loss_bp > 10 && d.endpoints[L1].loss_bp <= 20,
        "about 0.2 %: {}",
        d.endpoints[L1].loss_bp
    );
    // 20 % loss: out at the third sample in a row over the margin (the
    // first: mean of 20 % and 0.2 %, > 2 x 0 % + 0.5 %).
    for i in 0..ri2n_core::detector::LOSS_STRIKES as u64 - 1 {
        assert_eq!(round(&mut d, &mut peer0, L0, 1100, 0, 200 + i, &p).lossy, 0);
        assert_eq!(
            round(&mut d, &mut peer, L1, 1100, 220, 200 + i, &p).lossy,
            0
        );
    }
    round(&mut d, &mut peer0, L0, 1100, 0, 210, &p);
    let t = round(&mut d, &mut peer, L1, 1100, 220, 210, &p);
    assert_eq!(t.lossy, 1 << L1);
    assert_eq!(d.usable() & (1 << L1), 0);
    assert_ne!(
        d.active() & (1 << L1),
        0,
        "the peer still sends to us on it"
    );
    assert_eq!(d.endpoints[L1].lossy_count, 1);
    // Probes (heartbeats alone) keep measuring: one lost in every 100,
    // never LOSS_CLEAN_BACK in a row: it stays out. From here on the peer
    // reports L0 down, so that L1 has no other link to compare with and
    // comes back by its clean run alone.
    for i in 0..40 {
        let t = round_down(&mut d, &mut peer, L1, 100, 1, 300 + i, 1 << L0, &p);
        assert_eq!((t.lossy, t.lossless), (0, 0), "round {i}: still losing");
    }
    // Loss ends: back once LOSS_CLEAN_BACK frames in a row arrived (each
    // round is 20 probes and the heartbeat that echoes them).
    let rounds_back = ri2n_core::detector::LOSS_CLEAN_BACK.div_ceil(21);
    for i in 1..=rounds_back {
        let t = round_down(&mut d, &mut peer, L1, 20, 0, 400 + i as u64, 1 << L0, &p);
        assert_eq!(t.lossless != 0, i == rounds_back, "round {i}");
    }
    assert_ne!(d.usable() & (1 << L1), 0);
}

#[test]
fn frames_in_flight_are_never_counted_lost() {
    let p = lossy_params();
    let mut d = Detector::new(2, ms(0));
    let mut peer = Peer::default();
    round(&mut d, &mut peer, L0, 0, 0, 0, &p);
    // 1000 frames sent since the echoed heartbeat are still on their way
    // when the answer comes: the echo covers only what preceded that
    // heartbeat, which all arrived.
    for i in 0..20 {
        round(&mut d, &mut peer, L0, 100, 0, 10 + i, &p);
        for _ in 0..1000 {
            d.sent(L0);
        }
        peer.got += 1000;
    }
    assert!(!d.endpoints[L0].lossy);
    assert_eq!(d.endpoints[L0].loss_bp, 0);
}

#[test]
fn broadcasts_are_not_in_the_counts() {
    let p = Params::default();
    let mut d = Detector::new(2, ms(0));
    d.bcast(L0, ms(1), &p);
    d.data(L0, ms(2), &p);
    assert_eq!(d.endpoints[L0].rx_frames(), 1);
    assert_eq!(d.endpoints[L0].rx_bcast, 1);
}

#[test]
fn reports_are_asked_for_busy_and_lossy_links_only() {
    let p = lossy_params();
    let mut d = Detector::new(2, ms(0));
    assert_eq!(
        d.report_due(ms(1000), 0b11, &p),
        0,
        "nothing sent: nothing to ask"
    );
    for _ in 0..ri2n_core::detector::LOSS_SAMPLE {
        d.sent(L0);
    }
    assert_eq!(d.report_due(ms(1000), 0b11, &p), 1 << L0);
    assert_eq!(
        d.report_due(ms(1050), 0b11, &p),
        0,
        "at most every REPORT_MS"
    );
    assert_eq!(
        d.report_due(ms(1100), 0b10, &p),
        0,
        "only links that are up"
    );
}

#[test]
fn loss_thresh_0_never_takes_a_link_out() {
    let mut p = Params::default();
    p.set(ri2n_core::params::Param::LossThresh, 0).unwrap();
    let mut d = Detector::new(2, ms(0));
    let mut peer = Peer::default();
    round(&mut d, &mut peer, L1, 0, 0, 0, &p);
    for i in 0..5 {
        assert_eq!(round(&mut d, &mut peer, L1, 100, 90, 10 + i, &p).lossy, 0);
    }
    assert!(!d.endpoints[L1].lossy);
    assert_eq!(d.report_due(ms(1000), 0b11, &p), 0);
}

/// Rounds of `n` frames on every link of `d` at `t`, link l losing
/// `lost[l]`; the transitions of all.
fn rounds(
    d: &mut Detector,
    peers: &mut [Peer],
    n: u32,
    lost: &[u32],
    t: u64,
    p: &Params,
) -> Transitions {
    let mut all = Transitions::default();
    for (l, peer) in peers.iter_mut().enumerate() {
        let tr = round(d, peer, l, n, lost[l], t, p);
        all.lossy |= tr.lossy;
        all.lossless |= tr.lossless;
    }
    all
}

/// Two links whose echoes have set their references (no sample yet).
fn two_links(p: &Params) -> (Detector, [Peer; 2]) {
    let mut d = Detector::new(2, ms(0));
    let mut peers = [Peer::default(), Peer::default()];
    rounds(&mut d, &mut peers, 0, &[0, 0], 0, p);
    rounds(&mut d, &mut peers, 10, &[0, 0], 1, p);
    (d, peers)
}

/// Two links, L1 out of use for loss: 20 % lost beside a clean L0, the
/// samples it takes.
fn l1_lossy(p: &Params) -> Detector {
    let (mut d, mut peers) = two_links(p);
    for i in 0..ri2n_core::detector::LOSS_STRIKES as u64 {
        rounds(&mut d, &mut peers, 1100, &[0, 220], 100 + i, p);
    }
    assert_eq!(d.lossy(), 1 << L1);
    d
}

/// Data on L0 at `from` ms, then only the lossy L1's answers to our loss
/// probes, every LOSS_PROBE_MS until `from` + 100: a witness round is due
/// at `from` + 101.
fn busy_then_witnessed(d: &mut Detector, from: u64, p: &Params) {
    use ri2n_core::detector::LOSS_PROBE_MS;
    d.data(L0, ms(from), p);
    for t in (from..=from + 100).step_by(LOSS_PROBE_MS as usize) {
        d.heartbeat(L1, ms(t), L1, 0, p);
    }
}

#[test]
fn congestion_on_every_link_takes_none_out() {
    // A full queue at the bottleneck loses 1-4 % on each link in bursts
    // under bulk TCP: no link is worse than another, none goes out (with
    // loss alone both would, and then nothing could be sent at all).
    let p = lossy_params();
    let (mut d, mut peers) = two_links(&p);
    let bursts = [[10, 30], [40, 20], [0, 35], [25, 0], [30, 30], [45, 15]];
    for (i, lost) in bursts.iter().enumerate() {
        let t = rounds(&mut d, &mut peers, 1100, lost, 100 * (i as u64 + 1), &p);
        assert_eq!(
            t.lossy,
            0,
            "round {i}: {:?} bp",
            (d.endpoints[L0].loss_bp, d.endpoints[L1].loss_bp)
        );
    }
    assert_eq!(d.usable(), BOTH);
}

#[test]
fn one_burst_on_one_link_is_one_strike_not_three() {
    // Whole GSO packets per link (tx_gso=1) overflow one switch port's
    // queue at a time: a congestion burst lands in one link's sample
    // alone, and TCP backs off before the other port fills. The mean
    // carries that burst over the next samples, which are clean; only
    // samples over the margin themselves count as strikes.
    let p = lossy_params();
    let (mut d, mut peers) = two_links(&p);
    rounds(&mut d, &mut peers, 1100, &[0, 0], 100, &p);
    let t = rounds(&mut d, &mut peers, 1100, &[0, 110], 200, &p);
    assert_eq!(t.lossy, 0);
    for i in 0..5 {
        let t = rounds(&mut d, &mut peers, 1100, &[0, 0], 300 + 100 * i, &p);
        assert_eq!(
            t.lossy, 0,
            "clean sample {i}: {} bp on L1",
            d.endpoints[L1].loss_bp
        );
    }
    assert_eq!(d.usable(), BOTH);
}

#[test]
fn the_last_usable_link_is_never_taken_out_for_loss() {
    let p = lossy_params();
    let (mut d, mut peers) = two_links(&p);
    // L0 reported down by the peer: L1 is all there is.
    for i in 0..5 {
        assert_eq!(
            round_down(
                &mut d,
                &mut peers[L1],
                L1,
                1100,
                220,
                100 * (i + 1),
                1 << L0,
                &p
            )
            .lossy,
            0
        );
    }
    assert!(d.endpoints[L1].loss_bp > 1000);
    assert_eq!(d.usable(), 1 << L1);
}

#[test]
fn a_lossy_link_still_carries_data_when_nothing_better_is_left() {
    let p = lossy_params();
    let (mut d, mut peers) = two_links(&p);
    let mut t = Transitions::default();
    for i in 0..ri2n_core::detector::LOSS_STRIKES as u64 {
        t = rounds(&mut d, &mut peers, 1100, &[0, 220], 100 + i, &p);
    }
    assert_eq!(t.lossy, 1 << L1);
    assert_eq!(d.sendable(BOTH), 1 << L0);
    // Then L0 loses its carrier (or fails): L1, lossy, is better than none.
    assert_eq!(d.sendable(1 << L1), 1 << L1);
    // (The peer says L0 is down: twice, as it takes the last usable link.)
    d.heartbeat(L1, ms(200), L1, 1 << L0, &p);
    d.heartbeat(L1, ms(201), L1, 1 << L0, &p);
    assert_eq!(d.sendable(BOTH), 1 << L1);
}

#[test]
fn a_link_is_only_compared_with_fresh_measurements() {
    let p = lossy_params();
    let (mut d, mut peers) = two_links(&p);
    rounds(&mut d, &mut peers, 1100, &[0, 0], 100, &p);
    // Seconds later a burst on L1 alone, before L0's sample of the same
    // period: L0's clean figure is stale, nothing to compare with yet.
    assert_eq!(
        round(&mut d, &mut peers[L1], L1, 1100, 40, 5000, &p).lossy,
        0
    );
    // L0 measured now, as lossy under the same congestion: still none out.
    assert_eq!(
        round(&mut d, &mut peers[L0], L0, 1100, 30, 5010, &p).lossy,
        0
    );
}

#[test]
fn a_peer_with_a_lossy_link_is_swept_every_time_to_probe_it() {
    use ri2n_core::heap::Buf;
    use ri2n_core::peers::{Peer as PeerState, SweepNeed};
    let p = lossy_params();
    let d = l1_lossy(&p);
    let mut peer = PeerState::<u32, Buf<u32>> {
        det: d,
        ..Default::default()
    };
    // Long after the last data: only the lossy link's probes (every
    // LOSS_PROBE_MS) need the sweep, and every sweep, not every HBSPAN / 8.
    let t = ms(60_000);
    assert_eq!(peer.sweep_need(t, BOTH, &p), SweepNeed::Now);
    assert_eq!(peer.det.report_due(t, BOTH, &p), 1 << L1);
}

#[test]
fn a_lossy_link_is_found_at_a_few_hundred_frames_a_second() {
    // TCP over a link losing 20 % sends little: 60 frames per link every
    // LOSS_SAMPLE_MS still make samples, and the link is out in 3 of them.
    use ri2n_core::detector::{LOSS_SAMPLE_MS, LOSS_STRIKES};
    let p = lossy_params();
    let (mut d, mut peers) = two_links(&p);
    let mut out_at = None;
    for i in 1..=10u64 {
        let t = rounds(&mut d, &mut peers, 60, &[0, 12], 1 + i * LOSS_SAMPLE_MS, &p);
        if t.lossy != 0 && out_at.is_none() {
            assert_eq!(t.lossy, 1 << L1);
            out_at = Some(i);
        }
    }
    assert_eq!(
        out_at,
        Some(LOSS_STRIKES as u64),
        "out at the third sample, 1.5 s"
    );
}

#[test]
fn what_a_dead_link_lost_does_not_make_it_lossy() {
    // A blackhole (carrier stays up) on L1: everything sent on it is lost
    // until the peer reports it down. Lifted, its first echoes still speak
    // of before: none of that is a loss sample.
    let p = lossy_params();
    let (mut d, mut peers) = two_links(&p);
    rounds(&mut d, &mut peers, 300, &[0, 0], 100, &p);
    for _ in 0..500 {
        d.sent(L1);
    }
    d.sent(L1); // our heartbeat, lost too
                // The peer says L1 is down (its heartbeat on L0).
    round_down(&mut d, &mut peers[L0], L0, 300, 0, 300, 1 << L1, &p);
    assert_eq!(d.usable(), 1 << L0);
    // Probes on L1 while it is dead, lost: counted as sent.
    for _ in 0..20 {
        d.sent(L1);
    }
    // Lifted: the peer's heartbeat on L1 still echoes what it heard
    // before the blackhole, and tells us L1 is fine again.
    let echo = Counts {
        tx: peers[L1].sent,
        echo_tx: peers[L1].echo.0,
        echo_rx: peers[L1].echo.1,
    };
    peers[L1].sent += 1;
    assert!(d.report(L1, echo, ms(400), &p).is_empty());
    d.heartbeat(L1, ms(400), L1, 0, &p);
    assert_eq!(d.usable(), BOTH);
    // From now on the link is clean: it never goes out for loss.
    for i in 0..6 {
        let t = rounds(&mut d, &mut peers, 300, &[0, 0], 500 + 100 * i, &p);
        assert_eq!(t.lossy, 0, "round {i}: {} bp", d.endpoints[L1].loss_bp);
    }
    assert!(
        d.endpoints[L1].loss_bp < 10,
        "{} bp",
        d.endpoints[L1].loss_bp
    );
}

#[test]
fn loss_is_measured_past_two_to_the_31_frames() {
    // The counters wrap; the rule must not stall halfway round (2^31
    // frames: half an hour at a million frames a second).
    let p = lossy_params();
    let (mut d, mut peers) = two_links(&p);
    for (e, peer) in d.endpoints.iter_mut().zip(peers.iter_mut()) {
        for _ in 0..3 {
            // Skip ahead in big steps, as if the links carried that much.
            let skip = 1u32 << 30;
            e.tx_frames = e.tx_frames.wrapping_add(skip);
            peer.got = peer.got.wrapping_add(skip);
        }
    }
    // Re-reference after the jump, then L1 loses 20 %: out, as ever.
    rounds(&mut d, &mut peers, 0, &[0, 0], 50, &p);
    let mut t = Transitions::default();
    for i in 0..5 {
        t.lossy |= rounds(&mut d, &mut peers, 1100, &[0, 220], 100 + i, &p).lossy;
    }
    assert!(d.endpoints[L1].tx_frames > 1 << 31);
    assert_eq!(t.lossy, 1 << L1);
}

#[test]
fn an_echo_of_frames_never_sent_is_no_sample() {
    let p = lossy_params();
    let (mut d, mut peers) = two_links(&p);
    rounds(&mut d, &mut peers, 1100, &[0, 220], 100, &p);
    let before = d.endpoints[L1].loss_bp;
    // A forged echo claiming 10 000 frames of ours that we never sent.
    let tx = d.endpoints[L1].tx_frames;
    let forged = Counts {
        tx: 5,
        echo_tx: tx.wrapping_add(10_000),
        echo_rx: tx.wrapping_add(10_000),
    };
    assert!(d.report(L1, forged, ms(150), &p).is_empty());
    assert_eq!(d.endpoints[L1].loss_bp, before);
}

#[test]
fn loss_probes_stay_within_a_budget_however_many_peers() {
    use ri2n_core::detector::{loss_probe_every, LOSS_PROBE_MS};
    assert_eq!(
        loss_probe_every(0),
        ri2n_core::time::Duration::from_ms(LOSS_PROBE_MS)
    );
    assert_eq!(
        loss_probe_every(16),
        ri2n_core::time::Duration::from_ms(LOSS_PROBE_MS)
    );
    // One bad cable toward 4096 peers: each probed every 1.28 s, so about
    // 3,200 probes a second in all, not 800,000.
    let every = loss_probe_every(4096);
    assert_eq!(every, ri2n_core::time::Duration::from_ms(1280));
    let per_s = 4096.0 * 1000.0 / every.as_ms() as f64;
    assert!(per_s <= 3300.0, "{per_s} probes/s");
    // A lossy link asks no more often than that.
    let p = lossy_params();
    let mut d = l1_lossy(&p);
    assert_eq!(d.report_due_every(ms(2000), BOTH, &p, every), 1 << L1);
    assert_eq!(d.report_due_every(ms(3000), BOTH, &p, every), 0);
    assert_eq!(d.report_due_every(ms(3280), BOTH, &p, every), 1 << L1);
}

#[test]
fn one_heartbeat_alone_never_takes_every_link_out() {
    // A forged (or corrupt) heartbeat claiming every link down: nothing
    // happens until the same claim comes again; one claiming one of two
    // links down acts at once (a real one-way failure).
    let p = Params::default();
    let mut d = Detector::new(2, ms(0));
    d.heartbeat(L0, ms(1), L0, 0, &p);
    d.heartbeat(L1, ms(1), L1, 0, &p);
    let t = d.heartbeat(L0, ms(2), L0, BOTH, &p);
    assert_eq!(t.peer_failed, 0);
    assert_eq!(d.usable(), BOTH);
    let t = d.heartbeat(L1, ms(3), L1, BOTH, &p);
    assert_eq!(t.peer_failed, BOTH, "twice in a row: believed");
    assert_eq!(d.usable(), 0);
    // Back up, then a real one-way failure of L1: at once.
    d.heartbeat(L0, ms(4), L0, 0, &p);
    assert_eq!(d.usable(), BOTH);
    let t = d.heartbeat(L0, ms(5), L0, 1 << L1, &p);
    assert_eq!(t.peer_failed, 1 << L1);
    // With L1 out, a claim that L0 is down too takes the last link: it
    // needs a second heartbeat.
    assert_eq!(d.heartbeat(L0, ms(6), L0, BOTH, &p).peer_failed, 0);
    assert_eq!(d.usable(), 1 << L0);
    assert_eq!(d.heartbeat(L0, ms(7), L0, BOTH, &p).peer_failed, 1 << L0);
}

/// L1 lossy (out of use), L0 the last usable link: a ping every
/// `ping_ms` on L0 (data) until `dies_at`, nothing on it after; L1 answers
/// our loss probes every LOSS_PROBE_MS; probes asked on L0 are answered
/// while it lives; a sweep every FAST_TOUT / 4. Returns when L0 failed
/// and how many probe rounds began, until `to`.
fn last_usable_beside_lossy(
    ping_ms: Option<u64>,
    dies_at: u64,
    to: u64,
    p: &Params,
) -> (Option<u64>, u32) {
    use ri2n_core::detector::LOSS_PROBE_MS;
    let mut d = l1_lossy(p);
    let (mut failed, mut rounds_begun) = (None, 0);
    let sweep = p.fast_tout().as_ms() / 4;
    for t in 200..to {
        let alive = t < dies_at;
        if alive && ping_ms.is_some_and(|every| t % every == 0) {
            d.data(L0, ms(t), p);
        }
        if alive && t % p.hbspan().as_ms() == 0 {
            d.heartbeat(L0, ms(t), L0, 0, p);
        }
        if t % LOSS_PROBE_MS == 0 {
            d.heartbeat(L1, ms(t), L1, 0, p);
        }
        if t % sweep == 0 {
            let asked = d.probe_due(ms(t), BOTH, p);
            if asked != 0 {
                rounds_begun += 1;
            }
            if alive && asked & (1 << L0) != 0 {
                d.heartbeat(L0, ms(t + 1), L0, 0, p);
            }
            if !d.probe_end(ms(t), p).is_empty() && d.endpoints[L0].failed {
                failed.get_or_insert(t);
            }
        }
        if d.endpoints[L0].failed {
            failed.get_or_insert(t);
        }
    }
    (failed, rounds_begun)
}

#[test]
fn the_last_usable_link_beside_a_lossy_one_is_found_dead_by_a_probe_round() {
    // Counters alone, with L1's fast heartbeats weighed once per 3/4
    // HBSPAN, find it in 6-11 s (scripts/lossy-failover-lab.sh); a round
    // does in 214-685 ms. L1 still delivers (its loss probes' answers): it
    // witnesses a round that asks L0 too, once L0, busy until it went
    // silent, has been silent for SLOW_TOUT.
    let p = lossy_params();
    let (failed, _) = last_usable_beside_lossy(Some(10), 5_000, 10_000, &p);
    let after = failed.expect("L0 never failed") - 5_000;
    // Silent SLOW_TOUT, then a round of FAST_TOUT after SLOW_TOUT.
    let bound = 2 * p.slow_tout().as_ms() + 2 * p.fast_tout().as_ms() + 10;
    assert!(
        after <= bound,
        "L0 failed {after} ms after it died (bound {bound})"
    );
}

#[test]
fn an_idle_link_beside_a_lossy_one_is_not_probed_every_slow_tout() {
    // Idle, L0 brings a heartbeat every HBSPAN and L1 answers probes every
    // LOSS_PROBE_MS: no round (thousands of idle peers). Pinged every
    // second, a round after each ping at most, and L0 never fails.
    let p = lossy_params();
    let (failed, begun) = last_usable_beside_lossy(None, u64::MAX, 30_000, &p);
    assert_eq!((failed, begun), (None, 0));
    let (failed, begun) = last_usable_beside_lossy(Some(1000), u64::MAX, 30_000, &p);
    assert_eq!(failed, None);
    assert!(begun <= 30, "{begun} rounds for 30 pings");
}

#[test]
fn the_last_usable_link_answering_behind_other_peers_data_is_not_failed() {
    // Our bad cable makes L1 lossy toward every peer: all our data goes on
    // L0, whose queues may hold 25 ms of it (1 Gbit/s). A peer that went
    // quiet gets a witness round: L1's answer comes at once through empty
    // queues, L0's 25 ms later. FAST_TOUT after the witness failed L0
    // if the round gave it only that; it gives SLOW_TOUT.
    let p = lossy_params();
    let mut d = l1_lossy(&p);
    busy_then_witnessed(&mut d, 1000, &p);
    assert_eq!(
        d.probe_due(ms(1101), BOTH, &p),
        BOTH,
        "L0 busy, silent 101 ms; L1 witnesses"
    );
    let (c1, c0) = (d.counts(L1).unwrap(), d.counts(L0).unwrap());
    d.sent(L1);
    d.sent(L0);
    d.heartbeat_echoed(L1, ms(1102), L1, 0, Seq(0), Some(c1.tx), &p);
    assert!(
        d.probe_end(ms(1122), &p).is_empty(),
        "FAST_TOUT after the witness's answer"
    );
    assert!(d
        .heartbeat_echoed(L0, ms(1126), L0, 0, Seq(0), Some(c0.tx), &p)
        .is_empty());
    assert!(d.probe_end(ms(1300), &p).is_empty());
    assert_eq!(d.usable(), 1 << L0);
    // Silent still at the next round: failed FAST_TOUT after SLOW_TOUT.
    busy_then_witnessed(&mut d, 1400, &p);
    assert_eq!(d.probe_due(ms(1501), BOTH, &p), BOTH);
    d.heartbeat(L1, ms(1502), L1, 0, &p);
    assert!(
        d.probe_end(ms(1620), &p).is_empty(),
        "within SLOW_TOUT + FAST_TOUT"
    );
    assert_eq!(d.probe_end(ms(1621), &p).failed, 1 << L0);
}

#[test]
fn a_witness_that_leaves_lossy_mid_round_keeps_the_round_long() {
    // The witness's answer may bring news that takes it out of
    // `lossy_only` (its report back into use, or the peer's down bits, as
    // here): the round stays as long as it began, or L0, answering behind
    // other peers' data, would be failed.
    let p = lossy_params();
    let mut d = l1_lossy(&p);
    busy_then_witnessed(&mut d, 1000, &p);
    assert_eq!(d.probe_due(ms(1101), BOTH, &p), BOTH);
    // L1 answers, saying the peer cannot use it toward us.
    d.heartbeat(L1, ms(1102), L1, 1 << L1, &p);
    assert_eq!(d.lossy_only(), 0, "L1 reported down: no longer lossy only");
    assert!(
        d.probe_end(ms(1122), &p).is_empty(),
        "the round began with a witness"
    );
    assert!(d.heartbeat(L0, ms(1126), L0, 1 << L1, &p).is_empty());
    assert!(d.probe_end(ms(1300), &p).is_empty());
    assert_eq!(d.usable(), 1 << L0);
}

#[test]
fn loss_probe_shift_asks_no_more_probes_than_we_send() {
    use ri2n_core::detector::{loss_probe_every, loss_probe_shift, LOSS_PROBE_MS};
    for (peers, shift) in [
        (1, 0),
        (16, 0),
        (17, 1),
        (320, 5),
        (1024, 6),
        (4096, 8),
        (8192, 9),
        (100_000, 9),
    ] {
        let every = loss_probe_every(peers);
        assert_eq!(
            loss_probe_shift(every),
            shift,
            "{peers} peers with a lossy link"
        );
        // As slow as our own probes, and no slower than twice that (up to
        // the largest shift).
        let asked = LOSS_PROBE_MS << shift;
        if peers <= 8192 {
            assert!(
                asked >= every.as_ms() && asked < 2 * every.as_ms().max(LOSS_PROBE_MS),
                "{peers}: {asked} ms for {every:?}"
            );
        }
    }
}

#[test]
fn the_peers_probe_shift_slows_our_loss_probes_on_its_lossy_link() {
    // The peer is our one peer with a lossy link (we would probe it every
    // 5 ms), but it has 1,024 behind its own lossy cable and asks each to
    // probe it no more than it probes them: every 320 ms. Before the
    // field, our probes came every 5 ms whatever it had (and it answered
    // each: 200 a second from each peer).
    use ri2n_core::detector::{loss_probe_every, loss_probe_shift, LOSS_PROBE_MS};
    let p = lossy_params();
    let mut d = l1_lossy(&p);
    let every = loss_probe_every(1);
    let shift = loss_probe_shift(loss_probe_every(1024));
    d.peer_probe_shift(shift);
    let count = |d: &mut Detector, from: u64, to: u64, gap: u64| {
        let (mut asks, mut last) = (0u64, None::<u64>);
        for t in from..to {
            if d.report_due_every(ms(t), BOTH, &p, every) & (1 << L1) != 0 {
                if let Some(l) = last {
                    assert!(t - l >= gap, "probes at {l} and {t} ms");
                }
                asks += 1;
                last = Some(t);
            }
        }
        asks
    };
    let asks = count(&mut d, 1_000, 11_000, LOSS_PROBE_MS << shift);
    assert!(
        (30..=32).contains(&asks),
        "{asks} loss probes in 10 s, every 320 ms"
    );
    // A peer that asks nothing (0, as every one before the field): every
    // 5 ms again, one step a heartbeat (its probes, which came at the old
    // rate, still count within the bound meanwhile).
    for _ in 0..shift {
        d.peer_probe_shift(0);
    }
    let asks = count(&mut d, 11_000, 12_000, LOSS_PROBE_MS);
    assert!((199..=201).contains(&asks), "{asks} loss probes in 1 s");
}

#[test]
fn a_lossy_link_probed_seconds_apart_is_not_failed_between_its_probes() {
    // L1 is out for loss; the peer has 4,096 peers behind its own lossy
    // cable and asks for loss probes every 1.28 s at most, so L1 brings
    // something that often, while L0 carries data. Its silence between
    // them is no sign of death (judged by SLOW_TOUT alone before, it
    // failed 100 ms after each); a lossy link that stops delivering still
    // fails, LOSSY_SILENT_PROBES such intervals after SLOW_TOUT.
    use ri2n_core::detector::{loss_probe_every, loss_probe_shift};
    let p = lossy_params();
    let mut d = l1_lossy(&p);
    let shift = loss_probe_shift(loss_probe_every(4096));
    d.peer_probe_shift(shift);
    let gap = 5u64 << shift;
    let mut failed_at = None;
    for t in 1_000..12_000u64 {
        if t % gap == 0 {
            d.heartbeat(L1, ms(t), L1, 0, &p);
        }
        let tr = d.data(L0, ms(t), &p);
        if tr.failed & (1 << L1) != 0 && failed_at.is_none() {
            failed_at = Some(t);
        }
    }
    assert_eq!(failed_at, None, "L1 failed between its answers");
    // Dead after its last answer (11,520 ms).
    let bound = 11_520 + p.slow_tout().as_ms() + LOSSY_SILENT_PROBES * gap;
    let at = (12_000..bound + 200).find(|&t| d.data(L0, ms(t), &p).failed & (1 << L1) != 0);
    let at = at.expect("a dead lossy link fails");
    assert!(
        at >= bound && at <= bound + 20,
        "failed at {at} ms, bound {bound}"
    );
}

#[test]
fn a_lossy_link_probed_every_5_ms_that_dies_fails_soon() {
    // Two nodes, each the other's one lossy peer: L1's probes and answers
    // come every 5 ms, and its death is found 4 x 5 ms after SLOW_TOUT,
    // not seconds later (a peer that still sends its data there, L1 lossy
    // only toward it, would lose it meanwhile).
    let p = lossy_params();
    let mut d = l1_lossy(&p);
    for t in 1_000..2_000u64 {
        if t % 5 == 0 {
            d.heartbeat(L1, ms(t), L1, 0, &p);
        }
        assert_eq!(d.data(L0, ms(t), &p).failed, 0, "at {t} ms");
    }
    let bound = 1_995 + p.slow_tout().as_ms() + LOSSY_SILENT_PROBES * 5;
    let at = (2_000..3_000)
        .find(|&t| d.data(L0, ms(t), &p).failed & (1 << L1) != 0)
        .expect("fails");
    assert!(
        at >= bound && at <= bound + 20,
        "failed at {at} ms, bound {bound}"
    );
}

/// L1 lossy beside L0, which streams data every ms from `from` to `to`,
/// while L1 brings a heartbeat every `gap` ms; the first time L1 failed.
fn lossy_beside_data(d: &mut Detector, from: u64, to: u64, gap: u64, p: &Params) -> Option<u64> {
    let mut failed_at = None;
    for t in from..to {
        if t % gap == 0 {
            d.heartbeat(L1, ms(t), L1, 0, p);
        }
        if d.data(L0, ms(t), p).failed & (1 << L1) != 0 && failed_at.is_none() {
            failed_at = Some(t);
        }
    }
    failed_at
}

#[test]
fn a_link_busy_with_data_before_it_went_lossy_is_judged_by_its_probes() {
    // L1 carried data, then went out for loss (a `busy` bit left set
    // would judge it by SLOW_TOUT and fail it between probes seconds
    // apart, once per peer each time a link went lossy at a node with
    // over 256 such peers).
    use ri2n_core::detector::{loss_probe_every, loss_probe_shift};
    let p = lossy_params();
    let (mut d, mut peers) = two_links(&p);
    d.data(L1, ms(2), &p);
    for i in 0..ri2n_core::detector::LOSS_STRIKES as u64 {
        rounds(&mut d, &mut peers, 1100, &[0, 220], 100 + i, &p);
    }
    assert_eq!(d.lossy(), 1 << L1);
    d.peer_probe_shift(loss_probe_shift(loss_probe_every(4096)));
    assert_eq!(lossy_beside_data(&mut d, 1_000, 12_000, 1_280, &p), None);
}

#[test]
fn a_lossy_link_carrying_the_peers_data_is_judged_by_slow_tout() {
    // Lossy only toward the peer, which still sends its data there: when
    // that stops (the link died), it fails SLOW_TOUT after its last frame,
    // whatever the probes' interval.
    use ri2n_core::detector::{loss_probe_every, loss_probe_shift};
    let p = lossy_params();
    let mut d = l1_lossy(&p);
    d.peer_probe_shift(loss_probe_shift(loss_probe_every(4096)));
    for t in 1_000..2_000u64 {
        d.data(L1, ms(t), &p);
        assert_eq!(d.data(L0, ms(t), &p).failed, 0, "at {t} ms");
    }
    let bound = 1_999 + p.slow_tout().as_ms();
    let at = (2_000..8_000)
        .find(|&t| d.data(L0, ms(t), &p).failed & (1 << L1) != 0)
        .expect("fails");
    assert!(
        at >= bound && at <= bound + 20,
        "failed at {at} ms, bound {bound}"
    );
}

#[test]
fn our_own_probe_interval_counts_in_the_bound_too() {
    // We have 4,096 peers with a lossy link and probe each every 1.28 s;
    // this peer asks nothing (shift 0). L1's frames come that often: no
    // failure between them.
    use ri2n_core::detector::loss_probe_every;
    let p = lossy_params();
    let mut d = l1_lossy(&p);
    // The sweep's visit records our interval.
    d.report_due_every(ms(999), BOTH, &p, loss_probe_every(4096));
    assert_eq!(lossy_beside_data(&mut d, 1_000, 12_000, 1_280, &p), None);
}

/// Both links carry the peer's data until 999 ms; we ask (`asked`) for its
/// probes; at `at` ms its heartbeat on L1 says HB_LOSSY if `flagged`.
fn data_then_peer_lossy(flagged: bool, asked: u8, at: u64, p: &Params) -> Detector {
    let mut d = Detector::new(2, ms(0));
    for t in 0..1_000u64 {
        d.data((t % 2) as usize, ms(t), p);
    }
    d.asked_probe_shift(asked);
    d.peer_lossy_link(L1, flagged);
    d.heartbeat(L1, ms(at), L1, 0, p);
    d
}

/// L0 streams data every ms over `ts`, while L1 brings the peer's HB_LOSSY
/// heartbeats at the times `probe` picks; the first time L1 failed.
fn peer_probes_beside_data(
    d: &mut Detector,
    ts: std::ops::Range<u64>,
    probe: impl Fn(u64) -> bool,
    p: &Params,
) -> Option<u64> {
    let mut failed_at = None;
    for t in ts {
        if probe(t) {
            d.peer_lossy_link(L1, true);
            d.heartbeat(L1, ms(t), L1, 0, p);
        }
        if d.data(L0, ms(t), p).failed & (1 << L1) != 0 && failed_at.is_none() {
            failed_at = Some(t);
        }
    }
    failed_at
}

/// Our side of a link the peer has out of use toward us for loss (a cable
/// of ours that loses only what we receive): both links healthy by our own
/// counts, L0 and L1 carrying the peer's data until 999 ms, then the
/// peer's heartbeat on L1 says `HB_LOSSY` (if `flagged`) and its data
/// stays on L0, while L1 brings only its loss probes, `gap` ms apart (as
/// our `probe_shift`, `asked`, asks). Runs to `to` ms, the probes ending
/// at `last`; the first time L1 failed, and the probe rounds begun.
fn probed_by_the_peer(
    flagged: bool,
    asked: u8,
    gap: u64,
    last: u64,
    to: u64,
    p: &Params,
) -> (Option<u64>, u32) {
    let mut d = data_then_peer_lossy(flagged, asked, 999, p);
    let (mut failed_at, mut rounds) = (None, 0);
    for t in 1_000..to {
        if t % gap == 0 && t <= last {
            d.peer_lossy_link(L1, flagged);
            d.heartbeat(L1, ms(t), L1, 0, p);
        }
        if d.data(L0, ms(t), p).failed & (1 << L1) != 0 && failed_at.is_none() {
            failed_at = Some(t);
        }
        if d.probe_due(ms(t), BOTH, p) != 0 {
            rounds += 1;
            // The peer answers on both.
            d.heartbeat(L0, ms(t), L0, 0, p);
            d.peer_lossy_link(L1, flagged);
            d.heartbeat(L1, ms(t), L1, 0, p);
        }
        d.probe_end(ms(t), p);
    }
    (failed_at, rounds)
}

#[test]
fn a_link_the_peer_probes_us_on_seconds_apart_is_neither_failed_nor_probed_between_its_probes() {
    // A node with 4,096 peers behind a cable that loses what it receives:
    // each peer has its link lossy toward us, and we ask each (through
    // the count of such peers) to probe us every 1.28 s. Between its
    // probes the link is silent: unflagged, that silence was judged by
    // SLOW_TOUT, and a probe round every SLOW_TOUT asked about it (each a
    // false failure if its answer was lost); it fails when its probes
    // stop, LOSSY_SILENT_PROBES intervals after SLOW_TOUT.
    use ri2n_core::detector::{node_probe_shift, ProbingPeers};
    let p = lossy_params();
    let asked = node_probe_shift(0, 4096);
    assert_eq!(asked, 8);
    let mut probing = ProbingPeers::default();
    let mut stamps = vec![0u16; 4096];
    for s in stamps.iter_mut() {
        probing.saw(s, ms(1_000));
    }
    assert_eq!(node_probe_shift(0, probing.count(ms(1_000))), asked);
    let gap = 5u64 << asked;
    let (failed, rounds) = probed_by_the_peer(true, asked, gap, 11_520, 12_000, &p);
    assert_eq!((failed, rounds), (None, 0));
    let (failed, _) = probed_by_the_peer(true, asked, gap, 11_520, 40_000, &p);
    let bound = 11_520 + p.slow_tout().as_ms() + LOSSY_SILENT_PROBES * gap;
    assert!(
        failed.is_some_and(|at| at >= bound && at <= bound + 20),
        "failed at {failed:?}, bound {bound}"
    );
    // Without the flag: what receivers before it did.
    let (failed, rounds) = probed_by_the_peer(false, asked, gap, 11_520, 12_000, &p);
    assert!(
        failed.is_some() || rounds > 50,
        "unflagged: failed {failed:?}, {rounds} rounds"
    );
}

#[test]
fn the_peers_that_probe_us_count_toward_the_shift_we_ask() {
    // Node B's cable loses only what it receives: no link of B's is lossy
    // toward anyone, but 1,024 peers have theirs lossy toward B. Counting
    // only the first (before HB_LOSSY), B asked nothing and each peer
    // probed it every 5 ms: 205,000 probes a second to answer (ri2n-sim).
    use ri2n_core::detector::{
        loss_probe_every, loss_probe_shift, node_probe_shift, ProbingPeers, PROBING_WINDOW_MS,
    };
    assert_eq!(
        node_probe_shift(1024, 0),
        loss_probe_shift(loss_probe_every(1024))
    );
    assert_eq!(
        node_probe_shift(0, 1024),
        loss_probe_shift(loss_probe_every(1024))
    );
    assert_eq!(node_probe_shift(16, 4096), node_probe_shift(4096, 16));
    let w = PROBING_WINDOW_MS;
    let mut probing = ProbingPeers::default();
    let mut stamps = vec![0u16; 1024];
    assert_eq!(probing.count(ms(0)), 0);
    // Each peer's heartbeats, four a window: counted once.
    for k in 0..4 {
        for s in stamps.iter_mut() {
            probing.saw(s, ms(w / 2 + k));
        }
    }
    assert_eq!(probing.count(ms(w / 2 + 10)), 1024);
    // Half of them go on probing; the others are counted for the rest of
    // the window and the next, then no more.
    for s in stamps[..512].iter_mut() {
        probing.saw(s, ms(w + w / 2));
    }
    assert_eq!(probing.count(ms(w + w / 2)), 1024);
    assert_eq!(probing.count(ms(2 * w + 1)), 512);
    for s in stamps[..512].iter_mut() {
        probing.saw(s, ms(2 * w + 2));
    }
    assert_eq!(probing.count(ms(2 * w + 3)), 512);
    // None for two windows: none.
    assert_eq!(probing.count(ms(4 * w + 1)), 0);
    probing.saw(&mut stamps[0], ms(5 * w));
    assert_eq!(probing.count(ms(5 * w)), 1);
}

#[test]
fn a_link_busy_with_data_before_the_peer_took_it_out_for_loss_is_judged_by_its_probes() {
    // As for our own lossy links: the peer's data on L1 until
    // its heartbeat said HB_LOSSY left the link `busy`, judged by
    // SLOW_TOUT, and failed between the peer's probes 1.28 s apart.
    let p = lossy_params();
    let mut d = data_then_peer_lossy(true, 8, 1_000, &p);
    assert_eq!(lossy_beside_data(&mut d, 1_001, 12_000, 1_280, &p), None);
}

#[test]
fn a_falling_shift_still_covers_the_probes_sent_at_the_old_rate() {
    // We asked the peer for probes every 1.28 s on the link it has lossy
    // toward us; most of the peers that probed us healed, and our next
    // heartbeat asks for 5 ms. The peer probes at 1.28 s until it has it:
    // taken at once, the bound fell to 140 ms and failed the link between
    // those probes; one step a heartbeat, it holds.
    let p = lossy_params();
    let mut d = data_then_peer_lossy(true, 8, 1_000, &p);
    let every_1280 = |t: u64| t.is_multiple_of(1_280);
    assert_eq!(
        peer_probes_beside_data(&mut d, 1_001..3_000, every_1280, &p),
        None
    );
    d.asked_probe_shift(0);
    assert_eq!(
        peer_probes_beside_data(&mut d, 3_000..12_000, every_1280, &p),
        None
    );
    // Each heartbeat of ours a step: the peer's probes speed up behind them.
    for _ in 0..8 {
        d.asked_probe_shift(0);
    }
    let failed_at = peer_probes_beside_data(&mut d, 12_000..13_000, |_| false, &p);
    assert!(
        failed_at.is_some(),
        "at 5 ms probes, 1.3 s of silence is a death"
    );
}

#[test]
fn what_we_ask_of_the_peers_probes_does_not_stretch_the_bound_of_our_own_lossy_links() {
    // Thousands of peers probe us (asked shift 9: every 2.56 s), but this
    // peer's link L1 is lossy in our direction, probed by us every 5 ms:
    // the answers come that often, and their stop is a death within
    // SLOW_TOUT + 8 x 5 ms, not 20 s (review of the HB_LOSSY change).
    let p = lossy_params();
    let mut d = l1_lossy(&p);
    d.asked_probe_shift(9);
    for t in 1_000..2_000u64 {
        if t % 5 == 0 {
            d.heartbeat(L1, ms(t), L1, 0, &p);
        }
        assert_eq!(d.data(L0, ms(t), &p).failed, 0, "at {t} ms");
    }
    let bound = 1_995 + p.slow_tout().as_ms() + LOSSY_SILENT_PROBES * 5;
    let at = (2_000..3_000)
        .find(|&t| d.data(L0, ms(t), &p).failed & (1 << L1) != 0)
        .expect("fails");
    assert!(
        at >= bound && at <= bound + 20,
        "failed at {at} ms, bound {bound}"
    );
}

#[test]
fn a_link_the_peer_fell_back_to_is_judged_by_its_probes_once_its_data_left() {
    // The peer has L1 lossy toward us (HB_LOSSY), but sent its data there
    // while nothing better was left; then L0 came back and its data with
    // it. Its next HB_LOSSY heartbeat on L1 ends L1's `busy` (cleared only
    // when the flag first came, it stayed set, and L1 failed between the
    // peer's probes 1.28 s apart: review of the HB_LOSSY change).
    let p = lossy_params();
    let mut d = Detector::new(2, ms(0));
    d.asked_probe_shift(8);
    d.peer_lossy_link(L1, true);
    d.heartbeat(L1, ms(0), L1, 0, &p);
    for t in 1..1_000u64 {
        d.data(L1, ms(t), &p);
        if t % 100 == 0 {
            d.heartbeat(L0, ms(t), L0, 0, &p);
        }
    }
    // Its probe on L1 right after its last data there, then every 1.28 s.
    let probe = |t: u64| t == 1_000 || t.is_multiple_of(1_280);
    assert_eq!(
        peer_probes_beside_data(&mut d, 1_000..12_000, probe, &p),
        None
    );
}

#[test]
fn a_restarted_peer_tells_its_links_loss_afresh() {
    // A link the peer had lossy toward us before it restarted is no
    // sparse link of its new incarnation until its heartbeats say so: a
    // stale bit kept a dead link out of probe rounds and judged it by the
    // sparse bound (review of the HB_LOSSY change).
    let p = lossy_params();
    let mut d = Detector::new(2, ms(0));
    d.peer_lossy_link(L1, true);
    d.heartbeat(L1, ms(1), L1, 0, &p);
    assert_eq!(d.peer_lossy(), 1 << L1);
    d.renumbered();
    assert_eq!(d.peer_lossy(), 0);
}

/// A sends `n` frames on each link and a heartbeat with its counts after
/// them; B receives all of them, `late` of those on `L1` after the window
/// gave their numbers up, and answers with a heartbeat on each link.
/// Returns what A's measurement of B's echoes brought.
fn exchange(
    a: &mut Detector,
    b: &mut Detector,
    n: u32,
    late: u32,
    t: u64,
    p: &Params,
) -> Transitions {
    let mut tr = Transitions::default();
    for link in [L0, L1] {
        a.sent_n(link, n);
        b.data_run(link, n, ms(t), p);
        if link == L1 {
            b.late(link, late);
        }
        let counts = a.counts(link).unwrap();
        a.sent(link);
        b.report(link, counts, ms(t), p);
        b.heartbeat(link, ms(t), link, 0, p);
        let echo = b.counts(link).unwrap();
        b.sent(link);
        let r = a.report(link, echo, ms(t), p);
        a.heartbeat(link, ms(t), link, 0, p);
        tr.lossy |= r.lossy;
        tr.lossless |= r.lossless;
    }
    tr
}

#[test]
fn frames_that_come_too_late_count_as_lost_to_their_sender() {
    // A link whose frames all arrive, a third of them after the window
    // gave their numbers up (a switch port others fill): to TCP they are
    // lost, and the sender takes the link out of use as a lossy one.
    let p = lossy_params();
    let (mut a, mut b) = (Detector::new(2, ms(0)), Detector::new(2, ms(0)));
    for t in 0..3 {
        assert!(exchange(&mut a, &mut b, 300, 0, 10 + t, &p).is_empty());
    }
    assert_eq!((a.endpoints[L0].loss_bp, a.endpoints[L1].loss_bp), (0, 0));
    let mut out = None;
    for t in 0..10 {
        let tr = exchange(&mut a, &mut b, 300, 100, 100 + t * 100, &p);
        assert_eq!(tr.lossy & (1 << L0), 0, "the link on time stays");
        if tr.lossy & (1 << L1) != 0 {
            out = Some(t);
            break;
        }
    }
    assert_eq!(
        out,
        Some(ri2n_core::detector::LOSS_STRIKES as u64 - 1),
        "out at the third sample"
    );
    assert!(
        a.endpoints[L1].loss_bp > 2500,
        "{} bp",
        a.endpoints[L1].loss_bp
    );
    // Everything was received: the receiver's own counts say so.
    assert_eq!(b.endpoints[L1].rx_packets, b.endpoints[L0].rx_packets);
    // On time again (its probes, here 20 a round): back after a clean run.
    let mut back = None;
    for t in 0..60 {
        if exchange(&mut a, &mut b, 20, 0, 2000 + t * 100, &p).lossless & (1 << L1) != 0 {
            back = Some(t);
            break;
        }
    }
    assert!(back.is_some(), "back in use");
}
