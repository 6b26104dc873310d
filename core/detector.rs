// SPDX-License-Identifier: GPL-2.0

//! Failure and recovery detection per endpoint (driver paper §4.4, §5.7).
//!
//! An endpoint is one (peer, link) pair. Each counts what it receives. When
//! any counter of a peer exceeds FT_HTHRESH, the peer is judged: every
//! endpoint whose counter is at most FT_LTHRESH *and* that has received
//! nothing for SLOW_TOUT (a low-pass filter against the bursts NIC buffering
//! causes) is failed; then all counters start again.
//!
//! Heartbeats go every HBSPAN on every endpoint, failed ones included. One
//! received on a failed endpoint recovers it; on a healthy one it adds
//! HBWEIGHT to the counter, so an idle or stalled peer still reaches
//! FT_HTHRESH and a dead link is found. The verdict compares the links'
//! counts, so only the heartbeats that come at that rate, alike on every
//! link, weigh: at most one per 3/4 HBSPAN on an endpoint, and none that
//! the peer sends on a link it cannot use (`heartbeat::retry`). What else comes
//! faster on one link than on the others (loss probes every
//! [`LOSS_PROBE_MS`] and their answers, the news of a change) judged an
//! idle peer's other links every few probes, and failed a healthy one
//! whose last heartbeat was over SLOW_TOUT old (ri2n_lossy and ri2n_oneway
//! left idle). Without them the counters are slow to find the last usable
//! link beside lossy ones dead (within about 6 HBSPAN: 6-11 s measured);
//! a probe round that the lossy links witness finds it ([`probe`]).
//!
//! When a whole node stops for a while (a descheduled vCPU, a softirq held
//! off), on either side, every link falls silent at once, then the frames
//! queued meanwhile come one link's after the other's: the first link's
//! pushed a counter past FT_HTHRESH while the second's still waited, and
//! failed a healthy link (ri2n_stall). So after a gap
//! of [`Params::run_gap`] on every link, a link that delivered until
//! SLOW_TOUT / 2 before the gap (a healthy link's longest silence,
//! [`Params::level_after`]) is held: the counters do not judge it for
//! SLOW_TOUT after the gap, its silence may be the stop's. A probe round
//! judges it instead, with the peer's answers (a held link out of probes,
//! lossy or without carrier, waits for the hold to end). A second gap
//! within the hold (the node resumed, took one link's queue and stopped
//! again) keeps the links it held for SLOW_TOUT from it, once: traffic
//! with gaps (a ping every 50 ms) must not keep a dead link held. A link
//! silent
//! for longer before the gap (a cut cable, then TCP paused in recovery)
//! is judged at once. Where a node's NICs are served by different CPUs,
//! one stopped CPU silences only some links: no gap, no hold.
//!
//! What each heartbeat tells of the peer's links is taken in
//! [`heartbeat`]; probe rounds, which find a dead link the counters miss,
//! run in [`probe`]; loss is measured, and a lossy link taken out of use
//! and back, in [`loss`].

use super::header::{Counts, MAX_PROBE_SHIFT};
use super::params::Params;
use super::seq::Seq;
use super::time::{Duration, Instant};
use super::MAX_LINKS;

mod heartbeat;
mod loss;
mod probe;

pub use loss::{loss_probe_every, node_probe_shift, ProbingPeers};
// What the userspace crate's tests and simulator name here; the module
// itself uses none of them.
#[allow(unused_imports)]
pub use {
    heartbeat::HB_REORDER,
    loss::{
        loss_probe_shift, lossy_margin, LOSSY_SILENT_PROBES, LOSS_CLEAN_BACK, LOSS_FRESH_MS,
        LOSS_PROBE_MS, LOSS_PROBE_PEERS, LOSS_SAMPLE, LOSS_SAMPLE_BACK, LOSS_SAMPLE_MIN,
        LOSS_SAMPLE_MS, LOSS_STRIKES, PROBING_WINDOW_MS, REPORT_MS,
    },
};

/// `now` in ms, wrapping at 32 bits (49 days).
fn ms(now: Instant) -> u32 {
    now.ms32()
}

/// One (peer, link) endpoint.
#[derive(Clone, Copy, Default, Debug)]
pub struct Endpoint {
    /// Packets (and weighted heartbeats) since the last judgement.
    pub counter: u32,
    /// When anything last arrived on it (or when the peer became known).
    pub last_rx: Instant,
    /// Failed by our own judgement: nothing arrives from the peer on it.
    pub failed: bool,
    /// The peer says our frames on this link do not reach it.
    pub peer_failed: bool,
    /// Transitions into `failed`.
    pub fails: u32,
    /// Transitions out of `failed`.
    pub recoveries: u32,
    /// Data packets received.
    pub rx_packets: u64,
    /// Broadcasts received (sent to every peer: not in the counts).
    pub rx_bcast: u64,
    /// Heartbeats received.
    pub rx_heartbeats: u64,
    /// Of the frames received, those that came too late to count
    /// ([`Detector::late`]), wrapping.
    pub rx_late: u32,
    /// When the endpoint last went out of use or back into it: failing
    /// while the peer still reported it up, say, changes the state but not
    /// this (procfs' `changed_ms`, failover timing).
    pub changed: Instant,
    /// Out of use because it loses too many of our frames.
    pub lossy: bool,
    /// Transitions into `lossy`.
    pub lossy_count: u32,
    /// Frames we sent the peer on it (data and heartbeats), wrapping.
    pub tx_frames: u32,
    /// Our loss toward the peer on it, in basis points (at most 10,000):
    /// the mean of the last sample and the one before.
    pub loss_bp: u16,
    /// The last echo the peer sent us (our count and its).
    echo_tx: u32,
    echo_rx: u32,
    echoed: bool,
    /// The peer's `tx` in its last heartbeat here, and our received count
    /// then: what our heartbeats echo.
    heard_tx: u32,
    heard_rx: u32,
    heard: bool,
    /// Frames sent and lost since the last sample.
    acc_sent: u32,
    acc_lost: u32,
    /// When a report or a loss probe was last asked for.
    asked: Instant,
    /// When `loss_bp` last took a sample, if it ever did.
    sampled: Instant,
    measured: bool,
    /// Samples in a row above the margin.
    strikes: u8,
    /// `tx_frames` when the endpoint last came back from a failure: older
    /// echoes span the time it was dead (while `floor_pending`).
    floor: u32,
    floor_pending: bool,
    /// While lossy: frames delivered in a row since the last one lost (up
    /// to [`LOSS_CLEAN_BACK`] is all that matters).
    clean_run: u16,
}

impl Endpoint {
    /// Whether data may be sent to the peer on this endpoint.
    pub fn usable(&self) -> bool {
        !self.failed && !self.peer_failed && !self.lossy
    }

    /// Out of use for loss only: it still carries what nothing better can,
    /// and witnesses probe rounds.
    pub fn lossy_only(&self) -> bool {
        self.lossy && !self.failed && !self.peer_failed
    }

    /// Sets both failure flags; notes `now` in `changed` if that takes the
    /// endpoint out of use or back into it.
    fn set(&mut self, failed: bool, peer_failed: bool, now: Instant) {
        let was = self.usable();
        if (self.failed || self.peer_failed) && !(failed || peer_failed) {
            // Alive again: what the link lost while dead says nothing of
            // its error rate. Loss is measured again from the first echo
            // of a heartbeat sent from now on.
            self.floor = self.tx_frames;
            self.floor_pending = true;
        }
        self.failed = failed;
        self.peer_failed = peer_failed;
        if self.usable() != was {
            self.changed = now;
        }
    }

    /// Sets `lossy`, as [`Endpoint::set`] does the failure flags.
    fn set_lossy(&mut self, lossy: bool, now: Instant) {
        let was = self.usable();
        self.lossy = lossy;
        if self.usable() != was {
            self.changed = now;
        }
    }

    /// Frames received from the peer on it in time, data and heartbeats
    /// (what our echoes say).
    pub fn rx_frames(&self) -> u32 {
        (self.rx_packets.wrapping_add(self.rx_heartbeats) as u32).wrapping_sub(self.rx_late)
    }
}

/// State changes of one event, as link bitmasks, for the driver to log and
/// act on (send a heartbeat telling the peer, or probe).
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub struct Transitions {
    /// Links that became failed.
    pub failed: u8,
    /// Links that recovered.
    pub recovered: u8,
    /// Links the peer newly reports as failed.
    pub peer_failed: u8,
    /// Links the peer no longer reports as failed.
    pub peer_recovered: u8,
    /// Links that went out of use for loss.
    pub lossy: u8,
    /// Links back in use, their loss low again.
    pub lossless: u8,
}

impl Transitions {
    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        *self == Transitions::default()
    }
}

/// The endpoints of one peer.
///
/// All-zero bytes are a valid detector over no links; [`Detector::start`]
/// makes it one over the device's links.
#[derive(Clone, Debug, Default)]
pub struct Detector {
    /// Indexed by link.
    pub endpoints: [Endpoint; MAX_LINKS],
    /// Links in use (at most `MAX_LINKS`): a byte, so that the struct keeps
    /// its size (`PEER_BYTES`).
    nlinks: u8,
    /// Our link for each of the peer's links, + 1 (0: not yet learned).
    peer_link: [u8; MAX_LINKS],
    /// Links asked for a heartbeat in the current probe round (0: none).
    probing: u8,
    /// Links of the current round on which an answer came: a heartbeat
    /// whose sender had heard one of ours sent since the round began.
    answered: u8,
    /// When the round's first answer came, in µs after the round began.
    answer_us: u32,
    /// Each link's `tx_frames` when the current round began: a heartbeat
    /// that echoes a `tx` this far or further is an answer
    /// ([`Detector::heartbeat_echoed`]).
    probe_tx: [u32; MAX_LINKS],
    /// When the current or last probe round started.
    probed: Instant,
    /// When failed links were last probed for recovery.
    retried: Instant,
    /// Our links the peer's last heartbeat said were down.
    down_seen: u8,
    /// When `hb_next` was taken, in ms, wrapping at 32 bits (49 days); 0:
    /// no number held (a time of 0 is kept as 1).
    hb_taken_ms: u32,
    /// The number the newest heartbeat taken carried
    /// ([`Detector::heartbeat_numbered`]).
    hb_next: Seq,
    /// When the current run of arrivals from the peer began, in ms,
    /// wrapping ([`Detector::arrived`]); kept at most SLOW_TOUT old.
    run_ms: u32,
    /// The links that delivered until SLOW_TOUT / 2 before the gap that
    /// began the current run, and those a gap within the last hold kept;
    /// cleared SLOW_TOUT into the run. Their silence may be a stop's.
    held: u8,
    /// Whether the current hold was kept across a second gap: it is kept
    /// once, so that traffic with gaps (a ping every 50 ms) cannot keep a
    /// dead link held from one run to the next.
    held_again: bool,
    /// The links whose heartbeat weighed HBWEIGHT in the window that began
    /// at `weigh_ms` (ms, wrapping), 3/4 HBSPAN long: one each at most.
    weighed: u8,
    weigh_ms: u32,
    /// Links on which data arrived since they last answered a probe round:
    /// one busy until it fell silent, not an idle one, may be probed with
    /// lossy links as witnesses ([`Detector::probe_due`]).
    busy: u8,
    /// Whether the current or last round asked witnesses
    /// ([`Detector::round_length`]): as it began, whatever their state
    /// since (an answer's report may bring one back into use).
    witnessed: bool,
    /// The peer's wish, from its last heartbeat: our loss probes on links
    /// lossy toward it at most every `LOSS_PROBE_MS << peer_shift`.
    peer_shift: u8,
    /// Two shifts of ours, a nibble each (at most [`MAX_PROBE_SHIFT`]), so
    /// that the peer keeps its size: low, as the sweep last gave it
    /// (`report_due_every`), how often we probe the links lossy toward the
    /// peer; high, what our last heartbeat to the peer asked of it (its
    /// `probe_shift`, [`Detector::asked_probe_shift`]), how often it
    /// probes its links lossy toward us.
    own_shifts: u8,
    /// Links the peer has out of use toward us for loss (`HB_LOSSY` on its
    /// last heartbeat on each): they bring the peer's loss probes and
    /// heartbeats, not its data, and the peer probes us on them (counted
    /// toward the `probe_shift` we ask, [`ProbingPeers`]). A mask, not an
    /// endpoint's field: a bool there grew each by 8 bytes, the peer by 64.
    peer_lossy: u8,
}

impl Detector {
    /// Endpoints over `nlinks` links for a peer first heard of at `now`;
    /// SLOW_TOUT counts from then, so a link is not failed before it could
    /// have delivered anything.
    pub fn new(nlinks: usize, now: Instant) -> Detector {
        let mut endpoints = [Endpoint::default(); MAX_LINKS];
        for e in endpoints.iter_mut() {
            e.last_rx = now;
        }
        Detector {
            endpoints,
            nlinks: nlinks.min(MAX_LINKS) as u8,
            peer_link: [0; MAX_LINKS],
            probing: 0,
            answered: 0,
            answer_us: 0,
            probe_tx: [0; MAX_LINKS],
            probed: Instant(0),
            retried: Instant(0),
            down_seen: 0,
            hb_taken_ms: 0,
            hb_next: Seq(0),
            run_ms: ms(now),
            held: 0,
            held_again: false,
            weighed: 0,
            weigh_ms: ms(now),
            busy: 0,
            witnessed: false,
            peer_shift: 0,
            own_shifts: 0,
            peer_lossy: 0,
        }
    }

    /// Whether the peer's heartbeat numbered `next` was taken as its
    /// newest ([`Detector::heartbeat_echoed`]): only such a one's
    /// `probe_shift` counts, as only its down bits do.
    pub fn took(&self, next: Seq) -> bool {
        self.hb_next == next
    }

    /// Links in use.
    fn n(&self) -> usize {
        self.nlinks as usize
    }

    /// Resets to `nlinks` fresh endpoints for a peer first heard of at `now`.
    pub fn start(&mut self, nlinks: usize, now: Instant) {
        *self = Detector::new(nlinks, now);
    }

    /// The device's links changed to `nlinks` (a slave was added or
    /// removed): endpoints of links that are new, or were `vacated`, start
    /// afresh at `now`, so a link index reused for another NIC carries
    /// nothing of the old one.
    pub fn set_links(&mut self, nlinks: usize, vacated: u8, now: Instant) {
        let nlinks = nlinks.min(MAX_LINKS);
        for l in 0..MAX_LINKS {
            if l >= self.n() || vacated & (1 << l) != 0 {
                self.endpoints[l] = Endpoint {
                    last_rx: now,
                    changed: now,
                    ..Endpoint::default()
                };
                self.probing &= !(1 << l);
                self.busy &= !(1 << l);
                self.peer_lossy &= !(1 << l);
                for p in self.peer_link.iter_mut() {
                    if *p as usize == l + 1 {
                        *p = 0;
                    }
                }
            }
        }
        self.nlinks = nlinks as u8;
    }

    /// Whether, at `now`, a probe round is due but for the time since the
    /// last (`Detector::round`): a usable link among `up` silent for
    /// SLOW_TOUT (a missing heartbeat, say) while another delivered within
    /// it, or a busy one beside a lossy witness; so the sweep must look.
    pub fn disagree(&self, now: Instant, up: u8, p: &Params) -> bool {
        self.round(now, up, p) != 0
    }

    /// Whether a probe round is open.
    pub fn probing(&self) -> bool {
        self.probing != 0
    }

    /// Whether nothing here needs the sweep: every endpoint usable and no
    /// probe round open.
    pub fn settled(&self) -> bool {
        self.probing == 0 && self.usable() == self.mask(|_| true)
    }

    /// Links usable for data (neither failed nor reported failed by the
    /// peer, nor lossy).
    pub fn usable(&self) -> u8 {
        self.mask(|e| e.usable())
    }

    /// Links the peer sends on, as far as we know, for the loss rule:
    /// neither failed nor reported failed. A link lossy toward the peer
    /// still carries the peer's frames to us; one lossy toward us that the
    /// peer stopped using only holds the rule back to FAST_TOUT, never
    /// makes it give up a frame still on its way.
    pub fn active(&self) -> u8 {
        self.mask(|e| !e.failed && !e.peer_failed)
    }

    /// Links we have failed (part of `Heartbeat::down` in ours).
    pub fn failed(&self) -> u8 {
        self.mask(|e| e.failed)
    }

    /// We sent the peer a frame on `link` (data or heartbeat).
    #[inline]
    pub fn sent(&mut self, link: usize) {
        let e = &mut self.endpoints[link];
        e.tx_frames = e.tx_frames.wrapping_add(1);
    }

    /// We sent the peer `n` frames on `link` (core/tx.rs, `PeerTx::fold`).
    #[inline]
    pub fn sent_n(&mut self, link: usize, n: u32) {
        let e = &mut self.endpoints[link];
        e.tx_frames = e.tx_frames.wrapping_add(n);
    }

    /// A frame counted by [`Detector::sent`] on `link` was dropped before
    /// it left.
    #[inline]
    pub fn unsent(&mut self, link: usize) {
        let e = &mut self.endpoints[link];
        e.tx_frames = e.tx_frames.wrapping_sub(1);
    }

    /// The counts our next heartbeat on `link` carries: frames sent before
    /// it, and the echo of the peer's last. Call [`Detector::sent`] for the
    /// heartbeat after.
    pub fn counts(&self, link: usize) -> Option<Counts> {
        let e = &self.endpoints[link];
        Some(Counts {
            tx: e.tx_frames,
            echo_tx: if e.heard { e.heard_tx } else { 0 },
            echo_rx: if e.heard { e.heard_rx } else { 0 },
        })
    }

    /// Usable links the peer's data comes on (it does not have them out of
    /// use for loss): their silence while another link delivers is a
    /// suspect's.
    fn live(&self) -> u8 {
        self.usable() & !self.peer_lossy
    }

    /// Links out of use for loss at either end, neither failed nor
    /// reported failed: they bring loss probes and their answers, seconds
    /// apart at scale, and witness probe rounds.
    fn sparse(&self) -> u8 {
        (self.lossy() | self.peer_lossy) & self.mask(|e| !e.failed && !e.peer_failed)
    }

    /// Links among `up` to send data on: the usable ones; if none, those
    /// out of use for loss only, since a link that loses frames beats no
    /// link (the better one failed since).
    pub fn sendable(&self, up: u8) -> u8 {
        match self.usable() & up {
            0 => self.lossy_only() & up,
            usable => usable,
        }
    }

    /// Links out of use for loss only (neither failed nor reported failed).
    pub fn lossy_only(&self) -> u8 {
        self.mask(|e| e.lossy_only())
    }

    fn mask(&self, f: impl Fn(&Endpoint) -> bool) -> u8 {
        let mut m = 0;
        for (l, e) in self.endpoints[..self.n()].iter().enumerate() {
            if f(e) {
                m |= 1 << l;
            }
        }
        m
    }

    /// A broadcast from the peer arrived on `link` at `now`: it counts as
    /// traffic for the judgement, not in the frame counts (the peer sent
    /// it to every node).
    pub fn bcast(&mut self, link: usize, now: Instant, p: &Params) -> Transitions {
        self.arrived(now, p);
        let e = &mut self.endpoints[link];
        e.rx_bcast += 1;
        e.counter = e.counter.saturating_add(1);
        e.last_rx = now;
        self.judge(now, p)
    }

    /// A data packet from the peer arrived on `link` at `now`.
    pub fn data(&mut self, link: usize, now: Instant, p: &Params) -> Transitions {
        self.data_run(link, 1, now, p)
    }

    /// `n` data packets arrived at once on `link` at `now` (merged by the
    /// slave's GRO): each counts, as the peer counted each sent.
    pub fn data_run(&mut self, link: usize, n: u32, now: Instant, p: &Params) -> Transitions {
        self.arrived(now, p);
        let e = &mut self.endpoints[link];
        e.rx_packets += u64::from(n);
        e.counter = e.counter.saturating_add(n);
        e.last_rx = now;
        self.busy |= 1 << link;
        self.judge(now, p)
    }

    /// Of the frames counted on `link`, `n` came too late to count: data
    /// whose numbers the window had passed more than FAST_TOUT before
    /// (`PeerRx::late_frames`), a heartbeat that frames sent after it had
    /// overtaken by that much (`PeerRx::lagging`). Our echoes leave
    /// them out, so the peer measures them as its loss on the link (see
    /// the module's doc, "late").
    pub fn late(&mut self, link: usize, n: u32) {
        let e = &mut self.endpoints[link];
        e.rx_late = e.rx_late.wrapping_add(n);
    }

    /// The earliest time from `now` at which [`probe_due`], [`probe_end`],
    /// [`retry_due`] or [`report_due_every`] would act, if nothing arrives
    /// or is counted as sent before it (any of those moves it, so the
    /// caller asks again after each); at or before `now` if one would act
    /// at once. `None`: none of them ever would.
    ///
    /// [`probe_due`]: Detector::probe_due
    /// [`probe_end`]: Detector::probe_end
    /// [`retry_due`]: Detector::retry_due
    /// [`report_due_every`]: Detector::report_due_every
    pub fn next_due(
        &self,
        now: Instant,
        up: u8,
        p: &Params,
        lossy_every: Duration,
    ) -> Option<Instant> {
        // One pass over the endpoints: receive asks on most frames.
        let slow = p.slow_tout();
        let reports = p.loss_thresh_bp() != 0;
        let lossy_every = self.lossy_interval(lossy_every);
        let mut due = Instant(u64::MAX);
        // The live links' silence: from the first one's until the last's.
        let (mut first, mut last) = (Instant(u64::MAX), None::<Instant>);
        // Until when a lossy link may witness (`round`).
        let mut witness = None::<Instant>;
        let mut failed = false;
        // `live` and `sparse` by endpoint, in this one pass (`next_due`
        // runs on most frames: their masks cost 120 instructions a call).
        let mut live_busy = false;
        for (l, e) in self.endpoints[..self.n()].iter().enumerate() {
            let bit = 1u8 << l;
            if up & bit == 0 {
                continue;
            }
            failed |= e.failed;
            let silent_at = e.last_rx.plus(slow);
            let alive = !e.failed && !e.peer_failed;
            let peer_lossy = self.peer_lossy & bit != 0;
            if alive && !e.lossy && !peer_lossy {
                first = first.min(silent_at);
                last = Some(last.map_or(silent_at, |t| t.max(silent_at)));
                live_busy |= self.busy & bit != 0;
            } else if alive {
                witness = Some(witness.map_or(silent_at, |t| t.max(silent_at)));
            }
            if reports && !e.failed && !e.peer_failed {
                let unreported = e.tx_frames.wrapping_sub(e.echo_tx);
                let after = if e.lossy {
                    lossy_every
                } else if unreported >= LOSS_SAMPLE {
                    Duration::from_ms(REPORT_MS)
                } else if unreported >= LOSS_SAMPLE_MIN {
                    Duration::from_ms(REPORT_MS.max(LOSS_SAMPLE_MS))
                } else {
                    continue;
                };
                due = due.min(e.asked.plus(after));
            }
        }
        if self.probing != 0 {
            due = due.min(self.probed.plus(self.round_length(p)));
        } else if let Some(last) = last {
            // A round starts once some live link, not all, has been silent
            // for SLOW_TOUT.
            let t = first.max(self.probed.plus(slow));
            if t < last && now < last {
                due = due.min(t);
            }
            // Or once all are, one busy, while a lossy link witnesses.
            let t = last.max(self.probed.plus(slow));
            if let Some(w) = witness.filter(|_| live_busy) {
                if t < w && now < w {
                    due = due.min(t);
                }
            }
        }
        if failed {
            due = due.min(self.retried.plus(Duration(p.hbspan().0 / 8)));
        }
        (due.0 != u64::MAX).then_some(due)
    }

    /// Whether a heartbeat on `link` at `now` weighs HBWEIGHT: the first on
    /// it in the current window, which the first heartbeat 3/4 HBSPAN or
    /// more after the last window began begins. Heartbeats HBSPAN apart all
    /// weigh; faster ones (loss probes and their answers, the news of a
    /// change) once a window (see the module's doc).
    fn weighs(&mut self, link: usize, now: Instant, p: &Params) -> bool {
        let now_ms = ms(now);
        let window = (p.hbspan().as_ms() * 3 / 4).min(u64::from(u32::MAX)) as u32;
        if now_ms.wrapping_sub(self.weigh_ms) >= window {
            self.weigh_ms = now_ms;
            self.weighed = 0;
        }
        let first = self.weighed & (1 << link) == 0;
        self.weighed |= 1 << link;
        first
    }

    /// Something arrived from the peer at `now` (before its endpoint's
    /// `last_rx` moves). After a gap of [`Params::run_gap`] on every link a
    /// new run of arrivals begins; the links that delivered until SLOW_TOUT
    /// / 2 before the gap are held ([`Detector::judge`]) for SLOW_TOUT, and
    /// a second gap within that keeps them held for SLOW_TOUT from it,
    /// once. Only what arrived counts: a new endpoint's `last_rx` is when
    /// it was made.
    fn arrived(&mut self, now: Instant, p: &Params) {
        let heard = |e: &Endpoint| e.rx_packets | e.rx_heartbeats | e.rx_bcast != 0;
        let last = self.endpoints[..self.n()]
            .iter()
            .filter(|e| heard(e))
            .map(|e| e.last_rx)
            .max();
        let slow_ms = p.slow_tout().as_ms() as u32;
        match last {
            Some(last) if now.since(last) < p.run_gap() => {
                if ms(now).wrapping_sub(self.run_ms) >= slow_ms {
                    // SLOW_TOUT into the run the hold is over; the start is
                    // clamped there, so that the 32-bit difference never
                    // wraps.
                    self.run_ms = ms(now).wrapping_sub(slow_ms);
                    self.held = 0;
                }
            }
            _ => {
                // A second stop within the hold (the node resumed, took one
                // link's queue, and stopped again) keeps what the first
                // held: their silence is still the first stop's.
                let within = ms(now).wrapping_sub(self.run_ms) < slow_ms;
                let kept = if within && !self.held_again {
                    self.held
                } else {
                    0
                };
                self.held_again = kept != 0;
                self.run_ms = ms(now);
                let before = Duration(p.slow_tout().0 / 2);
                self.held = kept
                    | last.map_or(0, |last| {
                        self.mask(|e| heard(e) && last.since(e.last_rx) < before)
                    });
            }
        }
    }

    /// The judgement (§4.4): runs when a counter exceeds FT_HTHRESH.
    fn judge(&mut self, now: Instant, p: &Params) -> Transitions {
        let n = self.n();
        if !self.endpoints[..n]
            .iter()
            .any(|e| e.counter > p.ft_hthresh())
        {
            return Transitions::default();
        }
        // After a gap on every link (this node stopped, or the peer did)
        // the links' queues come in one after the other, and one first is
        // no sign of the others' death: a held link is left to probe
        // rounds (`probe_due`) for SLOW_TOUT after the gap, or after a
        // second one within that (`arrived`, called with this `now`, ends
        // the hold).
        let held = self.held;
        // A link the peer says hears nothing from us carries none of its
        // data, only its retries (`retry_due`), HBSPAN / 8 apart, or up to
        // twice that when its sweep slows down: silence shorter than that
        // beyond SLOW_TOUT is no sign of death. A link that just came back
        // into use (the peer's news of it first, on another link) is
        // silent since then, not since its last frame; one still reported
        // down, since its last frame.
        let retried = Duration((p.hbspan().0 / 4).saturating_add(p.slow_tout().0));
        // A link out of use for loss at either end that carries no data
        // from the peer brings only loss probes and their answers, both
        // ends' as often as the busier end allows (`probe_shift`: seconds
        // apart toward a node with thousands of peers behind a lossy
        // cable), and the periodic heartbeats: its silence is judged
        // against LOSSY_SILENT_PROBES such intervals beyond SLOW_TOUT.
        let (own, asked) = (self.own_shifts & 0x0f, self.own_shifts >> 4);
        // Ours lossy: the answers to our probes; the peer's: its probes,
        // as we asked.
        let sparse = |shift: u8| {
            let gap = Duration::from_ms(LOSS_PROBE_MS << shift.max(self.peer_shift));
            Duration(p.slow_tout().0.saturating_add(LOSSY_SILENT_PROBES * gap.0))
        };
        let (ours, theirs) = (sparse(own), sparse(asked));
        let (busy, peer_lossy) = (self.busy, self.peer_lossy);
        let eps = &mut self.endpoints[..n];
        let mut t = Transitions::default();
        for (l, e) in eps.iter_mut().enumerate() {
            let (since, bound) = if e.peer_failed {
                (e.last_rx, retried)
            } else if e.lossy && busy & (1 << l) == 0 {
                (e.last_rx.max(e.changed), ours)
            } else if peer_lossy & (1 << l) != 0 && busy & (1 << l) == 0 {
                (e.last_rx.max(e.changed), theirs)
            } else {
                (e.last_rx.max(e.changed), p.slow_tout())
            };
            if !e.failed
                && held & (1 << l) == 0
                && e.counter <= p.ft_lthresh()
                && now.since(since) >= bound
            {
                e.set(true, e.peer_failed, now);
                e.fails += 1;
                t.failed |= 1 << l;
            }
            e.counter = 0;
        }
        self.busy &= !t.failed;
        t
    }
}
