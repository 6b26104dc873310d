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
        if line.starts_with("enum {") {
            next = 0;
            continue;
        }
        let Some(decl) = line
            .split(',')
            .next()
            .filter(|d| d.starts_with("IFLA_RI2N_") || d.starts_with("__IFLA_RI2N_"))
        else {
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
