// SPDX-License-Identifier: GPL-2.0

//! Heartbeats, the FAST_TOUT sweep, and slave events (driver paper §4.4,
//! §5.5, §5.7).
//!
//! Timers, armed only while ri2n0 is up (`start`/`stop`):
//!
//! - `HB_TIMER`, every HBSPAN: queue a heartbeat to every known peer on every
//!   link that is up, failed endpoints included (recovery needs them), and
//!   send them.
//! - `SWEEP_TIMER`, every FAST_TOUT/4 (at least 1 ms): hand up what waited
//!   FAST_TOUT or was proved lost, in every peer's window; poll the slaves'
//!   carrier; start and end probe rounds for links that fell silent; send
//!   queued heartbeats (probes, probe answers, news of a failure, a recovery
//!   or a carrier change); [`kick`] fires it at once.
//!
//! Slave carrier loss is polled by the sweep, as bonding's miimon does,
//! because the netdev notifier hears of it only when linkwatch gets to it,
//! which for an ordinary NIC may be a second later. Carrier back is taken
//! from the notifier alone: linkwatch reactivates the slave's qdisc first
//! (and treats that as urgent), and a probe sent before would be dropped.
//! The notifier (under RTNL) also covers the time ri2n0 is down. Carrier
//! loss takes a link out of use at once, for every peer; carrier back probes
//! it (a heartbeat that asks for an answer) so recovery needs no HBSPAN
//! wait. MTU changes bound ri2n0's MTU; unregistration releases the slave.

use kernel::prelude::*;
use crate::proto::header::HB_PROBE;
use crate::proto::MAX_LINKS;
use crate::ri2n_glue::{self, Mac, NetDev, Rtnl, HB_TIMER, SWEEP_TIMER};
use crate::{device, Ri2n, State};

// From include/linux/netdevice.h, enum netdev_cmd.
const NETDEV_UP: u32 = 1;
const NETDEV_DOWN: u32 = 2;
const NETDEV_CHANGE: u32 = 4;
const NETDEV_UNREGISTER: u32 = 6;
const NETDEV_CHANGEMTU: u32 = 7;

fn sweep_period_ms(d: &Ri2n) -> u32 {
    (d.state.lock().params.fast_tout().as_ms() as u32 / 4).max(1)
}

/// ri2n0 goes up (`ndo_open`): timers start.
pub(crate) fn start() {
    let Some(d) = device() else { return };
    let hbspan = {
        let mut st = d.state.lock();
        st.up = true;
        st.params.hbspan().as_ms() as u32
    };
    // The first heartbeats go out soon: peers learn our epoch and links.
    HB_TIMER.arm(hbspan.min(100));
    SWEEP_TIMER.arm(sweep_period_ms(d));
}

/// ri2n0 goes down (`ndo_stop`): timers stop, held packets are freed.
pub(crate) fn stop() {
    let Some(d) = device() else { return };
    d.state.lock().up = false;
    stop_timers();
    let mut st = d.state.lock();
    for p in st.peers.iter_mut().flatten() {
        p.rx.window.drain(&mut drop);
    }
}

/// Stops both timers and waits for running callbacks (process context).
/// Callbacks do not re-arm once `State::up` is false.
pub(crate) fn stop_timers() {
    HB_TIMER.stop();
    SWEEP_TIMER.stop();
}

/// Runs the sweep (and sends queued heartbeats) as soon as possible.
pub(crate) fn kick() {
    SWEEP_TIMER.arm(0);
}

/// `HB_TIMER`: heartbeats to every known peer on every link that is up.
pub(crate) fn heartbeat_timer() {
    let Some(d) = device() else { return };
    let hbspan = {
        let mut guard = d.state.lock();
        let st = &mut *guard;
        if !st.up {
            return;
        }
        let links = st.links_up();
        for p in st.peers.iter_mut().flatten() {
            p.hb_pending |= links;
        }
        st.params.hbspan().as_ms() as u32
    };
    send_pending(d);
    HB_TIMER.arm(hbspan);
}

/// `SWEEP_TIMER`: FAST_TOUT and loss releases for every peer; queued
/// heartbeats.
pub(crate) fn sweep_timer() {
    let Some(d) = device() else { return };
    let now = ri2n_glue::now();
    {
        let mut guard = d.state.lock();
        let st = &mut *guard;
        if !st.up {
            return;
        }
        // Only carrier loss is polled: carrier back waits for the notifier,
        // which linkwatch sends once the slave's qdisc is active again;
        // until then whatever we sent on it (the probe) would be dropped.
        for l in 0..d.nslaves {
            if let Some(up) = st.slaves[l].as_ref().map(|s| s.dev().running() && s.dev().carrier_ok()) {
                if !up && st.carrier & (1 << l) != 0 {
                    carrier_changed(d, st, l, false);
                }
            }
        }
        let (params, carrier) = (st.params, st.carrier);
        let stats = &mut st.stats;
        for (slot, p) in st.peers.iter_mut().enumerate() {
            let Some(p) = p.as_deref_mut() else { continue };
            // Probes for a link that fell silent, or to bring a failed one
            // back (core/detector.rs).
            let probe = p.det.probe_due(now, carrier, &params) | p.det.retry_due(now, carrier, &params);
            p.hb_pending |= probe;
            p.hb_probe |= probe;
            let t = p.det.probe_end(now, &params);
            if !t.is_empty() {
                p.hb_pending |= carrier;
                crate::ri2n_rx::log_transitions(d, st.table.mac(slot), &t, now, p.det.endpoints.as_slice());
            }
            let active = p.det.usable() & carrier;
            p.rx.sweep(now, active, &params, &mut |s| {
                stats.rx_packets += 1;
                stats.rx_bytes += s.len() as u64;
                s.hand_up();
            });
        }
    }
    send_pending(d);
    SWEEP_TIMER.arm(sweep_period_ms(d));
}

/// Sends every queued heartbeat, one peer at a time, never holding the
/// state lock across a transmit. A heartbeat carries our next number for
/// the peer and tells it that the link passed everything below; `tx_lock`
/// keeps data numbered below it from reaching the link after it.
fn send_pending(d: &'static Ri2n) {
    let mut slot = 0;
    loop {
        let _order = d.tx_lock.lock();
        let mut batch: [Option<(NetDev, usize, u8, u8)>; MAX_LINKS] = [None; MAX_LINKS];
        let (mac, next): (Mac, _);
        {
            let mut guard = d.state.lock();
            let st = &mut *guard;
            let Some(s) = st.table.slots().find(|&s| s >= slot) else { break };
            slot = s + 1;
            mac = *st.table.mac(s);
            let links = st.links_up();
            let Some(p) = st.peers[s].as_deref_mut() else { continue };
            let pending = p.hb_pending & links;
            if pending == 0 {
                continue;
            }
            // Our links unusable toward this peer: failed, no carrier, removed.
            let all = ((1u16 << d.nslaves) - 1) as u8;
            let down = (p.det.failed() | !links) & all;
            for l in 0..d.nslaves {
                let bit = 1u8 << l;
                if pending & bit == 0 {
                    continue;
                }
                let Some(sl) = st.slaves[l].as_ref() else { continue };
                let flags = if p.hb_probe & bit != 0 { HB_PROBE } else { 0 };
                batch[l] = Some((sl.dev(), l, flags, down));
            }
            p.hb_pending &= !pending;
            p.hb_probe &= !pending;
            next = p.tx_seq;
        }
        let mut sent = 0;
        for (slave, l, flags, down) in batch.iter().flatten() {
            if crate::ri2n_tx::send_heartbeat(d, *slave, &mac, *l, next, *flags, *down) {
                sent += 1;
            }
        }
        d.state.lock().stats.hb_sent += sent;
    }
}

/// A netdev notifier event for `dev`, under RTNL.
pub(crate) fn netdev_event(rtnl: &Rtnl, event: u32, dev: NetDev) {
    let Some(d) = device() else { return };
    if dev == d.dev {
        return;
    }
    let mut st = d.state.lock();
    let Some(link) = st.link_of(dev) else { return };
    let bit = 1u8 << link;
    match event {
        NETDEV_UP | NETDEV_DOWN | NETDEV_CHANGE => {
            let up = dev.running() && dev.carrier_ok();
            if up != (st.carrier & bit != 0) {
                carrier_changed(d, &mut st, link, up);
            }
        }
        NETDEV_CHANGEMTU => {
            let max = st
                .slaves
                .iter()
                .flatten()
                .map(|s| s.dev().mtu())
                .min()
                .unwrap_or(1500)
                .saturating_sub(crate::proto::header::HEADER_LEN as u32);
            drop(st);
            d.dev.set_max_mtu(max);
            if d.dev.mtu() > max {
                let _ = d.dev.set_mtu(rtnl, max);
                pr_info!("{}: mtu lowered to {} (slave {} mtu changed)\n", d.dev.name_str(), max, d.link_name(link));
            }
        }
        NETDEV_UNREGISTER => {
            let gone = st.slaves[link].take();
            if st.carrier & bit != 0 {
                st.carrier_changed[link] = ri2n_glue::now();
            }
            st.carrier &= !bit;
            let left = st.carrier;
            for p in st.peers.iter_mut().flatten() {
                p.hb_pending |= left;
            }
            drop(st);
            d.dev.set_carrier(left != 0);
            kick();
            pr_info!("{}: link {}: slave removed\n", d.dev.name_str(), d.link_name(link));
            // Transmit and timers may still use the device inside an RCU
            // read side: wait for them before dropping our reference.
            ri2n_glue::synchronize_net();
            drop(gone);
        }
        _ => {}
    }
}

/// Link `link`'s slave gained or lost carrier (seen by the sweep's poll or
/// the notifier): every peer is told on the links left, and a link that
/// came back is probed.
fn carrier_changed(d: &Ri2n, st: &mut State, link: usize, up: bool) {
    let bit = 1u8 << link;
    st.carrier_changed[link] = ri2n_glue::now();
    if up {
        st.carrier |= bit;
        for p in st.peers.iter_mut().flatten() {
            p.hb_pending |= st.carrier;
            p.hb_probe |= bit;
        }
    } else {
        st.carrier &= !bit;
        for p in st.peers.iter_mut().flatten() {
            p.hb_pending |= st.carrier;
        }
    }
    let any = st.carrier != 0;
    pr_info!(
        "{}: link {}: carrier {}{}\n",
        d.dev.name_str(),
        d.link_name(link),
        if up { "up, probing peers" } else { "down, not used for any peer" },
        if any { "" } else { " (no link left)" }
    );
    d.dev.set_carrier(any);
    kick();
}
