// SPDX-License-Identifier: GPL-2.0

//! The state's slaves: links taken and given back, their carrier, and every
//! peer's endpoints over them.

use super::{now, LinkStats, Slave, State};
use crate::proto::events::Event;
use crate::proto::uapi::Reason;
use core::sync::atomic::Ordering;

impl State {
    /// A free link index for a new slave.
    pub(crate) fn free_link(&self) -> Option<usize> {
        self.slaves.iter().position(|s| s.is_none())
    }

    /// Adds `slave` as link `l` (free); `carrier` says whether it is up.
    pub(crate) fn add_slave(&mut self, l: usize, slave: Slave, carrier: bool) {
        self.slaves[l] = Some(slave);
        self.ports_told[l] = 0;
        self.link_stats[l] = LinkStats::default();
        let r = &self.slots.link_rx[l];
        let merged = r.merged.swap(0, Ordering::Relaxed);
        let merged_frames = r.merged_frames.swap(0, Ordering::Relaxed);
        r.packets.store(0, Ordering::Relaxed);
        // The device's merge counts stay.
        self.stats.rx_merged.add(merged);
        self.stats.rx_merged_frames.add(merged_frames);
        self.carrier_changed[l] = now();
        self.set_links(1 << l);
        if carrier {
            self.carrier_changed_to(l, true);
        }
    }

    /// Every peer's endpoints over the links as they are now, those of
    /// `vacated` afresh.
    fn set_links(&mut self, vacated: u8) {
        let nlinks = self.nlinks();
        let t = now();
        for s in 0..self.table.capacity() {
            let Some(cell) = self.slots.cell(s).filter(|_| self.table.get(s).is_some()) else {
                continue;
            };
            let mut c = cell.lock();
            let Some((tx, p)) = c.both() else { continue };
            // What went out before is the old links' count.
            tx.fold(p);
            p.det.set_links(nlinks, vacated, t);
            tx.publish(&p.det);
        }
    }

    /// Whether link `l`'s slave has our promiscuity count.
    pub(crate) fn slave_promisc(&self, l: usize) -> bool {
        self.slaves[l].as_ref().is_some_and(|s| s.promisc)
    }

    /// Records whether link `l`'s slave has our promiscuity count; true if
    /// that changed.
    pub(crate) fn set_slave_promisc(&mut self, l: usize, on: bool) -> bool {
        match self.slaves[l].as_mut() {
            Some(s) if s.promisc != on => {
                s.promisc = on;
                true
            }
            _ => false,
        }
    }

    /// Removes link `l`'s slave (its queue is the caller's to flush).
    pub(crate) fn remove_slave(&mut self, l: usize) -> Option<Slave> {
        let s = self.slaves[l].take()?;
        self.ports_told[l] = 0;
        if self.carrier & (1 << l) != 0 {
            self.carrier_changed_to(l, false);
        }
        self.set_links(1 << l);
        Some(s)
    }

    /// Link `l`'s carrier (slave up with carrier) became `up`: every peer is
    /// told on the links left, and a link that came back is probed.
    /// Returns false if nothing changed.
    pub(crate) fn carrier_changed_to(&mut self, l: usize, up: bool) -> bool {
        let bit = 1u8 << l;
        if (self.carrier & bit != 0) == up {
            return false;
        }
        let t = now();
        self.carrier_changed[l] = t;
        self.ports_changed = true;
        let reason = if up {
            Reason::CarrierUp
        } else {
            Reason::CarrierDown
        };
        self.events.push(
            Event {
                reason,
                at: t,
                peer: None,
                link: Some(l as u8),
                states: None,
            },
            t,
        );
        if up {
            self.carrier |= bit;
        } else {
            self.carrier &= !bit;
        }
        let carrier = self.carrier;
        self.publish_tx();
        for s in 0..self.table.capacity() {
            // Known peers only (heard in a heartbeat), as the periodic ones.
            let known = self.table.get(s).is_some() && self.table.is_known(s);
            let Some(cell) = self.slots.cell(s).filter(|_| known) else {
                continue;
            };
            let mut c = cell.lock();
            let Some((_, p)) = c.both() else { continue };
            p.carrier_changed(carrier, l, up);
            drop(c);
            if carrier != 0 {
                self.work.heartbeat(s);
            }
        }
        true
    }
}
