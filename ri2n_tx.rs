// SPDX-License-Identifier: GPL-2.0

//! Transmit (driver paper §5.3): RI2N header, slave choice, `dev_queue_xmit`.
//!
//! Unicast goes to one link, chosen per peer round-robin among the links
//! that are up and not failed in either direction, skipping those whose
//! queue is stopped while another has room. Broadcast
//! and multicast (ARP, IPv6 ND) go out on every link that is up, numbered
//! per sender, so that ARP works while a dead link is not yet detected; the
//! receiver passes the first copy up (`core/dedup.rs`).

use crate::proto::header::{Header, Heartbeat, Kind, ETH_P_RI2N, HEADER_LEN, HEARTBEAT_LEN};
use crate::proto::seq::Seq;
use crate::proto::MAX_LINKS;
use crate::ri2n_glue::{self, Mac, NetDev, Skb};
use crate::{device, Ri2n};

const ETH_HLEN: usize = 14;

/// Where one frame goes.
enum Route {
    One(NetDev),
    All([Option<NetDev>; MAX_LINKS]),
}

/// `ndo_start_xmit`: consumes `skb` whatever happens. A GSO packet (ri2n0
/// offers TSO) is cut into its MTU-sized segments here, each numbered and
/// scheduled like any packet.
pub(crate) fn xmit(skb: Skb) {
    let Some(d) = device() else { return };
    // Until every packet is queued on its slave (see `Ri2n::tx_lock`).
    let _order = d.tx_lock.lock();
    if !skb.is_gso() {
        return xmit_one(d, skb);
    }
    match skb.gso_segments() {
        Ok(segs) => segs.for_each(|s| xmit_one(d, s)),
        Err(skb) => {
            drop(skb);
            d.state.lock().stats.tx_dropped += 1;
        }
    }
}

/// Sends one packet (no GSO) to its peer, or everywhere if broadcast.
/// Called with `tx_lock` held.
fn xmit_one(d: &Ri2n, mut skb: Skb) {
    if !skb.may_pull(ETH_HLEN as u32) {
        d.state.lock().stats.tx_dropped += 1;
        return;
    }
    let mut dst: Mac = [0; 6];
    dst.copy_from_slice(&skb.data()[..6]);
    let protocol = u16::from_be_bytes([skb.data()[12], skb.data()[13]]);
    let len = skb.len() as u64;
    let now = ri2n_glue::now();

    let (kind, seq, route) = {
        let mut guard = d.state.lock();
        let st = &mut *guard;
        // Counted as sent now, corrected below in the rare failure cases,
        // so that the lock is taken once per packet.
        st.stats.tx_packets += 1;
        st.stats.tx_bytes += len;
        if dst[0] & 1 != 0 {
            let seq = st.bcast_seq;
            st.bcast_seq = seq.next();
            let mut all = [None; MAX_LINKS];
            for (l, s) in st.slaves.iter().enumerate() {
                if let Some(s) = s {
                    if st.carrier & (1 << l) != 0 {
                        all[l] = Some(s.dev());
                    }
                }
            }
            (Kind::Bcast, seq, Route::All(all))
        } else {
            let carrier = st.links_up();
            let mut queues_ok = 0u8;
            for (l, s) in st.slaves.iter().enumerate() {
                if let Some(s) = s {
                    if !s.dev().tx_stopped() {
                        queues_ok |= 1 << l;
                    }
                }
            }
            let Some(slot) = st.peer_slot(&dst, d.nslaves, now) else {
                st.stats.uncount_tx(len);
                return;
            };
            let Some(peer) = st.peers[slot].as_deref_mut() else { return };
            // A stopped queue is skipped when another link has room (§5.3),
            // but is no reason to drop: the slave's qdisc still queues.
            let usable = peer.det.usable() & carrier;
            let Some(link) = peer.rr.pick(usable & queues_ok).or_else(|| peer.rr.pick(usable)) else {
                st.stats.uncount_tx(len);
                st.stats.tx_no_link += 1;
                return;
            };
            let seq = peer.tx_seq;
            peer.tx_seq = seq.next();
            let Some(slave) = st.slaves[link].as_ref().map(|s| s.dev()) else { return };
            (Kind::Data, seq, Route::One(slave))
        }
    };

    let mut hdr = [0u8; HEADER_LEN];
    Header { kind, protocol, seq }.encode(&mut hdr);
    if skb.insert_after_eth(ETH_P_RI2N, &hdr).is_err() {
        d.state.lock().stats.uncount_tx(len);
        return;
    }
    match route {
        Route::One(slave) => skb.xmit(slave, ETH_P_RI2N),
        Route::All(all) => {
            if !send_on_all(skb, &all) {
                d.state.lock().stats.uncount_tx(len);
            }
        }
    }
}

/// Sends `skb` on every link in `all` (clones but the last). False if none.
fn send_on_all(skb: Skb, all: &[Option<NetDev>; MAX_LINKS]) -> bool {
    let mut targets = all.iter().flatten().peekable();
    while let Some(&slave) = targets.next() {
        if targets.peek().is_none() {
            skb.xmit(slave, ETH_P_RI2N);
            return true;
        }
        if let Some(c) = skb.clone_skb() {
            c.xmit(slave, ETH_P_RI2N);
        }
    }
    false
}

/// Sends one heartbeat to `peer` on `slave` (link `link`): our epoch, our
/// next sequence number for the peer, `flags` and our `down` links.
pub(crate) fn send_heartbeat(d: &Ri2n, slave: NetDev, peer: &Mac, link: usize, next: Seq, flags: u8, down: u8) -> bool {
    // Ethernet's 60-byte minimum; the slave pads shorter frames anyway.
    let len = (ETH_HLEN + HEADER_LEN + HEARTBEAT_LEN).max(60);
    let Some(mut skb) = Skb::alloc(slave, len as u32) else { return false };
    skb.write(0, peer);
    skb.write(6, &d.dev.addr());
    skb.write(12, &ETH_P_RI2N.to_be_bytes());
    let mut h = [0u8; HEADER_LEN];
    Header { kind: Kind::Heartbeat, protocol: 0, seq: next }.encode(&mut h);
    skb.write(ETH_HLEN, &h);
    let mut b = [0u8; HEARTBEAT_LEN];
    Heartbeat { epoch: d.epoch, flags, link: link as u8, down }.encode(&mut b);
    skb.write(ETH_HLEN + HEADER_LEN, &b);
    skb.xmit(slave, ETH_P_RI2N);
    true
}
