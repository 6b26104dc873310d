// SPDX-License-Identifier: GPL-2.0

//! Where peers and reorder buffers live, within the device's `peer_mem`
//! budget (`core/peers.rs`, `capacity`): peers in a slab cache of their
//! own (1.2 KiB each, not kmalloc's 2 KiB), the table in one kvmalloc'd
//! array sized at creation, reorder buffers (8 KiB) allocated when a
//! window first needs one and kept for reuse, up to the budget's share.

use crate::net::cache::{Cache, CacheBox};
use crate::net::skb::Skb;
use crate::proto::peers::{self, buckets_for, capacity, Entry, PeerTable};
use crate::proto::window::{Buffers, ReorderBuf, Span};
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
