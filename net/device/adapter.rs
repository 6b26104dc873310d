// SPDX-License-Identifier: GPL-2.0

//! The C callbacks of a driver: the ops tables built from its traits.

use crate::net::bindings;
use crate::net::lock::Bh;
use crate::net::skb::Skb;
use crate::net::Mac;
use core::marker::PhantomData;
use core::mem::MaybeUninit;
use kernel::error::from_result;
use kernel::prelude::*;
use kernel::str::CStr;

use super::driver::Priv;
use super::rtnl::RTNL_MAX_TYPE;
use super::{
    AddrListLocked, AttrKind, Device, Driver, EthtoolStrings, ExtAck, LinkAttrs, NetDevice, NlMsg,
    Registration, Rtnl, RxHandled, Setup, Stats64,
};

/// The C callbacks of driver `T`.
pub(super) struct Adapter<T>(PhantomData<T>);

/// Runs `f` with the device of an ndo call.
///
/// # Safety
///
/// `dev` is a registered device of `T` (the core calls our ops only for
/// those, after `ndo_init` succeeded).
pub(super) unsafe fn with<'a, T: Driver>(dev: *mut bindings::net_device) -> &'a NetDevice<T> {
    // SAFETY: The caller's guarantee.
    unsafe { NetDevice::from_raw(dev) }
}

/// The C callback `setup`.
///
/// # Safety
///
/// Only the kernel calls it, through the table this module fills in, with
/// the arguments and in the context that table's contract gives.
pub(super) unsafe extern "C" fn setup<T: Driver>(dev: *mut bindings::net_device) {
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
        (*Priv::<T>::ptr(dev)).proc = core::ptr::null_mut();
    }
    T::setup(&mut Setup(d));
    if !T::PROC_DIR.is_empty() {
        // SAFETY: As above. The file is in the device's namespace's
        // directory, and moving namespace sends no rename: it would stay
        // behind, to be freed with that namespace.
        unsafe { (*dev).set_netns_immutable(1) };
    }
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
    pub(super) unsafe fn ptr(dev: *mut bindings::net_device) -> *mut Priv<T> {
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
    // SAFETY: Called under RTNL, for a device whose init succeeded. The
    // file goes first, waiting for its readers, so that none runs while
    // the driver releases what it shows.
    unsafe {
        let p = Priv::<T>::ptr(dev);
        crate::net::proc::remove((*p).proc);
        (*p).proc = core::ptr::null_mut();
        T::uninit(with::<T>(dev), Rtnl::assume_held())
    }
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
pub(super) unsafe extern "C" fn rx_handler<T: Driver>(
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
        let port = crate::net::skb::dev_of(skb.as_raw());
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
        let mut r = d.finish_register(rtnl);
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
    pub(super) fn netdev_ops() -> &'static bindings::net_device_ops {
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
    pub(super) fn link_ops(policy: *const bindings::nla_policy) -> bindings::rtnl_link_ops {
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
    pub(super) fn policy() -> Result<KVec<bindings::nla_policy>> {
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
