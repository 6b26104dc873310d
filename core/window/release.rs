// SPDX-License-Identifier: GPL-2.0

//! What leaves the window other than in order, and why: FAST_TOUT, the
//! loss detector's proof, a flush at MAXBUF, a jump a window ahead, the
//! peer's restart; and the in-order run each such release lets go after
//! it.

use super::{
    clear_bits, waited_us, Duration, Instant, Release, ReorderBuf, Seq, Span, Window, MASK, NIL,
    WINDOW_SLOTS,
};
use core::ops::DerefMut;

impl<P: Span, B: DerefMut<Target = ReorderBuf<P>>> Window<P, B> {
    /// FAST_TOUT (§5.5): while the oldest held packet has waited `fast_tout`
    /// or more at `now`, hands it up together with everything held below it,
    /// giving up the gaps before it. Called on every arrival and from the
    /// periodic sweep.
    pub fn expire(&mut self, now: Instant, fast_tout: Duration, up: &mut impl FnMut(P)) {
        while self.oldest != NIL {
            let i = self.oldest as usize - 1;
            let waited = waited_us(now, self.slot_ref(i).arrived_us) * 1000;
            if waited < fast_tout.0 {
                break;
            }
            let seq = self.seq_of(i);
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
        let lost = why == Release::Loss;
        // Past the window, nothing more can be held: stop at its end (or
        // past it, where a held run reaches).
        let span = upto.diff(self.next) as u32;
        let end = self.next.add(span.min(WINDOW_SLOTS as u32 - 1));
        let mut s = self.next;
        while !end.before(s) {
            let i = (s.0 & MASK) as usize;
            match self.take(i) {
                Some(pkt) => {
                    self.count_release(why);
                    let last = s.add(self.span(&pkt) - 1);
                    up(pkt);
                    s = self.pass(s, last, up);
                }
                None => {
                    self.stats.gaps += 1;
                    self.set_lost(s, lost);
                    self.set_gone(s, true);
                    s = s.next();
                }
            }
        }
        if !upto.before(s) {
            // Numbers beyond the window: none held, each a gap; only the
            // last WINDOW_SLOTS of them keep a bit.
            let beyond = upto.diff(s) as u32 + 1;
            self.stats.gaps += u64::from(beyond);
            let mut t = s.add(beyond.saturating_sub(WINDOW_SLOTS as u32));
            loop {
                self.set_lost(t, lost);
                self.set_gone(t, true);
                if t == upto {
                    break;
                }
                t = t.next();
            }
            s = upto.next();
        }
        self.next = s;
        self.drain_in_order(up);
    }

    /// Hands up every held packet, in order, and moves past the newest.
    pub(super) fn release_all(&mut self, why: Release, up: &mut impl FnMut(P)) {
        if self.held == 0 {
            return;
        }
        let mut far = 0;
        let mut i = self.oldest;
        while i != NIL {
            let idx = i as usize - 1;
            far = far.max((idx as u32).wrapping_sub(self.next.0) & MASK);
            i = self.slot_ref(idx).newer;
        }
        let highest = self.next.add(far);
        self.release_through(highest, why, up);
    }

    /// Hands every held packet up, in order, as a MAXBUF flush does.
    pub fn flush(&mut self, up: &mut impl FnMut(P)) {
        if self.held > 0 {
            self.stats.flushes += 1;
            self.release_all(Release::Flush, up);
        }
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

    pub(super) fn count_release(&mut self, why: Release) {
        match why {
            Release::Timeout => self.stats.timeout += 1,
            Release::Loss => self.stats.loss += 1,
            // Flushes, jumps and resyncs are counted as events.
            Release::Flush | Release::Jump | Release::Resync => {}
        }
    }

    pub(super) fn drain_in_order(&mut self, up: &mut impl FnMut(P)) {
        while self.held > 0 {
            let i = (self.next.0 & MASK) as usize;
            match self.take(i) {
                Some(pkt) => {
                    self.stats.in_order += 1;
                    let s = self.next;
                    let last = s.add(self.span(&pkt) - 1);
                    up(pkt);
                    self.next = self.pass(s, last, up);
                }
                None => break,
            }
        }
    }

    /// Numbers `from..=last` went up (a packet carrying them was just
    /// handed up, `from` at or after `next`): writes their bits and hands
    /// up what is held inside the run (a copy that came another way, which
    /// may reach further: the run then ends where it does). Returns the
    /// number after the run.
    pub(super) fn pass(&mut self, from: Seq, last: Seq, up: &mut impl FnMut(P)) -> Seq {
        if self.held == 0 && from != last {
            // Nothing held inside the run: its bits at once, not by number
            // (a merged packet carries up to `MAX_SPAN`).
            let n = last.diff(from) as u32 + 1;
            clear_bits(&mut self.lost, from, n);
            clear_bits(&mut self.gone, from, n);
            return last.next();
        }
        let mut last = last;
        let mut s = from;
        loop {
            self.set_lost(s, false);
            self.set_gone(s, false);
            if s == last {
                return last.next();
            }
            s = s.next();
            if self.held > 0 {
                if let Some(q) = self.take((s.0 & MASK) as usize) {
                    self.stats.in_order += 1;
                    let q_last = s.add(self.span(&q) - 1);
                    if q_last.diff(last) > 0 {
                        last = q_last;
                    }
                    up(q);
                }
            }
        }
    }
}
