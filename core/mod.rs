// SPDX-License-Identifier: GPL-2.0

//! The RI2N protocol core: every decision the driver makes, with no kernel
//! dependency.
//!
//! The kernel module mounts this directory as a module (`ri2n_drv.rs`), and
//! `tools/ri2n-core` mounts the same files as a `no_std` userspace crate where
//! they are unit-tested, property-tested, fuzzed and benchmarked. Nothing here
//! allocates, reads a clock or knows what a packet is: the caller passes the
//! time and an opaque packet handle (an sk_buff pointer in the kernel, a plain
//! value in tests).
//!
//! One mechanism per file, named as the driver paper names it:
//!
//! - [`header`]: the 8-byte RI2N header and the heartbeat payload (§5.2).
//! - [`auth`]: keyed frames: the tag, the keys, replay refusal.
//! - [`window`]: the per-peer reorder window, FAST_TOUT and MAXBUF (§4.5, §5.5).
//! - [`loss`]: early loss detection, "all NICs passed" (§4.6, Fig. 6).
//! - [`rx`]: a peer's receive side, the window and the loss detector together.
//! - [`tx`]: a peer's transmit side, numbering and link choice, under a lock of its own.
//! - [`detector`]: per-endpoint failure and recovery detection (§4.4, §5.7).
//! - [`sched`]: per-peer link choice over usable links, by bytes (§5.3).
//! - [`dedup`]: duplicate filter for broadcast frames sent on every link.
//! - [`peers`]: the bounded MAC-keyed peer table (§5.8).
//! - [`node`]: what a node does with one peer's frames, sweeps and
//!   heartbeats: the composition of the above that the driver, the
//!   simulator and the tests share.
//! - [`phases`]: when the heartbeat timer wakes, and which peers it serves.
//! - [`work`]: which peers the device's timers visit, and when.
//! - [`claims`]: one-switch mode's slave MACs, whose each one is.
//! - [`params`]: the tunables of Table 2, their units, defaults and limits.
//! - [`events`]: transitions queued for user space, bounded in rate.
//! - [`uapi`]: the numbers user space sees (netlink attributes).

#![forbid(unsafe_code)]

pub mod auth;
pub mod claims;
pub mod dedup;
pub mod detector;
pub mod events;
pub mod header;
pub mod loss;
pub mod node;
pub mod params;
pub mod peers;
pub mod phases;
pub mod rx;
pub mod sched;
pub mod seq;
pub mod time;
pub mod tx;
pub mod uapi;
pub mod window;
pub mod work;

/// Most slave links one `ri2n` device bonds (the `slaves=` limit).
pub const MAX_LINKS: usize = 8;

/// The links set in `mask`, lowest first: per packet, visiting only these
/// rather than all [`MAX_LINKS`] is measurably cheaper (scripts/insns-lab.sh).
pub fn links_in(mut mask: u8) -> impl Iterator<Item = usize> {
    core::iter::from_fn(move || {
        let l = (mask != 0).then(|| mask.trailing_zeros() as usize)?;
        mask &= mask - 1;
        Some(l)
    })
}
