// SPDX-License-Identifier: GPL-2.0

//! The device-level rules (core/work.rs, core/peers.rs, core/node.rs):
//! which peers the sweep visits and when, the heartbeat queue, the
//! heartbeat phases, where a newcomer to a full table goes, and on which
//! links a new peer first hears from us.

use ri2n_core::heap::table;
use ri2n_core::pair::EnginePeer;
use ri2n_core::peers::{NewPeerBudget, Room, SweepNeed};
use ri2n_core::phases::PHASES;
use ri2n_core::time::{Duration, Instant};
use ri2n_core::work::{Visit, Visited, Work};
use std::collections::BTreeMap;

type Lists = Work<Vec<u8>, Vec<u32>>;

fn lists(n: usize) -> Lists {
    Work::new(vec![0; n], vec![0; n], vec![0; n], vec![0; n])
}

/// A sweep's caller whose peers answer as set in `needs` (absent: an
/// empty slot), and whose transmit side moved data for the slots in
/// `busy`.
#[derive(Default)]
struct Peers {
    needs: BTreeMap<usize, SweepNeed>,
    heartbeat: Vec<usize>,
    busy: Vec<usize>,
    visits: Vec<usize>,
    rejoined: Vec<usize>,
}

impl Visit for Peers {
    fn visit(&mut self, slot: usize) -> Option<Visited> {
        self.visits.push(slot);
        let need = *self.needs.get(&slot)?;
        Some(Visited {
            need,
            heartbeat: self.heartbeat.contains(&slot),
        })
    }
    fn may_leave(&mut self, slot: usize) -> bool {
        !self.busy.contains(&slot)
    }
    fn rejoined(&mut self, slot: usize) {
        self.rejoined.push(slot);
    }
}

const SLOW: Duration = Duration(250_000_000);

fn ms(n: u64) -> Instant {
    Instant(n * 1_000_000)
}

fn sorted(mut v: Vec<usize>) -> Vec<usize> {
    v.sort();
    v
}

#[test]
fn a_peer_listed_twice_is_visited_once_per_sweep() {
    let mut w = lists(8);
    let mut p = Peers::default();
    p.needs.insert(3, SweepNeed::Now);
    w.sweep_soon(3);
    w.sweep_soon(3);
    w.sweep(ms(1), SLOW, &mut p);
    assert_eq!(p.visits, vec![3]);
    assert_eq!(w.listed(), (1, 0));
}

#[test]
fn the_sweep_keeps_only_the_peers_that_need_it() {
    let mut w = lists(8);
    let mut p = Peers::default();
    p.needs.insert(1, SweepNeed::Now);
    p.needs.insert(2, SweepNeed::None);
    p.needs.insert(4, SweepNeed::Slow);
    for s in [1, 2, 4, 6] {
        w.sweep_soon(s);
    }
    // 6 is an empty slot: its peer was forgotten since it was listed.
    let slow_due = w.sweep(ms(1), SLOW, &mut p);
    assert_eq!(sorted(p.visits.clone()), vec![1, 2, 4, 6]);
    assert_eq!(w.listed(), (1, 1), "1 stays, 4 goes to the slow list");
    assert_eq!(slow_due, Some(Instant(0).plus(SLOW)), "never visited yet");
    p.visits.clear();
    w.sweep(ms(2), SLOW, &mut p);
    assert_eq!(p.visits, vec![1], "the slow list waits for its time");
}

#[test]
fn data_moved_during_a_visit_keeps_the_peer_listed() {
    let mut w = lists(8);
    let mut p = Peers::default();
    p.needs.insert(5, SweepNeed::None);
    p.busy.push(5);
    w.sweep_soon(5);
    w.sweep(ms(1), SLOW, &mut p);
    assert_eq!(w.listed(), (1, 0));
    p.busy.clear();
    w.sweep(ms(2), SLOW, &mut p);
    assert_eq!(w.listed(), (0, 0));
    assert_eq!(p.visits, vec![5, 5]);
}

#[test]
fn the_slow_list_is_visited_every_slow_period_and_can_rejoin() {
    let mut w = lists(8);
    let mut p = Peers::default();
    p.needs.insert(2, SweepNeed::Slow);
    w.sweep_slow(2);
    // The first sweep finds the slow list due (never visited).
    w.sweep(ms(1000), SLOW, &mut p);
    assert_eq!(p.visits, vec![2]);
    w.sweep(ms(1100), SLOW, &mut p);
    assert_eq!(p.visits, vec![2], "not before HBSPAN / 8");
    w.sweep(ms(1250), SLOW, &mut p);
    assert_eq!(p.visits, vec![2, 2]);
    // Its endpoint needs a deadline kept again: every sweep from now.
    p.needs.insert(2, SweepNeed::Now);
    let due = w.sweep(ms(1500), SLOW, &mut p);
    assert_eq!(p.rejoined, vec![2]);
    assert_eq!(w.listed(), (1, 0));
    assert_eq!(due, None, "nothing left on the slow list");
    w.sweep(ms(1501), SLOW, &mut p);
    assert_eq!(p.visits, vec![2, 2, 2, 2]);
}

#[test]
fn heartbeats_go_first_in_first_out_once_per_peer() {
    let mut w = lists(8);
    for s in [3, 1, 3, 7, 1] {
        w.heartbeat(s);
    }
    let order: Vec<usize> = core::iter::from_fn(|| w.next_heartbeat()).collect();
    assert_eq!(order, vec![3, 1, 7]);
    assert!(!w.heartbeats_waiting());
    // Taken off the queue, a peer may be queued again.
    w.heartbeat(3);
    assert_eq!(w.next_heartbeat(), Some(3));
}

#[test]
fn a_visit_queues_the_heartbeats_it_finds() {
    let mut w = lists(8);
    let mut p = Peers::default();
    p.needs.insert(4, SweepNeed::None);
    p.heartbeat.push(4);
    w.sweep_soon(4);
    w.sweep(ms(1), SLOW, &mut p);
    assert_eq!(w.next_heartbeat(), Some(4));
}

#[test]
fn a_tick_serves_the_peers_of_its_phases_only() {
    let n = 3 * PHASES;
    let mut w = lists(n);
    for s in [1, 1 + PHASES, 2] {
        w.admitted(s);
    }
    let mut asked = Vec::new();
    // The first tick serves phase 0, which has no peer, and sleeps to 1.
    assert_eq!(
        w.tick(n, |s| {
            asked.push(s);
            true
        }),
        1
    );
    assert!(asked.is_empty());
    assert_eq!(
        w.tick(n, |s| {
            asked.push(s);
            s != 1 + 2 * PHASES
        }),
        1
    );
    assert_eq!(asked, vec![1, 1 + PHASES, 1 + 2 * PHASES]);
    let queued: Vec<usize> = core::iter::from_fn(|| w.next_heartbeat()).collect();
    assert_eq!(queued, vec![1, 1 + PHASES], "only where `due` queued");
    w.forgotten(2);
    asked.clear();
    // Phase 2 has no peer left: the timer sleeps to phase 1 again.
    assert_eq!(
        w.tick(n, |s| {
            asked.push(s);
            true
        }),
        PHASES - 1
    );
    assert!(asked.is_empty());
}

#[test]
fn clear_empties_every_list() {
    let mut w = lists(8);
    w.sweep_soon(1);
    w.sweep_slow(2);
    w.heartbeat(3);
    w.clear();
    assert_eq!(w.listed(), (0, 0));
    assert!(!w.heartbeats_waiting());
    // The marks went too: each can be listed again.
    w.heartbeat(3);
    assert_eq!(w.next_heartbeat(), Some(3));
}

#[test]
fn a_newcomer_takes_a_free_slot_then_a_new_peer_then_a_silent_one() {
    let idle = Duration::from_ms(6000);
    let mut t = table::<()>(2, 7);
    let a = t.insert(&[2, 0, 0, 0, 0, 1], ms(0), ()).unwrap();
    assert_eq!(t.room(ms(1), idle), Room::Free);
    let b = t.insert(&[2, 0, 0, 0, 0, 2], ms(1), ()).unwrap();
    // Neither heard in a heartbeat: the oldest new peer goes.
    assert_eq!(t.room(ms(2), idle), Room::Evict(a));
    t.touch(a, ms(2), true);
    t.touch(b, ms(3), true);
    // Both known and live: refused.
    assert_eq!(t.room(ms(4), idle), Room::Full);
    // Silent for `idle`: the one silent longest goes.
    assert_eq!(t.room(ms(2).plus(idle), idle), Room::Evict(a));
}

#[test]
fn a_new_peer_hears_on_the_link_it_was_heard_on_only() {
    let mut p = EnginePeer::default();
    p.start(2, Some(1), 0b11, ms(0));
    assert_eq!(p.hb_pending, 0b10);
    let mut p = EnginePeer::default();
    p.start(2, Some(1), 0b01, ms(0));
    assert_eq!(p.hb_pending, 0, "not on a link without carrier");
    let mut p = EnginePeer::default();
    p.start(2, None, 0b11, ms(0));
    assert_eq!(p.hb_pending, 0b11, "a peer we send to hears on every link");
}

#[test]
fn new_peers_from_frames_come_no_faster_than_the_table_turns_over() {
    let hbspan = Duration::from_ms(2000);
    let mut b = NewPeerBudget::default();
    // A whole table's worth at once: a cluster heard at a node's start.
    let t0 = ms(10_000);
    let burst = (0..100).filter(|_| b.take(t0, 16, hbspan)).count();
    assert_eq!(burst, 16);
    // Then one per HBSPAN / 16 (125 ms).
    assert!(!b.take(ms(10_100), 16, hbspan));
    assert!(b.take(ms(10_125), 16, hbspan));
    assert!(!b.take(ms(10_126), 16, hbspan));
    // A flood over 4 s: at most the table's size per HBSPAN.
    let flood = (0..2000)
        .filter(|&i| b.take(ms(10_126 + i * 2), 16, hbspan))
        .count();
    assert!((31..=33).contains(&flood), "{flood}");
    // Idle for long, the credit is one table's worth, not more.
    let later = (0..100).filter(|_| b.take(ms(100_000), 16, hbspan)).count();
    assert_eq!(later, 16);
}
