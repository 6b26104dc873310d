//! ns per packet of the reorder window (`core/window.rs` through
//! `PeerRx::data`, the per-packet path the driver runs: window, loss
//! detector, FAST_TOUT check) against the paper's scheme, a sorted linked
//! list walked on every arrival (§5.5), for the same arrivals:
//!
//! - in order: one link;
//! - 2 links, skew 12: round-robin, link 1's packets arrive 12 packets late
//!   (what the paper saw on 2 x GbE);
//! - 2 links, skew 300: the same, 300 late (MAXBUF).
//!
//! Run with `cargo bench -p ri2n-core` (or `make bench-core`); prints a table.

use ri2n_core::params::{Param, Params};
use ri2n_core::rx::PeerRx;
use ri2n_core::seq::Seq;
use ri2n_core::time::Instant;
use std::hint::black_box;

/// The paper's reorder buffer: a list sorted by sequence number, with the
/// arrival time of each packet; on every arrival the packet is inserted in
/// order, then the list is walked from its head, handing up what is in
/// order or older than FAST_TOUT (the mark advances to it), as §5.5 says.
/// Nodes live in an arena with a free list, so neither side allocates.
struct SortedList {
    next: Vec<u32>,
    seq: Vec<u32>,
    arrived: Vec<u64>,
    pkt: Vec<u64>,
    head: u32,
    free: u32,
    len: usize,
    expected: u32,
    started: bool,
}

const NIL: u32 = u32::MAX;

impl SortedList {
    fn new(cap: usize) -> Self {
        SortedList {
            next: (1..=cap as u32)
                .map(|i| if i as usize == cap { NIL } else { i })
                .collect(),
            seq: vec![0; cap],
            arrived: vec![0; cap],
            pkt: vec![0; cap],
            head: NIL,
            free: 0,
            len: 0,
            expected: 0,
            started: false,
        }
    }

    fn receive(
        &mut self,
        s: u32,
        now: u64,
        p: u64,
        fast_tout: u64,
        maxbuf: usize,
        up: &mut impl FnMut(u64),
    ) {
        if !self.started {
            self.started = true;
            self.expected = s;
        }
        if (s.wrapping_sub(self.expected) as i32) < 0 {
            up(p);
            return;
        }
        if self.len == maxbuf {
            self.flush(up);
        }
        // Insert in order: walk from the head (O(held)).
        let n = self.free;
        self.free = self.next[n as usize];
        self.seq[n as usize] = s;
        self.arrived[n as usize] = now;
        self.pkt[n as usize] = p;
        let mut prev = NIL;
        let mut cur = self.head;
        while cur != NIL && (self.seq[cur as usize].wrapping_sub(s) as i32) < 0 {
            prev = cur;
            cur = self.next[cur as usize];
        }
        self.next[n as usize] = cur;
        if prev == NIL {
            self.head = n;
        } else {
            self.next[prev as usize] = n;
        }
        self.len += 1;
        // Walk the whole list: in-order packets go up; so does an expired
        // one, with everything before it.
        let mut last_expired = NIL;
        let mut cur = self.head;
        while cur != NIL {
            if now - self.arrived[cur as usize] >= fast_tout {
                last_expired = cur;
            }
            cur = self.next[cur as usize];
        }
        if last_expired != NIL {
            let upto = self.seq[last_expired as usize];
            self.expected = upto.wrapping_add(1);
            while self.head != NIL && (self.seq[self.head as usize].wrapping_sub(upto) as i32) <= 0
            {
                let h = self.pop();
                up(h);
            }
        }
        while self.head != NIL && self.seq[self.head as usize] == self.expected {
            self.expected = self.expected.wrapping_add(1);
            let h = self.pop();
            up(h);
        }
    }

    fn pop(&mut self) -> u64 {
        let h = self.head;
        self.head = self.next[h as usize];
        self.next[h as usize] = self.free;
        self.free = h;
        self.len -= 1;
        self.pkt[h as usize]
    }

    fn flush(&mut self, up: &mut impl FnMut(u64)) {
        while self.head != NIL {
            let s = self.seq[self.head as usize];
            self.expected = s.wrapping_add(1);
            let h = self.pop();
            up(h);
        }
    }
}

/// (link, seq) arrivals: round-robin over `links`, link 1 `skew` packets late.
fn arrivals(n: u32, links: u32, skew: u32) -> Vec<(usize, u32)> {
    let mut ev: Vec<(u64, usize, u32)> = (0..n)
        .map(|s| {
            let link = (s % links) as usize;
            let t = s as u64 * 2 + if link == 1 { skew as u64 * 2 + 1 } else { 0 };
            (t, link, s)
        })
        .collect();
    ev.sort_unstable();
    ev.into_iter().map(|(_, l, s)| (l, s)).collect()
}

fn time_ns(mut f: impl FnMut() -> u64, n: usize) -> f64 {
    let mut best = f64::MAX;
    for _ in 0..7 {
        let t = std::time::Instant::now();
        black_box(f());
        best = best.min(t.elapsed().as_nanos() as f64 / n as f64);
    }
    best
}

fn main() {
    const N: u32 = 1 << 20;
    let p = Params::from_values(&[(Param::Maxbuf, 511)]).unwrap();
    let fast = p.fast_tout();
    println!(
        "reorder window vs the paper's sorted list, {} packets per run, best of 7",
        N
    );
    println!();
    println!(
        "| traffic              | window ns/pkt | sorted list ns/pkt | list / window | held max |"
    );
    println!(
        "|----------------------|--------------:|-------------------:|--------------:|---------:|"
    );
    for (name, links, skew) in [
        ("in order, 1 link", 1, 0),
        ("2 links, skew 12", 2, 12),
        ("2 links, skew 300", 2, 300),
    ] {
        let ev = arrivals(N, links, skew);
        let active = ((1u16 << links) - 1) as u8;
        let mut held_max = 0;
        let window = time_ns(
            || {
                let mut rx: Box<PeerRx<u64, ri2n_core::heap::Buf<u64>>> = Box::default();
                let mut bufs = ri2n_core::heap::HeapBufs::default();
                let mut sum = 0u64;
                for (i, &(link, s)) in ev.iter().enumerate() {
                    // 1 µs between arrivals: nothing reaches FAST_TOUT.
                    let now = Instant(i as u64 * 1000);
                    rx.data(
                        link,
                        Seq(s),
                        s as u64,
                        now,
                        active,
                        &p,
                        &mut bufs,
                        &mut |x| sum = sum.wrapping_add(x),
                    );
                    held_max = held_max.max(rx.window.held());
                }
                sum
            },
            ev.len(),
        );
        let list = time_ns(
            || {
                let mut l = SortedList::new(1024);
                let mut sum = 0u64;
                for (i, &(_, s)) in ev.iter().enumerate() {
                    l.receive(s, i as u64 * 1000, s as u64, fast.0, 511, &mut |x| {
                        sum = sum.wrapping_add(x)
                    });
                }
                sum
            },
            ev.len(),
        );
        println!(
            "| {:<20} | {:>13.1} | {:>18.1} | {:>12.1}x | {:>8} |",
            name,
            window,
            list,
            list / window,
            held_max
        );
    }
}
