// SPDX-License-Identifier: GPL-2.0

//! procfs: a read-only file per device, `/proc/net/DIR/DEVICE` in the
//! device's namespace, whose text the driver writes ([`Proc`]). The
//! abstraction owns the files: the directory exists in every namespace
//! while the link type is registered ([`PernetDir`]), a device's file is
//! made once it is registered, follows its renames ([`Renames`]) and goes
//! in its `ndo_uninit`. A file thus never outlives its device nor blocks a
//! new one of the same name.

use super::bindings;
use super::device::{Device, Driver, NetDevice, Rtnl};
use super::notifier::{self, Event, Handler, Verdict};
use core::marker::PhantomData;
use kernel::error::to_result;
use kernel::prelude::*;
use kernel::seq_file::SeqFile;
use kernel::str::CStr;
use kernel::types::Opaque;

/// A driver whose devices each have a procfs file. Such devices cannot
/// change namespace (`netns_immutable`): the file stays in its own.
pub trait Proc: Sized {
    /// `/proc/net/PROC_DIR/DEV`; none when empty. One path component (no
    /// `/`, not `.` or `..`: refused at build time), unique under
    /// `/proc/net`, with one [`super::device::Registration`] of the driver.
    const PROC_DIR: &'static CStr = c"";

    /// Writes the file's text. Never takes RTNL: a rename or a delete
    /// removes the file under RTNL, waiting for its readers.
    fn proc_show(_dev: &NetDevice<Self>, _m: &SeqFile) {}
}

/// Whether `name` is one path component.
const fn one_component(name: &CStr) -> bool {
    let b = name.to_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'/' {
            return false;
        }
        i += 1;
    }
    !matches!(b, b"." | b"..")
}

/// `/proc/net/T::PROC_DIR` in every network namespace, for as long as
/// this lives (a `pernet_operations` subsystem: created with each
/// namespace, removed with it, after its devices are gone).
#[pin_data(PinnedDrop)]
struct PernetDir<T: Driver> {
    #[pin]
    ops: Opaque<bindings::pernet_operations>,
    _p: PhantomData<T>,
}

// SAFETY: The core only reads the ops once registered.
unsafe impl<T: Driver> Sync for PernetDir<T> {}
// SAFETY: As above.
unsafe impl<T: Driver> Send for PernetDir<T> {}

/// The C callback `dir_init`.
///
/// # Safety
///
/// Only the kernel calls it, through the table this module fills in, with
/// the arguments and in the context that table's contract gives.
unsafe extern "C" fn dir_init<T: Driver>(net: *mut bindings::net) -> i32 {
    // SAFETY: A namespace being set up; its proc_net directory exists. The
    // directory names the namespace, which the files in it open with
    // (`proc_create_net_single`).
    let p = unsafe {
        bindings::proc_net_mkdir(net, T::PROC_DIR.as_char_ptr(), bindings::net_proc_dir(net))
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
unsafe extern "C" fn dir_exit<T: Driver>(net: *mut bindings::net) {
    // SAFETY: A namespace going away: its devices (and their files) are
    // gone (device exits run before subsystem exits), the directory made
    // by `dir_init` is left.
    unsafe {
        bindings::remove_proc_subtree(T::PROC_DIR.as_char_ptr(), bindings::net_proc_dir(net))
    };
}

impl<T: Driver> PernetDir<T> {
    /// Creates the directory in every namespace, now and to come.
    fn new() -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            ops <- Opaque::try_ffi_init(|slot: *mut bindings::pernet_operations| {
                // SAFETY: `slot` is ours; it stays pinned until `drop`.
                unsafe {
                    slot.write(core::mem::zeroed());
                    (*slot).init = Some(dir_init::<T>);
                    (*slot).exit = Some(dir_exit::<T>);
                    to_result(bindings::register_pernet_subsys(slot))
                }
            }),
            _p: PhantomData,
        })
    }
}

#[pinned_drop]
impl<T: Driver> PinnedDrop for PernetDir<T> {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: Registered in `new`; removes the directory everywhere.
        unsafe { bindings::unregister_pernet_subsys(self.ops.get()) };
    }
}

/// The C callback `show`.
///
/// # Safety
///
/// Only the kernel calls it, through the table this module fills in, with
/// the arguments and in the context that table's contract gives.
unsafe extern "C" fn show<T: Driver>(
    m: *mut bindings::seq_file,
    _v: *mut core::ffi::c_void,
) -> i32 {
    // SAFETY: The file was created by `create` with
    // proc_create_net_single, which holds the namespace while the file is
    // open and keeps it in the seq_file, and with the device's index as its
    // data. The device is looked up afresh and held for the call. Both
    // bindings name the same seq_file.
    unsafe {
        let net = bindings::seq_file_single_net(m.cast());
        let ifindex = bindings::seq_pde_data(m.cast()) as usize as i32;
        // Not found: not yet listed, or being unregistered, its file about
        // to go: as if gone.
        let Some(dev) = Device::by_index(net, ifindex) else {
            return ENOENT.to_errno();
        };
        let Some(d) = NetDevice::<T>::of(&dev) else {
            return ENOENT.to_errno();
        };
        T::proc_show(d, SeqFile::from_raw(m.cast()));
    }
    0
}

/// Makes `dev`'s file under its current name, in its namespace's
/// directory; NULL (logged) when that fails, and for a driver with none.
///
/// # Safety
///
/// Under RTNL; `dev` is a registered device of `T`, before its
/// `ndo_uninit`, and its namespace has the directory: `T`'s link type,
/// whose [`PernetDir`] made it, is registered.
pub(super) unsafe fn create<T: Driver>(dev: &Device) -> *mut bindings::proc_dir_entry {
    if T::PROC_DIR.is_empty() {
        return core::ptr::null_mut();
    }
    let mut path = [0u8; 64];
    let ifname = dev.name();
    let (dir, name) = (T::PROC_DIR.to_bytes(), ifname.as_bytes());
    let n = dir.len() + 1 + name.len();
    if n >= path.len() {
        pr_warn!("{}: no procfs file: its path is too long\n", dev.name());
        return core::ptr::null_mut();
    }
    path[..dir.len()].copy_from_slice(dir);
    path[dir.len()] = b'/';
    path[dir.len() + 1..n].copy_from_slice(name);
    // SAFETY: `path` is NUL-terminated; the parent is the device's
    // namespace's /proc/net, where `PernetDir` made the directory (the
    // caller's guarantee); the data is the device's index, not a pointer
    // (see `show`). The name is the device's, unique in the namespace,
    // and no other file of it exists (the caller's guarantee).
    let entry = unsafe {
        bindings::proc_create_net_single(
            path.as_ptr().cast(),
            0o444,
            bindings::net_proc_dir(bindings::dev_net(dev.as_raw())),
            Some(show::<T>),
            dev.ifindex() as usize as *mut core::ffi::c_void,
        )
    };
    if entry.is_null() {
        pr_warn!("{}: no procfs file\n", dev.name());
    }
    entry
}

/// Removes a file `create` made, waiting for its readers.
///
/// # Safety
///
/// `entry` is NULL or made by [`create`] and not yet removed; process
/// context.
pub(super) unsafe fn remove(entry: *mut bindings::proc_dir_entry) {
    if !entry.is_null() {
        // SAFETY: The caller's guarantee; proc_remove waits for readers.
        unsafe { bindings::proc_remove(entry) };
    }
}

/// What a link type whose devices have files registers: the directory in
/// every namespace, and the notifier that renames the files.
pub(super) struct ProcFiles<T: Driver> {
    /// Before `dir`, so that it goes first.
    _renames: Pin<KBox<notifier::Registration<Renames<T>>>>,
    _dir: Pin<KBox<PernetDir<T>>>,
}

impl<T: Driver> ProcFiles<T> {
    /// For `T`'s devices, if they have files ([`Proc::PROC_DIR`]).
    pub(super) fn new() -> Result<Option<Self>> {
        const {
            assert!(
                one_component(T::PROC_DIR),
                "Proc::PROC_DIR is not one path component"
            )
        };
        if T::PROC_DIR.is_empty() {
            return Ok(None);
        }
        let dir = KBox::pin_init(PernetDir::<T>::new(), GFP_KERNEL)?;
        let renames = KBox::pin_init(
            notifier::Registration::new(Renames(PhantomData)),
            GFP_KERNEL,
        )?;
        Ok(Some(ProcFiles {
            _renames: renames,
            _dir: dir,
        }))
    }
}

/// Renames the files of `T`'s devices with their devices.
struct Renames<T>(PhantomData<T>);

impl<T: Driver> Handler for Renames<T> {
    fn event(&self, rtnl: &Rtnl, event: Event, dev: &Device) -> Verdict {
        if event == Event::ChangeName {
            if let Some(ours) = NetDevice::<T>::of(dev) {
                ours.make_proc_file(rtnl);
            }
        }
        Verdict::Done
    }
}
