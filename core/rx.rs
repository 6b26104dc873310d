// SPDX-License-Identifier: GPL-2.0

//! A peer's receive side: the reorder window fed by the loss detector.
//!
//! Every entry point takes the time, the links taking part in loss detection
//! (`active`, see `loss.rs`), the pool of reorder buffers (`bufs`: a window
//! takes one only while it holds packets, and every entry point gives it
//! back once nothing waits) and `up`, which receives the packets to hand to
//! the stack, in order.

use super::dedup::Dedup;
use super::loss::LossDetector;
use super::params::Params;
use super::seq::Seq;
use super::time::Instant;
use super::window::{Buffers, ReorderBuf, Release, Window};
use core::ops::DerefMut;

/// What a heartbeat did to the receive side.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Epoch {
    /// The same incarnation as before (or the first heartbeat heard).
    Same,
    /// The peer restarted: its numbering was resynchronised.
    Restarted,
}

/// Receive state of one peer.
pub struct PeerRx<P, B> {
    /// Reorder window of the peer's unicast data.
    pub window: Window<P, B>,
    /// Per-link marks for early loss detection.
    pub loss: LossDetector,
    /// Duplicate filter of the peer's broadcasts.
    pub bcast: Dedup,
    /// The peer's incarnation, from its heartbeats; 0 until one arrives.
    pub epoch: u32,
}

impl<P, B> Default for PeerRx<P, B> {
    fn default() -> Self {
        PeerRx { window: Window::new(), loss: LossDetector::default(), bcast: Dedup::default(), epoch: 0 }
    }
}

impl<P, B: DerefMut<Target = ReorderBuf<P>>> PeerRx<P, B> {
    /// A data packet numbered `seq` arrived on `link`. Returns it if it must
    /// be dropped (a duplicate).
    pub fn data(
        &mut self,
        link: usize,
        seq: Seq,
        pkt: P,
        now: Instant,
        active: u8,
        p: &Params,
        bufs: &mut impl Buffers<B>,
        up: &mut impl FnMut(P),
    ) -> Option<P> {
        let resyncs = self.window.stats.resyncs;
        let dup = self.window.receive(seq, now, pkt, p.maxbuf(), bufs, up);
        if self.window.stats.resyncs != resyncs {
            // The old numbering's marks mean nothing in the new one.
            self.loss.reset();
        }
        self.loss.passed(link, seq);
        self.sweep(now, active, p, bufs, up);
        dup
    }

    /// A heartbeat arrived on `link`, carrying the peer's `epoch` and its
    /// next number for us, `next`.
    pub fn heartbeat(
        &mut self,
        link: usize,
        next: Seq,
        epoch: u32,
        now: Instant,
        active: u8,
        p: &Params,
        bufs: &mut impl Buffers<B>,
        up: &mut impl FnMut(P),
    ) -> Epoch {
        let mut e = Epoch::Same;
        if epoch != self.epoch {
            if self.epoch != 0 {
                self.window.resync(next, up);
                self.loss.reset();
                e = Epoch::Restarted;
            }
            self.epoch = epoch;
        }
        if self.window.started() {
            // Everything the peer sent on this link before the heartbeat has
            // arrived or is lost: the link has passed `next - 1`.
            self.loss.passed(link, next.add(u32::MAX));
        }
        self.sweep(now, active, p, bufs, up);
        e
    }

    /// Releases what the loss detector proved lost and what waited FAST_TOUT.
    /// Also the periodic sweep (every FAST_TOUT, or at the window's deadline).
    pub fn sweep(&mut self, now: Instant, active: u8, p: &Params, bufs: &mut impl Buffers<B>, up: &mut impl FnMut(P)) {
        if self.window.held() > 0 {
            if let Some(upto) = self.loss.lost_through(active, self.window.next_expected()) {
                self.window.release_through(upto, Release::Loss, up);
            }
            self.window.expire(now, p.fast_tout(), up);
        }
        if let Some(b) = self.window.idle_buf() {
            bufs.put(b);
        }
    }

    /// Hands every held packet to `f` and gives the buffer back (the peer
    /// goes away, or the device goes down).
    pub fn drain(&mut self, bufs: &mut impl Buffers<B>, f: &mut impl FnMut(P)) {
        self.window.drain(f);
        if let Some(b) = self.window.idle_buf() {
            bufs.put(b);
        }
    }

    /// Hands every held packet up, in order (the held bytes' budget is
    /// spent), and gives the buffer back.
    pub fn flush(&mut self, bufs: &mut impl Buffers<B>, up: &mut impl FnMut(P)) {
        self.window.flush(up);
        if let Some(b) = self.window.idle_buf() {
            bufs.put(b);
        }
    }
}
