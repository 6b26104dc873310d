// SPDX-License-Identifier: GPL-2.0

//! Two nodes over K links in virtual time, each running the protocol
//! engine ([`crate::node`]) for the other: the world the engine-level tests
//! and the simulator put the engine in.
//!
//! Each node does what the driver's device does around the engine, and
//! nothing more: it folds its transmit side in before the engine judges and
//! publishes the links allowed after; it runs the sweep at the time
//! [`sweep_at`] gives, pulled earlier by a receive whose peer needs it and
//! at once when the engine wants heartbeats sent; it sends the peer's
//! heartbeat every HBSPAN; it refuses a sealed frame the engine does not
//! judge fresh before it counts. Packets are numbers: data packet `n` is
//! the `n`th a node sent.
//!
//! A link is a FIFO per direction with a one-way delay. Faults: a port
//! without carrier (its node sees it; nothing crosses), a blackhole (frames
//! vanish, carrier stays), random loss, extra delay (a late link), jitter
//! (which also reorders within the link, as netem does). A node may also
//! stop for a while ([`Pair::stop`]), as a vCPU its host descheduled: it
//! sends, receives and runs no timer meanwhile, its clock runs on, and
//! what reached its NICs comes in when it resumes, one NIC's after the
//! other's in turns of a NAPI budget, its overdue sweep before or after
//! them (the timer and receive softirqs run in either order).
//! (A guest QEMU's monitor stops sees no time pass itself; its peer sees
//! the same silence.)

use crate::detector::{loss_probe_every, node_probe_shift, ProbingPeers, Transitions};
use crate::heap::{Buf, HeapBufs};
use crate::node::{sweep_at, sweep_period, Arrival, Frame, Fresh, HeartbeatIn, Left};
use crate::params::Params;
use crate::peers::{Peer, SweepNeed};
use crate::time::{Duration, Instant};
use crate::tx::PeerTx;
use crate::MAX_LINKS;
use alloc::boxed::Box;
use alloc::collections::BinaryHeap;
use alloc::vec::Vec;
use core::cmp::{Ordering, Reverse};

/// One millisecond, in the clock's nanoseconds.
pub const MS: u64 = 1_000_000;

/// The engine's peer state, packets as numbers.
pub type EnginePeer = Peer<u64, Buf<u64>>;

/// What a node counted that the engine handed back or refused.
#[derive(Clone, Copy, Debug, Default)]
pub struct Refused {
    /// Data numbers the window held already.
    pub duplicates: u64,
    /// Sealed frames refused as replays (before they counted), and data
    /// numbers a strict window had handed up.
    pub replays: u64,
    /// Broadcast copies.
    pub copies: u64,
}

/// One of the two nodes, as its peer sees it through the engine.
pub struct Node {
    /// Its transmit side toward the other node.
    pub tx: PeerTx,
    /// Its state of the other node.
    pub peer: Box<EnginePeer>,
    pub bufs: HeapBufs<u64>,
    pub probing: ProbingPeers,
    /// Its links with carrier.
    pub carrier: u8,
    /// Its epoch (a restart takes a new one).
    pub epoch: u64,
    /// It seals its frames (a key), and takes only sealed ones.
    pub keyed: bool,
    hb_counter: u64,
    /// When it last heard the other node (the table's `last_seen`).
    pub last_seen: Instant,
    /// What went up, in order: the other node's data numbers.
    pub up: Vec<u64>,
    pub refused: Refused,
    /// Every transition, with its time.
    pub transitions: Vec<(u64, Transitions)>,
    /// Every restart of the other node it took: time, new epoch.
    pub restarts: Vec<(u64, u64)>,
    /// Heartbeats sent.
    pub hb_sent: u64,
    /// Sweeps run.
    pub sweeps: u64,
    /// Periodic heartbeat ticks (each sends one per link with carrier).
    pub hb_ticks: u64,
    /// Each decision counts this node as having `alike` peers like this one
    /// (`lossy_every`, `probe_shift`), so that one pair stands for a node
    /// among N.
    pub alike: usize,
    lossy_peers: usize,
    next_sweep: u64,
    next_hb: u64,
    /// It is stopped until then (0: it runs).
    stopped_until: u64,
    /// What reached its NICs while it was stopped, in order.
    held: Vec<Flight>,
    /// Data packets its NICs dropped while it was stopped (a full ring).
    pub ring_drops: u64,
}

/// Frames a stopped node's NIC holds per link (a receive ring); more are
/// dropped.
pub const STOP_RING: usize = 256;
/// Frames NAPI takes from one NIC before it turns to the next.
pub const NAPI_BUDGET: usize = 64;

/// What happens to frames one node sends on one link.
#[derive(Clone, Copy, Debug, Default)]
pub struct Fault {
    /// Every frame vanishes (carrier stays).
    pub blackhole: bool,
    /// Chance that a frame is lost, from 0 to 1.
    pub loss: f64,
    /// Extra one-way delay, ns.
    pub delay: u64,
    /// Extra delay drawn evenly from 0 to this, ns, per frame (frames on
    /// the link may then overtake one another).
    pub jitter: u64,
}

struct Flight {
    at: u64,
    order: u64,
    to: usize,
    link: usize,
    frame: Frame,
    pkt: Option<u64>,
    sealed: Option<u64>,
}

impl PartialEq for Flight {
    fn eq(&self, o: &Self) -> bool {
        (self.at, self.order) == (o.at, o.order)
    }
}
impl Eq for Flight {}
impl PartialOrd for Flight {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Flight {
    fn cmp(&self, o: &Self) -> Ordering {
        (self.at, self.order).cmp(&(o.at, o.order))
    }
}

/// A small deterministic generator (xorshift64*), so runs repeat.
#[derive(Clone, Debug)]
pub struct Rng(pub u64);

impl Rng {
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Evenly below `n` (0 if `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next_u64() % n
        }
    }

    /// True with chance `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        p > 0.0 && (self.below(1 << 30) as f64) < p * (1u64 << 30) as f64
    }
}

/// Two nodes, 0 and 1, over `k` links.
pub struct Pair {
    pub nodes: [Node; 2],
    pub k: usize,
    pub p: Params,
    /// Virtual time, ns.
    pub now: u64,
    /// One-way delay of every link, ns.
    pub delay: u64,
    /// `faults[from][link]`: what happens to frames `from` sends on `link`.
    pub faults: [[Fault; MAX_LINKS]; 2],
    pub rng: Rng,
    flights: BinaryHeap<Reverse<Flight>>,
    order: u64,
    /// Per direction and link, the latest arrival so far (FIFO links).
    last_at: [[u64; MAX_LINKS]; 2],
    /// Data numbers sent, per node.
    sent: [u64; 2],
    /// Every frame that left a node, as a wiretap on the links sees it
    /// (while `tap` is on): for replays.
    pub tapped: Vec<Tapped>,
    pub tap: bool,
}

/// A frame seen on the wire.
#[derive(Clone, Copy, Debug)]
pub struct Tapped {
    pub at: u64,
    pub from: usize,
    pub link: usize,
    pub frame: Frame,
    pub pkt: Option<u64>,
    pub sealed: Option<u64>,
}

impl Node {
    fn new(k: usize, now: Instant, epoch: u64, hb_phase: u64) -> Node {
        let carrier = ((1u16 << k) - 1) as u8;
        let mut peer = Box::<EnginePeer>::default();
        peer.start(k, None, carrier, now);
        let mut tx = PeerTx::default();
        tx.start(&[2, 0, 0, 0, 0, 1]);
        tx.publish(&peer.det);
        Node {
            tx,
            peer,
            bufs: HeapBufs::default(),
            probing: ProbingPeers::default(),
            carrier,
            epoch,
            keyed: false,
            hb_counter: 0,
            last_seen: now,
            up: Vec::new(),
            refused: Refused::default(),
            transitions: Vec::new(),
            restarts: Vec::new(),
            hb_sent: 0,
            sweeps: 0,
            hb_ticks: 0,
            alike: 1,
            lossy_peers: 0,
            next_sweep: now.0,
            next_hb: now.0 + hb_phase,
            stopped_until: 0,
            held: Vec::new(),
            ring_drops: 0,
        }
    }

    fn lossy_every(&self) -> Duration {
        loss_probe_every(self.lossy_peers)
    }

    fn probe_shift(&self, now: Instant) -> u8 {
        let probing = if self.probing.count(now) > 0 {
            self.alike
        } else {
            0
        };
        node_probe_shift(self.lossy_peers, probing)
    }

    fn note(&mut self, now: u64, tr: Transitions) {
        if !tr.is_empty() {
            self.transitions.push((now, tr));
        }
    }

    /// Links of ours the other node may carry data on, as we see it.
    pub fn sendable(&self) -> u8 {
        self.peer.det.sendable(self.carrier)
    }

    /// When link `l` was last seen to `fail` (a mask of `Transitions`
    /// chosen by `which`) at or after `from`.
    pub fn first(&self, from: u64, l: usize, which: impl Fn(&Transitions) -> u8) -> Option<u64> {
        self.transitions
            .iter()
            .find(|(t, tr)| *t >= from && which(tr) & (1 << l) != 0)
            .map(|(t, _)| *t)
    }
}

impl Pair {
    /// Two nodes that know each other from time 0, their heartbeats at
    /// random phases of HBSPAN drawn from `seed`.
    pub fn new(k: usize, p: Params, seed: u64) -> Pair {
        let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
        let hbspan = p.hbspan().0;
        let (a, b) = (rng.below(hbspan), rng.below(hbspan));
        Pair {
            nodes: [
                Node::new(k, Instant(0), 0x1_0000_0001, a),
                Node::new(k, Instant(0), 0x2_0000_0002, b),
            ],
            k,
            p,
            now: 0,
            delay: 50_000,
            faults: [[Fault::default(); MAX_LINKS]; 2],
            rng,
            flights: BinaryHeap::new(),
            order: 0,
            last_at: [[0; MAX_LINKS]; 2],
            sent: [0; 2],
            tapped: Vec::new(),
            tap: false,
        }
    }

    /// Both nodes seal their frames.
    pub fn keyed(mut self) -> Pair {
        for n in &mut self.nodes {
            n.keyed = true;
        }
        self
    }

    /// Runs both nodes until `t` (ns).
    pub fn run_until(&mut self, t: u64) {
        loop {
            let flight = self.flights.peek().map_or(u64::MAX, |f| f.0.at);
            let hb = self.nodes[0].next_hb.min(self.nodes[1].next_hb);
            let sweep = self.nodes[0].next_sweep.min(self.nodes[1].next_sweep);
            let resume = self
                .nodes
                .iter()
                .map(|n| n.stopped_until)
                .filter(|&u| u != 0)
                .min();
            let resume = resume.unwrap_or(u64::MAX);
            let next = flight.min(hb).min(sweep).min(resume);
            if next > t {
                break;
            }
            self.now = next;
            // A node resumes before its timers that waited for it fire.
            if resume == next {
                let side = if self.nodes[0].stopped_until == next {
                    0
                } else {
                    1
                };
                self.resume(side);
            } else if flight == next {
                let Reverse(f) = self.flights.pop().unwrap();
                let n = &mut self.nodes[f.to];
                if n.stopped_until == 0 {
                    self.arrive(f);
                } else if n.held.iter().filter(|h| h.link == f.link).count() < STOP_RING {
                    n.held.push(f);
                } else if f.pkt.is_some() {
                    n.ring_drops += 1;
                }
            } else if hb == next {
                let side = if self.nodes[0].next_hb == next { 0 } else { 1 };
                self.nodes[side].next_hb += self.p.hbspan().0;
                self.nodes[side].hb_ticks += 1;
                let carrier = self.nodes[side].carrier;
                self.nodes[side].peer.heartbeat_due(carrier);
                self.send_heartbeats(side);
            } else {
                let side = if self.nodes[0].next_sweep == next {
                    0
                } else {
                    1
                };
                self.sweep(side);
            }
        }
        self.now = self.now.max(t);
    }

    /// Runs for `ms` more milliseconds.
    pub fn run_ms(&mut self, ms: u64) {
        self.run_until(self.now + ms * MS);
    }

    /// Node `side` stops for `ns`: it sends, receives and times nothing
    /// until then. Its timers due meanwhile fire when it resumes.
    pub fn stop(&mut self, side: usize, ns: u64) {
        let until = self.now + ns;
        let n = &mut self.nodes[side];
        n.stopped_until = until;
        n.next_hb = n.next_hb.max(until);
        n.next_sweep = n.next_sweep.max(until);
    }

    /// Node `side` resumes: what its NICs hold comes in now, NAPI_BUDGET
    /// frames of one link's, then of the next's, in turn; its overdue
    /// sweep runs first or after them, by a coin.
    fn resume(&mut self, side: usize) {
        self.nodes[side].stopped_until = 0;
        let sweep_first = self.rng.chance(0.5);
        if sweep_first {
            self.sweep(side);
        }
        let n = &mut self.nodes[side];
        let mut queues: Vec<Vec<Flight>> = (0..self.k).map(|_| Vec::new()).collect();
        for f in n.held.drain(..) {
            queues[f.link].push(f);
        }
        let mut queues: Vec<_> = queues.into_iter().map(Vec::into_iter).collect();
        loop {
            let mut any = false;
            for q in &mut queues {
                for f in q.by_ref().take(NAPI_BUDGET) {
                    any = true;
                    self.arrive(f);
                }
            }
            if !any {
                break;
            }
        }
        if !sweep_first {
            self.sweep(side);
        }
    }

    /// Node `from` sends one data packet of `len` bytes now, on the link its
    /// engine chooses. Returns the link, or `None` if it had none (or is
    /// stopped).
    pub fn send_data(&mut self, from: usize, len: u32) -> Option<usize> {
        if self.nodes[from].stopped_until != 0 {
            return None;
        }
        let now = Instant(self.now);
        let idle = self.p.level_after();
        let n = &mut self.nodes[from];
        let (link, seq) =
            n.tx.route(n.carrier, n.carrier, Some((1, len)), len, 1, now, idle)?;
        let id = self.sent[from];
        self.sent[from] += 1;
        self.transmit(from, link, Frame::Data(seq), Some(id));
        Some(link)
    }

    /// Sends a data packet from `from` every `gap` ns until `until`.
    pub fn stream(&mut self, from: usize, gap: u64, until: u64) {
        while self.now + gap <= until {
            self.run_until(self.now + gap);
            self.send_data(from, 1500);
        }
        self.run_until(until);
    }

    /// Steps by `step` ns for `span` ns, node 0 sending a 1500-byte packet
    /// at each step if `load`; the first time (ns from the start) `cond`
    /// held after a step.
    pub fn watch(
        &mut self,
        step: u64,
        span: u64,
        load: bool,
        mut cond: impl FnMut(&Pair) -> bool,
    ) -> Option<u64> {
        let (start, mut seen) = (self.now, None);
        while self.now < start + span {
            self.run_until(self.now + step);
            if load {
                self.send_data(0, 1500);
            }
            if seen.is_none() && cond(self) {
                seen = Some(self.now - start);
            }
        }
        seen
    }

    /// Link `link` loses every frame both ways (`on`), or none.
    pub fn blackhole(&mut self, link: usize, on: bool) {
        self.faults[0][link].blackhole = on;
        self.faults[1][link].blackhole = on;
    }

    /// Data packets node `from` has sent.
    pub fn sent(&self, from: usize) -> u64 {
        self.sent[from]
    }

    /// Node `side`'s port on `link` loses (`up` false) or regains carrier.
    pub fn set_carrier(&mut self, side: usize, link: usize, up: bool) {
        assert_eq!(
            self.nodes[side].stopped_until, 0,
            "a stopped node's carrier"
        );
        let n = &mut self.nodes[side];
        let bit = 1u8 << link;
        if (n.carrier & bit != 0) == up {
            return;
        }
        if up {
            n.carrier |= bit;
        } else {
            n.carrier &= !bit;
        }
        let carrier = n.carrier;
        n.peer.carrier_changed(carrier, link, up);
        self.send_heartbeats(side);
    }

    /// Node `side` restarts: a new epoch, and it knows its peer afresh
    /// (numbering from 0); what it had in flight still arrives.
    pub fn restart(&mut self, side: usize) {
        assert_eq!(self.nodes[side].stopped_until, 0, "a stopped node restarts");
        let now = Instant(self.now);
        let k = self.k;
        let n = &mut self.nodes[side];
        n.epoch += 0x1_0000_0001;
        *n.peer = EnginePeer::default();
        n.peer.start(k, None, n.carrier, now);
        n.tx.start(&[2, 0, 0, 0, 0, 1]);
        n.tx.publish(&n.peer.det);
        n.bufs = HeapBufs::default();
        n.next_sweep = self.now;
    }

    /// A frame arrives at node `to` on `link` now, as sent by someone else
    /// (forged, or recorded and replayed): `sealed` is the epoch its seal
    /// carries, if it has a tag the key verifies.
    pub fn inject(
        &mut self,
        to: usize,
        link: usize,
        frame: Frame,
        pkt: Option<u64>,
        sealed: Option<u64>,
    ) {
        assert_eq!(
            self.nodes[to].stopped_until, 0,
            "a frame into a stopped node"
        );
        let f = Flight {
            at: self.now,
            order: 0,
            to,
            link,
            frame,
            pkt,
            sealed,
        };
        self.arrive(f);
    }

    fn transmit(&mut self, from: usize, link: usize, frame: Frame, pkt: Option<u64>) {
        let to = 1 - from;
        let bit = 1u8 << link;
        let f = self.faults[from][link];
        let n = &self.nodes[from];
        let sealed = n.keyed.then_some(n.epoch);
        if self.tap && n.carrier & bit != 0 {
            self.tapped.push(Tapped {
                at: self.now,
                from,
                link,
                frame,
                pkt,
                sealed,
            });
        }
        if self.nodes[from].carrier & bit == 0 || f.blackhole || self.rng.chance(f.loss) {
            return;
        }
        let jitter = self.rng.below(f.jitter);
        let mut at = self.now + self.delay + f.delay + jitter;
        if f.jitter == 0 {
            at = at.max(self.last_at[from][link]);
        }
        self.last_at[from][link] = self.last_at[from][link].max(at);
        self.order += 1;
        self.flights.push(Reverse(Flight {
            at,
            order: self.order,
            to,
            link,
            frame,
            pkt,
            sealed,
        }));
    }

    fn arrive(&mut self, f: Flight) {
        let (now, p) = (Instant(self.now), self.p);
        let n = &mut self.nodes[f.to];
        let bit = 1u8 << f.link;
        // A port without carrier receives nothing; a keyed node takes only
        // sealed frames, an unkeyed one only unsealed.
        if n.carrier & bit == 0 || n.keyed != f.sealed.is_some() {
            return;
        }
        if let Some(e) = f.sealed {
            match n.peer.sealed_fresh(e, &f.frame, 1) {
                Fresh::Yes => {}
                Fresh::Replay => {
                    n.refused.replays += 1;
                    return;
                }
                Fresh::Copy => {
                    n.refused.copies += 1;
                    return;
                }
            }
        }
        n.last_seen = now;
        n.tx.fold(&mut n.peer);
        let a = Arrival {
            link: f.link,
            now,
            carrier: n.carrier,
            credit: true,
            sealed: f.sealed,
            frames: 1,
        };
        let up = &mut n.up;
        let got = n.peer.receive(
            &a,
            f.frame,
            f.pkt,
            &mut n.probing,
            &p,
            &mut n.bufs,
            &mut |x| up.push(x),
        );
        match got.left {
            Left::Up(x) => n.up.push(x),
            Left::Copy(_) => n.refused.copies += 1,
            Left::Duplicate(_) => n.refused.duplicates += 1,
            Left::Replay(_) => n.refused.replays += 1,
            Left::Nothing | Left::Consumed(_) => {}
        }
        if let Some(e) = got.restarted {
            n.restarts.push((self.now, e));
        }
        n.tx.publish(&n.peer.det);
        n.note(self.now, got.tr);
        if n.peer.sweep_need(now, n.carrier, &p) == SweepNeed::Now {
            if let Some(due) = n.peer.next_due(now, n.carrier, &p, n.lossy_every()) {
                n.next_sweep = n.next_sweep.min(due.max(now.plus(sweep_period(&p))).0);
            }
        }
        if got.answer {
            n.next_sweep = self.now;
        }
    }

    fn sweep(&mut self, side: usize) {
        let (now, p) = (Instant(self.now), self.p);
        let n = &mut self.nodes[side];
        n.sweeps += 1;
        n.tx.fold(&mut n.peer);
        let lossy_every = n.lossy_every();
        let up = &mut n.up;
        let visit = n
            .peer
            .sweep(now, n.carrier, &p, lossy_every, &mut n.bufs, &mut |x| {
                up.push(x)
            });
        n.lossy_peers = if visit.lossy { n.alike } else { 0 };
        n.tx.publish(&n.peer.det);
        n.note(self.now, visit.tr);
        n.next_sweep = sweep_at(visit.due, now, &p).0;
        self.send_heartbeats(side);
    }

    fn send_heartbeats(&mut self, side: usize) {
        let now = Instant(self.now);
        let k = self.k;
        let n = &mut self.nodes[side];
        let shift = n.probe_shift(now);
        let Some(orders) = n.peer.poll_heartbeats(n.carrier, k, shift) else {
            return;
        };
        for o in orders.iter().flatten() {
            let n = &mut self.nodes[side];
            let counts = n.peer.heartbeat_counts(&mut n.tx, o.link);
            let counter = n.keyed.then(|| {
                n.hb_counter += 1;
                n.hb_counter
            });
            let hb = HeartbeatIn {
                next: n.tx.tx_seq,
                epoch: n.epoch as u32,
                flags: o.flags,
                peer_link: o.link as u8,
                down: o.down,
                probe_shift: o.probe_shift,
                counts,
                counter,
            };
            n.hb_sent += 1;
            self.transmit(side, o.link, Frame::Heartbeat(hb), None);
        }
    }
}
