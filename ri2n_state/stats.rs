// SPDX-License-Identifier: GPL-2.0

//! The device's counters.

use core::sync::atomic::{AtomicU64, Ordering};

/// One device counter. Written under the state lock, one writer at a
/// time, so a plain load and store suffice (no locked instruction);
/// atomic so that `ndo_get_stats64` reads it without the lock.
#[derive(Default)]
pub(crate) struct Counter(AtomicU64);

impl Counter {
    /// Adds `n`; the caller holds the state lock.
    #[inline]
    pub(crate) fn add(&self, n: u64) {
        self.0.store(
            self.0.load(Ordering::Relaxed).wrapping_add(n),
            Ordering::Relaxed,
        );
    }

    /// Takes `n` back; the caller holds the state lock.
    #[inline]
    pub(crate) fn sub(&self, n: u64) {
        self.0.store(
            self.0.load(Ordering::Relaxed).wrapping_sub(n),
            Ordering::Relaxed,
        );
    }

    /// Sets it to `n`; the caller holds the state lock.
    #[inline]
    pub(crate) fn set(&self, n: u64) {
        self.0.store(n, Ordering::Relaxed);
    }

    pub(crate) fn get(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

/// Declares the counters once: [`DevStats`], the live ones, and
/// [`DevCounts`], a copy of them at one moment.
macro_rules! dev_stats {
    ($($(#[$doc:meta])* $name:ident,)*) => {
        /// Device counters, shown by `ip -s link`, `ethtool -S` and procfs.
        #[derive(Default)]
        pub(crate) struct DevStats {
            $($(#[$doc])* pub(crate) $name: Counter,)*
        }

        /// The device counters at one moment.
        #[derive(Default, Clone, Copy)]
        pub(crate) struct DevCounts {
            $(pub(crate) $name: u64,)*
        }

        impl DevStats {
            /// The counters now (each read once; they may move meanwhile).
            pub(crate) fn counts(&self) -> DevCounts {
                DevCounts {
                    $($name: self.$name.get(),)*
                }
            }
        }
    };
}

dev_stats! {
    rx_packets,
    rx_bytes,
    tx_packets,
    tx_bytes,
    /// Frames dropped on receive, for any of the reasons below or while down.
    rx_dropped,
    /// Packets dropped on transmit (no usable link, no memory, no peer room).
    tx_dropped,
    /// Malformed RI2N frames (short, bad version, unknown kind).
    rx_malformed,
    /// RI2N frames addressed to another node.
    rx_not_for_us,
    /// Frames for another of ri2n0's addresses (macvlan) or, promiscuous,
    /// for another host: passed up unordered.
    rx_unordered,
    /// Second copies of broadcasts (sent on every link), dropped.
    rx_bcast_copies,
    /// Duplicates of held packets, dropped.
    rx_duplicates,
    /// Transmit drops because no link to the peer was usable.
    tx_no_link,
    /// Transmit drops because a link's queue was full.
    tx_queue_full,
    /// Transmits that re-entered ri2n from its own slave transmit (a tc
    /// mirred or redirect loop), dropped.
    tx_loop,
    /// New peers (MACs first heard from or sent to), admitted.
    peers_new,
    /// New peers refused: `peer_mem` is spent on live peers, no memory,
    /// or frames from new sources arrive faster than the table turns over.
    peers_refused,
    /// Peers whose place a newcomer took (never heard in a heartbeat, or
    /// silent for three HBSPANs) when the table was full.
    peers_evicted,
    /// Peers forgotten after eight silent HBSPANs.
    peers_aged,
    /// Packets that would have waited but went up at once: no reorder
    /// buffer was left in `peer_mem`.
    rx_nobuf,
    /// Windows flushed because the held packets reached `held_mem`.
    rx_held_full,
    /// Heartbeats sent.
    hb_sent,
    /// Frames refused before they touched any state: a tag that no key
    /// verifies, a sealed frame without a key here, or an unsealed one with
    /// a key (see core/auth.rs).
    rx_auth_fail,
    /// Verified frames refused as replays: a data number already handed
    /// up, a broadcast number older than the filter, a heartbeat counter
    /// not above the last, an epoch older than the peer's.
    rx_replays,
    /// Frames from a peer in the other mode (`one_switch`), dropped.
    rx_mode_mismatch,
    /// One-switch mode: slave MACs learned for a peer that another peer
    /// held (the later claim wins).
    slave_mac_taken,
    /// Packets a slave's GRO merged from frames that followed one another
    /// on its link (`rx_gro`), and the frames in them.
    rx_merged,
    rx_merged_frames,
    /// Times the state lock was taken, and of those, times another CPU
    /// held it first: what the state lock costs the data path.
    lock_rounds,
    lock_contended,
    /// Lockless transmits that found their peer's own lock held: by
    /// another CPU sending to that peer, or by receive or a timer on it
    /// (never by a sender to another peer).
    tx_peer_contended,
    /// Runs of the sweep (ri2n_hb.rs): at its deadlines, not a period.
    sweeps,
}

/// Per-link counters (frames sent: `LinkQueue::tx_packets`).
#[derive(Default, Clone, Copy)]
pub(crate) struct LinkStats {
    pub(crate) rx_packets: u64,
    pub(crate) tx_dropped: u64,
}
