// SPDX-License-Identifier: GPL-2.0

//! Safe types over raw kernel objects, and the entry points the kernel calls.
//!
//! This is the only file of the driver with `unsafe`. It wraps what
//! `ri2n_glue.c` exports (one-line wrappers, tables Rust cannot lay out) in
//! small types: [`NetDev`] (a net_device we may use for a call), [`SlaveRef`]
//! (one we hold a reference on), [`Skb`] (an sk_buff we own), [`Timer`]. It
//! knows nothing of the RI2N protocol: the entry points at the bottom turn
//! raw pointers into these types and call `ri2n_tx`, `ri2n_rx`, `ri2n_hb`
//! and `ri2n_drv`.

use core::ffi::{c_int, c_long, c_uint, c_void};
use kernel::ffi::c_char;
use core::ptr::NonNull;
use kernel::bindings;
use kernel::error::{to_result, Error};
use kernel::prelude::*;
use kernel::types::Opaque;

type NetDevice = bindings::net_device;
type SkBuff = bindings::sk_buff;

extern "C" {
    fn ri2n_alloc_netdev() -> *mut NetDevice;
    fn ri2n_register_netdev(dev: *mut NetDevice) -> c_int;
    fn ri2n_unregister_netdev(dev: *mut NetDevice);
    fn ri2n_free_netdev(dev: *mut NetDevice);
    fn ri2n_add_pack();
    fn ri2n_remove_pack();
    fn ri2n_register_notifier() -> c_int;
    fn ri2n_unregister_notifier();
    fn ri2n_rtnl_lock();
    fn ri2n_rtnl_unlock();
    fn ri2n_synchronize_net();
    fn ri2n_slaves_param() -> *const c_char;

    fn ri2n_dev_get_by_name(name: *const c_char) -> *mut NetDevice;
    fn ri2n_dev_put(dev: *mut NetDevice);
    fn ri2n_dev_name(dev: *const NetDevice) -> *const c_char;
    fn ri2n_dev_addr(dev: *const NetDevice) -> *const u8;
    fn ri2n_dev_is_loopback(dev: *const NetDevice) -> bool;
    fn ri2n_dev_is_ether(dev: *const NetDevice) -> bool;
    fn ri2n_dev_mtu(dev: *const NetDevice) -> c_uint;
    fn ri2n_dev_init_mtu(dev: *mut NetDevice, mtu: c_uint);
    fn ri2n_dev_set_max_mtu(dev: *mut NetDevice, mtu: c_uint);
    fn ri2n_dev_set_mtu(dev: *mut NetDevice, mtu: c_uint) -> c_int;
    fn ri2n_carrier_ok(dev: *const NetDevice) -> bool;
    fn ri2n_carrier_on(dev: *mut NetDevice);
    fn ri2n_carrier_off(dev: *mut NetDevice);
    fn ri2n_running(dev: *const NetDevice) -> bool;
    fn ri2n_realtime_ms() -> u64;
    fn ri2n_tx_stopped(dev: *mut NetDevice) -> bool;
    fn ri2n_uc_add(dev: *mut NetDevice, addr: *const u8) -> c_int;
    fn ri2n_uc_del(dev: *mut NetDevice, addr: *const u8) -> c_int;
    fn ri2n_set_allmulti(dev: *mut NetDevice, inc: c_int) -> c_int;
    fn ri2n_eth_mac_addr(dev: *mut NetDevice, addr: *mut c_void) -> c_int;

    fn ri2n_dev_queue_xmit(skb: *mut SkBuff) -> c_int;
    fn ri2n_gro_receive(skb: *mut SkBuff) -> c_int;
    fn ri2n_kfree_skb(skb: *mut SkBuff);
    fn ri2n_consume_skb(skb: *mut SkBuff);
    fn ri2n_skb_share_check(skb: *mut SkBuff) -> *mut SkBuff;
    fn ri2n_pskb_may_pull(skb: *mut SkBuff, len: c_uint) -> bool;
    fn ri2n_skb_cow_head(skb: *mut SkBuff, headroom: c_uint) -> c_int;
    fn ri2n_eth_type_trans(skb: *mut SkBuff, dev: *mut NetDevice) -> u16;
    fn ri2n_skb_mac_header(skb: *const SkBuff) -> *mut u8;
    fn ri2n_skb_reset_mac_header(skb: *mut SkBuff);
    fn ri2n_alloc_skb(dev: *mut NetDevice, len: c_uint) -> *mut SkBuff;
    fn ri2n_skb_clone(skb: *mut SkBuff) -> *mut SkBuff;
    fn ri2n_gso_segment(skb: *mut SkBuff) -> *mut SkBuff;
    fn ri2n_skb_list_pop(head: *mut *mut SkBuff) -> *mut SkBuff;
    fn ri2n_skb_is_gso(skb: *const SkBuff) -> bool;
    fn ri2n_kfree_skb_list(segs: *mut SkBuff);
    fn ri2n_skb_len(skb: *const SkBuff) -> c_uint;
    fn ri2n_skb_headlen(skb: *const SkBuff) -> c_uint;
    fn ri2n_skb_data(skb: *const SkBuff) -> *mut u8;
    fn ri2n_skb_set_dev(skb: *mut SkBuff, dev: *mut NetDevice);
    fn ri2n_skb_set_pkt_type_host(skb: *mut SkBuff);
    fn ri2n_skb_set_protocol(skb: *mut SkBuff, proto: u16);
    fn ri2n_skb_push(skb: *mut SkBuff, len: c_uint) -> *mut u8;
    fn ri2n_skb_pull_rcsum(skb: *mut SkBuff, len: c_uint) -> *mut c_void;
    fn ri2n_skb_put_zero(skb: *mut SkBuff, len: c_uint) -> *mut c_void;

    fn ri2n_timer_setup(t: *mut bindings::timer_list, f: unsafe extern "C" fn(*mut bindings::timer_list));
    fn ri2n_mod_timer_ms(t: *mut bindings::timer_list, ms: c_uint) -> c_int;
    fn ri2n_timer_delete_sync(t: *mut bindings::timer_list);
    fn ri2n_ratelimit() -> bool;
    fn ri2n_proc_create(name: *const c_char) -> c_int;
    fn ri2n_proc_remove();
}

/// An Ethernet address.
pub(crate) type Mac = [u8; 6];

/// Formats a MAC address as `aa:bb:cc:dd:ee:ff`.
pub(crate) struct MacFmt<'a>(pub(crate) &'a Mac);

impl kernel::fmt::Display for MacFmt<'_> {
    fn fmt(&self, f: &mut kernel::fmt::Formatter<'_>) -> kernel::fmt::Result {
        let m = self.0;
        write!(f, "{:02x}:{:02x}:{:02x}:{:02x}:{:02x}:{:02x}", m[0], m[1], m[2], m[3], m[4], m[5])
    }
}

/// A net_device that is alive for as long as this handle is used.
///
/// # Invariants
///
/// `self.0` points to a registered (or being registered) `struct net_device`
/// that the holder of this handle keeps alive: ri2n0 between its allocation
/// and `free`, a slave while a [`SlaveRef`] or an RCU read side (softirq, or
/// the `synchronize_net()` in slave removal) protects it, or the device a
/// kernel callback was called for, during the call.
#[derive(Clone, Copy, PartialEq, Eq)]
#[repr(transparent)]
pub(crate) struct NetDev(NonNull<NetDevice>);

// SAFETY: A net_device is shared by every CPU by design; the methods below
// only call functions that are safe to call concurrently on it.
unsafe impl Send for NetDev {}
// SAFETY: As above.
unsafe impl Sync for NetDev {}

impl NetDev {
    fn raw(self) -> *mut NetDevice {
        self.0.as_ptr()
    }

    /// The interface name (`eth0`).
    pub(crate) fn name(&self) -> &CStr {
        // SAFETY: By the type invariant the device is alive; `name` is a
        // NUL-terminated array inside it.
        unsafe { CStr::from_char_ptr(ri2n_dev_name(self.raw())) }
    }

    /// The interface name for logs.
    pub(crate) fn name_str(&self) -> &str {
        self.name().to_str().unwrap_or("?")
    }

    /// The device's MAC address.
    pub(crate) fn addr(&self) -> Mac {
        let mut m = [0u8; 6];
        // SAFETY: The device is alive (type invariant) and Ethernet, so
        // `dev_addr` holds at least 6 bytes.
        unsafe { core::ptr::copy_nonoverlapping(ri2n_dev_addr(self.raw()), m.as_mut_ptr(), 6) };
        m
    }

    /// The current MTU.
    pub(crate) fn mtu(&self) -> u32 {
        // SAFETY: The device is alive (type invariant); a READ_ONCE of a field.
        unsafe { ri2n_dev_mtu(self.raw()) }
    }

    /// Whether the device has carrier.
    pub(crate) fn carrier_ok(&self) -> bool {
        // SAFETY: The device is alive (type invariant); reads a state bit.
        unsafe { ri2n_carrier_ok(self.raw()) }
    }

    /// Whether the device is up.
    pub(crate) fn running(&self) -> bool {
        // SAFETY: The device is alive (type invariant); reads a state bit.
        unsafe { ri2n_running(self.raw()) }
    }

    /// Whether the device's (first) transmit queue is stopped.
    pub(crate) fn tx_stopped(&self) -> bool {
        // SAFETY: The device is alive (type invariant) and has at least one
        // transmit queue once registered.
        unsafe { ri2n_tx_stopped(self.raw()) }
    }

    /// Whether the device is a loopback device.
    pub(crate) fn is_loopback(&self) -> bool {
        // SAFETY: The device is alive (type invariant); reads `flags`.
        unsafe { ri2n_dev_is_loopback(self.raw()) }
    }

    /// Whether the device is Ethernet.
    pub(crate) fn is_ether(&self) -> bool {
        // SAFETY: The device is alive (type invariant); reads two fields.
        unsafe { ri2n_dev_is_ether(self.raw()) }
    }

    /// Sets the largest MTU the stack may set.
    pub(crate) fn set_max_mtu(&self, mtu: u32) {
        // SAFETY: The device is alive (type invariant); a plain field store,
        // done before registration or under RTNL.
        unsafe { ri2n_dev_set_max_mtu(self.raw(), mtu) }
    }

    /// `dev_set_mtu()`. The caller holds RTNL ([`Rtnl`]).
    pub(crate) fn set_mtu(&self, _rtnl: &Rtnl, mtu: u32) -> Result {
        // SAFETY: The device is alive (type invariant) and RTNL is held.
        to_result(unsafe { ri2n_dev_set_mtu(self.raw(), mtu) })
    }

    /// Turns carrier on or off.
    pub(crate) fn set_carrier(&self, on: bool) {
        // SAFETY: The device is alive (type invariant); linkwatch handles
        // any context.
        unsafe {
            if on {
                ri2n_carrier_on(self.raw())
            } else {
                ri2n_carrier_off(self.raw())
            }
        }
    }

    /// Adds (or removes) `addr` to the device's unicast filter. RTNL held.
    pub(crate) fn uc_filter(&self, _rtnl: &Rtnl, addr: &Mac, add: bool) -> Result {
        // SAFETY: The device is alive (type invariant), RTNL is held and
        // `addr` points to 6 bytes.
        to_result(unsafe {
            if add {
                ri2n_uc_add(self.raw(), addr.as_ptr())
            } else {
                ri2n_uc_del(self.raw(), addr.as_ptr())
            }
        })
    }

    /// Changes the device's all-multicast count by `inc`. RTNL held.
    pub(crate) fn allmulti(&self, _rtnl: &Rtnl, inc: i32) -> Result {
        // SAFETY: The device is alive (type invariant) and RTNL is held.
        to_result(unsafe { ri2n_set_allmulti(self.raw(), inc) })
    }
}

/// RTNL, held for as long as this value lives.
pub(crate) struct Rtnl(());

impl Rtnl {
    /// Takes RTNL (process context).
    pub(crate) fn lock() -> Rtnl {
        // SAFETY: Called from process context (module init/exit, sysfs).
        unsafe { ri2n_rtnl_lock() };
        Rtnl(())
    }

    /// A witness that the kernel called us with RTNL held (netdev
    /// notifiers, ndo_open/stop/set_mac_address); never unlocks.
    ///
    /// # Safety
    ///
    /// The caller must hold RTNL for the lifetime of the returned value.
    unsafe fn held() -> core::mem::ManuallyDrop<Rtnl> {
        core::mem::ManuallyDrop::new(Rtnl(()))
    }
}

impl Drop for Rtnl {
    fn drop(&mut self) {
        // SAFETY: This value was made by `lock`, which took RTNL.
        unsafe { ri2n_rtnl_unlock() };
    }
}

/// Waits until every RCU read side that may still use a device removed
/// from our tables has finished.
pub(crate) fn synchronize_net() {
    // SAFETY: Process context, as synchronize_net() requires.
    unsafe { ri2n_synchronize_net() }
}

/// A slave: a net_device we hold a reference on (`dev_hold`).
///
/// # Invariants
///
/// `dev` was returned by `dev_get_by_name()`, whose reference this value
/// owns and drops on `Drop`.
pub(crate) struct SlaveRef {
    dev: NetDev,
}

impl SlaveRef {
    /// Looks a device up by name in the initial namespace.
    pub(crate) fn by_name(name: &CStr) -> Option<SlaveRef> {
        // SAFETY: `name` is NUL-terminated; the function takes a reference.
        let p = unsafe { ri2n_dev_get_by_name(name.as_char_ptr()) };
        NonNull::new(p).map(|p| SlaveRef { dev: NetDev(p) })
    }

    /// The device, usable while this reference is held.
    pub(crate) fn dev(&self) -> NetDev {
        self.dev
    }
}

impl Drop for SlaveRef {
    fn drop(&mut self) {
        // SAFETY: By the type invariant we own one reference.
        unsafe { ri2n_dev_put(self.dev.raw()) }
    }
}

/// ri2n0 itself: allocated, registered, unregistered and freed here.
///
/// # Invariants
///
/// `dev` came from `alloc_netdev()` and is freed once, in `Drop`;
/// `registered` tells whether it must be unregistered first.
pub(crate) struct OwnedNetDev {
    dev: NetDev,
    registered: bool,
}

impl OwnedNetDev {
    /// Allocates `ri2n%d` (set up as Ethernet with ri2n's ops, random MAC).
    pub(crate) fn alloc() -> Result<OwnedNetDev> {
        // SAFETY: Process context; alloc_netdev with our setup function.
        let p = unsafe { ri2n_alloc_netdev() };
        let dev = NetDev(NonNull::new(p).ok_or(ENOMEM)?);
        Ok(OwnedNetDev { dev, registered: false })
    }

    /// The device.
    pub(crate) fn dev(&self) -> NetDev {
        self.dev
    }

    /// `register_netdev()`: from now on the stack may call our ops.
    pub(crate) fn register(&mut self) -> Result {
        // SAFETY: The device is allocated and not yet registered.
        to_result(unsafe { ri2n_register_netdev(self.dev.raw()) })?;
        self.registered = true;
        Ok(())
    }
}

impl Drop for OwnedNetDev {
    fn drop(&mut self) {
        // SAFETY: By the type invariant the device is ours; once unregistered
        // (which waits for every caller of our ops) nobody else uses it.
        unsafe {
            if self.registered {
                ri2n_unregister_netdev(self.dev.raw());
            }
            ri2n_free_netdev(self.dev.raw());
        }
    }
}

/// An sk_buff we own: freed on drop unless handed on.
///
/// # Invariants
///
/// `self.0` points to an sk_buff that nobody else uses, and not shared
/// (`skb_share_check` was applied to received ones).
#[repr(transparent)]
pub(crate) struct Skb(NonNull<SkBuff>);

// SAFETY: An owned sk_buff may be freed or passed on from any CPU.
unsafe impl Send for Skb {}

/// A list of sk_buffs we own (segments of a GSO packet), handed out one by
/// one; those not taken are freed on drop.
///
/// # Invariants
///
/// `self.0` is NULL or the head of a `next`-linked list of sk_buffs that
/// nobody else uses.
pub(crate) struct SkbList(*mut SkBuff);

impl Iterator for SkbList {
    type Item = Skb;

    fn next(&mut self) -> Option<Skb> {
        // SAFETY: By the type invariant we own the list; the skb popped off
        // it is unlinked and ours alone.
        NonNull::new(unsafe { ri2n_skb_list_pop(&mut self.0) }).map(Skb)
    }
}

impl Drop for SkbList {
    fn drop(&mut self) {
        // SAFETY: By the type invariant we own what is left (NULL is fine).
        unsafe { ri2n_kfree_skb_list(self.0) }
    }
}

impl Drop for Skb {
    fn drop(&mut self) {
        // SAFETY: By the type invariant we own it; kfree_skb counts a drop.
        unsafe { ri2n_kfree_skb(self.0.as_ptr()) }
    }
}

impl Skb {
    fn into_raw(self) -> *mut SkBuff {
        let p = self.0.as_ptr();
        core::mem::forget(self);
        p
    }

    /// Allocates an sk_buff for `dev` with `len` zeroed bytes of data.
    pub(crate) fn alloc(dev: NetDev, len: u32) -> Option<Skb> {
        // SAFETY: The device is alive (NetDev invariant); GFP_ATOMIC inside.
        let p = unsafe { ri2n_alloc_skb(dev.raw(), len) };
        let skb = Skb(NonNull::new(p)?);
        // SAFETY: A fresh skb with `len` bytes of tailroom.
        unsafe { ri2n_skb_put_zero(skb.0.as_ptr(), len) };
        Some(skb)
    }

    /// Whether this is a GSO packet (several MTU-sized segments in one).
    pub(crate) fn is_gso(&self) -> bool {
        // SAFETY: We own the skb (type invariant).
        unsafe { ri2n_skb_is_gso(self.0.as_ptr()) }
    }

    /// Software GSO: the packet as its MTU-sized segments, checksums and
    /// scatter-gather left to the slave. On failure the packet comes back.
    pub(crate) fn gso_segments(self) -> core::result::Result<SkbList, Skb> {
        // SAFETY: We own the skb; on success ri2n_gso_segment consumed it and
        // we own the list it returned, on failure it left the skb to us.
        let segs = unsafe { ri2n_gso_segment(self.0.as_ptr()) };
        if segs.is_null() {
            return Err(self);
        }
        core::mem::forget(self);
        Ok(SkbList(segs))
    }

    /// A clone sharing the data (for sending one frame on several slaves).
    pub(crate) fn clone_skb(&self) -> Option<Skb> {
        // SAFETY: We own `self`; skb_clone leaves both usable.
        NonNull::new(unsafe { ri2n_skb_clone(self.0.as_ptr()) }).map(Skb)
    }

    /// Bytes in the packet.
    pub(crate) fn len(&self) -> u32 {
        // SAFETY: We own the skb (type invariant).
        unsafe { ri2n_skb_len(self.0.as_ptr()) }
    }

    /// Makes the first `len` bytes linear; false if the packet is shorter.
    pub(crate) fn may_pull(&mut self, len: u32) -> bool {
        // SAFETY: We own the skb (type invariant).
        unsafe { ri2n_pskb_may_pull(self.0.as_ptr(), len) }
    }

    /// The linear data from `skb->data`.
    pub(crate) fn data(&self) -> &[u8] {
        // SAFETY: We own the skb; `data` has `headlen` linear bytes.
        unsafe {
            let p = self.0.as_ptr();
            core::slice::from_raw_parts(ri2n_skb_data(p), ri2n_skb_headlen(p) as usize)
        }
    }

    /// The linear data, writable. Only after [`Skb::make_writable`].
    fn data_mut(&mut self) -> &mut [u8] {
        // SAFETY: We own the skb and its header is not shared (the caller
        // made it writable); `data` has `headlen` linear bytes.
        unsafe {
            let p = self.0.as_ptr();
            core::slice::from_raw_parts_mut(ri2n_skb_data(p), ri2n_skb_headlen(p) as usize)
        }
    }

    /// Ensures `headroom` bytes before the data and a private header.
    pub(crate) fn make_writable(&mut self, headroom: u32) -> Result {
        // SAFETY: We own the skb (type invariant).
        to_result(unsafe { ri2n_skb_cow_head(self.0.as_ptr(), headroom) })
    }

    /// The 12 address bytes (destination, source) of the Ethernet header.
    pub(crate) fn mac_addrs(&self) -> [u8; 12] {
        let mut a = [0u8; 12];
        // SAFETY: Received skbs have their mac header set and linear (the
        // driver below pulled it); 12 bytes of it are the two addresses.
        unsafe { core::ptr::copy_nonoverlapping(ri2n_skb_mac_header(self.0.as_ptr()), a.as_mut_ptr(), 12) };
        a
    }

    /// Transmit side: inserts `hdr` (the RI2N header) between the Ethernet
    /// header at `data` and the payload, and sets the ethertype to
    /// `ethertype`. Returns the original ethertype.
    pub(crate) fn insert_after_eth(&mut self, ethertype: u16, hdr: &[u8; 8]) -> Result<u16> {
        if !self.may_pull(14) {
            return Err(EINVAL);
        }
        self.make_writable(8)?;
        // SAFETY: cow_head made 8 bytes of private headroom.
        unsafe { ri2n_skb_push(self.0.as_ptr(), 8) };
        let d = self.data_mut();
        d.copy_within(8..20, 0);
        let orig = u16::from_be_bytes([d[20], d[21]]);
        d[12..14].copy_from_slice(&ethertype.to_be_bytes());
        d[14..22].copy_from_slice(hdr);
        // SAFETY: We own the skb.
        unsafe { ri2n_skb_reset_mac_header(self.0.as_ptr()) };
        Ok(orig)
    }

    /// Receive side: `data` is at the RI2N header, the Ethernet header just
    /// before it. Drops the RI2N header, rebuilds the Ethernet header right
    /// before the payload with `ethertype`, and runs `eth_type_trans()` as
    /// `dev` would (protocol, packet type, `skb->dev`).
    pub(crate) fn strip_and_retarget(&mut self, ethertype: u16, dev: NetDev) -> Result {
        let addrs = self.mac_addrs();
        self.make_writable(0)?;
        // SAFETY: `may_pull(8)` succeeded before (caller); pull_rcsum keeps a
        // CHECKSUM_COMPLETE sum right.
        unsafe { ri2n_skb_pull_rcsum(self.0.as_ptr(), 8) };
        // SAFETY: The 22 bytes before the payload were ours (Ethernet and
        // RI2N headers), so 14 bytes of headroom exist.
        unsafe { ri2n_skb_push(self.0.as_ptr(), 14) };
        let d = self.data_mut();
        d[..12].copy_from_slice(&addrs);
        d[12..14].copy_from_slice(&ethertype.to_be_bytes());
        // eth_type_trans() only changes pkt_type when the destination is
        // not `dev`'s address, and the slave said OTHERHOST (the frame was
        // for ri2n0's address, not the slave's): start from HOST.
        // SAFETY: We own the skb; `dev` is alive (NetDev invariant);
        // eth_type_trans pulls the 14 linear bytes just written.
        let proto = unsafe {
            ri2n_skb_set_pkt_type_host(self.0.as_ptr());
            ri2n_eth_type_trans(self.0.as_ptr(), dev.raw())
        };
        // SAFETY: We own the skb.
        unsafe { ri2n_skb_set_protocol(self.0.as_ptr(), proto) };
        Ok(())
    }

    /// Writes `bytes` at offset `at` of a freshly allocated skb.
    pub(crate) fn write(&mut self, at: usize, bytes: &[u8]) {
        self.data_mut()[at..at + bytes.len()].copy_from_slice(bytes);
    }

    /// Sends the skb out of `dev` (`dev_queue_xmit`), which consumes it.
    pub(crate) fn xmit(self, dev: NetDev, protocol: u16) {
        let p = self.into_raw();
        // SAFETY: We owned the skb; dev is alive; dev_queue_xmit takes it.
        unsafe {
            ri2n_skb_set_dev(p, dev.raw());
            ri2n_skb_set_protocol(p, protocol.to_be());
            ri2n_skb_reset_mac_header(p);
            ri2n_dev_queue_xmit(p);
        }
    }

    /// Hands the skb to the stack through ri2n0's GRO cells
    /// (`gro_cells_receive`), which consume it. Softirq context only.
    pub(crate) fn hand_up(self) {
        // SAFETY: We owned the skb, prepared by `strip_and_retarget`; the
        // callers (packet handler, sweep timer) run in softirq context while
        // ri2n0 is registered, so its GRO cells exist.
        unsafe { ri2n_gro_receive(self.into_raw()) };
    }

    /// Frees a packet that was handled, not dropped (heartbeats).
    pub(crate) fn consume(self) {
        // SAFETY: We owned the skb.
        unsafe { ri2n_consume_skb(self.into_raw()) }
    }
}

/// A kernel timer (`timer_list`, softirq context) in static storage.
pub(crate) struct Timer(Opaque<bindings::timer_list>);

// SAFETY: The timer API serialises its own state; we only pass the pointer.
unsafe impl Sync for Timer {}

impl Timer {
    /// An unset-up timer; [`Timer::setup`] before use.
    pub(crate) const fn new() -> Timer {
        Timer(Opaque::uninit())
    }

    /// Binds the timer to its callback. Once, before the first `arm`.
    fn setup(&'static self, f: unsafe extern "C" fn(*mut bindings::timer_list)) {
        // SAFETY: Static storage, set up before any other use.
        unsafe { ri2n_timer_setup(self.0.get(), f) }
    }

    /// Fires the callback `ms` milliseconds from now (re-arms if pending).
    pub(crate) fn arm(&'static self, ms: u32) {
        // SAFETY: Set up at module init (`setup_timers`).
        unsafe { ri2n_mod_timer_ms(self.0.get(), ms) };
    }

    /// Stops the timer and waits for a running callback. Process context;
    /// callbacks must not re-arm once their device is stopped.
    pub(crate) fn stop(&'static self) {
        // SAFETY: Set up at module init; process context.
        unsafe { ri2n_timer_delete_sync(self.0.get()) }
    }
}

/// Heartbeats: every HBSPAN (`ri2n_hb.rs`).
pub(crate) static HB_TIMER: Timer = Timer::new();
/// The FAST_TOUT sweep and pending heartbeats (`ri2n_hb.rs`).
pub(crate) static SWEEP_TIMER: Timer = Timer::new();

unsafe extern "C" fn hb_timer_fn(_t: *mut bindings::timer_list) {
    crate::ri2n_hb::heartbeat_timer();
}

unsafe extern "C" fn sweep_timer_fn(_t: *mut bindings::timer_list) {
    crate::ri2n_hb::sweep_timer();
}

/// Binds both timers to their callbacks (module init).
pub(crate) fn setup_timers() {
    HB_TIMER.setup(hb_timer_fn);
    SWEEP_TIMER.setup(sweep_timer_fn);
}

/// Sets ri2n0's MTU and largest MTU before it is registered.
pub(crate) fn init_mtu(dev: NetDev, mtu: u32) {
    // SAFETY: Not yet registered: nobody else reads the fields.
    unsafe { ri2n_dev_init_mtu(dev.raw(), mtu) }
}

/// Allocates a zeroed `T`, in place (too large for a kernel stack).
///
/// # Safety
///
/// All-zero bytes must be a valid `T`.
unsafe fn alloc_zeroed<T>(flags: kernel::alloc::Flags) -> Result<KBox<T>> {
    let b = KBox::<T>::new_uninit(flags | kernel::alloc::flags::__GFP_ZERO)?;
    // SAFETY: The memory is zeroed, which the caller guarantees is valid.
    Ok(unsafe { b.assume_init() })
}

/// A new peer, zeroed: an empty window, loss detector and broadcast
/// filter, a detector over no links (the caller starts it). From the data
/// path, so GFP_ATOMIC; `None` when memory is short (the packet is dropped).
pub(crate) fn alloc_peer() -> Option<KBox<crate::Peer>> {
    // SAFETY: Every field of `Peer` is an integer, a bool, an array or
    // struct of those, or `Option<Skb>` (`Skb` is a transparent `NonNull`,
    // so all-zero is `None`): tools/ri2n-core/tests/zeroed.rs checks that a
    // zeroed window behaves as a new one.
    unsafe { alloc_zeroed::<crate::Peer>(GFP_ATOMIC) }.ok()
}

/// The peer table, zeroed (an empty table; set its key before use).
pub(crate) fn alloc_peer_table() -> Result<KBox<crate::proto::peers::PeerTable>> {
    // SAFETY: `PeerTable` holds integers, bools and arrays of them; zeroed
    // it is an empty table (tools/ri2n-core/tests/zeroed.rs).
    unsafe { alloc_zeroed(GFP_KERNEL) }
}

/// Rate limit for log lines, shared with the networking stack.
pub(crate) fn ratelimit() -> bool {
    // SAFETY: No preconditions.
    unsafe { ri2n_ratelimit() }
}

/// Monotonic time for the protocol core.
pub(crate) fn now() -> crate::proto::time::Instant {
    // SAFETY: No preconditions.
    crate::proto::time::Instant(unsafe { bindings::ktime_get() } as u64)
}

/// The wall clock, ms since the epoch (procfs: so that a reader can place
/// the `changed_ms` ages without its own clock reading coming late).
pub(crate) fn realtime_ms() -> u64 {
    // SAFETY: No preconditions.
    unsafe { ri2n_realtime_ms() }
}

/// A random u32 (epochs, hash keys).
pub(crate) fn random_u32() -> u32 {
    // SAFETY: No preconditions.
    unsafe { bindings::get_random_u32() }
}

/// The `slaves=` module parameter, if given.
pub(crate) fn slaves_param() -> Option<&'static CStr> {
    // SAFETY: A charp module parameter: NULL or a NUL-terminated string
    // that lives as long as the module.
    let p = unsafe { ri2n_slaves_param() };
    // SAFETY: As above.
    (!p.is_null()).then(|| unsafe { CStr::from_char_ptr(p) })
}

/// Registration of the packet handler, the notifier and procfs; each is
/// undone on drop, in reverse order.
pub(crate) struct Hooks {
    pack: bool,
    notifier: bool,
    proc: bool,
}

impl Hooks {
    /// Nothing registered yet.
    pub(crate) fn new() -> Hooks {
        Hooks { pack: false, notifier: false, proc: false }
    }

    /// `/proc/net/ri2n/<name>`.
    pub(crate) fn proc(&mut self, name: &CStr) -> Result {
        // SAFETY: Process context; `name` is NUL-terminated and outlives
        // the entry (the device name lives until the device is freed, after
        // the entry is removed).
        to_result(unsafe { ri2n_proc_create(name.as_char_ptr()) })?;
        self.proc = true;
        Ok(())
    }

    /// The netdev notifier (slave carrier, MTU, removal).
    pub(crate) fn notifier(&mut self) -> Result {
        // SAFETY: Process context; static notifier block.
        to_result(unsafe { ri2n_register_notifier() })?;
        self.notifier = true;
        Ok(())
    }

    /// The ethertype 0x1004 packet handler.
    pub(crate) fn packet_handler(&mut self) {
        // SAFETY: Process context; static packet_type.
        unsafe { ri2n_add_pack() };
        self.pack = true;
    }
}

impl Drop for Hooks {
    fn drop(&mut self) {
        // SAFETY: Each was registered above; removal waits for running
        // callers (dev_remove_pack synchronises RCU, the notifier chain is
        // under RTNL, proc_remove waits for readers).
        unsafe {
            if self.pack {
                ri2n_remove_pack();
            }
            if self.notifier {
                ri2n_unregister_notifier();
            }
            if self.proc {
                ri2n_proc_remove();
            }
        }
    }
}

// --- Entry points called by ri2n_glue.c --------------------------------------

#[no_mangle]
extern "C" fn ri2n_rs_open(_dev: *mut NetDevice) -> c_int {
    crate::ri2n_hb::start();
    0
}

#[no_mangle]
extern "C" fn ri2n_rs_stop(_dev: *mut NetDevice) -> c_int {
    crate::ri2n_hb::stop();
    0
}

#[no_mangle]
extern "C" fn ri2n_rs_xmit(skb: *mut SkBuff, _dev: *mut NetDevice) -> c_int {
    // SAFETY: The stack hands us ownership of a non-NULL skb.
    let skb = Skb(unsafe { NonNull::new_unchecked(skb) });
    crate::ri2n_tx::xmit(skb);
    0 // NETDEV_TX_OK: the skb is consumed either way.
}

#[no_mangle]
extern "C" fn ri2n_rs_set_mac(dev: *mut NetDevice, addr: *mut c_void) -> c_int {
    // SAFETY: ndo_set_mac_address is called under RTNL.
    let rtnl = unsafe { Rtnl::held() };
    // SAFETY: `addr` is a `struct sockaddr` whose `sa_data` (at offset 2)
    // holds the new address.
    let new: Mac = unsafe { core::ptr::read_unaligned((addr as *const u8).add(2) as *const Mac) };
    if let Err(e) = crate::set_mac(&rtnl, &new) {
        return e.to_errno();
    }
    // SAFETY: `dev` is ri2n0, alive during its ndo call.
    unsafe { ri2n_eth_mac_addr(dev, addr) }
}

#[no_mangle]
extern "C" fn ri2n_rs_stats(v: *mut u64) {
    let s = crate::stats();
    // SAFETY: ri2n_get_stats64 passes an array of 8 u64.
    unsafe { core::ptr::copy_nonoverlapping(s.as_ptr(), v, 8) };
}

#[no_mangle]
extern "C" fn ri2n_rs_rcv(skb: *mut SkBuff, dev: *mut NetDevice) -> c_int {
    // SAFETY: A packet handler receives a (possibly shared) skb to own;
    // skb_share_check gives us a private one or frees it.
    let skb = unsafe { ri2n_skb_share_check(skb) };
    let Some(skb) = NonNull::new(skb) else { return 1 }; // NET_RX_DROP
    // SAFETY: `dev` is the receiving device, alive during the call.
    let dev = NetDev(unsafe { NonNull::new_unchecked(dev) });
    crate::ri2n_rx::receive(Skb(skb), dev)
}

#[no_mangle]
extern "C" fn ri2n_rs_netdev_event(event: core::ffi::c_ulong, dev: *mut NetDevice) {
    // SAFETY: Netdev notifiers run under RTNL with a live device.
    let rtnl = unsafe { Rtnl::held() };
    // SAFETY: As above.
    let dev = NetDev(unsafe { NonNull::new_unchecked(dev) });
    crate::ri2n_hb::netdev_event(&rtnl, event as u32, dev);
}

#[no_mangle]
extern "C" fn ri2n_rs_param_set(idx: c_long, val: c_uint) -> c_int {
    match crate::param_set(idx as usize, val) {
        Ok(()) => 0,
        Err(e) => Error::to_errno(e),
    }
}

#[no_mangle]
extern "C" fn ri2n_rs_param_get(idx: c_long) -> c_uint {
    crate::param_get(idx as usize)
}

#[no_mangle]
extern "C" fn ri2n_rs_proc_show(m: *mut bindings::seq_file, _v: *mut c_void) -> c_int {
    // SAFETY: seq_file show callback: `m` is valid for the call.
    let m = unsafe { kernel::seq_file::SeqFile::from_raw(m) };
    crate::proc_show(m);
    0
}
