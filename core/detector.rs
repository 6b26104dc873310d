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
//! the peer sends on a link it cannot use ([`retry`]). What else comes
//! faster on one link than on the others (loss probes every
//! [`LOSS_PROBE_MS`] and their answers, the news of a change) judged an
//! idle peer's other links every few probes, and failed a healthy one
//! whose last heartbeat was over SLOW_TOUT old (ri2n_lossy and ri2n_oneway
//! left idle). Without them the counters are slow to find the last usable
//! link beside lossy ones dead (within about 6 HBSPAN: 6-11 s measured);
//! a probe round that the lossy links witness finds it (below).
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
//! Receiving only sees one direction. A heartbeat therefore also carries the
//! sender's unusable links (`Heartbeat::down`): failed by its detector,
//! without carrier, or removed. The receiver marks those endpoints
//! `peer_failed` and stops sending on them too, as RI2N/UDP told its peer
//! explicitly; sent on every surviving link at each change, this also makes
//! the far side's carrier loss take effect within a round trip. Heartbeats
//! name the link they left on, so the receiver learns which of its links is
//! which of the peer's, whatever order each node listed its slaves in.
//!
//! Probes close the gap the counters leave. When a link dies, the traffic
//! that would push a counter past FT_HTHRESH often stops too (TCP waits out
//! a retransmission timeout), and an idle peer's heartbeats take
//! FT_HTHRESH / HBWEIGHT periods to get there. So when a usable link has
//! been silent for SLOW_TOUT while another delivered within SLOW_TOUT, the
//! driver asks for a heartbeat on every usable link at once ([`probe_due`],
//! at most one round per SLOW_TOUT); FAST_TOUT after the first answer (at
//! least FAST_TOUT after the round began), the longest one link may lag
//! another, a link silent since before the round that brought nothing
//! while another link answered is failed ([`probe_end`]). An
//! answer is a heartbeat from a peer that had heard one of ours sent in
//! the round (its counts' echo), not what waited in our receive queues
//! meanwhile. A link that brings anything in the round is spared whatever
//! its counter, and so is one that delivered within SLOW_TOUT before the
//! round: the answer it owes may wait behind a full switch queue for
//! longer than FAST_TOUT.
//! A link out of use for loss still delivers (its loss probes' answers):
//! so when every usable link has been silent for SLOW_TOUT, one of them
//! busy with data until then, the round also asks such a link that
//! delivered within SLOW_TOUT, as a witness. An idle link (heartbeats
//! only) is not probed so, or every idle peer with a lossy link would
//! have a round every SLOW_TOUT; a busy one once per burst of data (its
//! answer clears `busy`), and until it answers or fails. Such a round
//! lasts FAST_TOUT after SLOW_TOUT at least, not FAST_TOUT after the
//! witness's answer: a link of ours lossy toward every peer carries no
//! data, so that answer comes at once, while the suspect's may wait
//! behind other peers' data.
//! Failed links are probed every HBSPAN / 8 ([`retry_due`]), so that one
//! that heals is back within a fraction of HBSPAN.
//!
//! A link that delivers, but loses many frames (a bad cable, a port with
//! errors), never looks dead to the counters, yet drags TCP down: the
//! paper names it and leaves it open. So each heartbeat also reports how
//! many frames its sender had received from us on its link when our last
//! heartbeat there arrived, and how many we had sent before that heartbeat
//! (`Heartbeat::counts`). The link keeps our frames in order, so between
//! two such echoes exactly the difference was lost ([`report`]): the
//! endpoint's delivery loss, a mean over samples of [`LOSS_SAMPLE`] frames
//! or more.
//!
//! A full queue loses frames too: TCP fills the bottleneck on every link
//! it is striped over, so congestion loses on all of a peer's links alike,
//! in bursts. Loss alone would then take every link out of use and leave
//! none. So a link goes out of use toward that peer (`lossy`) only when its
//! loss is above `loss_thresh` *and* clearly above that of the other links
//! in use (their median), measured within [`LOSS_FRESH_MS`]
//! ([`lossy_margin`]): a bad cable, not a full queue. The last usable
//! link is never taken out, and lossy links still carry data when nothing
//! better is left ([`Detector::sendable`]). Heartbeats keep probing a lossy link every
//! [`LOSS_PROBE_MS`] ms (less often with many peers with a lossy link, at
//! either end: [`loss_probe_every`], [`loss_probe_shift`]), and once
//! [`LOSS_CLEAN_BACK`] frames in a row
//! arrived, or a sample lost no more than the other links plus half the
//! threshold, it comes back. While data flows, a report is asked for every
//! [`REPORT_MS`] ms ([`report_due`]), so that a lossy link is found within
//! a fraction of a second. Our heartbeats on a link lossy toward the peer
//! say so (`HB_LOSSY`), and the peer's on one lossy toward us: such a link
//! brings only the peer's probes and heartbeats, so its silence is judged
//! as a lossy link's, it is no suspect in probe rounds (a witness), and
//! the peer counts among those that probe us ([`ProbingPeers`]).
//!
//! A link that delivers everything, but later than the others by more
//! than FAST_TOUT (a switch port others fill, their queue in front of
//! ours), loses to TCP all the same: the window has given its frames'
//! numbers up by the time they come, and TCP over it crawled for as long
//! as the others sent (0.6 Mbit/s against the free link's 28.8 alone,
//! ri2n_shared). So a frame that comes more than FAST_TOUT after the
//! window passed its number, or a heartbeat that comes that long after
//! frames sent after it, is left out of the counts we echo
//! ([`Detector::late`]; `PeerRx::late_frames`, `PeerRx::lagging`: as far
//! as a mark the window takes every two FAST_TOUT tells, about half of
//! them for a link 3 FAST_TOUT or more behind, fewer below), and the peer
//! measures it as its loss on that link: beside links on time, it goes out
//! of use as a lossy one does, and comes back once its probes are on time
//! again. A frame given up a moment before (the window full, behind a
//! link a few ms slower in a burst) is not left out: links that take
//! turns at that are no bad link.
//!
//! [`probe_due`]: Detector::probe_due
//! [`probe_end`]: Detector::probe_end
//! [`retry_due`]: Detector::retry_due
//! [`report`]: Detector::report
//! [`report_due`]: Detector::report_due
//! [`lossy_margin`]: lossy_margin

use super::header::{Counts, MAX_PROBE_SHIFT};
use super::params::Params;
use super::seq::Seq;
use super::time::{Duration, Instant};
use super::MAX_LINKS;

/// Whether a heartbeat that left on the peer's `peer_link` saying `down`
/// came on a link the peer cannot use toward us (failed by its detector,
/// say, in a one-way failure): one of its retries, every HBSPAN / 8
/// ([`Detector::retry_due`]), or its heartbeats, which carry nothing of
/// the traffic. It weighs nothing: weighed HBWEIGHT, four retries took a
/// counter past FT_HTHRESH within about a second and judged the other
/// links of an idle peer, a healthy one failed half the time (ri2n_oneway
/// on the debug kernel). It still shows the link works toward us
/// (`last_rx`) and recovers it.
fn retry(peer_link: usize, down: u8) -> bool {
    peer_link < MAX_LINKS && down & (1 << peer_link) != 0
}

/// Most frames a heartbeat can fall behind a later one by waiting in a
/// longer queue ([`Detector::heartbeat_numbered`]): the frames sent on the
/// other links meanwhile, some thousands in a slave's qdisc and our link
/// queue; 65536 is half a second at 130k frames a second.
pub const HB_REORDER: i32 = 1 << 16;

/// Fewest frames sent that make a loss sample on a link in use: at
/// 100 Mbit/s a few tens of ms of traffic, fine enough for a threshold of
/// a few tenths of a percent (two samples are averaged).
pub const LOSS_SAMPLE: u32 = 256;
/// Fewest frames that make a sample on a slow link, once
/// [`LOSS_SAMPLE_MS`] passed since the last: TCP slowed by a lossy link
/// sends a few hundred frames a second, and its loss must still be found
/// within a second or two.
pub const LOSS_SAMPLE_MIN: u32 = 32;
/// See [`LOSS_SAMPLE_MIN`].
pub const LOSS_SAMPLE_MS: u64 = 500;
/// Samples in a row above the margin ([`lossy_margin`]), each on its own
/// and with the mean, that take a link out of use: a burst of congestion
/// drops that hit one link's sample first reaches the others' next samples
/// too, or TCP backs off and the next samples are clean.
pub const LOSS_STRIKES: u8 = 3;
/// How recent another link's loss must be to compare a link with it.
pub const LOSS_FRESH_MS: u64 = 2000;

/// `now` in ms, wrapping at 32 bits (49 days).
fn ms(now: Instant) -> u32 {
    now.ms32()
}

/// Whether a link losing `loss_bp` (basis points) is lossy next to the
/// other links in use, which lose `others_bp`, at threshold `thresh_bp`:
/// above the threshold, and above twice the others' loss plus the
/// threshold. Congestion, which loses alike on every link, stays
/// within that margin; 20 % on one link and 0-2 % on the other does not.
pub fn lossy_margin(loss_bp: u32, others_bp: u32, thresh_bp: u32) -> bool {
    loss_bp > thresh_bp && loss_bp > others_bp.saturating_mul(2).saturating_add(thresh_bp)
}

/// Fewest probes that make a loss sample on a lossy link (what procfs
/// shows while it is out of use).
pub const LOSS_SAMPLE_BACK: u32 = 200;
/// Frames in a row, none lost, that bring a lossy link back: about a
/// second of probes and answers after its loss ended. A link still losing
/// 1 % delivers that many in a row only once in about 55 tries (0.99^400).
pub const LOSS_CLEAN_BACK: u32 = 400;
/// How often a link out of use for loss is probed (a heartbeat that asks
/// for an answer, which carries the counts).
pub const LOSS_PROBE_MS: u64 = 5;
/// Most peers with a lossy link probed every [`LOSS_PROBE_MS`]: with more
/// (one bad cable of ours makes that link lossy toward every peer), each
/// is probed less often, so that a node sends at most about 3,200 loss
/// probes a second (60-byte frames, 1.5 Mbit/s), whatever the cluster's
/// size; its heartbeats ask the peers to probe it no more often
/// ([`loss_probe_shift`]), so it receives about as many (up to 8,192 such
/// peers, [`MAX_PROBE_SHIFT`]; beyond, they probe it up to N / 8,192 times
/// more often than it probes them). Only peers lossy in our direction are
/// counted toward our own probes; toward what we ask, the peers that probe
/// us too ([`node_probe_shift`]). A healed link then takes longer to come
/// back, at both ends, since a sample is 200 frames sent on it: ri2n-sim
/// (one trial, idle) 1.4 s at 16 such peers, 110 s at 1,024, 308 s at 4,096.
pub const LOSS_PROBE_PEERS: usize = 16;

/// How often to probe each lossy link when `lossy_peers` peers have one.
pub fn loss_probe_every(lossy_peers: usize) -> Duration {
    Duration::from_ms(LOSS_PROBE_MS * lossy_peers.div_ceil(LOSS_PROBE_PEERS).max(1) as u64)
}

/// What our heartbeats ask of the peers (their `probe_shift`) when we
/// probe each lossy link every `every`: no more loss probes from each than
/// we send it, `LOSS_PROBE_MS << shift` at least `every`. Without it each
/// peer, with our node as its one lossy peer, probed every LOSS_PROBE_MS,
/// and a node whose own cable was lossy answered 200 probes a second per
/// peer (ri2n-sim: 205,000 a second received at 1,024 peers, 820,000 at
/// 4,096).
pub fn loss_probe_shift(every: Duration) -> u8 {
    let times = every.as_ms().div_ceil(LOSS_PROBE_MS).max(1);
    // ceil(log2(times))
    let shift = u64::BITS - (times - 1).leading_zeros();
    (shift as u8).min(MAX_PROBE_SHIFT)
}

/// `cur` moved toward `new` (at most [`MAX_PROBE_SHIFT`]): at once if it
/// rises, one step if it falls. Probes follow a shift only once its
/// heartbeat arrived, at the old rate until then, so a bound that fell
/// at once fails a link between them; one step down
/// still allows four of the old intervals.
fn shift_toward(cur: u8, new: u8) -> u8 {
    let new = new.min(MAX_PROBE_SHIFT);
    if new < cur {
        cur - 1
    } else {
        new
    }
}

/// What our heartbeats ask of the peers (their `probe_shift`) when
/// `lossy_peers` peers have a link lossy in our direction (we probe them,
/// [`loss_probe_every`]) and `probing_peers` have one lossy toward us
/// (they probe us, [`ProbingPeers`]): no more probes from each than the
/// busier count allows. Counting only the first, a cable that lost only
/// what its node received drew every peer's probes every 5 ms, and their
/// answers (ri2n-sim: 856,000 frames a second received and 695,000 sent at
/// 4,096 peers).
pub fn node_probe_shift(lossy_peers: usize, probing_peers: usize) -> u8 {
    loss_probe_shift(loss_probe_every(lossy_peers.max(probing_peers)))
}

/// How long [`ProbingPeers`] counts a peer after its last heartbeat that
/// said it probes us: four of the longest probe intervals, so that a peer
/// whose probes are lost now and then stays counted.
pub const PROBING_WINDOW_MS: u64 = 4 * (LOSS_PROBE_MS << MAX_PROBE_SHIFT);

/// The peers with a link out of use toward us for loss (`HB_LOSSY` on
/// their heartbeats there): those that send us loss probes. They are
/// counted as their heartbeats come, in windows of [`PROBING_WINDOW_MS`]:
/// the count is the larger of the current window's and the last one's, so
/// a peer counts from its first such heartbeat and for one to two windows
/// after its last; a forgotten peer needs no bookkeeping. Each peer keeps
/// the window it was last counted in (`stamp`: the window's number + 1,
/// its low 16 bits and never 0, which wrap every 7.7 days: a peer last
/// counted exactly that long ago is missed for a window, as one counted
/// in the window before a wrap to 0).
#[derive(Clone, Copy, Debug, Default)]
pub struct ProbingPeers {
    /// The current window's number, + 1 (0: none yet).
    window: u64,
    cur: u32,
    prev: u32,
}

impl ProbingPeers {
    fn window_of(now: Instant) -> u64 {
        now.0 / Duration::from_ms(PROBING_WINDOW_MS).0 + 1
    }

    /// A heartbeat of the peer whose `stamp` this is said it probes us.
    pub fn saw(&mut self, stamp: &mut u16, now: Instant) {
        let w = Self::window_of(now);
        if w != self.window {
            self.prev = if w == self.window + 1 { self.cur } else { 0 };
            self.cur = 0;
            self.window = w;
        }
        // The stamp's 16 bits, never 0 (a peer never counted).
        let s = (w as u16).max(1);
        if *stamp != s {
            *stamp = s;
            self.cur += 1;
        }
    }

    /// How many peers probe us, at `now`.
    pub fn count(&self, now: Instant) -> usize {
        let w = Self::window_of(now);
        let n = if w == self.window {
            self.cur.max(self.prev)
        } else if w == self.window + 1 {
            self.cur
        } else {
            0
        };
        n as usize
    }
}

/// Loss probe intervals beyond SLOW_TOUT that a link out of use for loss,
/// carrying no data from the peer, may stay silent before it is failed
/// (140 ms at 5 ms probes). Frames lost in a row on a lossy link are no
/// death: at 20 % loss, 5 in a row (the bound was 4 intervals) are lost
/// once in 3,000 intervals, which at 4,096 peers probed every 1.28 s is
/// about one false failure a second across the node (ri2n-sim: one in a
/// single pair's 30 s at 320); 9 in a row once in 2 million.
pub const LOSSY_SILENT_PROBES: u64 = 8;

/// How often the counts are asked for on a link that carries data.
pub const REPORT_MS: u64 = 100;

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
    /// A lossy endpoint's way back, at a report of `dtx` frames sent of
    /// which `drx` arrived: after a clean run, or a sample no worse than
    /// the other links' loss (`others`) plus half `thresh`. Returns whether
    /// it came back (measured afresh from now).
    fn back_from_lossy(
        &mut self,
        dtx: u32,
        drx: u32,
        others: Option<u32>,
        thresh: u32,
        now: Instant,
    ) -> bool {
        self.clean_run = if drx == dtx {
            self.clean_run
                .saturating_add(dtx.min(u32::from(u16::MAX)) as u16)
        } else {
            0
        };
        let sample_ok = self.acc_sent >= LOSS_SAMPLE_BACK
            && others.is_some_and(|o| {
                (u64::from(self.acc_lost) * 10_000 / u64::from(self.acc_sent)) as u32
                    <= o + thresh / 2
            });
        if u32::from(self.clean_run) < LOSS_CLEAN_BACK && !sample_ok {
            return false;
        }
        // No stale 0 % for the others to compare with, nor to halve the
        // next figure.
        self.loss_bp = 0;
        self.measured = false;
        self.strikes = 0;
        self.acc_sent = 0;
        self.acc_lost = 0;
        self.set_lossy(false, now);
        true
    }

    /// Closes the loss sample once it is full (or, not lossy, long
    /// enough in time) and judges it against the other links' loss
    /// (`others`) and `thresh`: `Some(true)` if the endpoint went lossy,
    /// `Some(false)` if it left lossy (`thresh` 0), `None` otherwise.
    fn take_sample(&mut self, others: Option<u32>, thresh: u32, now: Instant) -> Option<bool> {
        let full = if self.lossy {
            LOSS_SAMPLE_BACK
        } else {
            LOSS_SAMPLE
        };
        let slow = !self.lossy
            && self.acc_sent >= LOSS_SAMPLE_MIN
            && now.since(self.sampled) >= Duration::from_ms(LOSS_SAMPLE_MS);
        if self.acc_sent < full && !slow {
            return None;
        }
        let sample = (u64::from(self.acc_lost) * 10_000 / u64::from(self.acc_sent)) as u32;
        self.acc_sent = 0;
        self.acc_lost = 0;
        // `sample` is at most 10,000: `acc_lost` is at most `acc_sent`.
        self.loss_bp = if self.measured {
            (u32::from(self.loss_bp) + sample) / 2
        } else {
            sample
        } as u16;
        self.measured = true;
        self.sampled = now;
        // The mean and the sample itself: a burst that hit one link's
        // sample alone (a full port, whole GSO packets per link) stays in
        // the mean for two more samples, but is one strike, not three.
        let over = others.is_some_and(|o| {
            lossy_margin(u32::from(self.loss_bp), o, thresh) && lossy_margin(sample, o, thresh)
        });
        self.strikes = if over {
            self.strikes.saturating_add(1)
        } else {
            0
        };
        if thresh == 0 {
            if !self.lossy {
                return None;
            }
            self.set_lossy(false, now);
            Some(false)
        } else if !self.lossy && self.strikes >= LOSS_STRIKES {
            self.set_lossy(true, now);
            self.lossy_count += 1;
            self.clean_run = 0;
            Some(true)
        } else {
            None
        }
    }

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

    /// The peer's heartbeat asked for loss probes at most every
    /// `LOSS_PROBE_MS << shift` (its `probe_shift`); a lower wish is
    /// followed one step a heartbeat ([`shift_toward`]).
    pub fn peer_probe_shift(&mut self, shift: u8) {
        self.peer_shift = shift_toward(self.peer_shift, shift);
    }

    /// Our heartbeat to the peer asks (its `probe_shift`) for loss probes at
    /// most every `LOSS_PROBE_MS << shift`: silence that long on a link
    /// the peer has out of use for loss toward us is no sign of death. A
    /// lower shift counts one step a heartbeat ([`shift_toward`]).
    pub fn asked_probe_shift(&mut self, shift: u8) {
        let asked = shift_toward(self.own_shifts >> 4, shift);
        self.own_shifts = (self.own_shifts & 0x0f) | asked << 4;
    }

    /// The peer's heartbeat on `link` said whether the peer has that link
    /// out of use toward us for loss (`HB_LOSSY`): a link's frames come in
    /// order, so each heartbeat there tells it afresh. Such a heartbeat
    /// also ends the link's `busy`: data that comes on it after (the
    /// peer's fallback when nothing better is left) sets it again, and
    /// without it the peer's probes, seconds apart at scale, were judged
    /// by SLOW_TOUT.
    pub fn peer_lossy_link(&mut self, link: usize, lossy: bool) {
        let bit = 1u8.checked_shl(link as u32).unwrap_or(0);
        if lossy {
            self.busy &= !bit;
            self.peer_lossy |= bit;
        } else {
            self.peer_lossy &= !bit;
        }
    }

    /// How often a link lossy toward the peer is probed: every
    /// `lossy_every` (ours, for as many peers with a lossy link as we
    /// have), or less often if the peer asked.
    fn lossy_interval(&self, lossy_every: Duration) -> Duration {
        Duration(
            lossy_every
                .0
                .max(Duration::from_ms(LOSS_PROBE_MS << self.peer_shift).0),
        )
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

    /// The typical loss of the links other than `link` that are in use
    /// and were measured within [`LOSS_FRESH_MS`] of `now` (the lower
    /// median: the least of a few noisy figures would be too low a bar);
    /// `None` if no such link is there to compare with.
    fn others_loss(&self, link: usize, now: Instant) -> Option<u32> {
        let fresh = Duration::from_ms(LOSS_FRESH_MS);
        let mut v = [0u32; MAX_LINKS];
        let mut n = 0;
        for (l, e) in self.endpoints[..self.n()].iter().enumerate() {
            if l != link && e.usable() && e.measured && now.since(e.sampled) < fresh {
                v[n] = u32::from(e.loss_bp);
                n += 1;
            }
        }
        if n == 0 {
            return None;
        }
        // Insertion sort: at most MAX_LINKS figures, and core's generic
        // sort brings code objtool cannot follow into the module.
        for i in 1..n {
            let mut j = i;
            while j > 0 && v[j - 1] > v[j] {
                v.swap(j - 1, j);
                j -= 1;
            }
        }
        Some(v[(n - 1) / 2])
    }

    /// A heartbeat with `counts` arrived on our `link`, before it is
    /// counted ([`Detector::heartbeat`]). Notes what to echo, and measures
    /// our loss from the echo it carries. Returns the link going out of
    /// use for loss, or back into use.
    pub fn report(&mut self, link: usize, counts: Counts, now: Instant, p: &Params) -> Transitions {
        let mut t = Transitions::default();
        let thresh = p.loss_thresh_bp();
        let others = self.others_loss(link, now);
        let e = &mut self.endpoints[link];
        e.heard_tx = counts.tx;
        e.heard_rx = e.rx_frames();
        e.heard = true;
        if counts.echo_tx == 0 && counts.echo_rx == 0 {
            return t; // The peer has heard nothing from us here yet.
        }
        let before_floor = e.floor_pending && (counts.echo_tx.wrapping_sub(e.floor) as i32) < 0;
        // An echo of frames we have not sent yet is none of ours.
        let from_future = (counts.echo_tx.wrapping_sub(e.tx_frames) as i32) > 0;
        if e.failed || e.peer_failed || before_floor || from_future {
            // Dead, or an echo from before it came back: no sample, and the
            // next echo from after sets the reference.
            e.echoed = false;
            e.acc_sent = 0;
            e.acc_lost = 0;
            return t;
        }
        e.floor_pending = false;
        let (dtx, drx) = (
            counts.echo_tx.wrapping_sub(e.echo_tx),
            counts.echo_rx.wrapping_sub(e.echo_rx),
        );
        let first = !e.echoed;
        e.echoed = true;
        e.echo_tx = counts.echo_tx;
        e.echo_rx = counts.echo_rx;
        // The first echo sets the reference; an echo from before (dtx
        // "negative") or one the peer's counts do not fit (a restart) too.
        if first || dtx > 1 << 30 || drx > dtx {
            if first {
                e.sampled = now;
            }
            return t;
        }
        e.acc_sent = e.acc_sent.saturating_add(dtx);
        e.acc_lost = e.acc_lost.saturating_add(dtx - drx);
        let bit = 1u8 << link;
        if e.lossy && e.back_from_lossy(dtx, drx, others, thresh, now) {
            t.lossless = bit;
            return t;
        }
        match e.take_sample(others, thresh, now) {
            Some(true) => {
                t.lossy = bit;
                // The data it carried until now says nothing of the peer's
                // use of it from now on (`judge`: a lossy link busy with
                // the peer's data is judged by SLOW_TOUT, one without by
                // its probes' interval).
                self.busy &= !bit;
            }
            Some(false) => t.lossless = bit,
            None => {}
        }
        t
    }

    /// Links among `up` to ask for a report at `now` (a heartbeat that
    /// asks for an answer): a lossy one every [`LOSS_PROBE_MS`] ms (or as
    /// the peer's `probe_shift` asks), to learn when it heals; one in use
    /// that carried [`LOSS_SAMPLE`] frames since its last report, every
    /// [`REPORT_MS`] ms.
    pub fn report_due(&mut self, now: Instant, up: u8, p: &Params) -> u8 {
        self.report_due_every(now, up, p, Duration::from_ms(LOSS_PROBE_MS))
    }

    /// [`Detector::report_due`], lossy links probed every `lossy_every`
    /// ([`loss_probe_every`]).
    pub fn report_due_every(
        &mut self,
        now: Instant,
        up: u8,
        p: &Params,
        lossy_every: Duration,
    ) -> u8 {
        if p.loss_thresh_bp() == 0 {
            return 0;
        }
        let mut due = 0;
        let n = self.n();
        self.own_shifts = (self.own_shifts & 0xf0) | loss_probe_shift(lossy_every);
        let lossy_every = self.lossy_interval(lossy_every);
        for (l, e) in self.endpoints[..n].iter_mut().enumerate() {
            if up & (1 << l) == 0 || e.failed || e.peer_failed {
                continue;
            }
            let (every, busy) = if e.lossy {
                (lossy_every, true)
            } else {
                let unreported = e.tx_frames.wrapping_sub(e.echo_tx);
                let slow = unreported >= LOSS_SAMPLE_MIN
                    && now.since(e.asked) >= Duration::from_ms(LOSS_SAMPLE_MS);
                (
                    Duration::from_ms(REPORT_MS),
                    unreported >= LOSS_SAMPLE || slow,
                )
            };
            if busy && now.since(e.asked) >= every {
                e.asked = now;
                due |= 1 << l;
            }
        }
        due
    }

    /// Links out of use for loss.
    pub fn lossy(&self) -> u8 {
        self.mask(|e| e.lossy)
    }

    /// Links the peer has out of use toward us for loss (it probes us on
    /// them).
    pub fn peer_lossy(&self) -> u8 {
        self.peer_lossy & self.mask(|_| true)
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

    /// A heartbeat from the peer arrived on our `link` at `now`; it left on
    /// the peer's link `peer_link`, and `down` are the peer's links unusable
    /// toward us (by its indices).
    /// It answers a probe round on its link: without counts, nothing
    /// tells when it left.
    pub fn heartbeat(
        &mut self,
        link: usize,
        now: Instant,
        peer_link: usize,
        down: u8,
        p: &Params,
    ) -> Transitions {
        self.heartbeat_down(
            link,
            now,
            peer_link,
            Some(down),
            retry(peer_link, down),
            true,
            p,
        )
    }

    /// [`Detector::heartbeat`] for a heartbeat that carried `next`, the
    /// peer's next number for us when it left. One that left before a
    /// heartbeat already taken (a smaller `next`: it waited in a longer
    /// queue, on another link) still shows that its link works, but its
    /// down bits are old: taken, they would stop our sending on a link the
    /// peer has recovered since, until its next heartbeat (seen in `make
    /// demo` after the link came back: "peer receives nothing from us",
    /// then "receives again" half a millisecond later). After the peer
    /// restarts, its numbers start anew: [`Detector::renumbered`]. A
    /// number more than [`HB_REORDER`] behind, or one that comes SLOW_TOUT
    /// or more after the newest was taken, is no late heartbeat but new
    /// numbering (a peer that forgot us starts again from 0), and taken: a
    /// heartbeat's down bits are never ignored for longer than SLOW_TOUT.
    pub fn heartbeat_numbered(
        &mut self,
        link: usize,
        now: Instant,
        peer_link: usize,
        down: u8,
        next: Seq,
        p: &Params,
    ) -> Transitions {
        self.heartbeat_echoed(link, now, peer_link, down, next, None, p)
    }

    /// [`Detector::heartbeat_numbered`] for a heartbeat whose counts echo
    /// `echo_tx` (`Counts::echo_tx`, if it had counts): it answers a probe
    /// round on its link only if its sender had heard one of our
    /// heartbeats sent since the round began ([`Detector::probe_end`]),
    /// and only if it did not leave before a heartbeat already taken.
    #[allow(clippy::too_many_arguments)]
    pub fn heartbeat_echoed(
        &mut self,
        link: usize,
        now: Instant,
        peer_link: usize,
        down: u8,
        next: Seq,
        echo_tx: Option<u32>,
        p: &Params,
    ) -> Transitions {
        // A queue delays a heartbeat for a fraction of SLOW_TOUT: one
        // behind that came later than that is new numbering (a peer that
        // forgot us, in the same epoch, starts from 0), and taken.
        let now_ms = ms(now).max(1);
        let recent = self.hb_taken_ms != 0
            && u64::from(now_ms.wrapping_sub(self.hb_taken_ms)) < p.slow_tout().as_ms();
        let behind = next.diff(self.hb_next);
        let old = recent && behind < 0 && behind > -HB_REORDER;
        if !old {
            self.hb_next = next;
            self.hb_taken_ms = now_ms;
        }
        // Not older than the round, nor newer than what we sent (the peer's
        // echo from before this link's count started again: `set_links`).
        let sent = self.endpoints[link].tx_frames;
        let fresh = echo_tx.is_none_or(|x| {
            x.wrapping_sub(self.probe_tx[link]) as i32 >= 0 && sent.wrapping_sub(x) as i32 >= 0
        });
        self.heartbeat_down(
            link,
            now,
            peer_link,
            (!old).then_some(down),
            retry(peer_link, down),
            !old && fresh,
            p,
        )
    }

    /// The peer numbers anew (a new epoch): the next heartbeat's number is
    /// the newest, whatever it is.
    pub fn renumbered(&mut self) {
        self.hb_taken_ms = 0;
        // Its links' loss is its new incarnation's to tell.
        self.peer_lossy = 0;
    }

    /// `retry`: the peer cannot use the link it sent this on (see
    /// [`retry`]); it weighs nothing.
    #[allow(clippy::too_many_arguments)]
    fn heartbeat_down(
        &mut self,
        link: usize,
        now: Instant,
        peer_link: usize,
        down: Option<u8>,
        retry: bool,
        answers: bool,
        p: &Params,
    ) -> Transitions {
        let mut t = Transitions::default();
        let bit = 1u8 << link;
        if peer_link < MAX_LINKS {
            self.peer_link[peer_link] = link as u8 + 1;
        }
        self.arrived(now, p);
        if answers && self.probing & bit != 0 {
            if self.probing & self.answered == 0 {
                self.answer_us = (now.since(self.probed).0 / 1000).min(u64::from(u32::MAX)) as u32;
            }
            self.answered |= bit;
            self.busy &= !bit;
        }
        let e = &mut self.endpoints[link];
        e.rx_heartbeats += 1;
        e.last_rx = now;
        if e.failed {
            e.set(false, e.peer_failed, now);
            e.recoveries += 1;
            e.counter = 0;
            t.recovered = bit;
        } else if !retry && self.weighs(link, now, p) {
            self.endpoints[link].counter =
                self.endpoints[link].counter.saturating_add(p.hbweight());
        }
        let Some(down) = down else {
            let j = self.judge(now, p);
            t.failed |= j.failed;
            return t;
        };
        // The peer's down bits, by our link indices.
        let mut claimed = 0u8;
        for (j, &ours) in self.peer_link.iter().enumerate() {
            if ours != 0 && (ours as usize) <= self.n() && down & (1 << j) != 0 {
                claimed |= 1 << (ours - 1);
            }
        }
        // One heartbeat alone never takes the last usable links out: the
        // same claim must come twice in a row (a forged or corrupt one
        // would otherwise cut the peer off; a real one repeats).
        let newly = claimed & !self.mask(|e| e.peer_failed);
        let confirmed = newly & self.down_seen == newly;
        self.down_seen = claimed;
        let defer = newly != 0 && !confirmed && self.usable() & !newly == 0 && self.usable() != 0;
        for (j, &ours) in self.peer_link.iter().enumerate() {
            if ours == 0 || ours as usize > self.n() {
                continue;
            }
            let l = ours as usize - 1;
            let e = &mut self.endpoints[l];
            let says_down = down & (1 << j) != 0;
            if says_down && defer && !e.peer_failed {
                continue;
            }
            if says_down != e.peer_failed {
                e.set(e.failed, says_down, now);
                if says_down {
                    t.peer_failed |= 1 << l;
                } else {
                    t.peer_recovered |= 1 << l;
                }
            }
        }
        let j = self.judge(now, p);
        t.failed |= j.failed;
        t
    }

    /// Starts a probe round if one is due at `now` (`Detector::round`),
    /// and none was within SLOW_TOUT. Returns the links to send a probe on
    /// (every usable one that is up, and the witnesses), or 0.
    pub fn probe_due(&mut self, now: Instant, up: u8, p: &Params) -> u8 {
        if self.probing != 0 || now.since(self.probed) < p.slow_tout() {
            return 0;
        }
        let ask = self.round(now, up, p);
        if ask == 0 {
            return 0;
        }
        self.probing = ask;
        self.witnessed = ask & self.sparse() != 0;
        self.answered = 0;
        for (l, e) in self.endpoints.iter().enumerate() {
            self.probe_tx[l] = e.tx_frames;
        }
        self.probed = now;
        ask
    }

    /// The links a probe round at `now` would ask, or 0 if none is due
    /// (whenever the last one was): some usable link among `up` silent
    /// for SLOW_TOUT while another delivered within it; or every usable
    /// one silent, one of them busy until then, while a link out of use
    /// for loss only delivered within SLOW_TOUT (its loss probes'
    /// answers), which is asked too, as a witness. Without witnesses the
    /// last usable link beside lossy ones was judged by the counters
    /// alone: found dead 6-11 s after it died (lossy-failover-lab). With
    /// over 320 peers with a lossy link (SLOW_TOUT / [`LOSS_PROBE_MS`] ×
    /// [`LOSS_PROBE_PEERS`] at the defaults), loss probes come less often
    /// than SLOW_TOUT ([`loss_probe_every`]): the round then starts at the
    /// next probe's answer, up to one probe interval later (1.28 s at 4096
    /// such peers).
    fn round(&self, now: Instant, up: u8, p: &Params) -> u8 {
        let live = self.live() & up;
        let recent = self.mask(|e| now.since(e.last_rx) < p.slow_tout());
        let silent = live & !recent;
        if silent != 0 && silent != live {
            return live;
        }
        let witnesses = self.sparse() & up & recent;
        if silent != 0 && silent & self.busy != 0 && witnesses != 0 {
            return live | witnesses;
        }
        0
    }

    /// Ends the probe round FAST_TOUT after it started, or FAST_TOUT after
    /// its first answer came (the longest one link may lag another: a slow
    /// host that took 15 ms to answer on one link leaves the other link's
    /// answer FAST_TOUT from then), later with witnesses
    /// ([`Detector::round_length`]): every probed link
    /// that was silent for SLOW_TOUT when it started and brought nothing
    /// since, while another probed link answered, fails. A
    /// link that delivered within SLOW_TOUT before the round is no
    /// suspect: behind a full queue its answer may take longer than
    /// FAST_TOUT (the next round judges it if it stays silent).
    ///
    /// An answer is a heartbeat whose sender had heard one of ours sent
    /// since the round began (its counts' `echo_tx`): what waited in this
    /// node's receive queues, one NIC's taken before the other's (a node
    /// resumed from a stop on a busy host, its receive softirq behind a
    /// task), left the peer before the round and proves nothing about the
    /// other link, data or heartbeats (under load, the answers to our
    /// loss reports). The peer's answers go out on every link at once and
    /// come in behind both queues (ri2n_stall: "failed, nothing received
    /// for 272 ms"). A heartbeat without counts (from
    /// [`Detector::heartbeat`]) answers: nothing tells when it left.
    /// `tx_frames` also drops by frames a slave gave back (`unsent`),
    /// which can make an echo look older or newer than it is by those:
    /// under such drops a round may end without a verdict, or be decided
    /// as before this rule.
    pub fn probe_end(&mut self, now: Instant, p: &Params) -> Transitions {
        let mut t = Transitions::default();
        if self.probing == 0 || now.since(self.probed) < self.round_length(p) {
            return t;
        }
        let probed = self.probed;
        let delivered = self.probing & self.mask(|e| e.last_rx.0 >= probed.0);
        let suspects = self.probing & self.mask(|e| probed.since(e.last_rx) >= p.slow_tout());
        if self.probing & self.answered != 0 {
            for l in 0..self.n() {
                let e = &mut self.endpoints[l];
                if suspects & !delivered & (1 << l) != 0 && !e.failed {
                    e.set(true, e.peer_failed, now);
                    e.fails += 1;
                    t.failed |= 1 << l;
                }
            }
        }
        // A failed link is out of rounds; back in use, it is busy again
        // only once data comes.
        self.busy &= !t.failed;
        self.probing = 0;
        t
    }

    /// How long the current round lasts: FAST_TOUT, or FAST_TOUT after its
    /// first answer. With witnesses, FAST_TOUT after SLOW_TOUT at least:
    /// their queues carry no data, so their answers come at once, while
    /// the suspect's may wait behind the data it carries to other peers
    /// (our bad cable makes a link lossy toward all of them): 1024 frames
    /// in its link queue and 1000 in a qdisc are 25 ms at 1 Gbit/s.
    /// SLOW_TOUT is the silence any link is allowed.
    fn round_length(&self, p: &Params) -> Duration {
        let answered = self.probing & self.answered != 0;
        let mut lag = if answered {
            Duration::from_us(u64::from(self.answer_us))
        } else {
            Duration(0)
        };
        if self.witnessed {
            lag = lag.max(p.slow_tout());
        }
        Duration(p.fast_tout().0.saturating_add(lag.0))
    }

    /// Failed links among `up` to probe for recovery at `now`: every
    /// HBSPAN / 8, so that a healed link returns within a fraction of HBSPAN
    /// rather than at the next heartbeat. The peer's answer recovers it.
    pub fn retry_due(&mut self, now: Instant, up: u8, p: &Params) -> u8 {
        let failed = self.failed() & up;
        if failed == 0 || now.since(self.retried).0 < p.hbspan().0 / 8 {
            return 0;
        }
        self.retried = now;
        failed
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
