// SPDX-License-Identifier: GPL-2.0

//! Network devices.
//!
//! - [`Device`]: any `struct net_device`, borrowed for as long as the
//!   caller's guarantee lasts ([`Device::from_raw`]), or counted ([`ARef`]).
//! - [`NetDevice<T>`]: a device of a driver `T`, whose private data
//!   (`netdev_priv`) is a `T`.
//! - [`Driver`]: what such a driver implements; [`Registration`] builds the
//!   `net_device_ops`, `ethtool_ops` and `rtnl_link_ops` tables from it and
//!   registers the link type, so that `ip link add NAME type KIND` works.
//!
//! # Lifecycle of a device of ours
//!
//! `setup` (from `alloc_netdev`) makes it an Ethernet device with our ops and
//! a private area holding a not-yet-initialised `T`. `ndo_init` (from
//! `register_netdevice`) initialises the `T` in place; if that fails the
//! registration fails and there is nothing to drop. `ndo_uninit` (from
//! `unregister_netdevice`, under RTNL) lets the driver release what hangs on
//! other devices (its ports). `priv_destructor` (from `netdev_run_todo`,
//! once the last reference is gone) drops the `T`, and the core frees the
//! device (`needs_free_netdev`). A registration that fails after `ndo_init`
//! runs `ndo_uninit` and `priv_destructor` at once; `ready` makes the drop
//! happen once, and `free_netdev` defers to the core when it must.
mod adapter;
mod driver;
mod rtnl;
mod sysfs;

pub use super::proc::Proc;
pub use driver::{Driver, Ethtool, Link, NetDevice, Port, Registration, Setup, Sysfs};
pub use rtnl::{AttrKind, ExtAck, LinkAttrs, NlMsg, Rtnl, RtnlGuard};
pub use sysfs::TextBuf;

use crate::net::bindings;
use crate::net::skb::Skb;
use crate::net::Mac;
use core::mem::MaybeUninit;
use core::ptr::NonNull;
use core::sync::atomic::{AtomicPtr, Ordering};
use kernel::error::to_result;
use kernel::prelude::*;
use kernel::str::CStr;
use kernel::sync::aref::{ARef, AlwaysRefCounted};
use kernel::types::Opaque;

/// READ_ONCE of a `net_device` field of `$dev` (a [`Device`]): through a
/// raw pointer, as other CPUs may write the device's fields while we read
/// (a `&net_device` would claim they do not).
macro_rules! read_once {
    ($dev:expr, $field:ident) => {
        // SAFETY: The device is alive (the `Device` invariant); a volatile
        // read of an aligned field inside it, as READ_ONCE.
        unsafe { core::ptr::read_volatile(core::ptr::addr_of!((*$dev.as_raw()).$field)) }
    };
}

/// Bytes of a device's name, with its NUL (`IFNAMSIZ`).
const IFNAMSIZ: usize = 16;

/// A copy of a device's name ([`Device::name`]): as a string (`Display`,
/// `Deref` to `str`, "?" if it is not UTF-8) or as its bytes.
#[derive(Clone, Copy)]
pub struct IfName([u8; IFNAMSIZ]);

impl IfName {
    /// The name's bytes, without the NUL.
    pub fn as_bytes(&self) -> &[u8] {
        let len = self.0.iter().position(|&c| c == 0).unwrap_or(IFNAMSIZ);
        &self.0[..len]
    }
}

impl core::ops::Deref for IfName {
    type Target = str;
    fn deref(&self) -> &str {
        core::str::from_utf8(self.as_bytes()).unwrap_or("?")
    }
}

impl kernel::fmt::Display for IfName {
    fn fmt(&self, f: &mut kernel::fmt::Formatter<'_>) -> kernel::fmt::Result {
        f.write_str(self)
    }
}

impl core::fmt::Display for IfName {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self)
    }
}

/// Any network device.
///
/// # Invariants
///
/// Wraps a live, registered (or being registered) `struct net_device`; a
/// reference `&Device` never outlives the guarantee that keeps it alive (a
/// callback's duration, a held reference, RCU or RTNL).
#[repr(transparent)]
pub struct Device(Opaque<bindings::net_device>);

// SAFETY: A net_device is shared by every CPU by design; the methods below
// are safe to call concurrently, or require RTNL (`&Rtnl`).
unsafe impl Send for Device {}
// SAFETY: As above.
unsafe impl Sync for Device {}

// SAFETY: `dev_hold`/`dev_put` keep the device's memory alive (unregistration
// waits for every reference to be put).
unsafe impl AlwaysRefCounted for Device {
    fn inc_ref(&self) {
        // SAFETY: The device is alive (invariant).
        unsafe { bindings::dev_hold(self.as_raw()) }
    }

    unsafe fn dec_ref(obj: NonNull<Self>) {
        // SAFETY: The caller owns a reference.
        unsafe { bindings::dev_put(obj.cast().as_ptr()) }
    }
}

impl Device {
    /// Borrows a raw net_device.
    ///
    /// # Safety
    ///
    /// `ptr` points to a live net_device for the whole lifetime `'a`.
    pub unsafe fn from_raw<'a>(ptr: *mut bindings::net_device) -> &'a Device {
        // SAFETY: `Device` is a transparent wrapper; the caller guarantees
        // liveness for `'a`.
        unsafe { &*ptr.cast::<Device>() }
    }

    /// The raw pointer.
    pub fn as_raw(&self) -> *mut bindings::net_device {
        self.0.get()
    }

    /// The device's name (`eth0`), copied: a rename (under RTNL) may
    /// rewrite the device's own at any time.
    pub fn name(&self) -> IfName {
        // A volatile copy of a fixed-size array in the device: no reference
        // to memory a rename writes, and no length read before the bytes.
        let mut b: [u8; IFNAMSIZ] = read_once!(self, name);
        // A copy torn by a rename still ends.
        b[IFNAMSIZ - 1] = 0;
        IfName(b)
    }

    /// The interface index.
    pub fn ifindex(&self) -> i32 {
        read_once!(self, ifindex)
    }

    /// The device's MAC address.
    pub fn addr(&self) -> Mac {
        let mut m = [0u8; 6];
        let a = read_once!(self, dev_addr);
        // SAFETY: An Ethernet device's `dev_addr` holds at least 6 bytes;
        // only `is_ether` devices reach callers of this. A change of
        // address (under RTNL) may tear the copy, as it does C readers'.
        unsafe { core::ptr::copy_nonoverlapping(a, m.as_mut_ptr(), 6) };
        m
    }

    /// The permanent (burnt-in) MAC address; zero if the device has none.
    pub fn perm_addr(&self) -> Mac {
        let mut m = [0u8; 6];
        // SAFETY: Alive (invariant); `perm_addr` is an array inside the
        // device of more than 6 bytes, set before registration.
        unsafe {
            core::ptr::copy_nonoverlapping(
                core::ptr::addr_of!((*self.as_raw()).perm_addr).cast::<u8>(),
                m.as_mut_ptr(),
                6,
            )
        };
        m
    }

    /// The MTU.
    pub fn mtu(&self) -> u32 {
        read_once!(self, mtu)
    }

    /// The largest MTU the device accepts.
    pub fn max_mtu(&self) -> u32 {
        read_once!(self, max_mtu)
    }

    /// `IFF_*` flags.
    pub fn flags(&self) -> u32 {
        read_once!(self, flags)
    }

    /// Whether this is a loopback device.
    pub fn is_loopback(&self) -> bool {
        self.flags() & bindings::net_device_flags_IFF_LOOPBACK != 0
    }

    /// Whether this is an Ethernet device (type and address length).
    pub fn is_ether(&self) -> bool {
        u32::from(read_once!(self, type_)) == bindings::ARPHRD_ETHER
            && u32::from(read_once!(self, addr_len)) == bindings::ETH_ALEN
    }

    /// Whether the device has carrier.
    pub fn carrier_ok(&self) -> bool {
        // SAFETY: Alive; reads a state bit.
        unsafe { bindings::netif_carrier_ok(self.as_raw()) }
    }

    /// Whether the device is up (`netif_running`).
    pub fn running(&self) -> bool {
        // SAFETY: Alive; reads a state bit.
        unsafe { bindings::netif_running(self.as_raw()) }
    }

    /// Turns carrier on or off (any context).
    pub fn set_carrier(&self, on: bool) {
        // SAFETY: Alive; linkwatch handles any context.
        unsafe {
            if on {
                bindings::netif_carrier_on(self.as_raw())
            } else {
                bindings::netif_carrier_off(self.as_raw())
            }
        }
    }

    /// Transmit queues in use.
    pub fn tx_queues(&self) -> u32 {
        read_once!(self, real_num_tx_queues)
    }

    /// Whether transmit queue `q` (below [`Device::tx_queues`]) is stopped.
    pub fn tx_queue_stopped(&self, q: u32) -> bool {
        if q >= self.tx_queues() {
            return true;
        }
        // SAFETY: Alive, and `q` is a queue it has.
        unsafe { bindings::netif_txq_stopped(self.as_raw(), q) }
    }

    /// Whether both devices are in the same network namespace.
    pub fn same_netns(&self, other: &Device) -> bool {
        // SAFETY: Both alive; dev_net reads a pointer that changes only
        // under RTNL while the device is down and being moved.
        unsafe {
            bindings::net_eq(
                bindings::dev_net(self.as_raw()),
                bindings::dev_net(other.as_raw()),
            )
        }
    }

    /// Whether this device uses the ops table `ops` (is a device of the
    /// driver that owns it).
    fn has_ops(&self, ops: *const bindings::net_device_ops) -> bool {
        core::ptr::eq(read_once!(self, netdev_ops), ops)
    }

    /// Its GRO's hold, over its NAPI instances: the longest it may keep a
    /// packet once frames stop coming, in ns (the largest GRO flush or IRQ
    /// suspension timeout: `napi_complete_done` arms a timer of that
    /// length, and flushes at its end only what is older than a jiffy),
    /// and whether it holds any now (a racy read, for a log line).
    pub fn gro_hold(&self) -> (u64, bool) {
        let mut hold = read_once!(self, gro_flush_timeout) as u64;
        let mut holds = false;
        let _rcu = kernel::sync::rcu::read_lock();
        // SAFETY: Alive (invariant). The NAPI list is added to and taken
        // from under RCU (list_add_rcu, list_del_rcu in dev.c), and an
        // instance is freed a grace period after it leaves; we are in a
        // read-side section. `dev_list` is a member of each napi_struct.
        unsafe {
            let head = core::ptr::addr_of!((*self.as_raw()).napi_list).cast_mut();
            let mut node = core::ptr::read_volatile(core::ptr::addr_of!((*head).next));
            while node != head {
                let napi = node
                    .byte_sub(core::mem::offset_of!(bindings::napi_struct, dev_list))
                    .cast::<bindings::napi_struct>();
                let t = core::ptr::read_volatile(core::ptr::addr_of!((*napi).gro_flush_timeout));
                let s = core::ptr::read_volatile(core::ptr::addr_of!((*napi).irq_suspend_timeout));
                hold = hold.max(t as u64).max(s as u64);
                holds |= core::ptr::read_volatile(core::ptr::addr_of!((*napi).gro.bitmask)) != 0;
                node = core::ptr::read_volatile(core::ptr::addr_of!((*node).next));
            }
        }
        (hold, holds)
    }

    /// A counted reference.
    pub fn get(&self) -> ARef<Device> {
        ARef::from(self)
    }

    /// Whether the device is registered, not being unregistered (under
    /// RTNL, which unregistration holds, it stays so).
    pub fn is_registered(&self, _rtnl: &Rtnl) -> bool {
        // SAFETY: The device is alive (invariant); RTNL orders the read.
        unsafe { bindings::netdev_registered(self.as_raw()) }
    }

    /// Looks a device up by index in namespace `net`, counted.
    ///
    /// # Safety
    ///
    /// `net` is a live namespace for the call.
    pub(crate) unsafe fn by_index(net: *mut bindings::net, ifindex: i32) -> Option<ARef<Device>> {
        // SAFETY: `net` is live (the caller's promise); dev_get_by_index
        // takes a reference, which `ARef` now owns.
        let p = unsafe { bindings::dev_get_by_index(net, ifindex) };
        // SAFETY: A held, live device.
        NonNull::new(p).map(|p| unsafe { ARef::from_raw(p.cast()) })
    }

    /// Looks a device up by name in the initial namespace, counted.
    pub fn by_name(_rtnl: &Rtnl, name: &CStr) -> Option<ARef<Device>> {
        // SAFETY: `name` is NUL-terminated; dev_get_by_name takes a
        // reference, which `ARef` now owns.
        let p = unsafe {
            bindings::dev_get_by_name(
                core::ptr::addr_of_mut!(bindings::init_net),
                name.as_char_ptr(),
            )
        };
        // SAFETY: A held, live device.
        NonNull::new(p).map(|p| unsafe { ARef::from_raw(p.cast()) })
    }

    /// Sets the largest MTU the stack may set (our own device).
    pub fn set_max_mtu(&self, _rtnl: &Rtnl, mtu: u32) {
        // SAFETY: Alive; RTNL held; WRITE_ONCE, as `max_mtu` reads it
        // without.
        unsafe {
            core::ptr::write_volatile(core::ptr::addr_of_mut!((*self.as_raw()).max_mtu), mtu)
        };
    }

    /// Sets the MAC address as `ip link set DEV address` does
    /// (`dev_set_mac_address`: the driver's check, then the notifiers).
    pub fn set_mac(&self, _rtnl: &Rtnl, addr: &Mac) -> Result {
        // SAFETY: All-zero is a valid sockaddr_storage to fill in.
        let mut ss: bindings::__kernel_sockaddr_storage = unsafe { core::mem::zeroed() };
        // SAFETY: The storage is large enough for the family and an Ethernet
        // address, which is what `ss_family == ARPHRD_ETHER` announces.
        unsafe {
            let b = core::ptr::addr_of_mut!(ss).cast::<u8>();
            core::ptr::write_unaligned(b.cast::<u16>(), bindings::ARPHRD_ETHER as u16);
            core::ptr::copy_nonoverlapping(addr.as_ptr(), b.add(2), 6);
        }
        // SAFETY: Alive; RTNL held; `ss` is valid for the call.
        to_result(unsafe {
            bindings::dev_set_mac_address(self.as_raw(), &mut ss, core::ptr::null_mut())
        })
    }

    /// Stores `mtu` as the device's, from its own `ndo_change_mtu` (which
    /// the core calls with a value within the device's bounds).
    pub fn store_mtu(&self, _rtnl: &Rtnl, mtu: u32) {
        // SAFETY: Alive; RTNL held; WRITE_ONCE, as readers may not hold it.
        unsafe { core::ptr::write_volatile(core::ptr::addr_of_mut!((*self.as_raw()).mtu), mtu) };
    }

    /// `dev_set_mtu()`.
    pub fn set_mtu(&self, _rtnl: &Rtnl, mtu: u32) -> Result {
        // SAFETY: Alive; RTNL held.
        to_result(unsafe { bindings::dev_set_mtu(self.as_raw(), mtu as i32) })
    }

    /// Closes the device (`dev_close`).
    pub fn close(&self, _rtnl: &Rtnl) {
        // SAFETY: Alive; RTNL held.
        unsafe { bindings::dev_close(self.as_raw()) }
    }

    /// Adds `addr` to the device's unicast filter (Ethernet devices only).
    pub fn uc_add(&self, _rtnl: &Rtnl, addr: &Mac) -> Result {
        if !self.is_ether() {
            return Err(EINVAL);
        }
        // SAFETY: Alive; RTNL held; `addr` has the device's 6 bytes.
        to_result(unsafe { bindings::dev_uc_add(self.as_raw(), addr.as_ptr()) })
    }

    /// Removes `addr` from the device's unicast filter.
    pub fn uc_del(&self, _rtnl: &Rtnl, addr: &Mac) -> Result {
        if !self.is_ether() {
            return Err(EINVAL);
        }
        // SAFETY: As in `uc_add`.
        to_result(unsafe { bindings::dev_uc_del(self.as_raw(), addr.as_ptr()) })
    }

    /// Changes the device's all-multicast count by `inc`.
    pub fn set_allmulti(&self, _rtnl: &Rtnl, inc: i32) -> Result {
        // SAFETY: Alive; RTNL held.
        to_result(unsafe { bindings::dev_set_allmulti(self.as_raw(), inc) })
    }

    /// Changes the device's promiscuity count by `inc`.
    pub fn set_promiscuity(&self, _rtnl: &Rtnl, inc: i32) -> Result {
        // SAFETY: Alive; RTNL held.
        to_result(unsafe { bindings::dev_set_promiscuity(self.as_raw(), inc) })
    }

    /// Whether the device segments TCP or UDP GSO packets in hardware (or
    /// passes them on whole, as a macvlan does).
    pub fn hw_gso(&self) -> bool {
        // A racy read of a word-sized field is what the stack's own
        // transmit path does.
        let features = read_once!(self, features);
        // SAFETY: A constant.
        features & unsafe { bindings::netif_f_hw_gso() } != 0
    }

    /// Turns hardware segmentation (TSO, USO) off, as `ethtool -K DEV tso
    /// off` would; returns the feature bits it turned off, for
    /// [`Device::restore_features`].
    ///
    /// Called where the device's instance lock is not held (RTNL only:
    /// `ndo_add_slave` and `NETDEV_UNREGISTER` run without it), since a
    /// driver with locked ops requires it for a feature change.
    pub fn hw_gso_off(&self, _rtnl: &Rtnl) -> u64 {
        // SAFETY: Alive; RTNL and the instance lock (ops-locked drivers)
        // serialise feature changes, as ethtool's do.
        unsafe {
            let d = self.as_raw();
            bindings::netdev_lock_ops(d);
            let off = (*d).wanted_features & bindings::netif_f_hw_gso();
            if off != 0 {
                (*d).wanted_features &= !off;
                bindings::netdev_update_features(d);
            }
            bindings::netdev_unlock_ops(d);
            off
        }
    }

    /// Waits, sleeping, until nothing waits in the device's qdiscs, at most
    /// `max_ms` (RTNL held meanwhile). Returns whether they emptied.
    pub fn wait_qdiscs_empty(&self, _rtnl: &Rtnl, max_ms: u32) -> bool {
        let d = self.as_raw();
        for _ in 0..=max_ms {
            // SAFETY: Alive; RTNL held, which keeps each queue's qdisc
            // (rtnl_dereference); the queue count is read as the stack does.
            let busy = (0..unsafe { (*d).real_num_tx_queues })
                .any(|q| unsafe { bindings::txq_qdisc_qlen(d, q) } != 0);
            if !busy {
                return true;
            }
            kernel::time::delay::fsleep(kernel::time::Delta::from_millis(1));
        }
        false
    }

    /// Turns back on the wanted features `bits` (from
    /// [`Device::hw_gso_off`]).
    pub fn restore_features(&self, _rtnl: &Rtnl, bits: u64) {
        if bits == 0 {
            return;
        }
        // SAFETY: Alive; RTNL held, and the instance lock taken as in
        // `hw_gso_off` (the same callers).
        unsafe {
            let d = self.as_raw();
            bindings::netdev_lock_ops(d);
            (*d).wanted_features |= bits;
            bindings::netdev_update_features(d);
            bindings::netdev_unlock_ops(d);
        }
    }

    /// Brings the device up (`dev_open`).
    pub fn open(&self, _rtnl: &Rtnl) -> Result {
        // SAFETY: Alive; RTNL held.
        to_result(unsafe { bindings::dev_open(self.as_raw(), core::ptr::null_mut()) })
    }

    /// The device's master (bond, bridge, team, ...), if it has one.
    pub fn master<'a>(&self, _rtnl: &'a Rtnl) -> Option<&'a Device> {
        // SAFETY: Alive; RTNL held, which keeps the upper device alive for
        // the borrow (it cannot be unlinked without RTNL).
        let p = unsafe { bindings::netdev_master_upper_dev_get(self.as_raw()) };
        // SAFETY: As above.
        (!p.is_null()).then(|| unsafe { Device::from_raw(p) })
    }

    /// Whether something (a bridge, bond, team, macvlan, ...) already
    /// receives this device's frames through an rx_handler.
    pub fn rx_handler_busy(&self, _rtnl: &Rtnl) -> bool {
        // SAFETY: Alive; RTNL held.
        unsafe { bindings::netdev_is_rx_handler_busy(self.as_raw()) }
    }

    /// Whether the device is the upper device of anything.
    pub fn has_upper(&self, _rtnl: &Rtnl) -> bool {
        // SAFETY: Alive; RTNL held.
        unsafe { bindings::netdev_has_any_upper_dev(self.as_raw()) }
    }

    /// The link speed ethtool reports, in Mbit/s, if known.
    pub fn speed(&self, _rtnl: &Rtnl) -> Option<u32> {
        let mut ks = MaybeUninit::<bindings::ethtool_link_ksettings>::zeroed();
        // SAFETY: Alive; RTNL held; `ks` is writable.
        let r = unsafe { bindings::__ethtool_get_link_ksettings(self.as_raw(), ks.as_mut_ptr()) };
        // SAFETY: Zeroed, then filled on success.
        let speed = unsafe { ks.assume_init() }.base.speed;
        (r == 0 && speed != 0 && speed != bindings::SPEED_UNKNOWN as u32).then_some(speed)
    }

    /// Tells the stack this port's state below its master
    /// (`netdev_lower_state_changed`, as bonding and team do for their
    /// ports): `ip monitor link` shows it.
    pub fn lower_state_changed(&self, _rtnl: &Rtnl, link_up: bool, tx_enabled: bool) {
        let mut info = bindings::netdev_lag_lower_state_info::default();
        info.set_link_up(u8::from(link_up));
        info.set_tx_enabled(u8::from(tx_enabled));
        // SAFETY: Alive; RTNL held; `info` is read during the call only.
        unsafe {
            bindings::netdev_lower_state_changed(
                self.as_raw(),
                core::ptr::from_mut(&mut info).cast(),
            )
        }
    }

    /// Tells the neighbours our address: gratuitous ARP, unsolicited NA
    /// (`netdev_notify_peers`). Takes RTNL itself.
    pub fn notify_peers(&self) {
        // SAFETY: Alive; process context.
        unsafe { bindings::netdev_notify_peers(self.as_raw()) }
    }

    /// The same as [`Device::notify_peers`], with RTNL already held.
    pub fn notify_peers_locked(&self, _rtnl: &Rtnl) {
        // SAFETY: Alive; RTNL held.
        unsafe { bindings::__netdev_notify_peers(self.as_raw()) }
    }

    /// Copies `from`'s secondary unicast and multicast addresses into this
    /// device's filters (`dev_uc_sync_multiple`, `dev_mc_sync_multiple`),
    /// from `from`'s `set_rx_mode`, which holds its address lock (`from`).
    pub fn sync_addrs_from(&self, from: &AddrListLocked<'_>) {
        // SAFETY: Both alive; `from`'s address lock is held (the witness's
        // invariant), as the sync functions require; they lock `self`'s.
        unsafe {
            bindings::dev_uc_sync_multiple(self.as_raw(), from.0.as_raw());
            bindings::dev_mc_sync_multiple(self.as_raw(), from.0.as_raw());
        }
    }

    /// The same as [`Device::sync_addrs_from`], taking `from`'s address
    /// lock itself.
    pub fn sync_addrs_from_unlocked(&self, _rtnl: &Rtnl, from: &Device) {
        // SAFETY: Both alive; the address lock as the sync functions require.
        unsafe {
            bindings::netif_addr_lock_bh(from.as_raw());
            bindings::dev_uc_sync_multiple(self.as_raw(), from.as_raw());
            bindings::dev_mc_sync_multiple(self.as_raw(), from.as_raw());
            bindings::netif_addr_unlock_bh(from.as_raw());
        }
    }

    /// Removes what [`Device::sync_addrs_from`] added. The unsync
    /// functions take `from`'s address lock (and this device's) themselves.
    pub fn unsync_addrs_from(&self, _rtnl: &Rtnl, from: &Device) {
        // SAFETY: Both alive; RTNL held; no address lock held by the caller.
        unsafe {
            bindings::dev_uc_unsync(self.as_raw(), from.as_raw());
            bindings::dev_mc_unsync(self.as_raw(), from.as_raw());
        }
    }
}

/// A device whose address lists are locked (`netif_addr_lock_bh`): what
/// `set_rx_mode` is given.
///
/// # Invariants
///
/// The device's address lock is held while this exists.
pub struct AddrListLocked<'a>(&'a Device);

impl core::ops::Deref for AddrListLocked<'_> {
    type Target = Device;
    fn deref(&self) -> &Device {
        self.0
    }
}

/// Counters for `ndo_get_stats64` (`struct rtnl_link_stats64`'s main ones).
#[derive(Default, Clone, Copy)]
pub struct Stats64 {
    /// Packets received.
    pub rx_packets: u64,
    /// Bytes received.
    pub rx_bytes: u64,
    /// Packets sent.
    pub tx_packets: u64,
    /// Bytes sent.
    pub tx_bytes: u64,
    /// Received packets dropped.
    pub rx_dropped: u64,
    /// Packets to send that were dropped.
    pub tx_dropped: u64,
    /// Receive errors.
    pub rx_errors: u64,
    /// Malformed frames received.
    pub rx_frame_errors: u64,
}

/// What a port's receive handler did with a frame.
pub enum RxHandled {
    /// The frame was taken (delivered, held or dropped).
    Consumed,
    /// Not ours: the stack goes on with it on the port.
    Pass(Skb),
}

/// The write side of `ethtool -S`: names, then values, in the same order.
pub struct EthtoolStrings<'a> {
    buf: &'a mut [u8],
    at: usize,
}

impl EthtoolStrings<'_> {
    /// Appends one name (at most 31 bytes; longer is cut).
    pub fn push(&mut self, args: kernel::fmt::Arguments<'_>) {
        const LEN: usize = bindings::ETH_GSTRING_LEN as usize;
        if self.at + LEN > self.buf.len() {
            return;
        }
        let slot = &mut self.buf[self.at..self.at + LEN];
        slot.fill(0);
        let mut w = SliceWriter {
            buf: &mut slot[..LEN - 1],
            at: 0,
        };
        let _ = kernel::fmt::Write::write_fmt(&mut w, args);
        self.at += LEN;
    }
}

struct SliceWriter<'a> {
    buf: &'a mut [u8],
    at: usize,
}

impl kernel::fmt::Write for SliceWriter<'_> {
    fn write_str(&mut self, s: &str) -> kernel::fmt::Result {
        let n = s.len().min(self.buf.len() - self.at);
        self.buf[self.at..self.at + n].copy_from_slice(&s.as_bytes()[..n]);
        self.at += n;
        Ok(())
    }
}

/// Feature bits (`NETIF_F_*_BIT`), for [`Setup::set_features`] and
/// [`Device`]'s feature masks (`1 << bit`).
pub mod feature {
    use super::bindings;

    /// Scatter-gather.
    pub const SG: u32 = bindings::NETIF_F_SG_BIT;
    /// Any checksum in hardware.
    pub const HW_CSUM: u32 = bindings::NETIF_F_HW_CSUM_BIT;
    /// DMA to high memory.
    pub const HIGHDMA: u32 = bindings::NETIF_F_HIGHDMA_BIT;
    /// Generic segmentation offload.
    pub const GSO: u32 = bindings::NETIF_F_GSO_BIT;
    /// TCP segmentation, IPv4.
    pub const TSO: u32 = bindings::NETIF_F_TSO_BIT;
    /// TCP segmentation, IPv6.
    pub const TSO6: u32 = bindings::NETIF_F_TSO6_BIT;
    /// TCP segmentation with ECN.
    pub const TSO_ECN: u32 = bindings::NETIF_F_TSO_ECN_BIT;
    /// TCP segmentation that may mangle IPv4 IDs.
    pub const TSO_MANGLEID: u32 = bindings::NETIF_F_TSO_MANGLEID_BIT;
    /// UDP segmentation.
    pub const GSO_UDP_L4: u32 = bindings::NETIF_F_GSO_UDP_L4_BIT;
}

/// [`Device::flags`]: the device is promiscuous.
pub const IFF_PROMISC: u32 = bindings::net_device_flags_IFF_PROMISC;

/// What the per-CPU counters hold, summed ([`NetDevice::counted`]).
#[derive(Clone, Copy, Default)]
pub struct Counted {
    /// Packets received.
    pub rx_packets: u64,
    /// Bytes received.
    pub rx_bytes: u64,
    /// Packets sent.
    pub tx_packets: u64,
    /// Bytes sent.
    pub tx_bytes: u64,
}

/// A device that readers find without a lock, under RCU, while a writer
/// holding RTNL replaces it (`rcu_assign_pointer`, `rcu_dereference`, and
/// `synchronize_net` before the old one's reference is put).
///
/// # Invariants
///
/// `ptr` is NULL or a device whose reference this holds (from
/// [`ARef::into_raw`]).
pub struct RcuDevice {
    ptr: AtomicPtr<bindings::net_device>,
}

// SAFETY: Devices are shared by every CPU; the pointer is atomic.
unsafe impl Send for RcuDevice {}
// SAFETY: As above.
unsafe impl Sync for RcuDevice {}

impl Default for RcuDevice {
    fn default() -> Self {
        Self::new()
    }
}

impl RcuDevice {
    /// No device.
    pub const fn new() -> RcuDevice {
        RcuDevice {
            ptr: AtomicPtr::new(core::ptr::null_mut()),
        }
    }

    /// Publishes `dev`; the device it replaces, if any, is put once every
    /// reader that could see it is done. Process context (sleeps).
    pub fn set(&self, _rtnl: &Rtnl, dev: Option<ARef<Device>>) {
        // `Device` is `repr(transparent)` over `net_device`.
        let new = dev.map_or(core::ptr::null_mut(), |d| {
            ARef::into_raw(d).as_ptr().cast::<bindings::net_device>()
        });
        let old = self.ptr.swap(new, Ordering::AcqRel);
        if !old.is_null() {
            super::synchronize_net();
            // SAFETY: `old` carried a reference of ours (invariant), from
            // `ARef::into_raw` of a `Device` (`repr(transparent)`), and no
            // reader holds it after the grace period.
            drop(unsafe { ARef::from_raw(NonNull::new_unchecked(old.cast::<Device>())) });
        }
    }

    /// The device, for as long as the RCU read section `_rcu` lasts (and
    /// `self` is borrowed: dropping it puts the device at once).
    pub fn get<'a>(&'a self, _rcu: &'a kernel::sync::rcu::Guard) -> Option<&'a Device> {
        let p = self.ptr.load(Ordering::Acquire);
        // SAFETY: A published device stays alive until a grace period after
        // it is replaced (`set`), which `_rcu` holds off; `Device` is
        // `repr(transparent)` over `net_device`.
        (!p.is_null()).then(|| unsafe { &*p.cast::<Device>() })
    }
}

impl Drop for RcuDevice {
    fn drop(&mut self) {
        let p = *self.ptr.get_mut();
        if !p.is_null() {
            // SAFETY: Ours (invariant), as in `set`; `&mut self`: no
            // borrow from `get` is left.
            drop(unsafe { ARef::from_raw(NonNull::new_unchecked(p.cast::<Device>())) });
        }
    }
}
