// SPDX-License-Identifier: GPL-2.0

//! Heartbeats and the FAST_TOUT sweep (driver paper §4.4, §5.5, §5.7).
//!
//! Timers of each device, armed only while it is up ([`start`], [`stop`]):
//!
//! - `hb_timer`, at the next of HBSPAN's 64 phases that has a peer (at
//!   most HBSPAN apart, as far as the timer wheel keeps a wait that long:
//!   it may fire a few percent late): a heartbeat is due to the peers of
//!   the phases since the last tick (so every peer, each HBSPAN, spread
//!   over it) on every link that is up, failed endpoints included
//!   (recovery needs them). A node with a few peers wakes for them, not
//!   64 times.
//! - `sweep_timer`, at the next deadline of the peers on the sweep list
//!   (`Peer::next_due`), no sooner than FAST_TOUT/4 (at least 1 ms) after
//!   its last run and no later than 63 ms: hands up what waited FAST_TOUT
//!   or was proved lost; starts and ends probe rounds for links that fell
//!   silent, retries failed links, asks for loss reports; ages out silent
//!   peers; polls the slaves' carrier (loss only: see ri2n_slave.rs); sends
//!   queued heartbeats (probes, answers, news of a failure, a recovery or a
//!   carrier change). Receive pulls it earlier when a peer's deadline moves
//!   up (a window starts holding, a link falls silent); [`kick`] fires it
//!   at once.
//!
//! Both re-arm only while the device is up; [`stop`] stops them
//! synchronously, and dropping the device's data shuts them down for good.

use crate::net::lock::Bh;
use crate::net::skb::Skb;
use crate::net::skb::SkbList;
use crate::net::Mac;
use crate::proto::header::{
    Header, Heartbeat, Kind, Origin, ETH_P_RI2N, HEARTBEAT_SEALED_LEN, MAX_HEADER_LEN,
};
use crate::proto::node::HeartbeatOrders;
use crate::proto::seq::Seq;
use crate::proto::MAX_LINKS;
use crate::ri2n_dev::Ri2nDev;
use crate::ri2n_state::{State, HB_PHASES};
use crate::ri2n_tx::{encode_header, tag_addrs, task, ETH_HLEN};
use crate::Ri2n;
use kernel::sync::rcu;

/// ri2n0 goes up (`ndo_open`): timers start.
pub(crate) fn start(dev: &Ri2nDev) {
    let d = dev.data();
    let mut st = d.lock_state();
    let mut none = SkbList::new();
    st.set_up(true, &mut none);
    // The first heartbeats go out soon: peers learn our epoch and links.
    Ri2n::hb_timer(dev).arm_ms((st.params().hbspan().as_ms() as u32).min(100));
    st.sweep_now();
    Ri2n::sweep_timer(dev).arm_after_ms(st.sweep_delay_ms());
    drop(st);
}

/// ri2n0 goes down (`ndo_stop`): timers stop, held packets are freed.
pub(crate) fn stop(dev: &Ri2nDev) {
    let d = dev.data();
    let mut garbage = SkbList::new();
    d.lock_state().set_up(false, &mut garbage);
    // Callbacks do not re-arm once the device is down.
    Ri2n::hb_timer(dev).stop();
    Ri2n::sweep_timer(dev).stop();
    drop(garbage);
    // A queue paused for the sweep, which no longer runs, would keep its
    // frames, charged to their sockets, until the next up: they go now.
    for (l, q) in d.txq.iter().enumerate() {
        crate::ri2n_txq::unsent(dev, l, q.flush());
    }
}

/// Runs the sweep (and sends queued heartbeats) as soon as possible.
/// Armed under the state lock, so that it cannot race `stop` and leave
/// the timer armed on a stopped device.
pub(crate) fn kick(dev: &Ri2nDev) {
    kick_locked(dev, &mut dev.data().lock_state());
}

/// [`kick`], the state lock held by the caller as `st`.
pub(crate) fn kick_locked(dev: &Ri2nDev, st: &mut State) {
    if st.is_up() {
        st.sweep_now();
        Ri2n::sweep_timer(dev).arm_ms(0);
    }
}

/// `hb_timer`, at the phases of HBSPAN that have peers: heartbeats on
/// every link that is up to the peers of the phases since the last tick.
pub(crate) fn heartbeat_timer(dev: &Ri2nDev, _bh: &Bh<'_>) {
    let d = dev.data();
    let phases = {
        let mut st = d.lock_state();
        if !st.is_up() {
            return;
        }
        st.hb_tick() as u64
    };
    let more = send_pending(dev);
    let mut st = d.lock_state();
    if more {
        // More peers' heartbeats than one call sends: the sweep sends the
        // rest, a period from now at the latest.
        if let Some(ms) = st.sweep_within_period() {
            Ri2n::sweep_timer(dev).reduce_ms(ms);
        }
    }
    // Re-armed under the lock, with the HBSPAN of now: a device gone down
    // stays unarmed, and a shorter HBSPAN stored meanwhile (whose wake
    // found the timer running) is not undone by the old one's wait.
    if st.is_up() {
        let tick = (st.params().hbspan().as_ms() * phases / HB_PHASES as u64) as u32;
        Ri2n::hb_timer(dev).arm_ms(tick.max(1));
    }
}

/// `sweep_timer`: FAST_TOUT and loss releases for every peer; probes;
/// queued heartbeats.
pub(crate) fn sweep_timer(dev: &Ri2nDev, bh: &Bh<'_>) {
    let d = dev.data();
    let mut garbage = SkbList::new();
    let (pending, was_up) = {
        let mut st = d.lock_state();
        let pending = st.sweep(&dev.name(), &d.gro, bh, &mut garbage);
        crate::ri2n_slave::tell_changes(dev, &mut st);
        (pending, st.is_up())
    };
    drop(garbage);
    let me = crate::net::task_id();
    let paused = (0..MAX_LINKS)
        .filter(|&l| d.txq[l].adopt(me))
        .fold(0u8, |m, l| m | 1 << l);
    // Queues a drainer left over its budget go on, up or down.
    crate::ri2n_txq::drain_links(dev, paused);
    if !was_up {
        return;
    }
    crate::ri2n_dev::Ri2n::update_carrier(dev);
    if pending {
        send_pending(dev);
    }
    // A queue left paused (by this sweep's drain, or since) goes on at
    // once: re-arming later would undo the drainer's kick.
    let paused = d.txq.iter().any(|q| q.paused());
    // Armed under the lock, so that a device gone down stays unarmed; by
    // reducing, so that a receive that pulled the deadline since the
    // sweep, without the lock too (`Slots::sweep_at`), is not undone: the
    // timer fired, and only pulls arm it meanwhile.
    let mut st = d.lock_state();
    if st.is_up() {
        if paused {
            st.sweep_now();
        }
        Ri2n::sweep_timer(dev).reduce_ms(st.sweep_delay_ms());
    }
    drop(st);
}

/// Most peers whose heartbeats one call sends: the rest wait for the next
/// sweep, so that many new peers at once (a flood of new source MACs)
/// cannot fill the links' queues with heartbeats.
const HB_PEERS_PER_CALL: usize = 64;

/// Queues pending heartbeats, peer by peer, and drains the links.
/// Returns whether it stopped at `HB_PEERS_PER_CALL` (more may wait).
fn send_pending(dev: &Ri2nDev) -> bool {
    let d = dev.data();
    let mut drain = 0u8;
    let mut peers = 0;
    while peers < HB_PEERS_PER_CALL {
        let Some((peer, next, orders)) = d.lock_state().take_heartbeats() else {
            break;
        };
        drain |= queue_heartbeats(dev, &peer, next, &orders).1;
        peers += 1;
    }
    crate::ri2n_txq::drain_links(dev, drain);
    peers == HB_PEERS_PER_CALL
}

/// Room for the longest (sealed) heartbeat frame, and Ethernet's 60-byte
/// minimum, which the slave would pad shorter frames to anyway.
const HB_FRAME_MAX: usize = ETH_HLEN + MAX_HEADER_LEN + HEARTBEAT_SEALED_LEN;

/// A heartbeat to send: its payload, and where it goes.
struct HbFrame<'a> {
    /// The peer's ri2n MAC, and in one-switch mode its slave's on the link
    /// (zero until learned).
    peer: &'a Mac,
    peer_slave: Mac,
    /// Our ri2n MAC, and our slave's on the link.
    me: Mac,
    from: Mac,
    link: usize,
    /// The peer's next number from us.
    next: Seq,
    hb: Heartbeat,
}

/// Writes heartbeat `f` as a whole frame into `frame` (sealed with the
/// state's key, if any); returns its length.
fn encode_heartbeat(
    st: &State,
    epoch: u64,
    f: &HbFrame<'_>,
    frame: &mut [u8; HB_FRAME_MAX],
) -> usize {
    let mut payload = [0u8; HEARTBEAT_SEALED_LEN];
    let plen = f.hb.encode(&mut payload);
    let mut addrs = [0u8; 12];
    addrs[..6].copy_from_slice(f.peer);
    addrs[6..].copy_from_slice(&f.me);
    let h = Header {
        kind: Kind::Heartbeat,
        protocol: 0,
        seq: f.next,
    };
    let one_switch = st.one_switch();
    let origin = one_switch.then_some(Origin {
        mac: f.me,
        link: f.link as u8,
    });
    let covered = if one_switch {
        tag_addrs(&addrs, &f.from)
    } else {
        addrs
    };
    let mut hdr = [0u8; MAX_HEADER_LEN];
    let hlen = encode_header(
        st.keys().sealing(),
        epoch,
        &covered,
        h,
        origin.as_ref(),
        &payload[..plen],
        &mut hdr,
    );
    frame[..12].copy_from_slice(&addrs);
    if one_switch {
        // To the peer's slave on the link (its ri2n MAC, flooded, until
        // learned), from ours.
        if f.peer_slave != [0; 6] {
            frame[..6].copy_from_slice(&f.peer_slave);
        }
        frame[6..12].copy_from_slice(&f.from);
    }
    frame[12..14].copy_from_slice(&ETH_P_RI2N.to_be_bytes());
    frame[ETH_HLEN..ETH_HLEN + hlen].copy_from_slice(&hdr[..hlen]);
    frame[ETH_HLEN + hlen..ETH_HLEN + hlen + plen].copy_from_slice(&payload[..plen]);
    (ETH_HLEN + hlen + plen).max(60)
}

/// Builds the heartbeats of `orders` to `peer`, whose next number from us
/// was `next` when they were ordered, and queues them on their links,
/// where they keep their place among the peer's data. Returns how many
/// were queued and the links to drain.
pub(crate) fn queue_heartbeats(
    dev: &Ri2nDev,
    peer: &Mac,
    next: Seq,
    orders: &HeartbeatOrders,
) -> (u64, u8) {
    let d = dev.data();
    let mut garbage = SkbList::new();
    let (mut sent, mut drain) = (0u64, 0u8);
    let rcu = rcu::read_lock();
    let mut st = d.lock_state();
    // Read under the state lock, which `peer_mem` replaces them under: the
    // slots the peers' numbers name.
    let slots = d.slots(&rcu);
    for o in orders.iter().flatten() {
        let Some(slave) = st.slave(o.link).map(|s| s.dev.clone()) else {
            continue;
        };
        // The peer's transmit side is held from the count to the queue, so
        // that the count covers every frame before the heartbeat on its
        // link, and none after.
        let mut tx = st
            .peer_of(peer)
            .and_then(|s| slots.cell(s))
            .map(|c| c.lock());
        // Counted as sent here; taken back below if it never leaves.
        let counts = tx.as_mut().and_then(|c| State::hb_counts(c, o.link));
        // The number for the peer now, not when the order was taken: the
        // lockless transmit may have sent frames after it since, and the
        // peer takes a heartbeat that many frames sent after it overtook
        // by FAST_TOUT for a late one (`PeerRx::lagging`).
        let now = tx.as_mut().and_then(|c| {
            c.peer_for(peer)
                .map(|(t, p)| (t.tx_seq, p.link_mac[o.link]))
        });
        let counter = st.keys().on().then(|| st.next_hb_counter());
        if counter.is_some() && counts.is_none() {
            // The peer left the table: a sealed heartbeat needs its counts.
            continue;
        }
        let f = HbFrame {
            peer,
            peer_slave: now.map_or([0; 6], |n| n.1),
            me: dev.addr(),
            from: st.slave_mac(o.link),
            link: o.link,
            next: now.map_or(next, |n| n.0),
            hb: Heartbeat {
                epoch: d.epoch as u32,
                flags: o.flags,
                link: o.link as u8,
                down: o.down,
                probe_shift: o.probe_shift,
                counts,
                counter,
            },
        };
        let mut frame = [0u8; HB_FRAME_MAX];
        let len = encode_heartbeat(&st, d.epoch, &f, &mut frame);
        let queued = Skb::alloc(&slave, len as u32).and_then(|mut skb| {
            if skb.write(0, &frame[..len]) {
                st.txq_push(&d.txq[o.link], o.link, skb, task(), &mut garbage)
            } else {
                garbage.push(skb);
                None
            }
        });
        match queued {
            Some(drain_it) => {
                drain |= u8::from(drain_it) << o.link;
                sent += 1;
            }
            None => {
                if let Some(c) = tx.as_mut() {
                    c.tx.unsent(o.link, 1);
                }
            }
        }
    }
    st.hb_sent(sent);
    drop(st);
    drop(garbage);
    (sent, drain)
}
