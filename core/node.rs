// SPDX-License-Identifier: GPL-2.0

//! What a node does with one peer: the rules that compose the window, the
//! loss rule, the failure detector and the heartbeats into one behaviour,
//! sans-IO (after quinn-proto's `Connection`).
//!
//! The caller brings the time, the frame already decoded and verified, and
//! an opaque packet handle; the engine decides and hands back what is left
//! of the packet ([`Left`]), the endpoint transitions and the events to
//! report. It never reads a clock, allocates, logs or locks: the driver
//! holds the peer's cell lock around each call and does the I/O, and the
//! simulator and the tests call the very same functions over plain values.
//!
//! - [`Peer::receive`]: a data, broadcast or heartbeat frame from the peer
//!   ([`Peer::receive_unpooled`]: data that needs no reorder buffer);
//! - [`Peer::sweep`]: the timer's visit (FAST_TOUT and loss releases,
//!   probe rounds, retries, loss reports);
//! - [`Peer::poll_heartbeats`]: the heartbeats due to the peer, and
//!   [`Peer::heartbeat_counts`] what each one carries;
//! - [`Peer::tell`]: transitions the peer must hear of at once.

use super::detector::{ProbingPeers, Transitions};
use super::header::{Counts, HB_LOSSY, HB_PROBE};
use super::params::Params;
use super::peers::{Peer, SweepNeed};
use super::rx::{Epoch, SealedEpoch};
use super::seq::Seq;
use super::time::{Duration, Instant};
use super::tx::PeerTx;
use super::window::{Buffers, ReorderBuf, Span};
use super::MAX_LINKS;
use core::ops::DerefMut;

/// Longest the sweep waits, whatever is due: it also polls the links'
/// carrier, ages peers out and visits the peers with a link out of use.
/// 63 ms is the longest wait a timer wheel keeps within a millisecond at
/// HZ=1000.
pub const SWEEP_MAX: Duration = Duration::from_ms(63);

/// How often the sweep runs at most under `p`: FAST_TOUT / 4, at least
/// 1 ms.
pub fn sweep_period(p: &Params) -> Duration {
    Duration((p.fast_tout().0 / 4).max(Duration::from_ms(1).0))
}

/// When the sweep runs for something due at `due`, seen at `now`: no
/// sooner than a period from `now` (nothing waits past the next point of a
/// periodic sweep, and a deadline the sweep does not meet cannot spin it),
/// no later than [`SWEEP_MAX`].
pub fn sweep_at(due: Option<Instant>, now: Instant, p: &Params) -> Instant {
    let latest = now.plus(SWEEP_MAX);
    due.map_or(latest, |d| d.min(latest))
        .max(now.plus(sweep_period(p)))
}

/// A heartbeat as received, decoded.
#[derive(Clone, Copy, Debug, Default)]
pub struct HeartbeatIn {
    /// The peer's next number for us when it sent the heartbeat.
    pub next: Seq,
    /// The low half of the peer's epoch (a sealed frame carries it whole).
    pub epoch: u32,
    /// `HB_*` flags.
    pub flags: u8,
    /// The peer's link it left on.
    pub peer_link: u8,
    /// The peer's links unusable toward us.
    pub down: u8,
    /// How often the peer wants our loss probes.
    pub probe_shift: u8,
    /// Its frame counts, if it carries them.
    pub counts: Option<Counts>,
    /// Its heartbeat counter (sealed heartbeats).
    pub counter: Option<u64>,
}

/// What a received frame carries, decoded.
#[derive(Clone, Copy, Debug)]
pub enum Frame {
    /// Unicast data numbered `Seq` (the first of a merged run).
    Data(Seq),
    /// A broadcast, sent on every link, numbered in the broadcast sequence.
    Bcast(Seq),
    /// A heartbeat.
    Heartbeat(HeartbeatIn),
}

/// Where and how a frame arrived.
#[derive(Clone, Copy, Debug)]
pub struct Arrival {
    /// Our link it arrived on.
    pub link: usize,
    /// When.
    pub now: Instant,
    /// Our links with carrier.
    pub carrier: u8,
    /// It counts on `link` (not a copy a single switch flooded here).
    pub credit: bool,
    /// Sealed: the epoch its seal carries (verified and judged fresh).
    pub sealed: Option<u64>,
    /// The frames it stands for (a merged run's count, else 1).
    pub frames: u32,
}

/// What is left of a received packet once the engine is done with it.
#[derive(Debug)]
pub enum Left<P> {
    /// Nothing: there was no packet, or the window took it.
    Nothing,
    /// A new broadcast, to go up at once (outside the window's order).
    Up(P),
    /// A broadcast number seen already: another link's copy.
    Copy(P),
    /// A data number the window holds already.
    Duplicate(P),
    /// A data number the window handed up already (strict: a replay).
    Replay(P),
    /// A heartbeat, consumed.
    Consumed(P),
}

/// What [`Peer::receive`] decided.
#[derive(Debug)]
pub struct Received<P> {
    /// Endpoint state changes.
    pub tr: Transitions,
    /// The peer restarted: its new epoch.
    pub restarted: Option<u64>,
    /// Heartbeats are pending to the peer that should go now (an answer to
    /// a probe, news of a transition).
    pub answer: bool,
    /// The packet, if it was not taken.
    pub left: Left<P>,
}

/// What a verified sealed frame is, decided before it counts anywhere.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Fresh {
    /// New: it may count.
    Yes,
    /// A replay (or a stale epoch).
    Replay,
    /// A broadcast number already seen: another link's copy, or a replay.
    Copy,
}

/// What a visit of the sweep found.
#[derive(Debug)]
pub struct Visit {
    /// Endpoint state changes (a probe round that ended).
    pub tr: Transitions,
    /// How often the sweep must visit the peer from now on.
    pub need: SweepNeed,
    /// With [`SweepNeed::Now`]: the peer's next deadline.
    pub due: Option<Instant>,
    /// The peer has a link out of use for loss.
    pub lossy: bool,
}

/// One heartbeat to send to the peer on `link`, as [`Peer::poll_heartbeats`]
/// orders it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HeartbeatOut {
    /// Our link.
    pub link: usize,
    /// `HB_PROBE` (an answer is asked), `HB_LOSSY` (we probe this link).
    pub flags: u8,
    /// Our links unusable toward the peer.
    pub down: u8,
    /// How often we want the peer's loss probes on links lossy toward us.
    pub probe_shift: u8,
}

/// The heartbeats due to one peer, at most one per link.
pub type HeartbeatOrders = [Option<HeartbeatOut>; MAX_LINKS];

impl<P: Span, B: DerefMut<Target = ReorderBuf<P>>> Peer<P, B> {
    /// Whether a verified sealed frame `frame` of `epoch` is new, decided before it counts anywhere (a replay
    /// must not keep a dead link alive, fail a quiet one, or keep a peer in
    /// the table): its epoch is the peer's or newer
    /// ([`PeerRx::sealed_epoch`](super::rx::PeerRx::sealed_epoch)); a
    /// heartbeat's counter is above the last from its link (recorded); a
    /// data packet's numbers (`frames` of them) are all ones the window
    /// would take; a broadcast number is new to the filter (else a copy:
    /// the one from another link, or a replay, which cannot be told apart).
    pub fn sealed_fresh(&mut self, epoch: u64, frame: &Frame, frames: u32) -> Fresh {
        let new_epoch = match self.rx.sealed_epoch(epoch) {
            SealedEpoch::Stale => return Fresh::Replay,
            SealedEpoch::New => true,
            SealedEpoch::Same => false,
        };
        let fresh = match *frame {
            Frame::Heartbeat(ref hb) => {
                if new_epoch {
                    self.rx.hb_seen.reset();
                }
                hb.counter
                    .is_some_and(|c| self.rx.hb_seen.accept(hb.peer_link, c))
            }
            Frame::Bcast(seq)
                if !new_epoch && self.rx.bcast.verified() && !self.rx.bcast.is_new(seq) =>
            {
                return if self.rx.bcast.too_old(seq) {
                    Fresh::Replay
                } else {
                    Fresh::Copy
                };
            }
            Frame::Bcast(_) => true,
            Frame::Data(seq) => {
                new_epoch || !self.rx.window.strict() || self.rx.window.would_take_run(seq, frames)
            }
        };
        if fresh {
            Fresh::Yes
        } else {
            Fresh::Replay
        }
    }

    /// A frame from the peer, `a` says where and when: the detector counts
    /// it, the window takes data, a heartbeat moves the detector, the
    /// window and the loss rule. What the window releases goes to `up`, in
    /// order. `probing` counts the peers that probe us (`HB_LOSSY`).
    ///
    /// The caller has folded the peer's transmit side in
    /// ([`PeerTx::fold`]) and publishes the detector's links after.
    #[allow(clippy::too_many_arguments)]
    pub fn receive(
        &mut self,
        a: &Arrival,
        frame: Frame,
        pkt: Option<P>,
        probing: &mut ProbingPeers,
        p: &Params,
        bufs: &mut impl Buffers<B>,
        up: &mut impl FnMut(P),
    ) -> Received<P> {
        let mut restarted = None;
        let mut answer = false;
        self.rx.window.set_strict(a.sealed.is_some());
        // A sealed data or broadcast frame may bring a new epoch (a
        // heartbeat's goes through `PeerRx::heartbeat`).
        if let (Some(e), Frame::Data(_) | Frame::Bcast(_)) = (a.sealed, &frame) {
            if self.rx.take_epoch(e, up) == Epoch::Restarted {
                self.det.renumbered();
                restarted = Some(e);
            }
        }
        let (tr, left) = match frame {
            Frame::Heartbeat(hb) => {
                let (tr, e, probe) = self.receive_heartbeat(a, &hb, probing, p, bufs, up);
                restarted = e.or(restarted);
                answer |= probe;
                (tr, pkt.map_or(Left::Nothing, Left::Consumed))
            }
            Frame::Bcast(seq) => self.receive_bcast(a, seq, pkt, p),
            Frame::Data(seq) => self.receive_data(a, seq, pkt, p, bufs, up),
        };
        answer |= self.tell(&tr, a.carrier);
        Received {
            tr,
            restarted,
            answer,
            left,
        }
    }

    /// A heartbeat `hb` in [`Peer::receive`]: returns the transitions, the
    /// peer's new epoch if it restarted, and whether it asks for an answer.
    #[inline]
    fn receive_heartbeat(
        &mut self,
        a: &Arrival,
        hb: &HeartbeatIn,
        probing: &mut ProbingPeers,
        p: &Params,
        bufs: &mut impl Buffers<B>,
        up: &mut impl FnMut(P),
    ) -> (Transitions, Option<u64>, bool) {
        let (l, t) = (a.link, a.now);
        // Sealed: the whole epoch; else the low half the payload has.
        let epoch = a.sealed.unwrap_or(u64::from(hb.epoch));
        let loss = hb
            .counts
            .map(|c| self.det.report(l, c, t, p))
            .unwrap_or_default();
        if self.rx.restarted(epoch) {
            self.det.renumbered();
        }
        // Before the judgement the heartbeat brings: its link's silence may
        // be the peer's sparse probes'.
        self.det.peer_lossy_link(l, hb.flags & HB_LOSSY != 0);
        let echo = hb.counts.map(|c| c.echo_tx);
        let mut tr =
            self.det
                .heartbeat_echoed(l, t, hb.peer_link as usize, hb.down, hb.next, echo, p);
        if self.rx.lagging(hb.next, t, p) && !self.rx.restarted(epoch) {
            self.det.late(l, 1);
        }
        // Its wish, as its down bits, only from its newest.
        if self.det.took(hb.next) {
            self.det.peer_probe_shift(hb.probe_shift);
        }
        if hb.flags & HB_LOSSY != 0 {
            probing.saw(&mut self.probing_stamp, t);
        }
        tr.lossy |= loss.lossy;
        tr.lossless |= loss.lossless;
        let active = self.rx_active(a.carrier);
        let restarted = (self.rx.heartbeat(l, hb.next, epoch, t, active, p, bufs, up)
            == Epoch::Restarted)
            .then_some(epoch);
        let probe = hb.flags & HB_PROBE != 0;
        if probe {
            self.hb_pending |= 1 << l;
        }
        (tr, restarted, probe)
    }

    /// A broadcast numbered `seq` in [`Peer::receive`].
    #[inline]
    fn receive_bcast(
        &mut self,
        a: &Arrival,
        seq: Seq,
        pkt: Option<P>,
        p: &Params,
    ) -> (Transitions, Left<P>) {
        let tr = if a.credit {
            self.det.bcast(a.link, a.now, p)
        } else {
            Transitions::default()
        };
        self.last_data = a.now;
        let Some(s) = pkt else {
            return (tr, Left::Nothing);
        };
        let new = if a.sealed.is_some() {
            self.rx.bcast.accept_strict(seq)
        } else {
            self.rx.bcast.accept(seq)
        };
        (tr, if new { Left::Up(s) } else { Left::Copy(s) })
    }

    /// A data frame numbered `seq` in [`Peer::receive`].
    #[inline]
    fn receive_data(
        &mut self,
        a: &Arrival,
        seq: Seq,
        pkt: Option<P>,
        p: &Params,
        bufs: &mut impl Buffers<B>,
        up: &mut impl FnMut(P),
    ) -> (Transitions, Left<P>) {
        let (l, t) = (a.link, a.now);
        let tr = if a.credit {
            self.det.data_run(l, a.frames, t, p)
        } else {
            Transitions::default()
        };
        self.last_data = t;
        let active = self.rx_active(a.carrier);
        let Some(s) = pkt else {
            return (tr, Left::Nothing);
        };
        let replays = self.rx.window.stats.replays;
        let late = self.rx.late_frames(seq, a.frames, t, p);
        let dup = if a.credit {
            self.rx.data(l, seq, s, t, active, p, bufs, up)
        } else {
            self.rx.data_flooded(seq, s, t, active, p, bufs, up)
        };
        let left = match dup {
            None => {
                if a.credit && late != 0 {
                    self.det.late(l, late);
                }
                Left::Nothing
            }
            Some(d) if self.rx.window.stats.replays != replays => Left::Replay(d),
            Some(d) => Left::Duplicate(d),
        };
        (tr, left)
    }

    /// [`Peer::receive`] for a data frame numbered `seq` that
    /// [`PeerRx::unpooled`](super::rx::PeerRx::unpooled) allows, credited
    /// to its link, taken without the pool of buffers: a window that
    /// empties keeps its buffer for the next sweep to give back. Returns
    /// the transitions, which the caller must still [`Peer::tell`], and the
    /// packet if it was a duplicate.
    #[inline(always)]
    pub fn receive_unpooled(
        &mut self,
        a: &Arrival,
        seq: Seq,
        pkt: P,
        p: &Params,
        up: &mut impl FnMut(P),
    ) -> (Transitions, Option<P>) {
        let (l, t) = (a.link, a.now);
        let tr = self.det.data_run(l, a.frames, t, p);
        self.last_data = t;
        let active = self.rx_active(a.carrier);
        let late = self.rx.late_frames(seq, a.frames, t, p);
        let dup = self.rx.data_unpooled(l, seq, pkt, t, active, p, up);
        if late != 0 && dup.is_none() {
            self.det.late(l, late);
        }
        (tr, dup)
    }

    /// The sweep's visit at `now`, over the links with `carrier`: starts
    /// and ends probe rounds, retries failed links, asks for loss reports
    /// (`lossy_every` apart on lossy links), and releases into `up` what
    /// waited FAST_TOUT or was proved lost. Heartbeats it wants are left
    /// pending ([`Peer::poll_heartbeats`]).
    pub fn sweep(
        &mut self,
        now: Instant,
        carrier: u8,
        p: &Params,
        lossy_every: Duration,
        bufs: &mut impl Buffers<B>,
        up: &mut impl FnMut(P),
    ) -> Visit {
        let lossy = self.det.lossy() != 0;
        // Probes for a link that fell silent, or to bring a failed one
        // back (core/detector/probe.rs).
        let probe = self.det.probe_due(now, carrier, p)
            | self.det.retry_due(now, carrier, p)
            | self.det.report_due_every(now, carrier, p, lossy_every);
        self.hb_pending |= probe;
        self.hb_probe |= probe;
        let tr = self.det.probe_end(now, p);
        if !tr.is_empty() {
            self.hb_pending |= carrier;
        }
        let active = self.rx_active(carrier);
        self.rx.sweep(now, active, p, bufs, up);
        let need = self.sweep_need(now, carrier, p);
        let due = if need == SweepNeed::Now {
            self.next_due(now, carrier, p, lossy_every)
        } else {
            None
        };
        Visit {
            tr,
            need,
            due,
            lossy,
        }
    }
}

impl<P, B> Peer<P, B> {
    /// Transitions `tr` that change what our heartbeats say (a link failed,
    /// recovered, went lossy or came back): the peer must hear at once, on
    /// every link with `carrier`, for a one-way failure must stop its
    /// sending too. Returns whether heartbeats are to go now.
    pub fn tell(&mut self, tr: &Transitions, carrier: u8) -> bool {
        if tr.failed | tr.recovered | tr.lossy | tr.lossless != 0 {
            self.hb_pending |= carrier;
            true
        } else {
            false
        }
    }

    /// A new peer at `now`, over our `nlinks` links: it learns our epoch
    /// and numbering at once (the next sweep), not at the next HBSPAN:
    /// after a restart, on either side, that is what resynchronises the
    /// numbering. A peer we send to first hears on every link with
    /// `carrier`; a peer first `heard` on a link is answered on that link
    /// alone, so that a frame from a made-up source MAC draws one frame
    /// back, not one per link.
    pub fn start(&mut self, nlinks: usize, heard: Option<usize>, carrier: u8, now: Instant) {
        self.det.start(nlinks, now);
        self.hb_pending = heard.map_or(carrier, |l| carrier & (1 << l));
    }

    /// The peer's periodic heartbeat is due (every HBSPAN), on every link
    /// with `carrier`, failed endpoints included: recovery needs them.
    pub fn heartbeat_due(&mut self, carrier: u8) {
        self.hb_pending |= carrier;
    }

    /// Our link `link` gained (`up`) or lost carrier, which leaves our links
    /// with carrier `carrier`: the peer hears at once on every link left,
    /// and a link back is probed for an answer.
    pub fn carrier_changed(&mut self, carrier: u8, link: usize, up: bool) {
        self.hb_pending |= carrier;
        if up {
            self.hb_probe |= 1 << link;
        }
    }

    /// The heartbeats pending to the peer on the links with `carrier`
    /// (`nlinks` of ours exist), asking `probe_shift` of its loss probes;
    /// `None` if none is pending. They are no longer pending after.
    pub fn poll_heartbeats(
        &mut self,
        carrier: u8,
        nlinks: usize,
        probe_shift: u8,
    ) -> Option<HeartbeatOrders> {
        let pending = self.hb_pending & carrier;
        if pending == 0 {
            return None;
        }
        let all = ((1u16 << nlinks) - 1) as u8;
        // Our links unusable toward this peer: failed, no carrier, removed.
        let down = (self.det.failed() | !carrier) & all;
        // Our links lossy toward the peer: it counts us among the peers
        // that probe it.
        let lossy = self.det.lossy();
        self.det.asked_probe_shift(probe_shift);
        let mut orders: HeartbeatOrders = Default::default();
        for (l, o) in orders.iter_mut().enumerate() {
            let bit = 1u8 << l;
            if pending & bit != 0 {
                let flags = if self.hb_probe & bit != 0 {
                    HB_PROBE
                } else {
                    0
                } | if lossy & bit != 0 { HB_LOSSY } else { 0 };
                *o = Some(HeartbeatOut {
                    link: l,
                    flags,
                    down,
                    probe_shift,
                });
            }
        }
        self.hb_pending &= !pending;
        self.hb_probe &= !pending;
        Some(orders)
    }

    /// The frame counts a heartbeat on `link` carries, and counts it as
    /// sent: `tx`'s frames are folded in first, so that the count covers
    /// every frame before the heartbeat on its link. The caller queues the
    /// heartbeat before any later frame to the peer is counted.
    pub fn heartbeat_counts(&mut self, tx: &mut PeerTx, link: usize) -> Option<Counts> {
        tx.fold(self);
        let counts = self.det.counts(link);
        self.det.sent(link);
        counts
    }
}
