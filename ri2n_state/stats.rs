// SPDX-License-Identifier: GPL-2.0

//! The device's counters.

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
