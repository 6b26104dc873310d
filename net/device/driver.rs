// SPDX-License-Identifier: GPL-2.0

//! The traits a driver implements, one per C table, and its devices.

use crate::net::bindings;
use crate::net::lock::Bh;
use crate::net::skb::Skb;
use crate::net::Mac;
use core::marker::PhantomData;
use core::mem::MaybeUninit;
use kernel::error::to_result;
use kernel::prelude::*;
use kernel::str::CStr;
use kernel::types::Opaque;

use super::adapter::{rx_handler, setup, with, Adapter};
use super::sysfs::{AttrGroup, TextBuf};
use super::{
    AddrListLocked, AttrKind, Counted, Device, EthtoolStrings, ExtAck, LinkAttrs, NlMsg, Rtnl,
    RxHandled, Stats64,
};
use crate::net::proc::{self, Proc, ProcFiles};

/// Features and flags a driver sets on a new device in [`Driver::setup`].
pub struct Setup<'a>(pub(super) &'a Device);

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
/// ports' `rx_handler`, [`Sysfs`] the device's attribute group, [`Proc`]
/// its procfs file. `Self` is
/// the private data of each device (`netdev_priv`).
///
/// Methods marked optional in `#[vtable]` fashion are left out of the C
/// tables unless implemented.
///
/// # Safety
///
/// When [`Driver::uninit`] returns, no callback of the data's timers or
/// work ([`super::super::timer::DeviceTimer`],
/// [`super::super::work::DeviceWork`]) runs or will run: the core frees
/// the device's per-CPU counters, and drops the data field by field, after
/// `ndo_uninit`, and a callback then would use what is gone.
#[vtable]
pub unsafe trait Driver:
    Link + Ethtool + Port + Sysfs + Proc + Sized + Send + Sync + 'static
{
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
pub(super) struct Priv<T> {
    /// Set once `data` is initialised (by `ndo_init`).
    pub(super) ready: bool,
    /// The procfs file ([`Proc`]), or NULL; made once registered, remade
    /// on rename, removed in `ndo_uninit`, under RTNL each time.
    pub(super) proc: *mut bindings::proc_dir_entry,
    pub(super) data: MaybeUninit<T>,
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
    pub(super) unsafe fn from_raw<'a>(dev: *mut bindings::net_device) -> &'a NetDevice<T> {
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

    /// (Re)makes the procfs file under the device's name, once it is
    /// registered (its index is assigned after `ndo_init`) and whenever it
    /// is renamed (NETDEV_CHANGENAME); under RTNL.
    pub(in crate::net) fn make_proc_file(&self, _rtnl: &Rtnl) {
        let p = self.as_raw();
        // SAFETY: A registered device of ours, before its `ndo_uninit`,
        // which removes the file; RTNL, held, guards `proc`, reached
        // through raw places only. Its link type, and so the directory, is
        // registered while it exists. The old file goes before the new is
        // made.
        unsafe {
            let priv_ = Self::priv_of(p);
            proc::remove((*priv_).proc);
            (*priv_).proc = core::ptr::null_mut();
            (*priv_).proc = proc::create::<T>(self);
        }
    }

    /// What follows a successful `register_netdevice` of ours, however the
    /// device was made (`ip link add`, [`NetDevice::create`]): its procfs
    /// file, then the driver's [`Driver::registered`]. On error the caller
    /// unregisters it.
    pub(in crate::net) fn finish_register(&self, rtnl: &Rtnl) -> Result {
        self.make_proc_file(rtnl);
        T::registered(self, rtnl)
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
    /// for `port` is running or will run. Its GRO may still hold a packet
    /// it merged as ours, which the offload's registration waits for.
    pub fn detach_port(&self, _rtnl: &Rtnl, port: &Device) {
        // SAFETY: Attached by `attach_port`; RTNL held. Unregistering the
        // handler waits for an RCU grace period (synchronize_net).
        unsafe {
            bindings::netdev_upper_dev_unlink(port.as_raw(), self.as_raw());
            bindings::netdev_rx_handler_unregister(port.as_raw());
        }
        crate::net::offload::port_left(port);
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
        if let Err(e) = d.finish_register(rtnl) {
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
    pub(super) sysfs: AttrGroup,
    /// `IFLA_INFO_DATA`'s policy, from [`Link::ATTRS`] (before `ops`,
    /// which points at it until unregistered).
    policy: KVec<bindings::nla_policy>,
    #[pin]
    pub(super) ops: Opaque<bindings::rtnl_link_ops>,
    /// The devices' procfs directory and the notifier that renames their
    /// files ([`Proc`]): made before `ops` is registered, dropped after
    /// it is unregistered (fields drop after `drop`), so that they exist
    /// while any device does.
    proc: Option<ProcFiles<T>>,
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
            proc: ProcFiles::new()?,
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
