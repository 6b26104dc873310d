// SPDX-License-Identifier: GPL-2.0

//! Transitions for user space (the `events` multicast group): queued where
//! they happen, under the device's lock, and sent later from process
//! context, at most [`EVENTS_PER_SEC`] a second in bursts of at most
//! [`EVENTS_BURST`] for each of two kinds: the links' (endpoints and
//! carriers) and peers coming and going. What is over is dropped and
//! counted, so that a failure seen by thousands of peers at once costs a
//! bounded amount of work and memory, a listener learns how much it
//! missed, and frames from made-up sources cannot crowd out the links'
//! events.

use super::peers::Mac;
use super::time::Instant;
use super::uapi::{EndpointState, Reason, EVENTS_BURST, EVENTS_PER_SEC};

/// One transition.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Event {
    /// What happened.
    pub reason: Reason,
    /// When (the caller's clock).
    pub at: Instant,
    /// The peer, for all but carrier changes.
    pub peer: Option<Mac>,
    /// The link, for all but peers coming and going.
    pub link: Option<u8>,
    /// The endpoint's state before and after, for endpoint transitions.
    pub states: Option<(EndpointState, EndpointState)>,
}

impl Event {
    /// `reason`, about peer `mac` as a whole, at `at`.
    pub fn of_peer(reason: Reason, mac: &Mac, at: Instant) -> Event {
        Event {
            reason,
            at,
            peer: Some(*mac),
            link: None,
            states: None,
        }
    }
}

/// The time one event costs of the budget: a second's share.
const COST_NS: u64 = 1_000_000_000 / EVENTS_PER_SEC as u64;

/// Events waiting to be sent, with the rate budget they are admitted by.
pub struct EventQueue {
    ring: [Option<Event>; EVENTS_BURST as usize],
    /// Index of the oldest.
    head: usize,
    len: usize,
    /// Budget left, in ns of [`COST_NS`] each, at most a burst's.
    credit_ns: u64,
    /// When `credit_ns` was last brought up to date.
    at: Instant,
    /// Events dropped so far.
    dropped: u64,
}

impl Default for EventQueue {
    fn default() -> Self {
        EventQueue {
            ring: [None; EVENTS_BURST as usize],
            head: 0,
            len: 0,
            credit_ns: COST_NS * u64::from(EVENTS_BURST),
            at: Instant(0),
            dropped: 0,
        }
    }
}

impl EventQueue {
    /// Queues `e`, happened at `now`; returns false if it was dropped: the
    /// budget is spent, or the queue is full (the sender is behind).
    pub fn push(&mut self, e: Event, now: Instant) -> bool {
        let full = COST_NS * u64::from(EVENTS_BURST);
        let earned = now.0.saturating_sub(self.at.0);
        self.credit_ns = self.credit_ns.saturating_add(earned).min(full);
        self.at = Instant(self.at.0.max(now.0));
        if self.credit_ns < COST_NS || self.len == self.ring.len() {
            self.dropped += 1;
            return false;
        }
        self.credit_ns -= COST_NS;
        let at = (self.head + self.len) % self.ring.len();
        self.ring[at] = Some(e);
        self.len += 1;
        true
    }

    /// The oldest event queued.
    pub fn peek(&self) -> Option<&Event> {
        (self.len > 0)
            .then(|| self.ring[self.head].as_ref())
            .flatten()
    }

    /// Takes the oldest event queued.
    pub fn pop(&mut self) -> Option<Event> {
        if self.len == 0 {
            return None;
        }
        let e = self.ring[self.head].take();
        self.head = (self.head + 1) % self.ring.len();
        self.len -= 1;
        e
    }

    /// Events queued.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether none is queued.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Events dropped so far.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }
}

/// The endpoint transitions of `t` on link `l`, each with the state before
/// and after, given the endpoint's flags after (`failed`, `peer_failed`,
/// `lossy`) and the link's carrier; in the order they are reported.
pub fn endpoint_events(
    t: &super::detector::Transitions,
    l: usize,
    carrier: bool,
    after: (bool, bool, bool),
    mut f: impl FnMut(Reason, EndpointState, EndpointState),
) {
    let bit = 1u8 << l;
    let (failed, peer_failed, lossy) = after;
    let new = EndpointState::of(carrier, failed, peer_failed, lossy);
    // Undone one change at a time, the last reported first, so that each
    // event's `old` is the state before that change alone.
    let changes = [
        (t.failed, Reason::Failed),
        (t.recovered, Reason::Recovered),
        (t.peer_failed, Reason::PeerFailed),
        (t.peer_recovered, Reason::PeerRecovered),
        (t.lossy, Reason::Lossy),
        (t.lossless, Reason::Lossless),
    ];
    let mut states = [(Reason::Failed, new, new); 6];
    let mut n = 0;
    let mut flags = (failed, peer_failed, lossy);
    let mut cur = new;
    for &(mask, reason) in changes.iter().rev() {
        if mask & bit == 0 {
            continue;
        }
        match reason {
            Reason::Failed | Reason::Recovered => flags.0 = !flags.0,
            Reason::PeerFailed | Reason::PeerRecovered => flags.1 = !flags.1,
            _ => flags.2 = !flags.2,
        }
        let before = EndpointState::of(carrier, flags.0, flags.1, flags.2);
        states[n] = (reason, before, cur);
        cur = before;
        n += 1;
    }
    for &(reason, old, new) in states[..n].iter().rev() {
        f(reason, old, new);
    }
}

impl Reason {
    /// Whether it is about a peer coming or going, which frames from new
    /// sources make: such events have a budget of their own, so that a
    /// flood of them never crowds out the links' own.
    pub fn is_peer_churn(self) -> bool {
        matches!(
            self,
            Reason::PeerNew | Reason::PeerForgotten | Reason::PeerRestarted
        )
    }
}

/// A device's events: endpoint and carrier changes, and peers coming and
/// going, each with its own [`EventQueue`], taken oldest first.
#[derive(Default)]
pub struct Events {
    links: EventQueue,
    peers: EventQueue,
}

impl Events {
    /// Queues `e` in its kind's queue; false if it was dropped.
    pub fn push(&mut self, e: Event, now: Instant) -> bool {
        if e.reason.is_peer_churn() {
            self.peers.push(e, now)
        } else {
            self.links.push(e, now)
        }
    }

    /// Takes the oldest event of either kind.
    pub fn pop(&mut self) -> Option<Event> {
        let at = |q: &EventQueue| q.peek().map(|e| e.at);
        match (at(&self.links), at(&self.peers)) {
            (Some(a), Some(b)) if b < a => self.peers.pop(),
            (Some(_), _) => self.links.pop(),
            (None, _) => self.peers.pop(),
        }
    }

    /// Whether none is queued.
    pub fn is_empty(&self) -> bool {
        self.links.is_empty() && self.peers.is_empty()
    }

    /// Events dropped so far, of both kinds.
    pub fn dropped(&self) -> u64 {
        self.links.dropped() + self.peers.dropped()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detector::Transitions;

    fn ev(n: u8) -> Event {
        Event {
            reason: Reason::PeerNew,
            at: Instant(u64::from(n)),
            peer: Some([n; 6]),
            link: None,
            states: None,
        }
    }

    #[test]
    fn a_burst_passes_and_what_is_over_is_counted() {
        let mut q = EventQueue::default();
        let t = Instant(1_000_000_000);
        let sent = (0..100).filter(|&i| q.push(ev(i as u8), t)).count();
        assert_eq!(sent, EVENTS_BURST as usize);
        assert_eq!(q.dropped(), 100 - u64::from(EVENTS_BURST));
        assert_eq!(q.pop().unwrap().at, Instant(0), "oldest first");
    }

    #[test]
    fn the_budget_refills_at_the_rate() {
        let mut q = EventQueue::default();
        let mut t = Instant(0);
        for i in 0..EVENTS_BURST {
            assert!(q.push(ev(i as u8), t));
            q.pop();
        }
        assert!(!q.push(ev(0), t), "budget spent");
        // A second later: a second's worth again, the burst at most.
        t = Instant(1_000_000_000);
        let sent = (0..2000)
            .filter(|&i| {
                let ok = q.push(ev(i as u8), t);
                q.pop();
                ok
            })
            .count();
        assert_eq!(sent, EVENTS_BURST as usize);
        // Over ten seconds at 2,000 a second, 1,000 a second pass.
        let mut q = EventQueue::default();
        let mut sent = 0;
        for i in 0..20_000u64 {
            let t = Instant(i * 500_000);
            if q.push(ev(0), t) {
                sent += 1;
            }
            q.pop();
        }
        let want = 10 * EVENTS_PER_SEC as usize + EVENTS_BURST as usize;
        assert!(sent <= want && sent >= want - 2, "{sent}");
    }

    #[test]
    fn a_flood_of_peers_leaves_the_links_their_events() {
        let mut q = Events::default();
        let t = Instant(1_000_000_000);
        for i in 0..1000u32 {
            q.push(ev(i as u8), t);
        }
        let link = Event {
            reason: Reason::Failed,
            at: Instant(5),
            peer: Some([1; 6]),
            link: Some(1),
            states: None,
        };
        assert!(q.push(link, t), "the links' budget is their own");
        assert_eq!(q.dropped(), 1000 - u64::from(EVENTS_BURST));
        // Oldest first across both kinds.
        assert_eq!(q.pop().unwrap().at, Instant(0));
        let mut seen = 1;
        while let Some(e) = q.pop() {
            seen += 1;
            if e.reason == Reason::Failed {
                assert_eq!(seen, 6, "after the peer events at 0..=4");
            }
        }
        assert!(q.is_empty());
    }

    #[test]
    fn a_full_queue_drops_even_with_budget() {
        let mut q = EventQueue::default();
        for i in 0..EVENTS_BURST {
            assert!(q.push(ev(0), Instant(u64::from(i) * 10_000_000)));
        }
        assert!(!q.push(ev(0), Instant(10_000_000_000)));
        assert_eq!(q.len(), EVENTS_BURST as usize);
        assert_eq!(q.dropped(), 1);
    }

    #[test]
    fn each_change_says_the_state_before_and_after_it() {
        use EndpointState::*;
        let mut got = alloc::vec::Vec::new();
        let t = Transitions {
            failed: 0b10,
            ..Default::default()
        };
        endpoint_events(&t, 1, true, (true, false, false), |r, o, n| {
            got.push((r, o, n))
        });
        assert_eq!(got, [(Reason::Failed, Up, Failed)]);
        // Recovered and the peer still failing, in one report.
        got.clear();
        let t = Transitions {
            recovered: 1,
            peer_failed: 1,
            ..Default::default()
        };
        endpoint_events(&t, 0, true, (false, true, false), |r, o, n| {
            got.push((r, o, n))
        });
        assert_eq!(
            got,
            [
                (Reason::Recovered, Failed, Up),
                (Reason::PeerFailed, Up, PeerFailed)
            ]
        );
        // Other links' bits say nothing of this one.
        got.clear();
        endpoint_events(&t, 1, true, (false, false, false), |r, o, n| {
            got.push((r, o, n))
        });
        assert!(got.is_empty());
    }
}
