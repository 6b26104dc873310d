//! Packets that carry runs of numbers: frames a slave's GRO merged because
//! they followed one another on one link. The window hands a
//! run up at once, the loss rule takes its last number as passed, and
//! whatever else arrives (single frames, overlapping runs) still goes up
//! exactly once.

use proptest::prelude::*;
use ri2n_core::heap::{Buf, HeapBufs};
use ri2n_core::params::{Param, Params};
use ri2n_core::rx::PeerRx;
use ri2n_core::seq::Seq;
use ri2n_core::time::Instant;
use ri2n_core::window::{Span, MAX_SPAN, WINDOW_SLOTS};
use std::collections::HashSet;

/// A packet: numbers `first .. first + n`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Run {
    first: u32,
    n: u32,
}

impl Span for Run {
    fn span(&self) -> u32 {
        self.n
    }
}

const MS: u64 = 1_000_000;

struct Rx {
    rx: PeerRx<Run, Buf<Run>>,
    bufs: HeapBufs<Run>,
    p: Params,
    active: u8,
}

impl Rx {
    fn new(links: usize) -> Rx {
        Rx {
            rx: PeerRx::default(),
            bufs: HeapBufs::default(),
            p: Params::default(),
            active: ((1u16 << links) - 1) as u8,
        }
    }

    /// Run `first..first+n` arrives on `link` at `t_ms`; returns the
    /// numbers that went up, in order.
    fn arrive(&mut self, link: usize, first: u32, n: u32, t_ms: u64) -> Vec<u32> {
        let mut up = Vec::new();
        let r = Run { first, n };
        let dup = self.rx.data(
            link,
            Seq(first),
            r,
            Instant(t_ms * MS),
            self.active,
            &self.p,
            &mut self.bufs,
            &mut |x| up.push(x),
        );
        assert!(dup.is_none(), "{r:?} dropped as a duplicate");
        numbers(&up)
    }

    fn sweep(&mut self, t_ms: u64) -> Vec<u32> {
        let mut up = Vec::new();
        self.rx.sweep(
            Instant(t_ms * MS),
            self.active,
            &self.p,
            &mut self.bufs,
            &mut |x| up.push(x),
        );
        numbers(&up)
    }
}

fn numbers(runs: &[Run]) -> Vec<u32> {
    runs.iter()
        .flat_map(|r| (0..r.n).map(move |k| r.first.wrapping_add(k)))
        .collect()
}

#[test]
fn a_run_in_order_goes_up_whole_and_moves_next_past_it() {
    let mut r = Rx::new(2);
    assert_eq!(r.arrive(0, 10, 4, 0), [10, 11, 12, 13]);
    assert_eq!(r.rx.window.next_expected(), Seq(14));
    assert_eq!(r.arrive(1, 14, 1, 0), [14]);
    assert_eq!(r.rx.window.held(), 0);
}

#[test]
fn a_run_ahead_waits_in_one_slot_and_its_gap_brings_it_up() {
    let mut r = Rx::new(2);
    r.arrive(0, 0, 1, 0);
    // Link 1 brings 5..9 before link 0 brings 1..4.
    assert_eq!(r.arrive(1, 5, 5, 0), [] as [u32; 0]);
    assert_eq!(r.rx.window.held(), 1);
    assert_eq!(r.arrive(0, 1, 4, 1), (1..10).collect::<Vec<_>>());
    assert_eq!(r.rx.window.next_expected(), Seq(10));
    assert_eq!(r.rx.window.stats.late, 0);
}

#[test]
fn the_loss_rule_takes_a_runs_last_number_as_passed() {
    // 0..3 on link 0, 4..7 lost on link 1, 8..11 on link 0, 12..15 on link 1.
    let mut r = Rx::new(2);
    assert_eq!(r.arrive(0, 0, 4, 0), [0, 1, 2, 3]);
    assert_eq!(
        r.arrive(0, 8, 4, 0),
        [] as [u32; 0],
        "link 1 may still bring 4..7"
    );
    // Link 1 passed 15 and link 0 passed 11: 4..7 are lost.
    assert_eq!(r.arrive(1, 12, 4, 1), (8..16).collect::<Vec<_>>());
    assert_eq!(r.rx.window.stats.gaps, 4);
    assert_eq!(r.rx.window.stats.timeout, 0);
}

#[test]
fn fast_tout_releases_a_held_run_whole() {
    let mut r = Rx::new(2);
    r.arrive(0, 0, 1, 0);
    assert_eq!(r.arrive(0, 3, 3, 0), [] as [u32; 0]);
    assert_eq!(r.sweep(21), [3, 4, 5]);
    assert_eq!(r.rx.window.next_expected(), Seq(6));
    // 1 and 2, given up, come late, each once.
    assert_eq!(r.arrive(1, 1, 2, 22), [1, 2]);
    assert_eq!(r.rx.window.stats.late, 1);
}

#[test]
fn a_run_whose_first_numbers_were_given_up_still_brings_next_on() {
    let mut r = Rx::new(2);
    r.arrive(0, 0, 1, 0);
    r.arrive(0, 3, 1, 0);
    assert_eq!(r.sweep(21), [3], "1 and 2 given up");
    // 1..6 arrives: late for 1..3, but 4..6 are new; 7 then is in order.
    assert_eq!(r.arrive(1, 1, 6, 22), [1, 2, 3, 4, 5, 6]);
    assert_eq!(r.rx.window.next_expected(), Seq(7));
    assert_eq!(r.arrive(1, 7, 1, 22), [7]);
}

#[test]
fn a_packet_held_inside_a_run_goes_up_after_it_and_may_reach_further() {
    let mut r = Rx::new(2);
    r.arrive(0, 0, 1, 0);
    // 4..7 held; then 2..5 held (overlaps it: a copy came another way).
    assert_eq!(r.arrive(1, 4, 4, 0), [] as [u32; 0]);
    assert_eq!(r.arrive(1, 2, 4, 0), [] as [u32; 0]);
    // 1 fills the gap: 2..5 goes up, then 4..7 inside it, which reaches 7.
    let up = r.arrive(0, 1, 1, 0);
    assert_eq!(up, [1, 2, 3, 4, 5, 4, 5, 6, 7]);
    assert_eq!(r.rx.window.next_expected(), Seq(8));
    assert_eq!(r.rx.window.held(), 0);
}

#[test]
fn a_run_a_whole_window_ahead_is_a_jump() {
    let mut r = Rx::new(2);
    r.arrive(0, 0, 1, 0);
    r.arrive(0, 2, 1, 0);
    // Its first number a window ahead: everything held goes up, every
    // number before it is given up, and the run is in order.
    let first = WINDOW_SLOTS as u32 + 1;
    let up = r.arrive(0, first, 20, 0);
    let want: Vec<u32> = [2].into_iter().chain(first..first + 20).collect();
    assert_eq!(up, want);
    assert_eq!(r.rx.window.stats.jumps, 1);
    assert_eq!(r.rx.window.stats.gaps, (first - 2) as u64);
    assert_eq!(r.rx.window.held(), 0);
    assert_eq!(r.rx.window.next_expected(), Seq(first + 20));
}

/// A sender's GSO packet: `segs` numbers on one link.
#[derive(Debug, Clone)]
struct Gso {
    link: usize,
    segs: u32,
    lost: bool,
    gap_us: u64,
    jitter_us: u64,
    /// The receiver's GRO merges it into the previous arrival on its link
    /// when their numbers follow one another.
    merge: bool,
}

fn gso_traffic() -> impl Strategy<Value = Vec<Gso>> {
    prop::collection::vec(
        (
            0usize..4,
            1u32..=45,
            prop::bool::weighted(0.08),
            0u64..300,
            prop_oneof![3 => 0u64..500, 1 => 0u64..40_000],
            any::<bool>(),
        )
            .prop_map(|(link, segs, lost, gap_us, jitter_us, merge)| Gso {
                link,
                segs,
                lost,
                gap_us,
                jitter_us,
                merge,
            }),
        1..200,
    )
}

struct Outcome {
    /// Numbers that went up, in order.
    up: Vec<u32>,
    /// Numbers that arrived.
    arrived: HashSet<u32>,
    rx: PeerRx<Run, Buf<Run>>,
}

/// Sends `pkts` (numbers from `start` on) over `links` FIFO links, merges
/// what GRO would, and runs the arrivals and the window's deadlines through
/// a peer's receive side.
fn run(links: usize, start: u32, pkts: &[Gso], p: &Params, strict: bool) -> Outcome {
    let mut send = 0u64;
    let mut link_last = vec![0u64; links];
    // Per link, the arrivals so far: (time, run); the last may grow.
    let mut per_link: Vec<Vec<(u64, Run)>> = vec![Vec::new(); links];
    let mut next = start;
    for k in pkts {
        let l = k.link % links;
        send += k.gap_us;
        let t = (send + 100 + k.jitter_us).max(link_last[l]);
        link_last[l] = t;
        let r = Run {
            first: next,
            n: k.segs,
        };
        next = next.wrapping_add(k.segs);
        if k.lost {
            continue;
        }
        match per_link[l].last_mut() {
            Some((_, prev))
                if k.merge
                    && prev.first.wrapping_add(prev.n) == r.first
                    && prev.n + r.n <= MAX_SPAN =>
            {
                // Merged: arrives with the first part (GRO holds nothing
                // across the napi poll that the model collapses to one instant).
                prev.n += r.n;
            }
            _ => per_link[l].push((t, r)),
        }
    }
    let mut events: Vec<(u64, usize, Run)> = per_link
        .iter()
        .enumerate()
        .flat_map(|(l, v)| v.iter().map(move |&(t, r)| (t, l, r)))
        .collect();
    events.sort_by_key(|&(t, l, r)| (t, l, r.first.wrapping_sub(start)));

    let active = ((1u16 << links) - 1) as u8;
    let fast = p.fast_tout();
    let mut rx: PeerRx<Run, Buf<Run>> = PeerRx::default();
    rx.window.set_strict(strict);
    let mut bufs = HeapBufs::default();
    let mut out = Outcome {
        up: Vec::new(),
        arrived: HashSet::new(),
        rx: PeerRx::default(),
    };
    let mut ev = events.into_iter().peekable();
    let mut now_prev = Instant(0);
    loop {
        let deadline = rx.window.deadline(now_prev, fast).map(|d| d.0 / 1000);
        let (now_us, arrival) = match (deadline, ev.peek().map(|e| e.0)) {
            (None, None) => break,
            (Some(d), Some(a)) if d <= a => (d, None),
            (Some(d), None) => (d, None),
            _ => {
                let e = ev.next().unwrap();
                (e.0, Some(e))
            }
        };
        let now = Instant(now_us * 1000);
        now_prev = now;
        let mut ups = Vec::new();
        match arrival {
            Some((_, l, r)) => {
                out.arrived.extend(numbers(&[r]));
                let dup = rx.data(l, Seq(r.first), r, now, active, p, &mut bufs, &mut |x| {
                    ups.push(x)
                });
                assert_eq!(dup, None, "no duplicates were sent");
            }
            None => rx.sweep(now, active, p, &mut bufs, &mut |x| ups.push(x)),
        }
        out.up.extend(numbers(&ups));
    }
    out.rx = rx;
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn runs_go_up_exactly_once_and_the_loss_rule_stays_sound(
        links in 1usize..=4,
        start in prop_oneof![Just(u32::MAX - 50), any::<u32>()],
        fast_ms in 1u32..30,
        pkts in gso_traffic(),
    ) {
        let p = Params::from_values(&[(Param::FastTout, fast_ms)]).unwrap();
        let o = run(links, start, &pkts, &p, false);
        let mut seen = HashSet::new();
        for &s in &o.up {
            prop_assert!(seen.insert(s), "number {} went up twice", s);
        }
        prop_assert_eq!(seen, o.arrived);
        prop_assert_eq!(o.rx.window.held(), 0);
        let s = o.rx.window.stats;
        prop_assert_eq!(s.late_loss, 0, "the loss rule gave up a number that then arrived: {:?}", s);
    }

    #[test]
    fn without_loss_and_skew_below_fast_tout_runs_keep_perfect_order(
        links in 1usize..=4,
        start in any::<u32>(),
        pkts in gso_traffic(),
    ) {
        // Nothing lost, jitter under FAST_TOUT (20 ms), and fewer numbers
        // than the window has slots (more in flight would be a jump).
        let mut total = 0;
        let pkts: Vec<Gso> = pkts.into_iter()
            .map(|mut k| { k.lost = false; k.jitter_us %= 15_000; k })
            .take_while(|k| { total += k.segs; total < WINDOW_SLOTS as u32 })
            .collect();
        let o = run(links, start, &pkts, &Params::default(), false);
        // Numbers before the first arrival's are late at the start.
        let first = o.up[0];
        let order: Vec<u32> = o.up.iter().copied().filter(|s| s.wrapping_sub(start) >= first.wrapping_sub(start)).collect();
        let total: u32 = pkts.iter().map(|k| k.segs).sum();
        let want: Vec<u32> = (first.wrapping_sub(start)..total).map(|i| start.wrapping_add(i)).collect();
        prop_assert_eq!(order, want);
        prop_assert_eq!(o.rx.window.stats.timeout, 0);
    }
}

/// Arrivals a forger may add to a sealed pair's traffic: replays of
/// authentic frames, which GRO merges into runs of any length, at any
/// number near the window, on any link.
fn replayed_runs() -> impl Strategy<Value = Vec<(u32, u32, usize, u64)>> {
    prop::collection::vec((0u32..700, 1u32..=MAX_SPAN, 0usize..4, 0u64..3_000), 0..80)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn a_strict_window_takes_every_run_of_honest_traffic(
        links in 1usize..=4,
        start in any::<u32>(),
        fast_ms in 1u32..30,
        pkts in gso_traffic(),
    ) {
        // Sealed frames merged into runs: each number up exactly once, none
        // refused (`run` asserts it), losses and late frames as unsealed.
        // Fewer numbers than the window has slots: none comes far behind,
        // which a strict window refuses.
        let mut total = 0;
        let pkts: Vec<Gso> = pkts.into_iter().take_while(|k| { total += k.segs; total < WINDOW_SLOTS as u32 }).collect();
        let p = Params::from_values(&[(Param::FastTout, fast_ms)]).unwrap();
        let o = run(links, start, &pkts, &p, true);
        let mut seen = HashSet::new();
        for &s in &o.up {
            prop_assert!(seen.insert(s), "number {} went up twice", s);
        }
        prop_assert_eq!(seen, o.arrived);
        prop_assert_eq!(o.rx.window.stats.replays, 0);
    }

    #[test]
    fn a_strict_window_hands_each_number_up_once_whatever_arrives(
        start in prop_oneof![Just(u32::MAX - 300), any::<u32>()],
        fast_ms in 1u32..30,
        arrivals in replayed_runs(),
    ) {
        // Any runs in any order (replays overlapping what was held, handed
        // up, given up, or not come yet): never a number twice, and a
        // packet is taken whole or not at all.
        let p = Params::from_values(&[(Param::FastTout, fast_ms)]).unwrap();
        let mut rx: PeerRx<Run, Buf<Run>> = PeerRx::default();
        rx.window.set_strict(true);
        let mut bufs = HeapBufs::default();
        let mut seen = HashSet::new();
        let mut now_us = 0u64;
        for (off, n, link, gap_us) in arrivals {
            now_us += gap_us;
            let now = Instant(now_us * 1000);
            let mut ups = Vec::new();
            rx.sweep(now, 0b1111, &p, &mut bufs, &mut |x| ups.push(x));
            let r = Run { first: start.wrapping_add(off), n };
            let refused = rx.data(link, Seq(r.first), r, now, 0b1111, &p, &mut bufs, &mut |x| ups.push(x));
            prop_assert!(refused.is_none() || refused == Some(r));
            for s in numbers(&ups) {
                prop_assert!(seen.insert(s), "number {} went up twice", s);
            }
        }
        let mut ups = Vec::new();
        rx.sweep(Instant((now_us + 1_000_000) * 1000), 0b1111, &p, &mut bufs, &mut |x| ups.push(x));
        for s in numbers(&ups) {
            prop_assert!(seen.insert(s), "number {} went up twice", s);
        }
    }
}

#[test]
fn a_strict_window_refuses_a_run_that_repeats_any_of_its_numbers() {
    let mut r = Rx::new(2);
    r.rx.window.set_strict(true);
    let data = |r: &mut Rx, first: u32, n: u32| {
        let mut up = Vec::new();
        let refused = r.rx.data(
            0,
            Seq(first),
            Run { first, n },
            Instant(0),
            r.active,
            &r.p,
            &mut r.bufs,
            &mut |x| up.push(x),
        );
        (refused.is_some(), numbers(&up))
    };
    assert_eq!(data(&mut r, 0, 4), (false, vec![0, 1, 2, 3]));
    assert_eq!(data(&mut r, 2, 4), (true, vec![]), "2 and 3 went up");
    // 10..14 held; a run reaching into it, or starting inside it, is refused.
    assert_eq!(data(&mut r, 10, 5), (false, vec![]));
    assert_eq!(data(&mut r, 8, 3), (true, vec![]), "10 is held");
    assert_eq!(
        data(&mut r, 12, 1),
        (true, vec![]),
        "12 is held, inside a run"
    );
    assert_eq!(data(&mut r, 15, 2), (false, vec![]));
    assert_eq!(r.rx.window.stats.replays, 3);
    // 4..9 come: everything goes up once.
    assert_eq!(data(&mut r, 4, 6), (false, (4..17).collect::<Vec<_>>()));
}

#[test]
fn a_run_only_reaching_past_the_window_moves_it_just_enough() {
    // All on link 0 (link 1 silent: the loss rule waits for it).
    let mut r = Rx::new(2);
    r.arrive(0, 0, 1, 0);
    r.arrive(0, 100, 1, 0);
    // 500..519: its last number is 519 ahead of next (1); the window moves
    // to 8 (519 - 511), giving up 1..7 only; 100 stays held, as does the run.
    assert_eq!(r.arrive(0, 500, 20, 0), [] as [u32; 0]);
    assert_eq!(r.rx.window.next_expected(), Seq(8));
    assert_eq!(r.rx.window.stats.gaps, 7);
    assert_eq!(r.rx.window.held(), 2);
}

#[test]
fn of_two_packets_starting_at_one_number_the_longer_run_stays() {
    let mut r = Rx::new(2);
    r.arrive(0, 0, 1, 0);
    let mut up = Vec::new();
    let mut arrive = |r: &mut Rx, first, n| {
        r.rx.data(
            1,
            Seq(first),
            Run { first, n },
            Instant(0),
            r.active,
            &r.p,
            &mut r.bufs,
            &mut |x| up.push(x),
        )
    };
    assert_eq!(arrive(&mut r, 5, 2), None);
    assert_eq!(
        arrive(&mut r, 5, 4),
        Some(Run { first: 5, n: 2 }),
        "the shorter one goes"
    );
    assert_eq!(
        arrive(&mut r, 5, 3),
        Some(Run { first: 5, n: 3 }),
        "a shorter one is the duplicate"
    );
    assert_eq!(r.arrive(0, 1, 4, 0), [1, 2, 3, 4, 5, 6, 7, 8]);
}

#[test]
fn a_run_straddling_next_counts_its_given_up_numbers_late() {
    let mut r = Rx::new(2);
    r.arrive(0, 0, 1, 0);
    r.arrive(1, 4, 1, 0);
    // Link 0 passes 5: 1..3 given up by the loss rule.
    assert_eq!(r.arrive(0, 5, 1, 0), [4, 5]);
    assert_eq!(r.rx.window.stats.gaps, 3);
    // 2..7 arrives (link 1): 2 and 3 were given up by the loss rule.
    assert_eq!(r.arrive(1, 2, 6, 0), [2, 3, 4, 5, 6, 7]);
    assert_eq!(r.rx.window.stats.late_loss, 2);
    assert_eq!(r.rx.window.next_expected(), Seq(8));
}
