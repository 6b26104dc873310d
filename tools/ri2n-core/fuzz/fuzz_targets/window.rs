#![no_main]
//! A peer's receive side fed arbitrary sequence numbers, links, times,
//! heartbeats (with epochs) and sweeps. Invariants checked on every step:
//! at most MAXBUF held, no packet handed up twice, and at the end every
//! packet was handed up, dropped as a duplicate, or drained.

use libfuzzer_sys::fuzz_target;
use ri2n_core::params::{Param, Params};
use ri2n_core::rx::PeerRx;
use ri2n_core::seq::Seq;
use ri2n_core::time::Instant;
use std::collections::HashSet;

fuzz_target!(|data: &[u8]| {
    if data.len() < 3 {
        return;
    }
    let maxbuf = 1 + (data[0] as u32 % 64);
    let fast = 1 + data[1] as u32 % 30;
    let p = Params::from_values(&[(Param::Maxbuf, maxbuf), (Param::FastTout, fast)]).unwrap();
    let active = data[2];
    let mut rx: PeerRx<u32, ri2n_core::heap::Buf<u32>> = PeerRx::default();
    let mut bufs = ri2n_core::heap::HeapBufs::new(1);
    let mut now = 0u64;
    let mut up: Vec<u32> = Vec::new();
    let mut dropped = 0usize;
    let mut sent = 0u32;
    let mut seq = 0u32;
    for op in data[3..].chunks(4) {
        if op.len() < 4 {
            break;
        }
        now += op[1] as u64 * 250_000;
        let t = Instant(now);
        match op[0] % 8 {
            0 => rx.sweep(t, active, &p, &mut bufs, &mut |x| up.push(x)),
            1 => {
                let epoch = 1 + (op[2] % 3) as u32;
                rx.heartbeat((op[3] % 8) as usize, Seq(seq), epoch, t, active, &p, &mut bufs, &mut |x| up.push(x));
            }
            k => {
                // Mostly near the last number, sometimes anywhere.
                seq = if k == 7 { u32::from_le_bytes([op[2], op[3], op[1], op[0]]) } else { seq.wrapping_add(op[2] as u32).wrapping_sub(100) };
                let id = sent;
                sent += 1;
                if rx.data((op[3] % 8) as usize, Seq(seq), id, t, active, &p, &mut bufs, &mut |x| up.push(x)).is_some() {
                    dropped += 1;
                }
            }
        }
        assert!(rx.window.held() <= maxbuf as usize, "held {} > MAXBUF {}", rx.window.held(), maxbuf);
    }
    let mut drained = 0usize;
    rx.window.drain(&mut |_| drained += 1);
    let unique: HashSet<u32> = up.iter().copied().collect();
    assert_eq!(unique.len(), up.len(), "a packet went up twice");
    assert_eq!(up.len() + dropped + drained, sent as usize, "a packet was lost");
});
