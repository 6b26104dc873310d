// SPDX-License-Identifier: GPL-2.0

//! procfs: a directory under `/proc/net` in every network namespace
//! ([`PernetDir`]), and a read-only file in it per device ([`DeviceFile`]),
//! whose text the driver writes ([`ProcShow`]). A driver may have several
//! such views of its devices, one directory each (a human one, a
//! machine-readable one), told apart by their [`DirName`] type.

use super::bindings;
use super::device::{Device, Driver, NetDevice};
use core::marker::PhantomData;
use kernel::error::to_result;
use kernel::prelude::*;
use kernel::seq_file::SeqFile;
use kernel::str::CStr;
use kernel::types::Opaque;

/// The name of a driver's `/proc/net` directory.
pub trait DirName: Send + Sync + 'static {
    /// `/proc/net/NAME`.
    const NAME: &'static CStr;
}

/// `/proc/net/D::NAME` in every network namespace, for as long as this
/// lives (a `pernet_operations` subsystem: created with each namespace,
/// removed with it, after its devices are gone).
#[pin_data(PinnedDrop)]
pub struct PernetDir<D: DirName> {
    #[pin]
    ops: Opaque<bindings::pernet_operations>,
    _p: PhantomData<D>,
}

// SAFETY: The core only reads the ops once registered.
unsafe impl<D: DirName> Sync for PernetDir<D> {}
// SAFETY: As above.
unsafe impl<D: DirName> Send for PernetDir<D> {}

/// The C callback `dir_init`.
///
/// # Safety
///
/// Only the kernel calls it, through the table this module fills in, with
/// the arguments and in the context that table's contract gives.
unsafe extern "C" fn dir_init<D: DirName>(net: *mut bindings::net) -> i32 {
    // SAFETY: A namespace being set up; its proc_net directory exists. The
    // directory names the namespace, which the files in it open with
    // (`proc_create_net_single`).
    let p = unsafe {
        bindings::proc_net_mkdir(net, D::NAME.as_char_ptr(), bindings::net_proc_dir(net))
    };
    if p.is_null() {
        ENOMEM.to_errno()
    } else {
        0
    }
}

/// The C callback `dir_exit`.
///
/// # Safety
///
/// Only the kernel calls it, through the table this module fills in, with
/// the arguments and in the context that table's contract gives.
unsafe extern "C" fn dir_exit<D: DirName>(net: *mut bindings::net) {
    // SAFETY: A namespace going away: its devices (and their files) are
    // gone, the directory made by `dir_init` is left.
    unsafe { bindings::remove_proc_subtree(D::NAME.as_char_ptr(), bindings::net_proc_dir(net)) };
}

impl<D: DirName> PernetDir<D> {
    /// Creates the directory in every namespace, now and to come.
    pub fn new() -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            ops <- Opaque::try_ffi_init(|slot: *mut bindings::pernet_operations| {
                // SAFETY: `slot` is ours; it stays pinned until `drop`.
                unsafe {
                    slot.write(core::mem::zeroed());
                    (*slot).init = Some(dir_init::<D>);
                    (*slot).exit = Some(dir_exit::<D>);
                    to_result(bindings::register_pernet_subsys(slot))
                }
            }),
            _p: PhantomData,
        })
    }
}

#[pinned_drop]
impl<D: DirName> PinnedDrop for PernetDir<D> {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: Registered in `new`; removes the directory everywhere.
        unsafe { bindings::unregister_pernet_subsys(self.ops.get()) };
    }
}

/// A driver whose devices have a procfs file in `/proc/net/D::NAME`.
pub trait ProcShow<D: DirName>: Driver {
    /// Writes the file's text.
    fn show(dev: &NetDevice<Self>, m: &SeqFile);
}

/// The C callback `show`.
///
/// # Safety
///
/// Only the kernel calls it, through the table this module fills in, with
/// the arguments and in the context that table's contract gives.
unsafe extern "C" fn show<T: ProcShow<D>, D: DirName>(
    m: *mut bindings::seq_file,
    _v: *mut core::ffi::c_void,
) -> i32 {
    // SAFETY: The file was created by `DeviceFile::create` with
    // proc_create_net_single, which holds the namespace while the file is
    // open and keeps it in the seq_file, and with the device's index as its
    // data. The device is looked up afresh and held for the call. Both
    // bindings name the same seq_file.
    unsafe {
        let net = bindings::seq_file_single_net(m.cast());
        let ifindex = bindings::seq_pde_data(m.cast()) as usize as i32;
        // Not found: the device is being unregistered, its file about to
        // go (or kept past it, a `DeviceFile` forgotten): as if gone.
        let Some(dev) = Device::by_index(net, ifindex) else {
            return ENOENT.to_errno();
        };
        let Some(d) = NetDevice::<T>::of(&dev) else {
            return ENOENT.to_errno();
        };
        <T as ProcShow<D>>::show(d, SeqFile::from_raw(m.cast()));
    }
    0
}

/// `/proc/net/D::NAME/DEVICE`, removed on drop (which waits for readers).
///
/// # Invariants
///
/// `entry` is NULL or an entry created by `create`, not yet removed.
pub struct DeviceFile {
    entry: *mut bindings::proc_dir_entry,
}

// SAFETY: A handle to a proc entry, removable from any process context.
unsafe impl Send for DeviceFile {}
// SAFETY: As above; no method mutates through `&self`.
unsafe impl Sync for DeviceFile {}

impl DeviceFile {
    /// No file.
    pub const fn none() -> DeviceFile {
        DeviceFile {
            entry: core::ptr::null_mut(),
        }
    }

    /// Creates the file of `dev`, named as the device, in its namespace's
    /// directory `D::NAME`; removed on drop. Reads find the device by its
    /// index, so a file kept past its device (forgotten) reads as gone
    /// (ENOENT), never as freed memory.
    pub fn create<T: ProcShow<D>, D: DirName>(dev: &NetDevice<T>) -> Result<DeviceFile> {
        let mut path = [0u8; 64];
        let ifname = dev.name();
        let (dir, name) = (D::NAME.to_bytes(), ifname.as_bytes());
        let n = dir.len() + 1 + name.len();
        if n >= path.len() {
            return Err(EINVAL);
        }
        path[..dir.len()].copy_from_slice(dir);
        path[dir.len()] = b'/';
        path[dir.len() + 1..n].copy_from_slice(name);
        // SAFETY: `path` is NUL-terminated; the parent is the device's
        // namespace's /proc/net, where `PernetDir` made the directory; the
        // data is the device's index, not a pointer (see `show`).
        let entry = unsafe {
            bindings::proc_create_net_single(
                path.as_ptr().cast(),
                0o444,
                bindings::net_proc_dir(bindings::dev_net(dev.as_raw())),
                Some(show::<T, D>),
                dev.ifindex() as usize as *mut core::ffi::c_void,
            )
        };
        if entry.is_null() {
            return Err(ENOMEM);
        }
        Ok(DeviceFile { entry })
    }
}

impl Drop for DeviceFile {
    fn drop(&mut self) {
        if !self.entry.is_null() {
            // SAFETY: Created by `create` (invariant); waits for readers.
            unsafe { bindings::proc_remove(self.entry) };
        }
    }
}
