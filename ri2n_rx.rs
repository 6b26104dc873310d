// SPDX-License-Identifier: GPL-2.0

//! Receive (driver paper §5.4, §5.5): the ethertype 0x1004 handler.
//!
//! Checks the frame, strips the RI2N header and makes the packet look as if
//! ri2n0 had received it, counts it on its endpoint (peer = source MAC,
//! link = receiving slave), then hands it to the peer's reorder window
//! (data), the broadcast filter (broadcast), or the failure detector
//! (heartbeat). Packets reach the stack through ri2n0's GRO cells, in order.

use kernel::prelude::*;
use crate::proto::detector::Transitions;
use crate::proto::header::{Header, Heartbeat, Kind, HB_PROBE, HEADER_LEN, HEARTBEAT_LEN};
use crate::proto::rx::Epoch;
use crate::ri2n_glue::{Mac, MacFmt, NetDev, Skb};
use crate::ri2n_hb;
use crate::{device, DevStats, Ri2n};

const NET_RX_SUCCESS: i32 = 0;
const NET_RX_DROP: i32 = 1;

/// Hands `skb` to the stack, counting it.
fn deliver(stats: &mut DevStats, skb: Skb) {
    stats.rx_packets += 1;
    stats.rx_bytes += skb.len() as u64;
    skb.hand_up();
}

/// The packet handler: consumes `skb`, received on `dev`.
pub(crate) fn receive(mut skb: Skb, dev: NetDev) -> i32 {
    let Some(d) = device() else { return NET_RX_DROP };
    let hdr = if skb.may_pull(HEADER_LEN as u32) { Header::decode(skb.data()) } else { Err(crate::proto::header::DecodeError::Short) };
    let hdr = match hdr {
        Ok(h) => h,
        Err(e) => return drop_malformed(d, dev, e.reason()),
    };
    let addrs = skb.mac_addrs();
    let (dst, src): (Mac, Mac) = (addrs[..6].try_into().unwrap_or([0; 6]), addrs[6..].try_into().unwrap_or([0; 6]));
    let ours = d.dev.addr();
    let hb = match hdr.kind {
        Kind::Heartbeat => {
            let p = if skb.may_pull((HEADER_LEN + HEARTBEAT_LEN) as u32) {
                Heartbeat::decode(&skb.data()[HEADER_LEN..])
            } else {
                Err(crate::proto::header::DecodeError::Short)
            };
            match p {
                Ok(p) => Some(p),
                Err(e) => return drop_malformed(d, dev, e.reason()),
            }
        }
        _ => {
            if skb.strip_and_retarget(hdr.protocol, d.dev).is_err() {
                d.state.lock().stats.rx_dropped += 1;
                return NET_RX_DROP;
            }
            None
        }
    };
    let now = crate::ri2n_glue::now();

    let mut guard = d.state.lock();
    let st = &mut *guard;
    if !st.up {
        st.stats.rx_dropped += 1;
        return NET_RX_DROP;
    }
    let Some(link) = st.link_of(dev) else {
        st.stats.rx_not_slave += 1;
        st.stats.rx_dropped += 1;
        return NET_RX_DROP;
    };
    if (dst != ours && dst[0] & 1 == 0) || src[0] & 1 != 0 || src == ours {
        st.stats.rx_not_for_us += 1;
        st.stats.rx_dropped += 1;
        return NET_RX_DROP;
    }
    let params = st.params;
    let carrier = st.carrier;
    let nslaves = d.nslaves;
    let Some(slot) = st.peer_slot(&src, nslaves, now) else {
        st.stats.rx_dropped += 1;
        return NET_RX_DROP;
    };
    let Some(peer) = st.peers[slot].as_deref_mut() else { return NET_RX_DROP };
    let stats = &mut st.stats;
    let mut kick = false;
    let t = match (hdr.kind, hb) {
        (Kind::Heartbeat, Some(hb)) => {
            let t = peer.det.heartbeat(link, now, hb.link as usize, hb.down, &params);
            let active = peer.det.usable() & carrier;
            if peer.rx.heartbeat(link, hdr.seq, hb.epoch, now, active, &params, &mut |s| deliver(stats, s)) == Epoch::Restarted {
                pr_info!("{}: peer {} restarted (new epoch {:08x})\n", d.dev.name_str(), MacFmt(&src), hb.epoch);
            }
            if hb.flags & HB_PROBE != 0 {
                peer.hb_pending |= 1 << link;
                kick = true;
            }
            skb.consume();
            t
        }
        (Kind::Bcast, _) => {
            let t = peer.det.data(link, now, &params);
            if peer.rx.bcast.accept(hdr.seq) {
                deliver(stats, skb);
            } else {
                stats.rx_bcast_copies += 1;
                drop(skb);
            }
            t
        }
        _ => {
            let t = peer.det.data(link, now, &params);
            let active = peer.det.usable() & carrier;
            if let Some(dup) = peer.rx.data(link, hdr.seq, skb, now, active, &params, &mut |s| deliver(stats, s)) {
                stats.rx_duplicates += 1;
                stats.rx_dropped += 1;
                drop(dup);
            }
            t
        }
    };
    if !t.is_empty() {
        if t.failed | t.recovered != 0 {
            // Tell the peer at once, on every link that is up: our
            // heartbeats' down mask changed, and a one-way failure must stop
            // its sending too.
            peer.hb_pending |= carrier;
            kick = true;
        }
        log_transitions(d, &src, &t, now, peer.det.endpoints.as_slice());
    }
    drop(guard);
    if kick {
        ri2n_hb::kick();
    }
    NET_RX_SUCCESS
}

fn drop_malformed(d: &Ri2n, dev: NetDev, why: &str) -> i32 {
    let mut st = d.state.lock();
    if st.link_of(dev).is_none() {
        st.stats.rx_not_slave += 1;
    } else {
        st.stats.rx_malformed += 1;
        if crate::ri2n_glue::ratelimit() {
            pr_warn!("{}: dropped malformed frame on {}: {}\n", d.dev.name_str(), dev.name_str(), why);
        }
    }
    st.stats.rx_dropped += 1;
    NET_RX_DROP
}

/// One log line per endpoint state change, naming device, peer and slave
/// (like bonding's "link status definitely down for interface eth1").
pub(crate) fn log_transitions(
    d: &Ri2n,
    peer: &Mac,
    t: &Transitions,
    now: crate::proto::time::Instant,
    eps: &[crate::proto::detector::Endpoint],
) {
    if !crate::ri2n_glue::ratelimit() {
        return;
    }
    for l in 0..d.nslaves {
        let bit = 1u8 << l;
        let e = &eps[l];
        let (name, mac) = (d.dev.name_str(), MacFmt(peer));
        if t.failed & bit != 0 {
            pr_info!(
                "{}: peer {} link {}: failed, nothing received for {} ms (fail #{})\n",
                name, mac, d.link_name(l), now.since(e.last_rx).as_ms(), e.fails
            );
        }
        if t.recovered & bit != 0 {
            pr_info!("{}: peer {} link {}: recovered by heartbeat (recovery #{})\n", name, mac, d.link_name(l), e.recoveries);
        }
        if t.peer_failed & bit != 0 {
            pr_info!("{}: peer {} link {}: peer receives nothing from us, not sending on it\n", name, mac, d.link_name(l));
        }
        if t.peer_recovered & bit != 0 {
            pr_info!("{}: peer {} link {}: peer receives again, sending on it\n", name, mac, d.link_name(l));
        }
    }
}
