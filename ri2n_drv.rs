// SPDX-License-Identifier: GPL-2.0

//! ri2n: RI2N/DRV, several Ethernet links bonded into one fast,
//! fault-tolerant link (Okamoto et al., IPSJ 2008).
//!
//! `insmod ri2n.ko slaves=eth0,eth1` creates `ri2n0` over the slaves. On
//! transmit each packet gets an 8-byte RI2N header and goes round-robin, per
//! peer, over the links that work (`ri2n_tx.rs`); on receive an ethertype
//! 0x1004 handler reorders each peer's packets and hands them up as if
//! `ri2n0` had received them (`ri2n_rx.rs`); heartbeats and counters find
//! dead links and take them back when they heal (`ri2n_hb.rs`). Every
//! decision is made by the kernel-free protocol core (`core/`); raw kernel
//! access is wrapped once, in `ri2n_glue.rs` and `ri2n_glue.c`.
//!
//! This file: the module, its parameters, the device state and procfs.

use core::sync::atomic::{AtomicPtr, AtomicU32, Ordering};
use kernel::prelude::*;
use kernel::seq_file::SeqFile;
use kernel::seq_print;
use kernel::sync::{SpinLock, SpinLockIrq};
use kernel::{new_spinlock, new_spinlock_irq};

// The core is a library: its public API is for tools/ri2n-core too, and
// parts of it only the userspace tests use.
#[allow(dead_code, unreachable_pub)]
#[path = "core/mod.rs"]
mod proto;
mod ri2n_glue;
mod ri2n_hb;
mod ri2n_rx;
mod ri2n_tx;

use proto::detector::Detector;
use proto::params::{Param, Params, NPARAMS, SPECS};
use proto::peers::PeerTable;
use proto::rx::PeerRx;
use proto::sched::RoundRobin;
use proto::seq::Seq;
use proto::time::Instant;
use proto::MAX_LINKS;
use ri2n_glue::{Hooks, Mac, MacFmt, NetDev, OwnedNetDev, Rtnl, Skb, SlaveRef};

module! {
    type: Ri2nModule,
    name: "ri2n",
    authors: ["ri2n developers"],
    description: "RI2N/DRV: striped, reordered, fault-tolerant multi-link Ethernet",
    license: "GPL",
}

/// Fewest slaves `slaves=` accepts.
const MIN_SLAVES: usize = 2;

/// Counters of the device, shown by `ip -s link` and procfs.
#[derive(Default, Clone, Copy)]
pub(crate) struct DevStats {
    pub(crate) rx_packets: u64,
    pub(crate) rx_bytes: u64,
    pub(crate) tx_packets: u64,
    pub(crate) tx_bytes: u64,
    /// Frames dropped on receive for any reason below, or while down.
    pub(crate) rx_dropped: u64,
    /// Packets dropped on transmit (no usable link, no memory, no peer room).
    pub(crate) tx_dropped: u64,
    /// Malformed RI2N frames (short, bad version, unknown kind).
    pub(crate) rx_malformed: u64,
    /// RI2N frames that arrived on a device that is not a slave.
    pub(crate) rx_not_slave: u64,
    /// RI2N frames addressed to another node.
    pub(crate) rx_not_for_us: u64,
    /// Second copies of broadcasts (sent on every link), dropped.
    pub(crate) rx_bcast_copies: u64,
    /// Duplicates of held packets, dropped.
    pub(crate) rx_duplicates: u64,
    /// Transmit drops because no link to the peer was usable.
    pub(crate) tx_no_link: u64,
    /// New peers refused because `max_peers` are known and none is idle.
    pub(crate) peers_refused: u64,
    /// Peers evicted for being idle when the table was full.
    pub(crate) peers_evicted: u64,
    /// Heartbeats sent.
    pub(crate) hb_sent: u64,
}

impl DevStats {
    /// A packet counted as sent was dropped after all.
    pub(crate) fn uncount_tx(&mut self, len: u64) {
        self.tx_packets -= 1;
        self.tx_bytes -= len;
        self.tx_dropped += 1;
    }
}

/// Per-peer state (one node at the other end of the links).
pub(crate) struct Peer {
    /// Receive side: reorder window, loss detector, broadcast filter.
    pub(crate) rx: PeerRx<Skb>,
    /// Endpoints of this peer, one per link.
    pub(crate) det: Detector,
    /// Round-robin position.
    pub(crate) rr: RoundRobin,
    /// Next data sequence number to this peer.
    pub(crate) tx_seq: Seq,
    /// Links on which a heartbeat is to go soon (answers, news of failure).
    pub(crate) hb_pending: u8,
    /// Links on which that heartbeat asks for an answer (HB_PROBE).
    pub(crate) hb_probe: u8,
}

/// Everything the data path and the timers share.
///
/// Protected by [`Ri2n::state`], taken from softirq (receive, timers), with
/// BH disabled (transmit) and from process context (procfs, sysfs,
/// notifiers); never held across `dev_queue_xmit`.
pub(crate) struct State {
    /// The device is up: packets may be held and timers run.
    pub(crate) up: bool,
    pub(crate) params: Params,
    /// Slaves by link index; `None` once a slave went away.
    pub(crate) slaves: [Option<SlaveRef>; MAX_LINKS],
    /// Links whose slave is up with carrier.
    pub(crate) carrier: u8,
    /// When each link's bit in `carrier` last changed (procfs, failover timing).
    pub(crate) carrier_changed: [Instant; MAX_LINKS],
    pub(crate) table: KBox<PeerTable>,
    /// Indexed like `table`'s slots.
    pub(crate) peers: KVec<Option<KBox<Peer>>>,
    /// Next number for our broadcasts.
    pub(crate) bcast_seq: Seq,
    pub(crate) stats: DevStats,
}

/// The device: ri2n0 and its slaves.
#[pin_data]
pub(crate) struct Ri2n {
    pub(crate) dev: NetDev,
    pub(crate) nslaves: usize,
    /// Slave names, for logs after a slave went away.
    pub(crate) names: [[u8; 16]; MAX_LINKS],
    /// Our incarnation, carried by heartbeats (never 0).
    pub(crate) epoch: u32,
    #[pin]
    pub(crate) state: SpinLockIrq<State>,
    /// Held from taking a peer's sequence number until the packet is queued
    /// on its slave (data and heartbeats alike), so that each link carries
    /// a peer's numbers in increasing order, as the loss rule assumes, even
    /// with several CPUs transmitting. Taken only with BH disabled (transmit,
    /// timers), before `state`; `state` cannot be: `dev_queue_xmit` must
    /// not run with IRQs off.
    #[pin]
    pub(crate) tx_lock: SpinLock<()>,
}

/// The one device of this module, for the callbacks.
///
/// # Invariants
///
/// Non-null exactly between the end of [`Ri2nModule::init`]'s set-up and the
/// point in its drop after every callback was unregistered and every timer
/// stopped; it then points to the pinned [`Ri2n`] the module owns.
static DEVICE: AtomicPtr<Ri2n> = AtomicPtr::new(core::ptr::null_mut());

/// The device, if the module is up.
pub(crate) fn device() -> Option<&'static Ri2n> {
    let p = DEVICE.load(Ordering::Acquire);
    // SAFETY: By the invariant of `DEVICE`, a non-null pointer is valid until
    // every caller (packet handler, ndo ops, notifier, timers, procfs) is
    // gone, and only those call this.
    (!p.is_null()).then(|| unsafe { &*p })
}

impl Ri2n {
    /// The name of link `l`'s slave.
    pub(crate) fn link_name(&self, l: usize) -> &str {
        let n = &self.names[l];
        let len = n.iter().position(|&c| c == 0).unwrap_or(n.len());
        core::str::from_utf8(&n[..len]).unwrap_or("?")
    }
}

impl State {
    /// The link index of `dev`, if it is one of our slaves.
    pub(crate) fn link_of(&self, dev: NetDev) -> Option<usize> {
        self.slaves.iter().position(|s| s.as_ref().is_some_and(|s| s.dev() == dev))
    }

    /// The slaves still present (to act on them without the lock).
    pub(crate) fn slave_devs(&self) -> Result<KVec<NetDev>> {
        let mut v = KVec::new();
        for s in self.slaves.iter().flatten() {
            v.push(s.dev(), GFP_ATOMIC)?;
        }
        Ok(v)
    }

    /// Links with a present slave that has carrier.
    pub(crate) fn links_up(&self) -> u8 {
        self.carrier
    }

    /// The slot of the peer with address `mac`, created if new (evicting an
    /// idle one if the table is full). `None` if there is no room or memory.
    pub(crate) fn peer_slot(&mut self, mac: &Mac, nslaves: usize, now: Instant) -> Option<usize> {
        let slot = match self.table.lookup(mac) {
            Some(s) => s,
            None => self.new_peer(mac, nslaves, now)?,
        };
        self.table.touch(slot, now);
        Some(slot)
    }

    fn new_peer(&mut self, mac: &Mac, nslaves: usize, now: Instant) -> Option<usize> {
        let max = self.params.max_peers();
        if self.table.len() >= max {
            // Real peers send heartbeats every HBSPAN; three missed is dead.
            let idle = proto::time::Duration(self.params.hbspan().0.saturating_mul(3));
            match self.table.idle_slot(now, idle) {
                Some(s) => {
                    self.table.remove(s);
                    self.peers[s] = None; // Frees its held packets.
                    self.stats.peers_evicted += 1;
                }
                None => {
                    self.stats.peers_refused += 1;
                    return None;
                }
            }
        }
        let mut peer = ri2n_glue::alloc_peer()?;
        peer.det.start(nslaves, now);
        let slot = self.table.insert(mac, now, max).ok()?;
        self.peers[slot] = Some(peer);
        Some(slot)
    }

}

/// `ndo_set_mac_address`: moves the slaves' unicast filter entry to `new`.
pub(crate) fn set_mac(rtnl: &Rtnl, new: &Mac) -> Result {
    let Some(d) = device() else { return Ok(()) };
    let old = d.dev.addr();
    let slaves = d.state.lock().slave_devs()?;
    for s in slaves.iter() {
        s.uc_filter(rtnl, new, true)?;
        // Best effort: a stale entry only costs a filter slot.
        let _ = s.uc_filter(rtnl, &old, false);
    }
    Ok(())
}

/// Counters for `ndo_get_stats64`, in `ri2n_get_stats64`'s order.
pub(crate) fn stats() -> [u64; 8] {
    let Some(d) = device() else { return [0; 8] };
    let s = d.state.lock().stats;
    [
        s.rx_packets,
        s.rx_bytes,
        s.tx_packets,
        s.tx_bytes,
        s.rx_dropped,
        s.tx_dropped,
        s.rx_malformed + s.rx_not_slave,
        s.rx_malformed,
    ]
}

// --- Parameters ---------------------------------------------------------------

/// Parameter values as set on the command line or in sysfs (the device's
/// `State::params` is the validated copy the data path uses).
static PARAMS: [AtomicU32; NPARAMS] = {
    let mut a = [const { AtomicU32::new(0) }; NPARAMS];
    let mut i = 0;
    while i < NPARAMS {
        a[i] = AtomicU32::new(SPECS[i].default);
        i += 1;
    }
    a
};

/// A parameter write (insmod or sysfs). Before the device exists only the
/// range is checked (`ft_lthresh < ft_hthresh` is checked as a whole at
/// init, so the order on the command line does not matter); afterwards the
/// whole set is validated and applied at once.
pub(crate) fn param_set(idx: usize, val: u32) -> Result {
    let Some(&p) = Param::ALL.get(idx) else { return Err(EINVAL) };
    let spec = p.spec();
    if p.check(val).is_err() {
        pr_err!("ri2n: {} must be {}..={} {}, not {}\n", spec.name, spec.min, spec.max, spec.unit, val);
        return Err(EINVAL);
    }
    if let Some(d) = device() {
        let mut st = d.state.lock();
        if let Err(e) = st.params.set(p, val) {
            pr_err!("ri2n: {} = {} refused: {}\n", spec.name, val, e.reason());
            return Err(EINVAL);
        }
    }
    PARAMS[idx].store(val, Ordering::Relaxed);
    Ok(())
}

/// A parameter read (sysfs).
pub(crate) fn param_get(idx: usize) -> u32 {
    PARAMS.get(idx).map_or(0, |a| a.load(Ordering::Relaxed))
}

fn params_from_cmdline() -> Result<Params> {
    let mut pairs = [(Param::FtHthresh, 0u32); NPARAMS];
    for (i, p) in Param::ALL.iter().enumerate() {
        pairs[i] = (*p, PARAMS[i].load(Ordering::Relaxed));
    }
    Params::from_values(&pairs).map_err(|e| {
        pr_err!("ri2n: invalid parameters: {}\n", e.reason());
        EINVAL
    })
}

// --- Module --------------------------------------------------------------------

/// Splits `slaves=` and takes a reference on each named device.
fn parse_slaves() -> Result<KVec<SlaveRef>> {
    let Some(arg) = ri2n_glue::slaves_param() else {
        pr_err!("ri2n: slaves= is required, e.g. slaves=eth0,eth1\n");
        return Err(EINVAL);
    };
    let arg = arg.to_str().map_err(|_| EINVAL)?;
    let mut v: KVec<SlaveRef> = KVec::new();
    for name in arg.split(',') {
        if v.len() == MAX_LINKS {
            pr_err!("ri2n: at most {} slaves\n", MAX_LINKS);
            return Err(EINVAL);
        }
        let mut buf = [0u8; 16];
        if name.is_empty() || name.len() >= buf.len() {
            pr_err!("ri2n: slave name '{}' is not an interface name\n", name);
            return Err(EINVAL);
        }
        buf[..name.len()].copy_from_slice(name.as_bytes());
        let cname = CStr::from_bytes_with_nul(&buf[..=name.len()]).map_err(|_| EINVAL)?;
        let Some(s) = SlaveRef::by_name(cname) else {
            pr_err!("ri2n: slave {}: no such device\n", name);
            return Err(ENODEV);
        };
        if s.dev().is_loopback() || !s.dev().is_ether() {
            pr_err!("ri2n: slave {}: not an Ethernet device\n", name);
            return Err(EINVAL);
        }
        if v.iter().any(|o| o.dev() == s.dev()) {
            pr_err!("ri2n: slave {} listed twice\n", name);
            return Err(EINVAL);
        }
        v.push(s, GFP_KERNEL)?;
    }
    if v.len() < MIN_SLAVES {
        pr_err!("ri2n: at least {} slaves are needed, {} given\n", MIN_SLAVES, v.len());
        return Err(EINVAL);
    }
    Ok(v)
}

struct Ri2nModule {
    hooks: Option<Hooks>,
    netdev: Option<OwnedNetDev>,
    filters: KVec<NetDev>,
    dev: Pin<KBox<Ri2n>>,
}

impl kernel::Module for Ri2nModule {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let params = params_from_cmdline()?;
        let slaves = parse_slaves()?;
        let nslaves = slaves.len();
        let mut netdev = OwnedNetDev::alloc()?;
        let dev = netdev.dev();

        let mut names = [[0u8; 16]; MAX_LINKS];
        let mut mtu = u32::MAX;
        let mut carrier = 0u8;
        for (l, s) in slaves.iter().enumerate() {
            let sd = s.dev();
            let n = sd.name().to_bytes();
            names[l][..n.len()].copy_from_slice(n);
            mtu = mtu.min(s.dev().mtu());
            if s.dev().running() && s.dev().carrier_ok() {
                carrier |= 1 << l;
            }
        }
        // The RI2N header costs 8 bytes of every frame (§5.2).
        let mtu = mtu.saturating_sub(proto::header::HEADER_LEN as u32).max(68);
        ri2n_glue::init_mtu(dev, mtu);

        let mut table = ri2n_glue::alloc_peer_table()?;
        table.set_key((ri2n_glue::random_u32() as u64) << 32 | ri2n_glue::random_u32() as u64);
        let mut peers = KVec::with_capacity(proto::params::MAX_PEERS_LIMIT as usize, GFP_KERNEL)?;
        for _ in 0..proto::params::MAX_PEERS_LIMIT {
            peers.push(None, GFP_KERNEL)?;
        }
        let mut slot_refs: [Option<SlaveRef>; MAX_LINKS] = Default::default();
        for (l, s) in slaves.into_iter().enumerate() {
            slot_refs[l] = Some(s);
        }
        let state = State {
            up: false,
            params,
            slaves: slot_refs,
            carrier,
            carrier_changed: [ri2n_glue::now(); MAX_LINKS],
            table,
            peers,
            bcast_seq: Seq(ri2n_glue::random_u32()),
            stats: DevStats::default(),
        };
        let epoch = ri2n_glue::random_u32().max(1);
        let ri2n = KBox::pin_init(
            pin_init!(Ri2n {
                dev,
                nslaves,
                names,
                epoch,
                state <- new_spinlock_irq!(state, "ri2n_state"),
                tx_lock <- new_spinlock!((), "ri2n_tx"),
            }),
            GFP_KERNEL,
        )?;
        ri2n_glue::setup_timers();
        DEVICE.store(&*ri2n as *const Ri2n as *mut Ri2n, Ordering::Release);
        let mut m = Ri2nModule { hooks: None, netdev: None, filters: KVec::new(), dev: ri2n };

        // Slaves accept frames for ri2n0's address and every multicast.
        {
            let rtnl = Rtnl::lock();
            let mac = dev.addr();
            let slaves = m.dev.state.lock().slave_devs()?;
            for s in slaves.iter() {
                s.uc_filter(&rtnl, &mac, true)?;
                if let Err(e) = s.allmulti(&rtnl, 1) {
                    let _ = s.uc_filter(&rtnl, &mac, false);
                    return Err(e);
                }
                m.filters.push(*s, GFP_KERNEL)?;
            }
        }

        netdev.register()?;
        m.netdev = Some(netdev);
        let mut hooks = Hooks::new();
        hooks.proc(dev.name())?;
        hooks.notifier()?;
        hooks.packet_handler();
        m.hooks = Some(hooks);
        dev.set_carrier(carrier != 0);

        pr_info!(
            "{}: RI2N/DRV over {} slaves (mtu {}, mac {}, epoch {:08x})\n",
            dev.name_str(),
            nslaves,
            mtu,
            MacFmt(&dev.addr()),
            epoch
        );
        for l in 0..nslaves {
            pr_info!("{}: link {}: {}\n", dev.name_str(), l, m.dev.link_name(l));
        }
        Ok(m)
    }
}

impl Drop for Ri2nModule {
    fn drop(&mut self) {
        let mac = self.dev.dev.addr();
        // No more received frames, notifier events or procfs readers.
        drop(self.hooks.take());
        // Unregistering runs ndo_stop (timers stopped, held packets freed)
        // and waits for every transmit in flight.
        drop(self.netdev.take());
        ri2n_hb::stop_timers();
        {
            let rtnl = Rtnl::lock();
            let st = self.dev.state.lock();
            let present: [bool; MAX_LINKS] = core::array::from_fn(|l| st.slaves[l].is_some());
            drop(st);
            for (l, s) in self.filters.iter().enumerate() {
                if present[l] {
                    let _ = s.uc_filter(&rtnl, &mac, false);
                    let _ = s.allmulti(&rtnl, -1);
                }
            }
        }
        DEVICE.store(core::ptr::null_mut(), Ordering::Release);
        pr_info!("ri2n: unloaded\n");
        // `self.dev` drops next: slave references, peers and anything held.
    }
}

// --- procfs ----------------------------------------------------------------------

/// `/proc/net/ri2n/ri2n0`, in the spirit of `/proc/net/bonding/bond0`.
pub(crate) fn proc_show(m: &SeqFile) {
    let Some(d) = device() else { return };
    let st = d.state.lock();
    let (now, wall) = (ri2n_glue::now(), ri2n_glue::realtime_ms());
    seq_print!(m, "RI2N/DRV: protocol version {}\n", proto::header::VERSION);
    // The ages below (`*_ms`) count back from this moment.
    seq_print!(m, "Clock: {} ms since the epoch\n\n", wall);
    seq_print!(m, "Device: {}\n", d.dev.name_str());
    seq_print!(m, "MAC: {}\nMTU: {}\nState: {}\n", MacFmt(&d.dev.addr()), d.dev.mtu(), if st.up { "up" } else { "down" });
    seq_print!(m, "Epoch: {:08x}\n", d.epoch);
    seq_print!(m, "Parameters:");
    for p in Param::ALL {
        seq_print!(m, " {}={}", p.spec().name, st.params.get(p));
    }
    seq_print!(m, "\n\n");
    for l in 0..d.nslaves {
        let present = st.slaves[l].is_some();
        let carrier = st.carrier & (1 << l) != 0;
        seq_print!(
            m,
            "Slave {}: {} carrier {} changed_ms {}{}\n",
            l,
            d.link_name(l),
            if carrier { "up" } else { "down" },
            now.since(st.carrier_changed[l]).as_ms(),
            if present { "" } else { " (removed)" }
        );
    }
    let s = &st.stats;
    seq_print!(
        m,
        "\nCounters: rx_packets {} tx_packets {} rx_dropped {} tx_dropped {} tx_no_link {} rx_malformed {} rx_not_slave {} rx_not_for_us {} rx_bcast_copies {} rx_duplicates {} peers_refused {} peers_evicted {} hb_sent {}\n",
        s.rx_packets, s.tx_packets, s.rx_dropped, s.tx_dropped, s.tx_no_link, s.rx_malformed,
        s.rx_not_slave, s.rx_not_for_us, s.rx_bcast_copies, s.rx_duplicates, s.peers_refused,
        s.peers_evicted, s.hb_sent
    );
    seq_print!(m, "Peers: {}\n", st.table.len());
    for slot in st.table.slots() {
        let Some(p) = st.peers[slot].as_deref() else { continue };
        let w = &p.rx.window;
        let r = w.stats;
        seq_print!(m, "\nPeer {}:\n", MacFmt(st.table.mac(slot)));
        seq_print!(m, "  epoch {:08x} tx_next {} rx_next {} held {}\n", p.rx.epoch, p.tx_seq.0, w.next_expected().0, w.held());
        seq_print!(
            m,
            "  released in_order {} timeout {} loss {} flushes {} jumps {} gaps {} late {} late_loss {} duplicates {} restarts {}\n",
            r.in_order, r.timeout, r.loss, r.flushes, r.jumps, r.gaps, r.late, r.late_loss, r.duplicates, r.resyncs
        );
        for l in 0..d.nslaves {
            let e = &p.det.endpoints[l];
            let state = if st.carrier & (1 << l) == 0 {
                "no-carrier"
            } else if e.failed {
                "failed"
            } else if e.peer_failed {
                "peer-failed"
            } else {
                "up"
            };
            seq_print!(
                m,
                "  endpoint {}: state {} counter {} last_rx_ms {} rx {} hb {} fails {} recoveries {} changed_ms {}\n",
                d.link_name(l),
                state,
                e.counter,
                now.since(e.last_rx).as_ms(),
                e.rx_packets,
                e.rx_heartbeats,
                e.fails,
                e.recoveries,
                now.since(e.changed).as_ms()
            );
        }
    }
}
