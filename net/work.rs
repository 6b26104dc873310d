// SPDX-License-Identifier: GPL-2.0

//! Work items (`delayed_work`, process context) inside a device's private
//! data, each calling back into the driver with the device: what a timer
//! or the data path hands over when it needs to sleep or to take RTNL.
//!
//! As [`super::timer`]: a driver embeds a [`Work<T, ID>`] in its private
//! data `T` and implements [`DeviceWork<ID>`] for it through
//! [`device_work!`]; the work is queued only through its container
//! ([`DeviceWork::work`]), and cancelled for good when the data is dropped.

use super::bindings;
use super::device::{Driver, NetDevice};
use core::marker::PhantomData;
use kernel::prelude::*;
use kernel::types::Opaque;

/// A `delayed_work` that runs `T`'s [`DeviceWork<ID>::run`].
///
/// # Invariants
///
/// Initialised (`INIT_DELAYED_WORK`) by [`Work::new`] with `T`'s callback,
/// and pinned where it was made. It is queued only through
/// [`DeviceWork::work`], hence only as the field of a `T` that
/// `DeviceWork<ID>::OFFSET` names.
#[pin_data(PinnedDrop)]
pub struct Work<T, const ID: u64> {
    #[pin]
    w: Opaque<bindings::delayed_work>,
    _of: PhantomData<fn(&T)>,
}

// SAFETY: The workqueue API serialises its own state.
unsafe impl<T, const ID: u64> Send for Work<T, ID> {}
// SAFETY: As above.
unsafe impl<T, const ID: u64> Sync for Work<T, ID> {}

/// A driver whose private data holds work item number `ID`.
///
/// # Safety
///
/// `OFFSET` is the byte offset of a [`Work<Self, ID>`] field within `Self`
/// (implement it with [`device_work!`], which checks the type).
pub unsafe trait DeviceWork<const ID: u64>: Driver + Sized {
    /// Where the work item is.
    const OFFSET: usize;

    /// The work runs (process context; it may sleep, and may queue itself
    /// again).
    fn run(dev: &NetDevice<Self>);

    /// Work item `ID` of `dev`'s data: the one way to queue it, so that a
    /// queued item is always inside a device's data (a `Self` made anywhere
    /// else has no work to queue).
    fn work(dev: &NetDevice<Self>) -> WorkRef<'_, Self, ID> {
        // SAFETY: `OFFSET` is that of a `Work<Self, ID>` field of `Self`
        // (the trait's contract), so the pointer is to that field, which
        // lives as long as the device's data.
        WorkRef(unsafe {
            &*core::ptr::from_ref(dev.data())
                .cast::<u8>()
                .add(Self::OFFSET)
                .cast::<Work<Self, ID>>()
        })
    }
}

/// Implements [`DeviceWork`]: `device_work!(Type, field, ID, callback)`.
#[macro_export]
macro_rules! device_work {
    ($t:ty, $field:ident, $id:literal, $cb:path) => {
        // SAFETY: The offset is that of the named field, whose type the
        // function below checks is `Work<$t, $id>`.
        unsafe impl $crate::net::work::DeviceWork<$id> for $t {
            const OFFSET: usize = {
                const fn field_is_the_work(d: &$t) -> &$crate::net::work::Work<$t, $id> {
                    &d.$field
                }
                let _ = field_is_the_work;
                core::mem::offset_of!($t, $field)
            };
            fn run(dev: &$crate::net::device::NetDevice<$t>) {
                $cb(dev)
            }
        }
    };
}

/// A [`Work`] reached through its container ([`DeviceWork::work`]).
pub struct WorkRef<'a, T, const ID: u64>(&'a Work<T, ID>);

/// The C callback `work_func_t`.
///
/// # Safety
///
/// Only the kernel calls it, for the work item this module initialised,
/// in process context.
unsafe extern "C" fn work_fn<T: DeviceWork<ID>, const ID: u64>(w: *mut bindings::work_struct) {
    // SAFETY: The work is the `work` of a `delayed_work` inside a
    // `Work<T, ID>` (the only one whose initialisation names this
    // callback), queued only through `DeviceWork::work`, hence the field at
    // `OFFSET` of a `T`, the private data of a registered device; the data
    // outlives the work (dropping it cancels the work and waits for it).
    unsafe {
        let dw = bindings::to_delayed_work(w);
        let data = &*dw.cast::<u8>().sub(T::OFFSET).cast::<T>();
        T::run(NetDevice::from_data(data));
    }
}

impl<T: DeviceWork<ID>, const ID: u64> Work<T, ID> {
    /// A work item that runs `T`'s [`DeviceWork<ID>::run`], idle.
    pub fn new() -> impl PinInit<Self> {
        pin_init!(Self {
            // SAFETY: `slot` is valid for the call; the work is pinned.
            w <- Opaque::ffi_init(|slot| unsafe { bindings::init_delayed_work(slot, Some(work_fn::<T, ID>)) }),
            _of: PhantomData,
        })
    }
}

impl<T, const ID: u64> WorkRef<'_, T, ID> {
    /// Queues the work to run `ms` milliseconds from now, unless it is
    /// pending already (then it runs when it was to). Any context.
    pub fn queue_ms(&self, ms: u32) {
        // SAFETY: Initialised (invariant); queueing has no context rule.
        unsafe {
            bindings::schedule_delayed_work(self.0.w.get(), bindings::msecs_to_jiffies(ms));
        }
    }
}

impl<T, const ID: u64> WorkRef<'_, T, ID> {
    /// Queues the work to run now on the high-priority workqueue (whose
    /// workers run at a raised priority), unless it is pending already:
    /// for work that a listener waits on. Any context.
    pub fn queue_highpri(&self) {
        // SAFETY: Initialised (invariant); queueing has no context rule.
        unsafe {
            bindings::queue_work_highpri(self.0.w.get());
        }
    }

    /// Disables the work for good (queueing it does nothing from here on)
    /// and waits for a run under way. Process context; the caller holds
    /// nothing the work takes.
    pub fn disable_sync(&self) {
        // SAFETY: Initialised (invariant); the caller's guarantee.
        unsafe { bindings::disable_delayed_work_sync(self.0.w.get()) };
    }
}

#[pinned_drop]
impl<T, const ID: u64> PinnedDrop for Work<T, ID> {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: Initialised (invariant); disables it for good (queueing
        // it afterwards does nothing), even if it queues itself again, and
        // waits for a run under way. Process context: the data is dropped
        // by `priv_destructor`.
        unsafe { bindings::disable_delayed_work_sync(self.w.get()) };
    }
}
