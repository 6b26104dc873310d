// SPDX-License-Identifier: GPL-2.0

//! A spinlock that disables bottom halves (`spin_lock_bh`), for state that
//! softirq code (receive, transmit, timers) shares with process context
//! (procfs, sysfs, notifiers). Nothing takes such a lock in hard IRQ
//! context, so interrupts stay enabled; the `kernel` crate offers only the
//! plain and the IRQ-disabling kinds.

use super::bindings;
use core::marker::PhantomData;
use kernel::sync::lock::{Backend, Guard, Lock};

/// Proof that bottom halves are off on this CPU (softirq context, or BH
/// disabled) for as long as it lives: what the GRO cells (net/gro.rs) need
/// of their callers. Not `Send`: it holds only where it was made.
///
/// # Invariants
///
/// BH stays off on the CPU that made it for its whole lifetime `'a`.
pub struct Bh<'a>(PhantomData<(&'a (), *mut ())>);

impl Bh<'_> {
    /// # Safety
    ///
    /// Bottom halves are off on this CPU for as long as the witness lives
    /// (the caller ties its lifetime to that: a softirq callback's frame).
    pub(crate) unsafe fn new() -> Self {
        Bh(PhantomData)
    }
}

/// A guard that proves BH off while it is held.
pub trait BhOff {
    /// The proof, for as long as the guard is held.
    fn bh(&self) -> Bh<'_>;
}

impl<T: ?Sized> BhOff for SpinLockBhGuard<'_, T> {
    fn bh(&self) -> Bh<'_> {
        // SAFETY: `spin_lock_bh` disabled BH, and the guard keeps it so
        // until it is dropped, which the borrow outlives.
        unsafe { Bh::new() }
    }
}

/// Creates a [`SpinLockBh`] initialiser with a lockdep class of its own.
#[macro_export]
macro_rules! new_spinlock_bh {
    ($inner:expr, $name:literal $(,)?) => {
        $crate::net::lock::SpinLockBh::new(
            $inner,
            kernel::c_str!($name),
            kernel::static_lock_class!(),
        )
    };
}

/// A spinlock taken with bottom halves disabled.
pub type SpinLockBh<T> = Lock<T, SpinLockBhBackend>;

/// A guard of a [`SpinLockBh`].
pub type SpinLockBhGuard<'a, T> = Guard<'a, T, SpinLockBhBackend>;

/// The `spin_lock_bh` backend.
pub struct SpinLockBhBackend;

// SAFETY: `lock` and `unlock` take and release the same `spinlock_t`, so only
// one owner exists at a time; `relock` keeps the default, which calls `lock`.
unsafe impl Backend for SpinLockBhBackend {
    type State = kernel::bindings::spinlock_t;
    type GuardState = ();

    unsafe fn init(
        ptr: *mut Self::State,
        name: *const kernel::ffi::c_char,
        key: *mut kernel::bindings::lock_class_key,
    ) {
        // SAFETY: The caller guarantees `ptr` is valid for writes and `name`
        // and `key` live forever.
        unsafe { kernel::bindings::__spin_lock_init(ptr, name, key) }
    }

    unsafe fn lock(ptr: *mut Self::State) -> Self::GuardState {
        // SAFETY: The caller guarantees `ptr` was initialised; both bindings
        // name the same C `spinlock_t`.
        unsafe { bindings::spin_lock_bh(ptr.cast()) }
    }

    unsafe fn try_lock(ptr: *mut Self::State) -> Option<Self::GuardState> {
        // SAFETY: As in `lock`.
        (unsafe { bindings::spin_trylock_bh(ptr.cast()) } != 0).then_some(())
    }

    unsafe fn unlock(ptr: *mut Self::State, _guard_state: &Self::GuardState) {
        // SAFETY: The caller owns the lock, taken by `lock` or `try_lock`.
        unsafe { bindings::spin_unlock_bh(ptr.cast()) }
    }

    unsafe fn assert_is_held(ptr: *mut Self::State) {
        // SAFETY: The caller guarantees `ptr` was initialised.
        unsafe { kernel::bindings::spin_assert_is_held(ptr) }
    }
}
