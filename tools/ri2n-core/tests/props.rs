//! Property tests: arbitrary traffic over K links that each keep their own
//! order, with arbitrary loss and timing, driven event by event (arrivals and
//! the window's own FAST_TOUT deadlines) through a peer's receive side.

use proptest::prelude::*;
use ri2n_core::dedup::{Dedup, DEDUP_BITS};
use ri2n_core::header::Header;
use ri2n_core::heap::{table, Buf, HeapBufs};
use ri2n_core::params::{Param, Params};
use ri2n_core::rx::PeerRx;
use ri2n_core::seq::Seq;
use ri2n_core::time::Instant;
use std::collections::{HashMap, HashSet};

#[derive(Debug, Clone)]
struct Pkt {
    link: usize,
    lost: bool,
    /// Microseconds after the previous packet was sent.
    gap_us: u64,
    /// Extra delay on its link, microseconds (links stay FIFO regardless).
    jitter_us: u64,
}

fn traffic(links: usize) -> impl Strategy<Value = Vec<Pkt>> {
    prop::collection::vec(
        (
            0..links,
            prop::bool::weighted(0.1),
            0u64..300,
            prop_oneof![3 => 0u64..500, 1 => 0u64..40_000],
        )
            .prop_map(|(link, lost, gap_us, jitter_us)| Pkt {
                link,
                lost,
                gap_us,
                jitter_us,
            }),
        1..400,
    )
}

struct Outcome {
    delivered: Vec<(u32, u64)>, // (packet index, time in us)
    arrival: HashMap<u32, u64>,
    rx: PeerRx<u32, Buf<u32>>,
    max_held: usize,
    /// Packets sent before the first one to arrive (late by definition).
    prefix_late: u64,
    /// Arrivals taken without the pool (`PeerRx::unpooled`).
    unpooled: u64,
}

fn run(links: usize, start: u32, pkts: &[Pkt], p: &Params, strict: bool) -> Outcome {
    // Arrival times: each link is FIFO.
    let mut send = 0u64;
    let mut link_last = vec![0u64; links];
    let mut events = Vec::new();
    for (i, k) in pkts.iter().enumerate() {
        send += k.gap_us;
        let t = (send + 100 + k.jitter_us).max(link_last[k.link]);
        link_last[k.link] = t;
        if !k.lost {
            events.push((t, k.link, i as u32));
        }
    }
    events.sort_by_key(|&(t, l, i)| (t, l, i));

    let active = ((1u16 << links) - 1) as u8;
    let fast = p.fast_tout();
    let mut rx: PeerRx<u32, Buf<u32>> = PeerRx::default();
    // Strict: as for sealed frames, which the driver takes without its
    // lock too when the window would take them (no replay to count).
    rx.window.set_strict(strict);
    let mut bufs = HeapBufs::default();
    let mut out = Outcome {
        delivered: Vec::new(),
        arrival: HashMap::new(),
        rx: PeerRx::default(),
        max_held: 0,
        prefix_late: 0,
        unpooled: 0,
    };
    let mut max_index: Option<u32> = None;
    let first = events.first().map_or(0, |e| e.2);
    let mut prefix_late = 0;
    let mut ev = events.into_iter().peekable();
    let mut now_prev = Instant(0);
    loop {
        let deadline = rx.window.deadline(now_prev, fast).map(|d| d.0 / 1000);
        let next_arrival = ev.peek().map(|e| e.0);
        let (now_us, arrival) = match (deadline, next_arrival) {
            (None, None) => break,
            (Some(d), Some(a)) if d <= a => (d, None),
            (Some(d), None) => (d, None),
            (_, Some(_)) => {
                let e = ev.next().unwrap();
                (e.0, Some(e))
            }
        };
        let now = Instant(now_us * 1000);
        now_prev = now;
        let late_before = rx.window.stats.late;
        let mut ups = Vec::new();
        match arrival {
            Some((_, link, i)) if rx.unpooled(Seq(start.wrapping_add(i)), 1) => {
                // The driver's way without its lock (ri2n_rx.rs): no buffer
                // pool; the window keeps the one it has, if any, until the
                // sweep.
                out.arrival.insert(i, now_us);
                let had = rx.window.has_buf();
                let dup = rx.data_unpooled(
                    link,
                    Seq(start.wrapping_add(i)),
                    i,
                    now,
                    active,
                    p,
                    &mut |x| ups.push(x),
                );
                assert_eq!(dup, None, "no duplicates were sent");
                assert_eq!(
                    rx.window.has_buf(),
                    had,
                    "the window kept its buffer, or needed none"
                );
                assert_eq!(
                    rx.window.stats.unbuffered, 0,
                    "nothing went up for want of a buffer"
                );
                assert_eq!(rx.window.stats.replays, 0, "a strict window took it");
                out.unpooled += 1;
            }
            Some((_, link, i)) => {
                out.arrival.insert(i, now_us);
                let dup = rx.data(
                    link,
                    Seq(start.wrapping_add(i)),
                    i,
                    now,
                    active,
                    p,
                    &mut bufs,
                    &mut |x| ups.push(x),
                );
                assert_eq!(dup, None, "no duplicates were sent");
            }
            None => rx.sweep(now, active, p, &mut bufs, &mut |x| ups.push(x)),
        }
        for &i in &ups {
            if i < first {
                // Sent before the packet that started the window: late by
                // definition (the receiver cannot know where a stream starts).
                prefix_late += 1;
                out.delivered.push((i, now_us));
                continue;
            }
            match max_index {
                Some(m) if i < m => {
                    // Out of order only as a late packet, at its own arrival.
                    assert_eq!(
                        arrival.map(|a| a.2),
                        Some(i),
                        "packet {i} went up after {m}, not at its arrival"
                    );
                    assert_eq!(
                        rx.window.stats.late,
                        late_before + 1,
                        "packet {i} out of order but not counted late"
                    );
                }
                _ => max_index = Some(i),
            }
            out.delivered.push((i, now_us));
        }
        out.max_held = out.max_held.max(rx.window.held());
    }
    out.prefix_late = prefix_late;
    out.rx = rx;
    out
}

fn params(fast_ms: u32, maxbuf: u32) -> Params {
    Params::from_values(&[(Param::FastTout, fast_ms), (Param::Maxbuf, maxbuf)]).unwrap()
}

/// One link, nothing lost, no jitter: after the first packet every one is
/// taken without the pool.
#[test]
fn in_order_traffic_needs_no_pool() {
    let pkts: Vec<Pkt> = (0..100)
        .map(|_| Pkt {
            link: 0,
            lost: false,
            gap_us: 10,
            jitter_us: 0,
        })
        .collect();
    let o = run(1, 7, &pkts, &Params::default(), false);
    assert_eq!(o.delivered.len(), 100);
    assert_eq!(o.unpooled, 99);
}

/// Two links, the second 1 ms slower: the window holds, takes a buffer
/// from the pool once, and keeps it; every packet after is taken without
/// the pool, and all go up in order.
#[test]
fn a_window_that_has_a_buffer_holds_without_the_pool() {
    let pkts: Vec<Pkt> = (0..200)
        .map(|i| Pkt {
            link: i % 2,
            lost: false,
            gap_us: 50,
            jitter_us: if i % 2 == 1 { 1000 } else { 0 },
        })
        .collect();
    let o = run(2, 7, &pkts, &Params::default(), false);
    assert_eq!(o.delivered.len(), 200);
    assert!(o.delivered.windows(2).all(|w| w[0].0 < w[1].0), "in order");
    assert!(o.max_held > 0, "the window held");
    assert!(o.unpooled >= 190, "{} of 200 without the pool", o.unpooled);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn never_loses_duplicates_or_overholds(
        links in 1usize..=4,
        start in prop_oneof![Just(u32::MAX - 50), any::<u32>()],
        fast_ms in 1u32..30,
        maxbuf in 1u32..400,
        pkts in traffic(4),
        strict in any::<bool>(),
    ) {
        let pkts: Vec<Pkt> = pkts.into_iter().map(|mut k| { k.link %= links; k }).collect();
        let p = params(fast_ms, maxbuf);
        let o = run(links, start, &pkts, &p, strict);

        // Every packet that arrived went up exactly once; nothing else did.
        let mut seen = HashSet::new();
        for &(i, _) in &o.delivered {
            prop_assert!(seen.insert(i), "packet {} delivered twice", i);
        }
        let arrived: HashSet<u32> = o.arrival.keys().copied().collect();
        prop_assert_eq!(seen, arrived);
        prop_assert_eq!(o.rx.window.held(), 0);

        // Never more than MAXBUF held.
        prop_assert!(o.max_held <= maxbuf as usize, "held {} > MAXBUF {}", o.max_held, maxbuf);

        // Never held past FAST_TOUT, lost gap or not.
        for &(i, t) in &o.delivered {
            let waited = t - o.arrival[&i];
            prop_assert!(waited <= fast_ms as u64 * 1000, "packet {} waited {} us > FAST_TOUT", i, waited);
        }

        // The loss detector never gives up a packet that then arrives (the
        // links are FIFO), whatever else gave up gaps; with no timeout,
        // flush or jump, nothing is late at all.
        let s = o.rx.window.stats;
        prop_assert_eq!(s.late_loss, 0, "loss detection gave up a packet that arrived: {:?}", s);
        if s.timeout == 0 && s.flushes == 0 && s.jumps == 0 {
            prop_assert_eq!(s.late, o.prefix_late, "loss detection declared a live packet lost: {:?}", s);
        }
    }

    #[test]
    fn without_loss_and_skew_below_fast_tout_order_is_perfect(
        links in 1usize..=4,
        start in any::<u32>(),
        pkts in traffic(4),
    ) {
        // Jitter < FAST_TOUT (20 ms), nothing lost, MAXBUF never reached:
        // everything goes up in order, no timeout, no late packet.
        let pkts: Vec<Pkt> = pkts.into_iter().map(|mut k| {
            k.link %= links; k.lost = false; k.jitter_us %= 15_000; k
        }).collect();
        let p = Params::default();
        let o = run(links, start, &pkts, &p, false);
        // Packets sent before the first arrival are late at the start.
        let first = o.delivered.first().unwrap().0;
        let order: Vec<u32> = o.delivered.iter().map(|d| d.0).filter(|&i| i >= first).collect();
        let want: Vec<u32> = (first..pkts.len() as u32).collect();
        prop_assert_eq!(order, want);
        prop_assert_eq!(o.rx.window.stats.late, o.prefix_late);
        prop_assert_eq!(o.rx.window.stats.timeout, 0);
    }

    #[test]
    fn dedup_matches_a_model(seqs in prop::collection::vec(0u32..600, 1..300)) {
        // Model: within DEDUP_BITS of the newest, a number passes once.
        let mut d = Dedup::default();
        let mut seen: HashSet<u32> = HashSet::new();
        let mut newest: Option<u32> = None;
        for s in seqs {
            let fresh = match newest {
                Some(n) if s + DEDUP_BITS as u32 <= n => { seen.clear(); true } // restart
                Some(n) if s >= n + DEDUP_BITS as u32 => { seen.clear(); true } // jump
                _ => !seen.contains(&s),
            };
            prop_assert_eq!(d.accept(Seq(s)), fresh, "seq {}", s);
            seen.insert(s);
            newest = Some(match newest { Some(n) if fresh && (s + DEDUP_BITS as u32 <= n) => s, Some(n) => n.max(s), None => s });
            let n = newest.unwrap();
            seen.retain(|&x| x + (DEDUP_BITS as u32) > n && x <= n);
        }
    }

    #[test]
    fn peer_table_matches_a_hashmap(ops in prop::collection::vec((0u8..40, any::<bool>()), 1..500), key in any::<u64>()) {
        let mut t = table::<()>(32, key);
        let mut model: HashMap<[u8; 6], usize> = HashMap::new();
        for (m, add) in ops {
            let mac = [0, 0, 0, 0, m % 3, m];
            if add {
                if model.contains_key(&mac) { continue; }
                match t.insert(&mac, Instant(0), ()) {
                    Ok(slot) => { prop_assert!(model.len() < 32); model.insert(mac, slot); }
                    Err(_) => prop_assert_eq!(model.len(), 32),
                }
            } else if let Some(slot) = model.remove(&mac) {
                t.remove(slot);
            }
            prop_assert_eq!(t.len(), model.len());
            for (mac, &slot) in &model {
                prop_assert_eq!(t.lookup(mac), Some(slot));
            }
            prop_assert_eq!(t.lookup(&[9, 9, 9, 9, 9, 9]), None);
        }
    }

    #[test]
    fn header_decode_never_panics_and_round_trips(mut b in prop::collection::vec(any::<u8>(), 0..28), sealed in any::<bool>()) {
        if sealed && !b.is_empty() {
            b[0] = 2;
        }
        match Header::decode(&b) {
            Ok((h, None)) => {
                let mut out = [0u8; 8];
                h.encode(&mut out);
                prop_assert_eq!(&out[..], &b[..8]);
            }
            Ok((h, Some(seal))) => {
                let mut out = [0u8; 24];
                h.encode_sealed(seal.epoch, &mut out);
                out[16..].copy_from_slice(&seal.tag);
                prop_assert_eq!(&out[..], &b[..24]);
            }
            Err(_) => {}
        }
    }
}

/// `RoundRobin::pick_bytes` as it was before it visited only the links set
/// in its masks (every one of the eight, three times a packet): the new one
/// must choose as it did.
#[derive(Default)]
struct PickBytesBefore {
    last: u8,
    ahead: [u32; 8],
}

impl PickBytesBefore {
    fn pick(&mut self, usable: u8, prefer: u8, len: u32) -> Option<usize> {
        if usable == 0 {
            return None;
        }
        let candidates = if usable & prefer != 0 {
            usable & prefer
        } else {
            usable
        };
        let mut best: Option<usize> = None;
        for k in 1..=8 {
            let l = (self.last as usize + k) % 8;
            if usable & (1 << l) == 0 {
                self.ahead[l] = 0;
                continue;
            }
            if candidates & (1 << l) != 0 && best.is_none_or(|b| self.ahead[l] < self.ahead[b]) {
                best = Some(l);
            }
        }
        let l = best?;
        self.last = l as u8;
        self.ahead[l] = self.ahead[l].saturating_add(len);
        let least = (0..8)
            .filter(|&i| usable & (1 << i) != 0)
            .map(|i| self.ahead[i])
            .min()
            .unwrap_or(0);
        for (i, a) in self.ahead.iter_mut().enumerate() {
            if usable & (1 << i) != 0 {
                *a -= least;
            }
        }
        Some(l)
    }
}

proptest! {
    #[test]
    fn pick_bytes_chooses_as_it_did_over_all_eight_links(
        picks in prop::collection::vec(
            (prop_oneof![3 => Just(0b11u8), 1 => any::<u8>()], prop_oneof![3 => Just(0xffu8), 1 => any::<u8>()],
             prop_oneof![Just(66u32), Just(1514), 1u32..70_000]),
            1..300)
    ) {
        let mut now = ri2n_core::sched::RoundRobin::default();
        let mut before = PickBytesBefore::default();
        for (i, &(usable, prefer, len)) in picks.iter().enumerate() {
            prop_assert_eq!(now.pick_bytes(usable, prefer, len), before.pick(usable, prefer, len), "pick {}", i);
        }
    }
}

#[test]
fn a_strict_window_takes_without_the_pool_only_what_it_would_take() {
    // Sealed frames take the driver's way without its lock only if the
    // window would take them: a replay goes the locked way, to be counted.
    let p = Params::default();
    let mut rx: PeerRx<u32, Buf<u32>> = PeerRx::default();
    rx.window.set_strict(true);
    let mut bufs = HeapBufs::default();
    let mut ups = Vec::new();
    assert!(
        !rx.unpooled(Seq(10), 1),
        "not started: the locked way starts it"
    );
    assert_eq!(
        rx.data(
            0,
            Seq(10),
            10,
            Instant(1_000),
            0b11,
            &p,
            &mut bufs,
            &mut |x| ups.push(x)
        ),
        None
    );
    assert!(rx.unpooled(Seq(11), 1), "the next number");
    assert!(!rx.unpooled(Seq(10), 1), "a replay of the last");
    assert!(!rx.unpooled(Seq(12), 1), "ahead, with no buffer: the pool");
    assert_eq!(
        rx.data_unpooled(0, Seq(11), 11, Instant(2_000), 0b11, &p, &mut |x| ups
            .push(x)),
        None
    );
    assert!(!rx.unpooled(Seq(11), 1), "a replay of what it just took");
    assert_eq!(rx.window.stats.replays, 0);
    assert_eq!(ups, vec![10, 11]);
}
