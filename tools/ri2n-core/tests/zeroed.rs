//! The kernel allocates peers and reorder buffers zeroed, in place (they are
//! too large for a kernel stack). This checks the promise it relies on:
//! all-zero bytes behave exactly as a freshly constructed value.

use ri2n_core::params::Params;
use ri2n_core::peers::Peer;
use ri2n_core::seq::Seq;
use ri2n_core::time::Instant;
use ri2n_core::window::{Buffers, ReorderBuf};
use std::ptr::NonNull;

type Pkt = NonNull<u8>; // like the kernel's sk_buff handle: Option<Pkt> has a null niche
type Buf = Box<ReorderBuf<Pkt>>; // like KBox: a non-null pointer

fn pkt(i: usize) -> Pkt {
    NonNull::new((i + 1) as *mut u8).unwrap()
}

/// Buffers allocated zeroed, as the kernel's pool does.
struct Zeroed(Vec<Buf>);

impl Buffers<Buf> for Zeroed {
    fn get(&mut self) -> Option<Buf> {
        // SAFETY: what is under test: `Option<NonNull>` is None when zero,
        // the rest are integers.
        Some(
            self.0
                .pop()
                .unwrap_or_else(|| unsafe { Box::new_zeroed().assume_init() }),
        )
    }
    fn put(&mut self, b: Buf) {
        self.0.push(b);
    }
}

fn drive(peer: &mut Peer<Pkt, Buf>) -> Vec<usize> {
    let p = Params::default();
    let mut bufs = Zeroed(Vec::new());
    let mut out = Vec::new();
    let rx = &mut peer.rx;
    for (n, (link, seq)) in [
        (0, 10u32),
        (0, 12),
        (1, 11),
        (1, 14),
        (0, 13),
        (1, 40),
        (0, 16),
    ]
    .iter()
    .enumerate()
    {
        let now = Instant(n as u64 * 5_000_000);
        rx.data(
            *link,
            Seq(*seq),
            pkt(*seq as usize),
            now,
            0b11,
            &p,
            &mut bufs,
            &mut |x| out.push(x.as_ptr() as usize - 1),
        );
    }
    rx.sweep(Instant(1_000_000_000), 0b11, &p, &mut bufs, &mut |x| {
        out.push(x.as_ptr() as usize - 1)
    });
    assert_eq!(
        bufs.0.len(),
        1,
        "the buffer went back once nothing was held"
    );
    out
}

#[test]
fn a_zeroed_peer_is_a_new_one() {
    let mut fresh: Box<Peer<Pkt, Buf>> = Box::default();
    // SAFETY: what is under test; every field is an integer, bool, array of
    // those, or Option<NonNull<_>> / Option<Box<_>>, for which all-zero is None.
    let mut zeroed: Box<Peer<Pkt, Buf>> = unsafe { Box::new_zeroed().assume_init() };
    let a = drive(&mut fresh);
    let b = drive(&mut zeroed);
    assert_eq!(a, b);
    assert_eq!(fresh.rx.window.stats, zeroed.rx.window.stats);
    assert_eq!(a, [10, 11, 12, 13, 14, 16, 40]);
    assert_eq!(
        (fresh.hb_pending, fresh.hb_probe),
        (zeroed.hb_pending, zeroed.hb_probe)
    );
}
