//! Header, parameters, scheduler, broadcast filter, peer table.

use ri2n_core::dedup::Dedup;
use ri2n_core::header::*;
use ri2n_core::heap::table;
use ri2n_core::params::{Param, ParamError, Params, SPECS};
use ri2n_core::peers::SlotQueue;
use ri2n_core::sched::{stripe_block, RoundRobin};
use ri2n_core::seq::Seq;
use ri2n_core::time::{Duration, Instant};

#[test]
fn header_round_trips_big_endian() {
    let h = Header {
        kind: Kind::Data,
        protocol: 0x0800,
        seq: Seq(0x01020304),
    };
    let mut b = [0u8; 8];
    h.encode(&mut b);
    assert_eq!(b, [1, 1, 0x08, 0x00, 1, 2, 3, 4]);
    assert_eq!(Header::decode(&b), Ok((h, None)));
}

#[test]
fn header_rejects_short_unknown_version_and_kind() {
    assert_eq!(
        Header::decode(&[1, 1, 8, 0, 0, 0, 0]),
        Err(DecodeError::Short)
    );
    assert_eq!(
        Header::decode(&[5, 1, 8, 0, 0, 0, 0, 0]),
        Err(DecodeError::Version(5))
    );
    assert_eq!(
        Header::decode(&[2, 1, 8, 0, 0, 0, 0, 0]),
        Err(DecodeError::Short),
        "sealed: 24 bytes"
    );
    assert_eq!(
        Header::decode(&[1, 9, 8, 0, 0, 0, 0, 0]),
        Err(DecodeError::Kind(9))
    );
    assert_eq!(
        Header::decode(&[1, 0, 8, 0, 0, 0, 0, 0]),
        Err(DecodeError::Kind(0))
    );
    assert_eq!(DecodeError::Short.reason(), "short");
}

#[test]
fn heartbeat_round_trips_and_rejects_short() {
    let counts = Counts {
        tx: 0x01020304,
        echo_tx: 5,
        echo_rx: 6,
    };
    let hb = Heartbeat {
        epoch: 0xdeadbeef,
        flags: HB_PROBE,
        link: 1,
        down: 0b10,
        probe_shift: 3,
        counts: Some(counts),
        counter: None,
    };
    let mut b = [0xffu8; 20];
    assert_eq!(hb.encode(&mut b), 20);
    assert_eq!(
        b,
        [
            0xde,
            0xad,
            0xbe,
            0xef,
            1 | 2,
            1,
            2,
            3,
            1,
            2,
            3,
            4,
            0,
            0,
            0,
            5,
            0,
            0,
            0,
            6
        ],
        "HB_COUNTS set, counts after"
    );
    assert_eq!(Heartbeat::decode(&b), Ok(hb));
    assert_eq!(
        Heartbeat::decode(&b[..19]),
        Err(DecodeError::Short),
        "HB_COUNTS without its counts"
    );
    assert_eq!(Heartbeat::decode(&b[..7]), Err(DecodeError::Short));
    // A sender without counts: 8 bytes, no HB_COUNTS.
    let old = Heartbeat { counts: None, ..hb };
    let mut c = [0u8; 8];
    assert_eq!(old.encode(&mut c), 8);
    assert_eq!(c[4], HB_PROBE);
    assert_eq!(Heartbeat::decode(&c), Ok(old));
    // A sender before `probe_shift` wrote 0 there; one above the largest is
    // taken as the largest.
    c[7] = 0;
    assert_eq!(Heartbeat::decode(&c).map(|h| h.probe_shift), Ok(0));
    c[7] = 200;
    assert_eq!(
        Heartbeat::decode(&c).map(|h| h.probe_shift),
        Ok(MAX_PROBE_SHIFT)
    );
}

#[test]
fn params_default_to_table_2() {
    let p = Params::default();
    assert_eq!(
        (
            p.ft_hthresh(),
            p.ft_lthresh(),
            p.slow_tout(),
            p.hbspan(),
            p.hbweight(),
            p.fast_tout(),
            p.maxbuf()
        ),
        (
            10,
            1,
            Duration::from_ms(100),
            Duration::from_ms(2000),
            3,
            Duration::from_ms(20),
            300
        )
    );
}

#[test]
fn params_are_validated() {
    let mut p = Params::default();
    assert_eq!(
        p.set(Param::FtLthresh, 10),
        Err(ParamError::LthreshNotBelowHthresh)
    );
    assert_eq!(
        p.set(Param::FtHthresh, 1),
        Err(ParamError::LthreshNotBelowHthresh)
    );
    assert_eq!(
        p.set(Param::Maxbuf, 512),
        Err(ParamError::TooLarge),
        "MAXBUF within the window"
    );
    assert_eq!(p.set(Param::FastTout, 0), Err(ParamError::TooSmall));
    assert_eq!(p, Params::default(), "a refused value changes nothing");
    assert_eq!(p.set(Param::FastTout, 5), Ok(()));
    assert_eq!(p.fast_tout(), Duration::from_ms(5));
    // As a set, order does not matter: raise both thresholds at once.
    let q = Params::from_values(&[(Param::FtLthresh, 20), (Param::FtHthresh, 40)]).unwrap();
    assert_eq!((q.ft_lthresh(), q.ft_hthresh()), (20, 40));
    assert_eq!(Param::by_name("hbspan"), Ok(Param::Hbspan));
    assert_eq!(Param::by_name("nope"), Err(ParamError::UnknownName));
    for s in SPECS.iter() {
        assert!(
            s.min <= s.default && s.default <= s.max,
            "{} default in range",
            s.name
        );
    }
}

#[test]
fn round_robin_skips_unusable_links() {
    let mut rr = RoundRobin::default();
    let picks: Vec<_> = (0..6).map(|_| rr.pick(0b0111).unwrap()).collect();
    assert_eq!(picks, [1, 2, 0, 1, 2, 0]);
    let picks: Vec<_> = (0..4).map(|_| rr.pick(0b0101).unwrap()).collect();
    assert_eq!(picks, [2, 0, 2, 0]);
    assert_eq!(rr.pick(0), None, "no usable link");
    assert_eq!(rr.pick(0b1000_0000), Some(7));
    assert_eq!(rr.pick(0b1000_0001), Some(0));
}

#[test]
fn stripe_blocks_keep_small_packets_whole_and_spread_long_ones() {
    // (segments, most kept whole) -> block
    for (segs, whole, block) in [
        (1, 8, 1),
        (3, 8, 3),
        (8, 8, 8),
        (9, 8, 1),
        (44, 8, 1),
        (44, 1, 1),
        (44, 64, 44),
        (65, 64, 1),
        (0, 8, 1),
        (3, 0, 1),
    ] {
        assert_eq!(
            stripe_block(segs, whole),
            block,
            "{segs} segments, at most {whole} whole"
        );
    }
}

/// Links of a packet of `segs` frames of 1000 bytes, kept whole if `whole`.
fn blocks(rr: &mut RoundRobin, usable: u8, segs: u32, whole: bool) -> Vec<usize> {
    let first = if whole {
        (segs, segs * 1000)
    } else {
        (1, 1000)
    };
    (0..segs)
        .map(|i| {
            rr.pick_block(usable, 0xff, (i == 0).then_some(first), 1000)
                .unwrap()
        })
        .collect()
}

#[test]
fn pick_block_keeps_a_block_on_one_link_and_balances_bytes() {
    let mut rr = RoundRobin::default();
    assert_eq!(
        blocks(&mut rr, 0b11, 3, true),
        [1, 1, 1],
        "a small packet stays whole"
    );
    assert_eq!(
        blocks(&mut rr, 0b11, 3, true),
        [0, 0, 0],
        "the next packet takes the other link"
    );
    // Spread, one frame at a time: turn by turn, as the paper's.
    assert_eq!(blocks(&mut rr, 0b11, 4, false), [1, 0, 1, 0]);
    // A whole packet of 4 on link 1 leaves it 4000 bytes ahead: the next
    // frames go to link 0 until it is level.
    assert_eq!(blocks(&mut rr, 0b11, 4, true), [1, 1, 1, 1]);
    assert_eq!(blocks(&mut rr, 0b11, 5, false), [0, 0, 0, 0, 1]);
    // Over three links, by turns.
    let mut rr = RoundRobin::default();
    assert_eq!(blocks(&mut rr, 0b111, 6, false), [1, 2, 0, 1, 2, 0]);
    // The block's link goes out of use: the rest of the block moves on.
    let mut rr = RoundRobin::default();
    assert_eq!(rr.pick_block(0b11, 0xff, Some((4, 4000)), 1000), Some(1));
    assert_eq!(rr.pick_block(0b01, 0xff, None, 1000), Some(0));
    assert_eq!(rr.pick_block(0b11, 0xff, None, 1000), Some(0));
    assert_eq!(rr.pick_block(0, 0xff, None, 1000), None);
    assert_eq!(rr.pick_block(0, 0xff, Some((1, 1000)), 1000), None);
    // Its queue stops: the rest of the block moves to a link with room.
    let mut rr = RoundRobin::default();
    assert_eq!(rr.pick_block(0b11, 0b11, Some((4, 4000)), 1000), Some(1));
    assert_eq!(rr.pick_block(0b11, 0b01, None, 1000), Some(0));
}

#[test]
fn a_link_whose_queue_stopped_keeps_its_count() {
    // Link 1 took 64 KB, then its queue stopped (it is full): passed over,
    // it is not made level with link 0, which takes the next 64 KB first.
    let mut rr = RoundRobin::default();
    assert_eq!(rr.pick_bytes(0b11, 0xff, 64_000), Some(1));
    assert_eq!(rr.pick_bytes(0b11, 0b01, 1000), Some(0));
    let next: Vec<_> = (0..64)
        .map(|_| rr.pick_bytes(0b11, 0xff, 1000).unwrap())
        .collect();
    assert!(next[..60].iter().all(|&l| l == 0), "{next:?}");
    // No link with room: a stopped one still serves (its qdisc queues).
    assert!(rr.pick_bytes(0b11, 0, 1000).is_some());
}

#[test]
fn whole_small_packets_with_acks_between_keep_the_links_level() {
    // A peer's traffic alternates 8-frame messages and lone ACKs: turn by
    // turn, every message would go to one link.
    let mut rr = RoundRobin::default();
    let mut bytes = [0u64; 2];
    for i in 0..1000 {
        for l in blocks(&mut rr, 0b11, 8, true) {
            bytes[l] += 1000;
        }
        bytes[rr.pick_block(0b11, 0xff, Some((1, 66)), 66).unwrap()] += 66;
        assert!(bytes[0].abs_diff(bytes[1]) <= 8066, "after {i}: {bytes:?}");
    }
}

#[test]
fn by_bytes_the_links_stay_level_within_one_packet() {
    let mut rr = RoundRobin::default();
    let mut bytes = [0u64; 8];
    // GSO packets of every size with ACKs between them.
    let mut x: u32 = 12345;
    for i in 0..10_000 {
        x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
        let len = if i % 3 == 0 {
            66
        } else {
            1514 + (x >> 16) % 64_000
        };
        let l = rr.pick_bytes(0b011, 0xff, len).unwrap();
        bytes[l] += len as u64;
        assert!(
            bytes[0].abs_diff(bytes[1]) <= 66_000,
            "after {i}: {bytes:?}"
        );
    }
    // Turn by turn, the same packets would leave the links far apart.
    let mut rr2 = RoundRobin::default();
    let mut turns = [0u64; 8];
    for i in 0..8 {
        let len = if i % 2 == 0 { 64_000 } else { 66 };
        turns[rr2.pick(0b011).unwrap()] += len;
    }
    assert!(turns[0].abs_diff(turns[1]) > 200_000, "{turns:?}");
}

#[test]
fn by_bytes_a_link_back_in_use_is_not_given_its_absence() {
    let mut rr = RoundRobin::default();
    for _ in 0..100 {
        rr.pick_bytes(0b001, 0xff, 64_000);
    }
    // Link 1 returns: the two alternate, link 1 is not sent 6.4 MB first.
    let picks: Vec<_> = (0..6)
        .map(|_| rr.pick_bytes(0b011, 0xff, 64_000).unwrap())
        .collect();
    assert_eq!(picks.iter().filter(|&&l| l == 1).count(), 3, "{picks:?}");
    assert_eq!(rr.pick_bytes(0, 0xff, 1), None);
}

#[test]
fn dedup_passes_each_broadcast_once() {
    let mut d = Dedup::default();
    assert!(d.accept(Seq(5)));
    assert!(!d.accept(Seq(5)), "the copy on the second link");
    assert!(d.accept(Seq(7)));
    assert!(d.accept(Seq(6)), "reordered but new");
    assert!(!d.accept(Seq(6)));
    assert!(d.accept(Seq(u32::MAX)), "far behind: the sender restarted");
    assert!(d.accept(Seq(0)), "wraps");
    assert!(!d.accept(Seq(u32::MAX)));
    assert!(d.accept(Seq(300)), "a jump clears the bitmap");
    assert!(d.accept(Seq(300 - 255)));
    assert!(!d.accept(Seq(300 - 255)));
}

#[test]
fn a_full_table_takes_newcomers_in_place_of_unheard_or_silent_peers() {
    let mut t = table::<u8>(4, 42);
    let mac = |i: u8| [2, 0, 0, 0, 0, i];
    let idle = Duration(100);
    for i in 0..4 {
        assert_eq!(t.insert(&mac(i), Instant(i as u64), i), Ok(i as usize));
    }
    assert_eq!(t.insert(&mac(9), Instant(10), 9), Err(9), "full");
    // Nobody has heartbeated: the oldest unheard one makes room (a flood of
    // new MACs only churns these).
    assert_eq!(t.victim(Instant(10), idle), Some(0));
    // Every peer heartbeats: live known peers are never taken.
    for i in 0..4 {
        t.touch(i, Instant(20 + i as u64), true);
        assert!(t.is_known(i));
    }
    assert_eq!(
        t.victim(Instant(50), idle),
        None,
        "a table of live peers refuses"
    );
    // Slot 1 falls silent; the others go on.
    for i in [0, 2, 3] {
        t.touch(i, Instant(200), true);
    }
    assert_eq!(
        t.victim(Instant(250), idle),
        Some(1),
        "silent for the idle limit"
    );
    assert_eq!(t.remove(1), Some(1));
    assert_eq!(t.lookup(&mac(1)), None);
    assert_eq!(t.insert(&mac(9), Instant(250), 9), Ok(1));
    assert!(!t.is_known(1), "a newcomer is unheard until its heartbeat");
    for i in [0, 2, 3] {
        assert_eq!(t.lookup(&mac(i)), Some(i as usize));
    }
    assert_eq!(t.len(), 4);
}

#[test]
fn silent_peers_age_out_oldest_first() {
    let mut t = table::<()>(8, 7);
    let mac = |i: u8| [2, 0, 0, 0, 1, i];
    for i in 0..3u8 {
        let s = t.insert(&mac(i), Instant(0), ()).unwrap();
        t.touch(s, Instant(10 * i as u64), i != 1);
    }
    let age = Duration(1000);
    assert_eq!(t.aged(Instant(500), age), None);
    assert_eq!(t.aged(Instant(1005), age), Some(0), "slot 0, heard at 0");
    t.remove(0);
    assert_eq!(
        t.aged(Instant(1015), age),
        Some(1),
        "then the unheard one, heard at 10"
    );
    t.remove(1);
    assert_eq!(t.aged(Instant(1015), age), None, "slot 2 heard at 20");
    assert_eq!(t.aged(Instant(1020), age), Some(2));
}

#[test]
fn the_budget_buys_peers_and_buffers_with_documented_arithmetic() {
    use ri2n_core::peers::{capacity, BUF_BYTES, MIN_BUDGET, PEER_BYTES, PER_PEER_BYTES};
    // At most 2 KiB per idle peer: 4,096 nodes in 8 MiB.
    const { assert!(PER_PEER_BYTES <= 2048) };
    const { assert!(BUF_BYTES == 8192) };
    const { assert!(PEER_BYTES < PER_PEER_BYTES) };
    assert_eq!(capacity(MIN_BUDGET - 1), None);
    assert_eq!(capacity(MIN_BUDGET), Some((1, 1)));
    let (peers, bufs) = capacity(ri2n_core::params::PEER_MEM_DEFAULT as usize).unwrap();
    assert!(peers >= 4096, "the default serves 4096 nodes: {peers}");
    assert_eq!(bufs, 256);
    assert!(peers * PER_PEER_BYTES + bufs * BUF_BYTES <= 16 << 20);
}

#[test]
fn slot_queue_is_fifo_and_bounded() {
    let mut q = SlotQueue::new(vec![0u32; 3]);
    assert!(q.push(5) && q.push(6) && q.push(7));
    assert!(!q.push(8), "full");
    assert_eq!(q.pop(), Some(5));
    assert!(q.push(8));
    assert_eq!(
        (q.pop(), q.pop(), q.pop(), q.pop()),
        (Some(6), Some(7), Some(8), None)
    );
}

#[test]
fn a_one_switch_header_carries_the_origin_before_the_seal() {
    let h = Header {
        kind: Kind::Data,
        protocol: 0x0800,
        seq: Seq(9),
    };
    let origin = Origin {
        mac: [2, 0, 0, 0, 0, 7],
        link: 1,
    };
    let mut b = [0xffu8; MAX_HEADER_LEN];
    assert_eq!(h.encode_full(Some(&origin), None, &mut b), 16);
    assert_eq!(&b[..16], &[3, 1, 8, 0, 0, 0, 0, 9, 2, 0, 0, 0, 0, 7, 1, 0]);
    let d = Header::decode_full(&b[..16]).unwrap();
    assert_eq!(
        (d.header, d.origin, d.seal, d.len),
        (h, Some(origin), None, 16)
    );
    assert_eq!(
        Header::decode(&b[..16]),
        Err(DecodeError::Version(3)),
        "two-switch decoding refuses it"
    );
    assert_eq!(Header::decode_full(&b[..15]), Err(DecodeError::Short));
    // Sealed: origin, then epoch and tag.
    assert_eq!(
        h.encode_full(Some(&origin), Some(0x0102_0304_0506_0708), &mut b),
        32
    );
    assert_eq!(b[0], 4);
    assert_eq!(&b[16..24], &[1, 2, 3, 4, 5, 6, 7, 8]);
    let d = Header::decode_full(&b).unwrap();
    assert_eq!(
        (d.origin, d.seal.map(|s| s.epoch), d.len),
        (Some(origin), Some(0x0102_0304_0506_0708), 32)
    );
    assert_eq!(header_len_for(true, true), 32);
    assert_eq!(header_len_for(false, true), 16);
    assert_eq!(header_len_for(true, false), 24);
}

#[test]
fn short_frames_after_a_long_one_do_not_leave_a_link_silent() {
    // By bytes alone, a 1.4 KB frame on one link sends the next 24 short
    // ones to the other: 240 ms of silence at 10 ms apart, and the
    // receiver's detector fails the link (engine.rs,
    // a_trickle_after_a_long_frame_fails_no_link). With the
    // driver's `level_after`, the scheduler leaves a link silent for at
    // most half of SLOW_TOUT, whatever the gap up to 12 ms (pings
    // 9-12 ms apart): the other half is the hosts' (a busy host fails a link
    // "nothing received for 104 ms" when this takes up to 74).
    let p = Params::default();
    let idle = p.level_after();
    let budget = p.slow_tout().as_ms() / 2;
    for gap in [1u64, 5, 9, 10, 11, 12] {
        for use_clock in [false, true] {
            let mut rr = RoundRobin::default();
            let mut last = [0u64; 2];
            let mut silent = 0;
            for round in 0..20u64 {
                for (i, len) in std::iter::once(1442)
                    .chain(std::iter::repeat_n(58, 24))
                    .enumerate()
                {
                    let t = (round * 25 + i as u64) * gap;
                    if use_clock {
                        rr.at(Instant(t * 1_000_000), idle);
                    }
                    let l = rr.pick_block(0b11, 0xff, Some((1, len)), len).unwrap();
                    last[l] = t;
                    silent = silent.max(t - last[1 - l]);
                }
            }
            if use_clock {
                assert!(
                    silent <= budget,
                    "gap {gap} ms: a link silent for {silent} ms, over {budget}"
                );
            } else if gap >= 10 {
                assert!(silent >= 200, "without the clock: {silent} ms");
            }
        }
    }
    // Busy links keep their byte counts: 64 KB on link 1, then ACKs 1 ms
    // apart all go to link 0.
    let mut rr = RoundRobin::default();
    rr.at(Instant(0), idle);
    assert_eq!(rr.pick_bytes(0b11, 0xff, 64_000), Some(1));
    for ms in 1..20 {
        rr.at(Instant(ms * 1_000_000), idle);
        assert_eq!(rr.pick_bytes(0b11, 0xff, 66), Some(0));
    }
}

#[test]
fn a_peer_costs_what_the_documentation_and_lab_tests_say() {
    // Documentation/ri2n.rst (Peers at cluster scale) and the peer_mem
    // values of ri2n_peers, ri2n_malformed and ri2n_params count peers at
    // these sizes: a field added to `Peer` or to a slot changes them all.
    use ri2n_core::peers::{MIN_BUDGET, PEER_BYTES, PER_PEER_BYTES};
    assert_eq!(
        (PEER_BYTES, PER_PEER_BYTES, MIN_BUDGET),
        (1536, 1829, 10021)
    );
}

#[test]
fn the_module_says_the_tools_version() {
    // ri2n_drv.rs writes `modinfo`'s version line by hand: it must be the
    // version the tools (and the changelog) give, with its length right.
    let drv = include_str!("../../../ri2n_drv.rs");
    let line = format!("version={}\\0", env!("CARGO_PKG_VERSION"));
    let decl = format!("[u8; {}] = *b\"{line}\";", line.len() - 1);
    assert!(drv.contains(&decl), "ri2n_drv.rs lacks {decl}");
    let changelog = include_str!("../../../CHANGELOG.md");
    assert!(
        changelog.contains(&format!("## {}", env!("CARGO_PKG_VERSION"))),
        "CHANGELOG.md has no entry for this version"
    );
    let dkms = include_str!("../../../dkms.conf");
    let pkg = format!("PACKAGE_VERSION=\"{}\"", env!("CARGO_PKG_VERSION"));
    assert!(dkms.contains(&pkg), "dkms.conf lacks {pkg}");
    assert!(
        dkms.contains(&format!("ri2n-{}", env!("CARGO_PKG_VERSION"))),
        "dkms.conf's usage names another version"
    );
}
