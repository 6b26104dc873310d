//! The state parser against a recorded state (two nodes, two links, after
//! a transfer) and against malformed, truncated and newer ones.

use ri2n_state::{parse, to_json, ParseError, VERSIONS};

const TWO_LINKS: &str = include_str!("data/two-links.txt");

#[test]
fn a_recorded_state_parses_whole() {
    let s = parse(TWO_LINKS).unwrap();
    assert_eq!(s.version, 1);
    assert_eq!(s.name(), "ri2n0");
    assert_eq!(s.clock_ms, 1795526137254);
    assert_eq!(s.params.num("loss_thresh"), 5);
    assert_eq!(s.slaves.len(), 2);
    assert_eq!(s.slaves[1].str("name"), "eth1");
    assert_eq!(s.counters.num("tx_packets"), 20545);
    assert_eq!(s.peers_summary.num("capacity"), 10850);
    let p = s.peer("D2:98:39:35:26:99").expect("peer, any case");
    assert_eq!(p.endpoints.len(), 2);
    assert_eq!(p.endpoint("eth0").unwrap().str("state"), "up");
    assert_eq!(p.endpoint("eth1").unwrap().num("tx"), 10267);
}

#[test]
fn json_is_versioned_and_carries_every_pair() {
    let s = parse(TWO_LINKS).unwrap();
    let j = to_json(&[s]);
    assert!(j.starts_with("{\"schema\":1,\"devices\":[{\"state_version\":1,"));
    assert!(j.contains("\"mac\":\"d2:98:39:35:26:99\""));
    assert!(j.contains("\"tx_packets\":20545"));
    assert!(j.contains("\"endpoints\":[{\"link\":0,\"slave\":\"eth0\",\"state\":\"up\""));
    assert!(j.contains("\"epoch\":\"646dbaae\""), "hex stays a string");
    // Balanced, and no endpoint repeats its peer.
    assert_eq!(j.matches('{').count(), j.matches('}').count());
    assert_eq!(j.matches('[').count(), j.matches(']').count());
    assert!(!j.contains("\"peer\":"));
}

#[test]
fn unknown_keys_and_records_pass_through() {
    let t = TWO_LINKS
        .replace("\nend\n", "\nfuture thing=1\nend\n")
        .replace(
            "counters rx_packets=285",
            "counters new_key=7 rx_packets=285",
        );
    let s = parse(&t).unwrap();
    assert_eq!(s.counters.num("new_key"), 7);
    assert!(to_json(&[s]).contains("\"new_key\":7"));
}

#[test]
fn every_cut_is_an_error_never_a_panic() {
    for n in 0..TWO_LINKS.len() {
        if !TWO_LINKS.is_char_boundary(n) {
            continue;
        }
        let cut = &TWO_LINKS[..n];
        match parse(cut) {
            Ok(_) => panic!("a cut at {n} parsed"),
            Err(e) => assert!(!e.to_string().is_empty()),
        }
    }
}

#[test]
fn a_cut_at_a_line_end_says_truncated() {
    let cut = TWO_LINKS.split_inclusive('\n').take(8).collect::<String>();
    assert_eq!(parse(&cut), Err(ParseError::Truncated));
}

#[test]
fn garbage_and_bad_lines_are_named() {
    assert_eq!(parse(""), Err(ParseError::Empty));
    assert_eq!(
        parse("RI2N/DRV: protocol version 1\n"),
        Err(ParseError::NotState),
        "the human file is not the state"
    );
    let bad = TWO_LINKS.replace("held_bytes=0", "held_bytes");
    match parse(&bad) {
        Err(ParseError::Malformed { line, why }) => {
            assert_eq!(line, 8);
            assert!(why.contains("held_bytes"), "{why}");
        }
        other => panic!("{other:?}"),
    }
    let orphan = TWO_LINKS.replace(
        "endpoint peer=d2:98:39:35:26:99 link=0",
        "endpoint peer=00:00:00:00:00:01 link=0",
    );
    assert!(matches!(parse(&orphan), Err(ParseError::Malformed { .. })));
    let after_end = format!("{TWO_LINKS}peer mac=x\n");
    assert!(matches!(
        parse(&after_end),
        Err(ParseError::Malformed { .. })
    ));
    let no_clock = TWO_LINKS.replace("clock ms=1795526137254 mono_ms=20123\n", "");
    assert_eq!(parse(&no_clock), Err(ParseError::Missing("clock")));
    // Bytes that are not a state at all.
    let noise: String = (0..2000u32)
        .map(|i| char::from_u32(32 + (i * 7919) % 95).unwrap())
        .collect();
    assert!(parse(&noise).is_err());
}

#[test]
fn a_newer_version_says_which_versions_the_tool_speaks() {
    let t = TWO_LINKS.replace("ri2n-state version=1", "ri2n-state version=9");
    let e = parse(&t).unwrap_err();
    assert_eq!(e, ParseError::Version(9));
    assert_eq!(VERSIONS, &[1]);
    assert_eq!(
        e.to_string(),
        "state format version 9 is newer than this tool, which speaks version 1"
    );
}

#[test]
fn json_keeps_hex_and_zero_padded_values_strings() {
    // An epoch of 0 (a peer never heard in a heartbeat), one of decimal
    // digits only, a counter with a leading zero: valid JSON each time.
    let t = TWO_LINKS
        .replace("epoch=646dbaae", "epoch=00000000")
        .replace("epoch=61e15813", "epoch=12345678")
        .replace("hb_sent=56", "hb_sent=056");
    let j = to_json(&[parse(&t).unwrap()]);
    assert!(j.contains("\"epoch\":\"00000000\""), "{j}");
    assert!(j.contains("\"epoch\":\"12345678\""));
    assert!(j.contains("\"hb_sent\":\"056\""));
    assert!(j.contains("\"rx_packets\":285"));
}

#[test]
fn keys_clock_and_unknown_records_reach_the_json() {
    let t = TWO_LINKS.replace(
        "\nend\n",
        "\nauth state=on key_id=0123abcd accept_id=none\nfuture thing=1 kind=x\nend\n",
    );
    let s = parse(&t).unwrap();
    let a = s.auth.as_ref().expect("the auth record is kept");
    assert_eq!(a.str("key_id"), "0123abcd");
    assert_eq!(s.others.len(), 1);
    assert_eq!(s.clock.num("mono_ms"), 20123);
    let j = to_json(&[s]);
    assert!(
        j.contains("\"auth\":{\"state\":\"on\",\"key_id\":\"0123abcd\",\"accept_id\":\"none\"}"),
        "{j}"
    );
    assert!(j.contains("\"clock\":{\"ms\":1795526137254,\"mono_ms\":20123}"));
    assert!(j.contains("\"format\":{\"protocol\":1}"));
    // Its own pairs whole, a `kind` among them too.
    assert!(
        j.contains(
            "\"other_records\":[{\"kind\":\"future\",\"pairs\":{\"thing\":1,\"kind\":\"x\"}}]"
        ),
        "{j}"
    );
    assert_eq!(j.matches('{').count(), j.matches('}').count());
    // Without them, neither key.
    let j = to_json(&[parse(TWO_LINKS).unwrap()]);
    assert!(!j.contains("\"auth\"") && !j.contains("other_records"));
}
