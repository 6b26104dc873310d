// SPDX-License-Identifier: GPL-2.0

//! Where peers and reorder buffers live, within the device's `peer_mem`
//! budget (`core/peers.rs`, `capacity`): peers in a slab cache of their
//! own (1.2 KiB each, not kmalloc's 2 KiB), the table in one kvmalloc'd
//! array sized at creation, reorder buffers (8 KiB) allocated when a
//! window first needs one and kept for reuse, up to the budget's share;
//! each slot's transmit side under a lock of its own, with a lookup that
//! transmit reads without the state lock ([`TxSlots`]).

use crate::net::cache::{Cache, CacheBox};
use crate::net::lock::{SpinLockBh, SpinLockBhGuard};
use crate::net::skb::Skb;
use crate::net::Mac;
use crate::proto::peers::{self, buckets_for, capacity, Entry, PeerTable};
use crate::proto::tx::PeerTx;
use crate::proto::window::{Buffers, ReorderBuf, Span};
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, Ordering};
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
            self.gso_segs().max(1) as u32
        } else {
            1
        }
    }
}

/// A reorder buffer.
pub(crate) type Buf = KBox<ReorderBuf<Skb>>;
/// A peer's state.
pub(crate) type Peer = peers::Peer<Skb, Buf>;
/// A peer, as the table holds it.
pub(crate) type PeerBox = CacheBox<Peer>;
/// The peer table.
pub(crate) type Table = PeerTable<PeerBox, KVVec<Entry<PeerBox>>, KVVec<u32>>;

// The budget's arithmetic (core/peers.rs) counts these sizes.
const _: () = assert!(core::mem::size_of::<Peer>() == peers::PEER_BYTES);
const _: () = assert!(core::mem::size_of::<ReorderBuf<Skb>>() == peers::BUF_BYTES);
const _: () = assert!(core::mem::size_of::<Entry<PeerBox>>() == core::mem::size_of::<Entry<peers::SizedValue>>());

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
    let mut entries = KVVec::with_capacity(npeers, GFP_KERNEL)?;
    for _ in 0..npeers {
        entries.push(Entry::default(), GFP_KERNEL)?;
    }
    let buckets = KVVec::from_elem(0u32, buckets_for(npeers), GFP_KERNEL)?;
    let free = KVec::with_capacity(nbufs, GFP_KERNEL)?;
    Ok((PeerTable::new(entries, buckets, key), BufPool { free, total: 0, max: nbufs, refused: 0 }))
}

/// A slot's transmit side, under a lock of its own (core/tx.rs).
pub(crate) type TxCell = SpinLockBh<PeerTx>;

// The budget (core/peers.rs, `SLOT_BYTES`) counts a cell in the kmalloc
// size class of a lock without debugging state.
const _: () = assert!(core::mem::size_of::<PeerTx>() + 4 <= peers::TX_CELL_BYTES);
#[cfg(not(any(CONFIG_DEBUG_SPINLOCK, CONFIG_DEBUG_LOCK_ALLOC)))]
const _: () = assert!(core::mem::size_of::<TxCell>() <= peers::TX_CELL_BYTES);

/// The transmit sides of a table's slots, and the lookup that reaches them
/// without the state lock, so that CPUs sending to different peers never
/// meet (issue 13). Made with the table and freed with it, a grace period
/// after it is replaced (`Ri2n::tx`).
///
/// The state lock's holder changes who a cell is for (a peer admitted or
/// forgotten, under the cell's lock) and the index; transmit reads the
/// index, locks the cell and checks the MAC. The index is only a hint: a
/// miss, or a bucket taken by another peer, sends the packet the slow way,
/// under the state lock.
pub(crate) struct TxSlots {
    cells: KVVec<Pin<KBox<TxCell>>>,
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
    /// Whether unicast may go without the state lock: no key (sealing
    /// needs the keys) and not one-switch mode (slave MACs).
    pub(crate) lockless: AtomicBool,
    /// `Params::level_after` in ns: when an idle link is level again (`RoundRobin::at`).
    pub(crate) idle_ns: AtomicU64,
    /// Times [`TxSlots::find`] found the cell locked (`tx_peer_contended`);
    /// written only then, and on a line of its own, off the one every
    /// sender reads.
    pub(crate) contended: Contended,
}

/// A counter on a cache line of its own.
#[repr(align(64))]
pub(crate) struct Contended(pub(crate) AtomicU64);

impl TxSlots {
    /// For a table of `slots` slots, hashing with `key` (process context).
    pub(crate) fn new(slots: usize, key: u64) -> Result<KBox<TxSlots>> {
        // `peer_mem`'s most (1 GiB) holds about 533,000.
        if slots >= 1 << SLOT_BITS {
            return Err(EINVAL);
        }
        let mut cells = KVVec::with_capacity(slots, GFP_KERNEL)?;
        for _ in 0..slots {
            cells.push(KBox::pin_init(crate::new_spinlock_bh!(PeerTx::default(), "ri2n_peer_tx"), GFP_KERNEL)?, GFP_KERNEL)?;
        }
        // The power of two at or below the budget's count, so at least two
        // buckets per slot.
        let want = slots.max(1) * peers::TX_INDEX_PER_SLOT;
        let n = if want.is_power_of_two() { want } else { want.next_power_of_two() / 2 };
        let mut index = KVVec::with_capacity(n, GFP_KERNEL)?;
        for _ in 0..n {
            index.push(AtomicU32::new(0), GFP_KERNEL)?;
        }
        let slots = TxSlots {
            cells,
            index,
            key,
            carrier: AtomicU8::new(0),
            carrier_told: AtomicU8::new(0),
            lockless: AtomicBool::new(false),
            idle_ns: AtomicU64::new(0),
            contended: Contended(AtomicU64::new(0)),
        };
        Ok(KBox::new(slots, GFP_KERNEL)?)
    }

    /// Slot `slot`'s cell.
    pub(crate) fn cell(&self, slot: usize) -> Option<&TxCell> {
        self.cells.get(slot).map(|c| &**c)
    }

    /// `mac`'s two buckets, and the tag its entries carry.
    fn buckets(&self, mac: &Mac) -> ([usize; 2], u32) {
        let h = peers::mac_hash(mac, self.key);
        let mask = self.index.len() - 1;
        // From a hash of its own: the buckets' bits say nothing of it.
        let tag = peers::mac_hash(mac, !self.key) as u32 >> SLOT_BITS;
        ([h as usize & mask, (h >> 32) as usize & mask], tag << SLOT_BITS)
    }

    /// The slot of `mac`'s peer and its cell, locked, if the index has it.
    pub(crate) fn find(&self, mac: &Mac) -> Option<(usize, SpinLockBhGuard<'_, PeerTx>)> {
        let (buckets, tag) = self.buckets(mac);
        for b in buckets {
            let v = self.index[b].load(Ordering::Relaxed);
            if v & !SLOT_MASK != tag {
                continue;
            }
            let s = (v & SLOT_MASK) as usize;
            let Some(cell) = s.checked_sub(1).and_then(|s| self.cell(s)) else { continue };
            let c = cell.try_lock().unwrap_or_else(|| {
                self.contended.0.fetch_add(1, Ordering::Relaxed);
                cell.lock()
            });
            if c.is(mac) {
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
        let (va, vb) = (self.index[a].load(Ordering::Relaxed), self.index[b].load(Ordering::Relaxed));
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
            let _ = self.index[b].compare_exchange(tag | (slot as u32 + 1), 0, Ordering::Relaxed, Ordering::Relaxed);
        }
    }
}

/// Bits of an index entry for the slot + 1; the tag has the rest.
const SLOT_BITS: u32 = 20;
const SLOT_MASK: u32 = (1 << SLOT_BITS) - 1;
