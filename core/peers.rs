// SPDX-License-Identifier: GPL-2.0

//! The peers (driver paper §5.8): each peer's state, and the table from MAC
//! address to peer.
//!
//! The table's capacity comes from the device's memory budget (`peer_mem`,
//! see [`capacity`]), not from a small count: the default serves a cluster
//! of 4096 nodes. Lookup is O(1): open addressing with linear probing over
//! twice as many buckets as slots, hashed with a per-device random key so
//! that nobody can aim collisions.
//!
//! Entries sit on one of two lists, each in order of last arrival (least
//! recently heard first), so that every decision below is O(1):
//!
//! - `new`: peers not yet heard in a heartbeat. A frame from an unknown MAC
//!   lands here; so does a MAC we only sent to.
//! - `known`: peers that sent a heartbeat: real RI2N nodes, which heartbeat
//!   every HBSPAN, so a known peer is never silent for long while it lives.
//!
//! When the table is full, a newcomer takes the place of the known peer
//! silent longest if it has been silent for the caller's idle limit, else of
//! the oldest new one; only a table of live known peers refuses it. So a
//! flood of new source MACs only ever churns the `new` list: it never
//! evicts a live peer. Peers silent for long are aged out ([`PeerTable::aged`]).

use super::detector::Detector;
use super::params::Params;
use super::rx::PeerRx;
use super::time::{Duration, Instant};
use super::window::{ReorderBuf, Span};
use core::ops::DerefMut;

/// An Ethernet address.
pub type Mac = [u8; 6];

/// The state of one peer (one node at the other end of the links), with
/// packets `P` and reorder buffers `B`; its numbering and link choice are
/// apart, under a lock of their own (core/tx.rs).
///
/// All-zero bytes are a new peer with a detector over no links
/// ([`Detector::start`] makes it one over the device's links), when `P`
/// and `B` are non-null pointer types.
pub struct Peer<P, B> {
    /// Receive side: reorder window, loss detector, broadcast filter.
    pub rx: PeerRx<P, B>,
    /// The endpoints' failure, recovery and loss state.
    pub det: Detector,
    /// Links a heartbeat to this peer is due on.
    pub hb_pending: u8,
    /// Of those, links whose heartbeat asks for an answer.
    pub hb_probe: u8,
    /// When data last went to or came from the peer.
    pub last_data: Instant,
    /// One-switch mode: the peer's slave MAC on each of our links, learned
    /// from what arrives there (all zero: not yet).
    pub link_mac: [Mac; super::MAX_LINKS],
    /// One-switch mode: a slave MAC this peer and another both claimed was
    /// logged (once: two nodes sending from one NIC address take it from
    /// each other on every frame).
    pub claim_logged: bool,
    /// The window of [`ProbingPeers`](super::detector::ProbingPeers) the
    /// peer was last counted in as probing us.
    pub probing_stamp: u16,
}

impl<P: Span, B: DerefMut<Target = ReorderBuf<P>>> Peer<P, B> {
    /// When the sweep must next visit this peer, over the links `up`, if
    /// nothing arrives or leaves before: the window's oldest packet reaches
    /// FAST_TOUT, or the detector has a probe, a round's end, a retry or a
    /// report due ([`Detector::next_due`]). `None`: only an event can give
    /// it work.
    pub fn next_due(
        &self,
        now: Instant,
        up: u8,
        p: &Params,
        lossy_every: Duration,
    ) -> Option<Instant> {
        let window = self.rx.window.deadline(now, p.fast_tout());
        let det = self.det.next_due(now, up, p, lossy_every);
        match (window, det) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}

impl<P, B> Peer<P, B> {
    /// The links the peer sends on, among those with carrier (`carrier`):
    /// the receive side's `active`. Tells its loss detector which links
    /// have no carrier, so that those stop taking part as they leave.
    pub fn rx_active(&mut self, carrier: u8) -> u8 {
        self.rx.loss.no_carrier(!carrier);
        self.det.active() & carrier
    }

    /// What the periodic sweep has to do for this peer at `now`, over the
    /// links `up` (with carrier).
    pub fn sweep_need(&self, now: Instant, up: u8, p: &Params) -> SweepNeed {
        let recent = Duration(2 * p.slow_tout().0.max(Duration::from_ms(100).0));
        if self.rx.window.held() > 0
            || self.det.probing()
            || self.det.lossy() != 0
            || now.since(self.last_data) < recent
            || self.det.disagree(now, up, p)
        {
            SweepNeed::Now
        } else if !self.det.settled() {
            SweepNeed::Slow
        } else {
            SweepNeed::None
        }
    }
}

/// How often the sweep must visit a peer.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum SweepNeed {
    /// Every sweep (FAST_TOUT / 4): packets held, a probe round open, a
    /// link out of use for loss (probed every `LOSS_PROBE_MS` or less
    /// often, `loss_probe_every`), a
    /// link silent while another delivers (a heartbeat missing), or data
    /// within the last `2 × max(SLOW_TOUT, 100 ms)` (silent-link
    /// probes, loss reports).
    Now,
    /// Every HBSPAN / 8: only an endpoint out of use, to probe it back.
    Slow,
    /// Never: an idle peer that only heartbeats.
    None,
}

impl<P, B> Default for Peer<P, B> {
    fn default() -> Self {
        Peer {
            rx: PeerRx::default(),
            det: Detector::default(),
            hb_pending: 0,
            hb_probe: 0,
            last_data: Instant(0),
            link_mac: [[0; 6]; super::MAX_LINKS],
            claim_logged: false,
            probing_stamp: 0,
        }
    }
}

/// A peer as the kernel stores it: packet handles and buffer pointers are
/// both one non-null pointer.
pub type SizedPeer = Peer<core::ptr::NonNull<u8>, &'static mut ReorderBuf<core::ptr::NonNull<u8>>>;

/// Bytes of one peer's state ([`Peer`]), while idle.
pub const PEER_BYTES: usize = core::mem::size_of::<SizedPeer>();
/// Bytes of one reorder buffer, held only while packets wait.
pub const BUF_BYTES: usize = core::mem::size_of::<ReorderBuf<core::ptr::NonNull<u8>>>();
/// What an [`Entry`] holds in the kernel: nothing (the peer box is in the
/// slot's cell).
pub type SizedValue = ();
/// Bytes of a slot's cell in the kernel: a [`PeerTx`], the peer's box and
/// a time under a spinlock, one kmalloc object of this size class
/// (ri2n_peer.rs checks).
///
/// [`PeerTx`]: super::tx::PeerTx
pub const TX_CELL_BYTES: usize = 128;
/// Buckets per slot of the driver's lockless transmit lookup.
pub const TX_INDEX_PER_SLOT: usize = 4;
/// Bytes of the table per slot, used or not: the entry, two buckets, two
/// buckets per link for the slave MACs' claims (`claims.rs`), a forgotten
/// peer's record (`auth.rs`), and what the driver keeps per slot: the
/// timers' three lists' slot numbers and a mark (`work.rs`), the cell and
/// a pointer to it, and its lookup buckets.
pub const SLOT_BYTES: usize = core::mem::size_of::<Entry<SizedValue>>()
    + 2 * 4
    + 2 * super::MAX_LINKS * 4
    + core::mem::size_of::<super::auth::Record>()
    + 3 * 4
    + 1
    + TX_CELL_BYTES
    + 8
    + TX_INDEX_PER_SLOT * 4;
/// Bytes per peer the budget counts: its state and its table slot.
pub const PER_PEER_BYTES: usize = PEER_BYTES + SLOT_BYTES;

/// The share of the budget kept for reorder buffers: one eighth.
const BUF_SHARE: usize = 8;

/// What a budget of `bytes` buys: `(peers, buffers)`. An eighth of it goes
/// to reorder buffers (at least one), the rest to peers (state and table
/// slot); `None` if that leaves no room for one peer.
pub const fn capacity(bytes: usize) -> Option<(usize, usize)> {
    let mut bufs = bytes / BUF_SHARE / BUF_BYTES;
    if bufs == 0 {
        bufs = 1;
    }
    if bytes < bufs * BUF_BYTES + PER_PEER_BYTES {
        return None;
    }
    let peers = (bytes - bufs * BUF_BYTES) / PER_PEER_BYTES;
    // Slot numbers are u32, with room for "none".
    Some((
        if peers > (u32::MAX / 2) as usize {
            (u32::MAX / 2) as usize
        } else {
            peers
        },
        bufs,
    ))
}

/// The smallest budget that holds one peer and one reorder buffer.
pub const MIN_BUDGET: usize = BUF_BYTES + PER_PEER_BYTES;

/// Which list an entry is on.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
#[repr(u8)]
enum List {
    #[default]
    Free = 0,
    New = 1,
    Known = 2,
}

/// Links are slot + 1; 0 is none.
const NIL: u32 = 0;

/// One slot of the table.
pub struct Entry<V> {
    mac: Mac,
    list: List,
    last_seen: Instant,
    prev: u32,
    next: u32,
    value: Option<V>,
}

impl<V> Default for Entry<V> {
    fn default() -> Self {
        Entry {
            mac: [0; 6],
            list: List::Free,
            last_seen: Instant(0),
            prev: NIL,
            next: NIL,
            value: None,
        }
    }
}

/// Why a peer could not be added.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Full {
    /// Every slot holds a live known peer.
    NoRoom,
}

#[derive(Clone, Copy, Default)]
struct Ends {
    head: u32,
    tail: u32,
}

/// MAC → slot, over storage the caller allocates: `entries` (the capacity)
/// and `buckets` (a power of two, at least twice the capacity), holding
/// values `V` (the kernel's boxed [`Peer`]).
///
/// # Invariants
///
/// A bucket holds a slot + 1 or 0 (empty); every used slot is in exactly
/// one bucket, reachable from its MAC's home bucket without crossing an
/// empty one, and on exactly one of the lists `new` and `known`, in order
/// of `last_seen`; free slots are chained through `next` from `free`.
pub struct PeerTable<V, E, K> {
    entries: E,
    buckets: K,
    count: usize,
    key: u64,
    free: u32,
    new: Ends,
    known: Ends,
    _v: core::marker::PhantomData<V>,
}

impl<V, E, K> PeerTable<V, E, K>
where
    E: DerefMut<Target = [Entry<V>]>,
    K: DerefMut<Target = [u32]>,
{
    /// An empty table over `entries` (every one default) and `buckets`
    /// (zeroed, a power of two at least twice as many), hashing with `key`
    /// (random per device).
    pub fn new(mut entries: E, buckets: K, key: u64) -> Self {
        assert!(buckets.len().is_power_of_two() && buckets.len() >= 2 * entries.len());
        let n = entries.len();
        for (i, e) in entries.iter_mut().enumerate() {
            e.next = if i + 1 < n { i as u32 + 2 } else { NIL };
        }
        PeerTable {
            entries,
            buckets,
            count: 0,
            key,
            free: if n > 0 { 1 } else { NIL },
            new: Ends::default(),
            known: Ends::default(),
            _v: core::marker::PhantomData,
        }
    }

    /// Slots: the most peers the table holds.
    pub fn capacity(&self) -> usize {
        self.entries.len()
    }

    /// Peers in the table.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    fn home(&self, mac: &Mac) -> usize {
        (mac_hash(mac, self.key) as usize) & (self.buckets.len() - 1)
    }

    /// The slot of `mac`, if known.
    #[inline]
    pub fn lookup(&self, mac: &Mac) -> Option<usize> {
        let mask = self.buckets.len() - 1;
        let mut b = self.home(mac);
        loop {
            let s = self.buckets[b];
            if s == NIL {
                return None;
            }
            if self.entries[s as usize - 1].mac == *mac {
                return Some(s as usize - 1);
            }
            b = (b + 1) & mask;
        }
    }

    /// The peer in slot `slot`.
    #[inline]
    pub fn get(&self, slot: usize) -> Option<&V> {
        self.entries.get(slot)?.value.as_ref()
    }

    /// The peer in slot `slot`, mutably.
    #[inline]
    pub fn get_mut(&mut self, slot: usize) -> Option<&mut V> {
        self.entries.get_mut(slot)?.value.as_mut()
    }

    /// The MAC of slot `slot`.
    pub fn mac(&self, slot: usize) -> &Mac {
        &self.entries[slot].mac
    }

    /// When slot `slot` was last heard from.
    pub fn last_seen(&self, slot: usize) -> Instant {
        self.entries[slot].last_seen
    }

    /// Whether slot `slot`'s peer has sent a heartbeat.
    pub fn is_known(&self, slot: usize) -> bool {
        self.entries[slot].list == List::Known
    }

    /// Used slots, in slot order, from `from` every `step`th (the heartbeat
    /// phases).
    pub fn slots_from(&self, from: usize, step: usize) -> impl Iterator<Item = usize> + '_ {
        (from..self.entries.len())
            .step_by(step.max(1))
            .filter(|&s| self.entries[s].list != List::Free)
    }

    /// Every peer: slot, MAC and state, in slot order.
    pub fn iter(&self) -> impl Iterator<Item = (usize, &Mac, &V)> + '_ {
        self.entries
            .iter()
            .enumerate()
            .filter_map(|(s, e)| e.value.as_ref().map(|v| (s, &e.mac, v)))
    }

    /// Every peer from slot `from` on: slot, MAC and state, in slot order.
    pub fn iter_from(&self, from: usize) -> impl Iterator<Item = (usize, &Mac, &V)> + '_ {
        self.iter_between(from, usize::MAX)
    }

    /// The peers in slots `from..to`, as [`PeerTable::iter_from`].
    pub fn iter_between(
        &self,
        from: usize,
        to: usize,
    ) -> impl Iterator<Item = (usize, &Mac, &V)> + '_ {
        let to = to.min(self.entries.len());
        let from = from.min(to);
        self.entries[from..to]
            .iter()
            .enumerate()
            .filter_map(move |(i, e)| e.value.as_ref().map(|v| (from + i, &e.mac, v)))
    }

    /// Every peer's state, mutably.
    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut V> + '_ {
        self.entries.iter_mut().filter_map(|e| e.value.as_mut())
    }

    fn ends(&mut self, l: List) -> &mut Ends {
        if l == List::Known {
            &mut self.known
        } else {
            &mut self.new
        }
    }

    fn unlink(&mut self, slot: usize) {
        let (l, prev, next) = (
            self.entries[slot].list,
            self.entries[slot].prev,
            self.entries[slot].next,
        );
        if prev == NIL {
            self.ends(l).head = next;
        } else {
            self.entries[prev as usize - 1].next = next;
        }
        if next == NIL {
            self.ends(l).tail = prev;
        } else {
            self.entries[next as usize - 1].prev = prev;
        }
    }

    fn push_tail(&mut self, slot: usize, l: List) {
        let tail = self.ends(l).tail;
        let e = &mut self.entries[slot];
        e.list = l;
        e.prev = tail;
        e.next = NIL;
        if tail == NIL {
            self.ends(l).head = slot as u32 + 1;
        } else {
            self.entries[tail as usize - 1].next = slot as u32 + 1;
        }
        self.ends(l).tail = slot as u32 + 1;
    }

    /// Records a frame from slot `slot`'s peer at `now`; `heartbeat` makes
    /// it a known peer.
    #[inline]
    pub fn touch(&mut self, slot: usize, now: Instant, heartbeat: bool) {
        let l = self.entries[slot].list;
        if l == List::Free {
            return;
        }
        self.entries[slot].last_seen = now;
        let to = if heartbeat { List::Known } else { l };
        if self.ends(l).tail != slot as u32 + 1 || to != l {
            self.unlink(slot);
            self.push_tail(slot, to);
        }
    }

    /// Adds `mac` (not in the table) with state `v` at `now`, as a new
    /// peer; gives `v` back if no slot is free (see [`PeerTable::victim`]).
    pub fn insert(&mut self, mac: &Mac, now: Instant, v: V) -> Result<usize, V> {
        if self.free == NIL {
            return Err(v);
        }
        let slot = self.free as usize - 1;
        self.free = self.entries[slot].next;
        let mask = self.buckets.len() - 1;
        let mut b = self.home(mac);
        while self.buckets[b] != NIL {
            b = (b + 1) & mask;
        }
        self.buckets[b] = slot as u32 + 1;
        let e = &mut self.entries[slot];
        e.mac = *mac;
        e.last_seen = now;
        e.value = Some(v);
        self.push_tail(slot, List::New);
        self.count += 1;
        Ok(slot)
    }

    /// The slot a newcomer may take when the table is full, at `now`: the
    /// known peer silent longest if silent for `idle`, else the oldest new
    /// peer; `None` if every slot holds a live known peer.
    pub fn victim(&self, now: Instant, idle: Duration) -> Option<usize> {
        if self.known.head != NIL {
            let s = self.known.head as usize - 1;
            if now.since(self.entries[s].last_seen) >= idle {
                return Some(s);
            }
        }
        (self.new.head != NIL).then(|| self.new.head as usize - 1)
    }

    /// Where a newcomer goes at `now`: a free slot, the place of the peer
    /// [`PeerTable::victim`] names, or nowhere (every slot a live peer
    /// heard in a heartbeat within `idle`).
    pub fn room(&self, now: Instant, idle: Duration) -> Room {
        if self.count < self.capacity() {
            return Room::Free;
        }
        self.victim(now, idle).map_or(Room::Full, Room::Evict)
    }

    /// A peer silent for `age` or more at `now`, if any: the one silent
    /// longest on either list.
    pub fn aged(&self, now: Instant, age: Duration) -> Option<usize> {
        [self.known.head, self.new.head]
            .into_iter()
            .filter(|&h| h != NIL)
            .map(|h| h as usize - 1)
            .filter(|&s| now.since(self.entries[s].last_seen) >= age)
            .min_by_key(|&s| self.entries[s].last_seen)
    }

    /// Removes slot `slot`; returns its state.
    pub fn remove(&mut self, slot: usize) -> Option<V> {
        if self.entries.get(slot)?.list == List::Free {
            return None;
        }
        let mask = self.buckets.len() - 1;
        let mut b = self.home(&self.entries[slot].mac);
        while self.buckets[b] as usize != slot + 1 {
            b = (b + 1) & mask;
        }
        // Backward-shift deletion keeps every probe chain unbroken.
        let mut hole = b;
        let mut j = b;
        loop {
            j = (j + 1) & mask;
            let s = self.buckets[j];
            if s == NIL {
                break;
            }
            let home = self.home(&self.entries[s as usize - 1].mac);
            // Move `s` into the hole unless its home lies cyclically in (hole, j].
            let dist_home = j.wrapping_sub(home) & mask;
            let dist_hole = j.wrapping_sub(hole) & mask;
            if dist_home >= dist_hole {
                self.buckets[hole] = s;
                hole = j;
            }
        }
        self.buckets[hole] = NIL;
        self.unlink(slot);
        let e = &mut self.entries[slot];
        e.list = List::Free;
        e.next = self.free;
        e.prev = NIL;
        self.free = slot as u32 + 1;
        self.count -= 1;
        e.value.take()
    }
}

impl<P, B, V, E, K> super::claims::LinkMacs for PeerTable<V, E, K>
where
    V: DerefMut<Target = Peer<P, B>>,
    E: DerefMut<Target = [Entry<V>]>,
    K: DerefMut<Target = [u32]>,
{
    fn link_mac(&self, c: super::claims::Claim) -> Mac {
        self.get(c.slot).map_or([0; 6], |p| p.link_mac[c.link])
    }

    fn set_link_mac(&mut self, c: super::claims::Claim, mac: Mac) {
        if let Some(p) = self.get_mut(c.slot) {
            p.link_mac[c.link] = mac;
        }
    }
}

/// A MAC's hash under a per-device random `key`, for the open-addressing
/// tables (this one and `claims.rs`): a 64-bit finaliser (splitmix64).
pub(crate) fn mac_hash(mac: &Mac, key: u64) -> u64 {
    let mut v = [0u8; 8];
    v[..6].copy_from_slice(mac);
    let mut h = u64::from_le_bytes(v) ^ key;
    h = (h ^ (h >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
    h = (h ^ (h >> 27)).wrapping_mul(0x94d049bb133111eb);
    h ^ (h >> 31)
}

/// Buckets for a table of `slots` slots: the power of two at or above twice
/// as many.
pub const fn buckets_for(slots: usize) -> usize {
    (2 * if slots == 0 { 1 } else { slots }).next_power_of_two()
}

/// How long a known peer may be silent before a newcomer may take its
/// place: three missed heartbeats.
pub fn idle_limit(p: &Params) -> Duration {
    Duration(p.hbspan().0.saturating_mul(3))
}

/// How long any peer may be silent before it is forgotten: eight HBSPANs
/// (16 s by default), long past every endpoint's failure.
pub fn age_limit(p: &Params) -> Duration {
    Duration(p.hbspan().0.saturating_mul(8))
}

/// How fast frames from unknown source MACs may create peers: as many as
/// the table holds at once (a whole cluster heard within an HBSPAN of a
/// node's start), then at most the table's size per HBSPAN. A flood of
/// made-up sources then costs a bounded number of admissions, evictions
/// and answering heartbeats per second, whatever its rate. Peers we send
/// to are not limited: they are our own choice.
#[derive(Debug, Clone, Copy, Default)]
pub struct NewPeerBudget {
    /// Credit in nanoseconds of HBSPAN: a new peer costs HBSPAN / capacity,
    /// and credit grows by one per nanosecond, up to one HBSPAN.
    credit: u64,
    /// When the credit was last brought up to date (zero: never, full).
    at: Instant,
}

impl NewPeerBudget {
    /// Whether a peer may be created at `now` in a table of `capacity`
    /// slots (`hbspan`: the heartbeat period); takes its cost if so.
    pub fn take(&mut self, now: Instant, capacity: usize, hbspan: Duration) -> bool {
        let span = hbspan.0.max(1);
        self.credit = if self.at == Instant(0) {
            span
        } else {
            self.credit.saturating_add(now.since(self.at).0).min(span)
        };
        self.at = now;
        let cost = (span / capacity.max(1) as u64).max(1);
        if self.credit < cost {
            return false;
        }
        self.credit -= cost;
        true
    }
}

/// Where a newcomer to a [`PeerTable`] goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Room {
    /// A free slot.
    Free,
    /// The place of the peer in this slot, to be forgotten first.
    Evict(usize),
    /// Nowhere: the newcomer is refused.
    Full,
}

/// A FIFO of table slots over storage the caller allocates, one place per
/// slot (the caller's marks keep a slot from being queued twice), so that
/// pushing never allocates and popping is O(1).
pub struct SlotQueue<S> {
    ring: S,
    head: usize,
    len: usize,
}

impl<S: DerefMut<Target = [u32]>> SlotQueue<S> {
    /// An empty queue over `ring`, which bounds its length.
    pub fn new(ring: S) -> Self {
        SlotQueue {
            ring,
            head: 0,
            len: 0,
        }
    }

    /// Slots queued.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether none is queued.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Queues `slot`; false if the queue is full.
    pub fn push(&mut self, slot: u32) -> bool {
        let n = self.ring.len();
        if self.len == n {
            return false;
        }
        self.ring[(self.head + self.len) % n] = slot;
        self.len += 1;
        true
    }

    /// The slot queued first.
    pub fn pop(&mut self) -> Option<u32> {
        if self.len == 0 {
            return None;
        }
        let s = self.ring[self.head];
        self.head = (self.head + 1) % self.ring.len();
        self.len -= 1;
        Some(s)
    }
}
