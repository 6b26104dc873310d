// SPDX-License-Identifier: GPL-2.0

//! Receive (driver paper §5.4, §5.5): the slaves' frame handler.
//!
//! Frames of Ethertype 0x1004 are ours; anything else arriving on a slave
//! is left to the stack. A frame is checked, its RI2N header stripped and
//! the packet made to look as if ri2n0 had received it; then it counts on
//! its endpoint (peer = source MAC, link = receiving slave) and goes to the
//! peer's reorder window (data), broadcast filter (broadcast) or failure
//! detector (heartbeat). What the window releases reaches the stack through
//! its peer's GRO cell, queued under the state lock so that it goes up in
//! order; packets that end a GRO run (short ones, a message's last) at
//! once, when that cell is idle.
//!
//! Frames addressed to another of ri2n0's addresses (a macvlan's, synced to
//! the slaves) or, while promiscuous (ri2n0 in a bridge), to another host
//! go up unordered and touch no peer: the sender numbered them for that
//! address, so they belong to another window than ri2n0's own.

use crate::net::device::{Device, RxHandled};
use crate::net::skb::{DropReason, Skb, SkbList};
use crate::net::Mac;
use crate::proto::auth::Msg;
use crate::proto::auth::TAG_LEN;
use crate::proto::header::{
    DecodeError, Decoded, Header, Heartbeat, Kind, ETH_P_RI2N, HEADER_LEN, HEARTBEAT_LEN, HEARTBEAT_MIN_LEN,
    HEARTBEAT_SEALED_LEN, MAX_HEADER_LEN,
};
use crate::proto::MAX_LINKS;
use core::sync::atomic::Ordering;
use crate::ri2n_dev::Ri2nDev;
use crate::ri2n_state::{RxKind, Sealed, Wire};
use kernel::prelude::*;

/// A frame arrived on slave `port` of `dev` (softirq, under RCU).
pub(crate) fn receive(dev: &Ri2nDev, port: &Device, mut skb: Skb) -> RxHandled {
    if skb.protocol() != ETH_P_RI2N {
        return RxHandled::Pass(skb);
    }
    let d = dev.data();
    // Room for the longest header if the frame has it (the pull only fails
    // on a frame too short for its header, which decode then refuses).
    let pull = (skb.len() as usize).clamp(HEADER_LEN, MAX_HEADER_LEN);
    let hdr = if skb.may_pull(pull as u32) { Header::decode_full(skb.data()) } else { Err(DecodeError::Short) };
    let Decoded { header: hdr, origin, seal, len: hlen } = match hdr {
        Ok(h) => h,
        Err(e) => return malformed(dev, port, skb, e),
    };
    let one_switch = d.one_switch.load(Ordering::Relaxed);
    if origin.is_some() != one_switch {
        d.lock_state().rx_mode_mismatch(dev.name_str(), port.name_str(), one_switch);
        skb.drop_reason(DropReason::NotSpecified);
        return RxHandled::Consumed;
    }
    if origin.is_some_and(|o| o.mac[0] & 1 != 0 || o.mac == [0; 6] || o.link as usize >= MAX_LINKS) {
        return malformed(dev, port, skb, DecodeError::Origin);
    }
    let Some(addrs) = skb.mac_addrs() else {
        d.lock_state().rx_malformed();
        skb.drop_reason(DropReason::HdrTrunc);
        return RxHandled::Consumed;
    };
    let mut dst: Mac = [0; 6];
    let mut src: Mac = [0; 6];
    dst.copy_from_slice(&addrs[..6]);
    src.copy_from_slice(&addrs[6..]);
    let ours = dev.addr();
    // One-switch mode: the wire carries the slaves' MACs; the frame is
    // the ri2n devices' (ours, or a group address, and the origin's).
    let wire_src = src;
    let to_port = dst == port.addr();
    let mut for_us = dst == ours || dst[0] & 1 != 0;
    if let Some(o) = origin {
        for_us |= to_port;
        if for_us && dst[0] & 1 == 0 {
            dst = ours;
        }
        src = o.mac;
    }
    let mut addrs = [0u8; 12];
    addrs[..6].copy_from_slice(&dst);
    addrs[6..].copy_from_slice(&src);
    // What a tag covers: in one-switch mode the source is the slave's MAC
    // (what we learn from; the origin in the header names the ri2n one).
    let mut covered = addrs;
    if origin.is_some() {
        covered[6..].copy_from_slice(&wire_src);
    }
    let mut hb_len = 0;
    let kind = match hdr.kind {
        Kind::Heartbeat => {
            // Counts, if sent, are within the frame (padded to 60 bytes); a
            // sealed heartbeat carries counts and counter.
            let want = if seal.is_some() {
                HEARTBEAT_SEALED_LEN
            } else if skb.len() as usize >= HEADER_LEN + HEARTBEAT_LEN {
                HEARTBEAT_LEN
            } else {
                HEARTBEAT_MIN_LEN
            };
            let p = if skb.may_pull((hlen + want) as u32) {
                Heartbeat::decode(&skb.data()[hlen..hlen + want])
            } else {
                Err(DecodeError::Short)
            };
            match p {
                // Sealed: the epoch twice, the same (a heartbeat's counter
                // with it).
                Ok(p) if seal.is_some_and(|s| s.epoch as u32 != p.epoch || p.counter.is_none()) => {
                    return malformed(dev, port, skb, DecodeError::Short)
                }
                Ok(p) => {
                    hb_len = want;
                    RxKind::Heartbeat {
                        next: hdr.seq,
                        epoch: p.epoch,
                        flags: p.flags,
                        peer_link: p.link,
                        down: p.down,
                        counts: p.counts,
                        counter: p.counter,
                    }
                }
                Err(e) => return malformed(dev, port, skb, e),
            }
        }
        Kind::Bcast => RxKind::Bcast(hdr.seq),
        Kind::Data => RxKind::Data(hdr.seq),
    };
    // What the tag covers, taken before the header is stripped.
    let sealed = seal.map(|seal| {
        let payload = if hb_len > 0 { &skb.data()[hlen..hlen + hb_len] } else { &[][..] };
        Sealed { seal, msg: Msg::with_header_len(&covered, skb.data(), hlen - TAG_LEN, payload) }
    });
    let not_ordered = !for_us && (matches!(kind, RxKind::Heartbeat { .. }) || one_switch);
    if src[0] & 1 != 0 || src == ours || not_ordered {
        d.lock_state().rx_not_for_us();
        skb.drop_reason(DropReason::OtherHost);
        return RxHandled::Consumed;
    }
    let skb = match kind {
        RxKind::Heartbeat { .. } => Some(skb),
        _ => {
            let rewrite = origin.map(|_| addrs);
            if skb.strip_shim(hlen as u32, hdr.protocol, dev, rewrite.as_ref()).is_err() {
                d.lock_state().rx_drop();
                skb.drop_reason(DropReason::NoMem);
                return RxHandled::Consumed;
            }
            Some(skb)
        }
    };
    if !for_us {
        // Promiscuous: another host's frame, for the bridge above us.
        let Some(skb) = skb else { return RxHandled::Consumed };
        let mut st = d.lock_state();
        if !st.verify(dev.name_str(), &src, sealed.as_ref()) {
            drop(st);
            drop(skb);
            return RxHandled::Consumed;
        }
        st.rx_unordered(skb.len());
        drop(st);
        d.gro.receive(skb);
        return RxHandled::Consumed;
    }

    let (mut up, mut done, mut garbage) = (SkbList::new(), SkbList::new(), SkbList::new());
    let (after, claim) = {
        let mut st = d.lock_state();
        let Some(link) = st.link_of(port) else {
            // A slave being released: its handler is about to go.
            st.rx_drop();
            drop(st);
            drop(skb);
            return RxHandled::Consumed;
        };
        let wire = origin.map(|o| Wire { src: wire_src, link: o.link as usize, to_port });
        let short_max = dev.mtu() / 2;
        let after = st.rx_frame(dev.name_str(), link, &src, wire, kind, sealed, skb, short_max, &mut up, &mut done, &mut garbage);
        if let Some(ms) = after.pull_ms {
            // Under the lock, as the sweep re-arms: never later than
            // armed, and never once ri2n0 is down (`rx_frame` pulls only
            // while up).
            d.sweep_timer.reduce_ms(ms);
        }
        // Into the peer's cell under the lock, so that the cell hands its
        // packets up in the order the window released them, whichever CPU
        // did. Packets that end any run GRO could merge (short ones, the
        // last of a message) go up at once if the cell is idle: with
        // nothing held to join and nothing to follow, the cell's NAPI round
        // would be a cost on every message for nothing (issue 13's round
        // trips). The claim keeps the cell's poll off until they are up.
        let claim = after.cell.and_then(|i| if after.ends_runs { d.gro.claim(i) } else { None });
        if let (Some(i), None) = (after.cell, &claim) {
            d.gro.queue(i, core::mem::take(&mut up));
        }
        (after, claim)
    };
    if let Some(claim) = claim {
        for s in up {
            claim.deliver(s);
        }
    }
    done.for_each(Skb::consume);
    drop(garbage);
    if after.kick {
        crate::ri2n_hb::kick(dev);
    }
    RxHandled::Consumed
}

fn malformed(dev: &Ri2nDev, port: &Device, skb: Skb, e: DecodeError) -> RxHandled {
    dev.data().lock_state().rx_malformed();
    skb.drop_reason(DropReason::HdrTrunc);
    if crate::net::ratelimit() {
        pr_warn!("{}: dropped malformed frame on {}: {}\n", dev.name_str(), port.name_str(), e.reason());
    }
    RxHandled::Consumed
}
