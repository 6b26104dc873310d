// SPDX-License-Identifier: GPL-2.0

//! Receive (driver paper §5.4, §5.5): the slaves' frame handler.
//!
//! Frames of Ethertype 0x1004 are ours; anything else arriving on a slave
//! is left to the stack. A frame is checked, its RI2N header stripped and
//! the packet made to look as if ri2n0 had received it; then it counts on
//! its endpoint (peer = source MAC, link = receiving slave) and goes to the
//! peer's reorder window (data), broadcast filter (broadcast) or failure
//! detector (heartbeat). What the window releases reaches the stack through
//! its peer's GRO cell, queued under the peer's lock so that it goes up in
//! order; packets that end a GRO run (short ones, a message's last) at
//! once, when that cell is idle. A known peer's data frame that needs
//! nothing of the device's shared state takes only the peer's lock
//! ([`lockless`]); the rest takes the device's state lock too.
//!
//! Frames addressed to another of ri2n0's addresses (a macvlan's, synced to
//! the slaves) or, while promiscuous (ri2n0 in a bridge), to another host
//! go up unordered and touch no peer: the sender numbered them for that
//! address, so they belong to another window than ri2n0's own.

use crate::net::device::{Device, RxHandled};
use crate::net::lock::{Bh, SpinLockBhGuard};
use crate::net::skb::{DropReason, Skb, SkbList};
use crate::net::Mac;
use crate::proto::auth::Msg;
use crate::proto::auth::TAG_LEN;
use crate::proto::header::{
    DecodeError, Decoded, Header, Heartbeat, Kind, Seal, ETH_P_RI2N, HEADER_LEN, HEARTBEAT_LEN,
    HEARTBEAT_MIN_LEN, HEARTBEAT_SEALED_LEN, MAX_HEADER_LEN,
};
use crate::proto::node::{Arrival, Frame, HeartbeatIn};
use crate::proto::peers::SweepNeed;
use crate::proto::seq::Seq;
use crate::proto::time::{Duration, Instant};
use crate::proto::window::span_of;
use crate::proto::MAX_LINKS;
use crate::ri2n_dev::Ri2nDev;
use crate::ri2n_peer::{PeerCell, Slots};
use crate::ri2n_state::{ends_gro_run, hand_up, ms_until, sweep_period, RxIn, RxOut, Sealed, Wire};
use crate::Ri2n;
use core::sync::atomic::Ordering;
use kernel::prelude::*;
use kernel::sync::rcu;

/// A frame arrived on slave `port` of `dev` (softirq, under RCU).
pub(crate) fn receive(dev: &Ri2nDev, port: &Device, mut skb: Skb, bh: &Bh<'_>) -> RxHandled {
    if skb.protocol() != ETH_P_RI2N {
        return RxHandled::Pass(skb);
    }
    let d = dev.data();
    // Room for the longest header if the frame has it (the pull only fails
    // on a frame too short for its header, which decode then refuses).
    let pull = (skb.len() as usize).clamp(HEADER_LEN, MAX_HEADER_LEN);
    let hdr = if skb.may_pull(pull as u32) {
        Header::decode_full(skb.data())
    } else {
        Err(DecodeError::Short)
    };
    let Decoded {
        header: hdr,
        origin,
        seal,
        len: hlen,
    } = match hdr {
        Ok(h) => h,
        Err(e) => return malformed(dev, port, skb, e),
    };
    let one_switch = d.one_switch.load(Ordering::Relaxed);
    if origin.is_some() != one_switch {
        d.lock_state()
            .rx_mode_mismatch(&dev.name(), &port.name(), one_switch);
        skb.drop_reason(DropReason::NotSpecified);
        return RxHandled::Consumed;
    }
    if origin.is_some_and(|o| o.mac[0] & 1 != 0 || o.mac == [0; 6] || o.link as usize >= MAX_LINKS)
    {
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
        Kind::Heartbeat => match heartbeat_in(&mut skb, &hdr, hlen, seal.as_ref()) {
            Ok((hb, len)) => {
                hb_len = len;
                Frame::Heartbeat(hb)
            }
            Err(e) => return malformed(dev, port, skb, e),
        },
        Kind::Bcast => Frame::Bcast(hdr.seq),
        Kind::Data => Frame::Data(hdr.seq),
    };
    // What the tag covers, taken before the header is stripped.
    let sealed = seal.map(|seal| Sealed {
        seal,
        msg: Msg::with_header_len(
            &covered,
            skb.data(),
            hlen - TAG_LEN,
            &skb.data()[hlen..hlen + hb_len],
        ),
    });
    let not_ordered = !for_us && (matches!(kind, Frame::Heartbeat(_)) || one_switch);
    if src[0] & 1 != 0 || src == ours || not_ordered {
        d.lock_state().rx_not_for_us();
        skb.drop_reason(DropReason::OtherHost);
        return RxHandled::Consumed;
    }
    let skb = match kind {
        Frame::Heartbeat(_) => Some(skb),
        _ => {
            let rewrite = origin.map(|_| addrs);
            if skb
                .strip_shim(hlen as u32, hdr.protocol, dev, rewrite.as_ref())
                .is_err()
            {
                d.lock_state().rx_drop();
                skb.drop_reason(DropReason::NoMem);
                return RxHandled::Consumed;
            }
            Some(skb)
        }
    };
    if !for_us {
        if let Some(skb) = skb {
            receive_unordered(dev, &src, sealed.as_ref(), skb, bh);
        }
        return RxHandled::Consumed;
    }

    let skb = match (skb, &kind) {
        // A known peer's next data frame needs only that peer's lock.
        (Some(skb), &Frame::Data(seq)) if origin.is_none() && dst == ours => {
            match lockless(dev, port, &src, seq, sealed.as_ref(), skb, bh) {
                Ok(()) => return RxHandled::Consumed,
                Err(skb) => Some(skb),
            }
        }
        (skb, _) => skb,
    };

    let wire = origin.map(|o| Wire {
        src: wire_src,
        link: o.link as usize,
        to_port,
    });
    receive_locked(dev, port, src, wire, kind, sealed, skb, bh);
    RxHandled::Consumed
}

/// Promiscuous: another host's frame from `src`, for the bridge above us,
/// verified and passed up outside any peer's order.
fn receive_unordered(dev: &Ri2nDev, src: &Mac, sealed: Option<&Sealed>, skb: Skb, bh: &Bh<'_>) {
    let d = dev.data();
    let mut st = d.lock_state();
    if !st.verify(&dev.name(), src, sealed) {
        return;
    }
    st.rx_unordered(skb.len());
    drop(st);
    d.gro.receive(skb, bh);
}

/// A heartbeat's payload, after the `hlen` bytes of header `hdr` (with
/// `seal`, if sealed): the heartbeat and its length.
fn heartbeat_in(
    skb: &mut Skb,
    hdr: &Header,
    hlen: usize,
    seal: Option<&Seal>,
) -> core::result::Result<(HeartbeatIn, usize), DecodeError> {
    // Counts, if sent, are within the frame (padded to 60 bytes); a sealed
    // heartbeat carries counts and counter.
    let want = if seal.is_some() {
        HEARTBEAT_SEALED_LEN
    } else if skb.len() as usize >= HEADER_LEN + HEARTBEAT_LEN {
        HEARTBEAT_LEN
    } else {
        HEARTBEAT_MIN_LEN
    };
    if !skb.may_pull((hlen + want) as u32) {
        return Err(DecodeError::Short);
    }
    let p = Heartbeat::decode(&skb.data()[hlen..hlen + want])?;
    // Sealed: the epoch twice, the same (a heartbeat's counter with it).
    if seal.is_some_and(|s| s.epoch as u32 != p.epoch || p.counter.is_none()) {
        return Err(DecodeError::Short);
    }
    Ok((
        HeartbeatIn {
            next: hdr.seq,
            epoch: p.epoch,
            flags: p.flags,
            peer_link: p.link,
            down: p.down,
            probe_shift: p.probe_shift,
            counts: p.counts,
            counter: p.counter,
        },
        want,
    ))
}

/// A frame for us from `src` on `port` that the lockless way did not take
/// (`skb`: none for a frame only counted), under the state lock; then what
/// its window released goes up, and heartbeats go if it asks.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn receive_locked(
    dev: &Ri2nDev,
    port: &Device,
    src: Mac,
    wire: Option<Wire>,
    kind: Frame,
    sealed: Option<Sealed>,
    skb: Option<Skb>,
    bh: &Bh<'_>,
) {
    let d = dev.data();
    let (mut up, mut done, mut garbage) = (SkbList::new(), SkbList::new(), SkbList::new());
    let after = {
        let mut st = d.lock_state();
        let Some(link) = st.link_of(port) else {
            // A slave being released: its handler is about to go.
            st.rx_drop();
            drop(st);
            drop(skb);
            return;
        };
        let short_max = dev.mtu() / 2;
        let frame = RxIn {
            link,
            src,
            wire,
            kind,
            sealed,
            skb,
        };
        let out = RxOut {
            up: &mut up,
            done: &mut done,
            garbage: &mut garbage,
        };
        let after = st.rx_frame(&dev.name(), frame, short_max, &d.gro, bh, out);
        crate::ri2n_slave::tell_changes(dev, &mut st);
        if let Some(ms) = after.pull_ms {
            // Under the lock, as the sweep re-arms: never later than
            // armed, and never once ri2n0 is down (`rx_frame` pulls only
            // while up).
            Ri2n::sweep_timer(dev).reduce_ms(ms);
        }
        after
    };
    if let Some(claim) = after.claim {
        for s in up {
            claim.deliver(s);
        }
    }
    done.for_each(Skb::consume);
    drop(garbage);
    if after.kick {
        crate::ri2n_hb::kick(dev);
    }
}

/// Whether a data frame `seq` from `src` on `port` may be taken without
/// the state lock (see [`lockless`]): its peer's cell, held, with the
/// link and the carrier it was judged with.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn lockless_cell<'a>(
    dev: &'a Ri2nDev,
    port: &Device,
    src: &Mac,
    seq: Seq,
    sealed: Option<&Sealed>,
    skb: &Skb,
    slots: &'a Slots,
    rcu: &'a rcu::Guard,
) -> Option<(usize, usize, u8, SpinLockBhGuard<'a, PeerCell>)> {
    let d = dev.data();
    // Acquire: the parameters, carrier and keys published before it.
    if !slots.rx_lockless.load(Ordering::Acquire) {
        return None;
    }
    // The keys the offload reads, the state's own while the flag is set
    // (`set_key` clears it around a change, with a grace period). Checked
    // before any peer's lock is taken; a frame they refuse goes the locked
    // way, which counts it.
    let verified = match (sealed, d.offload_keys.get(rcu)) {
        (None, None) => true,
        (Some(s), Some(keys)) => keys.verify(&s.msg, &s.seal.tag),
        _ => false,
    };
    if !verified {
        return None;
    }
    let l = d.txq.iter().position(|q| {
        q.slave
            .get(rcu)
            .is_some_and(|s| s.as_raw() == port.as_raw())
    })?;
    let (slot, mut c) = slots.find(src, false)?;
    // Again under the cell: down, a key or a link's loss is published
    // under the state lock before its holder goes through the cells.
    let carrier = slots.carrier.load(Ordering::Relaxed);
    if !slots.rx_lockless.load(Ordering::Relaxed) || carrier & (1 << l) == 0 || !c.tx.swept {
        return None;
    }
    let (_, peer) = c.both()?;
    // Sealed: only what the locked way takes as it is (`sealed_fresh`,
    // `take_epoch`, `set_strict`): the peer's epoch in full, a window
    // already strict, numbers it would take (`unpooled`). A new epoch, or
    // a replay, which is counted there, goes that way; so does the first
    // frame after the keys went on or off (strict the wrong way).
    // Nor while the locked way judges a sealed frame between two holds of
    // a cell: read under this cell, which that way held and released since
    // it counted itself in (`Slots::sealed_judged`).
    let fresh = match sealed {
        Some(s) => {
            s.seal.epoch != 0
                && peer.rx.epoch == s.seal.epoch
                && peer.rx.window.strict()
                && slots.sealed_judged.load(Ordering::Relaxed) == 0
        }
        None => !peer.rx.window.strict(),
    };
    (fresh && peer.rx.unpooled(seq, span_of(skb))).then_some((l, slot, carrier, c))
}

/// Data frame `seq` from `src`, for ri2n0, unsealed, or `sealed` under a
/// key the device accepts, taken under its peer's cell alone (no
/// device-wide lock on the data path) if its window needs nothing of the
/// device's pool of buffers for it: it has one already, or the frame is
/// the next it expects and nothing is held
/// (`PeerRx::unpooled`). Given back, to go the locked way, otherwise, and
/// if the peer is unknown to the lockless lookup or off the sweep list,
/// in one-switch mode, while the keys change, with ri2n0 down or the link
/// without carrier; sealed, if it is not of the peer's epoch or is one the
/// window would not take (the replay rules are the locked way's).
///
/// It does what `State::rx_frame` does for such a frame: the detector
/// counts it (and what went out since), the window takes it, and what that
/// releases goes to the peer's GRO cell under the peer's cell, so that it
/// never overtakes what the locked way or the sweep released before. A
/// window that starts holding pulls the sweep to its FAST_TOUT deadline
/// (`Slots::sweep_at`). What needs the state lock, rare, takes one round
/// after: the detector's transitions, a duplicate, `held_mem` spent, an
/// idle buffer to give back while the pool is short.
fn lockless(
    dev: &Ri2nDev,
    port: &Device,
    src: &Mac,
    seq: Seq,
    sealed: Option<&Sealed>,
    skb: Skb,
    bh: &Bh<'_>,
) -> Result<(), Skb> {
    let d = dev.data();
    let rcu = rcu::read_lock();
    let slots = d.slots(&rcu);
    let Some((l, slot, carrier, mut c)) =
        lockless_cell(dev, port, src, seq, sealed, &skb, slots, &rcu)
    else {
        return Err(skb);
    };
    let Some((tx, peer)) = c.both() else {
        return Err(skb);
    };
    let params = slots.params.get();
    let t = Instant(crate::net::ktime_ns());
    let (frames, size) = (span_of(&skb), skb.truesize() as usize);
    tx.fold(peer);
    let short_max = dev.mtu() / 2;
    let mut up = SkbList::new();
    let (mut packets, mut bytes, mut ends_runs) = (0u32, 0u32, true);
    // Truesize of what left the window (a `Cell`: read while the closure
    // lives).
    let out = core::cell::Cell::new(0usize);
    let mut deliver = |mut s: Skb| {
        packets += span_of(&s);
        bytes += s.len();
        out.set(out.get() + s.truesize() as usize);
        // After truesize is counted: parsing may pull, which can grow it.
        ends_runs &= ends_gro_run(&mut s, short_max);
        up.push(s);
    };
    let arrival = Arrival {
        link: l,
        now: t,
        carrier,
        credit: true,
        sealed: sealed.map(|s| s.seal.epoch),
        frames,
    };
    let (tr, dup) = peer.receive_unpooled(&arrival, seq, skb, &params, &mut deliver);
    // What the window holds more (a duplicate it kept, or dropped, is
    // counted out as the locked way does); the shared line only if that
    // is anything.
    let more =
        size as isize - dup.as_ref().map_or(0, |d| d.truesize() as isize) - out.get() as isize;
    let held = &slots.held;
    if more != 0 {
        held.change(more);
    }
    let full = more > 0 && held.get() > params.held_mem();
    if full {
        // As `rx_frame`: the window goes up whole (it keeps its buffer).
        let before = out.get();
        peer.rx.window.flush(&mut deliver);
        held.sub(out.get() - before);
    }
    // Others wait for a buffer: an idle one goes back to the pool.
    let spare = if slots.bufs_short.load(Ordering::Relaxed) && peer.rx.window.held() == 0 {
        peer.rx.window.idle_buf()
    } else {
        None
    };
    tx.publish(&peer.det);
    let pull = slots.pull_sweep_for(t.plus(sweep_period(&params)), || {
        let lossy_every = Duration(slots.lossy_every_ns.load(Ordering::Relaxed));
        (peer.sweep_need(t, carrier, &params) == SweepNeed::Now)
            .then(|| peer.next_due(t, carrier, &params, lossy_every))
            .flatten()
    });
    if let Some(at) = pull {
        Ri2n::sweep_timer(dev).reduce_ms(ms_until(at, t));
    }
    c.rx_at = t;
    let claim = hand_up(&d.gro, slot, &mut up, ends_runs, bh);
    drop(c);
    if packets > 0 {
        dev.count_rx(packets, bytes);
    }
    let r = &slots.link_rx[l];
    r.packets.fetch_add(u64::from(frames), Ordering::Relaxed);
    if frames > 1 {
        r.merged.fetch_add(1, Ordering::Relaxed);
        r.merged_frames
            .fetch_add(u64::from(frames), Ordering::Relaxed);
    }
    if let Some(claim) = claim {
        for s in up {
            claim.deliver(s);
        }
    }
    if !tr.is_empty() || dup.is_some() || full || spare.is_some() {
        let kick = {
            let mut st = d.lock_state();
            let kick =
                st.rx_lockless_after(&dev.name(), slot, src, tr, t, dup.is_some(), full, spare);
            crate::ri2n_slave::tell_changes(dev, &mut st);
            kick
        };
        if kick {
            crate::ri2n_hb::kick(dev);
        }
    }
    drop(dup);
    Ok(())
}

fn malformed(dev: &Ri2nDev, port: &Device, skb: Skb, e: DecodeError) -> RxHandled {
    dev.data().lock_state().rx_malformed();
    skb.drop_reason(DropReason::HdrTrunc);
    if crate::net::ratelimit() {
        pr_warn!(
            "{}: dropped malformed frame on {}: {}\n",
            dev.name(),
            port.name(),
            e.reason()
        );
    }
    RxHandled::Consumed
}
