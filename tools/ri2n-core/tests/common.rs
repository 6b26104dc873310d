//! A receive side driven by a fake clock, for table tests.
#![allow(dead_code)]

use ri2n_core::heap::{Buf, HeapBufs};
use ri2n_core::params::Params;
use ri2n_core::rx::PeerRx;
use ri2n_core::seq::Seq;
use ri2n_core::time::{Duration, Instant};

pub const MS: u64 = 1_000_000;

pub struct Rx {
    pub rx: PeerRx<u32, Buf<u32>>,
    pub bufs: HeapBufs<u32>,
    pub p: Params,
    pub active: u8,
    pub now: Instant,
}

impl Rx {
    pub fn new(links: usize) -> Rx {
        Rx {
            rx: PeerRx::default(),
            bufs: HeapBufs::default(),
            p: Params::default(),
            active: ((1u16 << links) - 1) as u8,
            now: Instant(0),
        }
    }

    /// Packet `seq` arrives on `link` at `t_ms`; returns what went up.
    pub fn arrive(&mut self, link: usize, seq: u32, t_ms: u64) -> Vec<u32> {
        self.now = Instant(t_ms * MS);
        let mut up = Vec::new();
        let dup = self.rx.data(
            link,
            Seq(seq),
            seq,
            self.now,
            self.active,
            &self.p,
            &mut self.bufs,
            &mut |x| up.push(x),
        );
        assert!(
            dup.is_none(),
            "packet {seq} unexpectedly dropped as a duplicate"
        );
        up
    }

    /// The periodic sweep at `t_ms`.
    pub fn sweep(&mut self, t_ms: u64) -> Vec<u32> {
        self.now = Instant(t_ms * MS);
        let mut up = Vec::new();
        self.rx
            .sweep(self.now, self.active, &self.p, &mut self.bufs, &mut |x| {
                up.push(x)
            });
        up
    }

    pub fn held(&self) -> usize {
        self.rx.window.held()
    }

    pub fn fast_tout(&self) -> Duration {
        self.p.fast_tout()
    }
}
