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

use super::seq::Seq;
use super::MAX_LINKS;

/// Per link, the highest number it has passed.
#[derive(Default, Debug, Clone)]
pub struct LossDetector {
    passed: [Seq; MAX_LINKS],
    /// Links that have passed anything.
    seen: u8,
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
