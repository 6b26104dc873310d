// SPDX-License-Identifier: GPL-2.0

//! `ri2n show --format prometheus` against the text exposition format
//! (version 0.0.4): checked line by line by the rules of the format, and
//! read back by an independent parser (`prometheus-parse`).

use ri2n_state::prometheus::COUNTERS;
use ri2n_state::{parse, to_prometheus};
use std::collections::{HashMap, HashSet};

const TWO_LINKS: &str = include_str!("data/two-links.txt");

/// Samples by family: labels and value.
type Samples = HashMap<String, Vec<(Vec<(String, String)>, f64)>>;

/// A metric or label name (`[a-zA-Z_:][a-zA-Z0-9_:]*`, no `:` in labels).
fn is_name(s: &str, colon: bool) -> bool {
    let ok = |c: char, first: bool| {
        c.is_ascii_alphabetic() || c == '_' || (colon && c == ':') || (!first && c.is_ascii_digit())
    };
    let mut cs = s.chars();
    cs.next().is_some_and(|c| ok(c, true)) && cs.all(|c| ok(c, false))
}

/// Splits `{a="x",b="y"}`'s inside into pairs, undoing the three escapes;
/// `None` if it is not well formed.
fn labels(s: &str) -> Option<Vec<(String, String)>> {
    let mut out = Vec::new();
    let mut rest = s;
    while !rest.is_empty() {
        let eq = rest.find("=\"")?;
        let name = &rest[..eq];
        let mut value = String::new();
        let mut chars = rest[eq + 2..].char_indices();
        let end = loop {
            match chars.next()? {
                (_, '\\') => match chars.next()?.1 {
                    '\\' => value.push('\\'),
                    '"' => value.push('"'),
                    'n' => value.push('\n'),
                    _ => return None,
                },
                (i, '"') => break eq + 2 + i + 1,
                (_, '\n') => return None,
                (_, c) => value.push(c),
            }
        };
        out.push((name.to_string(), value));
        rest = &rest[end..];
        rest = match rest.strip_prefix(',') {
            Some(r) => r,
            None if rest.is_empty() => rest,
            None => return None,
        };
    }
    Some(out)
}

/// Checks `text` by the format's rules; returns its samples by family.
fn check(text: &str) -> Samples {
    let mut types: HashMap<String, String> = HashMap::new();
    let mut helps = HashSet::new();
    let mut done = HashSet::new();
    let mut current: Option<String> = None;
    let mut series = HashSet::new();
    let mut samples: HashMap<String, Vec<_>> = HashMap::new();
    assert!(text.ends_with('\n'), "the last line ends");
    for (i, line) in text.lines().enumerate() {
        let at = format!("line {}: {line:?}", i + 1);
        if let Some(rest) = line.strip_prefix("# ") {
            let mut w = rest.splitn(3, ' ');
            let (what, name, more) = (w.next(), w.next().unwrap_or(""), w.next().unwrap_or(""));
            assert!(is_name(name, true), "{at}: metric name");
            assert!(!done.contains(name), "{at}: family written twice");
            if current.as_deref() != Some(name) {
                if let Some(c) = current.take() {
                    done.insert(c);
                }
                current = Some(name.to_string());
            }
            match what {
                Some("HELP") => assert!(helps.insert(name.to_string()), "{at}: HELP twice"),
                Some("TYPE") => {
                    assert!(
                        ["counter", "gauge", "histogram", "summary", "untyped"].contains(&more),
                        "{at}: type"
                    );
                    assert!(!samples.contains_key(name), "{at}: TYPE after samples");
                    assert!(
                        types.insert(name.to_string(), more.to_string()).is_none(),
                        "{at}: TYPE twice"
                    );
                }
                _ => panic!("{at}: a comment that is neither HELP nor TYPE"),
            }
            continue;
        }
        let (series_part, value) = line
            .rsplit_once(' ')
            .unwrap_or_else(|| panic!("{at}: no value"));
        let (name, ls) = match series_part.split_once('{') {
            Some((n, l)) => (
                n,
                labels(
                    l.strip_suffix('}')
                        .unwrap_or_else(|| panic!("{at}: braces")),
                )
                .unwrap_or_else(|| panic!("{at}: labels")),
            ),
            None => (series_part, Vec::new()),
        };
        assert!(is_name(name, true), "{at}: metric name");
        assert_eq!(
            current.as_deref(),
            Some(name),
            "{at}: a sample apart from its family"
        );
        let mut seen = HashSet::new();
        for (k, _) in &ls {
            assert!(
                is_name(k, false) && !k.starts_with("__"),
                "{at}: label name"
            );
            assert!(seen.insert(k.clone()), "{at}: label twice");
        }
        let v: f64 = value.parse().unwrap_or_else(|_| panic!("{at}: value"));
        assert!(series.insert(series_part.to_string()), "{at}: series twice");
        match types.get(name).map(String::as_str) {
            Some("counter") => {
                assert!(
                    name.ends_with("_total"),
                    "{at}: a counter's name ends in _total"
                );
                assert!(v >= 0.0, "{at}: a negative counter");
            }
            Some(_) => {}
            None => panic!("{at}: sample without TYPE"),
        }
        samples.entry(name.to_string()).or_default().push((ls, v));
    }
    samples
}

fn value(s: &Samples, name: &str, labels: &[(&str, &str)]) -> f64 {
    let want: Vec<(String, String)> = labels
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    s[name]
        .iter()
        .find(|(l, _)| *l == want)
        .unwrap_or_else(|| panic!("{name}{labels:?}: no sample"))
        .1
}

#[test]
fn a_recorded_state_is_valid_exposition_text() {
    let st = parse(TWO_LINKS).unwrap();
    let text = to_prometheus(&[st]);
    let s = check(&text);
    let dev = [("device", "ri2n0")];
    assert_eq!(value(&s, "ri2n_up", &dev), 1.0);
    assert_eq!(value(&s, "ri2n_peers", &dev), 1.0);
    assert_eq!(value(&s, "ri2n_peers_capacity", &dev), 10850.0);
    assert_eq!(value(&s, "ri2n_peers_degraded", &dev), 0.0);
    assert_eq!(value(&s, "ri2n_tx_packets_total", &dev), 20545.0);
    assert_eq!(
        value(
            &s,
            "ri2n_slave_carrier",
            &[("device", "ri2n0"), ("slave", "eth1")]
        ),
        1.0
    );
    let ep = [
        ("device", "ri2n0"),
        ("peer", "d2:98:39:35:26:99"),
        ("slave", "eth0"),
    ];
    assert_eq!(value(&s, "ri2n_endpoint_up", &ep), 1.0);
    // Every counter the state has is exported (the recorded state is from
    // before rx_auth_fail and later ones: left out, not 0).
    for (c, _) in COUNTERS {
        let name = format!("ri2n_{c}_total");
        let has = parse(TWO_LINKS).unwrap().counters.get(c).is_some();
        assert_eq!(s.contains_key(&name), has, "{name}");
    }
    // An independent parser reads the same.
    let lines = text.lines().map(|l| Ok(l.to_string()));
    let scrape = prometheus_parse::Scrape::parse(lines).unwrap();
    let tx = scrape
        .samples
        .iter()
        .find(|x| x.metric == "ri2n_tx_packets_total")
        .unwrap();
    assert!(matches!(tx.value, prometheus_parse::Value::Counter(v) if v == 20545.0));
    assert_eq!(tx.labels.get("device"), Some("ri2n0"));
    assert_eq!(
        scrape.samples.len(),
        s.values().map(Vec::len).sum::<usize>()
    );
}

#[test]
fn failed_links_lossy_links_and_odd_names_are_exported() {
    // Two devices (one named with a quote and a backslash, which Linux
    // allows), one peer failed on eth1 and losing 12.5 % on eth0.
    let odd = TWO_LINKS
        .replace("name=ri2n0", "name=r\"i\\2")
        .replace("slave=eth1 state=up", "slave=eth1 state=failed")
        .replace("fails=0 recoveries=0 loss_bp=0 lossy=0\nendpoint", "fails=0 recoveries=0 loss_bp=1250 lossy=2\nendpoint")
        .replace("slave=eth1 state=failed counter=0 last_rx_ms=68 changed_ms=13254 rx=139 hb=28 tx=10267 fails=0", "slave=eth1 state=failed counter=0 last_rx_ms=68 changed_ms=13254 rx=139 hb=28 tx=10267 fails=3");
    let states = [parse(TWO_LINKS).unwrap(), parse(&odd).unwrap()];
    let text = to_prometheus(&states);
    assert!(text.contains("device=\"r\\\"i\\\\2\""), "escaped: {text}");
    let s = check(&text);
    let odd_dev = "r\"i\\2";
    assert_eq!(
        value(&s, "ri2n_peers_degraded", &[("device", odd_dev)]),
        1.0
    );
    assert_eq!(
        value(&s, "ri2n_peers_degraded", &[("device", "ri2n0")]),
        0.0
    );
    let ep = |slave| {
        [
            ("device", odd_dev),
            ("peer", "d2:98:39:35:26:99"),
            ("slave", slave),
        ]
    };
    assert_eq!(value(&s, "ri2n_endpoint_up", &ep("eth1")), 0.0);
    assert_eq!(value(&s, "ri2n_endpoint_failures_total", &ep("eth1")), 3.0);
    assert_eq!(value(&s, "ri2n_endpoint_loss_ratio", &ep("eth0")), 0.125);
    assert_eq!(value(&s, "ri2n_endpoint_lossy_total", &ep("eth0")), 2.0);
    // Each family once, both devices' samples within it.
    assert_eq!(text.matches("# TYPE ri2n_endpoint_up ").count(), 1);
    assert_eq!(s["ri2n_endpoint_up"].len(), 4);
}

#[test]
fn the_checker_refuses_what_the_format_forbids() {
    let ok = "# HELP a_total x\n# TYPE a_total counter\na_total{d=\"1\"} 2\n";
    check(ok);
    for bad in [
        "a_total 1\n",                                                // no TYPE
        "# TYPE a counter\na 1\n",                                    // counter without _total
        "# TYPE a gauge\na{d=\"1\"} 1\na{d=\"1\"} 2\n",               // series twice
        "# TYPE a gauge\n# TYPE b gauge\na 1\n",                      // sample apart from family
        "# TYPE a gauge\na{d=\"x\\q\"} 1\n",                          // bad escape
        "# TYPE a gauge\na{1d=\"x\"} 1\n",                            // bad label name
        "# TYPE a gauge\na 1\n# TYPE b gauge\nb 1\n# HELP a again\n", // family twice
    ] {
        assert!(
            std::panic::catch_unwind(|| check(bad)).is_err(),
            "accepted {bad:?}"
        );
    }
}
