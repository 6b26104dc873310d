// SPDX-License-Identifier: GPL-2.0

//! The state of one ri2n device that the data path, the timers and the
//! configuration share: slaves (links), peers, counters and the per-link
//! transmit queues. It lives behind [`crate::ri2n_dev::Ri2n::state`], a
//! BH-disabling spinlock, and is changed only through the methods below, one
//! group per path (transmit, receive, timers, slaves), so every rule has
//! one owner.
//!
//! Nothing here frees a packet: whatever must go is moved to an
//! [`SkbList`] the caller frees after dropping the lock, and whatever must
//! be handed up goes to another list the caller delivers.

use crate::net::cache::Cache;
use crate::net::device::{Counted, Device};
use crate::net::skb::SkbList;
use crate::net::Mac;
use crate::proto::auth::{HbCounter, Key, Keys, Record, Records};
use crate::proto::claims::{buckets_for as claims_buckets, Claims};
use crate::proto::detector::{loss_probe_every, node_probe_shift, ProbingPeers};
use crate::proto::events::{Event, Events};
pub(crate) use crate::proto::node::sweep_period;
use crate::proto::params::{Param, Params};
use crate::proto::peers::NewPeerBudget;
use crate::proto::seq::Seq;
use crate::proto::time::{Duration, Instant};
use crate::proto::tx::PeerTx;
use crate::proto::uapi::Reason;
use crate::proto::work::Work;
use crate::proto::MAX_LINKS;
use crate::ri2n_peer::{BufPool, Peer, Slots, Table};
use core::sync::atomic::Ordering;
use kernel::alloc::KVVec;
use kernel::prelude::*;
use kernel::sync::aref::ARef;
use kernel::sync::Arc;

mod peers;
mod rx;
mod slaves;
mod stats;
mod timers;
mod tx;

pub(crate) use rx::{ends_gro_run, hand_up, RxIn, RxOut, Sealed, Wire};
pub(crate) use stats::{DevCounts, DevStats, LinkStats};
pub(crate) use timers::{log_carrier, ms_until};
pub(crate) use tx::TxRoute;

/// A slave NIC and what enslaving it changed, to give it back as found.
pub(crate) struct Slave {
    pub(crate) dev: ARef<Device>,
    pub(crate) name: [u8; 16],
    /// It was down and we opened it.
    pub(crate) opened: bool,
    /// We added one to its promiscuity (ri2n0 is promiscuous).
    pub(crate) promisc: bool,
    /// Hardware segmentation features we turned off (`tx_gso`).
    pub(crate) gso_off: u64,
}

impl Slave {
    pub(crate) fn name(&self) -> &str {
        let len = self
            .name
            .iter()
            .position(|&c| c == 0)
            .unwrap_or(self.name.len());
        core::str::from_utf8(&self.name[..len]).unwrap_or("?")
    }
}

/// Phases of HBSPAN (see [`State::hb_tick`]): at the default 2 s, one is
/// 31 ms long and holds 1/64 of the table's slots.
pub(crate) const HB_PHASES: usize = crate::proto::phases::PHASES;

/// The timers' lists of peers (core/work.rs).
type Lists = Work<KVVec<u8>, KVVec<u32>>;

/// See the module documentation.
pub(crate) struct State {
    up: bool,
    params: Params,
    slaves: [Option<Slave>; MAX_LINKS],
    /// Links whose slave is present, up and has carrier.
    carrier: u8,
    /// When each link's bit in `carrier` last changed.
    carrier_changed: [Instant; MAX_LINKS],
    /// MAC → peer, sized by `peer_mem` (ri2n_peer.rs).
    table: Table,
    /// One-switch mode: slave MAC → the peer and link it was learned for.
    claims: Claims<KVVec<u32>>,
    /// Reorder buffers, lent to windows while they hold packets.
    bufs: BufPool,
    /// Each slot's peer, under a lock of its own, and the lookup that
    /// reaches it without this lock (ri2n_peer.rs). Lock order: this
    /// state, then one cell. A peer is reached only through its cell.
    slots: KBox<Slots>,
    cache: Arc<Cache<Peer>>,
    /// The peers the sweep visits, those with heartbeats waiting, and
    /// the heartbeat timer's phases.
    work: Lists,
    /// How fast frames may create peers.
    new_peers: NewPeerBudget,
    /// What was kept of forgotten peers (keyed): their epochs, heartbeat
    /// counters and numbering.
    records: Records<KVVec<Record>>,
    /// Next number for our broadcasts.
    bcast_seq: Seq,
    /// Peers with a lossy link at the last sweep (they set how often each
    /// is probed: `loss_probe_every`).
    lossy_peers: usize,
    /// An endpoint changed state since the ports' lower states were last
    /// told (`take_ports_changed`).
    ports_changed: bool,
    /// Each link's lower state as last told (`ports_to_tell`): bit 0 link
    /// up, bit 1 transmit enabled, bit 7 told at all.
    ports_told: [u8; MAX_LINKS],
    /// The peers that probe us (a link of theirs lossy toward us).
    probing: ProbingPeers,
    /// The MAC address was set by the administrator or derived from the
    /// first slave: it is no longer the random one of a new device.
    mac_chosen: bool,
    /// Written under this lock; read without it too (`Ri2n::stats`).
    stats: Arc<DevStats>,
    link_stats: [LinkStats; MAX_LINKS],
    /// The shared keys (none: frames unsealed, the segment trusted).
    keys: Keys,
    /// Our sealed heartbeats' counter.
    hb_counter: HbCounter,
    /// Unicast takes the locked way whatever else says (a key is coming).
    lockless_held: bool,
    /// Transitions waiting for the events work (ri2n_genl.rs).
    events: KBox<Events>,
    /// Counts peers admitted and forgotten: a dump that sees it change
    /// between its pages may have missed a peer or shown one twice.
    peers_gen: u32,
}

fn now() -> Instant {
    Instant(crate::net::ktime_ns())
}

fn table_key() -> u64 {
    (u64::from(crate::net::random_u32()) << 32) | u64::from(crate::net::random_u32())
}

/// The timers' lists for a table of `n` slots.
fn new_lists(n: usize) -> Result<Lists> {
    Ok(Work::new(
        KVVec::from_elem(0, n, GFP_KERNEL_ACCOUNT)?,
        KVVec::from_elem(0, n, GFP_KERNEL_ACCOUNT)?,
        KVVec::from_elem(0, n, GFP_KERNEL_ACCOUNT)?,
        KVVec::from_elem(0, n, GFP_KERNEL_ACCOUNT)?,
    ))
}

/// The slave MAC claims of a table of `slots` slots (core/claims.rs).
fn new_claims(slots: usize) -> Result<Claims<KVVec<u32>>> {
    Ok(Claims::new(
        KVVec::from_elem(0, claims_buckets(slots), GFP_KERNEL_ACCOUNT)?,
        table_key(),
    ))
}

/// A peer table and what goes with it, made in process context for a new
/// `peer_mem` ([`State::set_peer_mem`]).
pub(crate) struct NewTable {
    table: Table,
    claims: Claims<KVVec<u32>>,
    bufs: BufPool,
    slots: KBox<Slots>,
    work: Lists,
    records: Records<KVVec<Record>>,
}

impl NewTable {
    /// For a budget of `bytes`; EINVAL if it holds less than one peer.
    pub(crate) fn new(bytes: usize) -> Result<NewTable> {
        let (table, bufs) = crate::ri2n_peer::new_table(bytes, table_key())?;
        let claims = new_claims(table.capacity())?;
        let slots = Slots::new(table.capacity(), table_key())?;
        let work = new_lists(table.capacity())?;
        let records = Records::new(
            KVVec::from_elem(Record::default(), table.capacity(), GFP_KERNEL_ACCOUNT)?,
            table_key(),
        );
        Ok(NewTable {
            table,
            claims,
            bufs,
            slots,
            work,
            records,
        })
    }
}

impl State {
    /// A device with no slave and no peer, with parameters `params`.
    pub(crate) fn new(params: Params) -> Result<State> {
        let NewTable {
            table,
            claims,
            bufs,
            slots,
            work,
            records,
        } = NewTable::new(params.peer_mem())?;
        let st = State {
            up: false,
            params,
            slaves: Default::default(),
            carrier: 0,
            carrier_changed: [now(); MAX_LINKS],
            table,
            claims,
            bufs,
            slots,
            cache: crate::ri2n_peer::new_cache()?,
            work,
            new_peers: NewPeerBudget::default(),
            records,
            bcast_seq: Seq(crate::net::random_u32()),
            lossy_peers: 0,
            ports_changed: false,
            ports_told: [0; MAX_LINKS],
            probing: ProbingPeers::default(),
            mac_chosen: false,
            stats: Arc::new(DevStats::default(), GFP_KERNEL_ACCOUNT)?,
            link_stats: [LinkStats::default(); MAX_LINKS],
            keys: Keys::default(),
            hb_counter: HbCounter::default(),
            lockless_held: false,
            events: KBox::new(Events::default(), GFP_KERNEL_ACCOUNT)?,
            peers_gen: 0,
        };
        st.publish_tx();
        Ok(st)
    }

    /// The slots' cells, which `Ri2n::slots` publishes to transmit and receive:
    /// they stay where they are until a new table replaces them.
    pub(crate) fn slots_ptr(&self) -> *const Slots {
        &*self.slots
    }

    /// Pulls the sweep to `at` if it is armed for later; returns whether
    /// it was.
    fn pull_sweep(&self, at: Instant) -> bool {
        self.slots.sweep_at.fetch_min(at.0, Ordering::Relaxed) > at.0
    }

    /// Tells transmit what it reads without the lock: carrier, whether
    /// unicast may go lockless (not one-switch mode, no key change under
    /// way), and when an idle link is level again.
    fn publish_tx(&self) {
        self.slots.carrier.store(self.carrier, Ordering::Relaxed);
        self.slots.carrier_told.store(0, Ordering::Relaxed);
        self.slots.params.set(&self.params);
        let lockless = !self.lockless_held && !self.params.one_switch();
        self.slots.lockless.store(lockless, Ordering::Release);
        self.slots
            .rx_lockless
            .store(lockless && self.up, Ordering::Release);
        self.slots
            .idle_ns
            .store(self.params.level_after().0, Ordering::Relaxed);
        self.slots
            .lossy_every_ns
            .store(loss_probe_every(self.lossy_peers).0, Ordering::Relaxed);
    }

    // --- One-switch mode -------------------------------------------------------

    /// Whether frames leave each slave with its own MAC (`one_switch`).
    pub(crate) fn one_switch(&self) -> bool {
        self.params.one_switch()
    }

    /// Slave `l`'s own MAC (zero if there is none).
    pub(crate) fn slave_mac(&self, l: usize) -> Mac {
        self.slaves[l].as_ref().map_or([0; 6], |s| s.dev.addr())
    }

    // --- Keys ----------------------------------------------------------------

    /// The keys (to seal with, and to verify).
    pub(crate) fn keys(&self) -> &Keys {
        &self.keys
    }

    /// Seals with `key` from now on (`None`: no key, no seal); the old key
    /// stays accepted (core/auth.rs, rotation).
    pub(crate) fn seal_with(&mut self, key: Option<Key>) {
        self.keys.seal_with(key);
        self.publish_tx();
    }

    /// Accepts `key` besides the sealing key.
    pub(crate) fn accept_key(&mut self, key: Option<Key>) {
        self.keys.accept(key);
        self.publish_tx();
    }

    /// While `held`, unicast goes the locked way (`set_key`: held, a grace
    /// period, then the keys change, here and in `Ri2n::offload_keys`,
    /// where the lockless way reads them).
    pub(crate) fn hold_lockless(&mut self, held: bool) {
        self.lockless_held = held;
        self.publish_tx();
    }

    /// The next sealed heartbeat's counter.
    pub(crate) fn next_hb_counter(&mut self) -> u64 {
        self.hb_counter.next(crate::net::ktime_ns() / 1000)
    }

    // --- Reading -------------------------------------------------------------

    pub(crate) fn params(&self) -> &Params {
        &self.params
    }

    /// Counts a round of the state lock (`Ri2n::lock_state`).
    #[inline]
    pub(crate) fn count_round(&mut self, contended: bool) {
        self.stats.lock_rounds.add(1);
        self.stats.lock_contended.add(u64::from(contended));
    }

    /// The counters, which `Ri2n::stats` shares to be read without the
    /// lock.
    pub(crate) fn stats(&self) -> &Arc<DevStats> {
        &self.stats
    }

    /// The counters, with `counted`: the packets and bytes transmit and
    /// receive counted per CPU without the lock (`NetDevice::counted`),
    /// and what receive counted per link without it.
    pub(crate) fn stats_with(&self, counted: Counted) -> DevCounts {
        let mut s = self.stats.counts();
        s.tx_packets += counted.tx_packets;
        s.tx_bytes += counted.tx_bytes;
        s.rx_packets += counted.rx_packets;
        s.rx_bytes += counted.rx_bytes;
        s.tx_peer_contended += self.slots.contended.0.load(Ordering::Relaxed);
        for r in &self.slots.link_rx {
            s.rx_merged += r.merged.load(Ordering::Relaxed);
            s.rx_merged_frames += r.merged_frames.load(Ordering::Relaxed);
        }
        s
    }

    /// Link `l`'s counters, with what receive counted without the lock.
    pub(crate) fn link_stats(&self, l: usize) -> LinkStats {
        let mut s = self.link_stats[l];
        s.rx_packets += self.slots.link_rx[l].packets.load(Ordering::Relaxed);
        s
    }

    pub(crate) fn is_up(&self) -> bool {
        self.up
    }

    pub(crate) fn slave(&self, l: usize) -> Option<&Slave> {
        self.slaves.get(l).and_then(|s| s.as_ref())
    }

    /// Present slaves, as (link, slave).
    pub(crate) fn slaves(&self) -> impl Iterator<Item = (usize, &Slave)> {
        self.slaves
            .iter()
            .enumerate()
            .filter_map(|(l, s)| s.as_ref().map(|s| (l, s)))
    }

    pub(crate) fn nslaves(&self) -> usize {
        self.slaves.iter().flatten().count()
    }

    /// Links: one past the highest present slave's index.
    fn nlinks(&self) -> usize {
        self.slaves
            .iter()
            .rposition(|s| s.is_some())
            .map_or(0, |l| l + 1)
    }

    /// The link index of `dev`, if it is one of our slaves.
    pub(crate) fn link_of(&self, dev: &Device) -> Option<usize> {
        self.slaves
            .iter()
            .position(|s| s.as_ref().is_some_and(|s| s.dev.as_raw() == dev.as_raw()))
    }

    pub(crate) fn carrier(&self) -> u8 {
        self.carrier
    }

    pub(crate) fn carrier_age(&self, l: usize, now: Instant) -> Duration {
        now.since(self.carrier_changed[l])
    }

    /// Counted references to the present slaves (to act on them unlocked).
    pub(crate) fn slave_refs(&self) -> [Option<ARef<Device>>; MAX_LINKS] {
        core::array::from_fn(|l| self.slaves[l].as_ref().map(|s| s.dev.clone()))
    }

    pub(crate) fn npeers(&self) -> usize {
        self.table.len()
    }

    /// Peers with a link lossy toward them (at the last sweep), peers that
    /// probe us (a link of theirs lossy toward us), and the `probe_shift`
    /// our heartbeats carry.
    pub(crate) fn loss_probes(&self, now: Instant) -> (usize, usize, u8) {
        let probing = self.probing.count(now);
        (
            self.lossy_peers,
            probing,
            node_probe_shift(self.lossy_peers, probing),
        )
    }

    /// The table's capacity and the reorder buffers allocated, of their
    /// most, and the bytes held.
    pub(crate) fn memory(&self) -> (usize, usize, usize, usize) {
        (
            self.table.capacity(),
            self.bufs.total(),
            self.bufs.max(),
            self.slots.held.get(),
        )
    }

    /// Calls `f` with every peer in table slots `from..from + slots`
    /// (slot, MAC, transmit side, state), its cell locked, while `f`
    /// returns true; returns the slot to go on from, or `None` past the
    /// last. Readers of thousands of peers go in chunks, the lock dropped
    /// in between, each chunk bounded in slots visited as in peers copied,
    /// however sparse the table.
    pub(crate) fn peers_from(
        &self,
        from: usize,
        slots: usize,
        mut f: impl FnMut(usize, &Mac, &PeerTx, &Peer) -> bool,
    ) -> Option<usize> {
        let to = from.saturating_add(slots);
        for (slot, mac, ()) in self.table.iter_between(from, to) {
            let Some(cell) = self.slots.cell(slot) else {
                continue;
            };
            let mut c = cell.lock();
            let Some((tx, p)) = c.peer_for(mac) else {
                continue;
            };
            if !f(slot, mac, tx, p) {
                return Some(slot + 1);
            }
        }
        (to < self.table.capacity()).then_some(to)
    }

    /// Whether an endpoint or a slave's carrier changed state since the
    /// last call.
    pub(crate) fn take_ports_changed(&mut self) -> bool {
        core::mem::take(&mut self.ports_changed)
    }

    /// The oldest transition waiting to be sent, if any.
    pub(crate) fn pop_event(&mut self) -> Option<Event> {
        self.events.pop()
    }

    /// Whether transitions wait to be sent.
    pub(crate) fn events_pending(&self) -> bool {
        !self.events.is_empty()
    }

    /// Transitions dropped so far, over the rate or the queue.
    pub(crate) fn events_dropped(&self) -> u64 {
        self.events.dropped()
    }

    /// See `peers_gen`.
    pub(crate) fn peers_gen(&self) -> u32 {
        self.peers_gen
    }

    /// The slaves whose lower state changed since last told, with the new
    /// one (link up, transmit enabled), which counts as told: a port is up
    /// with carrier, and enabled while no peer in the table has its link
    /// out of use (as `link_peer_counts` counts them). One pass over the
    /// peers.
    pub(crate) fn ports_to_tell(&mut self) -> [Option<(ARef<Device>, bool, bool)>; MAX_LINKS] {
        let mut failed = 0u8;
        let links = (0..MAX_LINKS)
            .filter(|&l| self.slaves[l].is_some())
            .fold(0u8, |m, l| m | 1 << l);
        self.peers_from(0, usize::MAX, |_, _, _, p| {
            failed |= links & !p.det.usable();
            failed != links
        });
        core::array::from_fn(|l| {
            let s = self.slaves[l].as_ref()?;
            let up = self.carrier & (1 << l) != 0;
            let tx = up && failed & (1 << l) == 0;
            let now = 0x80 | u8::from(up) | u8::from(tx) << 1;
            if self.ports_told[l] == now {
                return None;
            }
            self.ports_told[l] = now;
            Some((s.dev.clone(), up, tx))
        })
    }

    /// Peers usable and failed on link `l` (for `ip -d link`).
    pub(crate) fn link_peer_counts(&self, l: usize) -> (u32, u32) {
        let (mut up, mut failed) = (0, 0);
        self.peers_from(0, usize::MAX, |_, _, _, p| {
            if p.det.usable() & (1 << l) != 0 {
                up += 1;
            } else {
                failed += 1;
            }
            true
        });
        (up, failed)
    }

    // --- Configuration -------------------------------------------------------

    /// Replaces the parameters with `next`, a valid set whose `peer_mem`
    /// is this table's (`set_peer_mem` changes that).
    pub(crate) fn replace_params(&mut self, next: Params) {
        debug_assert_eq!(next.peer_mem(), self.params.peer_mem());
        self.params = next;
        self.publish_tx();
    }

    /// Sets `peer_mem` to `v` with `table` and `bufs` made for it, while
    /// the device is down: every peer is forgotten (their packets, none
    /// while down, into `garbage`).
    /// Returns the old table (or, refused, `new`), for the caller to free
    /// after unlocking, once transmit sees the new one's `slots_ptr` and a
    /// grace period passed.
    pub(crate) fn set_peer_mem(
        &mut self,
        v: u32,
        mut new: NewTable,
        garbage: &mut SkbList,
    ) -> (Result, NewTable) {
        if self.up {
            return (Err(EBUSY), new);
        }
        if self.params.set(Param::PeerMem, v).is_err() {
            return (Err(EINVAL), new);
        }
        self.drain_all(garbage);
        // Every peer goes with the old table.
        let t = now();
        for (_, mac, ()) in self.table.iter_from(0) {
            self.events
                .push(Event::of_peer(Reason::PeerForgotten, mac, t), t);
        }
        self.peers_gen = self.peers_gen.wrapping_add(1);
        core::mem::swap(&mut self.table, &mut new.table);
        core::mem::swap(&mut self.claims, &mut new.claims);
        core::mem::swap(&mut self.bufs, &mut new.bufs);
        core::mem::swap(&mut self.slots, &mut new.slots);
        self.stats
            .tx_peer_contended
            .add(new.slots.contended.0.load(Ordering::Relaxed));
        for (l, r) in new.slots.link_rx.iter().enumerate() {
            self.link_stats[l].rx_packets += r.packets.load(Ordering::Relaxed);
            self.stats.rx_merged.add(r.merged.load(Ordering::Relaxed));
            self.stats
                .rx_merged_frames
                .add(r.merged_frames.load(Ordering::Relaxed));
        }
        self.publish_tx();
        // The new table is empty, and so are its lists and records.
        core::mem::swap(&mut self.work, &mut new.work);
        core::mem::swap(&mut self.records, &mut new.records);
        self.slots.held.clear();
        (Ok(()), new)
    }

    /// Frees every held packet (into `garbage`), returning the buffers.
    fn drain_all(&mut self, garbage: &mut SkbList) {
        let held = &self.slots.held;
        for (slot, _, ()) in self.table.iter() {
            let Some(cell) = self.slots.cell(slot) else {
                continue;
            };
            let mut c = cell.lock();
            let Some((_, p)) = c.both() else { continue };
            p.rx.drain(&mut self.bufs, &mut |s| {
                held.sub(s.truesize() as usize);
                garbage.push(s)
            });
        }
    }

    /// Records that the MAC address is chosen; returns whether it was.
    pub(crate) fn choose_mac(&mut self) -> bool {
        core::mem::replace(&mut self.mac_chosen, true)
    }

    /// ri2n0 goes up or down. Down frees every held packet (into `garbage`).
    pub(crate) fn set_up(&mut self, up: bool, garbage: &mut SkbList) {
        self.up = up;
        // Receive re-reads it under a peer's cell: down, the windows
        // drained below stay empty.
        self.publish_tx();
        if !up {
            self.drain_all(garbage);
        }
    }
}
