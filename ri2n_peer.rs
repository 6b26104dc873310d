// SPDX-License-Identifier: GPL-2.0

//! Where peers and reorder buffers live, within the device's `peer_mem`
//! budget (`core/peers.rs`, `capacity`): peers in a slab cache of their
//! own (1.2 KiB each, not kmalloc's 2 KiB), the table in one kvmalloc'd
//! array sized at creation, reorder buffers (8 KiB) allocated when a
//! window first needs one and kept for reuse, up to the budget's share;
//! each slot's peer under a lock of its own, with a lookup that transmit
//! and receive read without the state lock ([`Slots`]).

use crate::net::cache::{Cache, CacheBox};
use crate::net::lock::{SpinLockBh, SpinLockBhGuard};
use crate::net::skb::Skb;
use crate::net::Mac;
use crate::proto::claims::{Claim, LinkMacs};
use crate::proto::params::{Params, NPARAMS};
use crate::proto::peers::{self, buckets_for, capacity, Entry, PeerTable};
use crate::proto::time::Instant;
use crate::proto::tx::PeerTx;
use crate::proto::window::{Buffers, ReorderBuf, Span};
use crate::proto::MAX_LINKS;
use core::sync::atomic::{AtomicBool, AtomicIsize, AtomicU32, AtomicU64, AtomicU8, Ordering};
use kernel::alloc::KVVec;
use kernel::prelude::*;
use kernel::sync::Arc;

/// A packet a slave's GRO merged from frames that followed one another on
/// a link (`Offload` in ri2n_tx.rs) carries the numbers of all of them; any
/// other carries one. A GSO packet a virtual wire delivered whole
/// (`SKB_GSO_DODGY`) left as one frame, with one number.
impl Span for Skb {
    fn span(&self) -> u32 {
        if self.is_gso() && !self.gso_dodgy() {
            u32::from(self.gso_segs().max(1))
        } else {
            1
        }
    }
}

/// A reorder buffer.
pub(crate) type Buf = KBox<ReorderBuf<Skb>>;
/// A peer's state.
pub(crate) type Peer = peers::Peer<Skb, Buf>;
/// A peer, as its slot's cell holds it.
pub(crate) type PeerBox = CacheBox<Peer>;
/// The peer table: MAC to slot, and which slots are used; the peers
/// themselves are in the slots' cells ([`Slots`]).
pub(crate) type Table = PeerTable<(), KVVec<Entry<()>>, KVVec<u32>>;

// The budget's arithmetic (core/peers.rs) counts these sizes.
const _: () = assert!(core::mem::size_of::<Peer>() == peers::PEER_BYTES);
const _: () = assert!(core::mem::size_of::<ReorderBuf<Skb>>() == peers::BUF_BYTES);
const _: () =
    assert!(core::mem::size_of::<Entry<()>>() == core::mem::size_of::<Entry<peers::SizedValue>>());

/// The reorder buffers of a device: at most `max`, allocated on first use
/// and kept.
pub(crate) struct BufPool {
    free: KVec<Buf>,
    total: usize,
    max: usize,
    /// Times a window wanted a buffer and none was left.
    pub(crate) refused: u64,
}

impl Buffers<Buf> for BufPool {
    fn get(&mut self) -> Option<Buf> {
        if let Some(b) = self.free.pop() {
            return Some(b);
        }
        if self.total >= self.max {
            self.refused += 1;
            return None;
        }
        // SAFETY: A `ReorderBuf` is slots of `Option<Skb>` (a transparent
        // `NonNull`: zero is `None`) and integers; zeroed it is empty
        // (tools/ri2n-core/tests/zeroed.rs).
        let b = unsafe { alloc_zeroed::<ReorderBuf<Skb>>(GFP_ATOMIC | __GFP_NOWARN) }.ok();
        if b.is_some() {
            self.total += 1;
        } else {
            self.refused += 1;
        }
        b
    }

    fn put(&mut self, buf: Buf) {
        // Room was reserved for every buffer there can be.
        if let Err(e) = self.free.push_within_capacity(buf) {
            drop(e);
            self.total -= 1;
        }
    }
}

impl BufPool {
    /// Buffers allocated (in use or free).
    pub(crate) fn total(&self) -> usize {
        self.total
    }

    /// The most there may be.
    pub(crate) fn max(&self) -> usize {
        self.max
    }
}

/// Allocates a zeroed `T`, in place.
///
/// # Safety
///
/// All-zero bytes must be a valid `T`.
unsafe fn alloc_zeroed<T>(flags: kernel::alloc::Flags) -> Result<KBox<T>> {
    let b = KBox::<T>::new_uninit(flags | __GFP_ZERO)?;
    // SAFETY: The memory is zeroed, which the caller guarantees is valid.
    Ok(unsafe { b.assume_init() })
}

/// The peer cache of one device, `ri2n_peer-N` (unique: with
/// `slab_nomerge` each cache has its own /sys/kernel/slab entry).
pub(crate) fn new_cache() -> Result<Arc<Cache<Peer>>> {
    static NEXT: core::sync::atomic::AtomicU32 = core::sync::atomic::AtomicU32::new(0);
    let n = NEXT.fetch_add(1, core::sync::atomic::Ordering::Relaxed);
    let mut name = [0u8; 24];
    let prefix = b"ri2n_peer-";
    name[..prefix.len()].copy_from_slice(prefix);
    let mut digits = [0u8; 10];
    let (mut v, mut nd) = (n, 0);
    loop {
        digits[nd] = b'0' + (v % 10) as u8;
        nd += 1;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    for i in 0..nd {
        name[prefix.len() + i] = digits[nd - 1 - i];
    }
    let len = prefix.len() + nd;
    let name = kernel::str::CStr::from_bytes_with_nul(&name[..=len]).map_err(|_| EINVAL)?;
    Cache::new(name)
}

/// A new peer, zeroed: an empty window, loss detector and broadcast
/// filter, a detector over no links (the caller starts it). From the data
/// path, so GFP_ATOMIC; `None` when memory is short.
pub(crate) fn alloc_peer(cache: &Arc<Cache<Peer>>) -> Option<PeerBox> {
    // SAFETY: Every field of `Peer` is an integer, a bool, an array or
    // struct of those, `Option<Skb>` or `Option<KBox<_>>` (non-null
    // pointers: all-zero is `None`); tools/ri2n-core/tests/zeroed.rs
    // checks that a zeroed one behaves as a new one.
    unsafe { Cache::alloc_zeroed(cache) }
}

/// An empty table and buffer pool for a budget of `bytes` (process
/// context); EINVAL if it holds less than one peer.
pub(crate) fn new_table(bytes: usize, key: u64) -> Result<(Table, BufPool)> {
    let (npeers, nbufs) = capacity(bytes).ok_or(EINVAL)?;
    let mut entries = KVVec::with_capacity(npeers, GFP_KERNEL_ACCOUNT)?;
    for _ in 0..npeers {
        entries.push(Entry::default(), GFP_KERNEL_ACCOUNT)?;
    }
    let buckets = KVVec::from_elem(0u32, buckets_for(npeers), GFP_KERNEL_ACCOUNT)?;
    let free = KVec::with_capacity(nbufs, GFP_KERNEL_ACCOUNT)?;
    Ok((
        PeerTable::new(entries, buckets, key),
        BufPool {
            free,
            total: 0,
            max: nbufs,
            refused: 0,
        },
    ))
}

/// A table slot's peer: its state and its transmit side, under one lock,
/// so that CPUs sending to or receiving from different peers never meet,
/// and the state lock's holder reaches a peer only through it.
///
/// # Invariants
///
/// `peer` is `Some` exactly while the slot holds a peer, and then `tx` is
/// that peer's (`tx.is(mac)`).
#[derive(Default)]
pub(crate) struct PeerCell {
    /// What transmit keeps (core/tx.rs).
    pub(crate) tx: PeerTx,
    /// Window, detector, heartbeat marks (core/peers.rs).
    pub(crate) peer: Option<PeerBox>,
    /// When receive last took a frame of the peer without the state lock
    /// (`ri2n_rx.rs`, the in-order way): the table's `last_seen`, which
    /// ages and evicts peers, catches up at the sweep, which visits every
    /// peer that way takes ([`PeerCell::swept`]).
    pub(crate) rx_at: Instant,
}

impl PeerCell {
    /// The peer's state, for `mac` (`None`: the slot holds another, or none).
    pub(crate) fn peer_for(&mut self, mac: &Mac) -> Option<(&mut PeerTx, &mut Peer)> {
        match self.peer.as_deref_mut() {
            Some(p) if self.tx.is(mac) => Some((&mut self.tx, p)),
            _ => None,
        }
    }

    /// Both halves, if the slot holds a peer.
    pub(crate) fn both(&mut self) -> Option<(&mut PeerTx, &mut Peer)> {
        let p = self.peer.as_deref_mut()?;
        Some((&mut self.tx, p))
    }
}

/// A slot's cell, under a lock of its own.
pub(crate) type SlotCell = SpinLockBh<PeerCell>;

// The budget (core/peers.rs, `SLOT_BYTES`) counts a cell in the kmalloc
// size class of a lock without debugging state.
const _: () = assert!(core::mem::size_of::<PeerCell>() + 4 <= peers::TX_CELL_BYTES);
#[cfg(not(any(CONFIG_DEBUG_SPINLOCK, CONFIG_DEBUG_LOCK_ALLOC)))]
const _: () = assert!(core::mem::size_of::<SlotCell>() <= peers::TX_CELL_BYTES);

/// The cells of a table's slots, and the lookup that reaches them without
/// the state lock, for transmit and receive. Made with the table and freed
/// with it, a grace period after it is replaced (`Ri2n::slots`).
///
/// The state lock's holder changes who a cell is for (a peer admitted or
/// forgotten, under the cell's lock) and the index; the lockless ways read
/// the index, lock the cell and check the MAC. The index is only a hint: a
/// miss, or a bucket taken by another peer, sends the packet the slow way,
/// under the state lock.
pub(crate) struct Slots {
    cells: KVVec<Pin<KBox<SlotCell>>>,
    /// Two buckets per MAC (of its hash's halves), each 0 or a slot + 1
    /// in the low `SLOT_BITS`, a tag of the MAC in the other 12 bits:
    /// a bucket another peer's MAC hashes to is passed over without its
    /// lock, but for one time in 4096.
    index: KVVec<AtomicU32>,
    key: u64,
    /// Links with carrier (the state's, published).
    pub(crate) carrier: AtomicU8,
    /// Of those, links transmit found without carrier and told the sweep
    /// of: it is woken once, not per packet (cleared when `carrier` is
    /// published again).
    pub(crate) carrier_told: AtomicU8,
    /// Whether unicast may go without the state lock: not while the keys
    /// change (`set_key`: the lockless way reads `Ri2n::offload_keys`) and
    /// not in one-switch mode (slave MACs).
    pub(crate) lockless: AtomicBool,
    /// Whether receive may take data without the state lock: as
    /// `lockless`, and ri2n0 up.
    pub(crate) rx_lockless: AtomicBool,
    /// `Params::level_after` in ns: when an idle link is level again (`RoundRobin::at`).
    pub(crate) idle_ns: AtomicU64,
    /// The parameters, for receive without the state lock (the state's,
    /// published).
    pub(crate) params: SharedParams,
    /// When the sweep timer is armed to fire (ns, while up): the earliest
    /// deadline the last sweep found, or one receive found since. Only
    /// ever pulled earlier (`fetch_min`), but by the sweep itself, which
    /// sets it to `u64::MAX` when it starts and takes the minimum with what
    /// it found when it ends, so that a receive's pull meanwhile, with or
    /// without the state lock, is kept.
    pub(crate) sweep_at: AtomicU64,
    /// How often each lossy link is probed (ns, `loss_probe_every` of the
    /// last sweep's count), for a peer's next deadline.
    pub(crate) lossy_every_ns: AtomicU64,
    /// Times [`Slots::find`] found the cell locked (`tx_peer_contended`);
    /// written only then, and on a line of its own, off the one every
    /// sender reads.
    pub(crate) contended: Contended,
    /// Per link, what receive counts without the state lock.
    pub(crate) link_rx: [LinkRx; MAX_LINKS],
    /// Truesize of every packet held in the windows (`held_mem`).
    pub(crate) held: Held,
    /// A window was refused a reorder buffer since the last sweep: those
    /// that receive without the state lock let keep theirs while idle
    /// (`PeerRx::data_unpooled`) give them back at once.
    pub(crate) bufs_short: AtomicBool,
    /// Sealed data frames the locked way has found fresh but not yet given
    /// its peer's window (`State::rx_frame`, which takes the peer's cell
    /// twice): receive without the lock takes no sealed frame meanwhile,
    /// lest it take the number a replay was just found fresh for.
    pub(crate) sealed_judged: AtomicU32,
}

/// Bytes held in the windows, which receive changes with or without the
/// state lock, on a line of its own: only a frame that is held, or that
/// releases others, touches it (not one that goes straight up, nor one
/// that releases what its own size held).
#[repr(align(64))]
#[derive(Default)]
pub(crate) struct Held(AtomicIsize);

impl Held {
    pub(crate) fn add(&self, n: usize) {
        self.0.fetch_add(n as isize, Ordering::Relaxed);
    }

    /// Adds `n`, which may be below zero.
    pub(crate) fn change(&self, n: isize) {
        self.0.fetch_add(n, Ordering::Relaxed);
    }

    pub(crate) fn sub(&self, n: usize) {
        self.0.fetch_sub(n as isize, Ordering::Relaxed);
    }

    /// The bytes held (a release counted before its hold, on another CPU,
    /// may take it below zero for a moment).
    pub(crate) fn get(&self) -> usize {
        self.0.load(Ordering::Relaxed).max(0) as usize
    }

    /// Nothing is held (every window drained).
    pub(crate) fn clear(&self) {
        self.0.store(0, Ordering::Relaxed);
    }
}

/// A counter on a cache line of its own.
#[repr(align(64))]
pub(crate) struct Contended(pub(crate) AtomicU64);

/// One link's receive counters kept outside the state lock, on a cache
/// line of their own. A NIC's ri2n frames are received on one CPU at a
/// time: RSS and RPS hash IP flows, and ethertype 0x1004 is none, so the
/// NIC puts them all on one queue, whose interrupt's CPU takes them; the
/// line moves only when that interrupt does.
#[repr(align(64))]
#[derive(Default)]
pub(crate) struct LinkRx {
    /// Frames received (a merged packet's each).
    pub(crate) packets: AtomicU64,
    /// Packets a slave's GRO merged, and the frames they were.
    pub(crate) merged: AtomicU64,
    pub(crate) merged_frames: AtomicU64,
}

/// The parameters, read without a lock: a sequence count around the
/// words, odd while the state lock's holder changes them (a seqlock), so
/// that a reader never takes half of a change (`lthresh < hthresh`).
pub(crate) struct SharedParams {
    seq: AtomicU32,
    words: [AtomicU32; NPARAMS],
}

impl SharedParams {
    fn new(p: &Params) -> SharedParams {
        let w = p.words();
        SharedParams {
            seq: AtomicU32::new(0),
            words: core::array::from_fn(|i| AtomicU32::new(w[i])),
        }
    }

    /// Publishes `p`. Under the state lock (one writer).
    pub(crate) fn set(&self, p: &Params) {
        let s = self.seq.load(Ordering::Relaxed);
        self.seq.store(s.wrapping_add(1), Ordering::Relaxed);
        // The odd count is seen before any new word.
        core::sync::atomic::fence(Ordering::Release);
        for (w, v) in self.words.iter().zip(p.words()) {
            w.store(v, Ordering::Relaxed);
        }
        self.seq.store(s.wrapping_add(2), Ordering::Release);
    }

    /// The parameters as last published, whole.
    pub(crate) fn get(&self) -> Params {
        loop {
            let s = self.seq.load(Ordering::Acquire);
            if s & 1 != 0 {
                core::hint::spin_loop();
                continue;
            }
            let w: [u32; NPARAMS] = core::array::from_fn(|i| self.words[i].load(Ordering::Relaxed));
            // The words are read before the count is checked again.
            core::sync::atomic::fence(Ordering::Acquire);
            if self.seq.load(Ordering::Relaxed) == s {
                return Params::from_words(w);
            }
        }
    }
}

impl Slots {
    /// For a table of `slots` slots, hashing with `key` (process context).
    pub(crate) fn new(slots: usize, key: u64) -> Result<KBox<Slots>> {
        // `peer_mem`'s most (1 GiB) holds about 533,000.
        if slots >= 1 << SLOT_BITS {
            return Err(EINVAL);
        }
        let mut cells = KVVec::with_capacity(slots, GFP_KERNEL_ACCOUNT)?;
        for _ in 0..slots {
            cells.push(
                KBox::pin_init(
                    crate::new_spinlock_bh!(PeerCell::default(), "ri2n_peer"),
                    GFP_KERNEL_ACCOUNT,
                )?,
                GFP_KERNEL_ACCOUNT,
            )?;
        }
        // The power of two at or below the budget's count, so at least two
        // buckets per slot.
        let want = slots.max(1) * peers::TX_INDEX_PER_SLOT;
        let n = if want.is_power_of_two() {
            want
        } else {
            want.next_power_of_two() / 2
        };
        let mut index = KVVec::with_capacity(n, GFP_KERNEL_ACCOUNT)?;
        for _ in 0..n {
            index.push(AtomicU32::new(0), GFP_KERNEL_ACCOUNT)?;
        }
        let slots = Slots {
            cells,
            index,
            key,
            carrier: AtomicU8::new(0),
            carrier_told: AtomicU8::new(0),
            lockless: AtomicBool::new(false),
            rx_lockless: AtomicBool::new(false),
            idle_ns: AtomicU64::new(0),
            params: SharedParams::new(&Params::default()),
            sweep_at: AtomicU64::new(0),
            lossy_every_ns: AtomicU64::new(0),
            contended: Contended(AtomicU64::new(0)),
            link_rx: Default::default(),
            held: Held::default(),
            bufs_short: AtomicBool::new(false),
            sealed_judged: AtomicU32::new(0),
        };
        Ok(KBox::new(slots, GFP_KERNEL_ACCOUNT)?)
    }

    /// A receive found its peer due for the sweep (a window that started
    /// holding, a link that fell silent while this one delivers): pulls the
    /// sweep to when `due` says, never sooner than `earliest`, a period from
    /// now. Returns that time if the sweep was armed for later. A sweep
    /// armed by `earliest` needs no asking: under traffic the common case,
    /// which spares `due` (`Peer::next_due`, most of a frame's cost here
    /// otherwise). Either way of receiving, with the state lock or without.
    #[inline(always)]
    pub(crate) fn pull_sweep_for(
        &self,
        earliest: Instant,
        due: impl FnOnce() -> Option<Instant>,
    ) -> Option<Instant> {
        if self.sweep_at.load(Ordering::Relaxed) <= earliest.0 {
            return None;
        }
        let at = due()?.max(earliest);
        // Read again first: a due no sooner than armed, most frames' under
        // traffic, is then no locked operation, as `fetch_min` would be.
        let sooner = self.sweep_at.load(Ordering::Relaxed) > at.0;
        (sooner && self.sweep_at.fetch_min(at.0, Ordering::Relaxed) > at.0).then_some(at)
    }

    /// Slot `slot`'s cell.
    pub(crate) fn cell(&self, slot: usize) -> Option<&SlotCell> {
        self.cells.get(slot).map(|c| &**c)
    }

    /// `mac`'s two buckets, and the tag its entries carry.
    fn buckets(&self, mac: &Mac) -> ([usize; 2], u32) {
        let h = peers::mac_hash(mac, self.key);
        let mask = self.index.len() - 1;
        // From a hash of its own: the buckets' bits say nothing of it.
        let tag = peers::mac_hash(mac, !self.key) as u32 >> SLOT_BITS;
        (
            [h as usize & mask, (h >> 32) as usize & mask],
            tag << SLOT_BITS,
        )
    }

    /// The slot of `mac`'s peer and its cell, locked, if the index has it;
    /// a cell found locked counts in `contended` if `count` (transmit's).
    pub(crate) fn find(
        &self,
        mac: &Mac,
        count: bool,
    ) -> Option<(usize, SpinLockBhGuard<'_, PeerCell>)> {
        let (buckets, tag) = self.buckets(mac);
        for b in buckets {
            let v = self.index[b].load(Ordering::Relaxed);
            if v & !SLOT_MASK != tag {
                continue;
            }
            let s = (v & SLOT_MASK) as usize;
            let Some(cell) = s.checked_sub(1).and_then(|s| self.cell(s)) else {
                continue;
            };
            let c = cell.try_lock().unwrap_or_else(|| {
                if count {
                    self.contended.0.fetch_add(1, Ordering::Relaxed);
                }
                cell.lock()
            });
            if c.tx.is(mac) {
                return Some((s - 1, c));
            }
        }
        None
    }

    /// Notes that `mac`'s peer is in `slot`: in a free bucket of its two,
    /// else in the first (its peer goes the slow way until noted again).
    /// Under the state lock.
    pub(crate) fn note(&self, mac: &Mac, slot: usize) {
        let ([a, b], tag) = self.buckets(mac);
        let v = tag | (slot as u32 + 1);
        let (va, vb) = (
            self.index[a].load(Ordering::Relaxed),
            self.index[b].load(Ordering::Relaxed),
        );
        if va == v || vb == v {
            return;
        }
        let at = if va != 0 && vb == 0 { b } else { a };
        self.index[at].store(v, Ordering::Relaxed);
    }

    /// Forgets that `mac`'s peer is in `slot`. Under the state lock.
    pub(crate) fn unnote(&self, mac: &Mac, slot: usize) {
        let (buckets, tag) = self.buckets(mac);
        for b in buckets {
            let _ = self.index[b].compare_exchange(
                tag | (slot as u32 + 1),
                0,
                Ordering::Relaxed,
                Ordering::Relaxed,
            );
        }
    }
}

/// Bits of an index entry for the slot + 1; the tag has the rest.
const SLOT_BITS: u32 = 20;
const SLOT_MASK: u32 = (1 << SLOT_BITS) - 1;

/// The peers' slave MACs (one-switch mode), in their cells, for the claims
/// (core/claims.rs). Each call locks the claim's cell: the caller holds
/// none.
pub(crate) struct CellMacs<'a>(pub(crate) &'a Slots);

impl LinkMacs for CellMacs<'_> {
    fn link_mac(&self, c: Claim) -> Mac {
        self.0
            .cell(c.slot)
            .and_then(|cell| cell.lock().peer.as_ref().map(|p| p.link_mac[c.link]))
            .unwrap_or([0; 6])
    }

    fn set_link_mac(&mut self, c: Claim, mac: Mac) {
        if let Some(cell) = self.0.cell(c.slot) {
            if let Some(p) = cell.lock().peer.as_mut() {
                p.link_mac[c.link] = mac;
            }
        }
    }
}
