//! The kernel allocates per-peer and per-device state zeroed, in place (it is
//! too large for a kernel stack). This checks the promise it relies on:
//! all-zero bytes behave exactly as a freshly constructed value.

use ri2n_core::params::Params;
use ri2n_core::peers::PeerTable;
use ri2n_core::rx::PeerRx;
use ri2n_core::seq::Seq;
use ri2n_core::time::Instant;
use std::ptr::NonNull;

type Pkt = NonNull<u8>; // like the kernel's sk_buff handle: Option<Pkt> has a null niche

fn pkt(i: usize) -> Pkt {
    NonNull::new((i + 1) as *mut u8).unwrap()
}

fn drive(rx: &mut PeerRx<Pkt>) -> Vec<usize> {
    let p = Params::default();
    let mut out = Vec::new();
    for (n, (link, seq)) in [(0, 10u32), (0, 12), (1, 11), (1, 14), (0, 13), (1, 40), (0, 16)].iter().enumerate() {
        let now = Instant(n as u64 * 5_000_000);
        rx.data(*link, Seq(*seq), pkt(*seq as usize), now, 0b11, &p, &mut |x| out.push(x.as_ptr() as usize - 1));
    }
    rx.sweep(Instant(1_000_000_000), 0b11, &p, &mut |x| out.push(x.as_ptr() as usize - 1));
    out
}

#[test]
fn a_zeroed_peer_rx_is_a_new_one() {
    let mut fresh: Box<PeerRx<Pkt>> = Box::new(PeerRx::default());
    // SAFETY: what is under test; every field is an integer, bool, array of
    // those, or Option<NonNull<_>>, for which all-zero is None.
    let mut zeroed: Box<PeerRx<Pkt>> = unsafe { Box::new_zeroed().assume_init() };
    let a = drive(&mut fresh);
    let b = drive(&mut zeroed);
    assert_eq!(a, b);
    assert_eq!(fresh.window.stats, zeroed.window.stats);
    assert_eq!(a, [10, 11, 12, 13, 14, 16, 40]);
}

#[test]
fn a_zeroed_peer_table_with_its_key_is_a_new_one() {
    let mut fresh = Box::new(PeerTable::new(77));
    // SAFETY: as above: integers, bools and arrays of them.
    let mut zeroed: Box<PeerTable> = unsafe { Box::new_zeroed().assume_init() };
    zeroed.set_key(77);
    for i in 0..50u8 {
        let mac = [2, 0, 0, 0, i, i];
        assert_eq!(fresh.insert(&mac, Instant(0), 64), zeroed.insert(&mac, Instant(0), 64));
    }
    for i in 0..50u8 {
        let mac = [2, 0, 0, 0, i, i];
        assert_eq!(fresh.lookup(&mac), zeroed.lookup(&mac));
        assert!(zeroed.lookup(&mac).is_some());
    }
}
