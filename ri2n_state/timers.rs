// SPDX-License-Identifier: GPL-2.0

//! What the timers ask of the state: the heartbeat ticks, the sweep and
//! the heartbeat queue.

use super::{now, DevStats, Slave, State};
use crate::net::gro::GroCells;
use crate::net::lock::Bh;
use crate::net::skb::SkbList;
use crate::net::{Mac, MacFmt};
use crate::proto::detector::{loss_probe_every, Detector, Transitions};
use crate::proto::events::{endpoint_events, Event, Events};
use crate::proto::header::Counts;
use crate::proto::node::sweep_period;
use crate::proto::node::{sweep_at, HeartbeatOrders};
use crate::proto::params::Params;
use crate::proto::seq::Seq;
use crate::proto::time::{Duration, Instant};
use crate::proto::window::span_of;
use crate::proto::MAX_LINKS;
use crate::ri2n_peer::{BufPool, PeerCell, Slots, Table};
use core::sync::atomic::Ordering;
use kernel::prelude::*;

use super::rx::cell_of;
use crate::proto::peers::age_limit;
use crate::proto::work::{Visit, Visited, AGE_PER_SWEEP};

/// Whole milliseconds from `t` to `at`, rounded up (0 if past).
pub(crate) fn ms_until(at: Instant, t: Instant) -> u32 {
    at.since(t).0.div_ceil(1_000_000).min(u64::from(u32::MAX)) as u32
}

impl State {
    /// A tick of the heartbeat timer: a heartbeat is due on every link
    /// with carrier to the peers of the phases it serves (core/work.rs).
    /// Returns the phases until the next tick: the timer sleeps over
    /// phases without peers (core/phases.rs).
    pub(crate) fn hb_tick(&mut self) -> usize {
        let links = self.carrier;
        let (table, slots) = (&self.table, &*self.slots);
        self.work.tick(table.capacity(), |s| {
            // Only to peers heard in a heartbeat: a source that never
            // answered (a made-up MAC) gets nothing periodic.
            let known = links != 0 && table.get(s).is_some() && table.is_known(s);
            let Some(cell) = slots.cell(s).filter(|_| known) else {
                return false;
            };
            if let Some(p) = cell.lock().peer.as_mut() {
                p.heartbeat_due(links);
            }
            true
        })
    }

    /// The sweep: polls the slaves' carrier (loss only, see ri2n_hb.rs),
    /// ages out silent peers (their packets into `garbage`), and visits the
    /// peers on the sweep's lists (core/work.rs), which starts and ends
    /// probe rounds and releases what waited FAST_TOUT or was proved lost.
    /// Returns whether heartbeats are pending.
    pub(crate) fn sweep(
        &mut self,
        dev_name: &str,
        gro: &GroCells,
        bh: &Bh<'_>,
        garbage: &mut SkbList,
    ) -> bool {
        if !self.up {
            return false;
        }
        let t = now();
        // What it finds, and any receive's pull while it runs, from here on.
        self.slots.sweep_at.store(u64::MAX, Ordering::Relaxed);
        self.poll_carrier(dev_name);
        self.stats.sweeps.add(1);
        let more_aged = self.age_out(t, garbage);
        let mut cx = SweepCx {
            dev_name,
            params: self.params,
            carrier: self.carrier,
            slaves: &self.slaves,
            bufs: &mut self.bufs,
            stats: &self.stats,
            table: &mut self.table,
            slots: &self.slots,
            gro,
            bh,
            t,
            lossy_every: loss_probe_every(self.lossy_peers),
            lossy_peers: 0,
            ports_changed: false,
            events: &mut self.events,
            next: more_aged.then_some(t),
        };
        let slow_every = Duration(self.params.hbspan().0 / 8);
        let slow = self.work.sweep(t, slow_every, &mut cx);
        let next = match (cx.next, slow) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        // Every peer with a lossy link is on the every-sweep list.
        self.lossy_peers = cx.lossy_peers;
        self.ports_changed |= cx.ports_changed;
        // The visits gave back the idle windows' buffers.
        self.slots.bufs_short.store(false, Ordering::Relaxed);
        self.slots
            .lossy_every_ns
            .store(loss_probe_every(self.lossy_peers).0, Ordering::Relaxed);
        // With any pull made while it ran (see `Slots::sweep_at`).
        self.pull_sweep(self.sweep_target(next, t));
        self.work.heartbeats_waiting()
    }

    /// Takes the links whose slave lost its carrier out of use: a slave
    /// may drop it without a notifier event reaching us first.
    fn poll_carrier(&mut self, dev_name: &str) {
        for l in 0..MAX_LINKS {
            let lost = self.slaves[l]
                .as_ref()
                .is_some_and(|s| !(s.dev.running() && s.dev.carrier_ok()));
            if lost && self.carrier_changed_to(l, false) {
                log_carrier(
                    dev_name,
                    self.slaves[l].as_ref().map_or("?", |s| s.name()),
                    false,
                    self.carrier,
                );
            }
        }
    }

    /// Forgets peers silent for eight HBSPANs, at most [`AGE_PER_SWEEP`];
    /// returns whether more may be left.
    fn age_out(&mut self, t: Instant, garbage: &mut SkbList) -> bool {
        for _ in 0..AGE_PER_SWEEP {
            let Some(s) = self.table.aged(t, age_limit(&self.params)) else {
                return false;
            };
            self.forget(s, garbage);
            self.stats.peers_aged.add(1);
        }
        true
    }

    pub(super) fn sweep_period(&self) -> Duration {
        sweep_period(&self.params)
    }

    fn sweep_target(&self, due: Option<Instant>, t: Instant) -> Instant {
        sweep_at(due, t, &self.params)
    }

    /// Milliseconds until the sweep timer must fire, for the caller to arm
    /// it under this lock: at the time the last sweep planned, or a receive
    /// since; within a period if heartbeats still wait (`send_pending` sends
    /// a share per call).
    pub(crate) fn sweep_delay_ms(&mut self) -> u32 {
        let t = now();
        if self.work.heartbeats_waiting() {
            self.pull_sweep(t.plus(self.sweep_period()));
        }
        ms_until(Instant(self.slots.sweep_at.load(Ordering::Relaxed)), t)
    }

    /// The sweep is to run within a period (heartbeats wait for it): the
    /// milliseconds to pull its timer to, if it is armed for later, while up.
    pub(crate) fn sweep_within_period(&mut self) -> Option<u32> {
        let t = now();
        let at = t.plus(self.sweep_period());
        (self.up && self.pull_sweep(at)).then(|| ms_until(at, t))
    }

    /// The sweep is to run at once ([`crate::ri2n_hb::kick`]).
    pub(crate) fn sweep_now(&mut self) {
        self.slots.sweep_at.store(now().0, Ordering::Relaxed);
    }

    /// Takes the heartbeats queued for the next peer on the heartbeat queue
    /// that has any: up to one order per link. `None` when the queue is
    /// empty.
    pub(crate) fn take_heartbeats(&mut self) -> Option<(Mac, Seq, HeartbeatOrders)> {
        let (links, nlinks) = (self.carrier, self.nlinks());
        let probe_shift = self.probe_shift();
        loop {
            let slot = self.work.next_heartbeat()?;
            let mac = *self.table.mac(slot);
            let Some(cell) = self
                .slots
                .cell(slot)
                .filter(|_| self.table.get(slot).is_some())
            else {
                continue;
            };
            let mut c = cell.lock();
            let Some((tx, p)) = c.peer_for(&mac) else {
                continue;
            };
            if let Some(orders) = p.poll_heartbeats(links, nlinks, probe_shift) {
                return Some((mac, tx.tx_seq, orders));
            }
        }
    }

    /// The slot of the peer `mac`, if in the table.
    pub(crate) fn peer_of(&self, mac: &Mac) -> Option<usize> {
        self.table.lookup(mac)
    }

    /// What our heartbeats ask the peers (`probe_shift`): loss probes on
    /// links lossy toward us no more often than we probe each of ours, or
    /// than the number of peers that probe us allows.
    pub(crate) fn probe_shift(&self) -> u8 {
        self.loss_probes(now()).2
    }

    /// The frame counts of a heartbeat on link `l` to the peer in cell
    /// `c`, which the caller locked and holds until the heartbeat is
    /// queued (behind every frame counted before it), and counts it as
    /// sent.
    pub(crate) fn hb_counts(c: &mut PeerCell, l: usize) -> Option<Counts> {
        let (tx, p) = c.both()?;
        p.heartbeat_counts(tx, l)
    }

    /// Counts heartbeats sent.
    pub(crate) fn hb_sent(&mut self, n: u64) {
        self.stats.hb_sent.add(n);
    }
}

/// What the sweep needs to visit a peer.
struct SweepCx<'a> {
    dev_name: &'a str,
    params: Params,
    carrier: u8,
    slaves: &'a [Option<Slave>; MAX_LINKS],
    bufs: &'a mut BufPool,
    stats: &'a DevStats,
    table: &'a mut Table,
    slots: &'a Slots,
    /// Releases go up through their peer's cell.
    gro: &'a GroCells,
    bh: &'a Bh<'a>,
    /// When the sweep began.
    t: Instant,
    /// How often each lossy link is probed, from the last sweep's count.
    lossy_every: Duration,
    /// Peers with a lossy link seen in this sweep.
    lossy_peers: usize,
    /// An endpoint changed state in this sweep.
    ports_changed: bool,
    /// Where its transitions go.
    events: &'a mut Events,
    /// The earliest deadline of the peers visited.
    next: Option<Instant>,
}

impl Visit for SweepCx<'_> {
    fn visit(&mut self, slot: usize) -> Option<Visited> {
        let (params, carrier) = (self.params, self.carrier);
        // Held over the whole visit: what it releases goes up before any
        // frame receive takes without the state lock after it.
        let mut c = self.slots.cell(slot)?.lock();
        // Read under the cell: receive may have held a packet since the
        // sweep began.
        let t = now();
        let rx_at = c.rx_at;
        let (tx, p) = c.both()?;
        if rx_at > self.table.last_seen(slot) {
            // Frames taken without the state lock: the peer is not idle
            // (aging, eviction).
            self.table.touch(slot, rx_at, false);
        }
        tx.fold(p);
        let (stats, held) = (self.stats, &self.slots.held);
        let mut up = SkbList::new();
        let visit = p.sweep(t, carrier, &params, self.lossy_every, self.bufs, &mut |s| {
            stats.rx_packets.add(u64::from(span_of(&s)));
            stats.rx_bytes.add(u64::from(s.len()));
            held.sub(s.truesize() as usize);
            up.push(s);
        });
        self.lossy_peers += usize::from(visit.lossy);
        if !up.is_empty() {
            // Under the peer's cell, as receive queues: in order.
            self.gro.queue(cell_of(slot), up, self.bh);
        }
        tx.publish(&p.det);
        if let Some(due) = visit.due {
            self.next = Some(self.next.map_or(due, |n| n.min(due)));
        }
        if !visit.tr.is_empty() {
            let mac = self.table.mac(slot);
            self.ports_changed = true;
            let ev = &mut *self.events;
            log_transitions(
                self.dev_name,
                self.slaves,
                mac,
                &visit.tr,
                t,
                &p.det,
                carrier,
                ev,
            );
        }
        Some(Visited {
            need: visit.need,
            heartbeat: p.hb_pending & carrier != 0,
        })
    }

    fn may_leave(&mut self, slot: usize) -> bool {
        let Some(cell) = self.slots.cell(slot) else {
            return true;
        };
        let mut c = cell.lock();
        if c.tx.sent_since_fold() || c.rx_at >= self.t {
            // Data went out or came in during the visit.
            return false;
        }
        // From here on, transmit and receive put it back
        // (`State::tx_swept`).
        c.tx.swept = false;
        true
    }

    fn rejoined(&mut self, slot: usize) {
        if let Some(cell) = self.slots.cell(slot) {
            cell.lock().tx.swept = true;
        }
    }
}

/// One log line for a carrier change.
pub(crate) fn log_carrier(dev_name: &str, slave: &str, up: bool, carrier: u8) {
    if crate::net::ratelimit() {
        let what = if up {
            "up, probing peers"
        } else {
            "down, not used for any peer"
        };
        let left = if carrier != 0 { "" } else { " (no link left)" };
        pr_info!("{}: link {}: carrier {}{}\n", dev_name, slave, what, left);
    }
}

/// One event per endpoint state change, for user space, and one log line
/// (rate-limited), naming device, peer and slave (like bonding's "link
/// status definitely down for interface eth1"). `carrier`: the links with
/// carrier.
#[allow(clippy::too_many_arguments)]
pub(super) fn log_transitions(
    dev_name: &str,
    slaves: &[Option<Slave>; MAX_LINKS],
    peer: &Mac,
    t: &Transitions,
    now: Instant,
    det: &Detector,
    carrier: u8,
    events: &mut Events,
) {
    for l in 0..MAX_LINKS {
        let e = &det.endpoints[l];
        let after = (e.failed, e.peer_failed, e.lossy);
        endpoint_events(t, l, carrier & (1 << l) != 0, after, |reason, old, new| {
            let ev = Event {
                reason,
                at: now,
                peer: Some(*peer),
                link: Some(l as u8),
                states: Some((old, new)),
            };
            events.push(ev, now);
        });
    }
    if !crate::net::ratelimit() {
        return;
    }
    for (l, s) in slaves.iter().enumerate() {
        let Some(s) = s else { continue };
        let bit = 1u8 << l;
        let e = &det.endpoints[l];
        let (name, mac, link) = (dev_name, MacFmt(peer), s.name());
        if t.failed & bit != 0 {
            pr_info!(
                "{}: peer {} link {}: failed, nothing received for {} ms (fail #{})\n",
                name,
                mac,
                link,
                now.since(e.last_rx).as_ms(),
                e.fails
            );
        }
        if t.recovered & bit != 0 {
            pr_info!(
                "{}: peer {} link {}: recovered by heartbeat (recovery #{})\n",
                name,
                mac,
                link,
                e.recoveries
            );
        }
        if t.peer_failed & bit != 0 {
            pr_info!(
                "{}: peer {} link {}: peer receives nothing from us, not sending on it\n",
                name,
                mac,
                link
            );
        }
        if t.peer_recovered & bit != 0 {
            pr_info!(
                "{}: peer {} link {}: peer receives again, sending on it\n",
                name,
                mac,
                link
            );
        }
        let (whole, hundredths) = (e.loss_bp / 100, e.loss_bp % 100);
        if t.lossy & bit != 0 {
            pr_info!(
                "{}: peer {} link {}: loses {}.{:02}% of our frames, not sending on it (lossy #{})\n",
                name, mac, link, whole, hundredths, e.lossy_count
            );
        }
        if t.lossless & bit != 0 {
            pr_info!(
                "{}: peer {} link {}: loss down to {}.{:02}%, sending on it again\n",
                name,
                mac,
                link,
                whole,
                hundredths
            );
        }
    }
}
