//! The sweep at its next deadline (ri2n_hb.rs): a peer's
//! `next_due` says when the sweep must next visit it, so the sweep runs at
//! those deadlines, not every FAST_TOUT / 4. Checked against an oracle that
//! asks the detector and the window, every 100 µs, whether anything is due.

use proptest::prelude::*;
use ri2n_core::detector::{loss_probe_every, Detector, LOSS_STRIKES};
use ri2n_core::header::Counts;
use ri2n_core::heap::{Buf, HeapBufs};
use ri2n_core::params::Params;
use ri2n_core::peers::Peer;
use ri2n_core::seq::Seq;
use ri2n_core::time::{Duration, Instant};

const US: u64 = 1_000;
const MS: u64 = 1_000_000;
const BOTH: u8 = 0b11;
/// What the driver caps the sweep's wait at (ri2n_state.rs, `SWEEP_MAX`).
const SWEEP_MAX: Duration = Duration(63 * MS);

fn period(p: &Params) -> Duration {
    Duration((p.fast_tout().0 / 4).max(MS))
}

/// Whether the sweep has work for `d` and a window whose deadline is
/// `window_due` at `t`: the calls `SweepCx::visit` makes, on a copy.
fn due_at(d: &Detector, window_due: Option<Instant>, t: Instant, p: &Params) -> bool {
    let mut c = d.clone();
    let every = loss_probe_every(0);
    // A round that ends acts even if it fails nothing.
    let round = c.probing();
    c.probe_due(t, BOTH, p) != 0
        || c.retry_due(t, BOTH, p) != 0
        || c.report_due_every(t, BOTH, p, every) != 0
        || !c.probe_end(t, p).is_empty()
        || (round && !c.probing())
        || window_due.is_some_and(|w| w <= t)
}

/// One node's view of one peer over two links, swept the driver's way.
struct Node {
    peer: Peer<u32, Buf<u32>>,
    bufs: HeapBufs<u32>,
    p: Params,
    /// When the sweep timer fires next.
    sweep_at: Instant,
    sweeps: u32,
    /// Links asked for an answer (a probe or a report) and when it arrives.
    answers: Vec<(usize, Instant)>,
    /// What the peer received from us per link, and sent us.
    peer_got: [u32; 2],
    peer_sent: [u32; 2],
    /// Frames sent per link that the detector has not counted yet: the
    /// driver counts them under the peer's transmit lock and folds them in
    /// at the next receive from the peer or the next sweep.
    unfolded: [u32; 2],
    /// Links whose frames are lost both ways.
    dead: u8,
    /// When the first probe round started, and when a link failed.
    rounds: Vec<Instant>,
    failed_at: Option<Instant>,
    up: Vec<u32>,
}

impl Node {
    fn new(p: Params) -> Node {
        let peer = Peer::<u32, Buf<u32>> {
            det: Detector::new(2, Instant(0)),
            ..Default::default()
        };
        Node {
            peer,
            bufs: HeapBufs::default(),
            p,
            sweep_at: Instant(period(&p).0),
            sweeps: 0,
            answers: Vec::new(),
            peer_got: [0; 2],
            peer_sent: [0; 2],
            unfolded: [0; 2],
            dead: 0,
            rounds: Vec::new(),
            failed_at: None,
            up: Vec::new(),
        }
    }

    /// After an event at `t`: the driver's pull (ri2n_state.rs, `rx_frame`).
    fn pull(&mut self, t: Instant) {
        if let Some(due) = self.peer.next_due(t, BOTH, &self.p, loss_probe_every(0)) {
            let at = due.max(t.plus(period(&self.p)));
            if at < self.sweep_at {
                self.sweep_at = at;
            }
        }
    }

    /// We send `n` frames on `link`.
    fn send(&mut self, link: usize, n: u32) {
        self.unfolded[link] += n;
        if self.dead & (1 << link) == 0 {
            self.peer_got[link] += n;
        }
    }

    /// What was sent reaches the detector (`PeerTx::fold`).
    fn fold(&mut self) {
        for l in 0..2 {
            self.peer
                .det
                .sent_n(l, core::mem::take(&mut self.unfolded[l]));
        }
    }

    /// Data `seq` from the peer arrives on `link` at `t`.
    fn data(&mut self, link: usize, seq: u32, t: Instant) {
        self.peer_sent[link] += 1;
        if self.dead & (1 << link) != 0 {
            return;
        }
        self.fold();
        let p = self.p;
        let tr = self.peer.det.data(link, t, &p);
        self.failed_at = self.failed_at.or((tr.failed != 0).then_some(t));
        let active = self.peer.det.active();
        let up = &mut self.up;
        let dup = self.peer.rx.data(
            link,
            Seq(seq),
            seq,
            t,
            active,
            &p,
            &mut self.bufs,
            &mut |x| up.push(x),
        );
        assert!(dup.is_none());
        self.pull(t);
    }

    /// The peer's heartbeat on `link` at `t`, answering or periodic.
    fn heartbeat(&mut self, link: usize, t: Instant) {
        self.peer_sent[link] += 1;
        if self.dead & (1 << link) != 0 {
            return;
        }
        self.fold();
        let p = self.p;
        // It echoes everything we sent before (no loss on a live link).
        let echo = self.peer.det.counts(link).unwrap();
        let counts = Counts {
            tx: self.peer_sent[link],
            echo_tx: echo.tx,
            echo_rx: self.peer_got[link],
        };
        self.peer.det.report(link, counts, t, &p);
        self.peer.det.heartbeat(link, t, link, 0, &p);
        self.pull(t);
    }

    /// The sweep's visit at `t` (ri2n_state.rs, `SweepCx::visit`), then its
    /// re-arm at the peer's next deadline.
    fn sweep(&mut self, t: Instant) {
        let p = self.p;
        self.sweeps += 1;
        self.fold();
        let every = loss_probe_every(0);
        let was_probing = self.peer.det.probing();
        let ask = self.peer.det.probe_due(t, BOTH, &p)
            | self.peer.det.retry_due(t, BOTH, &p)
            | self.peer.det.report_due_every(t, BOTH, &p, every);
        if !was_probing && self.peer.det.probing() {
            self.rounds.push(t);
        }
        let tr = self.peer.det.probe_end(t, &p);
        self.failed_at = self.failed_at.or((tr.failed != 0).then_some(t));
        for l in 0..2 {
            if ask & (1 << l) != 0 {
                // Our probe goes out; the answer comes a millisecond later.
                self.send(l, 1);
                self.fold();
                if self.dead & (1 << l) == 0 {
                    self.answers.push((l, t.plus(Duration(MS))));
                }
            }
        }
        let active = self.peer.det.active();
        let up = &mut self.up;
        self.peer
            .rx
            .sweep(t, active, &p, &mut self.bufs, &mut |x| up.push(x));
        let next = self
            .peer
            .next_due(t, BOTH, &p, every)
            .map_or(t.plus(SWEEP_MAX), |d| d.min(t.plus(SWEEP_MAX)));
        self.sweep_at = next.max(t.plus(period(&p)));
        assert!(
            !due_at(
                &self.peer.det,
                self.peer.rx.window.deadline(t, p.fast_tout()),
                t,
                &p
            ),
            "work left at {} µs",
            t.0 / US
        );
    }
}

/// A tiny deterministic generator (no dependency, same run every time).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u32 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) as u32
    }
}

/// Ping-pong with the peer for `until`: every 2 ms a message of 1-3 frames
/// out and its answer of 1-3 frames back 1 ms later, links by turns; now
/// and then the answer's frames cross (a window holds one) or one is lost
/// (FAST_TOUT releases what waits behind it). The peer heartbeats on each
/// link every HBSPAN, and answers our probes and reports. Every 100 µs the
/// oracle asks whether anything is due; the sweep must come within a period
/// of it (today's periodic sweep's bound) and leave nothing due.
fn ping_pong(node: &mut Node, from: u64, until: u64, rng: &mut Lcg, cut: Option<(u64, u64)>) {
    let p = node.p;
    let tick = 100 * US;
    let mut seq = node.peer.rx.window.next_expected().0.max(1);
    let mut due_since: Option<Instant> = None;
    let mut link = 0;
    let mut t = from;
    while t < until {
        let now = Instant(t);
        if let Some((a, b)) = cut {
            node.dead = if (a..b).contains(&t) { 0b10 } else { 0 };
        }
        // The peer's answers to our probes and reports.
        let (ready, wait): (Vec<_>, Vec<_>) = node.answers.iter().partition(|&&(_, at)| at <= now);
        node.answers = wait;
        for (l, _) in ready {
            node.heartbeat(l, now);
        }
        if t.is_multiple_of(p.hbspan().0) {
            node.heartbeat(0, now);
            node.heartbeat(1, now);
        }
        if t.is_multiple_of(2 * MS) {
            node.send(link, 1 + rng.next() % 3);
        }
        if t % (2 * MS) == MS {
            let n = 1 + rng.next() % 3;
            let what = rng.next() % 100;
            let mut seqs: Vec<u32> = (seq..seq + n).collect();
            seq += n;
            if what < 3 && n > 1 {
                seqs.swap(0, 1);
            } else if what < 5 && n > 1 {
                seqs.remove(0);
            }
            for s in seqs {
                node.data(link, s, now);
            }
            link ^= 1;
        }
        if node.sweep_at <= now {
            if let Some(d) = due_since {
                assert!(
                    now.since(d) <= period(&p),
                    "due at {} µs, swept at {} µs",
                    d.0 / US,
                    t / US
                );
            }
            node.sweep(now);
            due_since = None;
        } else if due_at(
            &node.peer.det,
            node.peer.rx.window.deadline(now, p.fast_tout()),
            now,
            &p,
        ) {
            due_since.get_or_insert(now);
        } else {
            due_since = None;
        }
        t += tick;
    }
}

#[test]
fn ping_pong_needs_the_sweep_a_tenth_as_often_and_nothing_waits_longer() {
    let p = Params::default();
    let mut node = Node::new(p);
    let mut rng = Lcg(1);
    ping_pong(&mut node, 0, 1000 * MS, &mut rng, None);
    // The periodic sweep ran 1000 ms / 5 ms = 200 times a second.
    eprintln!(
        "{} sweeps in a second of ping-pong, {} packets up",
        node.sweeps,
        node.up.len()
    );
    assert!(
        node.sweeps <= 25,
        "{} sweeps in a second of ping-pong",
        node.sweeps
    );
    assert!(node.up.len() > 700, "{} packets up", node.up.len());
    assert!(
        node.rounds.is_empty() && node.failed_at.is_none(),
        "a healthy link probed or failed"
    );
}

#[test]
fn a_link_that_falls_silent_is_probed_at_slow_tout_and_failed_a_round_later() {
    let p = Params::default();
    let mut node = Node::new(p);
    let mut rng = Lcg(7);
    // L1 dead from 600 ms to 1200 ms (both ways), then healed.
    ping_pong(
        &mut node,
        0,
        2000 * MS,
        &mut rng,
        Some((600 * MS, 1200 * MS)),
    );
    let last_rx = 600 * MS;
    let first = node.rounds.first().expect("no probe round");
    // Its last frame came just before 600 ms: silent for SLOW_TOUT at 700.
    let silent = last_rx + p.slow_tout().0;
    assert!(
        first.0 >= silent - 3 * MS && first.0 <= silent + period(&p).0,
        "round at {} ms",
        first.0 / MS
    );
    let failed = node.failed_at.expect("never failed").0;
    assert!(
        failed <= first.0 + p.fast_tout().0 + period(&p).0,
        "failed at {} ms",
        failed / MS
    );
    // Back by a retry within HBSPAN / 8 of the heal (and its answer).
    assert!(!node.peer.det.endpoints[1].failed, "L1 still failed at 2 s");
    eprintln!(
        "{} sweeps in 2 s, round at {:?} failed at {:?}",
        node.sweeps, node.rounds, node.failed_at
    );
    assert!(
        node.sweeps < 2 * 60,
        "{} sweeps in 2 s with a failure",
        node.sweeps
    );
}

proptest! {
    /// `next_due` is exact for the detector: nothing is due before it,
    /// and something is at it, whatever events led there: data, reports
    /// clean and lossy (links taken out for loss), the peer reporting a
    /// link down, frames sent, sweeps; over any links up.
    #[test]
    fn the_detector_has_nothing_due_before_its_next_due(
        events in proptest::collection::vec((0u8..10, 0usize..2, 0u64..150), 1..80),
        loss_thresh in prop_oneof![Just(0u32), Just(5u32)],
        up in 1u8..4,
        // Loss probes every few ms, or (over 320 peers with a lossy link)
        // slower than SLOW_TOUT: then a lossy link's own report is not due
        // first and hides nothing of the witness term (`Detector::round`).
        lossy_ms in prop_oneof![5u64..12, 100u64..2000],
        // The peer's `probe_shift`: its lossy links probed no more often
        // than LOSS_PROBE_MS << shift, whatever `every` says.
        peer_shift in prop_oneof![Just(0u8), 0u8..10],
    ) {
        let what = format!("{events:?} up {up:#b} peer_shift {peer_shift}");
        let mut p = Params::default();
        p.set(ri2n_core::params::Param::LossThresh, loss_thresh).unwrap();
        let every = Duration(lossy_ms * MS);
        let mut d = Detector::new(2, Instant(0));
        d.peer_probe_shift(peer_shift);
        let mut t = 0u64;
        let (mut got, mut sent) = ([0u32; 2], [0u32; 2]);
        for (kind, l, gap) in events {
            t += gap * MS;
            let now = Instant(t);
            // The peer's heartbeat on `l` echoing what it got, saying `down`.
            let report = |d: &mut Detector, l: usize, got: &[u32; 2], sent: &mut [u32; 2], down: u8| {
                let c = d.counts(l).unwrap();
                d.sent(l);
                sent[l] += 1;
                d.report(l, Counts { tx: sent[l], echo_tx: c.tx, echo_rx: got[l] }, now, &p);
                d.heartbeat(l, now, l, down, &p);
            };
            match kind {
                0 => { d.data(l, now, &p); }
                1 => report(&mut d, l, &got, &mut sent, 0),
                2 => for _ in 0..300 { d.sent(l); got[l] += 1; },
                3 => for _ in 0..40 { d.sent(l); got[l] += 1; },
                4 => {
                    // 300 frames, a fifth lost, and the report on them.
                    for i in 0..300 { d.sent(l); got[l] += (i % 5 != 0) as u32; }
                    report(&mut d, l, &got, &mut sent, 0);
                }
                5 => report(&mut d, l, &got, &mut sent, 1 << (1 - l)),
                6 => {
                    // Samples until `l` is out for loss beside a clean
                    // other link (rare from the events above alone).
                    let o = 1 - l;
                    for _ in 0..=LOSS_STRIKES {
                        for _ in 0..300 { d.sent(o); got[o] += 1; }
                        report(&mut d, o, &got, &mut sent, 0);
                        for i in 0..300 { d.sent(l); got[l] += (i % 5 != 0) as u32; }
                        report(&mut d, l, &got, &mut sent, 0);
                    }
                    // Data on the other, then the answer to a loss probe
                    // on `l` (a lossy link may witness a round).
                    d.data(o, now, &p);
                    t += gap % 100 * MS;
                    d.heartbeat(l, Instant(t), l, 0, &p);
                }
                _ => {
                    // A sweep's visit.
                    d.probe_due(now, up, &p);
                    d.retry_due(now, up, &p);
                    d.report_due_every(now, up, &p, every);
                    d.probe_end(now, &p);
                }
            }
        }
        let now = Instant(t);
        let due_at = |d: &Detector, k: Instant| {
            let mut c = d.clone();
            let round = c.probing();
            c.probe_due(k, up, &p) != 0
                || c.retry_due(k, up, &p) != 0
                || c.report_due_every(k, up, &p, every) != 0
                || !c.probe_end(k, &p).is_empty()
                || (round && !c.probing())
        };
        let Some(due) = d.next_due(now, up, &p, every) else {
            // Nothing ever: not within the next 10 s either.
            for k in 0..10_000 {
                prop_assert!(!due_at(&d, now.plus(Duration(k * MS))), "due at +{k} ms, next_due none: {what}");
            }
            return Ok(());
        };
        let mut k = now;
        while k < due {
            prop_assert!(!due_at(&d, k), "due at {} µs before next_due {} µs: {}", k.0 / US, due.0 / US, what);
            k = k.plus(Duration(100 * US));
        }
        prop_assert!(due_at(&d, due.max(now)), "nothing due at next_due {} µs: {}", due.0 / US, what);
    }
}
