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

use super::bindings;
use super::lock::Bh;
use super::skb::Skb;
use super::Mac;
use core::marker::PhantomData;
use core::mem::MaybeUninit;
use core::ptr::NonNull;
use core::sync::atomic::{AtomicPtr, Ordering};
use kernel::error::{from_result, to_result};
use kernel::prelude::*;
use kernel::str::CStr;
use kernel::sync::aref::{ARef, AlwaysRefCounted};
use kernel::types::Opaque;

/// RTNL, the networking configuration lock: a witness that it is held.
///
/// Functions that need RTNL take `&Rtnl`. Callbacks the core calls under
/// RTNL (ndo and rtnl_link ops, notifiers) receive one; process context may
/// take it with [`Rtnl::lock`].
pub struct Rtnl {
    _not_send: PhantomData<*mut ()>,
}

/// RTNL taken by [`Rtnl::lock`], released on drop.
pub struct RtnlGuard(Rtnl);

impl Rtnl {
    /// Takes RTNL. Process context; sleeps.
    pub fn lock() -> RtnlGuard {
        // SAFETY: Process context, as documented.
        unsafe { bindings::rtnl_lock() };
        RtnlGuard(Rtnl {
            _not_send: PhantomData,
        })
    }

    /// A witness for a callback that runs under RTNL.
    ///
    /// # Safety
    ///
    /// RTNL is held for as long as the returned reference is used.
    pub unsafe fn assume_held<'a>() -> &'a Rtnl {
        &Rtnl {
            _not_send: PhantomData,
        }
    }
}

impl Rtnl {
    /// RTNL if it is free; otherwise the system call is restarted
    /// (`restart_syscall()`), as bonding's sysfs stores do: a store that
    /// waited for RTNL could deadlock with the device's unregistration,
    /// which holds RTNL while it removes the sysfs files and waits for the
    /// stores running in them.
    pub fn try_lock_or_restart() -> Result<RtnlGuard> {
        // SAFETY: No preconditions.
        if unsafe { bindings::rtnl_trylock() } != 0 {
            return Ok(RtnlGuard(Rtnl {
                _not_send: PhantomData,
            }));
        }
        // SAFETY: Process context (a sysfs store); only flags this task.
        Err(Error::from_errno(unsafe { bindings::restart_syscall() }))
    }
}

impl Rtnl {
    /// RTNL if it is free (`rtnl_trylock`).
    pub fn try_lock() -> Option<RtnlGuard> {
        // SAFETY: No preconditions.
        (unsafe { bindings::rtnl_trylock() } != 0).then(|| {
            RtnlGuard(Rtnl {
                _not_send: PhantomData,
            })
        })
    }
}

impl core::ops::Deref for RtnlGuard {
    type Target = Rtnl;
    fn deref(&self) -> &Rtnl {
        &self.0
    }
}

impl Drop for RtnlGuard {
    fn drop(&mut self) {
        // SAFETY: Taken by `Rtnl::lock`.
        unsafe { bindings::rtnl_unlock() }
    }
}

/// A netlink extended ack, where a refused request says why.
pub struct ExtAck(*mut bindings::netlink_ext_ack);

impl ExtAck {
    /// The extack of a request the core is handling (null: none).
    pub(super) fn from_raw(ack: *mut bindings::netlink_ext_ack) -> ExtAck {
        ExtAck(ack)
    }

    /// No extack (a request not from netlink).
    pub fn none() -> ExtAck {
        ExtAck(core::ptr::null_mut())
    }

    /// Whether there is none: the request came from elsewhere (sysfs, a
    /// module parameter), where a refusal is logged instead.
    pub fn is_none(&self) -> bool {
        self.0.is_null()
    }

    /// Sets the message `ip` prints with the error (a static string).
    pub fn set_msg(&self, msg: &'static CStr) {
        if !self.0.is_null() {
            // SAFETY: A live extack of the current request; `msg` is static
            // (what NL_SET_ERR_MSG stores).
            unsafe { (*self.0)._msg = msg.as_char_ptr() }
        }
    }

    /// Sets the message `ip` prints with the error, formatted into the
    /// extack's own buffer, cut at its 79 bytes (NL_SET_ERR_MSG_FMT).
    pub fn set_msg_fmt(&self, args: core::fmt::Arguments<'_>) {
        if self.0.is_null() {
            return;
        }
        // SAFETY: A live extack of the current request, which only this
        // request's handler writes while it runs.
        let ack = unsafe { &mut *self.0 };
        // SAFETY: `_msg_buf` is a `c_char` array; `u8` has its layout.
        let buf: &mut [u8] = unsafe {
            core::slice::from_raw_parts_mut(ack._msg_buf.as_mut_ptr().cast(), ack._msg_buf.len())
        };
        let last = buf.len() - 1;
        let mut w = SliceWriter {
            buf: &mut buf[..last],
            at: 0,
        };
        let _ = kernel::fmt::Write::write_fmt(&mut w, args);
        let end = w.at;
        buf[end] = 0;
        ack._msg = ack._msg_buf.as_ptr();
    }

    /// Points the error at attribute `ty` of `attrs` (NL_SET_BAD_ATTR), if
    /// the request carries it.
    pub fn set_bad_attr(&self, attrs: &LinkAttrs<'_>, ty: u16) {
        if let (false, Some(a)) = (self.0.is_null(), attrs.raw(ty)) {
            // SAFETY: A live extack; `a` is in the request's message.
            unsafe { (*self.0).bad_attr = a };
        }
    }
}

/// The most attributes the core parses in a link kind's `IFLA_INFO_DATA`
/// (`RTNL_MAX_TYPE` of net/core/rtnetlink.c, in no header).
const RTNL_MAX_TYPE: usize = 50;

/// What an attribute of a link kind's `IFLA_INFO_DATA` is, for
/// [`Link::ATTRS`].
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum AttrKind {
    /// No attribute has this number: a request carrying it is refused.
    Reserved,
    /// Reported by [`Link::fill_info`], never set: a request carrying it is
    /// refused with this message.
    ReadOnly(&'static CStr),
    /// A u32 the user sets, checked by [`Link::check_u32`].
    U32,
}

/// The attributes of `ip link add/set DEV type KIND ...` (`IFLA_INFO_DATA`),
/// each already checked against [`Link::ATTRS`] and [`Link::check_u32`].
pub struct LinkAttrs<'a> {
    /// `nlattr *data[kinds.len() + 1]`, indexed by type.
    data: *mut *mut bindings::nlattr,
    kinds: &'static [AttrKind],
    _p: PhantomData<&'a bindings::nlattr>,
}

impl LinkAttrs<'_> {
    /// Attribute `ty`, if the request carries it.
    fn raw(&self, ty: u16) -> Option<*const bindings::nlattr> {
        if ty == 0 || usize::from(ty) > self.kinds.len() {
            return None;
        }
        // SAFETY: `data` has an entry for every type up to the kinds' count
        // (the maxtype the core parsed with).
        let a = unsafe { *self.data.add(usize::from(ty)) };
        (!a.is_null()).then_some(a.cast_const())
    }

    /// The value of u32 attribute `ty`, if the request carries it.
    pub fn u32(&self, ty: u16) -> Option<u32> {
        if self.kinds.get(usize::from(ty).wrapping_sub(1)) != Some(&AttrKind::U32) {
            return None;
        }
        // SAFETY: The policy (`NLA_U32`) made sure it holds 4 bytes.
        self.raw(ty).map(|a| unsafe { bindings::nla_get_u32(a) })
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

    fn raw(&self) -> &bindings::net_device {
        // SAFETY: Alive (invariant); fields read through this are ones the
        // core changes only with READ_ONCE-tolerant stores or under locks
        // the callers of the respective methods hold.
        unsafe { &*self.as_raw() }
    }

    /// The device's name (`eth0`).
    pub fn name(&self) -> &CStr {
        // SAFETY: `name` is a NUL-terminated array inside the device.
        unsafe { CStr::from_char_ptr(self.raw().name.as_ptr()) }
    }

    /// The name, for log lines.
    pub fn name_str(&self) -> &str {
        self.name().to_str().unwrap_or("?")
    }

    /// The interface index.
    pub fn ifindex(&self) -> i32 {
        self.raw().ifindex
    }

    /// The device's MAC address.
    pub fn addr(&self) -> Mac {
        let mut m = [0u8; 6];
        // SAFETY: An Ethernet device's `dev_addr` holds at least 6 bytes;
        // only `is_ether` devices reach callers of this.
        unsafe { core::ptr::copy_nonoverlapping(self.raw().dev_addr, m.as_mut_ptr(), 6) };
        m
    }

    /// The permanent (burnt-in) MAC address; zero if the device has none.
    pub fn perm_addr(&self) -> Mac {
        let mut m = [0u8; 6];
        m.copy_from_slice(&self.raw().perm_addr[..6]);
        m
    }

    /// The MTU.
    pub fn mtu(&self) -> u32 {
        // SAFETY: READ_ONCE of a field that changes under RTNL.
        unsafe { core::ptr::read_volatile(&self.raw().mtu) }
    }

    /// The largest MTU the device accepts.
    pub fn max_mtu(&self) -> u32 {
        self.raw().max_mtu
    }

    /// `IFF_*` flags.
    pub fn flags(&self) -> u32 {
        // SAFETY: READ_ONCE of a field that changes under RTNL.
        unsafe { core::ptr::read_volatile(&self.raw().flags) }
    }

    /// Whether this is a loopback device.
    pub fn is_loopback(&self) -> bool {
        self.flags() & bindings::net_device_flags_IFF_LOOPBACK != 0
    }

    /// Whether this is an Ethernet device (type and address length).
    pub fn is_ether(&self) -> bool {
        u32::from(self.raw().type_) == bindings::ARPHRD_ETHER
            && u32::from(self.raw().addr_len) == bindings::ETH_ALEN
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
        self.raw().real_num_tx_queues
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
        core::ptr::eq(self.raw().netdev_ops, ops)
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
        // SAFETY: Alive; a plain field the core reads under RTNL, held.
        unsafe { (*self.as_raw()).max_mtu = mtu };
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
        // SAFETY: Alive; a racy read of a word-sized field is what the
        // stack's own transmit path does.
        unsafe {
            core::ptr::read_volatile(&(*self.as_raw()).features) & bindings::netif_f_hw_gso() != 0
        }
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

/// A netlink message being filled (`fill_info`, `fill_slave_info`, a
/// generic netlink message).
///
/// Only lent, as `&NlMsg`, by what owns the message, for as long as it
/// is being built: a driver can neither keep one nor swap two, so every
/// attribute lands in the message it was lent for. Its methods take
/// `&self`: the message is the kernel's, written through the pointer.
pub struct NlMsg(*mut bindings::sk_buff);

impl NlMsg {
    /// The message being built in `skb`.
    pub(super) fn from_raw(skb: *mut bindings::sk_buff) -> NlMsg {
        NlMsg(skb)
    }

    pub(super) fn as_raw(&self) -> *mut bindings::sk_buff {
        self.0
    }

    /// Adds a string attribute (with its NUL).
    pub fn put_str(&self, attr: u16, v: &str) -> Result {
        let len = i32::try_from(v.len() + 1).map_err(|_| EMSGSIZE)?;
        // SAFETY: A message being built; the attribute reserved has room
        // for the string and its NUL.
        unsafe {
            let a = bindings::nla_reserve(self.0, i32::from(attr), len);
            if a.is_null() {
                return Err(EMSGSIZE);
            }
            let data = a.cast::<u8>().add(4);
            core::ptr::copy_nonoverlapping(v.as_ptr(), data, v.len());
            *data.add(v.len()) = 0;
        }
        Ok(())
    }

    /// Adds nest `attr`, filled by `f`; if `f` fails (no room), the nest
    /// is taken out whole and the error returned.
    pub fn nest(&self, attr: u16, f: impl FnOnce(&NlMsg) -> Result) -> Result {
        // SAFETY: A message being built.
        let start = unsafe { bindings::nla_nest_start(self.0, i32::from(attr)) };
        if start.is_null() {
            return Err(EMSGSIZE);
        }
        let r = f(self);
        // SAFETY: `start` is this nest's, and everything after it in the
        // message was added by `f`: ending or trimming there is exact.
        unsafe {
            if r.is_ok() {
                bindings::nla_nest_end(self.0, start);
            } else {
                bindings::nla_nest_cancel(self.0, start);
            }
        }
        r
    }

    /// Adds the u64 attributes `first`, `first + 1`, ..., one per value.
    pub fn put_u64s(&self, first: u16, values: &[u64]) -> Result {
        for (i, v) in values.iter().enumerate() {
            self.put_u64(first + i as u16, *v)?;
        }
        Ok(())
    }

    /// Adds a u32 attribute.
    pub fn put_u32(&self, attr: u16, v: u32) -> Result {
        // SAFETY: A message the core is building for us.
        to_result(unsafe { bindings::nla_put_u32(self.0, i32::from(attr), v) })
            .map_err(|_| EMSGSIZE)
    }

    /// Adds a u8 attribute.
    pub fn put_u8(&self, attr: u16, v: u8) -> Result {
        // SAFETY: As above.
        to_result(unsafe { bindings::nla_put_u8(self.0, i32::from(attr), v) }).map_err(|_| EMSGSIZE)
    }

    /// Adds a u64 attribute.
    pub fn put_u64(&self, attr: u16, v: u64) -> Result {
        // SAFETY: As above.
        to_result(unsafe { bindings::nla_put_u64(self.0, i32::from(attr), v) })
            .map_err(|_| EMSGSIZE)
    }

    /// Adds a byte-string attribute.
    pub fn put_bytes(&self, attr: u16, v: &[u8]) -> Result {
        // SAFETY: As above; `v` is readable for its length.
        to_result(unsafe {
            bindings::nla_put(self.0, i32::from(attr), v.len() as i32, v.as_ptr().cast())
        })
        .map_err(|_| EMSGSIZE)
    }

    /// Room an attribute of `payload` bytes takes.
    pub const fn attr_size(payload: usize) -> usize {
        // NLA_HDRLEN + payload, aligned to 4 (nla_total_size()).
        (4 + payload + 3) & !3
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

/// Features and flags a driver sets on a new device in [`Driver::setup`].
pub struct Setup<'a>(&'a Device);

impl Setup<'_> {
    /// The device.
    pub fn dev(&self) -> &Device {
        self.0
    }

    fn raw(&mut self) -> &mut bindings::net_device {
        // SAFETY: During setup nothing else sees the device.
        unsafe { &mut *self.0.as_raw() }
    }

    /// Room the driver adds in front of every packet it sends.
    pub fn set_needed_headroom(&mut self, n: u16) {
        self.raw().needed_headroom = n;
    }

    /// MTU bounds and value.
    pub fn set_mtu(&mut self, mtu: u32, min: u32, max: u32) {
        let d = self.raw();
        d.mtu = mtu;
        d.min_mtu = min;
        d.max_mtu = max;
    }

    /// `NETIF_F_*` bits (by `NETIF_F_*_BIT` number) the device offers and
    /// has on.
    pub fn set_features(&mut self, bits: &[u32]) {
        let mut f: u64 = 0;
        for b in bits {
            f |= 1u64 << b;
        }
        let d = self.raw();
        d.hw_features |= f;
        d.features |= f;
    }

    /// `NETIF_F_*` bits VLAN devices and tunnels over the device keep
    /// (`vlan_features`, `hw_enc_features`), as over a bond.
    pub fn set_stacked_features(&mut self, bits: &[u32]) {
        let mut f: u64 = 0;
        for b in bits {
            f |= 1u64 << b;
        }
        let d = self.raw();
        d.vlan_features |= f;
        d.hw_enc_features |= f;
    }

    /// A virtual device: no queue of its own, lockless transmit, live MAC
    /// changes, no netpoll; cannot change network namespace when `pinned`.
    pub fn set_virtual(&mut self, pinned: bool) {
        let d = self.raw();
        // SAFETY: Reading a bitfield of a union member that is always the
        // struct (the other member is a view of the same bits).
        let f = unsafe { &mut d.__bindgen_anon_1.__bindgen_anon_1 };
        // No IFF_TX_SKB_SHARING (ether_setup sets it): the driver changes
        // the packets it is given, so pktgen must not hand one over twice.
        // IFF_UNICAST_FLT: secondary unicast addresses go to the ports'
        // filters (set_rx_mode), not into promiscuous mode.
        f.set_priv_flags(
            (f.priv_flags()
                & !(bindings::netdev_priv_flags_IFF_TX_SKB_SHARING as kernel::ffi::c_ulong))
                | (bindings::netdev_priv_flags_IFF_NO_QUEUE
                    | bindings::netdev_priv_flags_IFF_LIVE_ADDR_CHANGE
                    | bindings::netdev_priv_flags_IFF_DISABLE_NETPOLL
                    | bindings::netdev_priv_flags_IFF_UNICAST_FLT)
                    as kernel::ffi::c_ulong,
        );
        f.set_lltx(1);
        if pinned {
            d.set_netns_immutable(1);
        }
    }

    /// A random, locally administered MAC address.
    pub fn random_addr(&self) {
        // SAFETY: During setup; the device is ours.
        unsafe { bindings::eth_hw_addr_random(self.0.as_raw()) }
    }
}

/// The operations of a device kind, one trait per C table, after
/// `kernel::net::phy`: this one is `net_device_ops` and the device's life;
/// [`Link`] is `rtnl_link_ops`, [`Ethtool`] `ethtool_ops`, [`Port`] the
/// ports' `rx_handler`, [`Sysfs`] the device's attribute group. `Self` is
/// the private data of each device (`netdev_priv`).
///
/// Methods marked optional in `#[vtable]` fashion are left out of the C
/// tables unless implemented.
#[vtable]
pub trait Driver: Link + Ethtool + Port + Sysfs + Sized + Send + Sync + 'static {
    /// Makes a new device what it is (`rtnl_link_ops.setup`, also on
    /// `alloc_netdev`), before any private data exists.
    fn setup(dev: &mut Setup<'_>);

    /// The private data of a device being registered (`ndo_init`).
    fn init(dev: &Device) -> impl PinInit<Self, Error>;

    /// The device was registered (by `ip link add` or
    /// [`NetDevice::create`]), under RTNL. An error unregisters it again.
    fn registered(_dev: &NetDevice<Self>, _rtnl: &Rtnl) -> Result {
        Ok(())
    }

    /// The device is being unregistered (`ndo_uninit`), under RTNL: release
    /// everything that hangs on other devices. Its data is dropped later.
    fn uninit(_dev: &NetDevice<Self>, _rtnl: &Rtnl) {}

    /// `ndo_open`.
    fn open(dev: &NetDevice<Self>, rtnl: &Rtnl) -> Result;

    /// `ndo_stop`.
    fn stop(dev: &NetDevice<Self>, rtnl: &Rtnl) -> Result;

    /// `ndo_start_xmit`: consumes the packet whatever happens.
    fn start_xmit(dev: &NetDevice<Self>, skb: Skb);

    /// `ndo_set_mac_address`; `addr` is not yet the device's address.
    fn set_mac_address(_dev: &NetDevice<Self>, _rtnl: &Rtnl, _addr: &Mac) -> Result {
        build_error!(kernel::error::VTABLE_DEFAULT_ERROR)
    }

    /// `ndo_change_mtu`: checks and applies `mtu`.
    fn change_mtu(_dev: &NetDevice<Self>, _rtnl: &Rtnl, _mtu: u32) -> Result {
        build_error!(kernel::error::VTABLE_DEFAULT_ERROR)
    }

    /// `ndo_get_stats64`.
    fn get_stats64(_dev: &NetDevice<Self>, _stats: &mut Stats64) {
        build_error!(kernel::error::VTABLE_DEFAULT_ERROR)
    }

    /// `ndo_add_slave`: `ip link set PORT master DEV`.
    fn add_slave(_dev: &NetDevice<Self>, _rtnl: &Rtnl, _port: &Device, _extack: &ExtAck) -> Result {
        build_error!(kernel::error::VTABLE_DEFAULT_ERROR)
    }

    /// `ndo_del_slave`: `ip link set PORT nomaster`.
    fn del_slave(_dev: &NetDevice<Self>, _rtnl: &Rtnl, _port: &Device) -> Result {
        build_error!(kernel::error::VTABLE_DEFAULT_ERROR)
    }

    /// `ndo_change_rx_flags`: `IFF_PROMISC` or `IFF_ALLMULTI` toggled.
    fn change_rx_flags(_dev: &NetDevice<Self>, _rtnl: &Rtnl, _change: u32) {
        build_error!(kernel::error::VTABLE_DEFAULT_ERROR)
    }

    /// `ndo_set_rx_mode`: the address lists changed; under the device's
    /// address lock (`locked`), BH disabled.
    fn set_rx_mode(_dev: &NetDevice<Self>, _locked: &AddrListLocked<'_>) {
        build_error!(kernel::error::VTABLE_DEFAULT_ERROR)
    }
}

/// `rtnl_link_ops`: the link kind, what `ip link` creates and shows.
#[vtable]
pub trait Link: Sized {
    /// The link kind (`ip link add NAME type KIND`).
    const KIND: &'static CStr;
    /// The name of devices created without one (`"ri2n%d"`).
    const NAME_TEMPLATE: &'static CStr;
    /// Bytes `fill_info` adds at most.
    const INFO_SIZE: usize = 0;
    /// Bytes `fill_slave_info` adds at most.
    const SLAVE_INFO_SIZE: usize = 0;

    /// What each attribute of `IFLA_INFO_DATA` is, type 1 first; empty:
    /// `ip link add/set ... type KIND` takes none.
    const ATTRS: &'static [AttrKind] = &[];

    /// Checks the value of u32 attribute `ty` on its own (its range, say),
    /// saying why in `extack`. The core calls it as it parses a request,
    /// before [`Link::changelink`] or the device's creation.
    fn check_u32(_ty: u16, _v: u32, _extack: &ExtAck) -> Result {
        Ok(())
    }

    /// `ip link add DEV type KIND ATTRS`: checks `attrs` as a whole before
    /// the device is made, so that a refusal leaves no trace of it. Under
    /// RTNL.
    fn check_new(_attrs: &LinkAttrs<'_>, _extack: &ExtAck) -> Result {
        Ok(())
    }

    /// `ip link add/set DEV type KIND ATTRS`: applies `attrs`, all or none,
    /// to a device just registered or to an existing one, under RTNL. An
    /// error during `ip link add` deletes the new device again.
    fn changelink(
        _dev: &NetDevice<Self>,
        _rtnl: &Rtnl,
        _attrs: &LinkAttrs<'_>,
        _extack: &ExtAck,
    ) -> Result {
        build_error!(kernel::error::VTABLE_DEFAULT_ERROR)
    }

    /// `ip -d link show DEV`: the kind's attributes.
    fn fill_info(_dev: &NetDevice<Self>, _msg: &NlMsg) -> Result {
        Ok(())
    }

    /// `ip -d link show PORT`: the port's attributes.
    fn fill_slave_info(_dev: &NetDevice<Self>, _port: &Device, _msg: &NlMsg) -> Result {
        Ok(())
    }
}

/// `ethtool_ops`.
#[vtable]
pub trait Ethtool: Sized {
    /// `ethtool -i`: driver name and version.
    const DRIVER: &'static CStr;
    /// `ethtool -i`: version.
    const VERSION: &'static CStr;

    /// `ethtool` link speed in Mbit/s, if known.
    fn link_speed(_dev: &NetDevice<Self>, _rtnl: &Rtnl) -> Option<u32> {
        None
    }

    /// `ethtool -S`: how many counters (a constant: the core sizes its
    /// buffers from one call and fills them in another).
    const STATS_COUNT: usize = 0;

    /// `ethtool -S`: their names, [`Ethtool::STATS_COUNT`] of them.
    fn stats_names(_dev: &NetDevice<Self>, _out: &mut EthtoolStrings<'_>) {}

    /// `ethtool -S`: their values, in the same order.
    fn stats_values(_dev: &NetDevice<Self>, _out: &mut [u64]) {}
}

/// The ports' `rx_handler` ([`NetDevice::attach_port`]).
pub trait Port: Sized {
    /// A frame arrived on one of the device's ports (its rx_handler, see
    /// [`NetDevice::attach_port`]). Softirq (`bh`), under RCU.
    fn handle_frame(dev: &NetDevice<Self>, port: &Device, skb: Skb, bh: &Bh<'_>) -> RxHandled;
}

/// The device's sysfs attribute group.
#[vtable]
pub trait Sysfs: Sized {
    /// Per-device sysfs files, `/sys/class/net/DEV/SYSFS_DIR/NAME`, one per
    /// name in `SYSFS_ATTRS`; root may write them (0644).
    const SYSFS_DIR: &'static CStr = c"";
    /// See [`Sysfs::SYSFS_DIR`].
    const SYSFS_ATTRS: &'static [&'static CStr] = &[];

    /// Write-only sysfs files (0200: keys), in the same directory, after
    /// `SYSFS_ATTRS`: their `idx` goes on from `SYSFS_ATTRS.len()`. Never
    /// read back.
    const SYSFS_SECRETS: &'static [&'static CStr] = &[];

    /// Reads sysfs attribute `idx` (of [`Sysfs::SYSFS_ATTRS`]).
    fn sysfs_show(_dev: &NetDevice<Self>, _idx: usize, _out: &mut TextBuf<'_>) {}

    /// Writes sysfs attribute `idx`; `input` is what was written, trimmed.
    fn sysfs_store(_dev: &NetDevice<Self>, _idx: usize, _input: &str) -> Result {
        Err(EPERM)
    }
}

/// What `netdev_priv` holds for a driver `T`.
struct Priv<T> {
    /// Set once `data` is initialised (by `ndo_init`).
    ready: bool,
    data: MaybeUninit<T>,
}

/// A device of driver `T`.
///
/// # Invariants
///
/// A [`Device`] whose ops are `T`'s and whose private data, a `Priv<T>`, is
/// initialised (`ready`) for as long as a `&NetDevice<T>` exists.
#[repr(transparent)]
pub struct NetDevice<T>(Device, PhantomData<T>);

impl<T: Driver> core::ops::Deref for NetDevice<T> {
    type Target = Device;
    fn deref(&self) -> &Device {
        &self.0
    }
}

impl<T: Driver> NetDevice<T> {
    /// # Safety
    ///
    /// As [`Priv::ptr`].
    unsafe fn priv_of(dev: *mut bindings::net_device) -> *mut Priv<T> {
        // SAFETY: The caller's guarantee.
        unsafe { Priv::ptr(dev) }
    }

    /// Borrows one of our devices whose private data is initialised.
    ///
    /// # Safety
    ///
    /// `dev` is a live device of `T` whose `ndo_init` succeeded and whose
    /// data is not yet dropped, for the whole lifetime `'a`.
    unsafe fn from_raw<'a>(dev: *mut bindings::net_device) -> &'a NetDevice<T> {
        // SAFETY: Transparent wrapper over `Device`; caller's guarantee.
        unsafe { &*dev.cast::<NetDevice<T>>() }
    }

    /// The device whose private data is `data`.
    ///
    /// # Safety
    ///
    /// `data` is the private data of a device of ours (every `T` the core
    /// initialised in `ndo_init` is; one built elsewhere is not).
    pub(crate) unsafe fn from_data(data: &T) -> &NetDevice<T> {
        let data_off = core::mem::offset_of!(Priv<T>, data);
        // netdev_priv() is the `priv` flexible array at the end of the
        // device, cacheline aligned: `Priv<T>` must need no more.
        const { assert!(core::mem::align_of::<Priv<T>>() <= 64) };
        let priv_off = core::mem::offset_of!(bindings::net_device, priv_);
        // SAFETY: `data` sits `data_off` into the `Priv<T>` that starts
        // `priv_off` after its net_device (netdev_priv()), by the caller's
        // guarantee; the device lives as long as its data.
        unsafe {
            let dev = core::ptr::from_ref(data)
                .cast::<u8>()
                .sub(data_off + priv_off);
            NetDevice::from_raw(dev.cast_mut().cast())
        }
    }

    /// Counts `packets` sent, `bytes` in all, on this CPU's counters: no
    /// lock, no line shared with another CPU. `ip -s link` shows them added
    /// to what `get_stats64` gives.
    pub fn count_tx(&self, packets: u32, bytes: u32) {
        // SAFETY: A registered device of ours has its per-CPU counters
        // (`setup` asked for them). The core frees them at unregistration
        // (`netdev_run_todo`), after the last transmit (the device was
        // closed and its queues quiesced) and before the private data.
        unsafe { bindings::dev_sw_netstats_tx_add(self.as_raw(), packets, bytes) }
    }

    /// Counts `packets` received, `bytes` in all, on this CPU's counters,
    /// as [`NetDevice::count_tx`].
    pub fn count_rx(&self, packets: u32, bytes: u32) {
        // The kernel's helper counts one packet a call: a packet that was
        // several frames counts as those, its bytes over them.
        let n = packets.max(1);
        for i in 0..n {
            let len = bytes / n + if i == 0 { bytes % n } else { 0 };
            // SAFETY: As in `count_tx`: receive runs while the device is
            // registered (its handlers go before unregistration frees the
            // counters).
            unsafe { bindings::dev_sw_netstats_rx_add(self.as_raw(), len) }
        }
    }

    /// The sums of the per-CPU counters of [`NetDevice::count_tx`] and
    /// [`NetDevice::count_rx`].
    pub fn counted(&self) -> Counted {
        let mut s = bindings::rtnl_link_stats64::default();
        // SAFETY: As in `count_tx`: callers read them while the device is
        // registered (procfs goes in `ndo_uninit`, ethtool runs under
        // RTNL); `s` is ours.
        unsafe { bindings::dev_fetch_tstats(&mut s, self.as_raw()) };
        Counted {
            rx_packets: s.rx_packets,
            rx_bytes: s.rx_bytes,
            tx_packets: s.tx_packets,
            tx_bytes: s.tx_bytes,
        }
    }

    /// The device's private data.
    pub fn data(&self) -> &T {
        // SAFETY: Initialised, by the type invariant.
        unsafe { (*Self::priv_of(self.as_raw())).data.assume_init_ref() }
    }

    /// `dev` as a device of ours, if it is one.
    pub fn of(dev: &Device) -> Option<&NetDevice<T>> {
        if !dev.has_ops(Adapter::<T>::netdev_ops()) {
            return None;
        }
        // SAFETY: Our ops; a registered device of ours got past ndo_init
        // (ops are set in setup, but nothing hands out an unregistered
        // device), and its data lives until after it is unregistered,
        // which the borrow of `dev` precludes.
        let ready = unsafe { core::ptr::read_volatile(&(*Self::priv_of(dev.as_raw())).ready) };
        // SAFETY: As above.
        ready.then(|| unsafe { NetDevice::from_raw(dev.as_raw()) })
    }

    /// The device of ours `port` is a port of now, if any: for code that
    /// sees a port's frames before its rx_handler does, or after ours
    /// handed them to it (the lower device's GRO and GSO).
    ///
    /// # Safety
    ///
    /// `port` is a valid net_device, and the caller is in an RCU read-side
    /// section for as long as it uses the returned device.
    pub unsafe fn of_port_raw<'a>(port: *const bindings::net_device) -> Option<&'a NetDevice<T>> {
        // SAFETY: As the caller guarantees: RCU reads of two pointers.
        // `attach_port` sets the handler's data before the handler; and
        // `detach_port` clears the handler, waits for readers, then the
        // data. So with our handler seen, the data is our device (or NULL
        // if the loads were reordered: checked), alive while the caller's
        // RCU section lasts. One instance of `rx_handler::<T>` exists: the
        // kernel builds Rust with one codegen unit, and only this crate
        // names it.
        // Volatile reads are READ_ONCE, what rcu_dereference does but for
        // its lockdep check (this runs per received frame, in GRO).
        unsafe {
            let h = core::ptr::read_volatile(core::ptr::addr_of!((*port).rx_handler));
            if h.is_none_or(|f| f as *const () != rx_handler::<T> as *const ()) {
                return None;
            }
            let dev = core::ptr::read_volatile(core::ptr::addr_of!((*port).rx_handler_data))
                .cast::<bindings::net_device>();
            (!dev.is_null()).then(|| with::<T>(dev))
        }
    }

    /// `port`'s master, if it is a device of ours.
    pub fn master_of<'a>(rtnl: &'a Rtnl, port: &Device) -> Option<&'a NetDevice<T>> {
        port.master(rtnl).and_then(NetDevice::of)
    }

    /// Makes `port` ours: its frames go to [`Driver::handle_frame`] (an
    /// rx_handler), and it is linked below us as a master's lower device,
    /// so that no bond, bridge or team can take it. Refused if anything
    /// already owns it.
    pub fn attach_port(&self, _rtnl: &Rtnl, port: &Device, extack: &ExtAck) -> Result {
        // SAFETY: Both alive; RTNL held. The handler's data is our device,
        // which outlives the registration: `detach_port` (required before
        // our uninit returns) unregisters it and waits for readers.
        to_result(unsafe {
            bindings::netdev_rx_handler_register(
                port.as_raw(),
                Some(rx_handler::<T>),
                self.as_raw().cast(),
            )
        })?;
        // SAFETY: As above; no upper/lag info.
        let r = to_result(unsafe {
            bindings::netdev_master_upper_dev_link(
                port.as_raw(),
                self.as_raw(),
                core::ptr::null_mut(),
                core::ptr::null_mut(),
                extack.0,
            )
        });
        if r.is_err() {
            // SAFETY: Registered just above.
            unsafe { bindings::netdev_rx_handler_unregister(port.as_raw()) };
        }
        r
    }

    /// Undoes [`NetDevice::attach_port`]; when it returns, no handler call
    /// for `port` is running or will run.
    pub fn detach_port(&self, _rtnl: &Rtnl, port: &Device) {
        // SAFETY: Attached by `attach_port`; RTNL held. Unregistering the
        // handler waits for an RCU grace period (synchronize_net).
        unsafe {
            bindings::netdev_upper_dev_unlink(port.as_raw(), self.as_raw());
            bindings::netdev_rx_handler_unregister(port.as_raw());
        }
    }

    /// Creates and registers a device of ours outside of `ip link add`
    /// (a module parameter, say), named from the template.
    pub fn create<'a>(reg: &Registration<T>, rtnl: &'a Rtnl) -> Result<&'a NetDevice<T>> {
        // SAFETY: Our setup; one queue each way.
        let dev = unsafe {
            bindings::alloc_netdev_mqs(
                core::mem::size_of::<Priv<T>>() as i32,
                T::NAME_TEMPLATE.as_char_ptr(),
                bindings::NET_NAME_ENUM as u8,
                Some(setup::<T>),
                1,
                1,
            )
        };
        if dev.is_null() {
            return Err(ENOMEM);
        }
        // SAFETY: Allocated and not registered: ours alone. The link ops
        // make `ip link del` and module unload treat it like any other.
        unsafe { (*dev).rtnl_link_ops = reg.ops.get() };
        // SAFETY: RTNL held. On failure the core undid ndo_init (nothing to
        // drop: priv_destructor runs only for registered devices), and the
        // device is ours to free.
        let r = unsafe { bindings::register_netdevice(dev) };
        if r != 0 {
            // SAFETY: Never registered.
            unsafe { bindings::free_netdev(dev) };
            return Err(Error::from_errno(r));
        }
        // SAFETY: Registered, so ndo_init succeeded; it lives while RTNL,
        // which the borrow of `rtnl` holds, keeps it from being deleted.
        let d = unsafe { NetDevice::from_raw(dev) };
        if let Err(e) = T::registered(d, rtnl) {
            d.delete(rtnl);
            return Err(e);
        }
        Ok(d)
    }

    /// Unregisters the device (as `ip link del` does). The data is dropped
    /// once the last reference is gone.
    pub fn delete(&self, _rtnl: &Rtnl) {
        // SAFETY: Registered; RTNL held; a NULL list unregisters at once.
        unsafe { bindings::unregister_netdevice_queue(self.as_raw(), core::ptr::null_mut()) }
    }
}

/// The link type of driver `T`, registered for as long as this lives:
/// `ip link add NAME type KIND` creates devices, and dropping it deletes
/// every device of the kind, in every namespace.
#[pin_data(PinnedDrop)]
pub struct Registration<T: Driver> {
    /// The per-device sysfs files (before `ops`: registered devices point
    /// at it until `ops` is unregistered, which deletes them).
    sysfs: AttrGroup,
    /// `IFLA_INFO_DATA`'s policy, from [`Link::ATTRS`] (before `ops`,
    /// which points at it until unregistered).
    policy: KVec<bindings::nla_policy>,
    #[pin]
    ops: Opaque<bindings::rtnl_link_ops>,
    _p: PhantomData<T>,
}

// SAFETY: The ops table is only read by the core after registration.
unsafe impl<T: Driver> Sync for Registration<T> {}
// SAFETY: As above.
unsafe impl<T: Driver> Send for Registration<T> {}

impl<T: Driver> Registration<T> {
    /// Registers the link type.
    pub fn new() -> impl PinInit<Self, Error> {
        let policy = Adapter::<T>::policy();
        // The table's heap buffer stays where it is when the vector moves
        // into `Self`.
        let table = policy.as_ref().map_or(core::ptr::null(), |p| p.as_ptr());
        try_pin_init!(Self {
            sysfs: AttrGroup::new::<T>()?,
            policy: policy?,
            ops <- Opaque::try_ffi_init(|slot: *mut bindings::rtnl_link_ops| {
                // SAFETY: `slot` is ours to write; the table then stays
                // pinned inside `Self` until `drop` unregisters it, and
                // `policy` outlives it.
                unsafe {
                    slot.write(Adapter::<T>::link_ops(table));
                    to_result(bindings::rtnl_link_register(slot))
                }
            }),
            _p: PhantomData,
        })
    }
}

#[pinned_drop]
impl<T: Driver> PinnedDrop for Registration<T> {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: Registered in `new`; this deletes every device of the kind
        // (under RTNL) and waits for them to go.
        unsafe { bindings::rtnl_link_unregister(self.ops.get()) }
    }
}

/// The C callbacks of driver `T`.
struct Adapter<T>(PhantomData<T>);

/// Runs `f` with the device of an ndo call.
///
/// # Safety
///
/// `dev` is a registered device of `T` (the core calls our ops only for
/// those, after `ndo_init` succeeded).
unsafe fn with<'a, T: Driver>(dev: *mut bindings::net_device) -> &'a NetDevice<T> {
    // SAFETY: The caller's guarantee.
    unsafe { NetDevice::from_raw(dev) }
}

/// The C callback `setup`.
///
/// # Safety
///
/// Only the kernel calls it, through the table this module fills in, with
/// the arguments and in the context that table's contract gives.
unsafe extern "C" fn setup<T: Driver>(dev: *mut bindings::net_device) {
    // SAFETY: alloc_netdev calls us with a fresh device.
    let d = unsafe { Device::from_raw(dev) };
    // SAFETY: Fresh device: ours alone.
    unsafe {
        bindings::ether_setup(dev);
        (*dev).netdev_ops = Adapter::<T>::netdev_ops();
        (*dev).ethtool_ops = &Adapter::<T>::ETHTOOL_OPS;
        (*dev).needs_free_netdev = true;
        (*dev).priv_destructor = Some(priv_destructor::<T>);
        // Per-CPU packet counters, which the core allocates at
        // registration (`NetDevice::count_tx`).
        (*dev).set_pcpu_stat_type(bindings::netdev_stat_type_NETDEV_PCPU_STAT_TSTATS);
        // The data not yet there: `from_raw` and `of` refuse the device.
        // `Priv::ptr`'s contract: `dev` is live, allocated for `setup::<T>`
        // (`alloc_netdev_mqs` with room for a `Priv<T>`).
        (*Priv::<T>::ptr(dev)).ready = false;
    }
    T::setup(&mut Setup(d));
}

impl<T> Priv<T> {
    /// netdev_priv(), without a call on every packet: the `priv` flexible
    /// array at the end of the device (see `NetDevice::from_data`).
    ///
    /// # Safety
    ///
    /// `dev` points to a live device allocated by `setup::<T>`'s
    /// `alloc_netdev_mqs` (room for a `Priv<T>` in `priv`), not necessarily
    /// registered; what the place holds is the caller's to know.
    unsafe fn ptr(dev: *mut bindings::net_device) -> *mut Priv<T> {
        // SAFETY: `dev` is live (the caller's guarantee): a raw place in
        // it, no reference made.
        unsafe { core::ptr::addr_of_mut!((*dev).priv_).cast() }
    }
}

/// The C callback `priv_destructor`.
///
/// # Safety
///
/// Only the kernel calls it, through the table this module fills in, with
/// the arguments and in the context that table's contract gives.
unsafe extern "C" fn priv_destructor<T: Driver>(dev: *mut bindings::net_device) {
    // SAFETY: The core calls us with a device `setup` prepared, before it
    // frees it.
    let p = unsafe { Priv::<T>::ptr(dev) };
    // SAFETY: The last reference is gone: nothing else uses the data. It is
    // pinned in the device's memory, which the core frees after this.
    unsafe {
        if (*p).ready {
            (*p).ready = false;
            (*p).data.assume_init_drop();
        }
    }
}

/// The C callback `ndo_init`.
///
/// # Safety
///
/// Only the kernel calls it, through the table this module fills in, with
/// the arguments and in the context that table's contract gives.
unsafe extern "C" fn ndo_init<T: Driver>(dev: *mut bindings::net_device) -> i32 {
    // SAFETY: register_netdevice calls us for a device allocated by setup.
    let d = unsafe { Device::from_raw(dev) };
    // SAFETY: As above: allocated with `setup`.
    let p = unsafe { Priv::<T>::ptr(dev) };
    // SAFETY: Both ways of creating a device of ours (`ip link add`,
    // `NetDevice::create`) set its link ops, which are the `ops` field of
    // the `Registration<T>` that outlives it; sysfs files are added after
    // ndo_init, from `sysfs_groups`.
    unsafe {
        let reg = (*dev)
            .rtnl_link_ops
            .cast::<u8>()
            .sub(core::mem::offset_of!(Registration<T>, ops))
            .cast::<Registration<T>>();
        if !(*reg).sysfs.attrs.is_empty() {
            (*dev).sysfs_groups[0] = &(*reg).sysfs.group;
        }
    }
    from_result(|| {
        // SAFETY: The data slot is uninitialised and pinned in netdev_priv;
        // on error it stays uninitialised and `ready` false.
        unsafe { pin_init::raw_try_init((*p).data.as_mut_ptr(), T::init(d))? };
        // SAFETY: Just initialised.
        unsafe { (*p).ready = true };
        Ok(0)
    })
}

/// The C callback `ndo_uninit`.
///
/// # Safety
///
/// Only the kernel calls it, through the table this module fills in, with
/// the arguments and in the context that table's contract gives.
unsafe extern "C" fn ndo_uninit<T: Driver>(dev: *mut bindings::net_device) {
    // SAFETY: Called under RTNL, for a device whose init succeeded.
    unsafe { T::uninit(with::<T>(dev), Rtnl::assume_held()) }
}

/// The C callback `ndo_open`.
///
/// # Safety
///
/// Only the kernel calls it, through the table this module fills in, with
/// the arguments and in the context that table's contract gives.
unsafe extern "C" fn ndo_open<T: Driver>(dev: *mut bindings::net_device) -> i32 {
    // SAFETY: Under RTNL, for a registered device of ours.
    from_result(|| unsafe { T::open(with::<T>(dev), Rtnl::assume_held()) }.map(|()| 0))
}

/// The C callback `ndo_stop`.
///
/// # Safety
///
/// Only the kernel calls it, through the table this module fills in, with
/// the arguments and in the context that table's contract gives.
unsafe extern "C" fn ndo_stop<T: Driver>(dev: *mut bindings::net_device) -> i32 {
    // SAFETY: As in `ndo_open`.
    from_result(|| unsafe { T::stop(with::<T>(dev), Rtnl::assume_held()) }.map(|()| 0))
}

/// The C callback `ndo_start_xmit`.
///
/// # Safety
///
/// Only the kernel calls it, through the table this module fills in, with
/// the arguments and in the context that table's contract gives.
unsafe extern "C" fn ndo_start_xmit<T: Driver>(
    skb: *mut bindings::sk_buff,
    dev: *mut bindings::net_device,
) -> bindings::netdev_tx_t {
    // A shared packet cannot be changed in place; with IFF_TX_SKB_SHARING
    // off nothing should hand one over.
    // SAFETY: The stack hands us a packet, for a registered device.
    if unsafe { bindings::skb_shared(skb) } {
        // SAFETY: As above; dropping our reference is what xmit must do.
        unsafe {
            bindings::sk_skb_reason_drop(
                core::ptr::null_mut(),
                skb,
                bindings::skb_drop_reason_SKB_DROP_REASON_NOT_SPECIFIED,
            )
        };
        return bindings::netdev_tx_NETDEV_TX_OK;
    }
    // SAFETY: The stack hands us a packet to own, for a registered device.
    if let Some(skb) = unsafe { Skb::from_raw(skb) } {
        // SAFETY: As above.
        T::start_xmit(unsafe { with::<T>(dev) }, skb);
    }
    bindings::netdev_tx_NETDEV_TX_OK
}

/// The C callback `ndo_set_mac_address`.
///
/// # Safety
///
/// Only the kernel calls it, through the table this module fills in, with
/// the arguments and in the context that table's contract gives.
unsafe extern "C" fn ndo_set_mac_address<T: Driver>(
    dev: *mut bindings::net_device,
    addr: *mut core::ffi::c_void,
) -> i32 {
    // SAFETY: `addr` is a `struct sockaddr` whose `sa_data` holds the new
    // address (6 bytes, at offset 2).
    let mac: Mac = unsafe { core::ptr::read_unaligned(addr.cast::<u8>().add(2).cast::<Mac>()) };
    from_result(|| {
        // SAFETY: Under RTNL, for a registered device of ours.
        unsafe { T::set_mac_address(with::<T>(dev), Rtnl::assume_held(), &mac)? };
        // SAFETY: Validated by the driver; sets `dev_addr`.
        unsafe { bindings::eth_hw_addr_set(dev, mac.as_ptr()) };
        Ok(0)
    })
}

/// The C callback `ndo_change_mtu`.
///
/// # Safety
///
/// Only the kernel calls it, through the table this module fills in, with
/// the arguments and in the context that table's contract gives.
unsafe extern "C" fn ndo_change_mtu<T: Driver>(dev: *mut bindings::net_device, mtu: i32) -> i32 {
    from_result(|| {
        // SAFETY: As in `ndo_open`.
        unsafe { T::change_mtu(with::<T>(dev), Rtnl::assume_held(), mtu as u32) }.map(|()| 0)
    })
}

/// The C callback `ndo_get_stats64`.
///
/// # Safety
///
/// Only the kernel calls it, through the table this module fills in, with
/// the arguments and in the context that table's contract gives.
unsafe extern "C" fn ndo_get_stats64<T: Driver>(
    dev: *mut bindings::net_device,
    s: *mut bindings::rtnl_link_stats64,
) {
    let mut st = Stats64::default();
    // SAFETY: A registered device of ours.
    T::get_stats64(unsafe { with::<T>(dev) }, &mut st);
    // SAFETY: `s` is the core's, writable for the call.
    let s = unsafe { &mut *s };
    s.rx_packets = st.rx_packets;
    s.rx_bytes = st.rx_bytes;
    s.tx_packets = st.tx_packets;
    s.tx_bytes = st.tx_bytes;
    s.rx_dropped = st.rx_dropped;
    s.tx_dropped = st.tx_dropped;
    s.rx_errors = st.rx_errors;
    s.rx_frame_errors = st.rx_frame_errors;
    // SAFETY: A registered device of ours has its per-CPU counters (set
    // up in `setup`); `s` as above. They are added to what `T` counted.
    unsafe { bindings::dev_fetch_tstats(s, dev) };
}

/// The C callback `ndo_add_slave`.
///
/// # Safety
///
/// Only the kernel calls it, through the table this module fills in, with
/// the arguments and in the context that table's contract gives.
unsafe extern "C" fn ndo_add_slave<T: Driver>(
    dev: *mut bindings::net_device,
    port: *mut bindings::net_device,
    extack: *mut bindings::netlink_ext_ack,
) -> i32 {
    from_result(|| {
        // SAFETY: Under RTNL; both devices are alive for the call.
        unsafe {
            T::add_slave(
                with::<T>(dev),
                Rtnl::assume_held(),
                Device::from_raw(port),
                &ExtAck(extack),
            )
        }
        .map(|()| 0)
    })
}

/// The C callback `ndo_del_slave`.
///
/// # Safety
///
/// Only the kernel calls it, through the table this module fills in, with
/// the arguments and in the context that table's contract gives.
unsafe extern "C" fn ndo_del_slave<T: Driver>(
    dev: *mut bindings::net_device,
    port: *mut bindings::net_device,
) -> i32 {
    from_result(|| {
        // SAFETY: As in `ndo_add_slave`.
        unsafe { T::del_slave(with::<T>(dev), Rtnl::assume_held(), Device::from_raw(port)) }
            .map(|()| 0)
    })
}

/// The C callback `ndo_change_rx_flags`.
///
/// # Safety
///
/// Only the kernel calls it, through the table this module fills in, with
/// the arguments and in the context that table's contract gives.
unsafe extern "C" fn ndo_change_rx_flags<T: Driver>(dev: *mut bindings::net_device, change: i32) {
    // SAFETY: Under RTNL, for a registered device of ours.
    unsafe { T::change_rx_flags(with::<T>(dev), Rtnl::assume_held(), change as u32) }
}

/// The C callback `ndo_set_rx_mode`.
///
/// # Safety
///
/// Only the kernel calls it, through the table this module fills in, with
/// the arguments and in the context that table's contract gives.
unsafe extern "C" fn ndo_set_rx_mode<T: Driver>(dev: *mut bindings::net_device) {
    // SAFETY: Under the device's address lock, for a registered device.
    let d = unsafe { with::<T>(dev) };
    T::set_rx_mode(d, &AddrListLocked(d))
}

/// The C callback `rx_handler`.
///
/// # Safety
///
/// Only the kernel calls it, through the table this module fills in, with
/// the arguments and in the context that table's contract gives.
unsafe extern "C" fn rx_handler<T: Driver>(
    pskb: *mut *mut bindings::sk_buff,
) -> bindings::rx_handler_result_t {
    // SAFETY: The core passes the packet it owns, received on a port of
    // ours, under RCU; the port's handler data is our device, alive until
    // `detach_port` has waited for us.
    unsafe {
        let skb = bindings::skb_share_check(*pskb);
        let Some(skb) = Skb::from_raw(skb) else {
            return bindings::rx_handler_result_RX_HANDLER_CONSUMED;
        };
        let port = super::skb::dev_of(skb.as_raw());
        let dev = bindings::rx_handler_data(port).cast::<bindings::net_device>();
        // The core calls rx_handlers from softirq, or with BH off (a
        // threaded NAPI poll disables it): for this call.
        let bh = Bh::new();
        match T::handle_frame(with::<T>(dev), Device::from_raw(port), skb, &bh) {
            RxHandled::Consumed => bindings::rx_handler_result_RX_HANDLER_CONSUMED,
            RxHandled::Pass(skb) => {
                *pskb = skb.into_raw();
                bindings::rx_handler_result_RX_HANDLER_PASS
            }
        }
    }
}

/// The C callback `get_drvinfo`.
///
/// # Safety
///
/// Only the kernel calls it, through the table this module fills in, with
/// the arguments and in the context that table's contract gives.
unsafe extern "C" fn get_drvinfo<T: Driver>(
    _dev: *mut bindings::net_device,
    info: *mut bindings::ethtool_drvinfo,
) {
    // SAFETY: `info` is writable for the call; the arrays are 32 bytes.
    let info = unsafe { &mut *info };
    copy_cstr(&mut info.driver, T::DRIVER);
    copy_cstr(&mut info.version, T::VERSION);
}

fn copy_cstr(dst: &mut [kernel::ffi::c_char], src: &CStr) {
    let b = src.to_bytes();
    let n = b.len().min(dst.len() - 1);
    for (d, s) in dst.iter_mut().zip(b[..n].iter()) {
        *d = *s as kernel::ffi::c_char;
    }
    dst[n] = 0;
}

/// The C callback `get_link_ksettings`.
///
/// # Safety
///
/// Only the kernel calls it, through the table this module fills in, with
/// the arguments and in the context that table's contract gives.
unsafe extern "C" fn get_link_ksettings<T: Driver>(
    dev: *mut bindings::net_device,
    ks: *mut bindings::ethtool_link_ksettings,
) -> i32 {
    // SAFETY: Under RTNL (ethtool ioctls and netlink take it), for a
    // registered device of ours; `ks` is writable.
    unsafe {
        let speed = T::link_speed(with::<T>(dev), Rtnl::assume_held());
        (*ks).base.speed = speed.unwrap_or(bindings::SPEED_UNKNOWN as u32);
        (*ks).base.duplex = if speed.is_some() {
            bindings::DUPLEX_FULL
        } else {
            bindings::DUPLEX_UNKNOWN
        } as u8;
        (*ks).base.port = bindings::PORT_OTHER as u8;
    }
    0
}

/// The C callback `get_sset_count`.
///
/// # Safety
///
/// Only the kernel calls it, through the table this module fills in, with
/// the arguments and in the context that table's contract gives.
unsafe extern "C" fn get_sset_count<T: Driver>(dev: *mut bindings::net_device, sset: i32) -> i32 {
    if sset as u32 != bindings::ethtool_stringset_ETH_SS_STATS {
        return EOPNOTSUPP.to_errno();
    }
    let _ = dev;
    T::STATS_COUNT as i32
}

/// The C callback `get_strings`.
///
/// # Safety
///
/// Only the kernel calls it, through the table this module fills in, with
/// the arguments and in the context that table's contract gives.
unsafe extern "C" fn get_strings<T: Driver>(
    dev: *mut bindings::net_device,
    sset: u32,
    buf: *mut u8,
) {
    if sset != bindings::ethtool_stringset_ETH_SS_STATS {
        return;
    }
    // SAFETY: A registered device of ours; the core sized `buf` from
    // `get_sset_count` (ETH_GSTRING_LEN bytes each), under RTNL so the
    // count cannot change in between.
    unsafe {
        let d = with::<T>(dev);
        let n = T::STATS_COUNT * bindings::ETH_GSTRING_LEN as usize;
        T::stats_names(
            d,
            &mut EthtoolStrings {
                buf: core::slice::from_raw_parts_mut(buf, n),
                at: 0,
            },
        );
    }
}

/// The C callback `get_ethtool_stats`.
///
/// # Safety
///
/// Only the kernel calls it, through the table this module fills in, with
/// the arguments and in the context that table's contract gives.
unsafe extern "C" fn get_ethtool_stats<T: Driver>(
    dev: *mut bindings::net_device,
    _stats: *mut bindings::ethtool_stats,
    data: *mut u64,
) {
    // SAFETY: As in `get_strings`: `data` has room for the count.
    unsafe {
        let d = with::<T>(dev);
        let out = core::slice::from_raw_parts_mut(data, T::STATS_COUNT);
        out.fill(0);
        T::stats_values(d, out);
    }
}

/// The C callback `newlink`.
///
/// # Safety
///
/// Only the kernel calls it, through the table this module fills in, with
/// the arguments and in the context that table's contract gives.
unsafe extern "C" fn newlink<T: Driver>(
    dev: *mut bindings::net_device,
    params: *mut bindings::rtnl_newlink_params,
    extack: *mut bindings::netlink_ext_ack,
) -> i32 {
    // SAFETY: Under RTNL; `dev` was allocated by the core with our setup
    // and is not registered yet. On failure the core frees it; once
    // registered, an error must unregister it ourselves. `params` is the
    // request's, its `data` parsed by our policy (null without
    // `IFLA_INFO_DATA`).
    unsafe {
        let data = (*params).data;
        if !data.is_null() {
            if let Err(e) = T::check_new(&Adapter::<T>::attrs(data), &ExtAck(extack)) {
                return e.to_errno();
            }
        }
        let r = bindings::register_netdevice(dev);
        if r != 0 {
            return r;
        }
        let d = with::<T>(dev);
        let rtnl = Rtnl::assume_held();
        let mut r = T::registered(d, rtnl);
        if r.is_ok() && T::HAS_CHANGELINK && !data.is_null() {
            r = T::changelink(d, rtnl, &Adapter::<T>::attrs(data), &ExtAck(extack));
        }
        match r {
            Ok(()) => 0,
            Err(e) => {
                bindings::unregister_netdevice_queue(dev, core::ptr::null_mut());
                e.to_errno()
            }
        }
    }
}

/// The C callback `changelink`.
///
/// # Safety
///
/// Only the kernel calls it, through the table this module fills in, with
/// the arguments and in the context that table's contract gives.
unsafe extern "C" fn changelink<T: Driver>(
    dev: *mut bindings::net_device,
    _tb: *mut *mut bindings::nlattr,
    data: *mut *mut bindings::nlattr,
    extack: *mut bindings::netlink_ext_ack,
) -> i32 {
    // SAFETY: Under RTNL, for a registered device of ours; the core calls
    // it only with `IFLA_INFO_DATA` parsed into `data` by our policy.
    from_result(|| unsafe {
        T::changelink(
            with::<T>(dev),
            Rtnl::assume_held(),
            &Adapter::<T>::attrs(data),
            &ExtAck(extack),
        )
        .map(|()| 0)
    })
}

/// The policy's check of a u32 attribute (`NLA_VALIDATE_FUNCTION`).
///
/// # Safety
///
/// Only the kernel calls it, through the policy this module fills in, with
/// an attribute whose length the policy's type checked.
unsafe extern "C" fn check_u32<T: Driver>(
    attr: *const bindings::nlattr,
    extack: *mut bindings::netlink_ext_ack,
) -> i32 {
    // SAFETY: A `NLA_U32` attribute of the request being parsed, 4 bytes.
    let (ty, v) = unsafe { (bindings::nla_type(attr) as u16, bindings::nla_get_u32(attr)) };
    let r = T::check_u32(ty, v, &ExtAck(extack));
    if r.is_err() && !extack.is_null() {
        // SAFETY: The request's live extack; `attr` is in its message
        // (NL_SET_BAD_ATTR, which the core does not do for a validate
        // function).
        unsafe { (*extack).bad_attr = attr };
    }
    from_result(|| r.map(|()| 0))
}

/// The C callback `get_size`.
///
/// # Safety
///
/// Only the kernel calls it, through the table this module fills in, with
/// the arguments and in the context that table's contract gives.
unsafe extern "C" fn get_size<T: Driver>(_dev: *const bindings::net_device) -> usize {
    T::INFO_SIZE
}

/// The C callback `fill_info`.
///
/// # Safety
///
/// Only the kernel calls it, through the table this module fills in, with
/// the arguments and in the context that table's contract gives.
unsafe extern "C" fn fill_info<T: Driver>(
    skb: *mut bindings::sk_buff,
    dev: *const bindings::net_device,
) -> i32 {
    // SAFETY: Under RTNL, for a registered device of ours; `skb` is the
    // message being built.
    from_result(|| unsafe { T::fill_info(with::<T>(dev.cast_mut()), &NlMsg(skb)) }.map(|()| 0))
}

/// The C callback `get_slave_size`.
///
/// # Safety
///
/// Only the kernel calls it, through the table this module fills in, with
/// the arguments and in the context that table's contract gives.
unsafe extern "C" fn get_slave_size<T: Driver>(
    _dev: *const bindings::net_device,
    _port: *const bindings::net_device,
) -> usize {
    T::SLAVE_INFO_SIZE
}

/// The C callback `fill_slave_info`.
///
/// # Safety
///
/// Only the kernel calls it, through the table this module fills in, with
/// the arguments and in the context that table's contract gives.
unsafe extern "C" fn fill_slave_info<T: Driver>(
    skb: *mut bindings::sk_buff,
    dev: *const bindings::net_device,
    port: *const bindings::net_device,
) -> i32 {
    from_result(|| {
        // SAFETY: As in `fill_info`; the port is alive under RTNL.
        unsafe {
            T::fill_slave_info(
                with::<T>(dev.cast_mut()),
                Device::from_raw(port.cast_mut()),
                &NlMsg(skb),
            )
        }
        .map(|()| 0)
    })
}

impl<T: Driver> Adapter<T> {
    /// The one address of `T`'s ops table: devices are told apart by it, and
    /// a constant's address may differ between the places it is taken.
    #[inline(never)]
    fn netdev_ops() -> &'static bindings::net_device_ops {
        &Self::NETDEV_OPS
    }

    const NETDEV_OPS: bindings::net_device_ops = bindings::net_device_ops {
        ndo_init: Some(ndo_init::<T>),
        ndo_uninit: Some(ndo_uninit::<T>),
        ndo_open: Some(ndo_open::<T>),
        ndo_stop: Some(ndo_stop::<T>),
        ndo_start_xmit: Some(ndo_start_xmit::<T>),
        ndo_validate_addr: Some(bindings::eth_validate_addr),
        ndo_set_mac_address: if T::HAS_SET_MAC_ADDRESS {
            Some(ndo_set_mac_address::<T>)
        } else {
            None
        },
        ndo_change_mtu: if T::HAS_CHANGE_MTU {
            Some(ndo_change_mtu::<T>)
        } else {
            None
        },
        ndo_get_stats64: if T::HAS_GET_STATS64 {
            Some(ndo_get_stats64::<T>)
        } else {
            None
        },
        ndo_add_slave: if T::HAS_ADD_SLAVE {
            Some(ndo_add_slave::<T>)
        } else {
            None
        },
        ndo_del_slave: if T::HAS_DEL_SLAVE {
            Some(ndo_del_slave::<T>)
        } else {
            None
        },
        ndo_change_rx_flags: if T::HAS_CHANGE_RX_FLAGS {
            Some(ndo_change_rx_flags::<T>)
        } else {
            None
        },
        ndo_set_rx_mode: if T::HAS_SET_RX_MODE {
            Some(ndo_set_rx_mode::<T>)
        } else {
            None
        },
        // SAFETY: All-zero is a valid ops table: every op absent.
        ..unsafe { MaybeUninit::zeroed().assume_init() }
    };

    const ETHTOOL_OPS: bindings::ethtool_ops = bindings::ethtool_ops {
        get_drvinfo: Some(get_drvinfo::<T>),
        get_link: Some(bindings::ethtool_op_get_link),
        get_link_ksettings: Some(get_link_ksettings::<T>),
        get_sset_count: Some(get_sset_count::<T>),
        get_strings: Some(get_strings::<T>),
        get_ethtool_stats: Some(get_ethtool_stats::<T>),
        // SAFETY: All-zero is a valid ops table: every op absent.
        ..unsafe { MaybeUninit::zeroed().assume_init() }
    };

    /// The link ops, with `policy` for [`Link::ATTRS`] (null if none).
    fn link_ops(policy: *const bindings::nla_policy) -> bindings::rtnl_link_ops {
        bindings::rtnl_link_ops {
            kind: T::KIND.as_char_ptr(),
            priv_size: core::mem::size_of::<Priv<T>>(),
            setup: Some(setup::<T>),
            maxtype: if T::ATTRS.is_empty() {
                0
            } else {
                RTNL_MAX_TYPE as u32
            },
            policy,
            newlink: Some(newlink::<T>),
            changelink: if T::HAS_CHANGELINK {
                Some(changelink::<T>)
            } else {
                None
            },
            get_size: Some(get_size::<T>),
            fill_info: Some(fill_info::<T>),
            get_slave_size: Some(get_slave_size::<T>),
            fill_slave_info: Some(fill_slave_info::<T>),
            // SAFETY: All-zero is a valid table: every other op absent.
            ..unsafe { MaybeUninit::zeroed().assume_init() }
        }
    }

    /// `IFLA_INFO_DATA`'s policy: one entry per type, 0 to the most the
    /// core parses (`RTNL_MAX_TYPE`), those past `ATTRS` reserved. Entry 0
    /// makes every attribute strictly checked (`strict_start_type` 1): a
    /// reserved one, as a newer `ip` may send an older module, is refused,
    /// not ignored.
    fn policy() -> Result<KVec<bindings::nla_policy>> {
        build_assert!(T::ATTRS.len() <= RTNL_MAX_TYPE);
        let mut v = KVec::with_capacity(RTNL_MAX_TYPE + 1, GFP_KERNEL)?;
        // SAFETY: All-zero is a valid entry (`NLA_UNSPEC`, no validation).
        let zero: bindings::nla_policy = unsafe { MaybeUninit::zeroed().assume_init() };
        let mut first = zero;
        first.__bindgen_anon_1.strict_start_type = 1;
        v.push(first, GFP_KERNEL)?;
        for kind in T::ATTRS {
            let mut e = zero;
            match kind {
                AttrKind::Reserved => {}
                AttrKind::ReadOnly(msg) => {
                    e.type_ = bindings::NLA_REJECT as u8;
                    e.__bindgen_anon_1.reject_message = msg.as_char_ptr();
                }
                AttrKind::U32 => {
                    e.type_ = bindings::NLA_U32 as u8;
                    e.validation_type = bindings::nla_policy_validation_NLA_VALIDATE_FUNCTION as u8;
                    e.__bindgen_anon_1.validate = Some(check_u32::<T>);
                }
            }
            v.push(e, GFP_KERNEL)?;
        }
        while v.len() <= RTNL_MAX_TYPE {
            v.push(zero, GFP_KERNEL)?;
        }
        Ok(v)
    }

    /// The parsed `IFLA_INFO_DATA` of a request.
    fn attrs<'a>(data: *mut *mut bindings::nlattr) -> LinkAttrs<'a> {
        LinkAttrs {
            data,
            kinds: T::ATTRS,
            _p: PhantomData,
        }
    }
}

/// A sysfs text buffer (one page) being filled by a `show`.
pub struct TextBuf<'a> {
    buf: &'a mut [u8],
    at: usize,
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
struct IdxAttr {
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
struct AttrGroup {
    group: bindings::attribute_group,
    attrs: KVec<IdxAttr>,
    /// Never read: owns the array `group.attrs` points into.
    #[allow(dead_code)]
    ptrs: KVec<*mut bindings::attribute>,
}

impl AttrGroup {
    fn new<T: Driver>() -> Result<AttrGroup> {
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
