// SPDX-License-Identifier: GPL-2.0

//! Kernel timers (`timer_list`, softirq context) inside a device's private
//! data, each calling back into the driver with the device.
//!
//! A driver embeds a [`Timer<T, ID>`] in its private data `T` and
//! implements [`DeviceTimer<ID>`] for it through [`device_timer!`], which
//! names the field (and checks its type). The timer runs
//! [`DeviceTimer::fired`] with the device; it is stopped synchronously by
//! [`TimerRef::stop`] and for good when the data is dropped.
//!
//! A timer is armed or stopped only through its container
//! ([`DeviceTimer::timer`]), as the kernel crate's `HrTimer` is started
//! through `HasHrTimer`, and only in a device's data: a `Timer`, or a `T`,
//! made anywhere else has no way to be armed, so its callback can never
//! take memory around it for a device's `T`.

use super::bindings;
use super::device::{Driver, NetDevice};
use super::lock::Bh;
use core::marker::PhantomData;
use kernel::prelude::*;
use kernel::types::Opaque;

/// A `timer_list` that calls `T`'s [`DeviceTimer<ID>::fired`].
///
/// # Invariants
///
/// Set up (`timer_setup`) by [`Timer::new`] with `T`'s callback, and
/// pinned where it was made. It is armed only through
/// [`DeviceTimer::timer`], hence only as the field of a `T` that
/// `DeviceTimer<ID>::OFFSET` names.
#[pin_data(PinnedDrop)]
pub struct Timer<T, const ID: u64> {
    #[pin]
    t: Opaque<bindings::timer_list>,
    _of: PhantomData<fn(&T)>,
}

// SAFETY: The timer API serialises its own state.
unsafe impl<T, const ID: u64> Send for Timer<T, ID> {}
// SAFETY: As above.
unsafe impl<T, const ID: u64> Sync for Timer<T, ID> {}

/// A driver whose private data holds timer number `ID`.
///
/// # Safety
///
/// `OFFSET` is the byte offset of a [`Timer<Self, ID>`] field within
/// `Self` (implement it with [`device_timer!`], which checks the type).
pub unsafe trait DeviceTimer<const ID: u64>: Driver + Sized {
    /// Where the timer is.
    const OFFSET: usize;

    /// The timer fired (softirq context: `bh`).
    fn fired(dev: &NetDevice<Self>, bh: &Bh<'_>);

    /// Timer `ID` of `dev`'s data: the one way to arm or stop it, so that
    /// an armed timer is always inside a device's data (a `Self` made
    /// anywhere else has no timer to arm).
    fn timer(dev: &NetDevice<Self>) -> TimerRef<'_, Self, ID> {
        // SAFETY: `OFFSET` is that of a `Timer<Self, ID>` field of `Self`
        // (the trait's contract), so the pointer is to that field, which
        // lives as long as the device's data.
        TimerRef(unsafe {
            &*core::ptr::from_ref(dev.data())
                .cast::<u8>()
                .add(Self::OFFSET)
                .cast::<Timer<Self, ID>>()
        })
    }
}

/// Implements [`DeviceTimer`]: `device_timer!(Type, field, ID, callback)`.
#[macro_export]
macro_rules! device_timer {
    ($t:ty, $field:ident, $id:literal, $cb:path) => {
        // SAFETY: The offset is that of the named field, whose type the
        // function below checks is `Timer<$t, $id>`.
        unsafe impl $crate::net::timer::DeviceTimer<$id> for $t {
            const OFFSET: usize = {
                const fn field_is_the_timer(d: &$t) -> &$crate::net::timer::Timer<$t, $id> {
                    &d.$field
                }
                let _ = field_is_the_timer;
                core::mem::offset_of!($t, $field)
            };
            fn fired(dev: &$crate::net::device::NetDevice<$t>, bh: &$crate::net::lock::Bh<'_>) {
                $cb(dev, bh)
            }
        }
    };
}

/// A [`Timer`] reached through its container ([`DeviceTimer::timer`]).
pub struct TimerRef<'a, T, const ID: u64>(&'a Timer<T, ID>);

/// The C callback `timer_fn`.
///
/// # Safety
///
/// Only the kernel calls it, through the table this module fills in, with
/// the arguments and in the context that table's contract gives.
unsafe extern "C" fn timer_fn<T: DeviceTimer<ID>, const ID: u64>(t: *mut bindings::timer_list) {
    // SAFETY: The timer is a `Timer<T, ID>` (the only one whose setup names
    // this callback), armed only through `DeviceTimer::timer`, hence the
    // field at `OFFSET` of a `T`, which is the private data of a registered
    // device; the data outlives the timer (dropping it shuts the timer down
    // and waits for this callback).
    unsafe {
        let data = &*t.cast::<u8>().sub(T::OFFSET).cast::<T>();
        // Timer callbacks run in softirq: for this call.
        let bh = Bh::new();
        T::fired(NetDevice::from_data(data), &bh);
    }
}

/// The expiry no sooner than `ms` from now: the tick under way is partly
/// gone, so `ms` in jiffies from now could fire up to a jiffy early.
fn after_ms(ms: u32) -> kernel::ffi::c_ulong {
    // SAFETY: Reading the tick count and converting a time have no
    // preconditions.
    unsafe {
        bindings::jiffies()
            .wrapping_add(bindings::msecs_to_jiffies(ms))
            .wrapping_add(1)
    }
}

impl<T: DeviceTimer<ID>, const ID: u64> Timer<T, ID> {
    /// A timer that calls `T`'s [`DeviceTimer<ID>::fired`], idle.
    pub fn new() -> impl PinInit<Self> {
        pin_init!(Self {
            // SAFETY: `slot` is valid for the call; the timer is pinned.
            t <- Opaque::ffi_init(|slot| unsafe { bindings::timer_setup(slot, Some(timer_fn::<T, ID>)) }),
            _of: PhantomData,
        })
    }
}

impl<T, const ID: u64> TimerRef<'_, T, ID> {
    /// Fires `ms` milliseconds from now (moves a pending timer).
    pub fn arm_ms(&self, ms: u32) {
        // SAFETY: Set up (invariant).
        unsafe {
            bindings::mod_timer(
                self.0.t.get(),
                bindings::jiffies().wrapping_add(bindings::msecs_to_jiffies(ms)),
            )
        };
    }

    /// Fires no sooner than `ms` milliseconds from now, at the first tick
    /// after (as `msleep` counts), unless it is pending for earlier
    /// (`timer_reduce`): arms an idle timer, never delays a pending one.
    pub fn reduce_ms(&self, ms: u32) {
        // SAFETY: Set up (invariant).
        unsafe { bindings::timer_reduce(self.0.t.get(), after_ms(ms)) };
    }

    /// Fires no sooner than `ms` milliseconds from now, at the first tick
    /// after (moves a pending timer).
    pub fn arm_after_ms(&self, ms: u32) {
        // SAFETY: Set up (invariant).
        unsafe { bindings::mod_timer(self.0.t.get(), after_ms(ms)) };
    }

    /// Stops the timer for good (`timer_shutdown_sync`): waits for a running
    /// callback, and arming it afterwards does nothing. Process context.
    pub fn shutdown(&self) {
        // SAFETY: Set up (invariant); process context.
        unsafe { bindings::timer_shutdown_sync(self.0.t.get()) };
    }

    /// Stops the timer and waits for a running callback. Process context;
    /// the caller makes sure the callback does not re-arm it.
    pub fn stop(&self) {
        // SAFETY: Set up (invariant); process context.
        unsafe { bindings::timer_delete_sync(self.0.t.get()) };
    }
}

#[pinned_drop]
impl<T, const ID: u64> PinnedDrop for Timer<T, ID> {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: Set up (invariant); stops it for good, even if a callback
        // re-arms, and waits for it.
        unsafe { bindings::timer_shutdown_sync(self.t.get()) };
    }
}
