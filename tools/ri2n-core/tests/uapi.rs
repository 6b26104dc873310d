// SPDX-License-Identifier: GPL-2.0

//! The numbers user space sees: include/uapi/linux/ri2n.h, core/uapi.rs,
//! the parameter table and iproute2's ri2n link kind agree; run-time
//! parameter changes are all or none, their refusals fit an extended ack.

use ri2n_core::params::{Param, ParamError, Params, Refusal, SPECS};
use ri2n_core::uapi::{self, Attr};

const HEADER: &str = include_str!("../../../include/uapi/linux/ri2n.h");
const IPLINK: &str = include_str!("../../iproute2/link_ri2n.c");
const LAB_TEST: &str = include_str!("../../../tests/lab/ri2n_params.sh");

/// The values of the enumerators `prefix*` of the header's enums, by name,
/// counting as C does (an explicit `= N` restarts the count).
fn enumerators(prefix: &str) -> Vec<(String, u16)> {
    let mut out = Vec::new();
    let mut next = 0u16;
    for line in HEADER.lines() {
        let line = line.trim();
        if line.starts_with("enum ") {
            next = 0;
            continue;
        }
        let Some(decl) = line.split(',').next().filter(|d| {
            let d = d.trim_start_matches('_');
            d.starts_with("IFLA_RI2N_") || d.starts_with("RI2N_")
        }) else {
            continue;
        };
        if !line.contains(',') {
            continue;
        }
        let (name, value) = match decl.split_once('=') {
            Some((n, v)) => (n.trim(), v.trim().parse().unwrap()),
            None => (decl.trim(), next),
        };
        next = value + 1;
        if let Some(rest) = name.strip_prefix(prefix) {
            out.push((rest.to_string(), value));
        }
    }
    out
}

fn header_value(name: &str) -> u16 {
    let all = enumerators("IFLA_RI2N_");
    all.iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("IFLA_RI2N_{name} is not in ri2n.h"))
        .1
}

#[test]
fn the_uapi_header_numbers_what_the_driver_does() {
    assert_eq!(header_value("EPOCH"), uapi::IFLA_EPOCH);
    assert_eq!(header_value("VERSION"), uapi::IFLA_VERSION);
    assert_eq!(header_value("SLAVES"), uapi::IFLA_SLAVES);
    assert_eq!(header_value("PEERS"), uapi::IFLA_PEERS);
    for p in Param::ALL {
        let name = p.spec().name.to_uppercase();
        assert_eq!(header_value(&name), p.attr(), "{name}");
    }
    let max = enumerators("__IFLA_RI2N_")
        .iter()
        .find(|(n, _)| n == "MAX")
        .unwrap()
        .1;
    assert_eq!(max - 1, uapi::IFLA_MAX, "a parameter without an attribute");
    assert_eq!(header_value("SLAVE_LINK"), uapi::IFLA_SLAVE_LINK);
    assert_eq!(header_value("SLAVE_CARRIER"), uapi::IFLA_SLAVE_CARRIER);
    assert_eq!(header_value("SLAVE_PEERS_UP"), uapi::IFLA_SLAVE_PEERS_UP);
    assert_eq!(
        header_value("SLAVE_PEERS_DOWN"),
        uapi::IFLA_SLAVE_PEERS_DOWN
    );
}

/// The lower-case names of the enumerators `prefix*` from number `from` on,
/// in order, up to the `__` end marker.
fn names_from(prefix: &str, from: u16) -> Vec<String> {
    enumerators(prefix)
        .into_iter()
        .filter(|(_, v)| *v >= from)
        .map(|(n, _)| n.to_lowercase())
        .collect()
}

fn value(prefix: &str, name: &str) -> u16 {
    enumerators(prefix)
        .into_iter()
        .find(|(n, _)| n == name)
        .unwrap_or_else(|| panic!("{prefix}{name} is not in ri2n.h"))
        .1
}

#[test]
fn the_uapi_header_numbers_the_generic_netlink_family_as_the_driver() {
    use uapi::{attr, cmd, endpoint, event, peer, slave, U64_FIRST};
    let define = |name: &str| {
        HEADER
            .lines()
            .find_map(|l| l.strip_prefix(&format!("#define {name}")))
            .unwrap_or_else(|| panic!("no {name}"))
            .trim()
            .to_string()
    };
    assert_eq!(define("RI2N_GENL_NAME"), format!("\"{}\"", uapi::GENL_NAME));
    assert_eq!(define("RI2N_GENL_VERSION"), uapi::GENL_VERSION.to_string());
    assert_eq!(
        define("RI2N_MCGRP_EVENTS"),
        format!("\"{}\"", uapi::MCGRP_EVENTS)
    );
    assert_eq!(
        define("RI2N_EVENTS_PER_SEC"),
        uapi::EVENTS_PER_SEC.to_string()
    );
    assert_eq!(define("RI2N_EVENTS_BURST"), uapi::EVENTS_BURST.to_string());
    assert_eq!(define("RI2N_KEY_LEN"), uapi::KEY_LEN.to_string());
    for (name, v) in [
        ("GET_DEVICE", cmd::GET_DEVICE),
        ("SET_DEVICE", cmd::SET_DEVICE),
        ("EVENT", cmd::EVENT),
    ] {
        assert_eq!(value("RI2N_CMD_", name), u16::from(v), "{name}");
    }
    let top = [
        ("IFINDEX", attr::IFINDEX),
        ("IFNAME", attr::IFNAME),
        ("MAC", attr::MAC),
        ("MTU", attr::MTU),
        ("UP", attr::UP),
        ("EPOCH64", attr::EPOCH64),
        ("CLOCK_MS", attr::CLOCK_MS),
        ("MONO_MS", attr::MONO_MS),
        ("KEYS_ON", attr::KEYS_ON),
        ("KEY_ID", attr::KEY_ID),
        ("ACCEPT_ID", attr::ACCEPT_ID),
        ("SLAVE", attr::SLAVE),
        ("COUNTERS", attr::COUNTERS),
        ("PEERS_SUMMARY", attr::PEERS_SUMMARY),
        ("PEER", attr::PEER),
        ("KEY", attr::KEY),
        ("KEY_ACCEPT", attr::KEY_ACCEPT),
        ("KEY_NONE", attr::KEY_NONE),
        ("ACCEPT_NONE", attr::ACCEPT_NONE),
        ("EVENT", attr::EVENT),
    ];
    for (name, v) in top {
        assert_eq!(value("RI2N_A_", name), v, "RI2N_A_{name}");
    }
    assert_eq!(value("__RI2N_A_", "MAX") - 1, attr::MAX);
    const { assert!(attr::IFINDEX > uapi::IFLA_MAX, "room for IFLA_RI2N_*") };
    for (name, v) in [
        ("LINK", slave::LINK),
        ("NAME", slave::NAME),
        ("CARRIER", slave::CARRIER),
    ] {
        assert_eq!(value("RI2N_SLAVE_A_", name), v);
    }
    assert_eq!(names_from("RI2N_SLAVE_A_", U64_FIRST), slave::U64);
    assert_eq!(names_from("RI2N_CTR_", 1), uapi::COUNTERS);
    assert_eq!(names_from("RI2N_PS_", 1), uapi::PEERS_SUMMARY);
    for (name, v) in [
        ("MAC", peer::MAC),
        ("EPOCH", peer::EPOCH),
        ("ENDPOINT", peer::ENDPOINT),
    ] {
        assert_eq!(value("RI2N_PEER_A_", name), v);
    }
    assert_eq!(names_from("RI2N_PEER_A_", U64_FIRST), peer::U64);
    for (name, v) in [
        ("LINK", endpoint::LINK),
        ("STATE", endpoint::STATE),
        ("PEER_SLAVE_MAC", endpoint::PEER_SLAVE_MAC),
    ] {
        assert_eq!(value("RI2N_EP_A_", name), v);
    }
    assert_eq!(names_from("RI2N_EP_A_", U64_FIRST), endpoint::U64);
    for (name, v) in [
        ("REASON", event::REASON),
        ("TIME_NS", event::TIME_NS),
        ("PEER", event::PEER),
        ("LINK", event::LINK),
        ("SLAVE", event::SLAVE),
        ("OLD", event::OLD),
        ("NEW", event::NEW),
        ("DROPPED", event::DROPPED),
    ] {
        assert_eq!(value("RI2N_EV_A_", name), v);
    }
    let states: Vec<String> = names_from("RI2N_STATE_", 1)
        .iter()
        .map(|n| n.replace('_', "-"))
        .collect();
    let ours: Vec<&str> = uapi::EndpointState::ALL.iter().map(|s| s.name()).collect();
    assert_eq!(states, ours);
    let reasons = names_from("RI2N_EV_", 1);
    let reasons: Vec<&String> = reasons.iter().filter(|n| !n.starts_with("a_")).collect();
    let ours: Vec<&str> = uapi::Reason::ALL.iter().map(|r| r.name()).collect();
    assert_eq!(reasons, ours);
}

#[test]
fn every_attribute_is_state_reserved_or_one_parameter() {
    let mut seen = Vec::new();
    for ty in 1..=uapi::IFLA_MAX {
        match Attr::of(ty) {
            Attr::State => assert!(ty <= uapi::IFLA_PEERS),
            Attr::Reserved => assert!(ty > uapi::IFLA_PEERS && ty < uapi::IFLA_PARAM0),
            Attr::Param(p) => {
                assert_eq!(p.attr(), ty);
                seen.push(p);
            }
        }
    }
    assert_eq!(seen, Param::ALL);
    assert_eq!(Attr::of(0), Attr::Reserved);
    assert_eq!(Attr::of(uapi::IFLA_MAX + 1), Attr::Reserved);
}

#[test]
fn iproute2s_ri2n_kind_names_every_parameter_as_sysfs_does() {
    for p in Param::ALL {
        let name = p.spec().name;
        let entry = format!("{{ \"{name}\", IFLA_RI2N_{} }},", name.to_uppercase());
        assert!(IPLINK.contains(&entry), "link_ri2n.c lacks {entry}");
    }
    let entries = IPLINK.matches("\", IFLA_RI2N_").count();
    let slave = IPLINK.matches("\", IFLA_RI2N_SLAVE_").count();
    assert_eq!(
        entries - slave,
        Param::ALL.len(),
        "a name link_ri2n.c has and sysfs not"
    );
}

#[test]
fn a_change_is_all_or_none_and_order_free() {
    let d = Params::default();
    // ft_lthresh 20 needs ft_hthresh 40 first: in either order.
    let a = d
        .with(&[(Param::FtLthresh, 20), (Param::FtHthresh, 40)])
        .unwrap();
    let b = d
        .with(&[(Param::FtHthresh, 40), (Param::FtLthresh, 20)])
        .unwrap();
    assert_eq!(a, b);
    assert_eq!((a.ft_lthresh(), a.ft_hthresh()), (20, 40));
    // One value out of range: nothing changes, the first such is named.
    let r = d
        .with(&[
            (Param::FastTout, 5),
            (Param::Maxbuf, 512),
            (Param::Hbspan, 1),
        ])
        .unwrap_err();
    assert_eq!(
        r,
        Refusal {
            param: Param::Maxbuf,
            value: 512,
            error: ParamError::TooLarge
        }
    );
    assert_eq!(r.to_string(), "maxbuf must be 1..=511 packets, not 512");
    let r = d.with(&[(Param::FtLthresh, 10)]).unwrap_err();
    assert_eq!(r.to_string(), "ft_lthresh 10 must be below ft_hthresh");
    assert_eq!(d.with(&[]).unwrap(), d);
}

#[test]
fn every_refusal_fits_an_extended_ack() {
    // struct netlink_ext_ack's _msg_buf: 80 bytes with the NUL.
    for (i, p) in Param::ALL.iter().enumerate() {
        let s = &SPECS[i];
        let mut bad = vec![u32::MAX];
        if s.min > 0 {
            bad.push(s.min - 1);
        }
        for v in bad {
            let r = Params::default().with(&[(*p, v)]).unwrap_err();
            let msg = r.to_string();
            assert!(msg.len() <= 79, "{msg}");
            assert!(msg.starts_with(s.name), "{msg}");
        }
    }
    assert!(Param::ALL.iter().filter(|p| p.down_only()).count() == 2);
}

#[test]
fn the_lab_tests_every_parameters_bounds() {
    // tests/lab/ri2n_params.sh sets each bound and one past it through
    // netlink, from a table of its own.
    let table = LAB_TEST
        .split_once("PARAM_RANGES=\"")
        .and_then(|(_, rest)| rest.split_once('"'))
        .expect("ri2n_params.sh has no PARAM_RANGES")
        .0;
    let rows: Vec<String> = table.lines().map(str::to_string).collect();
    let want: Vec<String> = SPECS
        .iter()
        .map(|s| format!("{} {} {}", s.name, s.min, s.max))
        .collect();
    assert_eq!(rows, want);
}
