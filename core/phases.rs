// SPDX-License-Identifier: GPL-2.0

//! The heartbeat timer's phases (driver paper §5.7: every endpoint hears
//! from us every HBSPAN). HBSPAN is cut into [`PHASES`] phases; a peer's
//! heartbeats are due in the phase of its table slot (slot mod
//! [`PHASES`]), so a large table's heartbeats are spread over the span.
//!
//! The timer sleeps over phases that have no peer: a node with a few peers
//! wakes for them, not [`PHASES`] times per HBSPAN (32 times a second at
//! the default 2 s, idle or not). A tick serves every phase it slept over,
//! so a peer admitted meanwhile in one of them is served at that tick,
//! within HBSPAN of the heartbeat it got when it was admitted; and it
//! never sleeps longer than HBSPAN (as a timer of that length keeps it: a
//! timer wheel may fire a long one a few percent late). A shorter HBSPAN
//! set at run time wakes it within a phase of the new one.

/// Phases per HBSPAN: at the default 2 s, one every 31 ms.
pub const PHASES: usize = 64;

/// What one tick of the heartbeat timer does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tick {
    /// The first phase to serve.
    pub first: usize,
    /// How many phases to serve, from `first` on, wrapping.
    pub count: usize,
    /// Phases until the next tick, 1 to [`PHASES`].
    pub wait: usize,
}

/// The phases of one device's peer table.
#[derive(Debug, Clone)]
pub struct Phases {
    /// The first phase the next tick serves.
    next: usize,
    /// Phases the next tick serves: those the timer sleeps over, and the
    /// one it wakes for.
    span: usize,
    /// Peers per phase.
    peers: [u32; PHASES],
}

impl Default for Phases {
    fn default() -> Self {
        Phases {
            next: 0,
            span: 1,
            peers: [0; PHASES],
        }
    }
}

impl Phases {
    /// The phase of table slot `slot`.
    pub fn of(slot: usize) -> usize {
        slot % PHASES
    }

    /// A peer took `slot`.
    pub fn add(&mut self, slot: usize) {
        self.peers[Self::of(slot)] += 1;
    }

    /// The peer in `slot` is gone.
    pub fn remove(&mut self, slot: usize) {
        let n = &mut self.peers[Self::of(slot)];
        // A count short of its peers would leave one without heartbeats.
        debug_assert!(*n > 0, "phase {} has no peer to remove", Self::of(slot));
        *n = n.saturating_sub(1);
    }

    /// Every peer is gone (a new table).
    pub fn clear(&mut self) {
        self.peers = [0; PHASES];
    }

    /// Whether `phase` has a peer.
    pub fn has(&self, phase: usize) -> bool {
        self.peers[phase % PHASES] != 0
    }

    /// The timer fired: the phases to serve now, and how long to sleep,
    /// to the next phase with a peer after them (a whole HBSPAN if there
    /// is none, or only the ones served).
    pub fn tick(&mut self) -> Tick {
        let (first, count) = (self.next, self.span);
        let after = (first + count) % PHASES;
        let k = (0..PHASES)
            .find(|&k| self.has(after + k))
            .unwrap_or(PHASES - 1);
        self.next = after;
        self.span = k + 1;
        Tick {
            first,
            count,
            wait: k + 1,
        }
    }
}
