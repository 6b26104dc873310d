// SPDX-License-Identifier: GPL-2.0

//! 32-bit sequence numbers that survive wrap-around (RFC 1982 arithmetic).

use core::cmp::Ordering;

/// A per-peer packet sequence number; `+1` per packet, wrapping at 2^32.
///
/// Two numbers compare by their signed distance, so the order is right as long
/// as they are less than 2^31 apart, whatever their absolute values.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Default)]
pub struct Seq(pub u32);

impl Seq {
    /// The number after this one.
    #[inline]
    pub fn next(self) -> Seq {
        Seq(self.0.wrapping_add(1))
    }

    /// This number moved by `n` (wrapping). A method, not `Add`: `+` on a
    /// sequence number would read as arithmetic that can overflow.
    #[inline]
    #[allow(clippy::should_implement_trait)]
    pub fn add(self, n: u32) -> Seq {
        Seq(self.0.wrapping_add(n))
    }

    /// Signed distance from `other` to `self`: positive when `self` is later.
    #[inline]
    pub fn diff(self, other: Seq) -> i32 {
        self.0.wrapping_sub(other.0) as i32
    }

    /// Whether `self` comes strictly before `other`.
    #[inline]
    pub fn before(self, other: Seq) -> bool {
        self.diff(other) < 0
    }

    /// Wrap-aware ordering (not a total order: only meaningful within 2^31).
    #[inline]
    pub fn cmp_wrapping(self, other: Seq) -> Ordering {
        self.diff(other).cmp(&0)
    }

    /// The later of two numbers.
    #[inline]
    pub fn max(self, other: Seq) -> Seq {
        if self.before(other) {
            other
        } else {
            self
        }
    }
}
