// SPDX-License-Identifier: GPL-2.0

//! `ri2n show --format prometheus`: the states in Prometheus' text
//! exposition format (version 0.0.4), for node_exporter's textfile
//! collector. Each family is written once, its samples together, for
//! every device: per device its state and counters, per slave its carrier,
//! per (device, peer, slave) endpoint whether it is up, its loss and its
//! failures, and per device how many peers have an endpoint out of use.
//! Documentation/ri2n.rst ("Metrics") has the names and sample alerts.

use crate::State;
use std::fmt::Write;

/// A device's samples of one family: labels besides `device`, and value.
type Samples = Vec<(Vec<(&'static str, String)>, f64)>;

/// A family of metrics, and how a device's samples of it are computed.
struct Family {
    name: &'static str,
    kind: &'static str,
    help: &'static str,
    samples: fn(&State) -> Samples,
}

/// Escapes a label value: backslash, double quote and newline.
fn escape(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

fn one(v: f64) -> Samples {
    vec![(Vec::new(), v)]
}

fn flag(b: bool) -> f64 {
    if b {
        1.0
    } else {
        0.0
    }
}

/// The endpoints of `s`, labelled by peer and slave, with `f`'s value.
fn endpoints(s: &State, f: impl Fn(&crate::Record) -> f64) -> Samples {
    let mut out = Vec::new();
    for p in &s.peers {
        for e in &p.endpoints {
            let labels = vec![
                ("peer", p.mac().to_string()),
                ("slave", e.str("slave").to_string()),
            ];
            out.push((labels, f(e)));
        }
    }
    out
}

/// Whether endpoint `e` is out of use while its slave has carrier.
fn degraded(e: &crate::Record) -> bool {
    !matches!(e.str("state"), "up" | "no-carrier")
}

/// The device counters exported, and what each counts. Each becomes
/// `ri2n_<name>_total`.
pub const COUNTERS: &[(&str, &str)] = &[
    ("rx_packets", "Packets handed up by ri2n."),
    ("rx_bytes", "Bytes handed up by ri2n."),
    ("tx_packets", "Packets sent by ri2n."),
    ("tx_bytes", "Bytes sent by ri2n."),
    ("rx_dropped", "Frames dropped on receive."),
    ("tx_dropped", "Packets dropped on transmit."),
    ("tx_no_link", "Transmit drops: no usable link to the peer."),
    ("tx_queue_full", "Transmit drops: a link's queue was full."),
    (
        "tx_loop",
        "Transmits that looped back from a slave, dropped.",
    ),
    ("rx_malformed", "Malformed RI2N frames."),
    ("rx_not_for_us", "RI2N frames for another node."),
    ("rx_duplicates", "Duplicate data frames, dropped."),
    ("peers_new", "Peers admitted."),
    (
        "peers_refused",
        "Peers refused: table full, or new sources too fast.",
    ),
    ("peers_evicted", "Peers whose place a newcomer took."),
    ("peers_aged", "Peers forgotten after eight silent HBSPANs."),
    (
        "rx_nobuf",
        "Packets handed up at once for want of a reorder buffer.",
    ),
    (
        "rx_held_full",
        "Windows flushed because held packets reached held_mem.",
    ),
    ("hb_sent", "Heartbeats sent."),
    ("rx_auth_fail", "Frames refused: no key verifies them."),
    ("rx_replays", "Verified frames refused as replays."),
    (
        "rx_mode_mismatch",
        "Frames of the other one_switch mode, dropped.",
    ),
];

fn families() -> Vec<Family> {
    vec![
        Family {
            name: "ri2n_up",
            kind: "gauge",
            help: "Whether the ri2n device is up.",
            samples: |s| one(flag(s.device.str("state") == "up")),
        },
        Family {
            name: "ri2n_slave_carrier",
            kind: "gauge",
            help: "Whether a slave has carrier.",
            samples: |s| {
                s.slaves
                    .iter()
                    .map(|l| {
                        (
                            vec![("slave", l.str("name").to_string())],
                            flag(l.str("carrier") == "up"),
                        )
                    })
                    .collect()
            },
        },
        Family {
            name: "ri2n_peers",
            kind: "gauge",
            help: "Peers in the device's table.",
            samples: |s| one(s.peers_summary.num("count") as f64),
        },
        Family {
            name: "ri2n_peers_capacity",
            kind: "gauge",
            help: "Peers the device's table holds (peer_mem).",
            samples: |s| one(s.peers_summary.num("capacity") as f64),
        },
        Family {
            name: "ri2n_peers_degraded",
            kind: "gauge",
            help: "Peers with an endpoint out of use on a slave with carrier.",
            samples: |s| {
                let n = s
                    .peers
                    .iter()
                    .filter(|p| p.endpoints.iter().any(degraded))
                    .count();
                one(n as f64)
            },
        },
        Family {
            name: "ri2n_endpoint_up",
            kind: "gauge",
            help: "Whether the device sends to the peer on the slave.",
            samples: |s| endpoints(s, |e| flag(e.str("state") == "up")),
        },
        Family {
            name: "ri2n_endpoint_loss_ratio",
            kind: "gauge",
            help: "The share of our frames the peer reports lost on the slave's link.",
            samples: |s| endpoints(s, |e| e.num("loss_bp") as f64 / 10_000.0),
        },
        Family {
            name: "ri2n_endpoint_late_frames_total",
            kind: "counter",
            help: "Frames from the peer on the slave that came after the loss rule gave them up.",
            samples: |s| endpoints(s, |e| e.num("late") as f64),
        },
        Family {
            name: "ri2n_endpoint_failures_total",
            kind: "counter",
            help: "Times the endpoint failed (nothing received for SLOW_TOUT).",
            samples: |s| endpoints(s, |e| e.num("fails") as f64),
        },
        Family {
            name: "ri2n_endpoint_recoveries_total",
            kind: "counter",
            help: "Times the endpoint recovered by heartbeat.",
            samples: |s| endpoints(s, |e| e.num("recoveries") as f64),
        },
        Family {
            name: "ri2n_endpoint_lossy_total",
            kind: "counter",
            help: "Times the endpoint went out of use for loss.",
            samples: |s| endpoints(s, |e| e.num("lossy") as f64),
        },
    ]
}

/// The states `states` in the text exposition format.
pub fn to_prometheus(states: &[State]) -> String {
    let mut o = String::new();
    let mut family =
        |name: &str, kind: &str, help: &str, samples: &mut dyn Iterator<Item = (String, f64)>| {
            let _ = writeln!(o, "# HELP {name} {help}");
            let _ = writeln!(o, "# TYPE {name} {kind}");
            for (labels, v) in samples {
                let _ = writeln!(o, "{name}{{{labels}}} {v}");
            }
        };
    let labelled = |s: &State, extra: &[(&'static str, String)]| {
        let mut l = format!("device=\"{}\"", escape(s.name()));
        for (k, v) in extra {
            let _ = write!(l, ",{k}=\"{}\"", escape(v));
        }
        l
    };
    for f in families() {
        let get = f.samples;
        let mut samples = states
            .iter()
            .flat_map(|s| get(s).into_iter().map(move |(l, v)| (labelled(s, &l), v)));
        family(f.name, f.kind, f.help, &mut samples);
    }
    for (c, help) in COUNTERS {
        let name = format!("ri2n_{c}_total");
        // Counters an older kernel lacks are left out, not reported as 0.
        let mut samples = states
            .iter()
            .filter(|s| s.counters.get(c).is_some())
            .map(|s| (labelled(s, &[]), s.counters.num(c) as f64));
        family(&name, "counter", help, &mut samples);
    }
    o
}
