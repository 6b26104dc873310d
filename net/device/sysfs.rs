// SPDX-License-Identifier: GPL-2.0

//! The per-device sysfs attribute group.

use crate::net::bindings;
use kernel::prelude::*;

use super::{Device, Driver, NetDevice};

/// A sysfs text buffer (one page) being filled by a `show`.
pub struct TextBuf<'a> {
    pub(super) buf: &'a mut [u8],
    pub(super) at: usize,
}

impl kernel::fmt::Write for TextBuf<'_> {
    fn write_str(&mut self, s: &str) -> kernel::fmt::Result {
        let n = s.len().min(self.buf.len() - self.at);
        self.buf[self.at..self.at + n].copy_from_slice(&s.as_bytes()[..n]);
        self.at += n;
        Ok(())
    }
}

/// A sysfs attribute and its index in the driver's list.
#[repr(C)]
pub(super) struct IdxAttr {
    attr: bindings::device_attribute,
    idx: usize,
}

/// The `attribute_group` of a driver's per-device sysfs files.
///
/// # Invariants
///
/// `group.attrs` points into `ptrs`, a NULL-terminated array of pointers
/// into `attrs`; neither vector is changed after `new`, so their buffers
/// stay put when the `AttrGroup` moves.
pub(super) struct AttrGroup {
    pub(super) group: bindings::attribute_group,
    pub(super) attrs: KVec<IdxAttr>,
    /// Never read: owns the array `group.attrs` points into.
    #[allow(dead_code)]
    ptrs: KVec<*mut bindings::attribute>,
}

impl AttrGroup {
    pub(super) fn new<T: Driver>() -> Result<AttrGroup> {
        let n = T::SYSFS_ATTRS.len() + T::SYSFS_SECRETS.len();
        let mut attrs = KVec::with_capacity(n, GFP_KERNEL)?;
        for (idx, name) in
            Iterator::chain(T::SYSFS_ATTRS.iter(), T::SYSFS_SECRETS.iter()).enumerate()
        {
            let secret = idx >= T::SYSFS_ATTRS.len();
            // SAFETY: All-zero is a valid attribute to fill in.
            let mut attr: bindings::device_attribute = unsafe { core::mem::zeroed() };
            attr.attr.name = name.as_char_ptr();
            attr.attr.mode = if secret { 0o200 } else { 0o644 };
            // Attributes outside static storage need a static lockdep key
            // (what sysfs_attr_init() sets up for C).
            #[cfg(CONFIG_DEBUG_LOCK_ALLOC)]
            {
                attr.attr.key = kernel::static_lock_class!().as_ptr().cast();
            }
            // No show: sysfs then refuses reads, even root's.
            attr.__bindgen_anon_1.show = if secret { None } else { Some(attr_show::<T>) };
            attr.__bindgen_anon_2.store = Some(attr_store::<T>);
            attrs.push(IdxAttr { attr, idx }, GFP_KERNEL)?;
        }
        let mut ptrs = KVec::with_capacity(attrs.len() + 1, GFP_KERNEL)?;
        for a in attrs.iter_mut() {
            ptrs.push(core::ptr::addr_of_mut!(a.attr.attr), GFP_KERNEL)?;
        }
        ptrs.push(core::ptr::null_mut(), GFP_KERNEL)?;
        // SAFETY: All-zero is an empty group.
        let mut group: bindings::attribute_group = unsafe { core::mem::zeroed() };
        group.name = T::SYSFS_DIR.as_char_ptr();
        group.__bindgen_anon_2.attrs = ptrs.as_mut_ptr();
        Ok(AttrGroup { group, attrs, ptrs })
    }
}

/// The device and attribute index of a sysfs call.
///
/// # Safety
///
/// `d` is the `struct device` of a registered net_device of `T`, and `attr`
/// one of the attributes of `T`'s [`AttrGroup`].
unsafe fn attr_target<'a, T: Driver>(
    d: *mut bindings::device,
    attr: *mut bindings::device_attribute,
) -> Option<(&'a NetDevice<T>, usize)> {
    // SAFETY: `d` is embedded in a net_device (`to_net_dev`); `attr` is the
    // first field of an `IdxAttr`; sysfs removal (at unregistration) waits
    // for running callbacks, so the device and its data outlive the call.
    unsafe {
        let dev = d
            .cast::<u8>()
            .sub(core::mem::offset_of!(bindings::net_device, dev))
            .cast::<bindings::net_device>();
        let idx = (*attr.cast::<IdxAttr>()).idx;
        NetDevice::<T>::of(Device::from_raw(dev)).map(|n| (n, idx))
    }
}

/// The C callback `attr_show`.
///
/// # Safety
///
/// Only the kernel calls it, through the table this module fills in, with
/// the arguments and in the context that table's contract gives.
unsafe extern "C" fn attr_show<T: Driver>(
    d: *mut bindings::device,
    attr: *mut bindings::device_attribute,
    buf: *mut kernel::ffi::c_char,
) -> isize {
    // SAFETY: sysfs calls us for our attributes with a PAGE_SIZE buffer.
    let Some((dev, idx)) = (unsafe { attr_target::<T>(d, attr) }) else {
        return ENODEV.to_errno() as isize;
    };
    let mut out = TextBuf {
        // SAFETY: As above.
        buf: unsafe { core::slice::from_raw_parts_mut(buf.cast::<u8>(), 4096) },
        at: 0,
    };
    T::sysfs_show(dev, idx, &mut out);
    out.at as isize
}

/// The C callback `attr_store`.
///
/// # Safety
///
/// Only the kernel calls it, through the table this module fills in, with
/// the arguments and in the context that table's contract gives.
unsafe extern "C" fn attr_store<T: Driver>(
    d: *mut bindings::device,
    attr: *mut bindings::device_attribute,
    buf: *const kernel::ffi::c_char,
    count: usize,
) -> isize {
    // SAFETY: sysfs calls us for our attributes with `count` bytes.
    let Some((dev, idx)) = (unsafe { attr_target::<T>(d, attr) }) else {
        return ENODEV.to_errno() as isize;
    };
    // A write is for an administrator of the device's namespace, as
    // net-sysfs's `netdev_store` asks: the files' mode alone lets the owner
    // of a user namespace's sysfs write them.
    // SAFETY: `dev` is alive, and its namespace lives as long as it does.
    let admin = unsafe {
        let net = bindings::dev_net(dev.as_raw());
        bindings::ns_capable((*net).user_ns, bindings::CAP_NET_ADMIN as i32)
    };
    if !admin {
        return EPERM.to_errno() as isize;
    }
    // SAFETY: As above.
    let input = unsafe { core::slice::from_raw_parts(buf.cast::<u8>(), count) };
    let Ok(text) = core::str::from_utf8(input) else {
        return EINVAL.to_errno() as isize;
    };
    match T::sysfs_store(dev, idx, text.trim()) {
        Ok(()) => count as isize,
        Err(e) => e.to_errno() as isize,
    }
}
