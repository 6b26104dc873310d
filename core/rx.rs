// SPDX-License-Identifier: GPL-2.0

//! A peer's receive side: the reorder window fed by the loss detector.
//!
//! Every entry point takes the time, the links the peer sends on (`active`;
//! those that just left it still take part in loss detection, see
//! `loss.rs`), the pool of reorder buffers (`bufs`: a window
//! takes one only while it holds packets, and every entry point gives it
//! back once nothing waits) and `up`, which receives the packets to hand to
//! the stack, in order.

use super::auth::{epoch_newer, same_epoch, HbReplay, Record};
use super::dedup::Dedup;
use super::loss::LossDetector;
use super::params::Params;
use super::seq::Seq;
use super::time::Instant;
use super::window::{Buffers, NoBuffers, Release, ReorderBuf, Span, Window, WINDOW_SLOTS};
use core::ops::DerefMut;

/// What a heartbeat did to the receive side.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Epoch {
    /// The same incarnation as before (or the first heartbeat heard).
    Same,
    /// The peer restarted: its numbering was resynchronised.
    Restarted,
}

/// What a verified sealed frame's epoch means.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum SealedEpoch {
    /// The peer's epoch, or the first one heard.
    Same,
    /// A newer epoch: the peer restarted.
    New,
    /// An older epoch: a replay of a frame from before the peer's restart,
    /// refused.
    Stale,
}

/// Receive state of one peer.
pub struct PeerRx<P, B> {
    /// Reorder window of the peer's unicast data.
    pub window: Window<P, B>,
    /// Per-link marks for early loss detection.
    pub loss: LossDetector,
    /// Duplicate filter of the peer's broadcasts.
    pub bcast: Dedup,
    /// The peer's incarnation, from its heartbeats (or, sealed, from any
    /// frame; 64 bits when sealed, else the low 32); 0 until one arrives.
    pub epoch: u64,
    /// The counters of its sealed heartbeats, per sender link.
    pub hb_seen: HbReplay,
}

impl<P, B> Default for PeerRx<P, B> {
    fn default() -> Self {
        PeerRx {
            window: Window::new(),
            loss: LossDetector::default(),
            bcast: Dedup::default(),
            epoch: 0,
            hb_seen: HbReplay::default(),
        }
    }
}

impl<P: Span, B: DerefMut<Target = ReorderBuf<P>>> PeerRx<P, B> {
    /// A data packet numbered `seq` arrived on `link` (a run of numbers
    /// from `seq` on, if merged: see [`Span`]). Returns it if it must be
    /// dropped (a duplicate).
    #[allow(clippy::too_many_arguments)]
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
        let dup = self.take(Some(link), seq, pkt, now, active, p, bufs, up);
        self.give_back(bufs);
        dup
    }

    /// A data packet numbered `seq` arrived on a link it was not sent on
    /// (one-switch mode: a copy the switch flooded): reordered like any, but
    /// no link passed anything. Returns it if it must be dropped.
    #[allow(clippy::too_many_arguments)]
    pub fn data_flooded(
        &mut self,
        seq: Seq,
        pkt: P,
        now: Instant,
        active: u8,
        p: &Params,
        bufs: &mut impl Buffers<B>,
        up: &mut impl FnMut(P),
    ) -> Option<P> {
        let dup = self.take(None, seq, pkt, now, active, p, bufs, up);
        self.give_back(bufs);
        dup
    }

    /// [`PeerRx::data`], `link` the link that passed `seq`, if any; the
    /// window keeps its buffer (the caller gives it back, or not).
    #[allow(clippy::too_many_arguments)]
    fn take(
        &mut self,
        link: Option<usize>,
        seq: Seq,
        pkt: P,
        now: Instant,
        active: u8,
        p: &Params,
        bufs: &mut impl Buffers<B>,
        up: &mut impl FnMut(P),
    ) -> Option<P> {
        let resyncs = self.window.stats.resyncs;
        let last = seq.add(self.window.span(&pkt) - 1);
        let dup = self.window.receive(seq, now, pkt, p.maxbuf(), bufs, up);
        if self.window.stats.resyncs != resyncs {
            // The old numbering's marks mean nothing in the new one.
            self.loss.reset();
        }
        self.window.mark(now, p.fast_tout().as_ms() as u32);
        if let Some(l) = link {
            self.loss.passed(l, last);
        }
        self.release(now, active, p, up);
        dup
    }

    /// Whether a data packet numbered `seq`, carrying `frames` numbers,
    /// can be taken without the pool of buffers: the window is started, if
    /// strict would take it (no replay to count), and has a buffer already,
    /// or holds nothing and `seq` is the number it expects (it goes
    /// straight up). The driver takes such a packet without the device's
    /// lock ([`PeerRx::data_unpooled`]).
    pub fn unpooled(&self, seq: Seq, frames: u32) -> bool {
        let w = &self.window;
        w.started()
            && (!w.strict() || w.would_take_run(seq, frames))
            && (w.has_buf() || (w.held() == 0 && w.next_expected() == seq))
    }

    /// [`PeerRx::data`] for a packet [`PeerRx::unpooled`] allows, without
    /// the pool: a window that empties keeps its buffer, for the next
    /// [`PeerRx::sweep`] to give back.
    #[allow(clippy::too_many_arguments)]
    pub fn data_unpooled(
        &mut self,
        link: usize,
        seq: Seq,
        pkt: P,
        now: Instant,
        active: u8,
        p: &Params,
        up: &mut impl FnMut(P),
    ) -> Option<P> {
        self.take(Some(link), seq, pkt, now, active, p, &mut NoBuffers, up)
    }

    /// How many of the `frames` numbers from `seq` on, arriving at `now`,
    /// the window passed more than FAST_TOUT before (as far as its mark
    /// tells, [`Window::passed_long_ago`]: for a link that lags by 3
    /// FAST_TOUT or more, about half of its frames): taken, they come late,
    /// to TCP a loss. Numbers given up a moment before (a full window,
    /// behind a link a few ms slower in a burst) do not count: links that
    /// take turns at that are no bad link.
    pub fn late_frames(&self, seq: Seq, frames: u32, now: Instant, p: &Params) -> u32 {
        self.window
            .passed_long_ago(seq, now, p.fast_tout().as_ms() as u32)
            .min(frames)
    }

    /// Whether a heartbeat that left the peer when its next number for us
    /// was `next`, arriving at `now`, comes more than FAST_TOUT after
    /// frames the peer sent after it on other links: the window had passed
    /// `next` that long before (as [`PeerRx::late_frames`]). Its link is
    /// as late as a frame the window gave up. Ask before
    /// [`PeerRx::heartbeat`], which may renumber.
    pub fn lagging(&self, next: Seq, now: Instant, p: &Params) -> bool {
        self.window
            .passed_long_ago(next, now, p.fast_tout().as_ms() as u32)
            > 0
    }

    /// Whether a heartbeat of `epoch` says the peer restarted: it had
    /// another epoch (not one known by its low half only).
    pub fn restarted(&self, epoch: u64) -> bool {
        self.epoch != 0 && !same_epoch(epoch, self.epoch)
    }

    /// A heartbeat arrived on `link`, carrying the peer's `epoch` and its
    /// next number for us, `next`.
    #[allow(clippy::too_many_arguments)]
    pub fn heartbeat(
        &mut self,
        link: usize,
        next: Seq,
        epoch: u64,
        now: Instant,
        active: u8,
        p: &Params,
        bufs: &mut impl Buffers<B>,
        up: &mut impl FnMut(P),
    ) -> Epoch {
        let mut e = Epoch::Same;
        if !same_epoch(epoch, self.epoch) || (epoch != self.epoch && epoch >> 32 != 0) {
            if self.restarted(epoch) {
                self.window.resync(next, up);
                self.loss.reset();
                self.bcast.reset();
                e = Epoch::Restarted;
            }
            self.epoch = epoch;
        }
        if self.window.strict()
            && self.window.started()
            && next.diff(self.window.next_expected()) <= -(WINDOW_SLOTS as i32)
        {
            // Sealed, same epoch, numbering far behind ours: the peer forgot
            // us (aged out, evicted) and numbers from its start again. A
            // strict window refuses such packets as replays, so the
            // peer's verified, fresh heartbeat says where it stands.
            self.window.resync(next, up);
            self.loss.reset();
        }
        if self.window.started() {
            // Everything the peer sent on this link before the heartbeat has
            // arrived or is lost: the link has passed `next - 1`.
            self.loss.passed(link, next.add(u32::MAX));
        }
        self.sweep(now, active, p, bufs, up);
        e
    }

    /// Judges the epoch of a verified sealed frame from the peer. An older
    /// epoch than the peer's is a recording from before its restart,
    /// whatever the time since it was last heard: a peer whose clock was
    /// set back across a reboot is refused until it is forgotten here
    /// with no record kept (as WireGuard refuses a handshake whose
    /// timestamp is not above the last one).
    pub fn sealed_epoch(&self, epoch: u64) -> SealedEpoch {
        if self.epoch == 0 || same_epoch(epoch, self.epoch) {
            SealedEpoch::Same
        } else if epoch_newer(epoch, self.epoch) {
            SealedEpoch::New
        } else {
            SealedEpoch::Stale
        }
    }

    /// What to keep of the peer once it is forgotten: only what sealed
    /// frames taught (unsealed ones are not judged for freshness).
    pub fn record(&self) -> Option<Record> {
        (self.window.strict() && self.epoch != 0).then(|| {
            Record::new(
                self.epoch,
                self.hb_seen.highest(),
                self.window.next_expected().0,
            )
        })
    }

    /// A peer new to the table, of which `r` was kept when it was
    /// forgotten: older epochs, heartbeats heard and data handed up stay
    /// refused.
    pub fn recall(&mut self, r: &Record) {
        self.epoch = r.epoch;
        self.hb_seen.at_least(r.counter);
        self.window.set_strict(true);
        self.window.resume(Seq(r.next));
    }

    /// Takes `epoch` from a verified sealed data or broadcast frame, which
    /// says nothing of where the new numbering stands: everything held goes
    /// up, and the window starts again at the next packet. Heartbeats
    /// change epochs through [`PeerRx::heartbeat`]. Returns whether the
    /// peer restarted (it had another epoch).
    pub fn take_epoch(&mut self, epoch: u64, up: &mut impl FnMut(P)) -> Epoch {
        if epoch == self.epoch {
            return Epoch::Same;
        }
        let was = self.epoch;
        self.epoch = epoch;
        if same_epoch(epoch, was) {
            // Known by its low half (unkeyed heartbeats) until now.
            return Epoch::Same;
        }
        self.hb_seen.reset();
        if was == 0 {
            return Epoch::Same;
        }
        self.window.restart(up);
        self.loss.reset();
        self.bcast.reset();
        Epoch::Restarted
    }

    /// Releases what the loss detector proved lost and what waited FAST_TOUT.
    /// Also the periodic sweep (every FAST_TOUT, or at the window's deadline).
    pub fn sweep(
        &mut self,
        now: Instant,
        active: u8,
        p: &Params,
        bufs: &mut impl Buffers<B>,
        up: &mut impl FnMut(P),
    ) {
        self.release(now, active, p, up);
        self.give_back(bufs);
    }

    /// Gives the window's buffer back to `bufs` if it holds nothing.
    fn give_back(&mut self, bufs: &mut impl Buffers<B>) {
        if let Some(b) = self.window.idle_buf() {
            bufs.put(b);
        }
    }

    /// [`PeerRx::sweep`] but for the buffer, which the window keeps.
    fn release(&mut self, now: Instant, active: u8, p: &Params, up: &mut impl FnMut(P)) {
        let taking_part = self.loss.taking_part(active, now, p.fast_tout());
        if self.window.held() > 0 {
            if let Some(upto) = self
                .loss
                .lost_through(taking_part, self.window.next_expected())
            {
                self.window.release_through(upto, Release::Loss, up);
            }
            self.window.expire(now, p.fast_tout(), up);
        }
    }

    /// Hands every held packet to `f` and gives the buffer back (the peer
    /// goes away, or the device goes down).
    pub fn drain(&mut self, bufs: &mut impl Buffers<B>, f: &mut impl FnMut(P)) {
        self.window.drain(f);
        self.give_back(bufs);
    }

    /// Hands every held packet up, in order (the held bytes' budget is
    /// spent), and gives the buffer back.
    pub fn flush(&mut self, bufs: &mut impl Buffers<B>, up: &mut impl FnMut(P)) {
        self.window.flush(up);
        self.give_back(bufs);
    }
}
