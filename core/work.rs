// SPDX-License-Identifier: GPL-2.0

//! Which peers a device's timers visit: the sweep's two lists and the
//! heartbeat queue, each holding a table slot at most once, and the
//! heartbeat phases. The timers' work follows the peers that need it, not
//! the table's size: at 4,096 peers a sweep visits only those that hold
//! packets, carry data or have an endpoint out of use.
//!
//! - The every-sweep list: peers that hold packets, carry data, or need a
//!   deadline kept (`SweepNeed::Now`). Transmit and receive put a peer on
//!   it; the sweep takes it off once a visit finds nothing to do and no
//!   data moved during the visit.
//! - The slow list: peers with an endpoint out of use and nothing else to
//!   do (`SweepNeed::Slow`), visited every HBSPAN / 8.
//! - The heartbeat queue: peers with heartbeats to send, first in first
//!   out, so that no peer waits behind a later one.
//!
//! A slot stays listed when its peer is forgotten: the visit of an empty
//! slot drops it. Storage is the caller's (each list has room for every
//! slot), so listing never allocates.

use super::peers::{SlotQueue, SweepNeed};
use super::phases::{Phases, PHASES};
use super::time::{Duration, Instant};
use core::ops::DerefMut;

const ON_SWEEP: u8 = 1;
const ON_HB_QUEUE: u8 = 2;
const ON_SLOW: u8 = 4;

/// Most peers one sweep ages out: aging a large table at once would hold
/// the device's lock for long; more left means another sweep at once.
pub const AGE_PER_SWEEP: usize = 64;

/// An unordered set of slots over storage with room for every slot.
struct Bag<S> {
    slots: S,
    len: usize,
}

impl<S: DerefMut<Target = [u32]>> Bag<S> {
    fn push(&mut self, slot: usize) -> bool {
        let Some(place) = self.slots.get_mut(self.len) else {
            return false;
        };
        *place = slot as u32;
        self.len += 1;
        true
    }

    fn get(&self, i: usize) -> usize {
        self.slots[i] as usize
    }

    fn swap_remove(&mut self, i: usize) {
        self.len -= 1;
        self.slots[i] = self.slots[self.len];
    }
}

/// What the sweep's visit of one peer found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Visited {
    /// How often the peer needs the sweep from now on.
    pub need: SweepNeed,
    /// It has heartbeats to send.
    pub heartbeat: bool,
}

/// The caller's side of a sweep ([`Work::sweep`]): its visits and the
/// transmit side's marks, under whatever locks the caller's peers take.
pub trait Visit {
    /// Probes and releases for the peer in `slot`; `None` if the slot is
    /// empty (the peer was forgotten since it was listed).
    fn visit(&mut self, slot: usize) -> Option<Visited>;
    /// The peer in `slot` needs the sweep no longer: true if it may leave
    /// the every-sweep list, false if data moved during its visit (the
    /// next sweep looks again). When it leaves, transmit and receive put
    /// it back ([`Work::sweep_soon`]) at its next packet.
    fn may_leave(&mut self, slot: usize) -> bool;
    /// The peer in `slot` moves from the slow list to the every-sweep one.
    fn rejoined(&mut self, slot: usize);
}

/// See the module documentation.
pub struct Work<M, S> {
    /// Per slot: which of the lists hold it.
    marks: M,
    every: Bag<S>,
    slow: Bag<S>,
    hb: SlotQueue<S>,
    /// When the slow list was last visited.
    slow_swept: Instant,
    phases: Phases,
}

impl<M: DerefMut<Target = [u8]>, S: DerefMut<Target = [u32]>> Work<M, S> {
    /// Lists for a table of `marks.len()` slots; `every`, `slow` and `hb`
    /// must each have room for as many.
    pub fn new(marks: M, every: S, slow: S, hb: S) -> Self {
        debug_assert!(every.len() >= marks.len() && slow.len() >= marks.len());
        Work {
            marks,
            every: Bag {
                slots: every,
                len: 0,
            },
            slow: Bag {
                slots: slow,
                len: 0,
            },
            hb: SlotQueue::new(hb),
            slow_swept: Instant(0),
            phases: Phases::default(),
        }
    }

    fn mark(&mut self, slot: usize, mark: u8) -> bool {
        let Some(m) = self.marks.get_mut(slot) else {
            return false;
        };
        let new = *m & mark == 0;
        *m |= mark;
        new
    }

    /// A peer took `slot`: it is served by the heartbeat phase of its slot.
    pub fn admitted(&mut self, slot: usize) {
        self.phases.add(slot);
    }

    /// The peer in `slot` is gone.
    pub fn forgotten(&mut self, slot: usize) {
        self.phases.remove(slot);
    }

    /// The peer in `slot` is to be visited by every sweep.
    pub fn sweep_soon(&mut self, slot: usize) {
        if self.mark(slot, ON_SWEEP) && !self.every.push(slot) {
            self.marks[slot] &= !ON_SWEEP;
        }
    }

    /// The peer in `slot` is to be visited every HBSPAN / 8.
    pub fn sweep_slow(&mut self, slot: usize) {
        if self.mark(slot, ON_SLOW) && !self.slow.push(slot) {
            self.marks[slot] &= !ON_SLOW;
        }
    }

    /// The peer in `slot` has heartbeats to send.
    pub fn heartbeat(&mut self, slot: usize) {
        if self.mark(slot, ON_HB_QUEUE) && !self.hb.push(slot as u32) {
            self.marks[slot] &= !ON_HB_QUEUE;
        }
    }

    /// The peer queued first for heartbeats, taken off the queue.
    pub fn next_heartbeat(&mut self) -> Option<usize> {
        let slot = self.hb.pop()? as usize;
        self.marks[slot] &= !ON_HB_QUEUE;
        Some(slot)
    }

    /// Whether heartbeats wait.
    pub fn heartbeats_waiting(&self) -> bool {
        !self.hb.is_empty()
    }

    /// Peers on the every-sweep list and on the slow one.
    pub fn listed(&self) -> (usize, usize) {
        (self.every.len, self.slow.len)
    }

    /// Every peer is gone, and every list empty (a new table).
    pub fn clear(&mut self) {
        self.marks.fill(0);
        self.every.len = 0;
        self.slow.len = 0;
        while self.hb.pop().is_some() {}
        self.phases.clear();
    }

    /// A tick of the heartbeat timer: `due` is called for every slot of
    /// the phases it serves (slot modulo [`PHASES`]) below `capacity`, and
    /// returns whether it queued heartbeats for the slot's peer, so that
    /// each peer hears from us every HBSPAN and the heartbeats to many
    /// peers are spread over it. Returns the phases until the next tick.
    pub fn tick(&mut self, capacity: usize, mut due: impl FnMut(usize) -> bool) -> usize {
        let tick = self.phases.tick();
        for phase in (tick.first..tick.first + tick.count).map(|p| p % PHASES) {
            if !self.phases.has(phase) {
                continue;
            }
            for slot in (phase..capacity).step_by(PHASES) {
                if due(slot) {
                    self.heartbeat(slot);
                }
            }
        }
        tick.wait
    }

    /// One sweep at `now`: `v` visits every peer on the every-sweep list,
    /// and, once per `slow_every`, those on the slow list; each peer then
    /// goes to the list its visit asks for, and to the heartbeat queue.
    /// Returns when the slow list is next due, if it holds any peer.
    pub fn sweep(
        &mut self,
        now: Instant,
        slow_every: Duration,
        v: &mut impl Visit,
    ) -> Option<Instant> {
        let mut i = 0;
        while i < self.every.len {
            let slot = self.every.get(i);
            let seen = v.visit(slot);
            self.queue_heartbeat(slot, seen);
            let need = seen.map(|s| s.need);
            if need == Some(SweepNeed::Now) || !v.may_leave(slot) {
                i += 1;
                continue;
            }
            if need == Some(SweepNeed::Slow) {
                self.sweep_slow(slot);
            }
            self.marks[slot] &= !ON_SWEEP;
            self.every.swap_remove(i);
        }
        let slow_due = now.since(self.slow_swept) >= slow_every;
        if slow_due {
            self.slow_swept = now;
        }
        let mut i = 0;
        while slow_due && i < self.slow.len {
            let slot = self.slow.get(i);
            let seen = v.visit(slot);
            self.queue_heartbeat(slot, seen);
            let need = seen.map(|s| s.need);
            if need == Some(SweepNeed::Slow) {
                i += 1;
                continue;
            }
            if need == Some(SweepNeed::Now) {
                v.rejoined(slot);
                self.sweep_soon(slot);
            }
            self.marks[slot] &= !ON_SLOW;
            self.slow.swap_remove(i);
        }
        (self.slow.len != 0).then(|| self.slow_swept.plus(slow_every))
    }

    fn queue_heartbeat(&mut self, slot: usize, seen: Option<Visited>) {
        if seen.is_some_and(|s| s.heartbeat) {
            self.heartbeat(slot);
        }
    }
}
