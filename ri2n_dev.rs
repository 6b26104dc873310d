// SPDX-License-Identifier: GPL-2.0

//! The ri2n device: its private data and the operations the kernel calls
//! on it (net_device, ethtool, rtnl_link and sysfs), each handed to the
//! file that owns the mechanism.
//!
//! Locking: [`Ri2n::state`] is a BH-disabling spinlock, taken from softirq
//! (receive, timers), with BH disabled (transmit) and from process context
//! (ndo ops, notifier, sysfs, procfs); never held across `dev_queue_xmit`
//! or while a packet is freed. Slaves are added and removed under RTNL
//! *and* the lock, so RTNL alone is enough to read them.

use crate::net::device::{
    feature, AddrListLocked, AttrKind, Counted, Device, Driver, Ethtool, EthtoolStrings, ExtAck,
    Link, LinkAttrs, NetDevice, NlMsg, Port, Rtnl, RxHandled, Setup, Stats64, Sysfs, TextBuf,
};
use crate::net::gro::GroCells;
use crate::net::lock::Bh;
use crate::net::lock::{SpinLockBh, SpinLockBhGuard};
use crate::net::proc::Proc;
use crate::net::rcu::RcuBox;
use crate::net::skb::Skb;
use crate::net::timer::{DeviceTimer, Timer, TimerRef};
use crate::net::work::{DeviceWork, Work, WorkRef};
use crate::net::{Mac, MacFmt};
use crate::proto::auth::{Key, Keys};
use crate::proto::header::{header_len_for, HEADER_LEN, MAX_HEADER_LEN};
use crate::proto::params::{Param, Params, Refusal, NPARAMS};
use crate::proto::uapi::{self, Attr};
use crate::proto::MAX_LINKS;
use crate::ri2n_peer::Slots;
use crate::ri2n_state::{DevStats, State};
use crate::ri2n_txq::LinkQueue;
use core::sync::atomic::{AtomicBool, AtomicPtr, Ordering};
use kernel::prelude::*;
use kernel::seq_file::SeqFile;
use kernel::sync::{rcu, Arc};

/// The private data of a ri2n device.
///
/// Fields drop in order: the timers first (shut down before the state
/// their callbacks use goes), then the state.
#[pin_data]
pub(crate) struct Ri2n {
    /// `HBSPAN`: heartbeats to every known peer (ri2n_hb.rs).
    #[pin]
    hb_timer: Timer<Ri2n, 0>,
    /// `FAST_TOUT / 4`: releases, probes, queued heartbeats, paused
    /// transmit queues (ri2n_hb.rs).
    #[pin]
    sweep_timer: Timer<Ri2n, 1>,
    /// Tells the stack the slaves' lower states (ri2n_slave.rs).
    #[pin]
    ports_work: Work<Ri2n, 0>,
    /// Sends the state's transitions to the `events` group (ri2n_genl.rs).
    #[pin]
    events_work: Work<Ri2n, 1>,
    #[pin]
    pub(crate) state: SpinLockBh<State>,
    /// ri2n0's GRO cells: the way up of what the windows release.
    pub(crate) gro: GroCells,
    /// Each link's transmit queue and slave (ri2n_txq.rs), outside the
    /// state lock.
    pub(crate) txq: [LinkQueue; MAX_LINKS],
    /// The state's table slots' cells, which unicast and receive reach
    /// without the state lock ([`Ri2n::slots`]).
    pub(crate) slots: AtomicPtr<Slots>,
    /// The state's counters, for `ndo_get_stats64` without its lock.
    pub(crate) stats: Arc<DevStats>,
    /// Our incarnation, carried by heartbeats (never 0).
    pub(crate) epoch: u64,
    /// The administrator set the MTU (`ip link set ri2n0 mtu`): it is
    /// kept, lowered only to what the slaves carry. Until then ri2n0
    /// follows its slaves, up and down. Under RTNL.
    mtu_set: AtomicBool,
    /// ri2n0's own MTU change is under way (not the administrator's).
    mtu_following: AtomicBool,
    /// `one_switch`, read by receive without the lock (it changes only
    /// while the device is down).
    pub(crate) one_switch: AtomicBool,
    /// The keys, for the slaves' GSO and GRO of our frames (`Offload`),
    /// which run without the state lock: published before the state's
    /// change (`set_key`), so that a sealed header finds its key.
    pub(crate) offload_keys: RcuBox<Keys>,
}

crate::device_timer!(Ri2n, hb_timer, 0, crate::ri2n_hb::heartbeat_timer);
crate::device_timer!(Ri2n, sweep_timer, 1, crate::ri2n_hb::sweep_timer);
crate::device_work!(Ri2n, ports_work, 0, crate::ri2n_slave::tell_ports);
crate::device_work!(Ri2n, events_work, 1, crate::ri2n_genl::send_events);

/// A ri2n device.
pub(crate) type Ri2nDev = NetDevice<Ri2n>;

/// MTU of a device with no slave yet (Ethernet's, minus our header).
const DEFAULT_MTU: u32 = 1500 - HEADER_LEN as u32;
/// Smallest MTU (IPv4's minimum).
const MIN_MTU: u32 = 68;

/// Write-only sysfs files, after the parameters: the key frames are sealed
/// with, and one more accepted (core/auth.rs has the rotation).
pub(crate) const KEY_FILES: [&CStr; 2] = [c"key", c"key_accept"];

/// The parameters a request carries, and how many.
fn param_attrs(attrs: &LinkAttrs<'_>) -> ([(Param, u32); NPARAMS], usize) {
    let mut pairs = [(Param::FtHthresh, 0); NPARAMS];
    let mut n = 0;
    for p in Param::ALL {
        if let Some(v) = attrs.u32(p.attr()) {
            pairs[n] = (p, v);
            n += 1;
        }
    }
    (pairs, n)
}

/// Points a refusal about `p` at its attribute; about the two thresholds,
/// at whichever of them the request carries.
fn point_at(attrs: &LinkAttrs<'_>, p: Param, extack: &ExtAck) {
    let p = match p {
        Param::FtLthresh if attrs.u32(p.attr()).is_none() => Param::FtHthresh,
        p => p,
    };
    extack.set_bad_attr(attrs, p.attr());
}

/// What each `IFLA_INFO_DATA` attribute is (core/uapi.rs numbers them):
/// state is only reported, the parameters are set as u32s.
const LINK_ATTRS: [AttrKind; uapi::IFLA_MAX as usize] = {
    let mut kinds = [AttrKind::Reserved; uapi::IFLA_MAX as usize];
    let mut ty = 1;
    while ty <= uapi::IFLA_MAX {
        kinds[ty as usize - 1] = match Attr::of(ty) {
            Attr::State => AttrKind::ReadOnly(c"epoch, version, slaves and peers are read-only"),
            Attr::Reserved => AttrKind::Reserved,
            Attr::Param(_) => AttrKind::U32,
        };
        ty += 1;
    }
    kinds
};

impl Ri2n {
    /// The `IFLA_INFO_DATA` attributes: state and parameters (also the
    /// start of the generic netlink dump's device message).
    pub(crate) fn fill_link_attrs(dev: &Ri2nDev, msg: &NlMsg) -> Result {
        let (params, nslaves, npeers) = {
            let st = dev.data().lock_state();
            (*st.params(), st.nslaves(), st.npeers())
        };
        for (i, p) in Param::ALL.iter().enumerate() {
            msg.put_u32(uapi::IFLA_PARAM0 + i as u16, params.get(*p))?;
        }
        // The low 32 bits, what heartbeats carry.
        msg.put_u32(uapi::IFLA_EPOCH, dev.data().epoch as u32)?;
        msg.put_u32(uapi::IFLA_VERSION, u32::from(crate::proto::header::VERSION))?;
        msg.put_u32(uapi::IFLA_SLAVES, nslaves as u32)?;
        msg.put_u32(uapi::IFLA_PEERS, npeers as u32)
    }

    /// The device's counters, in `uapi::COUNTERS` order (`ethtool -S`,
    /// the generic netlink dump); `st` is its state, locked.
    pub(crate) fn counter_values(
        dev: &Ri2nDev,
        st: &State,
        counted: Counted,
    ) -> [u64; uapi::COUNTERS.len()] {
        let s = st.stats_with(counted);
        let up = dev.data().gro.counts();
        [
            s.rx_packets,
            s.rx_bytes,
            s.tx_packets,
            s.tx_bytes,
            s.rx_dropped,
            s.tx_dropped,
            s.tx_no_link,
            s.tx_queue_full,
            s.tx_loop,
            s.rx_malformed,
            s.rx_not_for_us,
            s.rx_unordered,
            s.rx_bcast_copies,
            s.rx_duplicates,
            s.peers_new,
            s.peers_refused,
            s.peers_evicted,
            s.peers_aged,
            s.rx_nobuf,
            s.rx_held_full,
            s.hb_sent,
            s.rx_auth_fail,
            s.rx_replays,
            s.rx_mode_mismatch,
            s.slave_mac_taken,
            s.rx_merged,
            s.rx_merged_frames,
            s.lock_rounds,
            s.lock_contended,
            s.tx_peer_contended,
            s.sweeps,
            up.now,
            up.polled,
            st.events_dropped(),
        ]
    }

    /// The work that tells the slaves' lower states (ri2n_slave.rs).
    pub(crate) fn ports_work(dev: &Ri2nDev) -> WorkRef<'_, Ri2n, 0> {
        DeviceWork::<0>::work(dev)
    }

    /// The work that sends transitions (ri2n_genl.rs).
    pub(crate) fn events_work(dev: &Ri2nDev) -> WorkRef<'_, Ri2n, 1> {
        DeviceWork::<1>::work(dev)
    }

    /// The heartbeat timer (ri2n_hb.rs).
    pub(crate) fn hb_timer(dev: &Ri2nDev) -> TimerRef<'_, Ri2n, 0> {
        DeviceTimer::<0>::timer(dev)
    }

    /// The sweep timer (ri2n_hb.rs).
    pub(crate) fn sweep_timer(dev: &Ri2nDev) -> TimerRef<'_, Ri2n, 1> {
        DeviceTimer::<1>::timer(dev)
    }

    /// The table slots' cells (ri2n_peer.rs), for as long as
    /// `_rcu` lasts.
    pub(crate) fn slots<'a>(&'a self, _rcu: &'a rcu::Guard) -> &'a Slots {
        // SAFETY: Set at init to the slots the state owns (boxed: they do
        // not move with it), and to the new ones whenever `peer_mem`
        // replaces them (`set_peer_mem`), which frees the old ones a grace
        // period later, after `_rcu`. The state lives as long as `self`.
        unsafe { &*self.slots.load(Ordering::Acquire) }
    }

    /// Takes the state lock, counting the round (`lock_rounds`) and
    /// whether another CPU held it (`lock_contended`), both under it.
    #[inline]
    pub(crate) fn lock_state(&self) -> SpinLockBhGuard<'_, State> {
        let (mut st, contended) = match self.state.try_lock() {
            Some(st) => (st, false),
            None => (self.state.lock(), true),
        };
        st.count_round(contended);
        st
    }

    /// Recomputes the largest MTU from the slaves', and lowers the MTU to it
    /// if needed. RTNL.
    pub(crate) fn update_mtu(dev: &Ri2nDev, rtnl: &Rtnl) {
        let sealed = dev.data().lock_state().keys().on();
        Ri2n::update_mtu_for(dev, rtnl, sealed);
    }

    /// [`Ri2n::update_mtu`] for frames `sealed` or not.
    pub(crate) fn update_mtu_for(dev: &Ri2nDev, rtnl: &Rtnl, sealed: bool) {
        let (min_slave, one_switch) = {
            let st = dev.data().lock_state();
            (st.slaves().map(|(_, s)| s.dev.mtu()).min(), st.one_switch())
        };
        // No slave left (one being replaced): the MTU stays as it is, to be
        // followed, or checked, when slaves come back.
        let Some(min_slave) = min_slave else { return };
        let hlen = header_len_for(sealed, one_switch) as u32;
        let max = min_slave.saturating_sub(hlen).max(MIN_MTU);
        dev.set_max_mtu(rtnl, max);
        let d = dev.data();
        // Until the administrator sets one, ri2n0 carries what its slaves
        // carry (as a VLAN follows its lower device): a jumbo cluster needs
        // no hand step. A set one is only ever lowered to fit.
        let want = if d.mtu_set.load(Ordering::Relaxed) {
            dev.mtu().min(max)
        } else {
            max
        };
        if want == dev.mtu() {
            return;
        }
        let was = dev.mtu();
        d.mtu_following.store(true, Ordering::Relaxed);
        let done = dev.set_mtu(rtnl, want);
        d.mtu_following.store(false, Ordering::Relaxed);
        if done.is_ok() && want < was {
            let why = if sealed || one_switch {
                "a slave's mtu, less the longer header"
            } else {
                "a slave's mtu is smaller"
            };
            pr_info!("{}: mtu lowered to {} ({})\n", dev.name(), want, why);
        } else if done.is_ok() {
            pr_info!(
                "{}: mtu raised to {}, its slaves' less the header\n",
                dev.name(),
                want
            );
        }
    }

    /// Whether any slave is usable: ri2n0's carrier.
    pub(crate) fn update_carrier(dev: &Ri2nDev) {
        let any = dev.data().lock_state().carrier() != 0;
        if any != dev.carrier_ok() {
            dev.set_carrier(any);
        }
    }
}

/// The module parameters' values, the defaults of a new device.
pub(crate) fn default_params() -> Params {
    crate::module_defaults()
}

// SAFETY: `uninit` shuts down both timers and disables both works, and
// waits for their callbacks, before it returns.
#[vtable]
unsafe impl Driver for Ri2n {
    fn setup(dev: &mut Setup<'_>) {
        dev.set_virtual(true);
        // Room for the RI2N header (the longest), so transmit rarely
        // reallocates.
        dev.set_needed_headroom(MAX_HEADER_LEN as u16);
        dev.set_mtu(DEFAULT_MTU, MIN_MTU, DEFAULT_MTU);
        // Checksum and scatter-gather are the slaves' to do: the RI2N header
        // goes in front of the payload without moving it, so a partial
        // checksum's offsets stay right. TSO and the other GSO kinds are
        // done in software at transmit, as WireGuard does: the stack builds
        // one large packet, and every segment still gets its own number.
        dev.set_features(&[
            feature::SG,
            feature::HW_CSUM,
            feature::HIGHDMA,
            feature::GSO,
            feature::TSO,
            feature::TSO6,
            feature::TSO_ECN,
            feature::TSO_MANGLEID,
            feature::GSO_UDP_L4,
        ]);
        // VLANs and tunnels over ri2n0 keep scatter-gather and checksum
        // offload, not segmentation: a tagged or encapsulated GSO packet
        // must be cut before ri2n0, whose slaves segment only plain IP
        // under the RI2N header.
        dev.set_stacked_features(&[feature::SG, feature::HW_CSUM, feature::HIGHDMA]);
        dev.random_addr();
    }

    fn init(dev: &Device) -> impl PinInit<Self, Error> {
        let state = State::new(default_params());
        try_pin_init!(Ri2n {
            hb_timer <- Timer::new(),
            sweep_timer <- Timer::new(),
            ports_work <- Work::new(),
            events_work <- Work::new(),
            slots: AtomicPtr::new(state.as_ref().map_or(core::ptr::null_mut(), |s| s.slots_ptr().cast_mut())),
            stats: state.as_ref().map_err(|e| *e)?.stats().clone(),
            state <- crate::new_spinlock_bh!(state?, "ri2n_state"),
            // SAFETY: `dev` is being initialised and the cells are part
            // of its data: destroyed in `uninit`, dropped with the data.
            gro: unsafe { GroCells::new(dev)? },
            txq: Default::default(),
            // Ordered by creation time, so that a replayed frame from
            // before a restart cannot take us back (core/auth.rs).
            epoch: crate::proto::auth::epoch_at(crate::net::realtime_ms()),
            mtu_set: AtomicBool::new(false),
            mtu_following: AtomicBool::new(false),
            one_switch: AtomicBool::new(default_params().one_switch()),
            offload_keys: RcuBox::new(),
        })
    }

    fn registered(dev: &Ri2nDev, _rtnl: &Rtnl) -> Result {
        // `ip link add ... mtu N` sets the MTU without ndo_change_mtu.
        if dev.mtu() != DEFAULT_MTU {
            dev.data().mtu_set.store(true, Ordering::Relaxed);
        }
        // No slave yet: no carrier.
        Ri2n::update_carrier(dev);
        pr_info!(
            "{}: RI2N/DRV device created (mac {}, epoch {:x})\n",
            dev.name(),
            MacFmt(&dev.addr()),
            dev.data().epoch
        );
        Ok(())
    }

    fn uninit(dev: &Ri2nDev, rtnl: &Rtnl) {
        crate::ri2n_slave::release_all(dev, rtnl);
        // Closed already; no callback may run once this returns (the
        // trait's contract). The ports' work finds no slave now, and takes
        // RTNL only by trying: waiting for it under RTNL is safe.
        Ri2n::hb_timer(dev).shutdown();
        Ri2n::sweep_timer(dev).shutdown();
        Ri2n::ports_work(dev).disable_sync();
        dev.data().gro.destroy();
        crate::ri2n_genl::send_removed(dev);
        pr_info!("{}: removed\n", dev.name());
    }

    fn open(dev: &Ri2nDev, _rtnl: &Rtnl) -> Result {
        crate::ri2n_hb::start(dev);
        Ok(())
    }

    fn stop(dev: &Ri2nDev, rtnl: &Rtnl) -> Result {
        crate::ri2n_hb::stop(dev);
        crate::ri2n_slave::unsync_all(dev, rtnl);
        Ok(())
    }

    fn start_xmit(dev: &Ri2nDev, skb: Skb) {
        crate::ri2n_tx::xmit(dev, skb);
    }

    fn change_mtu(dev: &Ri2nDev, rtnl: &Rtnl, mtu: u32) -> Result {
        if !dev.data().mtu_following.load(Ordering::Relaxed) {
            // The administrator's choice, from now on.
            dev.data().mtu_set.store(true, Ordering::Relaxed);
        }
        dev.store_mtu(rtnl, mtu);
        Ok(())
    }

    fn set_mac_address(dev: &Ri2nDev, rtnl: &Rtnl, addr: &Mac) -> Result {
        crate::ri2n_slave::move_mac(dev, rtnl, addr)
    }

    fn get_stats64(dev: &Ri2nDev, out: &mut Stats64) {
        // Without the state lock: the data path's (ri2n_state/stats.rs).
        let s = dev.data().stats.counts();
        out.rx_packets = s.rx_packets;
        out.rx_bytes = s.rx_bytes;
        out.tx_packets = s.tx_packets;
        out.tx_bytes = s.tx_bytes;
        out.rx_dropped = s.rx_dropped;
        out.tx_dropped = s.tx_dropped;
        out.rx_errors = s.rx_malformed;
        out.rx_frame_errors = s.rx_malformed;
    }

    fn add_slave(dev: &Ri2nDev, rtnl: &Rtnl, port: &Device, extack: &ExtAck) -> Result {
        crate::ri2n_slave::enslave(dev, rtnl, port, extack)
    }

    fn del_slave(dev: &Ri2nDev, rtnl: &Rtnl, port: &Device) -> Result {
        crate::ri2n_slave::release(dev, rtnl, port, crate::ri2n_slave::Release::Asked)
    }

    fn change_rx_flags(dev: &Ri2nDev, rtnl: &Rtnl, change: u32) {
        crate::ri2n_slave::change_rx_flags(dev, rtnl, change);
    }

    fn set_rx_mode(dev: &Ri2nDev, locked: &AddrListLocked<'_>) {
        crate::ri2n_slave::sync_rx_mode(dev, locked);
    }
}

#[vtable]
impl Link for Ri2n {
    const KIND: &'static CStr = c"ri2n";

    const NAME_TEMPLATE: &'static CStr = c"ri2n%d";

    // Five u32 attributes more than the parameters, each 8 bytes.
    const INFO_SIZE: usize = (NPARAMS + 4) * NlMsg::attr_size(4);

    const SLAVE_INFO_SIZE: usize = 4 * NlMsg::attr_size(4);

    const ATTRS: &'static [AttrKind] = &LINK_ATTRS;

    fn check_u32(ty: u16, v: u32, extack: &ExtAck) -> Result {
        let Attr::Param(param) = Attr::of(ty) else {
            return Ok(());
        };
        param.check(v).map_err(|error| {
            extack.set_msg_fmt(format_args!(
                "{}",
                Refusal {
                    param,
                    value: v,
                    error
                }
            ));
            EINVAL
        })
    }

    fn check_new(attrs: &LinkAttrs<'_>, extack: &ExtAck) -> Result {
        let (pairs, n) = param_attrs(attrs);
        let defaults = crate::module_defaults();
        let next = defaults.with(&pairs[..n]).map_err(|r| {
            extack.set_msg_fmt(format_args!("{}", r));
            point_at(attrs, r.param, extack);
            EINVAL
        })?;
        crate::ri2n_conf::within_memory_allowed(&defaults, &next).map_err(|p| {
            extack.set_msg_fmt(format_args!("{}", crate::ri2n_conf::MemoryRefusal(p)));
            point_at(attrs, p, extack);
            EPERM
        })
    }

    fn changelink(dev: &Ri2nDev, rtnl: &Rtnl, attrs: &LinkAttrs<'_>, extack: &ExtAck) -> Result {
        let (pairs, n) = param_attrs(attrs);
        crate::ri2n_conf::set_params(dev, rtnl, &pairs[..n], extack).map_err(|(e, p)| {
            point_at(attrs, p, extack);
            e
        })
    }

    fn fill_info(dev: &Ri2nDev, msg: &NlMsg) -> Result {
        Ri2n::fill_link_attrs(dev, msg)
    }

    fn fill_slave_info(dev: &Ri2nDev, port: &Device, msg: &NlMsg) -> Result {
        let (link, carrier, (up, down)) = {
            let st = dev.data().lock_state();
            let Some(l) = st.link_of(port) else {
                return Ok(());
            };
            (l, st.carrier() & (1 << l) != 0, st.link_peer_counts(l))
        };
        msg.put_u32(uapi::IFLA_SLAVE_LINK, link as u32)?;
        msg.put_u32(uapi::IFLA_SLAVE_CARRIER, u32::from(carrier))?;
        msg.put_u32(uapi::IFLA_SLAVE_PEERS_UP, up)?;
        msg.put_u32(uapi::IFLA_SLAVE_PEERS_DOWN, down)
    }
}

#[vtable]
impl Ethtool for Ri2n {
    const DRIVER: &'static CStr = c"ri2n";

    const VERSION: &'static CStr = c"1";

    fn link_speed(dev: &Ri2nDev, rtnl: &Rtnl) -> Option<u32> {
        let (refs, carrier) = {
            let st = dev.data().lock_state();
            (st.slave_refs(), st.carrier())
        };
        let mut sum = 0u32;
        for (l, s) in refs.iter().enumerate() {
            if let Some(s) = s {
                if carrier & (1 << l) != 0 {
                    sum = sum.saturating_add(s.speed(rtnl).unwrap_or(0));
                }
            }
        }
        (sum > 0).then_some(sum)
    }

    const STATS_COUNT: usize = DEV_STATS.len() + MAX_LINKS * LINK_STATS.len();

    fn stats_names(dev: &Ri2nDev, out: &mut EthtoolStrings<'_>) {
        for n in DEV_STATS {
            out.push(format_args!("{}", n));
        }
        let st = dev.data().lock_state();
        for l in 0..MAX_LINKS {
            for n in LINK_STATS {
                match st.slave(l) {
                    Some(s) => out.push(format_args!("{}.{}", s.name(), n)),
                    None => out.push(format_args!("link{}.{}", l, n)),
                }
            }
        }
    }

    fn stats_values(dev: &Ri2nDev, out: &mut [u64]) {
        let counted = dev.counted();
        let st = dev.data().lock_state();
        let all = Ri2n::counter_values(dev, &st, counted);
        // `ethtool -S` shows those of `DEV_STATS`, the first ones.
        let dev_vals = &all[..DEV_STATS.len()];
        let mut i = 0;
        for &v in dev_vals {
            if let Some(o) = out.get_mut(i) {
                *o = v;
            }
            i += 1;
        }
        for l in 0..MAX_LINKS {
            let ls = st.link_stats(l);
            let q = &dev.data().txq[l];
            let queued = q.queued() as u64;
            for v in [
                ls.rx_packets,
                q.tx_packets(),
                ls.tx_dropped,
                q.tx_whole(),
                queued,
            ] {
                if let Some(o) = out.get_mut(i) {
                    *o = v;
                }
                i += 1;
            }
        }
    }
}

impl Port for Ri2n {
    fn handle_frame(dev: &Ri2nDev, port: &Device, skb: Skb, bh: &Bh<'_>) -> RxHandled {
        crate::ri2n_rx::receive(dev, port, skb, bh)
    }
}

#[vtable]
impl Sysfs for Ri2n {
    const SYSFS_DIR: &'static CStr = c"ri2n";

    const SYSFS_ATTRS: &'static [&'static CStr] = &crate::PARAM_FILES;

    const SYSFS_SECRETS: &'static [&'static CStr] = &KEY_FILES;

    fn sysfs_show(dev: &Ri2nDev, idx: usize, out: &mut TextBuf<'_>) {
        let Some(&p) = Param::ALL.get(idx) else {
            return;
        };
        let v = dev.data().lock_state().params().get(p);
        let _ = kernel::fmt::Write::write_fmt(out, format_args!("{}\n", v));
    }

    fn sysfs_store(dev: &Ri2nDev, idx: usize, input: &str) -> Result {
        if idx >= NPARAMS {
            return set_key(dev, idx - NPARAMS, input);
        }
        let Some(&p) = Param::ALL.get(idx) else {
            return Err(EINVAL);
        };
        let Ok(v) = input.parse::<u32>() else {
            pr_err!(
                "{}: {}: '{}' is not a number\n",
                dev.name(),
                p.spec().name,
                input
            );
            return Err(EINVAL);
        };
        let rtnl = Rtnl::try_lock_or_restart()?;
        crate::ri2n_conf::set_params(dev, &rtnl, &[(p, v)], &ExtAck::none()).map_err(|(e, _)| e)
    }
}

/// Writes key file `which` (`KEY_FILES`): 32 hex digits, or `none`. The
/// key is never logged or shown; procfs shows its id.
fn set_key(dev: &Ri2nDev, which: usize, input: &str) -> Result {
    let key = match input {
        "none" => None,
        hex => match Key::parse_hex(hex) {
            Some(k) => Some(k),
            None => {
                pr_err!(
                    "{}: a key is 32 hex digits (128 bits), or none\n",
                    dev.name()
                );
                return Err(EINVAL);
            }
        },
    };
    let rtnl = Rtnl::try_lock_or_restart()?;
    apply_key(dev, &rtnl, which, key)
}

/// Sets key `which` (0: the key frames are sealed with, 1: the one also
/// accepted) to `key` (none: unset), from sysfs or netlink.
pub(crate) fn apply_key(dev: &Ri2nDev, rtnl: &Rtnl, which: usize, key: Option<Key>) -> Result {
    // Turning seals on or off changes the header's length, hence the MTU:
    // lowered before the first sealed frame, raised (the maximum) after
    // the last.
    let (was, mut keys) = {
        let st = dev.data().lock_state();
        (st.keys().on(), st.keys().clone())
    };
    if which == 0 {
        keys.seal_with(key.clone());
    } else {
        keys.accept(key.clone());
    }
    let next = keys
        .on()
        .then(|| KBox::new(keys, GFP_KERNEL_ACCOUNT))
        .transpose()?;
    let keys_on = !was && which == 0 && key.is_some();
    let id = key.as_ref().map(Key::id);
    if keys_on {
        Ri2n::update_mtu_for(dev, rtnl, true);
    }
    // Unicast goes the locked way while the keys change, here and in the
    // copy the lockless way reads: a lockless sender that read the old
    // keys is done after a grace period, so that no frame leaves unsealed
    // once a key is set, nor sealed once none is.
    dev.data().lock_state().hold_lockless(true);
    crate::net::synchronize_net();
    // The offload's copy of a key first: a sealed header queued from here
    // on finds its key at the slave (one sealed under the old key gets the
    // new one's tag, which every peer accepts by the rotation's rules).
    // Keys off: after the state, so that fewer sealed packets meet no key
    // there (those still queued at a slave are dropped).
    let keys_off = next.is_none();
    if !keys_off {
        dev.data().offload_keys.replace(next);
    }
    let now = {
        let mut st = dev.data().lock_state();
        if which == 0 {
            st.seal_with(key);
        } else {
            st.accept_key(key);
        }
        st.keys().on()
    };
    if keys_off {
        dev.data().offload_keys.replace(None);
    }
    dev.data().lock_state().hold_lockless(false);
    Ri2n::update_mtu(dev, rtnl);
    log_key(dev, which, id, was, now);
    Ok(())
}

/// One log line for key `which` (0: the sealing key, 1: the accepted one)
/// set to the key of `id` (none: unset); `was`, `now`: whether frames
/// were sealed before, and are now.
fn log_key(dev: &Ri2nDev, which: usize, id: Option<u32>, was: bool, now: bool) {
    match (which, id) {
        (0, Some(id)) => pr_info!(
            "{}: sealing frames with key {:08x}{}\n",
            dev.name(),
            id,
            if was { "" } else { " (keys on)" }
        ),
        (0, None) => pr_info!(
            "{}: keys off: frames unsealed, the segment trusted\n",
            dev.name()
        ),
        (_, Some(id)) => pr_info!("{}: also accepting key {:08x}\n", dev.name(), id),
        (_, None) => pr_info!("{}: accepting only the sealing key\n", dev.name()),
    }
    if which != 0 && !now {
        pr_warn!(
            "{}: key_accept has no effect until a key is set\n",
            dev.name()
        );
    }
}

/// `ethtool -S` device counters: the generic netlink family's
/// (core/uapi.rs), but the last, `events_dropped`, added after them.
const DEV_STATS: &[&str] = uapi::COUNTERS.split_at(uapi::COUNTERS.len() - 1).0;
/// `ethtool -S` per-link counters, after the device's.
const LINK_STATS: [&str; 5] = [
    "rx_packets",
    "tx_packets",
    "tx_dropped",
    "tx_whole",
    "queued",
];

/// `/proc/net/ri2n/DEV`: for people (`cat`); programs use the generic
/// netlink family (ri2n_genl.rs).
impl Proc for Ri2n {
    const PROC_DIR: &'static CStr = c"ri2n";

    fn proc_show(dev: &Ri2nDev, m: &SeqFile) {
        crate::ri2n_proc::show(dev, m);
    }
}
