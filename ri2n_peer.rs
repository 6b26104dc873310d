// SPDX-License-Identifier: GPL-2.0

//! Allocation of per-peer state and of the peer table, zeroed in place:
//! both are too large to build on a kernel stack, and all-zero bytes are
//! their empty state (tools/ri2n-core/tests/zeroed.rs checks that).

use crate::proto::peers::PeerTable;
use crate::ri2n_state::Peer;
use kernel::prelude::*;

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

/// A new peer: an empty window, loss detector and broadcast filter, a
/// detector over no links (the caller starts it). From the data path, so
/// GFP_ATOMIC; `None` when memory is short (the packet is dropped).
pub(crate) fn alloc_peer() -> Option<KBox<Peer>> {
    // SAFETY: Every field of `Peer` is an integer, a bool, an array or
    // struct of those, or `Option<Skb>` (`Skb` is a transparent `NonNull`,
    // so all-zero is `None`).
    unsafe { alloc_zeroed::<Peer>(GFP_ATOMIC) }.ok()
}

/// The peer table, zeroed (an empty table; set its key before use).
pub(crate) fn alloc_peer_table() -> Result<KBox<PeerTable>> {
    // SAFETY: `PeerTable` holds integers, bools and arrays of them; zeroed
    // it is an empty table.
    unsafe { alloc_zeroed(GFP_KERNEL) }
}
