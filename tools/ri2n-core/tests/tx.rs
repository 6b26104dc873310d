//! A peer's transmit side apart from the rest (core/tx.rs): what it
//! numbers, counts and chooses, and what it trades with the detector.

use ri2n_core::peers::Peer;
use ri2n_core::seq::Seq;
use ri2n_core::time::{Duration, Instant};
use ri2n_core::tx::PeerTx;

type P = Peer<u64, Box<ri2n_core::window::ReorderBuf<u64>>>;

const MAC: [u8; 6] = [2, 0, 0, 0, 0, 1];
const IDLE: Duration = Duration(25_000_000);

fn peer(nlinks: usize) -> (Box<P>, PeerTx) {
    let mut p: Box<P> = Box::default();
    p.det.start(nlinks, Instant(1));
    let mut tx = PeerTx::default();
    tx.start(&MAC);
    tx.publish(&p.det);
    (p, tx)
}

#[test]
fn an_empty_one_is_nobodys_and_sends_nowhere() {
    let mut tx = PeerTx::default();
    assert!(!tx.is(&[0; 6]), "the zero MAC is no peer");
    assert!(!tx.is(&MAC));
    assert_eq!(tx.sendable(0xff), 0, "nothing published: no link");
    assert_eq!(
        tx.route(0xff, 0xff, Some((1, 100)), 100, 1, Instant(5), IDLE),
        None
    );
    assert_eq!(tx.tx_seq, Seq(0), "a packet with no link takes no number");
    tx.start(&MAC);
    assert!(tx.is(&MAC));
    tx.clear();
    assert!(!tx.is(&MAC));
}

#[test]
fn packets_are_numbered_in_a_row_and_counted_on_their_link() {
    let (mut p, mut tx) = peer(2);
    let mut per_link = [0u32; 2];
    let mut next = 0u32;
    for i in 0..10u32 {
        let segs = 1 + i % 3;
        let (link, seq) = tx
            .route(
                0b11,
                0b11,
                Some((1, 1000)),
                1000,
                segs,
                Instant(10 + i as u64),
                IDLE,
            )
            .unwrap();
        assert_eq!(
            seq,
            Seq(next),
            "numbers follow on, a GSO packet's segments in a row"
        );
        next += segs;
        per_link[link] += segs;
    }
    assert!(
        per_link[0] > 0 && per_link[1] > 0,
        "both links used: {per_link:?}"
    );
    assert_eq!((tx.unfolded(0), tx.unfolded(1)), (per_link[0], per_link[1]));
    assert_eq!(
        p.det.endpoints[0].tx_frames, 0,
        "the detector has nothing before the fold"
    );
    tx.fold(&mut p);
    assert_eq!(
        (p.det.endpoints[0].tx_frames, p.det.endpoints[1].tx_frames),
        (per_link[0], per_link[1])
    );
    assert_eq!(
        p.last_data,
        Instant(19),
        "the fold brings when data last went out"
    );
    assert_eq!((tx.unfolded(0), tx.unfolded(1)), (0, 0));
    // A second fold adds nothing; an older send never moves last_data back.
    p.last_data = Instant(50);
    tx.fold(&mut p);
    assert_eq!(p.det.endpoints[0].tx_frames, per_link[0]);
    assert_eq!(p.last_data, Instant(50));
}

#[test]
fn a_frame_taken_back_after_a_fold_comes_off_the_detectors_count() {
    let (mut p, mut tx) = peer(1);
    for i in 0..3 {
        tx.route(0b1, 0b1, Some((1, 100)), 100, 1, Instant(10 + i), IDLE)
            .unwrap();
    }
    tx.fold(&mut p);
    tx.unsent(0, 2);
    tx.fold(&mut p);
    assert_eq!(p.det.endpoints[0].tx_frames, 1);
}

#[test]
fn it_sends_where_the_detector_last_said() {
    let (p, mut tx) = peer(2);
    assert_eq!(tx.sendable(0b11), p.det.sendable(0b11));
    assert_eq!(
        tx.sendable(0b10),
        0b10,
        "carrier is the caller's, at every packet"
    );
    // Published over one link only: the other is not used, whatever the
    // carrier says.
    let mut one: Box<P> = Box::default();
    one.det.start(1, Instant(1));
    tx.publish(&one.det);
    for i in 0..4 {
        assert_eq!(
            tx.route(0b11, 0b11, Some((1, 100)), 100, 1, Instant(10 + i), IDLE)
                .map(|r| r.0),
            Some(0)
        );
    }
}
