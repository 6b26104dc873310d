// SPDX-License-Identifier: GPL-2.0

//! A value that readers find without a lock, under RCU, while a writer in
//! process context replaces it: the pattern of `rcu_assign_pointer`,
//! `rcu_dereference`, and `synchronize_net` before the old value is freed.

use core::marker::PhantomData;
use core::sync::atomic::{AtomicPtr, Ordering};
use kernel::alloc::KBox;
use kernel::sync::rcu::Guard;

/// An RCU read-side section the holder is in: one it opened ([`Guard`]),
/// or one its caller holds ([`InRcu`]).
///
/// # Safety
///
/// While a value of the implementing type lives, the task holding it is in
/// an RCU read-side section.
pub unsafe trait ReadSection {}

// SAFETY: A guard is the section it opened.
unsafe impl ReadSection for Guard {}

/// An RCU read-side section the kernel holds around a callback (GRO's
/// `dev_gro_receive`, say), so that the callback need not open its own.
///
/// # Invariants
///
/// Made only by [`InRcu::assume`], whose caller is in such a section for
/// as long as the value lives; not `Send`, so it stays with that task.
pub struct InRcu(PhantomData<*mut ()>);

impl InRcu {
    /// The section the caller is in.
    ///
    /// # Safety
    ///
    /// The caller is in an RCU read-side section, which lasts as long as
    /// the returned value.
    pub unsafe fn assume() -> InRcu {
        InRcu(PhantomData)
    }
}

// SAFETY: By the invariant, a section is held while it lives.
unsafe impl ReadSection for InRcu {}

/// An optional `T` published under RCU.
///
/// # Invariants
///
/// `ptr` is NULL or from [`KBox::into_raw`], owned by this.
pub struct RcuBox<T> {
    ptr: AtomicPtr<T>,
}

// SAFETY: The box owns its `T` (it may be freed from any CPU: `Send`) and
// hands out shared references to every CPU (`Sync`).
unsafe impl<T: Send + Sync> Send for RcuBox<T> {}
// SAFETY: As above.
unsafe impl<T: Send + Sync> Sync for RcuBox<T> {}

impl<T> Default for RcuBox<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> RcuBox<T> {
    /// Nothing published.
    pub const fn new() -> RcuBox<T> {
        RcuBox {
            ptr: AtomicPtr::new(core::ptr::null_mut()),
        }
    }

    /// Publishes `value`; the one it replaces is freed once every reader
    /// that could see it is done. Process context (sleeps); writers are
    /// serialised by the caller.
    pub fn replace(&self, value: Option<KBox<T>>) {
        let new = value.map_or(core::ptr::null_mut(), KBox::into_raw);
        let old = self.ptr.swap(new, Ordering::AcqRel);
        if !old.is_null() {
            super::synchronize_net();
            // SAFETY: `old` was ours (invariant), from `KBox::into_raw`, and
            // no reader holds it after the grace period.
            drop(unsafe { KBox::from_raw(old) });
        }
    }

    /// The value, for as long as the RCU read section `_rcu` lasts.
    pub fn get<'a, R: ReadSection>(&'a self, _rcu: &'a R) -> Option<&'a T> {
        let p = self.ptr.load(Ordering::Acquire);
        // SAFETY: A published value stays alive until a grace period after
        // it is replaced (`replace`), which `_rcu` holds off.
        (!p.is_null()).then(|| unsafe { &*p })
    }
}

impl<T> Drop for RcuBox<T> {
    fn drop(&mut self) {
        let p = *self.ptr.get_mut();
        if !p.is_null() {
            // SAFETY: Ours (invariant). `get`'s borrows end with `self`'s;
            // readers that found it through raw pointers (a lower device's
            // GSO, say) are waited out by the owner's teardown before it
            // is dropped.
            drop(unsafe { KBox::from_raw(p) });
        }
    }
}
