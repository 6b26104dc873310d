// SPDX-License-Identifier: GPL-2.0

//! The per-peer reorder window (driver paper §4.5, §5.5).
//!
//! Packets are handed up in sequence order. The next expected packet goes up
//! at once, followed by every held packet that thereby became in order. An
//! out-of-order packet is held with its arrival time until one of:
//!
//! - its gap fills (in order);
//! - it has waited FAST_TOUT: it goes up with everything held below it, and
//!   the gaps before it are given up ([`Window::expire`]);
//! - the loss detector proves the gap lost ([`Window::release_through`]);
//! - holding it would exceed MAXBUF: everything held goes up (a flush);
//! - its number is a whole window ahead: everything held goes up (a jump).
//!
//! A packet whose number was already given up ("late") still goes up: TCP
//! sorts it out (§4.5). RI2N never retransmits.
//!
//! Unlike the paper's sorted linked list (O(held) per insertion), slots are
//! indexed by `seq % WINDOW_SLOTS`, and held slots are chained in arrival
//! order, so the oldest held packet, the FAST_TOUT candidate, is the head:
//! every operation is O(1) per packet, amortised.

use super::seq::Seq;
use super::time::{Duration, Instant};

/// Slots in a window: the farthest ahead of the next expected packet a packet
/// can be held. A power of two.
pub const WINDOW_SLOTS: usize = 512;
const MASK: u32 = WINDOW_SLOTS as u32 - 1;
/// Arrival-chain links are slot index + 1, so that 0, the all-zero state,
/// means "none".
const NIL: u16 = 0;

/// After this many consecutive packets more than a window behind, each close
/// to the previous one, the peer is taken to have restarted its numbering.
pub const RESYNC_RUN: u32 = 8;

/// Counters of a window, as `/proc/net/ri2n` shows them.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub struct RxStats {
    /// Packets handed up in order (at once or when their gap filled).
    pub in_order: u64,
    /// Packets that had to wait in the window.
    pub held: u64,
    /// Packets handed up by a FAST_TOUT release.
    pub timeout: u64,
    /// Packets handed up because the loss detector gave up their gaps.
    pub loss: u64,
    /// MAXBUF flushes (each hands up everything held).
    pub flushes: u64,
    /// Jumps: a packet a whole window ahead flushed the window.
    pub jumps: u64,
    /// Sequence numbers given up on (lost, or to arrive late).
    pub gaps: u64,
    /// Packets that arrived after their number was given up; handed up.
    pub late: u64,
    /// Of those, packets whose number the loss detector had given up: each
    /// is a link that delivered out of order (or was failed while it still
    /// carried packets), which the loss rule assumes never happens.
    pub late_loss: u64,
    /// Packets whose number was already held; dropped.
    pub duplicates: u64,
    /// Restarts of the peer's numbering recognised.
    pub resyncs: u64,
}

/// Why held packets are handed up before their gaps fill.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Release {
    /// The oldest held packet waited FAST_TOUT.
    Timeout,
    /// Every link has passed the gap (see `loss.rs`).
    Loss,
    /// MAXBUF would be exceeded.
    Flush,
    /// A packet arrived a whole window ahead.
    Jump,
    /// The peer restarted its numbering.
    Resync,
}

struct Slot<P> {
    pkt: Option<P>,
    /// The held packet's number; in an empty slot, the number last held or
    /// given up here.
    seq: Seq,
    arrived: Instant,
    /// In an empty slot: the loss detector gave `seq` up, so that a late
    /// packet can tell. Set when a gap is given up (false for any other
    /// reason), cleared when a packet is held here or `seq` arrives late.
    lost: bool,
    /// Arrival-order chain of held slots.
    older: u16,
    newer: u16,
}

/// A reorder window.
///
/// All-zero bytes are the empty window ([`Window::new`]), so the kernel can
/// allocate one zeroed, in place, rather than build 12 KiB on its stack.
///
/// # Invariants
///
/// - Every held packet's number `s` satisfies `next < s < next + WINDOW_SLOTS`
///   and sits in slot `s % WINDOW_SLOTS`, whose `seq` is `s`.
/// - `held` is the number of occupied slots, at most MAXBUF once `receive`
///   returns; the arrival chain from `oldest` links exactly those slots, in
///   arrival order.
pub struct Window<P> {
    slots: [Slot<P>; WINDOW_SLOTS],
    oldest: u16,
    newest: u16,
    held: usize,
    /// Everything before `next` was handed up or given up on.
    next: Seq,
    started: bool,
    far_run: u32,
    far_last: Seq,
    /// Counters.
    pub stats: RxStats,
}

impl<P> Default for Window<P> {
    fn default() -> Self {
        Self::new()
    }
}

impl<P> Window<P> {
    /// An empty window; it starts at the first number it receives.
    pub fn new() -> Self {
        Window {
            slots: core::array::from_fn(|_| Slot {
                pkt: None,
                seq: Seq(0),
                arrived: Instant(0),
                lost: false,
                older: NIL,
                newer: NIL,
            }),
            oldest: NIL,
            newest: NIL,
            held: 0,
            next: Seq(0),
            started: false,
            far_run: 0,
            far_last: Seq(0),
            stats: RxStats::default(),
        }
    }

    /// The next number expected in order (meaningless before the first packet).
    pub fn next_expected(&self) -> Seq {
        self.next
    }

    /// Whether a first packet has set the window's position.
    pub fn started(&self) -> bool {
        self.started
    }

    /// Packets currently held.
    pub fn held(&self) -> usize {
        self.held
    }

    /// When the oldest held packet reaches FAST_TOUT, if any is held: the
    /// time to run [`Window::expire`] next.
    pub fn deadline(&self, fast_tout: Duration) -> Option<Instant> {
        (self.oldest != NIL).then(|| self.slots[self.oldest as usize - 1].arrived.plus(fast_tout))
    }

    /// Takes packet `pkt` numbered `seq`, arrived at `now`. Packets become
    /// deliverable through `up`, in the order they must reach the stack.
    /// Returns the packet if it must be dropped instead (a duplicate).
    pub fn receive(&mut self, seq: Seq, now: Instant, pkt: P, maxbuf: usize, up: &mut impl FnMut(P)) -> Option<P> {
        if !self.started {
            self.started = true;
            self.next = seq;
        }
        let d = seq.diff(self.next);
        if d < 0 {
            return self.receive_late(seq, d, pkt, up);
        }
        self.far_run = 0;
        if d == 0 {
            self.stats.in_order += 1;
            self.next = seq.next();
            up(pkt);
            self.drain_in_order(up);
            return None;
        }
        if d as usize >= WINDOW_SLOTS {
            self.stats.jumps += 1;
            self.release_all(Release::Jump, up);
            self.stats.gaps += seq.diff(self.next) as u64;
            self.next = seq.next();
            self.stats.in_order += 1;
            up(pkt);
            return None;
        }
        let i = (seq.0 & MASK) as usize;
        if self.slots[i].pkt.is_some() {
            self.stats.duplicates += 1;
            return Some(pkt);
        }
        if self.held >= maxbuf {
            // §5.5: storing one more than MAXBUF hands everything up, this
            // packet included, in order.
            self.stats.flushes += 1;
            self.hold(i, seq, now, pkt);
            self.release_all(Release::Flush, up);
            return None;
        }
        self.stats.held += 1;
        self.hold(i, seq, now, pkt);
        None
    }

    fn receive_late(&mut self, seq: Seq, d: i32, pkt: P, up: &mut impl FnMut(P)) -> Option<P> {
        self.stats.late += 1;
        if d > -(WINDOW_SLOTS as i32) {
            let s = &mut self.slots[(seq.0 & MASK) as usize];
            if s.pkt.is_none() && s.seq == seq && s.lost {
                self.stats.late_loss += 1;
                s.lost = false;
            }
            self.far_run = 0;
            up(pkt);
            return None;
        }
        // Far behind: a straggler from long ago, or a peer that restarted its
        // numbering. A restart shows as a run of far-behind packets close to
        // one another; stragglers alternate with in-window packets.
        let d_run = seq.diff(self.far_last);
        if self.far_run > 0 && d_run > 0 && (d_run as usize) < WINDOW_SLOTS {
            self.far_run += 1;
        } else {
            self.far_run = 1;
        }
        self.far_last = seq;
        up(pkt);
        if self.far_run >= RESYNC_RUN {
            self.resync(seq.next(), up);
        }
        None
    }

    /// The peer restarted its numbering (a new epoch in its heartbeat, or a
    /// run of far-behind packets): hands up everything held, in order, and
    /// expects `next` from now on.
    pub fn resync(&mut self, next: Seq, up: &mut impl FnMut(P)) {
        self.stats.resyncs += 1;
        self.release_all(Release::Resync, up);
        self.next = next;
        self.started = true;
        self.far_run = 0;
    }

    /// FAST_TOUT (§5.5): while the oldest held packet has waited `fast_tout`
    /// or more at `now`, hands it up together with everything held below it,
    /// giving up the gaps before it. Called on every arrival and from the
    /// periodic sweep.
    pub fn expire(&mut self, now: Instant, fast_tout: Duration, up: &mut impl FnMut(P)) {
        while self.oldest != NIL {
            let s = &self.slots[self.oldest as usize - 1];
            if now.since(s.arrived) < fast_tout {
                break;
            }
            let seq = s.seq;
            self.release_through(seq, Release::Timeout, up);
        }
    }

    /// Gives up every missing number up to and including `upto`: hands up
    /// the held packets up to `upto` in order (counted under `why`), then
    /// those that became in order. Nothing happens if `upto` is before the
    /// next expected number.
    pub fn release_through(&mut self, upto: Seq, why: Release, up: &mut impl FnMut(P)) {
        if !self.started || upto.before(self.next) {
            return;
        }
        // Past the window, nothing more can be held: stop at its end.
        let span = (upto.diff(self.next) as u32).min(WINDOW_SLOTS as u32 - 1);
        let end = self.next.add(span);
        let mut s = self.next;
        loop {
            let i = (s.0 & MASK) as usize;
            match self.take(i) {
                Some(pkt) => {
                    self.count_release(why);
                    up(pkt);
                }
                None => {
                    self.stats.gaps += 1;
                    let slot = &mut self.slots[i];
                    slot.seq = s;
                    slot.lost = why == Release::Loss;
                }
            }
            if s == end {
                break;
            }
            s = s.next();
        }
        self.next = upto.next();
        self.drain_in_order(up);
    }

    /// Hands up every held packet, in order, and moves past the newest.
    fn release_all(&mut self, why: Release, up: &mut impl FnMut(P)) {
        if self.held == 0 {
            return;
        }
        let mut highest = self.next;
        let mut i = self.oldest;
        while i != NIL {
            let s = &self.slots[i as usize - 1];
            if highest.before(s.seq) {
                highest = s.seq;
            }
            i = s.newer;
        }
        self.release_through(highest, why, up);
    }

    /// Hands every held packet to `f` (teardown: the caller frees them).
    pub fn drain(&mut self, f: &mut impl FnMut(P)) {
        while self.oldest != NIL {
            let i = self.oldest as usize - 1;
            if let Some(p) = self.take(i) {
                f(p);
            }
        }
    }

    fn count_release(&mut self, why: Release) {
        match why {
            Release::Timeout => self.stats.timeout += 1,
            Release::Loss => self.stats.loss += 1,
            // Flushes, jumps and resyncs are counted as events.
            Release::Flush | Release::Jump | Release::Resync => {}
        }
    }

    fn drain_in_order(&mut self, up: &mut impl FnMut(P)) {
        while self.held > 0 {
            let i = (self.next.0 & MASK) as usize;
            match self.take(i) {
                Some(pkt) => {
                    self.stats.in_order += 1;
                    self.next = self.next.next();
                    up(pkt);
                }
                None => break,
            }
        }
    }

    fn hold(&mut self, i: usize, seq: Seq, now: Instant, pkt: P) {
        let newest = self.newest;
        let link = i as u16 + 1;
        let s = &mut self.slots[i];
        s.pkt = Some(pkt);
        s.seq = seq;
        s.arrived = now;
        s.lost = false;
        s.older = newest;
        s.newer = NIL;
        if newest == NIL {
            self.oldest = link;
        } else {
            self.slots[newest as usize - 1].newer = link;
        }
        self.newest = link;
        self.held += 1;
    }

    /// Empties slot `i`, unlinking it from the arrival chain.
    fn take(&mut self, i: usize) -> Option<P> {
        let pkt = self.slots[i].pkt.take()?;
        let (older, newer) = (self.slots[i].older, self.slots[i].newer);
        if older == NIL {
            self.oldest = newer;
        } else {
            self.slots[older as usize - 1].newer = newer;
        }
        if newer == NIL {
            self.newest = older;
        } else {
            self.slots[newer as usize - 1].older = older;
        }
        self.held -= 1;
        Some(pkt)
    }
}
