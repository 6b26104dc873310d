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
use crate::net::gro::{Claim, GroCells};
use crate::net::skb::{Skb, SkbList};
use crate::net::{Mac, MacFmt};
use crate::proto::auth::{HbCounter, Key, Keys, Msg};
use crate::proto::claims::{self, buckets_for as claims_buckets, Claims, LinkMacs};
use crate::proto::detector::{
    loss_probe_every, node_probe_shift, Detector, ProbingPeers, Transitions,
};
use crate::proto::header::{Counts, Seal};
pub(crate) use crate::proto::node::sweep_period;
use crate::proto::node::{sweep_at, Arrival, Frame, Fresh, HeartbeatOrders, Left};
use crate::proto::params::{Param, Params};
use crate::proto::peers::{age_limit, idle_limit, SlotQueue, SweepNeed};
use crate::proto::phases::Phases;
use crate::proto::seq::Seq;
use crate::proto::time::{Duration, Instant};
use crate::proto::tx::PeerTx;
use crate::proto::window::{span_of, Buffers};
use crate::proto::MAX_LINKS;
use crate::ri2n_peer::{Buf, BufPool, CellMacs, Held, Peer, PeerCell, Slots, Table};
use crate::ri2n_txq::LinkQueue;
use core::sync::atomic::Ordering;
use kernel::alloc::KVVec;
use kernel::prelude::*;
use kernel::sync::aref::ARef;
use kernel::sync::Arc;

/// Device counters, shown by `ip -s link`, `ethtool -S` and procfs.
#[derive(Default, Clone, Copy)]
pub(crate) struct DevStats {
    pub(crate) rx_packets: u64,
    pub(crate) rx_bytes: u64,
    pub(crate) tx_packets: u64,
    pub(crate) tx_bytes: u64,
    /// Frames dropped on receive, for any of the reasons below or while down.
    pub(crate) rx_dropped: u64,
    /// Packets dropped on transmit (no usable link, no memory, no peer room).
    pub(crate) tx_dropped: u64,
    /// Malformed RI2N frames (short, bad version, unknown kind).
    pub(crate) rx_malformed: u64,
    /// RI2N frames addressed to another node.
    pub(crate) rx_not_for_us: u64,
    /// Frames for another of ri2n0's addresses (macvlan) or, promiscuous,
    /// for another host: passed up unordered.
    pub(crate) rx_unordered: u64,
    /// Second copies of broadcasts (sent on every link), dropped.
    pub(crate) rx_bcast_copies: u64,
    /// Duplicates of held packets, dropped.
    pub(crate) rx_duplicates: u64,
    /// Transmit drops because no link to the peer was usable.
    pub(crate) tx_no_link: u64,
    /// Transmit drops because a link's queue was full.
    pub(crate) tx_queue_full: u64,
    /// Transmits that re-entered ri2n from its own slave transmit (a tc
    /// mirred or redirect loop), dropped.
    pub(crate) tx_loop: u64,
    /// New peers (MACs first heard from or sent to), admitted.
    pub(crate) peers_new: u64,
    /// New peers refused: `peer_mem` is spent on live peers, or no memory.
    pub(crate) peers_refused: u64,
    /// Peers whose place a newcomer took (never heard in a heartbeat, or
    /// silent for three HBSPANs) when the table was full.
    pub(crate) peers_evicted: u64,
    /// Peers forgotten after eight silent HBSPANs.
    pub(crate) peers_aged: u64,
    /// Packets that would have waited but went up at once: no reorder
    /// buffer was left in `peer_mem`.
    pub(crate) rx_nobuf: u64,
    /// Windows flushed because the held packets reached `held_mem`.
    pub(crate) rx_held_full: u64,
    /// Heartbeats sent.
    pub(crate) hb_sent: u64,
    /// Frames refused before they touched any state: a tag that no key
    /// verifies, a sealed frame without a key here, or an unsealed one with
    /// a key (see core/auth.rs).
    pub(crate) rx_auth_fail: u64,
    /// Verified frames refused as replays: a data number already handed
    /// up, a broadcast number older than the filter, a heartbeat counter
    /// not above the last, an epoch older than the peer's.
    pub(crate) rx_replays: u64,
    /// Frames from a peer in the other mode (`one_switch`), dropped.
    pub(crate) rx_mode_mismatch: u64,
    /// One-switch mode: slave MACs learned for a peer that another peer
    /// held (the later claim wins).
    pub(crate) slave_mac_taken: u64,
    /// Packets a slave's GRO merged from frames that followed one another
    /// on its link (`rx_gro`), and the frames in them.
    pub(crate) rx_merged: u64,
    pub(crate) rx_merged_frames: u64,
    /// Times the state lock was taken, and of those, times another CPU
    /// held it first: what the state lock costs the data path.
    pub(crate) lock_rounds: u64,
    pub(crate) lock_contended: u64,
    /// Lockless transmits that found their peer's own lock held: by
    /// another CPU sending to that peer, or by receive or a timer on it
    /// (never by a sender to another peer).
    pub(crate) tx_peer_contended: u64,
    /// Runs of the sweep (ri2n_hb.rs): at its deadlines, not a period.
    pub(crate) sweeps: u64,
}

/// Per-link counters (frames sent: `LinkQueue::tx_packets`).
#[derive(Default, Clone, Copy)]
pub(crate) struct LinkStats {
    pub(crate) rx_packets: u64,
    pub(crate) tx_dropped: u64,
}

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

/// Marks of a table slot (`State::marks`).
const ON_SWEEP: u8 = 1;
const ON_HB_QUEUE: u8 = 2;
const ON_SLOW: u8 = 4;

/// Most peers the sweep ages out per run.
const AGE_PER_SWEEP: usize = 64;

/// Whole milliseconds from `t` to `at`, rounded up (0 if past).
pub(crate) fn ms_until(at: Instant, t: Instant) -> u32 {
    at.since(t).0.div_ceil(1_000_000).min(u64::from(u32::MAX)) as u32
}

/// What transmit decided for a unicast packet.
pub(crate) enum TxRoute {
    /// Send on link `link` with number `seq`; in one-switch mode, `to` the
    /// peer's slave MAC on it (zero if not learned yet) from `from`, our
    /// slave's.
    Send {
        link: usize,
        seq: Seq,
        to: Mac,
        from: Mac,
    },
    /// No usable link to the peer (counted).
    NoLink,
}

/// A frame receive hands the state.
pub(crate) struct RxIn {
    /// Our link it arrived on.
    pub(crate) link: usize,
    /// The peer's ri2n MAC.
    pub(crate) src: Mac,
    /// One-switch mode: what the wire said of it.
    pub(crate) wire: Option<Wire>,
    pub(crate) kind: Frame,
    pub(crate) sealed: Option<Sealed>,
    /// The packet (none for a frame only counted).
    pub(crate) skb: Option<Skb>,
}

/// Where receive's packets go: handed up in order, consumed, or dropped.
pub(crate) struct RxOut<'a> {
    pub(crate) up: &'a mut SkbList,
    pub(crate) done: &'a mut SkbList,
    pub(crate) garbage: &'a mut SkbList,
}

/// A frame [`State::rx_admit`] let through, for [`State::rx_take`].
struct Admitted {
    link: usize,
    slot: usize,
    /// It counts on `link` (not a flooded copy).
    credit: bool,
    /// The frames it stands for.
    frames: u32,
    /// Sealed: its seal's epoch.
    epoch: Option<u64>,
    /// Sealed data, counted in `Slots::sealed_judged` until its cell is held.
    judged: bool,
}

impl Admitted {
    /// Ends the count `judged` took in `Slots::sealed_judged`.
    fn judged_done(judged: bool, slots: &Slots) {
        if judged {
            slots.sealed_judged.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

/// Counts and disposes of what the engine left of a received packet
/// (a window release went up already).
fn rx_left(
    left: Left<Skb>,
    stats: &mut DevStats,
    held: &Held,
    done: &mut SkbList,
    garbage: &mut SkbList,
) {
    match left {
        Left::Nothing | Left::Up(_) => {}
        Left::Copy(s) => {
            stats.rx_bcast_copies += 1;
            garbage.push(s);
        }
        Left::Duplicate(s) => {
            held.sub(s.truesize() as usize);
            stats.rx_duplicates += 1;
            stats.rx_dropped += 1;
            garbage.push(s);
        }
        Left::Replay(s) => {
            held.sub(s.truesize() as usize);
            stats.rx_replays += 1;
            stats.rx_dropped += 1;
            garbage.push(s);
        }
        Left::Consumed(s) => done.push(s),
    }
}

/// One-switch mode: what the wire said of a frame.
#[derive(Clone, Copy)]
pub(crate) struct Wire {
    /// Its source: the peer's slave MAC.
    pub(crate) src: Mac,
    /// The peer's link it left on (the origin's index).
    pub(crate) link: usize,
    /// It was addressed to the receiving slave's own MAC (not flooded).
    pub(crate) to_port: bool,
}

/// A sealed frame's seal and the bytes its tag covers.
pub(crate) struct Sealed {
    pub(crate) seal: Seal,
    pub(crate) msg: Msg,
}

/// What receive must do after the lock is dropped.
#[derive(Default)]
pub(crate) struct RxAfter<'g> {
    /// Send queued heartbeats now (probe answers, news of a failure).
    pub(crate) kick: bool,
    /// The peer's GRO cell, claimed for the caller to hand `up` through
    /// at once ([`hand_up`]); `None`: `up` is empty, or queued.
    pub(crate) claim: Option<Claim<'g>>,
    /// The sweep is due sooner than its timer is armed for: milliseconds
    /// from now, for `Timer::reduce_ms`.
    pub(crate) pull_ms: Option<u32>,
}

/// Hands what the window of the peer in `slot` released (`up`) to its GRO
/// cell, the caller holding the peer's cell, so that the peer's packets go
/// up in the order released, whichever CPU released them. Packets that all
/// end any run GRO could merge (`ends_runs`: short ones, the last of a
/// message) go up at once if the GRO cell is idle: with nothing held to
/// join and nothing to follow, its NAPI round would be a cost on every
/// message for nothing, a round trip's cost. Then the claim is
/// returned, for the caller to deliver `up` through after dropping its
/// locks (the claim keeps the cell's poll off until they are up), and `up`
/// is left as it is.
pub(crate) fn hand_up<'g>(
    gro: &'g GroCells,
    slot: usize,
    up: &mut SkbList,
    ends_runs: bool,
) -> Option<Claim<'g>> {
    if up.is_empty() {
        return None;
    }
    let i = cell_of(slot);
    let claim = if ends_runs { gro.claim(i) } else { None };
    if claim.is_none() {
        gro.queue(i, core::mem::take(up));
    }
    claim
}

/// The GRO cell that takes what the peer in `slot` releases: one per peer,
/// so that its packets go up in the order released, whichever CPU
/// released them (net/gro.rs); peers spread over the cells.
pub(crate) fn cell_of(slot: usize) -> usize {
    slot
}

/// Whether `s` may skip an idle GRO cell (ri2n_rx.rs) at little or no
/// cost in merging: a TCP segment whose flags make GRO flush the run it
/// ends (PSH, as the last segment of a message has; URG, RST, SYN, FIN),
/// or a short packet (at most `short_max` bytes, not GSO). Order is the
/// claim's business, not this: an idle cell holds nothing of the peer.
/// (A short TCP segment without those flags, rare, would be held by GRO
/// and could take later ones of its size: that merge is lost.)
pub(crate) fn ends_gro_run(s: &mut Skb, short_max: u32) -> bool {
    const FLUSHING: u8 = 0x01 | 0x02 | 0x04 | 0x08 | 0x20;
    (!s.is_gso() && s.len() <= short_max) || s.tcp_flags().is_some_and(|f| f & FLUSHING != 0)
}

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
    /// Per table slot: `ON_SWEEP`, `ON_HB_QUEUE`. Kept when a slot's peer
    /// changes, so that a slot is never on a list twice.
    marks: KVVec<u8>,
    /// Slots the sweep visits: peers that hold packets, carry data, or
    /// have an endpoint out of use (`Peer::needs_sweep`).
    on_sweep: KVVec<u32>,
    /// Slots the sweep visits every HBSPAN / 8: peers with an endpoint out
    /// of use and nothing else to do.
    on_slow: KVVec<u32>,
    /// When `on_slow` was last visited.
    slow_swept: Instant,
    /// Slots with heartbeats pending, in order.
    hb_queue: SlotQueue<KVVec<u32>>,
    /// Next number for our broadcasts.
    bcast_seq: Seq,
    /// The heartbeat timer's phases: which the next tick serves, and the
    /// peers in each.
    hb_phases: Phases,
    /// Peers with a lossy link at the last sweep (they set how often each
    /// is probed: `loss_probe_every`).
    lossy_peers: usize,
    /// The peers that probe us (a link of theirs lossy toward us).
    probing: ProbingPeers,
    /// The MAC address was set by the administrator or derived from the
    /// first slave: it is no longer the random one of a new device.
    mac_chosen: bool,
    stats: DevStats,
    link_stats: [LinkStats; MAX_LINKS],
    /// The shared keys (none: frames unsealed, the segment trusted).
    keys: Keys,
    /// Our sealed heartbeats' counter.
    hb_counter: HbCounter,
    /// Unicast takes the locked way whatever else says (a key is coming).
    lockless_held: bool,
}

fn now() -> Instant {
    Instant(crate::net::ktime_ns())
}

fn table_key() -> u64 {
    (u64::from(crate::net::random_u32()) << 32) | u64::from(crate::net::random_u32())
}

/// Puts `slot` on `list` unless its `mark` says it is there. Each list has
/// room for every slot, so this never allocates.
fn enqueue(marks: &mut KVVec<u8>, list: &mut impl SlotList, mark: u8, slot: usize) {
    if marks[slot] & mark == 0 && list.add(slot as u32) {
        marks[slot] |= mark;
    }
}

/// The two kinds of work list: the sweep's (any order) and the heartbeat
/// queue (first in, first out).
trait SlotList {
    fn add(&mut self, slot: u32) -> bool;
}

impl SlotList for KVVec<u32> {
    fn add(&mut self, slot: u32) -> bool {
        self.push_within_capacity(slot).is_ok()
    }
}

impl SlotList for SlotQueue<KVVec<u32>> {
    fn add(&mut self, slot: u32) -> bool {
        self.push(slot)
    }
}

/// Per-slot marks, the sweep's two lists and the heartbeat queue.
type WorkLists = (KVVec<u8>, KVVec<u32>, KVVec<u32>, SlotQueue<KVVec<u32>>);

/// Per-slot marks and the two work lists for a table of `n` slots.
fn work_lists(n: usize) -> Result<WorkLists> {
    Ok((
        KVVec::from_elem(0, n, GFP_KERNEL)?,
        KVVec::with_capacity(n, GFP_KERNEL)?,
        KVVec::with_capacity(n, GFP_KERNEL)?,
        SlotQueue::new(KVVec::from_elem(0, n, GFP_KERNEL)?),
    ))
}

/// The slave MAC claims of a table of `slots` slots (core/claims.rs).
fn new_claims(slots: usize) -> Result<Claims<KVVec<u32>>> {
    Ok(Claims::new(
        KVVec::from_elem(0, claims_buckets(slots), GFP_KERNEL)?,
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
    marks: KVVec<u8>,
    on_sweep: KVVec<u32>,
    on_slow: KVVec<u32>,
    hb_queue: SlotQueue<KVVec<u32>>,
}

impl NewTable {
    /// For a budget of `bytes`; EINVAL if it holds less than one peer.
    pub(crate) fn new(bytes: usize) -> Result<NewTable> {
        let (table, bufs) = crate::ri2n_peer::new_table(bytes, table_key())?;
        let claims = new_claims(table.capacity())?;
        let slots = Slots::new(table.capacity(), table_key())?;
        let (marks, on_sweep, on_slow, hb_queue) = work_lists(table.capacity())?;
        Ok(NewTable {
            table,
            claims,
            bufs,
            slots,
            marks,
            on_sweep,
            on_slow,
            hb_queue,
        })
    }
}

impl State {
    /// A device with no slave and no peer, with parameters `params`.
    pub(crate) fn new(params: Params) -> Result<State> {
        let (table, bufs) = crate::ri2n_peer::new_table(params.peer_mem(), table_key())?;
        let claims = new_claims(table.capacity())?;
        let slots = Slots::new(table.capacity(), table_key())?;
        let (marks, on_sweep, on_slow, hb_queue) = work_lists(table.capacity())?;
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
            marks,
            on_sweep,
            on_slow,
            slow_swept: Instant(0),
            hb_queue,
            bcast_seq: Seq(crate::net::random_u32()),
            hb_phases: Phases::default(),
            lossy_peers: 0,
            probing: ProbingPeers::default(),
            mac_chosen: false,
            stats: DevStats::default(),
            link_stats: [LinkStats::default(); MAX_LINKS],
            keys: Keys::default(),
            hb_counter: HbCounter::default(),
            lockless_held: false,
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

    /// Whether a frame from `src` may be looked at: sealed with a key we
    /// accept when we have one, unsealed when we have none. A refused
    /// frame is counted (and, now and then, logged) and nothing else.
    pub(crate) fn verify(&mut self, dev_name: &str, src: &Mac, sealed: Option<&Sealed>) -> bool {
        let why = match (sealed, self.keys.on()) {
            (None, false) => return true,
            (Some(s), true) if self.keys.verify(&s.msg, &s.seal.tag) => return true,
            (Some(_), true) => "its tag does not verify",
            (Some(_), false) => "it is sealed and this device has no key",
            (None, true) => "it is not sealed and this device has a key",
        };
        self.stats.rx_auth_fail += 1;
        self.stats.rx_dropped += 1;
        if crate::net::ratelimit() {
            pr_warn!(
                "{}: dropped a frame from {}: {}\n",
                dev_name,
                MacFmt(src),
                why
            );
        }
        false
    }

    // --- Reading -------------------------------------------------------------

    pub(crate) fn params(&self) -> &Params {
        &self.params
    }

    /// Counts a round of the state lock (`Ri2n::lock_state`).
    #[inline]
    pub(crate) fn count_round(&mut self, contended: bool) {
        self.stats.lock_rounds += 1;
        self.stats.lock_contended += u64::from(contended);
    }

    /// The counters, without what transmit counts per CPU (`ip -s link`
    /// adds those itself).
    pub(crate) fn stats(&self) -> &DevStats {
        &self.stats
    }

    /// The counters, with `counted`: the packets and bytes transmit and
    /// receive counted per CPU without the lock (`NetDevice::counted`),
    /// and what receive counted per link without it.
    pub(crate) fn stats_with(&self, counted: Counted) -> DevStats {
        let mut s = self.stats;
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

    /// Calls `f` with every peer from table slot `from` on (slot, MAC,
    /// transmit side, state), its cell locked, while `f` returns true
    /// (procfs reads them in chunks, dropping the lock in between).
    pub(crate) fn peers_from(
        &self,
        from: usize,
        mut f: impl FnMut(usize, &Mac, &PeerTx, &Peer) -> bool,
    ) {
        for (slot, mac, ()) in self.table.iter_from(from) {
            let Some(cell) = self.slots.cell(slot) else {
                continue;
            };
            let mut c = cell.lock();
            let Some((tx, p)) = c.peer_for(mac) else {
                continue;
            };
            if !f(slot, mac, tx, p) {
                return;
            }
        }
    }

    /// Peers usable and failed on link `l` (for `ip -d link`).
    pub(crate) fn link_peer_counts(&self, l: usize) -> (u32, u32) {
        let (mut up, mut failed) = (0, 0);
        self.peers_from(0, |_, _, _, p| {
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

    /// Sets a parameter if the whole set stays valid (`peer_mem`: see
    /// [`State::set_peer_mem`]).
    pub(crate) fn set_param(
        &mut self,
        p: Param,
        v: u32,
    ) -> core::result::Result<(), crate::proto::params::ParamError> {
        self.params.set(p, v)?;
        self.publish_tx();
        Ok(())
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
        core::mem::swap(&mut self.table, &mut new.table);
        // The new table is empty.
        self.hb_phases.clear();
        core::mem::swap(&mut self.claims, &mut new.claims);
        core::mem::swap(&mut self.bufs, &mut new.bufs);
        core::mem::swap(&mut self.slots, &mut new.slots);
        self.stats.tx_peer_contended += new.slots.contended.0.load(Ordering::Relaxed);
        for (l, r) in new.slots.link_rx.iter().enumerate() {
            self.link_stats[l].rx_packets += r.packets.load(Ordering::Relaxed);
            self.stats.rx_merged += r.merged.load(Ordering::Relaxed);
            self.stats.rx_merged_frames += r.merged_frames.load(Ordering::Relaxed);
        }
        self.publish_tx();
        core::mem::swap(&mut self.marks, &mut new.marks);
        core::mem::swap(&mut self.on_sweep, &mut new.on_sweep);
        core::mem::swap(&mut self.on_slow, &mut new.on_slow);
        core::mem::swap(&mut self.hb_queue, &mut new.hb_queue);
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

    /// A free link index for a new slave.
    pub(crate) fn free_link(&self) -> Option<usize> {
        self.slaves.iter().position(|s| s.is_none())
    }

    /// Adds `slave` as link `l` (free); `carrier` says whether it is up.
    pub(crate) fn add_slave(&mut self, l: usize, slave: Slave, carrier: bool) {
        self.slaves[l] = Some(slave);
        self.link_stats[l] = LinkStats::default();
        let r = &self.slots.link_rx[l];
        let merged = r.merged.swap(0, Ordering::Relaxed);
        let merged_frames = r.merged_frames.swap(0, Ordering::Relaxed);
        r.packets.store(0, Ordering::Relaxed);
        // The device's merge counts stay.
        self.stats.rx_merged += merged;
        self.stats.rx_merged_frames += merged_frames;
        self.carrier_changed[l] = now();
        self.set_links(1 << l);
        if carrier {
            self.carrier_changed_to(l, true);
        }
    }

    /// Every peer's endpoints over the links as they are now, those of
    /// `vacated` afresh.
    fn set_links(&mut self, vacated: u8) {
        let nlinks = self.nlinks();
        let t = now();
        for s in 0..self.table.capacity() {
            let Some(cell) = self.slots.cell(s).filter(|_| self.table.get(s).is_some()) else {
                continue;
            };
            let mut c = cell.lock();
            let Some((tx, p)) = c.both() else { continue };
            // What went out before is the old links' count.
            tx.fold(p);
            p.det.set_links(nlinks, vacated, t);
            tx.publish(&p.det);
        }
    }

    /// Whether link `l`'s slave has our promiscuity count.
    pub(crate) fn slave_promisc(&self, l: usize) -> bool {
        self.slaves[l].as_ref().is_some_and(|s| s.promisc)
    }

    /// Records whether link `l`'s slave has our promiscuity count; true if
    /// that changed.
    pub(crate) fn set_slave_promisc(&mut self, l: usize, on: bool) -> bool {
        match self.slaves[l].as_mut() {
            Some(s) if s.promisc != on => {
                s.promisc = on;
                true
            }
            _ => false,
        }
    }

    /// Removes link `l`'s slave (its queue is the caller's to flush).
    pub(crate) fn remove_slave(&mut self, l: usize) -> Option<Slave> {
        let s = self.slaves[l].take()?;
        if self.carrier & (1 << l) != 0 {
            self.carrier_changed_to(l, false);
        }
        self.set_links(1 << l);
        Some(s)
    }

    /// Link `l`'s carrier (slave up with carrier) became `up`: every peer is
    /// told on the links left, and a link that came back is probed.
    /// Returns false if nothing changed.
    pub(crate) fn carrier_changed_to(&mut self, l: usize, up: bool) -> bool {
        let bit = 1u8 << l;
        if (self.carrier & bit != 0) == up {
            return false;
        }
        self.carrier_changed[l] = now();
        if up {
            self.carrier |= bit;
        } else {
            self.carrier &= !bit;
        }
        let carrier = self.carrier;
        self.publish_tx();
        for s in 0..self.table.capacity() {
            // Known peers only (heard in a heartbeat), as the periodic ones.
            let known = self.table.get(s).is_some() && self.table.is_known(s);
            let Some(cell) = self.slots.cell(s).filter(|_| known) else {
                continue;
            };
            let mut c = cell.lock();
            let Some((_, p)) = c.both() else { continue };
            p.carrier_changed(carrier, l, up);
            drop(c);
            if carrier != 0 {
                enqueue(&mut self.marks, &mut self.hb_queue, ON_HB_QUEUE, s);
            }
        }
        true
    }

    // --- Transmit ------------------------------------------------------------

    /// A packet came from our own slave's egress (a tc mirred or redirect
    /// back into ri2n0): sending it would loop forever, so it is dropped.
    pub(crate) fn tx_looped(&mut self) {
        self.stats.tx_loop += 1;
        self.stats.tx_dropped += 1;
    }

    /// The slot of the peer `dst` to send to, created if new (a peer
    /// evicted for it leaves its held packets in `garbage`), and noted in
    /// the lookup transmit reads without this lock. `None` (a drop,
    /// counted) if there is no room or memory.
    pub(crate) fn tx_peer(&mut self, dst: &Mac, garbage: &mut SkbList) -> Option<usize> {
        let Some(slot) = self.peer_slot(dst, None, now(), garbage) else {
            self.stats.tx_dropped += 1;
            return None;
        };
        self.slots.note(dst, slot);
        Some(slot)
    }

    /// Picks link and number for a unicast packet of `len` bytes (`segs`
    /// frames) to the peer in `slot`, whose cell `c` the caller
    /// locked: `first` as `RoundRobin::pick_block` takes it, `None` for the
    /// frames of its block after it, under the same lock. Counts the
    /// packet, or the drop. (The way without this lock: ri2n_tx.rs,
    /// `xmit_lockless`.)
    /// `stale` is set if a link's slave lost its carrier since the sweep
    /// last looked: it is left out, and the caller wakes the sweep.
    pub(crate) fn tx_route(
        &mut self,
        slot: usize,
        c: &mut PeerCell,
        len: u32,
        segs: u32,
        first: Option<(u32, u32)>,
        stale: &mut bool,
    ) -> TxRoute {
        let t = now();
        let (mut queues_ok, mut live) = (0u8, 0u8);
        for (l, s) in self.slaves() {
            if !s.dev.tx_queue_stopped(0) {
                queues_ok |= 1 << l;
            }
            if s.dev.running() && s.dev.carrier_ok() {
                live |= 1 << l;
            }
        }
        *stale |= self.carrier & !live != 0;
        // A stopped queue is skipped when another link has room (§5.3), but
        // is no reason to drop: the slave's qdisc still queues. Links out
        // of use for loss only serve when nothing else is left. By bytes, a
        // block at a time; a link idle for an eighth of SLOW_TOUT is level
        // again, so the peer's detector never sees it starved
        // (core/sched.rs).
        let idle = self.params.level_after();
        let Some((link, seq)) =
            c.tx.route(self.carrier & live, queues_ok, first, len, segs, t, idle)
        else {
            self.stats.tx_no_link += 1;
            self.stats.tx_dropped += 1;
            return TxRoute::NoLink;
        };
        let to = c.peer.as_ref().map_or([0; 6], |p| p.link_mac[link]);
        self.tx_swept(slot, &mut c.tx);
        self.stats.tx_packets += u64::from(segs);
        self.stats.tx_bytes += u64::from(len);
        TxRoute::Send {
            link,
            seq,
            to,
            from: self.slave_mac(link),
        }
    }

    /// Data went to the peer in `slot` (transmit side `c`, locked): it goes
    /// on the sweep list (loss reports, silent-link probes) if not there.
    pub(crate) fn tx_swept(&mut self, slot: usize, c: &mut PeerTx) {
        if !c.swept {
            c.swept = true;
            enqueue(&mut self.marks, &mut self.on_sweep, ON_SWEEP, slot);
        }
    }

    /// A packet sent without this lock found no link (counted here).
    pub(crate) fn tx_no_link(&mut self) {
        self.stats.tx_no_link += 1;
        self.stats.tx_dropped += 1;
    }

    /// Numbers a broadcast of `len` bytes: returns the number and the links
    /// it goes on (every link with carrier), or `None` if there is none.
    pub(crate) fn tx_bcast(&mut self, len: u32) -> Option<(Seq, u8)> {
        if self.carrier == 0 {
            self.stats.tx_no_link += 1;
            self.stats.tx_dropped += 1;
            return None;
        }
        let seq = self.bcast_seq;
        self.bcast_seq = seq.next();
        self.stats.tx_packets += 1;
        self.stats.tx_bytes += u64::from(len);
        Some((seq, self.carrier))
    }

    /// A packet of `segs` frames and `len` bytes counted as sent
    /// (`tx_route`) was not after all; its drop is counted apart.
    pub(crate) fn tx_untaken(&mut self, len: u32, segs: u32) {
        self.stats.tx_packets -= u64::from(segs);
        self.stats.tx_bytes -= u64::from(len);
    }

    /// A packet counted as sent could not be sent after all.
    pub(crate) fn tx_failed(&mut self, len: u32) {
        self.stats.tx_packets -= 1;
        self.stats.tx_bytes -= u64::from(len);
        self.stats.tx_dropped += 1;
    }

    /// A packet could not be sent before it was counted (no memory, say).
    pub(crate) fn tx_drop(&mut self) {
        self.stats.tx_dropped += 1;
    }

    /// Queues `frame` (RI2N header in place) on link `l`'s queue `q`.
    /// Returns whether the caller is to drain the queue after dropping the
    /// lock, or `None` if the frame did not fit (it went to `garbage`,
    /// counted).
    pub(crate) fn txq_push(
        &mut self,
        q: &LinkQueue,
        l: usize,
        frame: Skb,
        task: usize,
        garbage: &mut SkbList,
    ) -> Option<bool> {
        let frame = if self.slaves[l].is_none() {
            frame
        } else {
            match q.push(frame, task) {
                Ok(drain) => return Some(drain),
                Err(frame) => frame,
            }
        };
        garbage.push(frame);
        self.tx_queue_full(l);
        None
    }

    /// A frame did not fit link `l`'s queue.
    pub(crate) fn tx_queue_full(&mut self, l: usize) {
        self.link_stats[l].tx_dropped += 1;
        self.stats.tx_queue_full += 1;
        self.stats.tx_dropped += 1;
    }

    /// The slave of link `l` dropped `n` frames we handed it.
    pub(crate) fn tx_slave_dropped(&mut self, l: usize, n: u64) {
        self.link_stats[l].tx_dropped += n;
    }

    /// `frames` counted as sent on link `l` to `to` (a frame's
    /// destination: the peer's ri2n MAC, or in one-switch mode its slave
    /// MAC on the link, once learned) never left: the loss measurement
    /// must not take them for lost on the wire.
    /// The caller holds no transmit cell.
    pub(crate) fn tx_unsent(&mut self, to: &Mac, l: usize, frames: u32) {
        let slot = self.table.lookup(to).or_else(|| {
            let macs = CellMacs(&self.slots);
            self.claims
                .owner(to, |c| macs.link_mac(c))
                .filter(|c| c.link == l)
                .map(|c| c.slot)
        });
        if let Some(cell) = slot.and_then(|s| self.slots.cell(s)) {
            cell.lock().tx.unsent(l, frames);
        }
    }

    // --- Peers ---------------------------------------------------------------

    /// The slot of the peer `mac`, created if new (see [`State::new_peer`];
    /// `heard`: the link a frame of it arrived on, none if we send to it;
    /// a peer evicted for it leaves its held packets in `garbage`). `None`
    /// if there is no room or memory.
    fn peer_slot(
        &mut self,
        mac: &Mac,
        heard: Option<usize>,
        t: Instant,
        garbage: &mut SkbList,
    ) -> Option<usize> {
        match self.table.lookup(mac) {
            Some(s) => Some(s),
            None => self.new_peer(mac, heard, t, garbage),
        }
    }

    /// Admits `mac`. When the table is full, it takes the place of a peer
    /// never heard in a heartbeat or silent for three HBSPANs
    /// (core/peers.rs); with every slot a live peer, it is refused, counted
    /// and logged.
    fn new_peer(
        &mut self,
        mac: &Mac,
        heard: Option<usize>,
        t: Instant,
        garbage: &mut SkbList,
    ) -> Option<usize> {
        if self.table.len() >= self.table.capacity()
            && self.table.victim(t, idle_limit(&self.params)).is_none()
        {
            self.stats.peers_refused += 1;
            if crate::net::ratelimit() {
                pr_warn!(
                    "ri2n: peer table full ({} live peers, peer_mem {} bytes): refusing peer {}\n",
                    self.table.len(),
                    self.params.peer_mem(),
                    MacFmt(mac)
                );
            }
            return None;
        }
        // Allocated before anyone is evicted for it.
        let Some(mut peer) = crate::ri2n_peer::alloc_peer(&self.cache) else {
            self.stats.peers_refused += 1;
            return None;
        };
        if self.table.len() >= self.table.capacity() {
            let s = self.table.victim(t, idle_limit(&self.params))?;
            self.forget(s, garbage);
            self.stats.peers_evicted += 1;
        }
        // Heard from: answered on that link alone (core/node.rs); sent to:
        // told on every link.
        let first = heard.map_or(self.carrier, |l| self.carrier & (1 << l));
        peer.start(self.nlinks(), first, t);
        let slot = self.table.insert(mac, t, ()).ok()?;
        self.hb_phases.add(slot);
        if let Some(cell) = self.slots.cell(slot) {
            let mut c = cell.lock();
            c.tx.start(mac);
            c.tx.publish(&peer.det);
            c.peer = Some(peer);
        }
        self.stats.peers_new += 1;
        enqueue(&mut self.marks, &mut self.hb_queue, ON_HB_QUEUE, slot);
        Some(slot)
    }

    /// Removes the peer in `slot`; its held packets go to `garbage`. The
    /// slot stays on the work lists, which skip empty slots.
    fn forget(&mut self, slot: usize, garbage: &mut SkbList) {
        self.claims.forget(&CellMacs(&self.slots), slot);
        self.slots.unnote(self.table.mac(slot), slot);
        let old = self.slots.cell(slot).and_then(|cell| {
            let mut c = cell.lock();
            c.tx.clear();
            c.rx_at = Instant(0);
            c.peer.take()
        });
        if self.table.remove(slot).is_some() {
            self.hb_phases.remove(slot);
        }
        if let Some(mut old) = old {
            let held = &self.slots.held;
            old.rx.drain(&mut self.bufs, &mut |s| {
                held.sub(s.truesize() as usize);
                garbage.push(s)
            });
        }
    }

    // --- Receive -------------------------------------------------------------

    /// Counts a receive drop (not a slave's frame, malformed, down...).
    pub(crate) fn rx_drop(&mut self) {
        self.stats.rx_dropped += 1;
    }

    /// A frame in the other mode than ours (`one_switch`): counted, logged
    /// now and then.
    pub(crate) fn rx_mode_mismatch(&mut self, dev_name: &str, slave: &str, one_switch: bool) {
        self.stats.rx_mode_mismatch += 1;
        self.stats.rx_dropped += 1;
        if crate::net::ratelimit() {
            let (theirs, ours) = if one_switch {
                ("two-switch", "one_switch=1")
            } else {
                ("one-switch", "one_switch=0")
            };
            pr_warn!(
                "{}: dropped a {} mode frame on {}: this device has {}; the modes differ, set one_switch alike on every node\n",
                dev_name, theirs, slave, ours
            );
        }
    }

    /// Counts a malformed frame.
    pub(crate) fn rx_malformed(&mut self) {
        self.stats.rx_malformed += 1;
        self.stats.rx_dropped += 1;
    }

    /// A frame arrived for us (our address or a broadcast; frames for
    /// another address are only passed up when ri2n0 is promiscuous,
    /// outside every peer's order). Data is reordered into `out.up`; what
    /// must be dropped goes to `out.garbage`.
    pub(crate) fn rx_frame<'g>(
        &mut self,
        dev_name: &str,
        frame: RxIn,
        short_max: u32,
        gro: &'g GroCells,
        out: RxOut<'_>,
    ) -> RxAfter<'g> {
        let t = now();
        let admitted = self.rx_admit(dev_name, &frame, t, out.garbage);
        let Some(a) = admitted else {
            if let Some(s) = frame.skb {
                out.garbage.push(s);
            }
            return RxAfter::default();
        };
        let RxIn { kind, skb, src, .. } = frame;
        self.rx_take(dev_name, &src, a, kind, skb, t, short_max, gro, out)
    }

    /// What receive decides before a frame touches its peer's cell: ri2n0
    /// is up, the frame verifies, counts on its link (one-switch mode: not
    /// a copy the switch flooded here, which only teaches a slave MAC), has
    /// a peer (admitted if new), and, sealed, is fresh. Counted here if
    /// refused (`None`; the caller drops the packet); else the peer is
    /// touched and its slave MAC learned.
    fn rx_admit(
        &mut self,
        dev_name: &str,
        f: &RxIn,
        t: Instant,
        garbage: &mut SkbList,
    ) -> Option<Admitted> {
        let (l, src) = (f.link, &f.src);
        if !self.up || !self.verify(dev_name, src, f.sealed.as_ref()) {
            if !self.up {
                self.stats.rx_dropped += 1;
            }
            return None;
        }
        // Whether the frame counts on link `l` (its endpoint, loss marks,
        // link counters): not a copy the switch flooded here.
        let credit = f.wire.is_none_or(|w| w.link == l || w.to_port);
        if let Some(w) = f
            .wire
            .filter(|_| !credit && matches!(f.kind, Frame::Heartbeat(_)))
        {
            // Before the replay check: only what is not known yet (a
            // replay cannot move a learned MAC this way).
            if let Some(slot) = self.table.lookup(src) {
                let unknown = self.slots.cell(slot).is_some_and(|c| {
                    c.lock()
                        .peer
                        .as_ref()
                        .is_some_and(|p| p.link_mac.get(w.link) == Some(&[0; 6]))
                });
                if unknown {
                    self.learn_link_mac(dev_name, slot, w.link, &w.src);
                }
            }
            self.stats.rx_not_for_us += 1;
            self.stats.rx_dropped += 1;
            return None;
        }
        let Some(slot) = self.peer_slot(src, Some(l), t, garbage) else {
            self.stats.rx_dropped += 1;
            return None;
        };
        // Frames a slave's GRO merged count as the frames they were.
        let frames = f.skb.as_ref().map_or(1, span_of);
        let epoch = f.sealed.as_ref().map(|s| s.seal.epoch);
        // Sealed data: from the check until its window has it, receive
        // without the lock takes no sealed frame (`Slots::sealed_judged`).
        let judged = epoch.is_some() && matches!(f.kind, Frame::Data(_));
        if judged {
            self.slots.sealed_judged.fetch_add(1, Ordering::Relaxed);
        }
        // A replay is refused before it counts anywhere: it must not keep a
        // dead link alive or a peer in the table.
        if let Some(epoch) = epoch {
            let silent = t.since(self.table.last_seen(slot));
            let fresh = self.sealed_fresh(slot, epoch, silent, &f.kind, frames);
            if fresh != Fresh::Yes {
                Admitted::judged_done(judged, &self.slots);
                if !credit {
                    // A flooded copy (one-switch mode), not a replay.
                    self.stats.rx_duplicates += 1;
                } else if fresh == Fresh::Copy {
                    self.stats.rx_bcast_copies += 1;
                } else {
                    self.stats.rx_replays += 1;
                }
                self.stats.rx_dropped += 1;
                return None;
            }
        }
        self.table
            .touch(slot, t, matches!(f.kind, Frame::Heartbeat(_)));
        if matches!(f.kind, Frame::Data(_)) {
            // Its next frames may take the peer's lock alone (ri2n_rx.rs),
            // which finds it by the index transmit reads.
            self.slots.note(src, slot);
        }
        // One-switch mode: a frame names the peer's link it left on; the
        // peer's slave MAC for our link of that index is its source,
        // wherever the switch delivered it (a frame to a ri2n MAC the switch
        // has not learned, or learned long ago, goes anywhere).
        if let Some(w) = f.wire {
            self.learn_link_mac(dev_name, slot, w.link, &w.src);
        }
        if credit {
            self.link_stats[l].rx_packets += u64::from(frames);
        }
        if frames > 1 {
            self.stats.rx_merged += 1;
            self.stats.rx_merged_frames += u64::from(frames);
        }
        Some(Admitted {
            link: l,
            slot,
            credit,
            frames,
            epoch,
            judged,
        })
    }

    /// The admitted frame `a` of `src`'s peer, under the peer's cell: the
    /// engine takes it (core/node.rs), what its window released goes to
    /// `out.up` through the peer's GRO cell, and the peer goes on the
    /// sweep's and the heartbeats' lists as it now needs.
    #[allow(clippy::too_many_arguments)]
    fn rx_take<'g>(
        &mut self,
        dev_name: &str,
        src: &Mac,
        a: Admitted,
        kind: Frame,
        skb: Option<Skb>,
        t0: Instant,
        short_max: u32,
        gro: &'g GroCells,
        out: RxOut<'_>,
    ) -> RxAfter<'g> {
        let mut after = RxAfter::default();
        let RxOut { up, done, garbage } = out;
        let (params, carrier, is_up) = (self.params, self.carrier, self.up);
        let lossy_every = loss_probe_every(self.lossy_peers);
        let earliest = t0.plus(self.sweep_period());
        let State {
            bufs,
            slots,
            stats,
            slaves,
            probing,
            ..
        } = self;
        let held = &slots.held;
        // The detector counts what went out since, before it judges; the
        // links it allows are published after, under the same hold (a
        // sender to this peer waits: receive and it meet only here).
        let Some(cell) = slots.cell(a.slot) else {
            Admitted::judged_done(a.judged, slots);
            if let Some(s) = skb {
                garbage.push(s);
            }
            return after;
        };
        let mut c = cell.lock();
        // The cell is held from here to the window: done judging.
        Admitted::judged_done(a.judged, slots);
        let Some((ctx, peer)) = c.both() else {
            if let Some(s) = skb {
                garbage.push(s);
            }
            return after;
        };
        // Read again under the cell: receive on another CPU may have held
        // a packet since (core/window.rs, `waited_us`).
        let t = now();
        ctx.fold(peer);
        // Truesize of what left the windows (a `Cell`: read while the
        // closure lives).
        let out_bytes = core::cell::Cell::new(0usize);
        let ends_runs = core::cell::Cell::new(true);
        let (packets, bytes) = (core::cell::Cell::new(0u64), core::cell::Cell::new(0u64));
        let mut deliver = |mut s: Skb| {
            packets.set(packets.get() + u64::from(span_of(&s)));
            bytes.set(bytes.get() + u64::from(s.len()));
            out_bytes.set(out_bytes.get() + s.truesize() as usize);
            // After truesize is counted: parsing may pull, which can grow it.
            ends_runs.set(ends_runs.get() && ends_gro_run(&mut s, short_max));
            up.push(s);
        };
        if let (Frame::Data(_), Some(s)) = (&kind, &skb) {
            held.add(s.truesize() as usize);
        }
        let arrival = Arrival {
            link: a.link,
            now: t,
            carrier,
            credit: a.credit,
            sealed: a.epoch,
            frames: a.frames,
        };
        let got = peer.receive(&arrival, kind, skb, probing, &params, bufs, &mut deliver);
        let left = match got.left {
            Left::Up(s) => {
                // Not from a window: not in `out_bytes`.
                let size = s.truesize() as usize;
                deliver(s);
                out_bytes.set(out_bytes.get() - size);
                Left::Nothing
            }
            other => other,
        };
        rx_left(left, stats, held, done, garbage);
        if let Some(e) = got.restarted {
            if crate::net::ratelimit() {
                pr_info!(
                    "{}: peer {} restarted (new epoch {:x})\n",
                    dev_name,
                    MacFmt(src),
                    e
                );
            }
        }
        after.kick |= got.answer;
        // Whatever left a window (in order, a heartbeat's resync or loss
        // release, FAST_TOUT) is no longer held.
        held.sub(out_bytes.get());
        if held.get() > params.held_mem() {
            // The arriving peer's window goes up whole: the total then
            // stays within held_mem plus a packet.
            stats.rx_held_full += 1;
            out_bytes.set(0);
            peer.rx.flush(bufs, &mut deliver);
            held.sub(out_bytes.get());
        }
        if !got.tr.is_empty() {
            log_transitions(dev_name, slaves, src, &got.tr, t, &peer.det);
        }
        ctx.publish(&peer.det);
        let need = peer.sweep_need(t, carrier, &params);
        if need == SweepNeed::Now {
            ctx.swept = true;
            // Not once ri2n0 is down: its timer is not re-armed then.
            let pull = is_up.then(|| {
                slots.pull_sweep_for(earliest, || peer.next_due(t, carrier, &params, lossy_every))
            });
            if let Some(at) = pull.flatten() {
                after.pull_ms = Some(ms_until(at, t));
            }
        }
        let hb = peer.hb_pending & carrier != 0;
        // Up under the peer's cell, so that what the window released goes
        // up before anything receive takes without the state lock later.
        after.claim = hand_up(gro, a.slot, up, ends_runs.get());
        drop(c);
        stats.rx_packets += packets.get();
        stats.rx_bytes += bytes.get();
        self.rx_schedule(a.slot, need, hb);
        after
    }

    /// The peer in `slot` goes on the sweep's lists as `need` says, and on
    /// the heartbeat queue if `hb`; the pool's shortage is published.
    fn rx_schedule(&mut self, slot: usize, need: SweepNeed, hb: bool) {
        match need {
            SweepNeed::Now => enqueue(&mut self.marks, &mut self.on_sweep, ON_SWEEP, slot),
            SweepNeed::Slow => enqueue(&mut self.marks, &mut self.on_slow, ON_SLOW, slot),
            SweepNeed::None => {}
        }
        if hb {
            enqueue(&mut self.marks, &mut self.hb_queue, ON_HB_QUEUE, slot);
        }
        if self.bufs.refused != self.stats.rx_nobuf {
            self.slots.bufs_short.store(true, Ordering::Relaxed);
        }
        self.stats.rx_nobuf = self.bufs.refused;
    }

    /// After receive took a frame of `mac`'s peer in `slot` without this
    /// lock (ri2n_rx.rs): what it could not do there. Its detector's
    /// transitions `tr` at `t` are logged and told to the peer (returns
    /// whether heartbeats are to go now); a duplicate it dropped (`dup`)
    /// and a window it flushed for `held_mem` (`full`) are counted; an idle
    /// window's buffer (`spare`) goes back to the pool.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn rx_lockless_after(
        &mut self,
        dev_name: &str,
        slot: usize,
        mac: &Mac,
        tr: Transitions,
        t: Instant,
        dup: bool,
        full: bool,
        spare: Option<Buf>,
    ) -> bool {
        if let Some(b) = spare {
            self.bufs.put(b);
        }
        if dup {
            self.stats.rx_duplicates += 1;
            self.stats.rx_dropped += 1;
        }
        self.stats.rx_held_full += u64::from(full);
        let mut kick = false;
        if !tr.is_empty() {
            let carrier = self.carrier;
            let queue = self.slots.cell(slot).is_some_and(|cell| {
                let mut c = cell.lock();
                let Some((_, p)) = c.peer_for(mac) else {
                    return false;
                };
                kick = p.tell(&tr, carrier);
                log_transitions(dev_name, &self.slaves, mac, &tr, t, &p.det);
                p.hb_pending & carrier != 0
            });
            if queue {
                enqueue(&mut self.marks, &mut self.hb_queue, ON_HB_QUEUE, slot);
            }
        }
        kick
    }

    /// One-switch mode: the peer in `slot` sends on our link `l` from
    /// slave MAC `w`; a new one (a NIC replaced) is learned at once.
    fn learn_link_mac(&mut self, dev_name: &str, slot: usize, l: usize, w: &Mac) {
        // Never a group, zero or own address: our unicast to the peer
        // would flood, or come back to us.
        if l >= MAX_LINKS
            || w[0] & 1 != 0
            || *w == [0; 6]
            || self.slaves().any(|(_, s)| s.dev.addr() == *w)
        {
            return;
        }
        if self.table.get(slot).is_none() {
            return;
        }
        let Some(learned) = self.claims.learn(
            &mut CellMacs(&self.slots),
            claims::Claim { slot, link: l },
            w,
        ) else {
            return;
        };
        let mac = *self.table.mac(slot);
        let name = self.slaves[l].as_ref().map_or("?", |s| s.name());
        match learned.taken_from {
            Some(t) if t.slot != slot => {
                // The later claim wins; the earlier peer's frames to it
                // go to its ri2n MAC (flooded) until it is heard again.
                self.stats.slave_mac_taken += 1;
                let other = *self.table.mac(t.slot);
                let logged = self
                    .slots
                    .cell(t.slot)
                    .is_some_and(|c| c.lock().peer.as_ref().is_some_and(|p| p.claim_logged));
                let Some(cell) = self.slots.cell(slot) else {
                    return;
                };
                let first = cell
                    .lock()
                    .peer
                    .as_mut()
                    .is_some_and(|p| !core::mem::replace(&mut p.claim_logged, true));
                if !logged && first {
                    pr_warn!(
                        "{}: slave MAC {} claimed by peers {} and {}: now {}'s on {} (logged once)\n",
                        dev_name, MacFmt(w), MacFmt(&other), MacFmt(&mac), MacFmt(&mac), name
                    );
                }
            }
            _ if learned.old != [0; 6] && crate::net::ratelimit() => {
                pr_info!(
                    "{}: peer {} link {}: slave MAC now {} (was {})\n",
                    dev_name,
                    MacFmt(&mac),
                    name,
                    MacFmt(w),
                    MacFmt(&learned.old)
                );
            }
            _ => {}
        }
    }

    /// Whether a verified sealed frame from the peer in `slot`, after it
    /// was `silent`, is new ([`Peer::sealed_fresh`]).
    fn sealed_fresh(
        &mut self,
        slot: usize,
        epoch: u64,
        silent: Duration,
        frame: &Frame,
        frames: u32,
    ) -> Fresh {
        let params = self.params;
        let Some(cell) = self.slots.cell(slot) else {
            return Fresh::Replay;
        };
        let mut c = cell.lock();
        let Some((_, peer)) = c.both() else {
            return Fresh::Replay;
        };
        peer.sealed_fresh(epoch, silent, frame, frames, &params)
    }

    /// A frame for another of our addresses, or (promiscuous) another
    /// host's, passed up unordered.
    pub(crate) fn rx_unordered(&mut self, len: u32) {
        self.stats.rx_packets += 1;
        self.stats.rx_bytes += u64::from(len);
        self.stats.rx_unordered += 1;
    }

    /// A frame for another host, dropped.
    pub(crate) fn rx_not_for_us(&mut self) {
        self.stats.rx_not_for_us += 1;
        self.stats.rx_dropped += 1;
    }

    // --- Timers --------------------------------------------------------------

    /// A tick of the heartbeat timer: a heartbeat is due on every link
    /// up to the peers of the phases it serves (table slot modulo
    /// `HB_PHASES`), so that each peer hears from us every HBSPAN and the
    /// heartbeats to many peers are spread over it, not sent in a burst.
    /// Returns the phases until the next tick: the timer sleeps over
    /// phases without peers (core/phases.rs).
    pub(crate) fn hb_tick(&mut self) -> usize {
        let tick = self.hb_phases.tick();
        let links = self.carrier;
        if links == 0 {
            return tick.wait;
        }
        for phase in (tick.first..tick.first + tick.count).map(|p| p % HB_PHASES) {
            if !self.hb_phases.has(phase) {
                continue;
            }
            let mut s = phase;
            while s < self.table.capacity() {
                // Only to peers heard in a heartbeat: a source that never
                // answered (a made-up MAC) gets nothing periodic.
                let known = self.table.get(s).is_some() && self.table.is_known(s);
                if let Some(cell) = self.slots.cell(s).filter(|_| known) {
                    if let Some(p) = cell.lock().peer.as_mut() {
                        p.heartbeat_due(links);
                    }
                    enqueue(&mut self.marks, &mut self.hb_queue, ON_HB_QUEUE, s);
                }
                s += HB_PHASES;
            }
        }
        tick.wait
    }

    /// The sweep: polls the slaves' carrier (loss only, see ri2n_hb.rs),
    /// starts and ends probe rounds, and releases what waited FAST_TOUT or
    /// was proved lost, into `up`, for the peers on the sweep list only;
    /// ages out silent peers (their packets into `garbage`). Returns
    /// whether heartbeats are pending.
    pub(crate) fn sweep(&mut self, dev_name: &str, gro: &GroCells, garbage: &mut SkbList) -> bool {
        if !self.up {
            return false;
        }
        let t = now();
        // What it finds, and any receive's pull while it runs, from here on.
        self.slots.sweep_at.store(u64::MAX, Ordering::Relaxed);
        for l in 0..MAX_LINKS {
            let lost = self.slaves[l]
                .as_ref()
                .is_some_and(|s| !(s.dev.running() && s.dev.carrier_ok()));
            if lost && self.carrier_changed_to(l, false) {
                log_carrier(
                    dev_name,
                    self.slaves[l].as_ref().map_or("?", |s| s.name()),
                    false,
                    self.carrier,
                );
            }
        }
        self.stats.sweeps += 1;
        let mut aged = 0;
        while aged < AGE_PER_SWEEP {
            let Some(s) = self.table.aged(t, age_limit(&self.params)) else {
                break;
            };
            self.forget(s, garbage);
            self.stats.peers_aged += 1;
            aged += 1;
        }
        let slow_every = Duration(self.params.hbspan().0 / 8);
        let slow_due = t.since(self.slow_swept) >= slow_every;
        if slow_due {
            self.slow_swept = t;
        }
        let mut cx = SweepCx {
            dev_name,
            params: self.params,
            carrier: self.carrier,
            slaves: &self.slaves,
            bufs: &mut self.bufs,
            stats: &mut self.stats,
            held: &self.slots.held,
            gro,
            lossy_every: loss_probe_every(self.lossy_peers),
            lossy_peers: 0,
            // More to age out: soon again.
            next: (aged == AGE_PER_SWEEP).then_some(t),
        };
        let (table, marks, slots) = (&mut self.table, &mut self.marks, &*self.slots);
        let (on_sweep, on_slow, hb_queue) =
            (&mut self.on_sweep, &mut self.on_slow, &mut self.hb_queue);
        // Every sweep: the peers that hold packets or carry data.
        let mut i = 0;
        while i < on_sweep.len() {
            let slot = on_sweep[i] as usize;
            let need = cx.visit(table, slots, slot, marks, hb_queue);
            if need == Some(SweepNeed::Now) {
                i += 1;
                continue;
            }
            if let Some(cell) = slots.cell(slot) {
                let mut c = cell.lock();
                if c.tx.sent_since_fold() || c.rx_at >= t {
                    // Data went out or came in during the visit: the next
                    // looks.
                    i += 1;
                    continue;
                }
                // From here on, transmit and receive put it back
                // (`State::tx_swept`).
                c.tx.swept = false;
            }
            if need == Some(SweepNeed::Slow) {
                enqueue(marks, on_slow, ON_SLOW, slot);
            }
            marks[slot] &= !ON_SWEEP;
            let last = on_sweep.len() - 1;
            on_sweep.swap(i, last);
            on_sweep.pop();
        }
        // Every HBSPAN / 8: the peers with an endpoint out of use.
        let mut i = 0;
        while slow_due && i < on_slow.len() {
            let slot = on_slow[i] as usize;
            let need = cx.visit(table, slots, slot, marks, hb_queue);
            if need == Some(SweepNeed::Slow) {
                i += 1;
                continue;
            }
            if need == Some(SweepNeed::Now) {
                if let Some(cell) = slots.cell(slot) {
                    cell.lock().tx.swept = true;
                }
                enqueue(marks, on_sweep, ON_SWEEP, slot);
            }
            marks[slot] &= !ON_SLOW;
            let last = on_slow.len() - 1;
            on_slow.swap(i, last);
            on_slow.pop();
        }
        // Every peer with a lossy link is on the every-sweep list.
        self.lossy_peers = cx.lossy_peers;
        // The visits gave back the idle windows' buffers.
        self.slots.bufs_short.store(false, Ordering::Relaxed);
        self.slots
            .lossy_every_ns
            .store(loss_probe_every(self.lossy_peers).0, Ordering::Relaxed);
        let mut next = cx.next;
        if !self.on_slow.is_empty() {
            let slow = self.slow_swept.plus(slow_every);
            next = Some(next.map_or(slow, |n| n.min(slow)));
        }
        // With any pull made while it ran (see `Slots::sweep_at`).
        self.pull_sweep(self.sweep_target(next, t));
        !self.hb_queue.is_empty()
    }

    fn sweep_period(&self) -> Duration {
        sweep_period(&self.params)
    }

    fn sweep_target(&self, due: Option<Instant>, t: Instant) -> Instant {
        sweep_at(due, t, &self.params)
    }

    /// Milliseconds until the sweep timer must fire, for the caller to arm
    /// it under this lock: at the time the last sweep planned, or a receive
    /// since; within a period if heartbeats still wait (`send_pending` sends
    /// a share per call).
    pub(crate) fn sweep_delay_ms(&mut self) -> u32 {
        let t = now();
        if !self.hb_queue.is_empty() {
            self.pull_sweep(t.plus(self.sweep_period()));
        }
        ms_until(Instant(self.slots.sweep_at.load(Ordering::Relaxed)), t)
    }

    /// The sweep is to run within a period (heartbeats wait for it): the
    /// milliseconds to pull its timer to, if it is armed for later, while up.
    pub(crate) fn sweep_within_period(&mut self) -> Option<u32> {
        let t = now();
        let at = t.plus(self.sweep_period());
        (self.up && self.pull_sweep(at)).then(|| ms_until(at, t))
    }

    /// The sweep is to run at once ([`crate::ri2n_hb::kick`]).
    pub(crate) fn sweep_now(&mut self) {
        self.slots.sweep_at.store(now().0, Ordering::Relaxed);
    }

    /// Takes the heartbeats queued for the next peer on the heartbeat queue
    /// that has any: up to one order per link. `None` when the queue is
    /// empty.
    pub(crate) fn take_heartbeats(&mut self) -> Option<(Mac, Seq, HeartbeatOrders)> {
        let (links, nlinks) = (self.carrier, self.nlinks());
        let probe_shift = self.probe_shift();
        loop {
            let slot = self.hb_queue.pop()? as usize;
            self.marks[slot] &= !ON_HB_QUEUE;
            let mac = *self.table.mac(slot);
            let Some(cell) = self
                .slots
                .cell(slot)
                .filter(|_| self.table.get(slot).is_some())
            else {
                continue;
            };
            let mut c = cell.lock();
            let Some((tx, p)) = c.peer_for(&mac) else {
                continue;
            };
            if let Some(orders) = p.poll_heartbeats(links, nlinks, probe_shift) {
                return Some((mac, tx.tx_seq, orders));
            }
        }
    }

    /// The slot of the peer `mac`, if in the table.
    pub(crate) fn peer_of(&self, mac: &Mac) -> Option<usize> {
        self.table.lookup(mac)
    }

    /// What our heartbeats ask the peers (`probe_shift`): loss probes on
    /// links lossy toward us no more often than we probe each of ours, or
    /// than the number of peers that probe us allows.
    pub(crate) fn probe_shift(&self) -> u8 {
        self.loss_probes(now()).2
    }

    /// The frame counts of a heartbeat on link `l` to the peer in cell
    /// `c`, which the caller locked and holds until the heartbeat is
    /// queued (behind every frame counted before it), and counts it as
    /// sent.
    pub(crate) fn hb_counts(c: &mut PeerCell, l: usize) -> Option<Counts> {
        let (tx, p) = c.both()?;
        p.heartbeat_counts(tx, l)
    }

    /// Counts heartbeats sent.
    pub(crate) fn hb_sent(&mut self, n: u64) {
        self.stats.hb_sent += n;
    }
}

/// What the sweep needs to visit a peer.
struct SweepCx<'a> {
    dev_name: &'a str,
    params: Params,
    carrier: u8,
    slaves: &'a [Option<Slave>; MAX_LINKS],
    bufs: &'a mut BufPool,
    stats: &'a mut DevStats,
    held: &'a Held,
    /// Releases go up through their peer's cell.
    gro: &'a GroCells,
    /// How often each lossy link is probed, from the last sweep's count.
    lossy_every: Duration,
    /// Peers with a lossy link seen in this sweep.
    lossy_peers: usize,
    /// The earliest deadline of the peers left on the sweep list.
    next: Option<Instant>,
}

impl SweepCx<'_> {
    /// Probes and releases for the peer in `slot` (queueing its
    /// heartbeats); how often it needs the sweep from now on, `None` if the
    /// slot is empty (forgotten since it was listed).
    fn visit(
        &mut self,
        table: &mut Table,
        slots: &Slots,
        slot: usize,
        marks: &mut KVVec<u8>,
        hb_queue: &mut SlotQueue<KVVec<u32>>,
    ) -> Option<SweepNeed> {
        let (params, carrier) = (self.params, self.carrier);
        // Held over the whole visit: what it releases goes up before any
        // frame receive takes without the state lock after it.
        let mut c = slots.cell(slot)?.lock();
        // Read under the cell: receive may have held a packet since the
        // sweep began.
        let t = now();
        let rx_at = c.rx_at;
        let (tx, p) = c.both()?;
        if rx_at > table.last_seen(slot) {
            // Frames taken without the state lock: the peer is not idle
            // (aging, eviction).
            table.touch(slot, rx_at, false);
        }
        tx.fold(p);
        let (stats, held) = (&mut *self.stats, self.held);
        let mut up = SkbList::new();
        let visit = p.sweep(t, carrier, &params, self.lossy_every, self.bufs, &mut |s| {
            stats.rx_packets += u64::from(span_of(&s));
            stats.rx_bytes += u64::from(s.len());
            held.sub(s.truesize() as usize);
            up.push(s);
        });
        self.lossy_peers += usize::from(visit.lossy);
        if !up.is_empty() {
            // Under the peer's cell, as receive queues: in order.
            self.gro.queue(cell_of(slot), up);
        }
        if p.hb_pending & carrier != 0 {
            enqueue(marks, hb_queue, ON_HB_QUEUE, slot);
        }
        tx.publish(&p.det);
        if let Some(due) = visit.due {
            self.next = Some(self.next.map_or(due, |n| n.min(due)));
        }
        let (tr, need) = (visit.tr, visit.need);
        if !tr.is_empty() {
            log_transitions(self.dev_name, self.slaves, table.mac(slot), &tr, t, &p.det);
        }
        Some(need)
    }
}

/// One log line for a carrier change.
pub(crate) fn log_carrier(dev_name: &str, slave: &str, up: bool, carrier: u8) {
    if crate::net::ratelimit() {
        let what = if up {
            "up, probing peers"
        } else {
            "down, not used for any peer"
        };
        let left = if carrier != 0 { "" } else { " (no link left)" };
        pr_info!("{}: link {}: carrier {}{}\n", dev_name, slave, what, left);
    }
}

/// One log line per endpoint state change, naming device, peer and slave
/// (like bonding's "link status definitely down for interface eth1").
fn log_transitions(
    dev_name: &str,
    slaves: &[Option<Slave>; MAX_LINKS],
    peer: &Mac,
    t: &Transitions,
    now: Instant,
    det: &Detector,
) {
    if !crate::net::ratelimit() {
        return;
    }
    for (l, s) in slaves.iter().enumerate() {
        let Some(s) = s else { continue };
        let bit = 1u8 << l;
        let e = &det.endpoints[l];
        let (name, mac, link) = (dev_name, MacFmt(peer), s.name());
        if t.failed & bit != 0 {
            pr_info!(
                "{}: peer {} link {}: failed, nothing received for {} ms (fail #{})\n",
                name,
                mac,
                link,
                now.since(e.last_rx).as_ms(),
                e.fails
            );
        }
        if t.recovered & bit != 0 {
            pr_info!(
                "{}: peer {} link {}: recovered by heartbeat (recovery #{})\n",
                name,
                mac,
                link,
                e.recoveries
            );
        }
        if t.peer_failed & bit != 0 {
            pr_info!(
                "{}: peer {} link {}: peer receives nothing from us, not sending on it\n",
                name,
                mac,
                link
            );
        }
        if t.peer_recovered & bit != 0 {
            pr_info!(
                "{}: peer {} link {}: peer receives again, sending on it\n",
                name,
                mac,
                link
            );
        }
        let (whole, hundredths) = (e.loss_bp / 100, e.loss_bp % 100);
        if t.lossy & bit != 0 {
            pr_info!(
                "{}: peer {} link {}: loses {}.{:02}% of our frames, not sending on it (lossy #{})\n",
                name, mac, link, whole, hundredths, e.lossy_count
            );
        }
        if t.lossless & bit != 0 {
            pr_info!(
                "{}: peer {} link {}: loss down to {}.{:02}%, sending on it again\n",
                name,
                mac,
                link,
                whole,
                hundredths
            );
        }
    }
}
