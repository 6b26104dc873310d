// SPDX-License-Identifier: GPL-2.0

//! Slab caches of one object type, as WireGuard keeps its peers in a
//! `kmem_cache`: objects of an odd size (a peer is 1.2 KiB) cost their size,
//! not the next power of two that `kmalloc` would round them to.

use super::bindings;
use core::marker::PhantomData;
use core::ops::{Deref, DerefMut};
use core::ptr::NonNull;
use kernel::prelude::*;
use kernel::str::CStr;
use kernel::sync::Arc;

/// A `kmem_cache` of `T`s; destroyed when the last reference goes, which
/// every object holds, so it outlives them all.
///
/// # Invariants
///
/// `ptr` is a cache made for objects of `T`'s size and alignment.
pub struct Cache<T> {
    ptr: NonNull<bindings::kmem_cache>,
    _t: PhantomData<T>,
}

// SAFETY: The slab allocator is safe to call from any thread.
unsafe impl<T: Send> Send for Cache<T> {}
// SAFETY: As above; the cache has no state of ours.
unsafe impl<T: Send> Sync for Cache<T> {}

impl<T> Cache<T> {
    /// A cache named `name` (`/proc/slabinfo`; the slab allocator keeps a
    /// copy), its objects charged to the allocating task's memory cgroup
    /// (`SLAB_ACCOUNT`); process context.
    pub fn new(name: &CStr) -> Result<Arc<Self>> {
        let (size, align) = (
            core::mem::size_of::<T>() as u32,
            core::mem::align_of::<T>() as u32,
        );
        // SAFETY: `name` is NUL-terminated and copied by the callee; size
        // and align are those of a Rust type.
        let ptr = unsafe { bindings::kmem_cache_create_account(name.as_char_ptr(), size, align) };
        let ptr = NonNull::new(ptr).ok_or(ENOMEM)?;
        Ok(Arc::new(
            Cache {
                ptr,
                _t: PhantomData,
            },
            GFP_KERNEL,
        )?)
    }

    /// A new object, all bytes zero, from any context (GFP_ATOMIC, quietly:
    /// the caller counts a failure); `None` when memory is short.
    ///
    /// # Safety
    ///
    /// All-zero bytes must be a valid `T`.
    pub unsafe fn alloc_zeroed(this: &Arc<Self>) -> Option<CacheBox<T>> {
        // SAFETY: `ptr` is a live cache (type invariant).
        let obj = unsafe {
            bindings::kmem_cache_zalloc(
                this.ptr.as_ptr(),
                kernel::bindings::GFP_ATOMIC | kernel::bindings::__GFP_NOWARN,
            )
        };
        let ptr = NonNull::new(obj.cast::<T>())?;
        // INVARIANT: A zeroed object of the cache, valid per the caller.
        Some(CacheBox {
            ptr,
            cache: this.clone(),
        })
    }
}

impl<T> Drop for Cache<T> {
    fn drop(&mut self) {
        // SAFETY: Every object holds a reference, so none is left.
        unsafe { bindings::kmem_cache_destroy(self.ptr.as_ptr()) };
    }
}

/// An object of a [`Cache`], owned like a `KBox`.
///
/// # Invariants
///
/// `ptr` is a valid, initialised `T` allocated from `cache`, owned by this.
pub struct CacheBox<T> {
    ptr: NonNull<T>,
    cache: Arc<Cache<T>>,
}

// SAFETY: Owns its `T` like a box.
unsafe impl<T: Send> Send for CacheBox<T> {}
// SAFETY: As above.
unsafe impl<T: Sync> Sync for CacheBox<T> {}

impl<T> Deref for CacheBox<T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: Valid and owned (type invariant).
        unsafe { self.ptr.as_ref() }
    }
}

impl<T> DerefMut for CacheBox<T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: Valid and owned exclusively (type invariant).
        unsafe { self.ptr.as_mut() }
    }
}

impl<T> Drop for CacheBox<T> {
    fn drop(&mut self) {
        // SAFETY: Valid and owned (type invariant); not used again.
        unsafe { core::ptr::drop_in_place(self.ptr.as_ptr()) };
        // SAFETY: Allocated from this cache; dropped above.
        unsafe { bindings::kmem_cache_free(self.cache.ptr.as_ptr(), self.ptr.as_ptr().cast()) };
    }
}
