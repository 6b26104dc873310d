// SPDX-License-Identifier: GPL-2.0

//! The generic netlink family `ri2n` (include/uapi/linux/ri2n.h), in the
//! manner of WireGuard's: a device dumped a message at a time, its
//! parameters and keys set, and its transitions sent to the group `events`.

use crate::net::device::{Device, NetDevice, NlMsg, Rtnl};
use crate::net::genl::{Attr as Kind, Commands, Dump, Family, Op, Perm, Request};
use crate::proto::auth::Key;
use crate::proto::events::Event;
use crate::proto::params::{Param, NPARAMS};
use crate::proto::time::Instant;
use crate::proto::uapi::{
    self, attr, cmd, endpoint, event, peer, slave, Attr, EndpointState, Reason,
};
use crate::proto::{links_in, MAX_LINKS};
use crate::ri2n_dev::{Ri2n, Ri2nDev};
use crate::ri2n_proc::{copy_peers, PeerView};
use kernel::alloc::KVVec;
use kernel::prelude::*;
use kernel::sync::aref::ARef;

/// The family (see the module documentation).
pub(crate) struct Ri2nGenl;

/// The family's registration and its messages' way out.
pub(crate) static FAMILY: Family<Ri2nGenl> = Family::new();

/// The group `events`.
const GROUP_EVENTS: u32 = 0;

/// What each top-level attribute is in a request: below 32 as in
/// `IFLA_INFO_DATA` (state read-only, parameters u32), then the device's
/// name and the keys; the rest the kernel only sends.
const ATTRS: [Kind; attr::MAX as usize] = {
    let mut kinds = [Kind::Reserved; attr::MAX as usize];
    let mut ty = 1;
    while ty <= attr::MAX {
        kinds[ty as usize - 1] = match ty {
            attr::IFINDEX => Kind::U32,
            // IFNAMSIZ with the NUL.
            attr::IFNAME => Kind::String(15),
            attr::KEY | attr::KEY_ACCEPT => Kind::Bytes(uapi::KEY_LEN as u16),
            attr::KEY_NONE | attr::ACCEPT_NONE => Kind::Flag,
            attr::MAC..=attr::PEER | attr::EVENT => {
                Kind::ReadOnly(c"reported by the kernel, never set")
            }
            _ => match Attr::of(ty) {
                Attr::State => Kind::ReadOnly(c"epoch, version, slaves and peers are read-only"),
                Attr::Reserved => Kind::Reserved,
                Attr::Param(_) => Kind::U32,
            },
        };
        ty += 1;
    }
    kinds
};

impl Commands for Ri2nGenl {
    const NAME: &'static CStr = c"ri2n";
    const VERSION: u8 = uapi::GENL_VERSION;
    const ATTRS: &'static [Kind] = &ATTRS;
    const OPS: &'static [Op] = &[
        Op {
            cmd: cmd::GET_DEVICE,
            dump: true,
            // What procfs shows anyone; no key is ever in it.
            perm: Perm::Anyone,
        },
        Op {
            cmd: cmd::SET_DEVICE,
            dump: false,
            perm: Perm::NetAdmin,
        },
    ];
    const GROUPS: &'static [&'static CStr] = &[c"events"];

    fn doit(c: u8, req: &Request<'_>) -> Result {
        match c {
            cmd::SET_DEVICE => set_device(req),
            _ => Err(EOPNOTSUPP),
        }
    }

    fn dumpit(c: u8, dump: &mut Dump<'_>) -> Result {
        match c {
            cmd::GET_DEVICE => get_device(dump),
            _ => Err(EOPNOTSUPP),
        }
    }
}

const _: () = {
    let (ours, uapi) = (Ri2nGenl::NAME.to_bytes(), uapi::GENL_NAME.as_bytes());
    assert!(ours.len() == uapi.len());
    let mut i = 0;
    while i < ours.len() {
        assert!(ours[i] == uapi[i]);
        i += 1;
    }
};

/// The device a request names, by index or by name (one of them), if it
/// is a ri2n device.
fn named(
    ifindex: Option<u32>,
    ifname: Option<&CStr>,
    by_index: impl FnOnce(u32) -> Option<ARef<Device>>,
    by_name: impl FnOnce(&CStr) -> Option<ARef<Device>>,
    ack: &crate::net::device::ExtAck,
) -> Result<ARef<Device>> {
    let dev = match (ifindex, ifname) {
        (Some(i), None) => by_index(i),
        (None, Some(n)) => by_name(n),
        _ => {
            ack.set_msg(c"name the device by RI2N_A_IFINDEX or by RI2N_A_IFNAME");
            return Err(EINVAL);
        }
    }
    .ok_or(ENODEV)?;
    if NetDevice::<Ri2n>::of(&dev).is_none() {
        ack.set_msg(c"not a ri2n device");
        return Err(EOPNOTSUPP);
    }
    Ok(dev)
}

/// `RI2N_CMD_SET_DEVICE`: the parameters, all or none (as `ip link set`),
/// then the keys.
fn set_device(req: &Request<'_>) -> Result {
    let (a, ack) = (req.attrs(), req.ext_ack());
    let held = named(
        a.u32(attr::IFINDEX),
        a.str(attr::IFNAME),
        |i| req.device_by_index(i),
        |n| req.device_by_name(n),
        &ack,
    )?;
    let dev = NetDevice::<Ri2n>::of(&held).ok_or(ENODEV)?;
    let mut pairs = [(Param::FtHthresh, 0); NPARAMS];
    let mut n = 0;
    for p in Param::ALL {
        if let Some(v) = a.u32(p.attr()) {
            pairs[n] = (p, v);
            n += 1;
        }
    }
    let key = |set: u16, none: u16| -> Result<Option<Option<Key>>> {
        match (a.bytes(set), a.flag(none)) {
            (None, false) => Ok(None),
            (None, true) => Ok(Some(None)),
            (Some(b), false) => {
                // The policy checked the length.
                let b: &[u8; uapi::KEY_LEN] = b.try_into().map_err(|_| EINVAL)?;
                Ok(Some(Some(Key::from_bytes(b))))
            }
            (Some(_), true) => {
                ack.set_msg(c"a key and its none at once");
                Err(EINVAL)
            }
        }
    };
    let (seal, accept) = (
        key(attr::KEY, attr::KEY_NONE)?,
        key(attr::KEY_ACCEPT, attr::ACCEPT_NONE)?,
    );
    let rtnl = Rtnl::lock();
    // Found before RTNL: it may have been deleted since.
    if !dev.is_registered(&rtnl) {
        return Err(ENODEV);
    }
    if n > 0 {
        crate::ri2n_conf::set_params(dev, &rtnl, &pairs[..n], &ack).map_err(|(e, _)| e)?;
    }
    if let Some(k) = seal {
        crate::ri2n_dev::apply_key(dev, &rtnl, 0, k)?;
    }
    if let Some(k) = accept {
        crate::ri2n_dev::apply_key(dev, &rtnl, 1, k)?;
    }
    Ok(())
}

/// Where a dump is: `Dump::state` entries.
const PHASE: usize = 0;
const NEXT_SLOT: usize = 1;
const IFINDEX: usize = 2;
/// The device's epoch: another device that took its index ends the dump.
const EPOCH: usize = 3;
/// Phases: the device's message next, peers next, done.
const DEVICE: u64 = 0;
const PEERS: u64 = 1;
const DONE: u64 = 2;

/// Peers per message: a copy of each is made under the lock first, at
/// most 1,152 bytes each (18 KiB for a message's worth, with the dump
/// buffer all a dump holds of kernel memory at a time).
const PEERS_PER_MESSAGE: usize = 16;
const _: () = assert!(core::mem::size_of::<PeerView>() <= 1152);

/// A dump's generation for `peers_gen`: never 0, which the core takes for
/// none.
fn generation(peers_gen: u32) -> u32 {
    (peers_gen << 1) | 1
}

/// `RI2N_CMD_GET_DEVICE`: the device's message, then its peers, as many
/// messages as fit in each call.
fn get_device(d: &mut Dump<'_>) -> Result {
    let st = *d.state();
    if st[PHASE] == DONE {
        return Ok(());
    }
    let held = if st[IFINDEX] == 0 {
        let (a, ack) = (d.attrs(), d.ext_ack());
        named(
            a.u32(attr::IFINDEX),
            a.str(attr::IFNAME),
            |i| d.device_by_index(i),
            |n| d.device_by_name(n),
            &ack,
        )?
    } else {
        // Gone: the dump ends short.
        d.device_by_index(st[IFINDEX] as u32).ok_or(ENODEV)?
    };
    let dev = NetDevice::<Ri2n>::of(&held).ok_or(ENODEV)?;
    if st[IFINDEX] != 0 && st[EPOCH] != dev.data().epoch {
        // Another device took the index (or the namespace moved).
        return Err(ENODEV);
    }
    d.state()[IFINDEX] = dev.ifindex() as u64;
    d.state()[EPOCH] = dev.data().epoch;
    if st[PHASE] == DEVICE {
        d.set_generation(generation(dev.data().lock_state().peers_gen()));
        let m = d.message(cmd::GET_DEVICE).ok_or(EMSGSIZE)?;
        fill_device(dev, &m)?;
        m.end();
        d.state()[PHASE] = PEERS;
    }
    let mut chunk = KVVec::with_capacity(PEERS_PER_MESSAGE, GFP_KERNEL)?;
    loop {
        let from = d.state()[NEXT_SLOT] as usize;
        let got = copy_peers(dev, from, &mut chunk);
        d.set_generation(generation(got.gen));
        if chunk.is_empty() {
            // A stretch of empty slots, or the end.
            match got.next {
                Some(next) => d.state()[NEXT_SLOT] = next as u64,
                None => d.state()[PHASE] = DONE,
            }
            if got.next.is_none() {
                return Ok(());
            }
            continue;
        }
        let empty = d.is_empty();
        let Some(m) = d.message(cmd::GET_DEVICE) else {
            return Ok(());
        };
        let now = Instant(crate::net::ktime_ns());
        // The first peer not put, if any.
        let stop = if m.put_u32(attr::IFINDEX, dev.ifindex() as u32).is_ok() {
            chunk
                .iter()
                .find(|v| put_peer(&m, v, got.links, got.carrier, now).is_err())
                .map(|v| v.slot)
        } else {
            chunk.first().map(|v| v.slot)
        };
        if stop == chunk.first().map(|v| v.slot) {
            // Not one peer fits in an empty buffer: no later call does
            // better.
            drop(m);
            return if empty { Err(EMSGSIZE) } else { Ok(()) };
        }
        m.end();
        match (stop, got.next) {
            // The buffer is full: the rest in the next call.
            (Some(slot), _) => {
                d.state()[NEXT_SLOT] = slot as u64;
                return Ok(());
            }
            (None, Some(next)) => d.state()[NEXT_SLOT] = next as u64,
            (None, None) => {
                d.state()[PHASE] = DONE;
                return Ok(());
            }
        }
    }
}

/// The device's message: its `IFLA_INFO_DATA`, then what procfs shows
/// of it.
fn fill_device(dev: &Ri2nDev, m: &NlMsg) -> Result {
    let d = dev.data();
    m.put_u32(attr::IFINDEX, dev.ifindex() as u32)?;
    m.put_str(attr::IFNAME, &dev.name())?;
    Ri2n::fill_link_attrs(dev, m)?;
    m.put_bytes(attr::MAC, &dev.addr())?;
    m.put_u32(attr::MTU, dev.mtu())?;
    m.put_u64(attr::EPOCH64, d.epoch)?;
    let counted = dev.counted();
    let st = d.lock_state();
    let now = Instant(crate::net::ktime_ns());
    m.put_u64(attr::CLOCK_MS, crate::net::realtime_ms())?;
    m.put_u64(attr::MONO_MS, now.0 / 1_000_000)?;
    m.put_u8(attr::UP, u8::from(st.is_up()))?;
    let k = st.keys();
    m.put_u8(attr::KEYS_ON, u8::from(k.on()))?;
    if let Some(k) = k.sealing() {
        m.put_u32(attr::KEY_ID, k.id())?;
    }
    if let Some(k) = k.accepted() {
        m.put_u32(attr::ACCEPT_ID, k.id())?;
    }
    for (l, s) in st.slaves() {
        let ls = st.link_stats(l);
        m.nest(attr::SLAVE, |m| {
            m.put_u32(slave::LINK, l as u32)?;
            m.put_str(slave::NAME, s.name())?;
            m.put_u8(slave::CARRIER, u8::from(st.carrier() & (1 << l) != 0))?;
            let v: [u64; slave::U64.len()] = [
                st.carrier_age(l, now).as_ms(),
                d.txq[l].tx_packets(),
                ls.rx_packets,
                ls.tx_dropped,
                d.txq[l].tx_whole(),
            ];
            m.put_u64s(uapi::U64_FIRST, &v)
        })?;
    }
    let counters = Ri2n::counter_values(dev, &st, counted);
    m.nest(attr::COUNTERS, |m| m.put_u64s(1, &counters))?;
    let (cap, bufs, bufs_max, held) = st.memory();
    let (lossy, probing, shift) = st.loss_probes(now);
    let summary: [u64; uapi::PEERS_SUMMARY.len()] = [
        st.npeers() as u64,
        cap as u64,
        bufs as u64,
        bufs_max as u64,
        held as u64,
        lossy as u64,
        probing as u64,
        u64::from(shift),
    ];
    m.nest(attr::PEERS_SUMMARY, |m| m.put_u64s(1, &summary))
}

/// One peer's nest, with an endpoint per link in `links`.
fn put_peer(m: &NlMsg, v: &PeerView, links: u8, carrier: u8, now: Instant) -> Result {
    m.nest(attr::PEER, |m| {
        m.put_bytes(peer::MAC, &v.mac)?;
        m.put_u64(peer::EPOCH, v.epoch)?;
        let r = &v.stats;
        let fields: [u64; peer::U64.len()] = [
            u64::from(v.tx_next),
            u64::from(v.rx_next),
            v.held as u64,
            r.in_order,
            r.timeout,
            r.loss,
            r.flushes,
            r.jumps,
            r.gaps,
            r.late,
            r.late_loss,
            r.duplicates,
            r.resyncs,
            r.unbuffered,
        ];
        m.put_u64s(uapi::U64_FIRST, &fields)?;
        for l in links_in(links) {
            let e = &v.endpoints[l];
            m.nest(peer::ENDPOINT, |m| {
                m.put_u32(endpoint::LINK, l as u32)?;
                let up = carrier & (1 << l) != 0;
                let state = EndpointState::of(up, e.failed, e.peer_failed, e.lossy);
                m.put_u8(endpoint::STATE, state as u8)?;
                m.put_bytes(endpoint::PEER_SLAVE_MAC, &v.link_mac[l])?;
                let fields: [u64; endpoint::U64.len()] = [
                    u64::from(e.counter),
                    now.since(e.last_rx).as_ms(),
                    now.since(e.changed).as_ms(),
                    e.rx_packets,
                    e.rx_heartbeats,
                    u64::from(e.rx_late),
                    u64::from(e.tx_frames),
                    u64::from(e.fails),
                    u64::from(e.recoveries),
                    u64::from(e.loss_bp),
                    u64::from(e.lossy_count),
                    u64::from((v.peer_lossy >> l) & 1),
                ];
                m.put_u64s(uapi::U64_FIRST, &fields)
            })?;
        }
        Ok(())
    })
}

/// Transitions taken per hold of the state lock.
const EVENTS_PER_HOLD: usize = 8;

/// `events_work`: sends the transitions the state queued to the group
/// `events`, oldest first; with nobody listening in the device's
/// namespace they are dropped unsent.
pub(crate) fn send_events(dev: &Ri2nDev) {
    loop {
        let mut batch = [None; EVENTS_PER_HOLD];
        let mut names = [[0u8; 16]; MAX_LINKS];
        let dropped = {
            let mut st = dev.data().lock_state();
            for e in batch.iter_mut() {
                *e = st.pop_event();
            }
            for (l, s) in st.slaves() {
                names[l] = s.name;
            }
            st.events_dropped()
        };
        if batch[0].is_none() {
            return;
        }
        if !FAMILY.has_listeners(dev, GROUP_EVENTS) {
            continue;
        }
        // The events' times, on the wall clock.
        let (wall, mono) = (crate::net::realtime_ns(), crate::net::ktime_ns());
        for e in batch.iter().flatten() {
            let at = wall.saturating_sub(mono.saturating_sub(e.at.0));
            // Nobody left listening, or no memory: this one is lost, as
            // a multicast may be.
            let _ = send_event(dev, e, &names, at, dropped);
        }
    }
}

/// Says that `dev` is being deleted: the last event of its, sent at once
/// (process context, under RTNL), whatever the budget.
pub(crate) fn send_removed(dev: &Ri2nDev) {
    // The work sends nothing after this (it only takes the state lock:
    // waiting for it under RTNL is safe), then what it left goes first.
    Ri2n::events_work(dev).disable_sync();
    send_events(dev);
    if !FAMILY.has_listeners(dev, GROUP_EVENTS) {
        return;
    }
    let dropped = dev.data().lock_state().events_dropped();
    let e = Event {
        reason: Reason::DeviceRemoved,
        at: Instant(crate::net::ktime_ns()),
        peer: None,
        link: None,
        states: None,
    };
    let _ = send_event(
        dev,
        &e,
        &[[0; 16]; MAX_LINKS],
        crate::net::realtime_ns(),
        dropped,
    );
}

/// One event's message.
fn send_event(
    dev: &Ri2nDev,
    e: &Event,
    names: &[[u8; 16]; MAX_LINKS],
    at: u64,
    dropped: u64,
) -> Result {
    let msg = FAMILY.message(cmd::EVENT)?;
    let m = msg.attrs();
    m.put_u32(attr::IFINDEX, dev.ifindex() as u32)?;
    m.put_str(attr::IFNAME, &dev.name())?;
    m.nest(attr::EVENT, |m| {
        m.put_u8(event::REASON, e.reason as u8)?;
        m.put_u64(event::TIME_NS, at)?;
        if let Some(p) = &e.peer {
            m.put_bytes(event::PEER, p)?;
        }
        if let Some(l) = e.link {
            m.put_u32(event::LINK, u32::from(l))?;
            let n = &names[usize::from(l) % MAX_LINKS];
            let len = n.iter().position(|&c| c == 0).unwrap_or(n.len());
            if len > 0 {
                m.put_str(event::SLAVE, core::str::from_utf8(&n[..len]).unwrap_or("?"))?;
            }
        }
        if let Some((old, new)) = e.states {
            m.put_u8(event::OLD, old as u8)?;
            m.put_u8(event::NEW, new as u8)?;
        }
        m.put_u64(event::DROPPED, dropped)
    })?;
    msg.multicast(dev, GROUP_EVENTS)
}
