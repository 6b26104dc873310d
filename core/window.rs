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
//!
//! The slots live in a [`ReorderBuf`] (8 KiB with pointer-sized packets)
//! that a window holds only while it holds packets: it takes one from the
//! caller's [`Buffers`] when a packet must wait and gives it back as soon
//! as nothing waits, so an idle peer costs only the [`Window`] itself. With
//! no buffer to be had (the memory budget is spent), a packet that would
//! wait goes up at once instead and its gap is given up (`unbuffered`).
//!
//! A packet may carry a run of consecutive numbers ([`Span`]): a slave's
//! GRO merged frames that followed one another on one link. It sits in the
//! slot of its first number and hands up all of them at once; a packet
//! held inside a run (a copy that came another way) goes up after it.
//!
//! What leaves the window other than in order is handed up in [`release`].

use super::seq::Seq;
use super::time::{Duration, Instant};
use core::ops::DerefMut;

mod release;

/// Slots in a window: the farthest ahead of the next expected packet a packet
/// can be held. A power of two.
pub const WINDOW_SLOTS: usize = 512;
/// Farthest a number can be behind the window's mark and still be taken
/// for one it passed ([`Window::passed_long_ago`]): behind a link that
/// lags by 80 ms, some thousands at 1 Gbit/s, well past the window's
/// slots; a number further behind is another numbering's.
pub const MARK_REACH: i32 = 1 << 16;
const MASK: u32 = WINDOW_SLOTS as u32 - 1;
/// Arrival-chain links are slot index + 1, so that 0, the all-zero state,
/// means "none".
const NIL: u16 = 0;
const LOST_WORDS: usize = WINDOW_SLOTS / 64;

/// After this many consecutive packets more than a window behind, each close
/// to the previous one, the peer is taken to have restarted its numbering.
pub const RESYNC_RUN: u32 = 8;

/// The most numbers one packet carries: GRO's 64 KiB at the smallest
/// segments worth merging, and well inside the window.
pub const MAX_SPAN: u32 = 64;

/// How many consecutive numbers a packet carries, from its own: more than
/// one for frames a slave's GRO merged (see [`MAX_SPAN`]).
pub trait Span {
    /// Numbers carried, 1 for an ordinary packet.
    fn span(&self) -> u32 {
        1
    }
}

impl Span for u32 {}
impl Span for u64 {}
impl<T> Span for core::ptr::NonNull<T> {}

/// A packet's numbers, within `1..=MAX_SPAN`.
pub fn span_of<P: Span>(p: &P) -> u32 {
    p.span().clamp(1, MAX_SPAN)
}

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
    /// Strict windows (sealed frames): packets whose number was already
    /// handed up, or far behind: replays, dropped.
    pub replays: u64,
    /// Restarts of the peer's numbering recognised.
    pub resyncs: u64,
    /// Packets that would have waited but went up at once: no reorder
    /// buffer was to be had (the memory budget is spent).
    pub unbuffered: u64,
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

/// One slot of a [`ReorderBuf`]. A held packet's number is not stored: it
/// is the one number in `next + 1 .. next + WINDOW_SLOTS` that maps to the
/// slot.
struct Slot<P> {
    pkt: Option<P>,
    /// Arrival time, in µs, wrapping (only differences under FAST_TOUT's
    /// maximum, 10 s, are ever taken).
    arrived_us: u32,
    /// Arrival-order chain of held slots.
    older: u16,
    newer: u16,
}

/// The slots of a window that holds packets: 16 bytes per slot with a
/// pointer-sized packet handle.
///
/// All-zero bytes are an empty buffer, so the kernel can allocate one
/// zeroed, in place. A buffer goes back to its [`Buffers`] empty.
pub struct ReorderBuf<P> {
    slots: [Slot<P>; WINDOW_SLOTS],
}

impl<P> Default for ReorderBuf<P> {
    fn default() -> Self {
        ReorderBuf {
            slots: core::array::from_fn(|_| Slot {
                pkt: None,
                arrived_us: 0,
                older: NIL,
                newer: NIL,
            }),
        }
    }
}

/// Where windows get their reorder buffers and give them back: the
/// driver's per-device pool, bounded by its memory budget.
pub trait Buffers<B> {
    /// An empty buffer, or `None` if the budget is spent.
    fn get(&mut self) -> Option<B>;
    /// Gives an empty buffer back.
    fn put(&mut self, buf: B);
}

/// A pool with no buffer to lend, for a window that needs none
/// ([`PeerRx::data_unpooled`](super::rx::PeerRx::data_unpooled), which
/// never gives one back either).
pub struct NoBuffers;

impl<B> Buffers<B> for NoBuffers {
    fn get(&mut self) -> Option<B> {
        None
    }

    fn put(&mut self, buf: B) {
        // Never reached (see above); the buffer's pool would miss it.
        debug_assert!(false, "a buffer given to NoBuffers");
        drop(buf);
    }
}

fn micros(t: Instant) -> u32 {
    (t.0 / 1000) as u32
}

/// Microseconds from `arrived_us` (of [`micros`]) to `now`; none if it
/// arrived after `now`, as a packet another CPU held after this one read
/// its clock did (the driver takes a peer's frames on several CPUs).
fn waited_us(now: Instant, arrived_us: u32) -> u64 {
    (micros(now).wrapping_sub(arrived_us) as i32).max(0) as u64
}

/// A reorder window.
///
/// All-zero bytes are the empty window ([`Window::new`]) when `B` is a
/// non-null pointer type, so the kernel can allocate one zeroed, in place.
///
/// # Invariants
///
/// - Every held packet's first number `s` satisfies `next < s`, its last
///   (`s + span - 1`) is before `next + WINDOW_SLOTS`, and it sits in slot
///   `s % WINDOW_SLOTS` of `buf`.
/// - `held` is the number of occupied slots, at most MAXBUF once `receive`
///   returns; the arrival chain from `oldest` links exactly those slots, in
///   arrival order. `held > 0` implies `buf` is `Some`.
/// - Bit `s % WINDOW_SLOTS` of `lost`, for each `s` in
///   `next - WINDOW_SLOTS .. next`, says whether the loss detector gave `s`
///   up (so that a late packet can tell), and bit `s % WINDOW_SLOTS` of
///   `gone` whether `s` was given up at all: every move of `next` writes
///   the bits of the numbers it passes.
pub struct Window<P, B> {
    buf: Option<B>,
    oldest: u16,
    newest: u16,
    held: u32,
    /// Everything before `next` was handed up or given up on.
    next: Seq,
    started: bool,
    far_run: u32,
    far_last: Seq,
    /// `next` at the mark ([`Window::mark`]), and when the mark was taken,
    /// in ms, wrapping (0: none since the window started or resynced; a
    /// window not started has none).
    mark: Seq,
    mark_ms: u32,
    lost: [u64; LOST_WORDS],
    /// Numbers given up for any reason (a late packet may still bring
    /// each once): read only when `strict`.
    gone: [u64; LOST_WORDS],
    /// Sealed frames (a device with a key): a number behind `next` is
    /// taken only once, and only if it was given up; nothing far behind
    /// is taken, and no run of it resynchronises (epochs do that). A
    /// packet carrying several numbers is taken only if every one of them
    /// would be ([`Window::would_take_run`]).
    strict: bool,
    /// Counters.
    pub stats: RxStats,
    _p: core::marker::PhantomData<P>,
}

impl<P, B> Default for Window<P, B> {
    fn default() -> Self {
        Self::new()
    }
}

impl<P: Span, B: DerefMut<Target = ReorderBuf<P>>> Window<P, B> {
    fn slot(&mut self, i: usize) -> &mut Slot<P> {
        // Only reached with packets held, when a buffer is attached.
        &mut self
            .buf
            .as_mut()
            .expect("held packets without a buffer")
            .slots[i]
    }

    fn slot_ref(&self, i: usize) -> &Slot<P> {
        &self
            .buf
            .as_ref()
            .expect("held packets without a buffer")
            .slots[i]
    }

    /// The numbers `p` carries.
    pub fn span(&self, p: &P) -> u32 {
        span_of(p)
    }

    /// The number of the packet held in slot `i`.
    fn seq_of(&self, i: usize) -> Seq {
        self.next.add((i as u32).wrapping_sub(self.next.0) & MASK)
    }

    /// When the oldest held packet reaches FAST_TOUT, if any is held: the
    /// time to run [`Window::expire`] next (`now` is the present).
    pub fn deadline(&self, now: Instant, fast_tout: Duration) -> Option<Instant> {
        if self.oldest == NIL {
            return None;
        }
        let waited = waited_us(now, self.slot_ref(self.oldest as usize - 1).arrived_us) * 1000;
        Some(now.plus(Duration(fast_tout.0.saturating_sub(waited))))
    }

    /// Takes packet `pkt` numbered `seq`, arrived at `now`. Packets become
    /// deliverable through `up`, in the order they must reach the stack. A
    /// packet that must wait takes a buffer from `bufs` if the window has
    /// none. Returns the packet if it must be dropped instead (a duplicate).
    pub fn receive(
        &mut self,
        seq: Seq,
        now: Instant,
        pkt: P,
        maxbuf: usize,
        bufs: &mut impl Buffers<B>,
        up: &mut impl FnMut(P),
    ) -> Option<P> {
        if !self.started {
            self.started = true;
            self.next = seq;
            // Strict: a number below the first one may still come, once
            // (from a slower link); epochs keep older recordings out.
            self.gone = [if self.strict { !0 } else { 0 }; LOST_WORDS];
        }
        let n = self.span(&pkt);
        if self.strict && !self.would_take_run(seq, n) {
            self.stats.replays += 1;
            return Some(pkt);
        }
        let last = seq.add(n - 1);
        let d = seq.diff(self.next);
        if d < 0 {
            if last.before(self.next) {
                return self.receive_late(seq, last, d, pkt, up);
            }
            self.receive_straddling(seq, last, pkt, up);
            return None;
        }
        self.far_run = 0;
        if d == 0 {
            self.stats.in_order += 1;
            up(pkt);
            self.next = self.pass(seq, last, up);
            self.drain_in_order(up);
            return None;
        }
        if d as usize + (last.diff(seq) as usize) >= WINDOW_SLOTS {
            self.stats.jumps += 1;
            // A whole window ahead: everything held goes up, every number
            // passed is a gap (each with its bits written), and it is in
            // order. A run that only reaches past the window's end moves
            // it just enough to be held.
            let upto = if d as usize >= WINDOW_SLOTS {
                seq
            } else {
                last.add((WINDOW_SLOTS as u32 - 1).wrapping_neg())
            };
            self.release_through(upto.add(u32::MAX), Release::Jump, up);
            return self.receive(seq, now, pkt, maxbuf, bufs, up);
        }
        let i = (seq.0 & MASK) as usize;
        if self.buf.is_none() {
            match bufs.get() {
                Some(b) => self.buf = Some(b),
                None => {
                    // Nowhere to wait: up at once, the gap before it given
                    // up (a packet from it will come late; TCP sorts it out).
                    self.stats.unbuffered += 1;
                    self.release_through(seq.add(u32::MAX), Release::Flush, up);
                    return self.receive(seq, now, pkt, maxbuf, bufs, up);
                }
            }
        }
        if let Some(held) = self.slot_ref(i).pkt.as_ref() {
            let longer = self.span(&pkt) > self.span(held);
            self.stats.duplicates += 1;
            if longer {
                // The longer run stays: its other numbers came in no other
                // packet (another link's GRO merged fewer).
                return self.slot(i).pkt.replace(pkt);
            }
            return Some(pkt);
        }
        if self.held as usize >= maxbuf {
            // §5.5: storing one more than MAXBUF hands everything up, this
            // packet included, in order.
            self.stats.flushes += 1;
            self.hold(i, now, pkt);
            self.release_all(Release::Flush, up);
            return None;
        }
        self.stats.held += 1;
        self.hold(i, now, pkt);
        None
    }

    /// A run `seq..=last` whose first numbers were given up and whose
    /// last ones are `next` on: those come late, as a packet of each
    /// would, and the rest brings `next` on.
    fn receive_straddling(&mut self, seq: Seq, last: Seq, pkt: P, up: &mut impl FnMut(P)) {
        self.stats.late += 1;
        self.far_run = 0;
        let mut s = seq;
        while s != self.next {
            if self.is_lost(s) {
                self.stats.late_loss += 1;
                self.set_lost(s, false);
            }
            self.set_gone(s, false);
            s = s.next();
        }
        up(pkt);
        self.next = self.pass(self.next, last, up);
        self.drain_in_order(up);
    }

    /// The buffer, once nothing is held: for the caller to give back.
    pub fn idle_buf(&mut self) -> Option<B> {
        if self.held == 0 {
            self.buf.take()
        } else {
            None
        }
    }

    /// Whether the window has a buffer.
    pub fn has_buf(&self) -> bool {
        self.buf.is_some()
    }

    /// A packet whose numbers `seq..=last` are all before `next` (`d`:
    /// `seq - next`); a strict window checked them (`would_take_run`).
    fn receive_late(
        &mut self,
        seq: Seq,
        last: Seq,
        d: i32,
        pkt: P,
        up: &mut impl FnMut(P),
    ) -> Option<P> {
        self.stats.late += 1;
        if d > -(WINDOW_SLOTS as i32) {
            let mut s = seq;
            loop {
                self.set_gone(s, false);
                if self.is_lost(s) {
                    self.stats.late_loss += 1;
                    self.set_lost(s, false);
                }
                if s == last {
                    break;
                }
                s = s.next();
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
        self.lost = [0; LOST_WORDS];
        // Strict: numbers below `next` of the new numbering may still come,
        // once; the old numbering's cannot (their epoch is older).
        self.gone = [if self.strict { !0 } else { 0 }; LOST_WORDS];
        self.next = next;
        self.started = true;
        self.far_run = 0;
        self.mark_ms = 0;
    }

    /// Notes where the window stands at `now` once the last note is two
    /// FAST_TOUT (`fast_tout_ms`) old: then [`Window::passed_long_ago`]
    /// can tell, at least half the time, what it passed more than
    /// FAST_TOUT before.
    pub fn mark(&mut self, now: Instant, fast_tout_ms: u32) {
        let ms = now.ms32().max(1);
        if self.mark_ms == 0 || ms.wrapping_sub(self.mark_ms) >= fast_tout_ms.saturating_mul(2) {
            self.mark = self.next;
            self.mark_ms = ms;
        }
    }

    /// How many numbers from `seq` on the window had passed at a mark
    /// more than FAST_TOUT (`fast_tout_ms`) before `now`: 0 when there is
    /// no such mark, or `seq` is not behind it (by less than
    /// [`MARK_REACH`]). Those numbers came, or were given up, more than
    /// FAST_TOUT before.
    pub fn passed_long_ago(&self, seq: Seq, now: Instant, fast_tout_ms: u32) -> u32 {
        // Both ms floored: more than `fast_tout_ms + 1` apart is more than
        // FAST_TOUT.
        if self.mark_ms == 0 || now.ms32().max(1).wrapping_sub(self.mark_ms) <= fast_tout_ms {
            return 0;
        }
        match self.mark.diff(seq) {
            d if d > 0 && d < MARK_REACH => d as u32,
            _ => 0,
        }
    }

    /// An empty window takes up where a forgotten peer's window stood:
    /// every number below `next` was handed up or given up long ago, and
    /// none may come any more.
    pub fn resume(&mut self, next: Seq) {
        debug_assert!(self.held == 0, "resume of a window that holds packets");
        self.lost = [0; LOST_WORDS];
        self.gone = [0; LOST_WORDS];
        self.next = next;
        self.started = true;
        self.far_run = 0;
        self.mark_ms = 0;
    }

    /// The peer restarted and the new numbering's first packet is yet to
    /// come (sealed frames: an authenticated new epoch on a frame that does
    /// not say where the numbering is): hands up everything held, and
    /// starts again at the next packet.
    pub fn restart(&mut self, up: &mut impl FnMut(P)) {
        let next = self.next;
        self.resync(next, up);
        self.started = false;
    }

    /// Whether a strict window would take `seq` (no side effect): a sealed
    /// frame's replay is refused before it counts anywhere. Not started:
    /// any; ahead: an empty slot, or a jump of less than 2^30 (a number
    /// 2^30 ahead is a recording from long ago); behind: a number given up
    /// and not yet come.
    pub fn would_take(&self, seq: Seq) -> bool {
        self.would_take_run(seq, 1)
    }

    /// [`Window::would_take`] for a packet carrying the `n` numbers from
    /// `seq` (frames a slave's GRO merged): every one of them, or none.
    /// Ahead, no held packet may carry any of them (one starting up to
    /// [`MAX_SPAN`] - 1 before may reach into them); behind, each must
    /// have been given up and not come since.
    pub fn would_take_run(&self, seq: Seq, n: u32) -> bool {
        if !self.started {
            return true;
        }
        let n = n.clamp(1, MAX_SPAN);
        let last = seq.add(n - 1);
        let d = seq.diff(self.next);
        if d <= -(WINDOW_SLOTS as i32) {
            return false;
        }
        // The numbers behind `next`.
        let mut s = seq;
        while s.before(self.next) {
            if !self.is_gone(s) {
                return false;
            }
            if s == last {
                return true;
            }
            s = s.next();
        }
        // The rest, from `s` (at or after `next`) to `last`.
        let ahead = s.diff(self.next) as u32;
        if ahead as usize >= WINDOW_SLOTS {
            return ahead < 1 << 30;
        }
        let Some(b) = self.buf.as_ref().filter(|_| self.held > 0) else {
            return true;
        };
        let held_at = |t: Seq| b.slots[(t.0 & MASK) as usize].pkt.as_ref();
        // A held packet starting before `s` (and after `next`) that reaches it.
        let back = ahead.min(MAX_SPAN - 1);
        for k in 1..=back {
            let t = s.add(k.wrapping_neg());
            if held_at(t).is_some_and(|p| span_of(p) > k) {
                return false;
            }
        }
        // One starting within the run (held packets lie within the window).
        let within = last.diff(s) as u32 + 1;
        let in_window = (WINDOW_SLOTS as u32 - ahead).min(within);
        (0..in_window).all(|k| held_at(s.add(k)).is_none())
    }

    /// Whether the window is strict.
    pub fn strict(&self) -> bool {
        self.strict
    }

    /// Makes the window strict (sealed frames) or not; see `strict`.
    pub fn set_strict(&mut self, strict: bool) {
        self.strict = strict;
    }

    fn hold(&mut self, i: usize, now: Instant, pkt: P) {
        let newest = self.newest;
        let link = i as u16 + 1;
        let s = self.slot(i);
        s.pkt = Some(pkt);
        s.arrived_us = micros(now);
        s.older = newest;
        s.newer = NIL;
        if newest == NIL {
            self.oldest = link;
        } else {
            self.slot(newest as usize - 1).newer = link;
        }
        self.newest = link;
        self.held += 1;
    }

    /// Empties slot `i`, unlinking it from the arrival chain.
    fn take(&mut self, i: usize) -> Option<P> {
        let buf = self.buf.as_mut()?;
        let pkt = buf.slots[i].pkt.take()?;
        let (older, newer) = (buf.slots[i].older, buf.slots[i].newer);
        if older == NIL {
            self.oldest = newer;
        } else {
            buf.slots[older as usize - 1].newer = newer;
        }
        if newer == NIL {
            self.newest = older;
        } else {
            buf.slots[newer as usize - 1].older = older;
        }
        self.held -= 1;
        Some(pkt)
    }

    fn is_lost(&self, s: Seq) -> bool {
        bit(&self.lost, s)
    }

    fn set_lost(&mut self, s: Seq, lost: bool) {
        set_bit(&mut self.lost, s, lost);
    }

    /// Records that `s` was handed up (`false`) or given up (`true`).
    fn set_gone(&mut self, s: Seq, gone: bool) {
        set_bit(&mut self.gone, s, gone);
    }

    fn is_gone(&self, s: Seq) -> bool {
        bit(&self.gone, s)
    }
}

/// Bit `s % WINDOW_SLOTS` of a per-number bitmap.
fn bit(bits: &[u64; LOST_WORDS], s: Seq) -> bool {
    let b = (s.0 & MASK) as usize;
    bits[b / 64] & (1 << (b % 64)) != 0
}

/// Clears the bits of the `n` numbers from `s` on (all of them from a
/// window's worth on).
#[inline]
fn clear_bits(bits: &mut [u64; LOST_WORDS], s: Seq, n: u32) {
    let (mut b, mut n) = ((s.0 & MASK) as usize, n as usize);
    while n > 0 {
        let (w, off) = (b / 64, b % 64);
        let k = n.min(64 - off);
        bits[w] &= !((u64::MAX >> (64 - k)) << off);
        b = (b + k) % WINDOW_SLOTS;
        n -= k;
    }
}

fn set_bit(bits: &mut [u64; LOST_WORDS], s: Seq, on: bool) {
    let b = (s.0 & MASK) as usize;
    if on {
        bits[b / 64] |= 1 << (b % 64);
    } else {
        bits[b / 64] &= !(1 << (b % 64));
    }
}

impl<P, B> Window<P, B> {
    /// An empty window; it starts at the first number it receives.
    pub fn new() -> Self {
        Window {
            buf: None,
            oldest: NIL,
            newest: NIL,
            held: 0,
            next: Seq(0),
            started: false,
            far_run: 0,
            far_last: Seq(0),
            mark: Seq(0),
            mark_ms: 0,
            lost: [0; LOST_WORDS],
            gone: [0; LOST_WORDS],
            strict: false,
            stats: RxStats::default(),
            _p: core::marker::PhantomData,
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
        self.held as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clear_bits_clears_what_set_bit_would_number_by_number() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for start in [0u32, 1, 63, 64, 100, 447, 448, 500, 511, 512, u32::MAX - 3] {
            for n in 1..=(2 * MAX_SPAN) {
                let mut bits = [0u64; LOST_WORDS];
                for w in bits.iter_mut() {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    *w = x;
                }
                let mut want = bits;
                for i in 0..n {
                    set_bit(&mut want, Seq(start).add(i), false);
                }
                clear_bits(&mut bits, Seq(start), n);
                assert_eq!(bits, want, "start {start}, n {n}");
            }
        }
    }
}
