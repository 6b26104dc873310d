// SPDX-License-Identifier: GPL-2.0

//! A peer's transmit side (driver paper §5.3): its numbering and link
//! choice, kept apart from the rest of its state.
//!
//! Transmit needs little of a peer: the next number, the scheduler, and
//! which links it may use. Kept apart from the detector, it is counted
//! without it: the driver keeps both under one lock per table slot, so that
//! CPUs sending to or receiving from different peers never meet, and a
//! sender meets receive and the timers only on the peer they share, but
//! folds its counts in only when the detector is to judge. The two halves
//! trade what each needs of the other where
//! both are held:
//!
//! - [`PeerTx::fold`]: the frames sent on each link since the last fold go
//!   to the detector, which measures loss against them, and the time data
//!   last went out to the peer, which keeps it on the sweep;
//! - [`PeerTx::publish`]: the links the detector allows.
//!
//! A frame sent after a fold is counted at the next one. A heartbeat, whose
//! count covers every frame before it on its link, is counted and queued
//! with both held.

use super::detector::Detector;
use super::peers::{Mac, Peer};
use super::sched::RoundRobin;
use super::seq::Seq;
use super::time::{Duration, Instant};
use super::MAX_LINKS;

/// What transmit keeps of one peer.
///
/// All-zero bytes are an empty one (no peer).
#[derive(Default, Debug, Clone)]
pub struct PeerTx {
    /// The peer's MAC; all zero when there is none.
    mac: Mac,
    /// Next data number to the peer.
    pub tx_seq: Seq,
    /// The link choice over the usable links (core/sched.rs).
    pub rr: RoundRobin,
    /// Frames sent on each link since the last fold, wrapping (one taken
    /// back after a fold leaves it below zero).
    sent: [u32; MAX_LINKS],
    /// When data last went out, if since the last fold; 0 if not (a clock
    /// reading is never 0: it counts from boot). Not an `Option`, which
    /// would take twice the room: the driver's cell must stay in its
    /// kmalloc class (`TX_CELL_BYTES`).
    last_tx: Instant,
    /// The detector's links usable, and those out of use for loss only,
    /// as last published.
    usable: u8,
    lossy_only: u8,
    /// The caller's: whether the peer is on its sweep list.
    pub swept: bool,
}

impl PeerTx {
    /// For a new peer `mac`, numbering from 0 (its heartbeats tell the peer).
    pub fn start(&mut self, mac: &Mac) {
        *self = PeerTx {
            mac: *mac,
            ..PeerTx::default()
        };
    }

    /// The peer is gone.
    pub fn clear(&mut self) {
        *self = PeerTx::default();
    }

    /// Whether this is the peer `mac`'s.
    pub fn is(&self, mac: &Mac) -> bool {
        self.mac == *mac && *mac != [0; 6]
    }

    /// The peer's MAC (all zero: none).
    pub fn mac(&self) -> &Mac {
        &self.mac
    }

    /// Links among `up` to send data on, as [`Detector::sendable`] said at
    /// the last [`PeerTx::publish`].
    pub fn sendable(&self, up: u8) -> u8 {
        match self.usable & up {
            0 => self.lossy_only & up,
            usable => usable,
        }
    }

    /// Link and first number for a packet of `segs` frames (numbered in a
    /// row: more than one for a GSO packet the slave segments) and `len`
    /// bytes, among the sendable links of `up`, preferring those in
    /// `prefer` (queue not stopped); `first` as [`RoundRobin::pick_block`]
    /// takes it. A link idle for `idle` is level again
    /// ([`RoundRobin::at`]). `None` when no link is left: nothing counted.
    #[allow(clippy::too_many_arguments)]
    pub fn route(
        &mut self,
        up: u8,
        prefer: u8,
        first: Option<(u32, u32)>,
        len: u32,
        segs: u32,
        now: Instant,
        idle: Duration,
    ) -> Option<(usize, Seq)> {
        if first.is_some() {
            self.rr.at(now, idle);
        }
        let link = self.rr.pick_block(self.sendable(up), prefer, first, len)?;
        let seq = self.tx_seq;
        self.tx_seq = seq.add(segs);
        self.sent[link] = self.sent[link].wrapping_add(segs);
        self.last_tx = Instant(now.0.max(1));
        Some((link, seq))
    }

    /// `n` frames counted on `link` never left.
    pub fn unsent(&mut self, link: usize, n: u32) {
        self.sent[link] = self.sent[link].wrapping_sub(n);
    }

    /// Frames counted on `link` since the last fold (what the detector does
    /// not have yet).
    pub fn unfolded(&self, link: usize) -> u32 {
        self.sent[link]
    }

    /// Whether data went out since the last fold.
    pub fn sent_since_fold(&self) -> bool {
        self.last_tx.0 != 0
    }

    /// Gives `peer`'s detector the frames sent since the last fold, and
    /// `peer` the time data last went out.
    pub fn fold<P, B>(&mut self, peer: &mut Peer<P, B>) {
        for (l, n) in self.sent.iter_mut().enumerate() {
            if *n != 0 {
                peer.det.sent_n(l, core::mem::take(n));
            }
        }
        let t = core::mem::take(&mut self.last_tx);
        if t.0 != 0 && t.since(peer.last_data).0 > 0 {
            peer.last_data = t;
        }
    }

    /// Takes the links `det` allows from now on.
    pub fn publish(&mut self, det: &Detector) {
        self.usable = det.usable();
        self.lossy_only = det.lossy_only();
    }
}
