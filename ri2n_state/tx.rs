// SPDX-License-Identifier: GPL-2.0

//! What transmit asks of the state: the peer, the link and the number of
//! a packet, and its counting.

use super::{now, State};
use crate::net::skb::{Skb, SkbList};
use crate::net::Mac;
use crate::proto::claims::LinkMacs;
use crate::proto::seq::Seq;
use crate::proto::tx::PeerTx;
use crate::ri2n_peer::{CellMacs, PeerCell};
use crate::ri2n_txq::LinkQueue;

/// What transmit decided for a unicast packet.
pub(crate) enum TxRoute {
    /// Send on link `link` with number `seq`; in one-switch mode, `to` the
    /// peer's slave MAC on it (zero if not learned yet) from `from`, our
    /// slave's.
    Send {
        link: usize,
        seq: Seq,
        to: Mac,
        from: Mac,
    },
    /// No usable link to the peer (counted).
    NoLink,
}

impl State {
    /// A packet came from our own slave's egress (a tc mirred or redirect
    /// back into ri2n0): sending it would loop forever, so it is dropped.
    pub(crate) fn tx_looped(&mut self) {
        self.stats.tx_loop.add(1);
        self.stats.tx_dropped.add(1);
    }

    /// The slot of the peer `dst` to send to, created if new (a peer
    /// evicted for it leaves its held packets in `garbage`), and noted in
    /// the lookup transmit reads without this lock. `None` (a drop,
    /// counted) if there is no room or memory.
    pub(crate) fn tx_peer(&mut self, dst: &Mac, garbage: &mut SkbList) -> Option<usize> {
        let Some(slot) = self.peer_slot(dst, None, now(), garbage) else {
            self.stats.tx_dropped.add(1);
            return None;
        };
        self.slots.note(dst, slot);
        Some(slot)
    }

    /// Picks link and number for a unicast packet of `len` bytes (`segs`
    /// frames) to the peer in `slot`, whose cell `c` the caller
    /// locked: `first` as `RoundRobin::pick_block` takes it, `None` for the
    /// frames of its block after it, under the same lock. Counts the
    /// packet, or the drop. (The way without this lock: ri2n_tx.rs,
    /// `xmit_lockless`.)
    /// `stale` is set if a link's slave lost its carrier since the sweep
    /// last looked: it is left out, and the caller wakes the sweep.
    pub(crate) fn tx_route(
        &mut self,
        slot: usize,
        c: &mut PeerCell,
        len: u32,
        segs: u32,
        first: Option<(u32, u32)>,
        stale: &mut bool,
    ) -> TxRoute {
        let t = now();
        let (mut queues_ok, mut live) = (0u8, 0u8);
        for (l, s) in self.slaves() {
            if !s.dev.tx_queue_stopped(0) {
                queues_ok |= 1 << l;
            }
            if s.dev.running() && s.dev.carrier_ok() {
                live |= 1 << l;
            }
        }
        *stale |= self.carrier & !live != 0;
        // A stopped queue is skipped when another link has room (§5.3), but
        // is no reason to drop: the slave's qdisc still queues. Links out
        // of use for loss only serve when nothing else is left. By bytes, a
        // block at a time; a link idle for an eighth of SLOW_TOUT is level
        // again, so the peer's detector never sees it starved
        // (core/sched.rs).
        let idle = self.params.level_after();
        let Some((link, seq)) =
            c.tx.route(self.carrier & live, queues_ok, first, len, segs, t, idle)
        else {
            self.stats.tx_no_link.add(1);
            self.stats.tx_dropped.add(1);
            return TxRoute::NoLink;
        };
        let to = c.peer.as_ref().map_or([0; 6], |p| p.link_mac[link]);
        self.tx_swept(slot, &mut c.tx);
        self.stats.tx_packets.add(u64::from(segs));
        self.stats.tx_bytes.add(u64::from(len));
        TxRoute::Send {
            link,
            seq,
            to,
            from: self.slave_mac(link),
        }
    }

    /// Data went to the peer in `slot` (transmit side `c`, locked): it goes
    /// on the sweep list (loss reports, silent-link probes) if not there.
    pub(crate) fn tx_swept(&mut self, slot: usize, c: &mut PeerTx) {
        if !c.swept {
            c.swept = true;
            self.work.sweep_soon(slot);
        }
    }

    /// A packet sent without this lock found no link (counted here).
    pub(crate) fn tx_no_link(&mut self) {
        self.stats.tx_no_link.add(1);
        self.stats.tx_dropped.add(1);
    }

    /// Numbers a broadcast of `len` bytes: returns the number and the links
    /// it goes on (every link with carrier), or `None` if there is none.
    pub(crate) fn tx_bcast(&mut self, len: u32) -> Option<(Seq, u8)> {
        if self.carrier == 0 {
            self.stats.tx_no_link.add(1);
            self.stats.tx_dropped.add(1);
            return None;
        }
        let seq = self.bcast_seq;
        self.bcast_seq = seq.next();
        self.stats.tx_packets.add(1);
        self.stats.tx_bytes.add(u64::from(len));
        Some((seq, self.carrier))
    }

    /// A packet of `segs` frames and `len` bytes counted as sent
    /// (`tx_route`) was not after all; its drop is counted apart.
    pub(crate) fn tx_untaken(&mut self, len: u32, segs: u32) {
        self.stats.tx_packets.sub(u64::from(segs));
        self.stats.tx_bytes.sub(u64::from(len));
    }

    /// A packet counted as sent could not be sent after all.
    pub(crate) fn tx_failed(&mut self, len: u32) {
        self.stats.tx_packets.sub(1);
        self.stats.tx_bytes.sub(u64::from(len));
        self.stats.tx_dropped.add(1);
    }

    /// A packet could not be sent before it was counted (no memory, say).
    pub(crate) fn tx_drop(&mut self) {
        self.stats.tx_dropped.add(1);
    }

    /// Queues `frame` (RI2N header in place) on link `l`'s queue `q`.
    /// Returns whether the caller is to drain the queue after dropping the
    /// lock, or `None` if the frame did not fit (it went to `garbage`,
    /// counted).
    pub(crate) fn txq_push(
        &mut self,
        q: &LinkQueue,
        l: usize,
        frame: Skb,
        task: usize,
        garbage: &mut SkbList,
    ) -> Option<bool> {
        let frame = if self.slaves[l].is_none() {
            frame
        } else {
            match q.push(frame, task) {
                Ok(drain) => return Some(drain),
                Err(frame) => frame,
            }
        };
        garbage.push(frame);
        self.tx_queue_full(l);
        None
    }

    /// A frame did not fit link `l`'s queue.
    pub(crate) fn tx_queue_full(&mut self, l: usize) {
        self.link_stats[l].tx_dropped += 1;
        self.stats.tx_queue_full.add(1);
        self.stats.tx_dropped.add(1);
    }

    /// The slave of link `l` dropped `n` frames we handed it.
    pub(crate) fn tx_slave_dropped(&mut self, l: usize, n: u64) {
        self.link_stats[l].tx_dropped += n;
    }

    /// `frames` counted as sent on link `l` to `to` (a frame's
    /// destination: the peer's ri2n MAC, or in one-switch mode its slave
    /// MAC on the link, once learned) never left: the loss measurement
    /// must not take them for lost on the wire.
    /// The caller holds no transmit cell.
    pub(crate) fn tx_unsent(&mut self, to: &Mac, l: usize, frames: u32) {
        let slot = self.table.lookup(to).or_else(|| {
            let macs = CellMacs(&self.slots);
            self.claims
                .owner(to, |c| macs.link_mac(c))
                .filter(|c| c.link == l)
                .map(|c| c.slot)
        });
        if let Some(cell) = slot.and_then(|s| self.slots.cell(s)) {
            cell.lock().tx.unsent(l, frames);
        }
    }
}
