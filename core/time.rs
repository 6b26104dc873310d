// SPDX-License-Identifier: GPL-2.0

//! Time as the caller's clock gives it: the core never reads a clock.
//!
//! The kernel passes `ktime_get()` nanoseconds; tests pass a fake clock. A
//! monotonic 64-bit nanosecond count does not wrap in practice (584 years).

/// A point on a monotonic clock, in nanoseconds.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug, Default)]
pub struct Instant(pub u64);

/// A span of time in nanoseconds.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug, Default)]
pub struct Duration(pub u64);

impl Duration {
    /// `ms` milliseconds.
    pub const fn from_ms(ms: u64) -> Duration {
        Duration(ms.saturating_mul(1_000_000))
    }

    /// `us` microseconds.
    pub const fn from_us(us: u64) -> Duration {
        Duration(us.saturating_mul(1_000))
    }

    /// Whole milliseconds, rounded down.
    pub const fn as_ms(self) -> u64 {
        self.0 / 1_000_000
    }
}

impl Instant {
    /// Time elapsed from `earlier` to `self`; zero if `earlier` is later.
    #[inline]
    pub fn since(self, earlier: Instant) -> Duration {
        Duration(self.0.saturating_sub(earlier.0))
    }

    /// `self + d`.
    #[inline]
    pub fn plus(self, d: Duration) -> Instant {
        Instant(self.0.saturating_add(d.0))
    }

    /// In ms, wrapping at 32 bits (49 days): for state a peer keeps small.
    #[inline]
    pub fn ms32(self) -> u32 {
        (self.0 / 1_000_000) as u32
    }
}
