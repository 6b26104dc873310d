// SPDX-License-Identifier: GPL-2.0

//! The RI2N protocol core as a userspace crate: the very files the kernel
//! module compiles (`core/`), mounted here unchanged.

#![no_std]
#![forbid(unsafe_code)]

#[path = "../../core/mod.rs"]
mod proto;

pub use proto::*;

extern crate alloc;

#[path = "pair.rs"]
pub mod pair;

/// Heap storage for the core's tables and buffers, as the tests, the
/// fuzzer, the benchmarks and the simulator use them (the kernel has its
/// own: ri2n_peer.rs).
pub mod heap {
    use crate::peers::{buckets_for, Entry, PeerTable};
    use crate::window::{Buffers, ReorderBuf};
    use alloc::boxed::Box;
    use alloc::vec::Vec;

    /// A reorder buffer on the heap.
    pub type Buf<P> = Box<ReorderBuf<P>>;

    /// Reorder buffers from the heap, at most `max` at a time.
    pub struct HeapBufs<P> {
        free: Vec<Buf<P>>,
        /// Buffers out (held by windows).
        pub out: usize,
        /// Most out at once so far.
        pub peak: usize,
        /// Most out at once allowed.
        pub max: usize,
    }

    impl<P> HeapBufs<P> {
        /// At most `max` buffers.
        pub fn new(max: usize) -> Self {
            HeapBufs {
                free: Vec::new(),
                out: 0,
                peak: 0,
                max,
            }
        }
    }

    impl<P> Default for HeapBufs<P> {
        fn default() -> Self {
            Self::new(usize::MAX)
        }
    }

    impl<P> Buffers<Buf<P>> for HeapBufs<P> {
        fn get(&mut self) -> Option<Buf<P>> {
            if self.out >= self.max {
                return None;
            }
            self.out += 1;
            self.peak = self.peak.max(self.out);
            Some(self.free.pop().unwrap_or_default())
        }
        fn put(&mut self, b: Buf<P>) {
            self.out -= 1;
            self.free.push(b);
        }
    }

    /// A peer table on the heap.
    pub type HeapTable<V> = PeerTable<V, Vec<Entry<V>>, Vec<u32>>;

    /// An empty table of `slots` slots.
    pub fn table<V>(slots: usize, key: u64) -> HeapTable<V> {
        let entries = (0..slots).map(|_| Entry::default()).collect();
        let buckets = alloc::vec![0u32; buckets_for(slots)];
        PeerTable::new(entries, buckets, key)
    }
}
