// SPDX-License-Identifier: GPL-2.0

//! ri2n-sim: one node's view of N peers over K links, in simulated time,
//! on the same core files the module compiles (`core/`).
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

use ri2n_core::detector::Detector;
use ri2n_core::header::Counts;
use ri2n_core::heap::{table, Buf, HeapBufs};
use ri2n_core::params::{Param, Params};
use ri2n_core::peers::{capacity, idle_limit, BUF_BYTES, PER_PEER_BYTES};
use ri2n_core::sched::RoundRobin;
use ri2n_core::seq::Seq;
use ri2n_core::time::{Duration, Instant};
use std::time::Instant as Wall;

/// The driver's per-peer state (`core/peers.rs`), with an 8-byte packet
/// handle as the sk_buff pointer.
type Peer = ri2n_core::peers::Peer<u64, Buf<u64>>;

fn new_peer(links: usize, now: Instant) -> Box<Peer> {
    let mut p: Box<Peer> = Box::default();
    p.det.start(links, now);
    p
}

/// A small deterministic generator (xorshift64*), so runs repeat.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
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
/// `peer_mem`; returns how many fit, and how many of 10 n new source MACs
/// (a flood, one frame each) then evict a live peer (must be 0).
fn admitted(n: usize, p: &Params) -> (usize, usize) {
    let (slots, _) = capacity(p.peer_mem()).unwrap();
    let mut t = table::<Box<Peer>>(slots, 0x1234_5678);
    let now = Instant(0);
    let adm = (0..n)
        .filter(|&i| match t.insert(&mac(i), now, Box::default()) {
            Ok(s) => {
                t.touch(s, now, true);
                true
            }
            Err(_) => false,
        })
        .count();
    let mut evicted_live = 0;
    for i in 0..10 * n {
        let m = [0x06, 0x66, (i >> 24) as u8, (i >> 16) as u8, (i >> 8) as u8, i as u8];
        if t.lookup(&m).is_none() && t.len() >= t.capacity() {
            match t.victim(now, idle_limit(p)) {
                Some(v) if t.is_known(v) => {
                    evicted_live += 1;
                    t.remove(v);
                }
                Some(v) => {
                    t.remove(v);
                }
                None => continue,
            }
        }
        let _ = t.insert(&m, now, Box::default());
    }
    (adm, evicted_live)
}

/// ns per received data packet, and the most reorder buffers out at once:
/// for packets from peers picked at random among `n`, on `k` links, a
/// quarter of the pairs swapped (so windows hold and give buffers back):
/// table lookup and touch, `Detector::data`, `PeerRx::data` (window, loss
/// rule, FAST_TOUT check, buffer pool).
fn ns_per_packet(n: usize, k: usize, packets: usize, p: &Params) -> (f64, usize) {
    let (slots, nbufs) = capacity(p.peer_mem()).unwrap();
    let mut t = table::<Box<Peer>>(slots, 0x1234_5678);
    let mut bufs = HeapBufs::new(nbufs);
    let mut seqs = vec![0u32; n];
    for i in 0..n {
        t.insert(&mac(i), Instant(0), new_peer(k, Instant(0))).map_err(|_| ()).expect("room");
    }
    let macs: Vec<[u8; 6]> = (0..n).map(mac).collect();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let order: Vec<(usize, bool)> = (0..packets / 2).map(|_| (rng.below(n as u64) as usize, rng.below(4) == 0)).collect();
    let mut delivered = 0u64;
    let start = Wall::now();
    for (i, &(who, swap)) in order.iter().enumerate() {
        let now = Instant(i as u64 * 2_000);
        let slot = t.lookup(&macs[who]).expect("known");
        t.touch(slot, now, false);
        let peer = t.get_mut(slot).expect("state");
        let seq = seqs[who];
        seqs[who] = seq.wrapping_add(2);
        let pair = if swap { [seq.wrapping_add(1), seq] } else { [seq, seq.wrapping_add(1)] };
        for s in pair {
            let link = s as usize % k;
            peer.det.data(link, now, p);
            let active = peer.det.active();
            if peer.rx.data(link, Seq(s), s as u64, now, active, p, &mut bufs, &mut |_| delivered += 1).is_some() {
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

/// One trial: a peer sending data every `gap` (None: idle, heartbeats only)
/// round-robin over `k` links; link 1 dies at `cut` and heals at `heal`.
/// Returns (detection, recovery) times, as our detector (probes answered
/// after `rtt`) sees them, and the sweep's runs per second. The sweep runs
/// as the driver's does (ri2n_hb.rs): at the peer's next deadline, no
/// sooner than FAST_TOUT/4 after the last or an event, no later than 63 ms.
fn trial(k: usize, gap: Option<Duration>, rng: &mut Rng, p: &Params) -> (Option<u64>, Option<u64>, f64) {
    let ms = |v: u64| Duration::from_ms(v).0;
    let rtt = Duration::from_us(200).0;
    let hbspan = p.hbspan().0;
    // The peer's heartbeats leave on every link at once (`State::hb_tick`).
    let phase: Vec<u64> = vec![rng.below(hbspan); k];
    let cut = ms(10_000) + rng.below(hbspan);
    let heal = cut + ms(10_000);
    let end = heal + ms(10_000);
    let sweep = (p.fast_tout().0 / 4).max(ms(1));
    let mut d = Detector::new(k, Instant(0));
    let mut rr = RoundRobin::default();
    let works = |l: usize, t: u64| !(l == 1 && t >= cut && t < heal);
    let (mut detected, mut recovered) = (None, None);
    let mut answers: Vec<(u64, usize)> = Vec::new();
    let mut next_data = gap.map_or(u64::MAX, |g| g.0);
    let mut next_hb: Vec<u64> = phase.clone();
    let up = ((1u16 << k) - 1) as u8;
    let every = ri2n_core::detector::loss_probe_every(0);
    let (mut t, mut sweeps) = (0u64, 0u64);
    let note = |d: &Detector, at: u64, detected: &mut Option<u64>, recovered: &mut Option<u64>| {
        let failed = d.endpoints[1].failed;
        if detected.is_none() && at >= cut && failed {
            *detected = Some(at - cut);
        }
        if recovered.is_none() && at >= heal && !failed && detected.is_some() {
            *recovered = Some(at - heal);
        }
    };
    while t < end {
        // The peer's data and heartbeats due by t, in time order.
        loop {
            let (hb_l, hb_t) = next_hb.iter().enumerate().map(|(l, &v)| (l, v)).min_by_key(|&(_, v)| v).unwrap();
            let ans = answers.iter().enumerate().min_by_key(|(_, &(v, _))| v).map(|(i, &(v, l))| (i, v, l));
            let first = [Some(next_data), Some(hb_t), ans.map(|a| a.1)].into_iter().flatten().min().unwrap();
            if first > t {
                break;
            }
            if first == next_data {
                let usable = d.usable() & ((1u16 << k) - 1) as u8;
                // The peer sends on the links it believes in: its view is
                // ours (one-way failures are told in heartbeats).
                let usable = if usable == 0 { 1 } else { usable };
                // As the driver chooses: by bytes (frames of one size alternate).
                rr.at(Instant(first), p.level_after());
                if let Some(l) = rr.pick_block(usable, usable, Some((1, 1500)), 1500) {
                    if works(l, first) {
                        d.data(l, Instant(first), p);
                    }
                }
                next_data += gap.map_or(u64::MAX, |g| g.0);
            } else if first == hb_t {
                if works(hb_l, first) {
                    d.heartbeat(hb_l, Instant(first), hb_l, 0, p);
                }
                next_hb[hb_l] += hbspan;
            } else if let Some((i, at, l)) = ans {
                if at == first {
                    answers.swap_remove(i);
                    if works(l, at) {
                        d.heartbeat(l, Instant(at), l, 0, p);
                    }
                }
            }
            note(&d, first, &mut detected, &mut recovered);
            // Receive pulls the sweep when the peer's deadline moved up.
            if let Some(due) = d.next_due(Instant(first), up, p, every) {
                t = t.min(due.0.max(first + sweep));
            }
        }
        // Our sweep at t.
        sweeps += 1;
        let probe = d.probe_due(Instant(t), up, p) | d.retry_due(Instant(t), up, p);
        for l in 0..k {
            if probe & (1 << l) != 0 && works(l, t) {
                answers.push((t + rtt, l));
            }
        }
        d.probe_end(Instant(t), p);
        note(&d, t, &mut detected, &mut recovered);
        let next = d.next_due(Instant(t), up, p, every).map_or(u64::MAX, |n| n.0);
        t = next.min(t + ms(63)).max(t + sweep);
    }
    (detected, recovered, sweeps as f64 * 1e9 / end as f64)
}

/// Two nodes' views of each other over `k` links, each a FIFO with a
/// one-way delay: A sends data at a steady rate over the links A's
/// detector lets it use, both send heartbeats every HBSPAN on every link
/// and the probes their detectors ask for, and each answers the other's
/// probes, with the frame counts the driver puts in them. Frames on a link
/// are lost at random at the rate `loss(link, t)` gives.
struct Pair {
    det: [Detector; 2],
    /// Frames in flight: (arrival, from, link, what).
    flight: Vec<(u64, usize, usize, Frame)>,
    next_hb: [Vec<u64>; 2],
    pending_answer: [u8; 2],
    /// What each side's heartbeats ask of the other (`probe_shift`).
    shift: [u8; 2],
}

#[derive(Clone, Copy)]
enum Frame {
    Data,
    Heartbeat { counts: Counts, probe: bool, down: u8, shift: u8, lossy: bool },
}

impl Pair {
    fn new(k: usize, rng: &mut Rng, p: &Params) -> Pair {
        let hbspan = p.hbspan().0;
        // One phase a side for all its links: the driver's heartbeat tick
        // sends a peer's on every link at once (`State::hb_tick`).
        let phases = |rng: &mut Rng| vec![rng.below(hbspan); k];
        Pair {
            det: [Detector::new(k, Instant(0)), Detector::new(k, Instant(0))],
            flight: Vec::new(),
            next_hb: [phases(rng), phases(rng)],
            pending_answer: [0; 2],
            shift: [0; 2],
        }
    }

    fn send(&mut self, t: u64, from: usize, link: usize, frame: Frame, delay: u64, lost: bool) {
        // Frames sent on one link arrive in order: a FIFO.
        let at = self.flight.iter().filter(|f| f.1 == from && f.2 == link).map(|f| f.0).max().unwrap_or(0).max(t + delay);
        self.det[from].sent(link);
        if !lost {
            self.flight.push((at, from, link, frame));
        }
    }

    /// A's data frame at `at`, on the link `rr` picks among those A may
    /// send on (`all` up); `lost` says whether the link loses it.
    #[allow(clippy::too_many_arguments)]
    fn send_data(&mut self, rr: &mut RoundRobin, at: u64, all: u8, delay: u64, p: &Params, lost: impl FnOnce(usize) -> bool) {
        let usable = self.det[0].sendable(all);
        rr.at(Instant(at), p.level_after());
        if let Some(l) = rr.pick_block(usable, usable, Some((1, 1500)), 1500) {
            let drop = lost(l);
            self.send(at, 0, l, Frame::Data, delay, drop);
        }
    }

    fn heartbeat(&mut self, t: u64, from: usize, link: usize, probe: bool, delay: u64, lost: bool) {
        let counts = self.det[from].counts(link).expect("counts");
        let down = self.det[from].failed();
        let shift = self.shift[from];
        let lossy = self.det[from].lossy() & (1 << link) != 0;
        self.det[from].asked_probe_shift(shift);
        self.send(t, from, link, Frame::Heartbeat { counts, probe, down, shift, lossy }, delay, lost);
    }

    /// Delivers what arrived by `t`, in order of arrival (and of sending,
    /// on one link).
    fn deliver(&mut self, t: u64, p: &Params) {
        let mut due: Vec<_> = Vec::new();
        self.flight.retain(|f| {
            if f.0 <= t {
                due.push(*f);
            }
            f.0 > t
        });
        due.sort_by_key(|f| f.0); // stable: a link's frames keep their order
        for (at, from, link, frame) in due {
            let to = 1 - from;
            let now = Instant(at);
            match frame {
                Frame::Data => {
                    self.det[to].data(link, now, p);
                }
                Frame::Heartbeat { counts, probe, down, shift, lossy } => {
                    self.det[to].peer_probe_shift(shift);
                    self.det[to].peer_lossy_link(link, lossy);
                    self.det[to].report(link, counts, now, p);
                    self.det[to].heartbeat(link, now, link, down, p);
                    if probe {
                        self.pending_answer[to] |= 1 << link;
                    }
                }
            }
        }
    }
}

/// One lossy-link trial: link 1 of `k` loses `loss` of its frames (both
/// ways) from `cut` to `heal`; every link loses `base` throughout (a
/// congested bottleneck). A sends one data frame every `gap`. Returns when
/// A took link 1 out of use after `cut`, when it was back after `heal`,
/// and how many times any link went lossy outside `cut..heal + 1 s` (false
/// alarms).
fn lossy_trial(k: usize, loss: f64, base: f64, gap: Duration, rng: &mut Rng, p: &Params) -> (Option<u64>, Option<u64>, u32) {
    let ms = |v: u64| Duration::from_ms(v).0;
    let delay = Duration::from_us(100).0;
    let hbspan = p.hbspan().0;
    let sweep = (p.fast_tout().0 / 4).max(ms(1));
    let cut = ms(5_000) + rng.below(hbspan);
    let heal = cut + ms(5_000);
    let end = heal + ms(5_000);
    let mut pair = Pair::new(k, rng, p);
    let mut rr = RoundRobin::default();
    let all = ((1u16 << k) - 1) as u8;
    let (mut out, mut back, mut false_alarms) = (None, None, 0u32);
    let mut was_lossy = 0u8;
    let mut next_data = 0u64;
    let mut t = 0u64;
    while t < end {
        let lost = |l: usize, at: u64, rng: &mut Rng| {
            let rate = base + if l == 1 && at >= cut && at < heal { loss } else { 0.0 };
            (rng.below(1_000_000) as f64) < rate * 1e6
        };
        while next_data <= t {
            pair.send_data(&mut rr, next_data, all, delay, p, |l| lost(l, next_data, rng));
            next_data += gap.0;
        }
        for side in 0..2 {
            for l in 0..k {
                if pair.next_hb[side][l] <= t {
                    pair.next_hb[side][l] += hbspan;
                    let drop = lost(l, t, rng);
                    pair.heartbeat(t, side, l, false, delay, drop);
                }
            }
        }
        pair.deliver(t, p);
        // Each side's sweep: probes and reports asked for, answers.
        for side in 0..2 {
            let d = &mut pair.det[side];
            let probe = d.probe_due(Instant(t), all, p) | d.retry_due(Instant(t), all, p) | d.report_due(Instant(t), all, p);
            d.probe_end(Instant(t), p);
            let answer = std::mem::take(&mut pair.pending_answer[side]);
            for l in 0..k {
                if (probe | answer) & (1 << l) != 0 {
                    let drop = lost(l, t, rng);
                    pair.heartbeat(t, side, l, probe & (1 << l) != 0, delay, drop);
                }
            }
        }
        let lossy = pair.det[0].lossy();
        let newly = lossy & !was_lossy;
        was_lossy = lossy;
        if newly != 0 {
            let expected = newly == 1 << 1 && t >= cut && t < heal + ms(1_000);
            if !expected {
                false_alarms += newly.count_ones();
            }
        }
        if out.is_none() && t >= cut && t < heal && lossy & (1 << 1) != 0 {
            out = Some(t - cut);
        }
        if back.is_none() && t >= heal && out.is_some() && pair.det[0].usable() & (1 << 1) != 0 {
            back = Some(t - heal);
        }
        t += sweep;
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
/// frames per second, B's probe rounds per second, and whether link 1 was
/// out of use at A throughout (where it loses what A sends).
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
    let ms = |v: u64| Duration::from_ms(v).0;
    let (k, delay, hbspan) = (2usize, Duration::from_us(100).0, p.hbspan().0);
    let sweep = (p.fast_tout().0 / 4).max(ms(1));
    let every = nodes.map(ri2n_core::detector::loss_probe_every);
    // Healing: the cable loses nothing from the warm-up's end; how long
    // until each side uses link 1 again (at most 600 s).
    let (warm, end) = (ms(10_000), if heal { ms(610_000) } else { ms(40_000) });
    let mut back = [None::<u64>; 2];
    let mut pair = Pair::new(k, rng, p);
    let mut rr = RoundRobin::default();
    let all = ((1u16 << k) - 1) as u8;
    let (mut extra, mut rounds, mut held) = ([0u64; 2], 0u64, true);
    let mut was_probing = false;
    let mut fails_at_warm = None::<u32>;
    let (mut next_burst, mut next_data, mut left) = (0u64, 0u64, 0u32);
    let mut t = 0u64;
    while t < end {
        let lost = |from: usize, l: usize, rng: &mut Rng| lossy[from] && l == 1 && !(heal && t >= warm) && rng.below(5) == 0;
        // The warm-up's steady stream, then the bursts.
        if t < warm {
            while next_data <= t {
                pair.send_data(&mut rr, next_data, all, delay, p, |l| lost(0, l, rng));
                next_data += Duration::from_us(250).0;
            }
            next_burst = warm;
        } else if let Some(period) = period {
            loop {
                if left == 0 {
                    if next_burst > t {
                        break;
                    }
                    left = burst;
                    next_data = next_burst;
                    next_burst += period.0;
                }
                if next_data > t {
                    break;
                }
                pair.send_data(&mut rr, next_data, all, delay, p, |l| lost(0, l, rng));
                next_data += Duration::from_us(250).0;
                left -= 1;
            }
        }
        for side in 0..2 {
            for l in 0..k {
                if pair.next_hb[side][l] <= t {
                    pair.next_hb[side][l] += hbspan;
                    let drop = lost(side, l, rng);
                    pair.heartbeat(t, side, l, false, delay, drop);
                }
            }
        }
        pair.deliver(t, p);
        for side in 0..2 {
            // A node asks its peers to slow down once it has that many
            // with a lossy link, or that many probing it (N alike: once
            // this pair's is, `nodes[side]` peers).
            let d = &pair.det[side];
            let count = |mask: u8| if mask != 0 { nodes[side] } else { 0 };
            pair.shift[side] = ri2n_core::detector::node_probe_shift(count(d.lossy()), count(d.peer_lossy()));
            let d = &mut pair.det[side];
            let probe = d.probe_due(Instant(t), all, p)
                | d.retry_due(Instant(t), all, p)
                | d.report_due_every(Instant(t), all, p, every[side]);
            d.probe_end(Instant(t), p);
            if side == 1 && t >= warm {
                let probing = d.probing();
                rounds += (probing && !was_probing) as u64;
                was_probing = probing;
            }
            let answer = std::mem::take(&mut pair.pending_answer[side]);
            for l in 0..k {
                if (probe | answer) & (1 << l) != 0 {
                    if t >= warm {
                        extra[side] += 1;
                    }
                    let drop = lost(side, l, rng);
                    pair.heartbeat(t, side, l, probe & (1 << l) != 0, delay, drop);
                }
            }
        }
        if t >= warm && fails_at_warm.is_none() {
            fails_at_warm = Some(pair.det[0].endpoints[1].fails + pair.det[1].endpoints[1].fails);
        }
        if heal && t >= warm {
            for side in 0..2 {
                if back[side].is_none() && pair.det[side].usable() & (1 << 1) != 0 {
                    // u64::MAX: in use when the cable healed.
                    back[side] = Some(if t - warm < sweep { u64::MAX } else { t - warm });
                }
            }
            if back.iter().all(|b| b.is_some()) {
                break;
            }
        }
        // Out of use at A, whose data it would lose (B sends none, so
        // it has no loss of its own to measure but its heartbeats').
        if t >= warm && lossy[0] {
            held &= pair.det[0].lossy() & (1 << 1) != 0;
        }
        t += sweep;
    }
    let secs = (end - warm) as f64 / 1e9;
    let fails = pair.det[0].endpoints[1].fails + pair.det[1].endpoints[1].fails - fails_at_warm.unwrap_or(0);
    ([extra[0] as f64 / secs, extra[1] as f64 / secs], rounds as f64 / secs, held, fails, back)
}

/// One restart trial: a peer sending one packet every ms restarts (new
/// epoch, numbering from 0) at a random time and heartbeats at once (a
/// new peer to it), from its next sweep. Returns the ms until our window
/// resynchronised, and the packets of the new incarnation that went up out
/// of order before it did.
fn restart_trial(rng: &mut Rng, p: &Params) -> (u64, u64) {
    use ri2n_core::rx::PeerRx;
    let ms = |v: u64| Duration::from_ms(v).0;
    let mut rx: PeerRx<u64, Buf<u64>> = PeerRx::default();
    let mut bufs = HeapBufs::new(4);
    let sweep = (p.fast_tout().0 / 4).max(ms(1));
    let first_seq = rng.below(1 << 32) as u32;
    let restart = ms(3_000) + rng.below(ms(1_000));
    let hb_at = restart + rng.below(sweep);
    let mut up = Vec::new();
    rx.heartbeat(0, Seq(first_seq), 1, Instant(0), 0b11, p, &mut bufs, &mut |v| up.push(v));
    let mut seq = first_seq;
    let mut t = ms(1);
    let mut out_of_order = 0;
    let (mut hb_done, mut restarted) = (false, false);
    while t < restart + ms(2_000) {
        if t >= restart && !restarted {
            restarted = true;
            seq = 0; // the new incarnation
        }
        if !hb_done && t >= hb_at {
            rx.heartbeat(0, Seq(seq), 2, Instant(hb_at), 0b11, p, &mut bufs, &mut |v| up.push(v));
            hb_done = true;
        }
        let before = rx.window.stats.in_order;
        rx.data((seq % 2) as usize, Seq(seq), seq as u64, Instant(t), 0b11, p, &mut bufs, &mut |v| up.push(v));
        if t >= restart && rx.window.stats.in_order == before {
            out_of_order += 1;
        }
        seq = seq.wrapping_add(1);
        t += ms(1);
    }
    assert_eq!(rx.epoch, 2, "resynchronised");
    ((hb_at - restart) / ms(1), out_of_order)
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
    println!("Flood: 10 N frames from new source MACs after the N peers heartbeat; live peers evicted by it (must be 0).");
    println!("Heartbeat frames: every peer on every link each HBSPAN (spread over 64 ticks), plus 10 count requests per second on");
    println!("each link of a busy peer (here: a tenth of the peers busy).\n");
    println!("| N | K | peers admitted | live peers evicted by a flood | bytes / idle peer | bytes / busy peer | core ns / packet | buffers in use, peak | heartbeat frames / s |");
    println!("|---|---|---|---|---|---|---|---|---|");
    for &n in &ns {
        let (adm, evicted) = admitted(n, &p);
        for &k in &ks {
            let (t, peak) = ns_per_packet(adm, k, packets, &p);
            let hb = hb_frames_per_s(adm, k, adm / 10, &p);
            println!("| {n} | {k} | {adm} | {evicted} | {idle} | {busy} | {t:.0} | {peak} | {hb:.0} |");
        }
    }
    println!("\nGoal (issue 10): at most 2048 bytes per idle peer, cost per packet flat from 16 to 4096 peers, every");
    println!("peer admitted, no live peer evicted by a flood.\n");

    println!("## Detection and recovery of a dead link (link 1 of K), {trials} trials, ms: median / p90 / max\n");
    println!("| K | traffic | detected after | back in use after | sweeps / s |");
    println!("|---|---|---|---|---|");
    let mut rng = Rng(42);
    for &k in &ks {
        for (name, gap) in [("idle (heartbeats only)", None), ("1 packet / ms", Some(Duration::from_ms(1))), ("10 packets / ms", Some(Duration::from_us(100)))] {
            let (mut det, mut rec, mut runs) = (Vec::new(), Vec::new(), 0.0);
            for _ in 0..trials {
                let (a, b, r) = trial(k, gap, &mut rng, &p);
                det.extend(a);
                rec.extend(b);
                runs += r / trials as f64;
            }
            println!("| {k} | {name} | {} | {} | {runs:.0} |", dist(&mut det), dist(&mut rec));
        }
    }

    let lp = p;
    println!("\n## Lossy links (loss_thresh {} %), {} trials, ms: median / p90 / max\n", lp.loss_thresh_bp() as f64 / 100.0, trials / 4);
    println!("Two nodes, each side's detector and counts as the driver runs them; one data frame every 0.25 ms from A");
    println!("(about 50 Mbit/s of MTU frames); link 1 loses frames both ways for 5 s; \"base\" is loss on every link");
    println!("throughout, as a congested bottleneck gives. False alarms: links taken for lossy that were not.\n");
    println!("| K | link 1 loss | every link | out of use after | back after loss ends | false alarms |");
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
            println!("| {k} | {} | {} | {} | {} | {alarms} |", pct(loss), pct(base), dist(&mut out), dist(&mut back));
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
    let cables: [(&str, [bool; 2]); 4] =
        [("lossy", [true, true]), ("healthy", [false, false]), ("lossy toward B", [true, false]), ("lossy from B", [false, true])];
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
                let (f, r, held, fails, _) = lossy_load(lossy, false, burst, period, [1, n], &mut hb_rng, &p);
                println!("| {n} | {cable} | {name} | {:.1} | {:.1} | {r:.2} | {:.0} | {:.0} | {} | {fails} |",
                    f[0], f[1], f[1] * n as f64, f[0] * n as f64,
                    if lossy[0] { if held { "yes" } else { "no" } } else { "–" });
            }
        }
    }

    println!("\nThe cable heals (no more loss) after the warm-up: seconds until each side uses link 1 again (a sample of");
    println!("200 clean frames, or 400 in a row), at most 600 s; one trial each. \"Never out\": B sends no data, and A's");
    println!("probes, spaced as B's `probe_shift` asks, bring it too few answers to find its own link lossy; so B sends no");
    println!("probes, and A samples link 1 with its own alone (at 8877399, when A's probes every 5 ms in the warm-up made B");
    println!("find it lossy first: 24 / 59 / 195 s idle at 320 / 1,024 / 4,096 peers).\n");
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
    println!("A peer sending 1 packet/ms restarts (new epoch, numbering from 0); its first heartbeat follows at its next sweep.\n");
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
