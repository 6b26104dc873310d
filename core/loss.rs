// SPDX-License-Identifier: GPL-2.0

//! Early loss detection, "all NICs passed" (driver paper §4.6, Fig. 6).
//!
//! One link never reorders its own packets. So once every link that carries
//! a peer's traffic has delivered a packet numbered above a missing packet A,
//! A can no longer arrive: it is lost, and the window stops waiting for it
//! instead of waiting FAST_TOUT. (PPP multilink's `minseq` is the same rule.)
//!
//! Which links take part is the caller's `active` mask: links that are up and
//! not failed in either direction, i.e. those the peer sends on. A failed
//! link carries nothing, so waiting for it to pass a gap would turn every
//! loss into a FAST_TOUT wait. An active link that has not delivered anything
//! yet blocks detection (its first packet may still be on its way), and a
//! link that comes back takes part again with its old mark: both can only
//! hold detection back, never declare a packet lost that may still arrive.
//!
//! A heartbeat also "passes": it carries the sender's next number for us, so
//! every packet below it that was sent on the heartbeat's link has arrived.
//!
//! A link that leaves the active set still takes part for FAST_TOUT
//! ([`LossDetector::taking_part`]): the peer sent on it until it heard (or
//! we decided) otherwise, and what it sent is still on its way. A failure
//! judged wrongly (a CPU that held one link's frames back, the peer's news
//! that it hears nothing from us on a link its data still crosses) would
//! otherwise give up packets that then arrive. Past FAST_TOUT the window's
//! timeout releases them anyway, so the wait costs nothing beyond it.

use super::seq::Seq;
use super::time::{Duration, Instant};
use super::MAX_LINKS;

/// Per link, the highest number it has passed.
#[derive(Default, Debug, Clone)]
pub struct LossDetector {
    passed: [Seq; MAX_LINKS],
    /// Links that have passed anything.
    seen: u8,
    /// The active set as last seen, and the links that left it since
    /// `left_ms`, the last time one did (a wrapping millisecond clock,
    /// which keeps a peer within its memory budget).
    was_active: u8,
    leaving: u8,
    left_ms: u32,
    /// Links whose slave has no carrier ([`LossDetector::no_carrier`]).
    gone: u8,
}

impl LossDetector {
    /// Link `link` delivered (or, for a heartbeat, passed) number `seq`.
    #[inline]
    pub fn passed(&mut self, link: usize, seq: Seq) {
        let bit = 1u8 << link;
        if self.seen & bit == 0 {
            self.seen |= bit;
            self.passed[link] = seq;
        } else {
            self.passed[link] = self.passed[link].max(seq);
        }
    }

    /// Links that have passed anything.
    pub fn seen(&self) -> u8 {
        self.seen
    }

    /// The links taking part in detection at `now`: the `active` ones, and
    /// those that left the active set less than `grace` (FAST_TOUT) ago,
    /// as this clock counts (in whole ms, so the grace may run up to 1 ms
    /// long). Links that left together share a deadline: a later
    /// departure extends it only for those still within theirs.
    pub fn taking_part(&mut self, active: u8, now: Instant, grace: Duration) -> u8 {
        let now_ms = now.ms32();
        if self.leaving != 0 && u64::from(now_ms.wrapping_sub(self.left_ms)) > grace.as_ms() {
            self.leaving = 0;
        }
        let left = self.was_active & !active & !self.gone;
        if left != 0 {
            self.leaving |= left;
            self.left_ms = now_ms;
        }
        self.was_active = active;
        self.leaving &= !(active | self.gone);
        active | self.leaving
    }

    /// The links whose slave has no carrier, before each
    /// [`LossDetector::taking_part`]: nothing more arrives on them, so they
    /// stop taking part as they leave.
    pub fn no_carrier(&mut self, links: u8) {
        self.gone = links;
    }

    /// The highest number every active link has passed, if it is at or after
    /// `next` (the window's next expected number): every number up to it that
    /// has not arrived is lost.
    #[inline]
    pub fn lost_through(&self, active: u8, next: Seq) -> Option<Seq> {
        if active == 0 || active & !self.seen != 0 {
            return None;
        }
        let mut mask = active;
        let mut min = i32::MAX;
        while mask != 0 {
            let l = mask.trailing_zeros() as usize;
            mask &= mask - 1;
            min = min.min(self.passed[l].diff(next));
        }
        (min >= 0).then(|| next.add(min as u32))
    }

    /// Forgets every link's mark (the peer restarted its numbering).
    pub fn reset(&mut self) {
        self.seen = 0;
    }
}
