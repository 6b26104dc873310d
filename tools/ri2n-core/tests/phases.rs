// SPDX-License-Identifier: GPL-2.0

//! The heartbeat timer's phases (core/phases.rs): every peer is served at
//! least once per HBSPAN, and the timer wakes only for phases with peers.

use proptest::prelude::*;
use ri2n_core::phases::{Phases, Tick, PHASES};

#[test]
fn without_peers_the_timer_wakes_once_per_hbspan() {
    let mut p = Phases::default();
    assert_eq!(
        p.tick(),
        Tick {
            first: 0,
            count: 1,
            wait: PHASES
        }
    );
    assert_eq!(
        p.tick(),
        Tick {
            first: 1,
            count: PHASES,
            wait: PHASES
        }
    );
    assert_eq!(
        p.tick(),
        Tick {
            first: 1,
            count: PHASES,
            wait: PHASES
        }
    );
}

#[test]
fn one_peer_is_served_once_per_hbspan_in_its_phase() {
    let mut p = Phases::default();
    p.add(5 + 3 * PHASES);
    // The first tick (phase 0) finds it 5 phases on.
    assert_eq!(
        p.tick(),
        Tick {
            first: 0,
            count: 1,
            wait: 5
        }
    );
    // Then it wakes for phase 5 and serves 1..=5, and sleeps a whole span.
    assert_eq!(
        p.tick(),
        Tick {
            first: 1,
            count: 5,
            wait: PHASES
        }
    );
    assert_eq!(
        p.tick(),
        Tick {
            first: 6,
            count: PHASES,
            wait: PHASES
        }
    );
    p.remove(5 + 3 * PHASES);
    assert!(!p.has(5));
}

#[test]
fn a_full_table_ticks_every_phase() {
    let mut p = Phases::default();
    for s in 0..4 * PHASES {
        p.add(s);
    }
    for i in 0..3 * PHASES {
        assert_eq!(
            p.tick(),
            Tick {
                first: i % PHASES,
                count: 1,
                wait: 1
            }
        );
    }
    p.clear();
    assert!((0..PHASES).all(|ph| !p.has(ph)));
}

proptest! {
    /// Peers come and go (slots in any phase) while the timer runs. A peer
    /// present is served at most PHASES phases (HBSPAN) after its last
    /// service or its admission (when it also got a heartbeat at once);
    /// and a tick that serves no peer is the one wake-up of a span, or was
    /// armed for a peer that left since.
    #[test]
    fn every_peer_is_served_within_hbspan(mut events in proptest::collection::vec((0u64..1200, 0usize..8 * PHASES, any::<bool>()), 1..60)) {
        events.sort();
        let mut p = Phases::default();
        let mut last = std::collections::BTreeMap::<usize, u64>::new();
        let mut events = events.into_iter().peekable();
        let mut now = 0u64;
        let mut departed = false;
        while now < 1400 {
            // Admissions and departures before this tick.
            while let Some(&(at, slot, add)) = events.peek() {
                if at > now {
                    break;
                }
                events.next();
                if add && !last.contains_key(&slot) {
                    p.add(slot);
                    last.insert(slot, at);
                } else if !add && last.remove(&slot).is_some() {
                    p.remove(slot);
                    departed = true;
                }
            }
            let t = p.tick();
            prop_assert!(t.count >= 1 && t.count <= PHASES && t.wait >= 1 && t.wait <= PHASES);
            let served: Vec<usize> = (t.first..t.first + t.count).map(|x| x % PHASES).collect();
            let mut any = false;
            for (&slot, l) in last.iter_mut() {
                prop_assert!(now - *l <= PHASES as u64, "slot {} unserved for {} phases at {}", slot, now - *l, now);
                if served.contains(&Phases::of(slot)) {
                    any = true;
                    *l = now;
                }
            }
            prop_assert!(any || departed || t.count == PHASES || now == 0, "woke for nothing at {}: {:?}", now, t);
            departed = false;
            now += t.wait as u64;
        }
        // Those still there at the end were served within the last span.
        for (&slot, &l) in &last {
            prop_assert!(now - l <= PHASES as u64, "slot {} unserved for {} phases at the end", slot, now - l);
        }
    }
}
