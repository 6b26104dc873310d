// SPDX-License-Identifier: GPL-2.0

//! `/proc/net/ri2n/DEV`, in the spirit of `/proc/net/bonding/bond0`: the
//! device, its parameters, its slaves, and every peer's endpoints.

use crate::net::{Mac, MacFmt};
use crate::proto::detector::Endpoint;
use crate::proto::params::Param;
use crate::proto::time::Instant;
use crate::proto::uapi::EndpointState;
use crate::proto::window::RxStats;
use crate::proto::MAX_LINKS;
use crate::ri2n_dev::Ri2nDev;
use kernel::alloc::KVVec;
use kernel::prelude::*;
use kernel::seq_file::SeqFile;
use kernel::seq_print;

/// Writes the file.
pub(crate) fn show(dev: &Ri2nDev, m: &SeqFile) {
    let d = dev.data();
    let counted = dev.counted();
    let st = d.lock_state();
    let (now, wall) = (Instant(crate::net::ktime_ns()), crate::net::realtime_ms());
    seq_print!(
        m,
        "RI2N/DRV: protocol version {}\n",
        crate::proto::header::VERSION
    );
    // The ages below (`*_ms`) count back from this moment.
    seq_print!(m, "Clock: {} ms since the epoch\n\n", wall);
    seq_print!(m, "Device: {}\n", dev.name());
    seq_print!(
        m,
        "MAC: {}\nMTU: {}\nState: {}\n",
        MacFmt(&dev.addr()),
        dev.mtu(),
        if st.is_up() { "up" } else { "down" }
    );
    seq_print!(m, "Epoch: {:x}\n", d.epoch);
    let (on, key_id, accept_id) = key_ids(&st);
    seq_print!(
        m,
        "Keys: {} (key id {}, also accepted {})\n",
        on,
        key_id,
        accept_id
    );
    seq_print!(m, "Parameters:");
    for p in Param::ALL {
        seq_print!(m, " {}={}", p.spec().name, st.params().get(p));
    }
    seq_print!(m, "\n\n");
    for (l, s) in st.slaves() {
        let carrier = st.carrier() & (1 << l) != 0;
        seq_print!(
            m,
            "Slave {}: {} carrier {} changed_ms {}\n",
            l,
            s.name(),
            if carrier { "up" } else { "down" },
            st.carrier_age(l, now).as_ms()
        );
    }
    let s = &st.stats_with(counted);
    let up = d.gro.counts();
    seq_print!(
        m,
        "\nCounters: rx_packets {} tx_packets {} rx_dropped {} tx_dropped {} tx_no_link {} tx_queue_full {} tx_loop {} rx_malformed {} rx_not_for_us {} rx_unordered {} rx_bcast_copies {} rx_duplicates {} peers_new {} peers_refused {} peers_evicted {} peers_aged {} rx_nobuf {} rx_held_full {} hb_sent {} rx_auth_fail {} rx_replays {} rx_mode_mismatch {} slave_mac_taken {} rx_merged {} rx_merged_frames {} lock_rounds {} lock_contended {} tx_peer_contended {} sweeps {} up_now {} up_gro {}\n",
        s.rx_packets, s.tx_packets, s.rx_dropped, s.tx_dropped, s.tx_no_link, s.tx_queue_full, s.tx_loop,
        s.rx_malformed, s.rx_not_for_us, s.rx_unordered, s.rx_bcast_copies, s.rx_duplicates, s.peers_new,
        s.peers_refused, s.peers_evicted, s.peers_aged, s.rx_nobuf, s.rx_held_full, s.hb_sent, s.rx_auth_fail,
        s.rx_replays, s.rx_mode_mismatch, s.slave_mac_taken, s.rx_merged, s.rx_merged_frames, s.lock_rounds, s.lock_contended,
        s.tx_peer_contended, s.sweeps, up.now, up.polled
    );
    let (cap, bufs, bufs_max, held) = st.memory();
    seq_print!(
        m,
        "Peers: {} of {} (peer_mem), reorder buffers {} of {}, held_bytes {}\n",
        st.npeers(),
        cap,
        bufs,
        bufs_max,
        held
    );
    let mut links = [None; MAX_LINKS];
    for (l, sl) in st.slaves() {
        links[l] = Some(sl.name);
    }
    drop(st);
    if !for_each_peer(dev, |v, carrier| show_peer(m, v, &links, carrier, now)) {
        seq_print!(m, "\n(peers not shown: out of memory)\n");
    }
}

/// Calls `f` with a copy of every peer and the links with carrier then.
/// Peers are copied in chunks, the lock dropped between them, so that
/// reading thousands of peers never stalls the data path for the whole
/// dump. A peer added or forgotten meanwhile may be missed.
/// Returns false if memory for the copies was short (nothing was read).
fn for_each_peer(dev: &Ri2nDev, mut f: impl FnMut(&PeerView, u8)) -> bool {
    // About 1 KiB per peer: vmalloc'd if need be, never a high-order
    // kmalloc.
    let Ok(mut chunk) = KVVec::<PeerView>::with_capacity(CHUNK, GFP_KERNEL) else {
        return false;
    };
    let mut from = Some(0);
    while let Some(at) = from {
        let got = copy_peers(dev, at, &mut chunk);
        for v in chunk.iter() {
            f(v, got.carrier);
        }
        from = got.next;
    }
    true
}

/// Peers copied per lock hold.
const CHUNK: usize = 32;

/// What [`copy_peers`] saw besides the peers, at the same moment.
pub(crate) struct Copied {
    /// Links with carrier.
    pub(crate) carrier: u8,
    /// Links with a slave.
    pub(crate) links: u8,
    /// The peer table's generation (`State::peers_gen`).
    pub(crate) gen: u32,
    /// The slot to go on from; `None`: no peer after those copied.
    pub(crate) next: Option<usize>,
}

/// Table slots one hold of the state lock visits at most.
const SLOTS_PER_HOLD: usize = 4096;

/// Copies the peers in slots `from` on into `out` (emptied first), as
/// many as it has room for, under one hold of the state lock that visits
/// at most [`SLOTS_PER_HOLD`] slots: it may copy none, with more to come.
pub(crate) fn copy_peers(dev: &Ri2nDev, from: usize, out: &mut KVVec<PeerView>) -> Copied {
    out.clear();
    let room = out.capacity();
    let st = dev.data().lock_state();
    let next = st.peers_from(from, SLOTS_PER_HOLD, |slot, mac, tx, p| {
        let w = &p.rx.window;
        let mut endpoints = p.det.endpoints;
        for (l, e) in endpoints.iter_mut().enumerate() {
            e.tx_frames = e.tx_frames.wrapping_add(tx.unfolded(l));
        }
        // Within capacity: no allocation.
        let _ = out.push(
            PeerView {
                slot,
                mac: *mac,
                epoch: p.rx.epoch,
                tx_next: tx.tx_seq.0,
                rx_next: w.next_expected().0,
                held: w.held(),
                stats: w.stats,
                endpoints,
                peer_lossy: p.det.peer_lossy(),
                link_mac: p.link_mac,
            },
            GFP_ATOMIC,
        );
        out.len() < room
    });
    Copied {
        carrier: st.carrier(),
        links: st.slaves().fold(0, |m, (l, _)| m | 1 << l),
        gen: st.peers_gen(),
        next,
    }
}

/// What procfs and netlink show of a peer, copied under the lock.
pub(crate) struct PeerView {
    /// Its slot in the table: the dumps' order.
    pub(crate) slot: usize,
    pub(crate) mac: Mac,
    pub(crate) epoch: u64,
    pub(crate) tx_next: u32,
    pub(crate) rx_next: u32,
    pub(crate) held: usize,
    pub(crate) stats: RxStats,
    pub(crate) endpoints: [Endpoint; MAX_LINKS],
    /// Links the peer has out of use toward us for loss (it probes us).
    pub(crate) peer_lossy: u8,
    /// One-switch mode: the peer's slave MAC per link (zero: unknown).
    pub(crate) link_mac: [Mac; MAX_LINKS],
}

fn show_peer(
    m: &SeqFile,
    v: &PeerView,
    links: &[Option<[u8; 16]>; MAX_LINKS],
    carrier: u8,
    now: Instant,
) {
    let r = v.stats;
    seq_print!(m, "\nPeer {}:\n", MacFmt(&v.mac));
    seq_print!(
        m,
        "  epoch {:x} tx_next {} rx_next {} held {}\n",
        v.epoch,
        v.tx_next,
        v.rx_next,
        v.held
    );
    seq_print!(
        m,
        "  released in_order {} timeout {} loss {} flushes {} jumps {} gaps {} late {} late_loss {} duplicates {} restarts {} unbuffered {}\n",
        r.in_order, r.timeout, r.loss, r.flushes, r.jumps, r.gaps, r.late, r.late_loss, r.duplicates, r.resyncs, r.unbuffered
    );
    for (l, name) in named_links(links) {
        let e = &v.endpoints[l];
        let state = endpoint_state(e, carrier & (1 << l) != 0);
        seq_print!(
            m,
            "  endpoint {}: state {} counter {} last_rx_ms {} rx {} hb {} late {} fails {} recoveries {} changed_ms {} loss_bp {} lossy {}\n",
            name,
            state,
            e.counter,
            now.since(e.last_rx).as_ms(),
            e.rx_packets,
            e.rx_heartbeats,
            e.rx_late,
            e.fails,
            e.recoveries,
            now.since(e.changed).as_ms(),
            e.loss_bp,
            e.lossy_count
        );
    }
}

/// The present links, each with its slave's name (copied under the lock).
fn named_links(links: &[Option<[u8; 16]>; MAX_LINKS]) -> impl Iterator<Item = (usize, &str)> {
    links.iter().enumerate().filter_map(|(l, n)| {
        let n = n.as_ref()?;
        let len = n.iter().position(|&c| c == 0).unwrap_or(n.len());
        Some((l, core::str::from_utf8(&n[..len]).unwrap_or("?")))
    })
}

/// An endpoint's state, as both files name it.
fn endpoint_state(e: &Endpoint, carrier: bool) -> &'static str {
    EndpointState::of(carrier, e.failed, e.peer_failed, e.lossy).name()
}

/// Whether frames are sealed, and the ids of the keys (never the keys).
fn key_ids(st: &crate::ri2n_state::State) -> (&'static str, KeyId, KeyId) {
    let k = st.keys();
    (
        if k.on() { "on" } else { "off" },
        KeyId(k.sealing().map(|k| k.id())),
        KeyId(k.accepted().map(|k| k.id())),
    )
}

/// A key's id as procfs shows it: eight hex digits, or `none`.
struct KeyId(Option<u32>);

impl kernel::fmt::Display for KeyId {
    fn fmt(&self, f: &mut kernel::fmt::Formatter<'_>) -> kernel::fmt::Result {
        match self.0 {
            Some(id) => write!(f, "{:08x}", id),
            None => f.write_str("none"),
        }
    }
}
