// SPDX-License-Identifier: GPL-2.0

//! ri2n-sim: one node's view of N peers over K links, in simulated time,
//! on the same core files the module compiles (`core/`): every protocol
//! decision is the engine's (`core/node.rs`), which two nodes run for each
//! other in `ri2n_core::pair`; this file only draws the workloads and
//! faults and measures.
//!
//! It measures what the driver's design costs at cluster scale, as the
//! driver lays its state out (`ri2n_state.rs`: one `Peer` per peer, a
//! `PeerTable` sized by `peer_mem`):
//!
//! - memory: bytes per peer, idle and holding packets, and how many of N
//!   peers the table admits at all;
//! - core cost per received packet (table lookup, failure detector, reorder
//!   window and loss rule), from peers picked at random among N;
//! - heartbeat frames per second the node sends (each peer, each link,
//!   every HBSPAN, plus the counts asked for on busy links);
//! - detection and recovery times of a link that goes dead and comes back,
//!   idle and under load, over many trials with random phases;
//! - lossy links: two nodes exchanging data, heartbeats, probes and frame
//!   counts over K links, one of them losing 1 or 20 % for a while, with
//!   or without congestion loss on every link: when the link goes out of
//!   use, when it is back, and false alarms;
//! - restarts: how long until a restarted peer's new numbering is taken,
//!   and what went up out of order before.
//!
//! Usage: `ri2n-sim [--quick]`; prints a Markdown report (`make bench-sim`
//! writes it to bench/results/sim.md).

use ri2n_core::detector::ProbingPeers;
use ri2n_core::heap::{table, Buf, HeapBufs};
use ri2n_core::node::{sweep_period, Arrival, Frame};
use ri2n_core::pair::{Pair, Rng, MS};
use ri2n_core::params::{Param, Params};
use ri2n_core::peers::{capacity, idle_limit, NewPeerBudget, Room, BUF_BYTES, PER_PEER_BYTES};
use ri2n_core::seq::Seq;
use ri2n_core::time::{Duration, Instant};
use std::time::Instant as Wall;

/// The driver's per-peer state (`core/peers.rs`), with an 8-byte packet
/// handle as the sk_buff pointer.
type Peer = ri2n_core::peers::Peer<u64, Buf<u64>>;

fn new_peer(links: usize, now: Instant) -> Box<Peer> {
    let mut p: Box<Peer> = Box::default();
    p.start(links, None, ((1u16 << links) - 1) as u8, now);
    p
}

fn mac(i: usize) -> [u8; 6] {
    let b = (i as u32).to_be_bytes();
    [0x02, 0x52, b[0], b[1], b[2], b[3]]
}

/// Bytes per peer the driver spends (`core/peers.rs`, `PER_PEER_BYTES`):
/// its `Peer` (a slab object of its exact size) and its table slot; a
/// busy peer (packets waiting) also has a reorder buffer. Held packets'
/// own memory comes on top, bounded by `held_mem` for all peers.
fn bytes_per_peer() -> (usize, usize) {
    (PER_PEER_BYTES, PER_PEER_BYTES + BUF_BYTES)
}

/// Admits `n` peers, each heartbeating, into a table sized by the default
/// `peer_mem`; returns how many fit, how many of 10 n new source MACs (a
/// flood, one frame each, 10,000 a second) then evict a live peer (must be
/// 0), and how many peers the flood made (`NewPeerBudget`).
fn admitted(n: usize, p: &Params) -> (usize, usize, usize) {
    let (slots, _) = capacity(p.peer_mem()).unwrap();
    let mut t = table::<Box<Peer>>(slots, 0x1234_5678);
    let mut budget = NewPeerBudget::default();
    let start = Instant(1);
    let adm = (0..n)
        .filter(|&i| {
            let s = t.insert(&mac(i), start, Box::default()).ok();
            s.inspect(|&s| t.touch(s, start, true)).is_some()
        })
        .count();
    let (mut evicted_live, mut made) = (0, 0);
    for i in 0..10 * n {
        let now = Instant(start.0 + i as u64 * 100_000);
        let m = [
            0x06,
            0x66,
            (i >> 24) as u8,
            (i >> 16) as u8,
            (i >> 8) as u8,
            i as u8,
        ];
        if t.lookup(&m).is_some() {
            continue;
        }
        let room = t.room(now, idle_limit(p));
        if room == Room::Full || !budget.take(now, slots, p.hbspan()) {
            continue;
        }
        if let Room::Evict(v) = room {
            evicted_live += usize::from(t.is_known(v));
            t.remove(v);
        }
        made += usize::from(t.insert(&m, now, Box::default()).is_ok());
    }
    (adm, evicted_live, made)
}

/// ns per received data packet, and the most reorder buffers out at once:
/// for packets from peers picked at random among `n`, on `k` links, a
/// quarter of the pairs swapped (so windows hold and give buffers back):
/// table lookup and touch, and the engine's `Peer::receive` (failure
/// detector, window, loss rule, FAST_TOUT check, buffer pool).
fn ns_per_packet(n: usize, k: usize, packets: usize, p: &Params) -> (f64, usize) {
    let (slots, nbufs) = capacity(p.peer_mem()).unwrap();
    let mut t = table::<Box<Peer>>(slots, 0x1234_5678);
    let mut bufs = HeapBufs::new(nbufs);
    let mut seqs = vec![0u32; n];
    for i in 0..n {
        t.insert(&mac(i), Instant(0), new_peer(k, Instant(0)))
            .map_err(|_| ())
            .expect("room");
    }
    let macs: Vec<[u8; 6]> = (0..n).map(mac).collect();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let order: Vec<(usize, bool)> = (0..packets / 2)
        .map(|_| (rng.below(n as u64) as usize, rng.below(4) == 0))
        .collect();
    let mut delivered = 0u64;
    let mut probing = ProbingPeers::default();
    let all = ((1u16 << k) - 1) as u8;
    let start = Wall::now();
    for (i, &(who, swap)) in order.iter().enumerate() {
        let now = Instant(i as u64 * 2_000);
        let slot = t.lookup(&macs[who]).expect("known");
        t.touch(slot, now, false);
        let peer = t.get_mut(slot).expect("state");
        let seq = seqs[who];
        seqs[who] = seq.wrapping_add(2);
        let pair = if swap {
            [seq.wrapping_add(1), seq]
        } else {
            [seq, seq.wrapping_add(1)]
        };
        for s in pair {
            let a = Arrival {
                link: s as usize % k,
                now,
                carrier: all,
                credit: true,
                sealed: None,
                frames: 1,
            };
            let got = peer.receive(
                &a,
                Frame::Data(Seq(s)),
                Some(s as u64),
                &mut probing,
                p,
                &mut bufs,
                &mut |_| delivered += 1,
            );
            if !matches!(got.left, ri2n_core::node::Left::Nothing) {
                delivered += 1;
            }
        }
    }
    let ns = start.elapsed().as_nanos() as f64 / packets as f64;
    assert_eq!(delivered, (packets / 2 * 2) as u64, "every packet goes up");
    (ns, bufs.peak)
}

/// Heartbeat frames per second one node sends to `n` peers over `k` links:
/// every HBSPAN on every link, plus, on links carrying data, the counts
/// asked for every REPORT_MS (`busy` of the peers).
fn hb_frames_per_s(n: usize, k: usize, busy: usize, p: &Params) -> f64 {
    let hbspan_s = p.hbspan().0 as f64 / 1e9;
    let reports_per_s = 1e3 / ri2n_core::detector::REPORT_MS as f64;
    (n * k) as f64 / hbspan_s + (busy * k) as f64 * reports_per_s
}

/// One trial: node 0 sends node 1 a packet every `gap` (None: idle,
/// heartbeats only) over `k` links; link 1 goes dead both ways at a random
/// time and heals 10 s later. Returns how long until node 1 stops using
/// link 1 toward node 0 and uses it again, and node 1's sweeps per second.
fn trial(
    k: usize,
    gap: Option<Duration>,
    rng: &mut Rng,
    p: &Params,
) -> (Option<u64>, Option<u64>, f64) {
    let mut pr = Pair::new(k, *p, rng.next_u64());
    let step = gap.map_or(MS, |g| g.0);
    let load = gap.is_some();
    pr.watch(step, 10_000 * MS + rng.below(p.hbspan().0), load, |_| false);
    pr.blackhole(1, true);
    let detected = pr.watch(step, 10_000 * MS, load, |pr| {
        pr.nodes[1].sendable() & 2 == 0
    });
    pr.blackhole(1, false);
    let recovered = pr.watch(step, 10_000 * MS, load, |pr| {
        pr.nodes[1].sendable() & 2 != 0
    });
    (
        detected,
        recovered,
        pr.nodes[1].sweeps as f64 * 1e9 / pr.now as f64,
    )
}

/// One lossy-link trial: link 1 of `k` loses `loss` of its frames (both
/// ways) for 5 s from a random time; every link loses `base` throughout
/// (a congested bottleneck). Node 0 (A) sends a data frame every `gap`.
/// Returns when A took link 1 out of use after the loss began, when it was
/// back after it ended, and how many times A took any link for lossy
/// outside the loss and a second after (false alarms).
fn lossy_trial(
    k: usize,
    loss: f64,
    base: f64,
    gap: Duration,
    rng: &mut Rng,
    p: &Params,
) -> (Option<u64>, Option<u64>, u32) {
    let mut pr = Pair::new(k, *p, rng.next_u64());
    pr.delay = Duration::from_us(100).0;
    for side in 0..2 {
        for l in 0..k {
            pr.faults[side][l].loss = base;
        }
    }
    pr.watch(gap.0, 5_000 * MS + rng.below(p.hbspan().0), true, |_| false);
    let cut = pr.now;
    for side in 0..2 {
        pr.faults[side][1].loss = base + loss;
    }
    let out = pr.watch(gap.0, 5_000 * MS, true, |pr| {
        pr.nodes[0].peer.det.lossy() & 2 != 0
    });
    let heal = pr.now;
    for side in 0..2 {
        pr.faults[side][1].loss = base;
    }
    let back = pr.watch(gap.0, 5_000 * MS, true, |pr| {
        out.is_some() && pr.nodes[0].peer.det.usable() & 2 != 0
    });
    let mut false_alarms = 0;
    for (t, tr) in &pr.nodes[0].transitions {
        for l in 0..k {
            let expected = l == 1 && *t >= cut && *t < heal + 1_000 * MS;
            false_alarms += (tr.lossy & (1 << l) != 0 && !expected) as u32;
        }
    }
    (out, back, false_alarms)
}

/// Heartbeats a pair sends beyond the periodic ones (every link each
/// HBSPAN), per second and side, with link 1 of 2 lossy (20 % of the
/// frames sent from side `s` lost if `lossy[s]`) or not: loss probes,
/// reports asked for, probe rounds and their answers. A sends bursts of
/// `burst` data frames (0.25 ms apart) every `period` (None: idle after
/// the warm-up). `nodes[side]` is how many peers that side's node has,
/// each as this pair is: it probes a lossy link every
/// [`loss_probe_every`](ri2n_core::detector::loss_probe_every) of them,
/// and asks them for its `probe_shift`.
/// The first 10 s carry a frame every 0.25 ms, so that link 1 is out of
/// use for loss when the 30 s measured begin. Returns A's and B's extra
/// frames per second, B's probe rounds per second, whether link 1 was
/// out of use at A throughout (where it loses what A sends), link 1's
/// failures at A and B in the measured time, and with `heal` (no loss
/// after the warm-up), when each side used link 1 again.
#[allow(clippy::too_many_arguments)]
fn lossy_load(
    lossy: [bool; 2],
    heal: bool,
    burst: u32,
    period: Option<Duration>,
    nodes: [usize; 2],
    rng: &mut Rng,
    p: &Params,
) -> ([f64; 2], f64, bool, u32, [Option<u64>; 2]) {
    let k = 2usize;
    let sweep = sweep_period(p).0;
    let mut pr = Pair::new(k, *p, rng.next_u64());
    pr.delay = Duration::from_us(100).0;
    for side in 0..2 {
        pr.nodes[side].alike = nodes[side];
        pr.faults[side][1].loss = if lossy[side] { 0.2 } else { 0.0 };
    }
    let (warm, end) = (10_000 * MS, if heal { 610_000 * MS } else { 40_000 * MS });
    let gap = Duration::from_us(250).0;
    pr.stream(0, gap, warm);
    if heal {
        for side in 0..2 {
            pr.faults[side][1].loss = 0.0;
        }
    }
    let sent0 = [pr.nodes[0].hb_sent, pr.nodes[1].hb_sent];
    let ticks0 = [pr.nodes[0].hb_ticks, pr.nodes[1].hb_ticks];
    let fails0 = pr.nodes[0].peer.det.endpoints[1].fails + pr.nodes[1].peer.det.endpoints[1].fails;
    let (mut back, mut rounds, mut held, mut was_probing) = ([None::<u64>; 2], 0u64, true, false);
    let (mut next_burst, mut next_data, mut left) = (warm, u64::MAX, 0u32);
    while pr.now < end {
        let t = pr.now + sweep;
        // The bursts' frames due in this step, each at its time.
        loop {
            if left == 0 {
                match period {
                    Some(per) if next_burst <= t => {
                        left = burst;
                        next_data = next_burst;
                        next_burst += per.0;
                    }
                    _ => break,
                }
            }
            if next_data > t {
                break;
            }
            pr.run_until(next_data);
            pr.send_data(0, 1500);
            next_data += gap;
            left -= 1;
        }
        pr.run_until(t);
        let probing = pr.nodes[1].peer.det.probing();
        rounds += (probing && !was_probing) as u64;
        was_probing = probing;
        if heal {
            for (b, n) in back.iter_mut().zip(&pr.nodes) {
                if b.is_none() && n.peer.det.usable() & 2 != 0 {
                    // u64::MAX: in use when the cable healed.
                    *b = Some(if t - warm <= sweep {
                        u64::MAX
                    } else {
                        t - warm
                    });
                }
            }
            if back.iter().all(|b| b.is_some()) {
                break;
            }
        }
        // Out of use at A, whose data it would lose (B sends none, so it
        // has no loss of its own to measure but its heartbeats').
        if lossy[0] {
            held &= pr.nodes[0].peer.det.lossy() & 2 != 0;
        }
    }
    let secs = (pr.now - warm) as f64 / 1e9;
    let extra = |s: usize| {
        (pr.nodes[s].hb_sent - sent0[s])
            .saturating_sub((pr.nodes[s].hb_ticks - ticks0[s]) * k as u64) as f64
            / secs
    };
    let fails =
        pr.nodes[0].peer.det.endpoints[1].fails + pr.nodes[1].peer.det.endpoints[1].fails - fails0;
    (
        [extra(0), extra(1)],
        rounds as f64 / secs,
        held,
        fails,
        back,
    )
}

/// One restart trial: node 1 sends node 0 a packet every ms and restarts
/// (new epoch, numbering from 0) at a random time. Returns the ms until
/// node 0's window took the new epoch, and the packets of the new
/// incarnation that did not go up in order.
fn restart_trial(rng: &mut Rng, p: &Params) -> (u64, u64) {
    let mut pr = Pair::new(2, *p, rng.next_u64());
    pr.stream(1, MS, 3_000 * MS + rng.below(1_000 * MS));
    let (restart, first_new) = (pr.now, pr.sent(1));
    let in_order = pr.nodes[0].peer.rx.window.stats.in_order;
    pr.restart(1);
    pr.stream(1, MS, restart + 2_000 * MS);
    let a = &pr.nodes[0];
    let resync = a.restarts.first().expect("resynchronised").0 - restart;
    let new = a.up.iter().filter(|&&x| x >= first_new).count() as u64;
    let ordered = a.peer.rx.window.stats.in_order - in_order;
    (resync / MS, new.saturating_sub(ordered))
}

/// Median, 90th percentile and maximum, in ms.
fn dist(v: &mut [u64]) -> String {
    if v.is_empty() {
        return "never".into();
    }
    v.sort_unstable();
    let at = |q: f64| v[((v.len() - 1) as f64 * q) as usize] as f64 / 1e6;
    format!("{:.0} / {:.0} / {:.0}", at(0.5), at(0.9), at(1.0))
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let p = Params::default();
    let ns = [16usize, 256, 1024, 4096];
    let ks = [2usize, 4, 8];
    let packets = if quick { 200_000 } else { 2_000_000 };
    let trials = if quick { 40 } else { 200 };
    let (idle, busy) = bytes_per_peer();
    let (slots, nbufs) = capacity(p.peer_mem()).unwrap();

    println!("# ri2n-sim: N peers x K links (core at this commit)\n");
    println!("Parameters: the defaults (HBSPAN {} ms, FAST_TOUT {} ms, SLOW_TOUT {} ms, peer_mem {} bytes: {} peers, {} reorder buffers).",
        p.hbspan().as_ms(), p.fast_tout().as_ms(), p.slow_tout().as_ms(), p.peer_mem(), slots, nbufs);
    println!("Memory is the driver's layout: one `Peer` (slab object) + its table slot; a busy peer also holds an 8 KiB reorder buffer.");
    println!("Core ns per packet: table lookup + failure detector + reorder window for {packets} packets from");
    println!("peers picked at random, a quarter of them in swapped pairs, on this machine (one core; compare rows, not machines).");
    println!("Flood: 10 N frames from new source MACs, 10,000 a second, after the N peers heartbeat: live peers evicted by it (must be 0),");
    println!("and new peers it made (no more than the table's size per HBSPAN).");
    println!("Heartbeat frames: every peer on every link each HBSPAN (spread over 64 ticks), plus 10 count requests per second on");
    println!("each link of a busy peer (here: a tenth of the peers busy).\n");
    println!("| N | K | peers admitted | live peers evicted by a flood | peers the flood made | bytes / idle peer | bytes / busy peer | core ns / packet | buffers in use, peak | heartbeat frames / s |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for &n in &ns {
        let (adm, evicted, made) = admitted(n, &p);
        for &k in &ks {
            let (t, peak) = ns_per_packet(adm, k, packets, &p);
            let hb = hb_frames_per_s(adm, k, adm / 10, &p);
            println!(
                "| {n} | {k} | {adm} | {evicted} | {made} | {idle} | {busy} | {t:.0} | {peak} | {hb:.0} |"
            );
        }
    }
    println!("\nGoal: at most 2048 bytes per idle peer, cost per packet flat from 16 to 4096 peers, every");
    println!("peer admitted, no live peer evicted by a flood.\n");

    println!("## Detection and recovery of a dead link (link 1 of K), {trials} trials, ms: median / p90 / max\n");
    println!("Node 0 sends node 1 data; link 1 goes dead both ways. Detected: node 1 stops sending on it (its own verdict or");
    println!("node 0's, told in a heartbeat); back: node 1 sends on it again. Sweeps: node 1's runs per second.\n");
    println!("| K | traffic | detected after | back in use after | sweeps / s |");
    println!("|---|---|---|---|---|");
    let mut rng = Rng(42);
    for &k in &ks {
        for (name, gap) in [
            ("idle (heartbeats only)", None),
            ("1 packet / ms", Some(Duration::from_ms(1))),
            ("10 packets / ms", Some(Duration::from_us(100))),
        ] {
            let (mut det, mut rec, mut runs) = (Vec::new(), Vec::new(), 0.0);
            for _ in 0..trials {
                let (a, b, r) = trial(k, gap, &mut rng, &p);
                det.extend(a);
                rec.extend(b);
                runs += r / trials as f64;
            }
            println!(
                "| {k} | {name} | {} | {} | {runs:.0} |",
                dist(&mut det),
                dist(&mut rec)
            );
        }
    }

    let lp = p;
    println!(
        "\n## Lossy links (loss_thresh {} %), {} trials, ms: median / p90 / max\n",
        lp.loss_thresh_bp() as f64 / 100.0,
        trials / 4
    );
    println!("Two nodes, each running the engine (core/node.rs) for the other; one data frame every 0.25 ms from A");
    println!("(about 50 Mbit/s of MTU frames); link 1 loses frames both ways for 5 s; \"base\" is loss on every link");
    println!("throughout, as a congested bottleneck gives. False alarms: links taken for lossy that were not.\n");
    println!(
        "| K | link 1 loss | every link | out of use after | back after loss ends | false alarms |"
    );
    println!("|---|---|---|---|---|---|");
    let mut rng = Rng(7);
    for &k in &ks {
        for (loss, base) in [(0.20, 0.0), (0.01, 0.0), (0.20, 0.02), (0.0, 0.02)] {
            let (mut out, mut back, mut alarms) = (Vec::new(), Vec::new(), 0);
            for _ in 0..trials / 4 {
                let (o, b, f) = lossy_trial(k, loss, base, Duration::from_us(250), &mut rng, &lp);
                out.extend(o);
                back.extend(b);
                alarms += f;
            }
            let pct = |v: f64| format!("{:.0} %", v * 100.0);
            println!(
                "| {k} | {} | {} | {} | {} | {alarms} |",
                pct(loss),
                pct(base),
                dist(&mut out),
                dist(&mut back)
            );
        }
    }

    println!("\n## Heartbeats beyond the periodic ones, with a lossy cable, 2 links\n");
    println!("Node B's cable on link 1 loses 20 % of frames both ways (or only those B receives, \"toward B\", or only those");
    println!("it sends, \"from B\"), so link 1 is out of use for loss toward each of its N peers at the sending end of each lossy");
    println!("direction, and each peer A has that one lossy peer. A pair as above, 30 s measured after a 10 s warm-up; A sends");
    println!("B bursts of data frames 0.25 ms apart. Frames per second beyond the periodic heartbeats (loss probes, counts");
    println!("asked for, probe rounds, answers): each side's per peer, and B's whole node (N peers alike): sent, and");
    println!("received from its peers. B probes each lossy link every `loss_probe_every(N)`, and its heartbeats ask the peers");
    println!("(`probe_shift`) to probe it no more often; A alone would probe every `loss_probe_every(1)`, 5 ms.");
    println!("Rounds: B's probe rounds per second per peer (link 1 asked as a witness when link 0 falls silent after a burst).");
    println!("Failures: times link 1 was failed (nothing arrived for too long) at A or B in the 30 s; it never dies here.");
    println!("\"From B\": B sends no data, so it has too few frames of its own to find its link lossy, and A, whose frames get");
    println!("through, keeps link 1 in use: A's probe rounds, when B's heartbeats come on one link and not yet on the other,");
    println!("fail link 1 whenever B's answer there is lost (the failures; a retry brings it back within HBSPAN / 8).\n");
    println!("| N | link 1 | traffic from A | A frames / s | B frames / s / peer | B rounds / s / peer | node B sends / s | node B receives / s | link 1 out of use at A throughout | link 1 failures |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    // Its own generator: the restarts below draw from the lossy trials'.
    let mut hb_rng = Rng(11);
    let traffic: [(&str, u32, Option<Duration>); 4] = [
        ("idle", 0, None),
        ("1 frame / 20 ms", 1, Some(Duration::from_ms(20))),
        ("10 frames / 200 ms", 10, Some(Duration::from_ms(200))),
        ("1 frame / ms", 1, Some(Duration::from_ms(1))),
    ];
    // Which of A's and B's frames link 1 loses.
    let cables: [(&str, [bool; 2]); 4] = [
        ("lossy", [true, true]),
        ("healthy", [false, false]),
        ("lossy toward B", [true, false]),
        ("lossy from B", [false, true]),
    ];
    for n in [16usize, 320, 1024, 4096] {
        for (cable, lossy) in cables {
            let one_way = lossy[0] != lossy[1];
            if (cable == "healthy" && n != 16) || (one_way && n == 320) {
                continue; // no lossy link: the same at every N
            }
            for (name, burst, period) in traffic {
                if one_way && burst == 10 {
                    continue;
                }
                let (f, r, held, fails, _) =
                    lossy_load(lossy, false, burst, period, [1, n], &mut hb_rng, &p);
                println!("| {n} | {cable} | {name} | {:.1} | {:.1} | {r:.2} | {:.0} | {:.0} | {} | {fails} |",
                    f[0], f[1], f[1] * n as f64, f[0] * n as f64,
                    if lossy[0] { if held { "yes" } else { "no" } } else { "–" });
            }
        }
    }

    println!("\nThe cable heals (no more loss) after the warm-up: seconds until each side uses link 1 again (a sample of");
    println!("200 clean frames, or 400 in a row), at most 600 s; one trial each. \"Never out\": B sends no data, and A's");
    println!("probes, spaced as B's `probe_shift` asks, bring it too few answers to find its own link lossy; so B sends no");
    println!("probes, and A samples link 1 with its own alone.\n");
    println!("| N | traffic from A | A back after (s) | B back after (s) |");
    println!("|---|---|---|---|");
    for n in [16usize, 320, 1024, 4096] {
        for (name, burst, period) in [traffic[0], traffic[2]] {
            let (.., back) = lossy_load([true; 2], true, burst, period, [1, n], &mut hb_rng, &p);
            let s = |b: Option<u64>| match b {
                None => "> 600".to_string(),
                Some(u64::MAX) => "never out".to_string(),
                Some(b) => format!("{:.1}", b as f64 / 1e9),
            };
            println!("| {n} | {name} | {} | {} |", s(back[0]), s(back[1]));
        }
    }

    println!("\n## Restarts, {trials} trials\n");
    println!("A peer sending 1 packet/ms restarts (new epoch, numbering from 0); a new peer is heartbeaten at once (`Peer::start`).\n");
    let (mut resync, mut ooo) = (Vec::new(), Vec::new());
    for _ in 0..trials {
        let (r, o) = restart_trial(&mut rng, &p);
        resync.push(r * 1_000_000);
        ooo.push(o * 1_000_000);
    }
    println!("| resynchronised after (ms) | packets out of order before that |");
    println!("|---|---|");
    println!("| {} | {} |", dist(&mut resync), dist(&mut ooo));
    let _ = Param::ALL;
}
