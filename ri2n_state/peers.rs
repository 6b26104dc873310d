// SPDX-License-Identifier: GPL-2.0

//! The state's peers: admitted into the table, evicted and forgotten.

use super::{now, State};
use crate::net::skb::SkbList;
use crate::net::{Mac, MacFmt};
use crate::proto::events::Event;
use crate::proto::peers::{idle_limit, Room};
use crate::proto::seq::Seq;
use crate::proto::time::Instant;
use crate::proto::uapi::Reason;
use crate::ri2n_peer::CellMacs;
use kernel::prelude::*;

impl State {
    /// The slot of the peer `mac`, created if new (see [`State::new_peer`];
    /// `heard`: the link a frame of it arrived on, none if we send to it;
    /// a peer evicted for it leaves its held packets in `garbage`). `None`
    /// if there is no room or memory.
    pub(super) fn peer_slot(
        &mut self,
        mac: &Mac,
        heard: Option<usize>,
        t: Instant,
        garbage: &mut SkbList,
    ) -> Option<usize> {
        match self.table.lookup(mac) {
            Some(s) => Some(s),
            None => self.new_peer(mac, heard, t, garbage),
        }
    }

    /// Admits `mac`. When the table is full, it takes the place of a peer
    /// never heard in a heartbeat or silent for three HBSPANs
    /// (core/peers.rs); with every slot a live peer, it is refused, counted
    /// and logged, as is a peer heard while new peers arrive faster than
    /// [`NewPeerBudget`] allows.
    fn new_peer(
        &mut self,
        mac: &Mac,
        heard: Option<usize>,
        t: Instant,
        garbage: &mut SkbList,
    ) -> Option<usize> {
        let room = self.table.room(t, idle_limit(&self.params));
        if room == Room::Full {
            self.stats.peers_refused.add(1);
            if crate::net::ratelimit() {
                pr_warn!(
                    "ri2n: peer table full ({} live peers, peer_mem {} bytes): refusing peer {}\n",
                    self.table.len(),
                    self.params.peer_mem(),
                    MacFmt(mac)
                );
            }
            return None;
        }
        let cap = self.table.capacity();
        if heard.is_some() && !self.new_peers.take(t, cap, self.params.hbspan()) {
            self.stats.peers_refused.add(1);
            if crate::net::ratelimit() {
                pr_warn!(
                    "ri2n: new peers arrive faster than {} per HBSPAN: refusing peer {}\n",
                    cap,
                    MacFmt(mac)
                );
            }
            return None;
        }
        // Allocated before anyone is evicted for it.
        let Some(mut peer) = crate::ri2n_peer::alloc_peer(&self.cache) else {
            self.stats.peers_refused.add(1);
            return None;
        };
        if let Room::Evict(s) = room {
            self.forget(s, garbage);
            self.stats.peers_evicted.add(1);
        }
        peer.start(self.nlinks(), heard, self.carrier, t);
        let record = self.records.find(mac).filter(|_| self.keys.on());
        if let Some(r) = &record {
            peer.rx.recall(r);
        }
        let slot = self.table.insert(mac, t, ()).ok()?;
        self.peers_gen = self.peers_gen.wrapping_add(1);
        self.events.push(Event::of_peer(Reason::PeerNew, mac, t), t);
        self.work.admitted(slot);
        if let Some(cell) = self.slots.cell(slot) {
            let mut c = cell.lock();
            c.tx.start(mac);
            if let Some(r) = &record {
                // Where the peer's record of us expects our numbering.
                c.tx.tx_seq = Seq(r.tx_next);
            }
            c.tx.publish(&peer.det);
            c.peer = Some(peer);
        }
        self.stats.peers_new.add(1);
        self.work.heartbeat(slot);
        Some(slot)
    }

    /// Removes the peer in `slot`; its held packets go to `garbage`. The
    /// slot stays on the work lists, which skip empty slots.
    pub(super) fn forget(&mut self, slot: usize, garbage: &mut SkbList) {
        // A link failed only toward this peer is in use toward all now.
        self.ports_changed = true;
        self.claims.forget(&CellMacs(&self.slots), slot);
        let mac = *self.table.mac(slot);
        self.peers_gen = self.peers_gen.wrapping_add(1);
        let t = now();
        self.events
            .push(Event::of_peer(Reason::PeerForgotten, &mac, t), t);
        self.slots.unnote(&mac, slot);
        let mut tx_next = Seq(0);
        let old = self.slots.cell(slot).and_then(|cell| {
            let mut c = cell.lock();
            tx_next = c.tx.tx_seq;
            c.tx.clear();
            c.rx_at = Instant(0);
            c.peer.take()
        });
        if self.table.remove(slot).is_some() {
            self.work.forgotten(slot);
        }
        if let Some(mut old) = old {
            if let Some(mut r) = old.rx.record() {
                r.tx_next = tx_next.0;
                self.records.keep(&mac, r);
            }
            let held = &self.slots.held;
            old.rx.drain(&mut self.bufs, &mut |s| {
                held.sub(s.truesize() as usize);
                garbage.push(s)
            });
        }
    }
}
