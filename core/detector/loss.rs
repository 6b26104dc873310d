// SPDX-License-Identifier: GPL-2.0

//! Loss per endpoint, measured from the counts heartbeats echo: a lossy
//! link goes out of use toward its peer, and comes back.
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
//! [`report`]: Detector::report
//! [`report_due`]: Detector::report_due

use super::{
    Counts, Detector, Duration, Endpoint, Instant, Params, Transitions, MAX_LINKS, MAX_PROBE_SHIFT,
};

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
}

impl Detector {
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
    pub(super) fn lossy_interval(&self, lossy_every: Duration) -> Duration {
        Duration(
            lossy_every
                .0
                .max(Duration::from_ms(LOSS_PROBE_MS << self.peer_shift).0),
        )
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
}
