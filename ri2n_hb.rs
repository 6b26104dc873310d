// SPDX-License-Identifier: GPL-2.0

//! Heartbeats and the FAST_TOUT sweep (driver paper §4.4, §5.5, §5.7).
//!
//! Timers of each device, armed only while it is up ([`start`], [`stop`]):
//!
//! - `hb_timer`, every HBSPAN / 64: a heartbeat is due to a 64th of the
//!   known peers (so every peer, each HBSPAN, spread over it) on every link
//!   that is up, failed endpoints included (recovery needs them).
//! - `sweep_timer`, every FAST_TOUT/4 (at least 1 ms): hands up what waited
//!   FAST_TOUT or was proved lost, in the windows of the peers that hold
//!   packets (the sweep list, not every peer); ages out silent peers; polls the
//!   slaves' carrier (loss only: see ri2n_slave.rs); starts and ends probe
//!   rounds for links that fell silent; sends queued heartbeats (probes,
//!   answers, news of a failure, a recovery or a carrier change). [`kick`]
//!   fires it at once.
//!
//! Both re-arm only while the device is up; [`stop`] stops them
//! synchronously, and dropping the device's data shuts them down for good.

use crate::net::skb::SkbList;
use crate::ri2n_dev::Ri2nDev;
use crate::proto::MAX_LINKS;
use crate::ri2n_state::HB_PHASES;

fn sweep_period_ms(dev: &Ri2nDev) -> u32 {
    (dev.data().lock_state().params().fast_tout().as_ms() as u32 / 4).max(1)
}

/// ri2n0 goes up (`ndo_open`): timers start.
pub(crate) fn start(dev: &Ri2nDev) {
    let d = dev.data();
    let hbspan = {
        let mut st = d.lock_state();
        let mut none = SkbList::new();
        st.set_up(true, &mut none);
        st.params().hbspan().as_ms() as u32
    };
    // The first heartbeats go out soon: peers learn our epoch and links.
    d.hb_timer.arm_ms(hbspan.min(100));
    d.sweep_timer.arm_ms(sweep_period_ms(dev));
}

/// ri2n0 goes down (`ndo_stop`): timers stop, held packets are freed.
pub(crate) fn stop(dev: &Ri2nDev) {
    let d = dev.data();
    let mut garbage = SkbList::new();
    d.lock_state().set_up(false, &mut garbage);
    // Callbacks do not re-arm once the device is down.
    d.hb_timer.stop();
    d.sweep_timer.stop();
    drop(garbage);
}

/// Runs the sweep (and sends queued heartbeats) as soon as possible.
/// Armed under the state lock, so that it cannot race `stop` and leave
/// the timer armed on a stopped device.
pub(crate) fn kick(dev: &Ri2nDev) {
    let st = dev.data().lock_state();
    if st.is_up() {
        dev.data().sweep_timer.arm_ms(0);
    }
    drop(st);
}

/// `hb_timer`, `HB_PHASES` times per HBSPAN: heartbeats on every link that
/// is up to one phase's share of the peers.
pub(crate) fn heartbeat_timer(dev: &Ri2nDev) {
    let d = dev.data();
    let tick = {
        let mut st = d.lock_state();
        if !st.is_up() {
            return;
        }
        st.hb_tick();
        st.params().hbspan().as_ms() as u32 / HB_PHASES as u32
    };
    send_pending(dev);
    d.hb_timer.arm_ms(tick.max(1));
}

/// `sweep_timer`: FAST_TOUT and loss releases for every peer; probes;
/// queued heartbeats.
pub(crate) fn sweep_timer(dev: &Ri2nDev) {
    let d = dev.data();
    let mut up = SkbList::new();
    let mut garbage = SkbList::new();
    let (pending, was_up) = {
        let mut st = d.lock_state();
        (st.sweep(dev.name_str(), &mut up, &mut garbage), st.is_up())
    };
    drop(garbage);
    let me = crate::net::task_id();
    let paused = (0..MAX_LINKS).filter(|&l| d.txq[l].adopt(me)).fold(0u8, |m, l| m | 1 << l);
    // Queues a drainer left over its budget go on, up or down.
    crate::ri2n_tx::drain_links(dev, paused);
    if !was_up {
        return;
    }
    crate::ri2n_dev::Ri2n::update_carrier(dev);
    for s in up {
        d.gro.receive(s);
    }
    if pending {
        send_pending(dev);
    }
    // A queue left paused (by this sweep's drain, or since) goes on at
    // once: re-arming for the period would undo the drainer's kick.
    let paused = d.txq.iter().any(|q| q.paused());
    d.sweep_timer.arm_ms(if paused { 0 } else { sweep_period_ms(dev) });
}

/// Most peers whose heartbeats one call sends: the rest wait for the next
/// sweep, so that many new peers at once (a flood of new source MACs)
/// cannot fill the links' queues with heartbeats.
const HB_PEERS_PER_CALL: usize = 64;

/// Queues pending heartbeats, peer by peer, and drains the links.
fn send_pending(dev: &Ri2nDev) {
    let d = dev.data();
    let mut drain = 0u8;
    for _ in 0..HB_PEERS_PER_CALL {
        let Some(mut orders) = d.lock_state().take_heartbeats() else { break };
        drain |= crate::ri2n_tx::queue_heartbeats(dev, &mut orders).1;
    }
    crate::ri2n_tx::drain_links(dev, drain);
}
