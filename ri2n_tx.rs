// SPDX-License-Identifier: GPL-2.0

//! Transmit (driver paper §5.3): RI2N header, link choice, per-link queues.
//!
//! Unicast goes to one link, chosen per peer by bytes among the links
//! that are up and not failed in either direction, skipping those whose
//! queue is stopped while another has room; a GSO packet of a few
//! segments goes whole to one link, a longer one segment by segment
//! (core/sched.rs). Broadcast and multicast (ARP,
//! IPv6 ND) go out on every link that is up, numbered per sender, so that
//! ARP works while a dead link is not yet detected; the receiver passes the
//! first copy up (`core/dedup.rs`).
//!
//! Each link carries a peer's numbers in increasing order, as the loss rule
//! assumes, without a lock held across `dev_queue_xmit`: a frame is
//! numbered and queued on its link under its peer's own lock (core/tx.rs,
//! `Slots` in ri2n_peer.rs), and one task at a time (the drainer) hands
//! a link's queue to its slave, in order, without it (ri2n_txq.rs). Unicast
//! to a known peer takes no other lock, so CPUs sending to different peers
//! never meet ([`xmit_lockless`]); the state lock is taken for a new peer,
//! broadcasts, a key change under way and one-switch mode. The slave keeps
//! the order too: all of a peer's frames on a link are one flow to it
//! (`flow_hash`). A transmit that re-enters
//! from the drainer's own `dev_queue_xmit` (a tc mirred or redirect from a
//! slave back into ri2n0) is dropped and counted.

use crate::net::device::feature;
use crate::net::rcu::InRcu;
use crate::net::skb::{DropReason, Skb, SkbList};
use crate::net::Mac;
use crate::proto::auth::Key;
use crate::proto::auth::{Msg, TAG_LEN};
use crate::proto::header::{
    shim_continues, shim_for_segment, Header, Kind, Origin, ETH_P_RI2N, HEADER_LEN, MAX_HEADER_LEN,
    ORIGIN_LEN, SEALED_LEN, VERSION, VERSION_ONE_SWITCH, VERSION_ONE_SWITCH_SEALED, VERSION_SEALED,
};
use crate::proto::sched::stripe_block;
use crate::proto::time::{Duration, Instant};
use crate::proto::{links_in, MAX_LINKS};
use crate::ri2n_dev::{Ri2n, Ri2nDev};
use crate::ri2n_state::{State, TxRoute};
use crate::ri2n_txq::drain_links;
use core::sync::atomic::Ordering;
use kernel::sync::rcu;

pub(crate) const ETH_HLEN: usize = 14;

/// Features the slaves are trusted with when ri2n cuts a GSO packet:
/// checksums and scatter-gather (the stack finishes either in software for
/// a slave that cannot).
pub(crate) const SEG_FEATURES: u64 =
    (1u64 << feature::SG) | (1u64 << feature::HW_CSUM) | (1u64 << feature::HIGHDMA);

pub(crate) fn task() -> usize {
    crate::net::task_id()
}

/// `ndo_start_xmit`: consumes `skb` whatever happens. A GSO packet is cut
/// into its segments here, each numbered: a few go whole to one link, more
/// are spread (`stripe_segs`, core/sched.rs).
///
/// Unicast to a known peer is numbered and queued under that peer's lock
/// alone ([`xmit_lockless`]); anything else under the state lock, once per
/// packet (a spread GSO packet once per eight segments). The links' queues
/// are drained without either (ri2n_txq.rs), but for counting frames a
/// slave dropped.
pub(crate) fn xmit(dev: &Ri2nDev, skb: Skb) {
    let d = dev.data();
    let me = task();
    if d.txq.iter().any(|q| q.drained_by(me)) {
        d.lock_state().tx_looped();
        skb.drop_reason(DropReason::Recursion);
        return;
    }
    let skb = if skb.is_gso() && crate::tx_gso() {
        match xmit_whole(dev, skb) {
            Ok(links) => {
                drain_links(dev, links);
                return;
            }
            Err(skb) => skb,
        }
    } else {
        skb
    };
    let drain = if skb.is_gso() {
        match skb.gso_segments(SEG_FEATURES) {
            Ok(segs) => xmit_segments(dev, segs),
            Err(skb) => {
                d.lock_state().tx_drop();
                skb.drop_reason(DropReason::NoMem);
                return;
            }
        }
    } else {
        let len = skb.len();
        xmit_one_block(dev, skb, Some((1, len)))
    };
    drain_links(dev, drain);
}

/// `tx_gso`: a unicast GSO packet goes whole to one link, its segments
/// numbered in a row, and the slave segments it (`Offload`); broadcasts
/// and frames both sealed and in one-switch mode come back, to be
/// segmented here.
fn xmit_whole(dev: &Ri2nDev, mut skb: Skb) -> core::result::Result<u8, Skb> {
    let segs = u32::from(skb.gso_segs());
    if !(2..=MAX_WHOLE_SEGS).contains(&segs)
        || !skb.may_pull(ETH_HLEN as u32)
        || skb.data()[0] & 1 != 0
    {
        return Err(skb);
    }
    let len = skb.len();
    xmit_one_n(dev, skb, segs, Some((1, len)))
}

/// The most segments a GSO packet may take to one link whole: a quarter
/// of the reorder window, so that one packet never fills it.
const MAX_WHOLE_SEGS: u32 = 128;

/// Numbers and queues one packet (no GSO) for its peer, or for every link
/// if broadcast (which takes no `first`): `first` for a packet's first
/// frame, `None` for the frames of its block after it, as
/// `RoundRobin::pick_block` takes them. Returns the links this task is
/// to drain.
fn xmit_one_block(dev: &Ri2nDev, skb: Skb, first: Option<(u32, u32)>) -> u8 {
    // Only a packet of more than one segment comes back.
    xmit_one_n(dev, skb, 1, first).unwrap_or_else(|skb| {
        skb.drop_reason(DropReason::NotSpecified);
        0
    })
}

/// As [`xmit_one_block`], for a packet of `segs` segments (more than one: a
/// GSO packet the slave segments, unicast); gives it back if frames are
/// sealed in one-switch mode (see `Offload::parse`).
fn xmit_one_n(
    dev: &Ri2nDev,
    skb: Skb,
    segs: u32,
    first: Option<(u32, u32)>,
) -> core::result::Result<u8, Skb> {
    let d = dev.data();
    let Some(mut skb) = prepare(dev, skb) else {
        return Ok(0);
    };
    let Frame {
        dst,
        addrs,
        protocol,
        len,
    } = Frame::of(&skb);
    if dst[0] & 1 == 0 {
        let mut one = SkbList::new();
        one.push(skb);
        match xmit_lockless(dev, &dst, one, segs, first) {
            Ok(drain) => return Ok(drain),
            Err(mut back) => match back.next() {
                Some(s) => skb = s,
                None => return Ok(0),
            },
        }
    }
    let mut garbage = SkbList::new();
    let mut drain = 0u8;
    let mut st = d.lock_state();
    if dst[0] & 1 != 0 {
        let Some((seq, links)) = st.tx_bcast(len) else {
            drop(st);
            skb.drop_reason(DropReason::DevReady);
            return Ok(drain);
        };
        let one_switch = st.one_switch();
        let origin = origin_of(one_switch, &addrs, 0);
        let mut hdr = [0u8; MAX_HEADER_LEN];
        let h = Header {
            kind: Kind::Bcast,
            protocol,
            seq,
        };
        let n = encode_header(
            st.keys().sealing(),
            d.epoch,
            &addrs,
            h,
            origin.as_ref(),
            &[],
            &mut hdr,
        );
        if skb.insert_after_eth(ETH_P_RI2N, &hdr[..n]).is_err() {
            st.tx_failed(len);
            drop(st);
            skb.drop_reason(DropReason::NoMem);
            return Ok(drain);
        }
        // Clones share the data; the last link takes the original.
        let last = 7 - links.leading_zeros() as usize;
        let mut frames: [Option<Skb>; MAX_LINKS] = Default::default();
        for (l, f) in frames.iter_mut().enumerate().take(last) {
            if links & (1 << l) != 0 {
                *f = skb.clone_skb();
            }
        }
        frames[last] = Some(skb);
        for (l, f) in frames.iter_mut().enumerate() {
            if let Some(mut f) = f.take() {
                // One-switch mode: each copy from its slave's own MAC, its
                // header naming its link (made private first).
                if one_switch {
                    let o = origin_of(true, &addrs, l);
                    let from = st.slave_mac(l);
                    let n = encode_header(
                        st.keys().sealing(),
                        d.epoch,
                        &tag_addrs(&addrs, &from),
                        h,
                        o.as_ref(),
                        &[],
                        &mut hdr,
                    );
                    if f.set_eth_addrs(&dst, &from).is_err() || !f.write(ETH_HLEN, &hdr[..n]) {
                        st.tx_drop();
                        garbage.push(f);
                        continue;
                    }
                }
                if st.txq_push(&d.txq[l], l, f, task(), &mut garbage) == Some(true) {
                    drain |= 1 << l;
                }
            }
        }
    } else {
        if segs > 1 && st.keys().on() && st.one_switch() {
            drop(st);
            return Err(skb);
        }
        let mut one = SkbList::new();
        one.push(skb);
        queue_unicast(dev, &mut st, one, segs, first, &mut garbage, &mut drain);
    }
    drop(st);
    drop(garbage);
    Ok(drain)
}

/// Most frames numbered per lock round when a packet's segments are
/// spread (a whole block takes one round, at most 64 frames).
const SEGS_PER_ROUND: u32 = 8;

/// The segments of a GSO packet that ri2n cut, numbered and queued: a few
/// go whole to one link under one lock round, more are spread, numbered
/// `SEGS_PER_ROUND` at a time (`stripe_segs`, core/sched.rs). Returns the
/// links to drain.
fn xmit_segments(dev: &Ri2nDev, segs: SkbList) -> u8 {
    let (mut ready, mut bytes, mut group, mut dst) = (SkbList::new(), 0u32, false, None);
    for s in segs {
        if let Some(s) = prepare(dev, s) {
            bytes += s.len();
            let d = Frame::of(&s).dst;
            group |= d[0] & 1 != 0;
            dst.get_or_insert(d);
            ready.push(s);
        }
    }
    let block = stripe_block(ready.len() as u32, crate::stripe_segs());
    let mut first = Some((block, bytes));
    let mut drain = 0u8;
    if group {
        // A group address: each segment to every link, as any broadcast.
        ready.for_each(|s| drain |= xmit_one_block(dev, s, None));
        return drain;
    }
    let Some(dst) = dst else { return 0 };
    let ready = match xmit_lockless(dev, &dst, ready, 1, first) {
        Ok(drain) => return drain,
        Err(back) => back,
    };
    // A whole block in one round of both locks (a sender on the lockless
    // way must not route between its frames); spread frames
    // `SEGS_PER_ROUND` at a time.
    let per_round = if block == 1 { SEGS_PER_ROUND } else { u32::MAX };
    let mut garbage = SkbList::new();
    let d = dev.data();
    let mut round = SkbList::new();
    let mut n = 0u32;
    for s in ready {
        round.push(s);
        n += 1;
        if n % per_round == 0 {
            let mut st = d.lock_state();
            queue_unicast(
                dev,
                &mut st,
                core::mem::take(&mut round),
                1,
                first.take(),
                &mut garbage,
                &mut drain,
            );
            drop(st);
            first = Some((1, 0));
        }
    }
    if n % per_round != 0 {
        let mut st = d.lock_state();
        queue_unicast(dev, &mut st, round, 1, first, &mut garbage, &mut drain);
        drop(st);
    }
    drop(garbage);
    drain
}

/// A frame's Ethernet addresses (destination and source), EtherType and
/// length, as the stack made them.
struct Frame {
    dst: Mac,
    addrs: [u8; 12],
    protocol: u16,
    len: u32,
}

impl Frame {
    /// Of a frame [`prepare`] passed.
    fn of(skb: &Skb) -> Frame {
        let data = skb.data();
        let mut dst: Mac = [0; 6];
        dst.copy_from_slice(&data[..6]);
        let mut addrs = [0u8; 12];
        addrs.copy_from_slice(&data[..12]);
        Frame {
            dst,
            addrs,
            protocol: u16::from_be_bytes([data[12], data[13]]),
            len: skb.len(),
        }
    }
}

/// Makes `skb` ready to number: its Ethernet header in the linear part,
/// and room for the longest RI2N header (sealed or not: a key may come
/// meanwhile), so that nothing can fail once it is numbered. A frame that
/// cannot be is dropped and counted.
fn prepare(dev: &Ri2nDev, mut skb: Skb) -> Option<Skb> {
    let why = if !skb.may_pull(ETH_HLEN as u32) {
        DropReason::HdrTrunc
    } else if skb.make_writable(MAX_HEADER_LEN as u32).is_err() {
        DropReason::NoMem
    } else {
        return Some(skb);
    };
    dev.data().lock_state().tx_drop();
    skb.drop_reason(why);
    None
}

/// Numbers the `frames` of one unicast packet (of `segs` segments each:
/// more than one for a whole GSO packet, `tx_gso`) for their peer and
/// queues them on their links, under the state lock `st` and the peer's
/// own, held across them all; `first` as [`xmit_one_block`] takes it, for
/// the first frame. Adds the links this task is to drain to `drain`.
fn queue_unicast(
    dev: &Ri2nDev,
    st: &mut State,
    mut frames: SkbList,
    segs: u32,
    mut first: Option<(u32, u32)>,
    garbage: &mut SkbList,
    drain: &mut u8,
) {
    let d = dev.data();
    let Some(head) = frames.pop() else { return };
    let dst = Frame::of(&head).dst;
    let Some(slot) = st.tx_peer(&dst, garbage) else {
        garbage.push(head);
        garbage.append(&mut frames);
        return;
    };
    let rcu = rcu::read_lock();
    let Some(cell) = d.slots(&rcu).cell(slot) else {
        garbage.push(head);
        garbage.append(&mut frames);
        return;
    };
    let mut c = cell.lock();
    let one_switch = st.one_switch();
    let mut stale = false;
    for skb in core::iter::once(head).chain(frames) {
        let Frame {
            addrs,
            protocol,
            len,
            ..
        } = Frame::of(&skb);
        // A block of one: this frame's own bytes.
        let fst = first
            .take()
            .map(|(k, bytes)| (k, if k > 1 { bytes } else { len }));
        let TxRoute::Send {
            link,
            seq,
            to,
            from,
        } = st.tx_route(slot, &mut c, len, segs, fst, &mut stale)
        else {
            garbage.push(skb);
            continue;
        };
        let origin = origin_of(one_switch, &addrs, link);
        let covered = if one_switch {
            tag_addrs(&addrs, &from)
        } else {
            addrs
        };
        // One-switch mode: to the peer's slave on the link (its ri2n MAC,
        // flooded, until learned), from ours.
        let to = if to == [0; 6] { dst } else { to };
        let eth = one_switch.then_some((to, from));
        let shim = Shim {
            key: st.keys().sealing(),
            epoch: d.epoch,
            addrs: &covered,
            origin: origin.as_ref(),
            eth,
        };
        match shim.put(
            skb,
            Header {
                kind: Kind::Data,
                protocol,
                seq,
            },
            segs,
        ) {
            Ok(frame) => match st.txq_push(&d.txq[link], link, frame, task(), garbage) {
                Some(true) => *drain |= 1 << link,
                Some(false) => {}
                None => {
                    // Its drop is counted (`tx_queue_full`), not its sending.
                    st.tx_untaken(len, segs);
                    c.tx.unsent(link, segs);
                }
            },
            Err(frame) => {
                // Cannot happen: the headroom was made above.
                st.tx_untaken(len, segs);
                st.tx_drop();
                c.tx.unsent(link, segs);
                garbage.push(frame);
            }
        }
    }
    if stale {
        crate::ri2n_hb::kick_locked(dev, st);
    }
}

/// The RI2N header a unicast frame gets.
struct Shim<'a> {
    /// The sealing key, if any.
    key: Option<&'a Key>,
    epoch: u64,
    /// What a tag covers (see [`encode_header`]).
    addrs: &'a [u8; 12],
    origin: Option<&'a Origin>,
    /// One-switch mode: the frame's new Ethernet destination and source.
    eth: Option<(Mac, Mac)>,
}

impl Shim<'_> {
    /// Puts the header `h` on `skb` (`segs` segments: a whole GSO packet's
    /// shim is marked for late segmentation); gives it back if it did not
    /// fit (it always does after [`prepare`]).
    fn put(&self, mut skb: Skb, h: Header, segs: u32) -> core::result::Result<Skb, Skb> {
        let mut hdr = [0u8; MAX_HEADER_LEN];
        let n = encode_header(
            self.key,
            self.epoch,
            self.addrs,
            h,
            self.origin,
            &[],
            &mut hdr,
        );
        let ok = skb.insert_after_eth(ETH_P_RI2N, &hdr[..n]).is_ok()
            && self
                .eth
                .is_none_or(|(to, from)| skb.set_eth_addrs(&to, &from).is_ok());
        if segs > 1 {
            skb.mark_shim();
        }
        if ok {
            Ok(skb)
        } else {
            Err(skb)
        }
    }
}

/// Numbers and queues `frames`, the frames of one unicast packet to `dst`
/// (`segs` segments each: more than one for a whole GSO packet), under the
/// lock of the peer's transmit side alone: CPUs sending to different peers
/// never meet. `first` as [`xmit_one_block`] takes it, for the
/// first frame. Returns the links to drain, or gives the frames back, none
/// numbered, when the state lock is needed: a peer the lookup does not
/// know (new, or its buckets taken by others), a key change under way,
/// one-switch mode (slave MACs). Sealing reads the keys' copy the offload
/// reads too (`Ri2n::offload_keys`).
///
/// The state lock is taken after, not under, the peer's, and only for
/// what is rare: a drop to count, or the peer to put on the sweep list.
fn xmit_lockless(
    dev: &Ri2nDev,
    dst: &Mac,
    frames: SkbList,
    segs: u32,
    mut first: Option<(u32, u32)>,
) -> core::result::Result<u8, SkbList> {
    let d = dev.data();
    let rcu = rcu::read_lock();
    let slots = d.slots(&rcu);
    // Acquire: the keys read below are at least those published before
    // the flag was set again (`set_key`; the first key has no grace
    // period of its own).
    if !slots.lockless.load(Ordering::Acquire) {
        return Err(frames);
    }
    let Some((slot, mut c)) = slots.find(dst, true) else {
        return Err(frames);
    };
    let Some(cell) = slots.cell(slot) else {
        return Err(frames);
    };
    let key = d.offload_keys.get(&rcu).and_then(|k| k.sealing());
    // A spread packet's frames (blocks of one) give the peer's lock back
    // every `SEGS_PER_ROUND`, as the locked way does: receive and the
    // timers wait on it under the state lock.
    let spread = first.is_some_and(|(k, _)| k == 1) && segs == 1;
    // A slave that lost its carrier since the sweep last looked is left
    // out now, and the sweep told (below).
    let published = slots.carrier.load(Ordering::Relaxed);
    let (queues_ok, live) = slave_links(d, &rcu, published);
    let (carrier, stale) = (published & live, published & !live);
    let idle = Duration(slots.idle_ns.load(Ordering::Relaxed));
    // Read with the peer's lock held: a time older than another CPU's
    // that routed meanwhile would look like a wrapped period.
    let mut t = Instant(crate::net::ktime_ns());
    let (mut drain, mut packets, mut bytes) = (0u8, 0u32, 0u32);
    let (mut no_link, mut full, mut nfull, mut failed) = (0u32, [0u32; MAX_LINKS], 0u32, 0u32);
    let mut garbage = SkbList::new();
    for (i, f) in frames.enumerate() {
        if spread && i > 0 && i as u32 % SEGS_PER_ROUND == 0 {
            drop(c);
            c = cell.lock();
            t = Instant(crate::net::ktime_ns());
            first = Some((1, 0));
        }
        if !c.tx.is(dst) {
            // Forgotten meanwhile: the rest of the packet goes.
            failed += 1;
            garbage.push(f);
            continue;
        }
        let Frame {
            addrs,
            protocol,
            len,
            ..
        } = Frame::of(&f);
        let fst = first.take().map(|(k, b)| (k, if k > 1 { b } else { len }));
        let Some((link, seq)) = c.tx.route(carrier, queues_ok, fst, len, segs, t, idle) else {
            no_link += 1;
            garbage.push(f);
            continue;
        };
        let shim = Shim {
            key,
            epoch: d.epoch,
            addrs: &addrs,
            origin: None,
            eth: None,
        };
        match shim.put(
            f,
            Header {
                kind: Kind::Data,
                protocol,
                seq,
            },
            segs,
        ) {
            Ok(f) => match d.txq[link].push(f, task()) {
                Ok(drain_it) => {
                    drain |= u8::from(drain_it) << link;
                    packets += segs;
                    bytes += len;
                }
                Err(f) => {
                    c.tx.unsent(link, segs);
                    full[link] += 1;
                    nfull += 1;
                    garbage.push(f);
                }
            },
            Err(f) => {
                // Cannot happen: `prepare` made the room.
                c.tx.unsent(link, segs);
                failed += 1;
                garbage.push(f);
            }
        }
    }
    let swept = c.tx.swept;
    drop(c);
    if packets > 0 {
        dev.count_tx(packets, bytes);
    }
    if !swept || no_link + failed + nfull > 0 {
        let mut st = d.lock_state();
        for _ in 0..no_link {
            st.tx_no_link();
        }
        for _ in 0..failed {
            st.tx_drop();
        }
        for (l, &n) in full.iter().enumerate() {
            for _ in 0..n {
                st.tx_queue_full(l);
            }
        }
        // The slot is of the table transmit found; `peer_mem` may have
        // replaced it since (a transmit while the device is not up).
        if !swept && core::ptr::eq(slots, st.slots_ptr()) {
            if let Some(cell) = slots.cell(slot) {
                st.tx_swept(slot, &mut cell.lock().tx);
            }
        }
    }
    drop(garbage);
    if stale != 0 && slots.carrier_told.fetch_or(stale, Ordering::Relaxed) & stale != stale {
        crate::ri2n_hb::kick(dev);
    }
    Ok(drain)
}

/// Of `links`, those whose slave's queue is not stopped, and those whose
/// slave is up with carrier, read without the state lock.
fn slave_links(d: &Ri2n, rcu: &rcu::Guard, links: u8) -> (u8, u8) {
    let (mut ok, mut live) = (0, 0);
    for l in links_in(links) {
        let Some(s) = d.txq[l].slave.get(rcu) else {
            continue;
        };
        if !s.tx_queue_stopped(0) {
            ok |= 1 << l;
        }
        if s.running() && s.carrier_ok() {
            live |= 1 << l;
        }
    }
    (ok, live)
}

/// Late segmentation of our GSO packets on the slaves (`tx_gso`): the
/// shim is a data header, sealed or not (not both sealed and in one-switch
/// mode); segment `i` takes number `seq + i`, and a sealed one its own tag
/// (core/header.rs, `shim_for_segment`). On receive, the slaves' GRO
/// merges a peer's frames that follow one another on a link, sealed ones
/// only with their tags verified (`shim_continues`).
pub(crate) struct Offload;

impl crate::net::offload::ShimOffload for Offload {
    type Upper = crate::ri2n_dev::Ri2n;
    const ETHERTYPE: u16 = ETH_P_RI2N;
    const MIN_LEN: usize = HEADER_LEN;

    fn parse(shim: &[u8]) -> Option<(usize, u16)> {
        let len = match shim[0] {
            VERSION => HEADER_LEN,
            VERSION_ONE_SWITCH => HEADER_LEN + ORIGIN_LEN,
            VERSION_SEALED => SEALED_LEN,
            // Its tag covers the ri2n destination, which a frame sent to
            // a peer's slave MAC does not carry.
            VERSION_ONE_SWITCH_SEALED => return None,
            _ => return None,
        };
        let inner = u16::from_be_bytes([shim[2], shim[3]]);
        // IP only: a shim inside a shim would recurse.
        (shim[1] == Kind::Data as u8 && (inner == 0x0800 || inner == 0x86dd))
            .then_some((len, inner))
    }

    fn fix(
        upper: Option<&Ri2nDev>,
        rcu: &InRcu,
        index: u32,
        addrs: &[u8; 12],
        shim: &mut [u8],
    ) -> bool {
        let keys = upper.and_then(|u| u.data().offload_keys.get(rcu));
        shim_for_segment(shim, index, addrs, keys.and_then(|k| k.sealing()))
    }

    /// The same header but for the number, which follows the held
    /// packet's last (the window takes the merged packet as that run), and
    /// sealed frames' tags, verified (`shim_continues`). The same first
    /// four bytes: `parse` takes both alike.
    fn follows(
        upper: &Ri2nDev,
        rcu: &InRcu,
        addrs: &[u8; 12],
        held: &[u8],
        shim: &[u8],
        count: u32,
    ) -> bool {
        shim_continues(held, shim, count, addrs, upper.data().offload_keys.get(rcu))
    }

    const MAX_MERGE: u32 = crate::proto::window::MAX_SPAN;
}

/// One-switch mode: the origin a frame from `addrs` (destination and
/// source MAC, as the stack made them) carries: its source.
fn origin_of(one_switch: bool, addrs: &[u8; 12], link: usize) -> Option<Origin> {
    one_switch.then(|| {
        let mut mac = [0u8; 6];
        mac.copy_from_slice(&addrs[6..]);
        Origin {
            mac,
            link: link as u8,
        }
    })
}

/// One-switch mode: the addresses a tag covers, the ri2n destination in
/// `addrs` and the slave's own MAC the frame leaves from (the origin, in
/// the header, names the ri2n source): what a receiver learns from is
/// covered too.
pub(crate) fn tag_addrs(addrs: &[u8; 12], from: &Mac) -> [u8; 12] {
    let mut a = *addrs;
    a[6..].copy_from_slice(from);
    a
}

/// Writes the RI2N header `h` of a frame to `addrs` (destination and
/// source MAC of the ri2n devices) into `out`, with `origin` (one-switch
/// mode), sealed with our epoch under the sealing key if there is one
/// (`payload`: a heartbeat's, which the tag covers too). Returns its length.
/// `key`: the sealing key, if any.
pub(crate) fn encode_header(
    key: Option<&Key>,
    epoch: u64,
    addrs: &[u8; 12],
    h: Header,
    origin: Option<&Origin>,
    payload: &[u8],
    out: &mut [u8; MAX_HEADER_LEN],
) -> usize {
    let n = h.encode_full(origin, key.map(|_| epoch), out);
    if let Some(k) = key {
        let tag = Msg::with_header_len(addrs, out, n - TAG_LEN, payload).tag(k);
        out[n - TAG_LEN..n].copy_from_slice(&tag);
    }
    n
}
