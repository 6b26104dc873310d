// SPDX-License-Identifier: GPL-2.0

//! ri2n's state as records: one per line, a kind and `key=value` pairs;
//! the first record names the format's version, the last is `end`
//! (Documentation/ri2n.rst, "Records"). A netlink dump decodes into them
//! (`nl.rs`); `ri2n show --format records` writes them, and [`parse`]
//! reads them back (`ri2n --dir DIR`, saved copies).
//!
//! Records keep every pair in order, known or not, so that keys a newer
//! kernel adds pass through (`ri2n show --json`); the accessors below name
//! the ones the tool relies on.

use serde_json::{json, Map, Value};
use std::fmt;

pub mod nl;
pub mod prometheus;
pub use prometheus::to_prometheus;

/// Format versions this parser speaks.
pub const VERSIONS: &[u32] = &[1];

/// One line: its kind and its pairs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    pub kind: String,
    pub pairs: Vec<(String, String)>,
}

impl Record {
    /// The value of `key`, if present.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.pairs
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// The value of `key` as a number; 0 if absent (an older kernel).
    pub fn num(&self, key: &str) -> u64 {
        self.get(key).and_then(|v| v.parse().ok()).unwrap_or(0)
    }

    /// The value of `key`, or `?` if absent.
    pub fn str(&self, key: &str) -> &str {
        self.get(key).unwrap_or("?")
    }
}

/// A peer and its endpoints, one per link.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Peer {
    pub rec: Record,
    pub endpoints: Vec<Record>,
}

impl Peer {
    pub fn mac(&self) -> &str {
        self.rec.str("mac")
    }

    /// The endpoint on slave `slave`.
    pub fn endpoint(&self, slave: &str) -> Option<&Record> {
        self.endpoints
            .iter()
            .find(|e| e.get("slave") == Some(slave))
    }
}

/// One device's state, as read at one moment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct State {
    pub version: u32,
    /// The first record (`ri2n-state`: the version, the protocol's).
    pub head: Record,
    /// The kernel's wall clock when the state was read, in ms since the
    /// epoch: every `*_ms` age counts back from it.
    pub clock_ms: u64,
    /// The `clock` record (`ms`, and `mono_ms`, the monotonic clock then).
    pub clock: Record,
    pub device: Record,
    pub params: Record,
    pub slaves: Vec<Record>,
    pub counters: Record,
    /// Keys (`state`, `key_id`, `accept_id`); older modules have none.
    pub auth: Option<Record>,
    pub peers_summary: Record,
    pub peers: Vec<Peer>,
    /// Records of kinds this tool does not know (a newer kernel's, same
    /// version), in order.
    pub others: Vec<Record>,
}

impl State {
    pub fn name(&self) -> &str {
        self.device.str("name")
    }

    pub fn peer(&self, mac: &str) -> Option<&Peer> {
        self.peers
            .iter()
            .find(|p| p.mac().eq_ignore_ascii_case(mac))
    }
}

/// Why a text is not a state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ParseError {
    /// Nothing at all.
    Empty,
    /// The first line is not `ri2n-state version=N`.
    NotState,
    /// A version this parser does not speak.
    Version(u32),
    /// A line that is not `kind key=value...`, or a record out of place.
    Malformed { line: usize, why: String },
    /// A required record is missing.
    Missing(&'static str),
    /// No `end` record: the text was cut short.
    Truncated,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ParseError::Empty => write!(f, "empty state"),
            ParseError::NotState => write!(
                f,
                "not ri2n records (no \"ri2n-state version=N\" first line)"
            ),
            ParseError::Version(v) => {
                let speaks: Vec<String> = VERSIONS.iter().map(|v| v.to_string()).collect();
                write!(
                    f,
                    "state format version {v} is newer than this tool, which speaks version {}",
                    speaks.join(", ")
                )
            }
            ParseError::Malformed { line, why } => write!(f, "malformed state, line {line}: {why}"),
            ParseError::Missing(what) => write!(f, "malformed state: no \"{what}\" record"),
            ParseError::Truncated => write!(f, "state cut short (no \"end\" record)"),
        }
    }
}

impl std::error::Error for ParseError {}

fn record(line: &str, n: usize) -> Result<Record, ParseError> {
    let mut words = line.split(' ');
    let kind = words.next().unwrap_or("");
    if kind.is_empty()
        || !kind
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    {
        return Err(ParseError::Malformed {
            line: n,
            why: format!("bad record kind {kind:?}"),
        });
    }
    let mut pairs = Vec::new();
    for w in words {
        let Some((k, v)) = w.split_once('=') else {
            return Err(ParseError::Malformed {
                line: n,
                why: format!("{w:?} is not key=value"),
            });
        };
        if k.is_empty() {
            return Err(ParseError::Malformed {
                line: n,
                why: format!("{w:?} has no key"),
            });
        }
        pairs.push((k.to_string(), v.to_string()));
    }
    Ok(Record {
        kind: kind.to_string(),
        pairs,
    })
}

/// Parses one device's records.
pub fn parse(text: &str) -> Result<State, ParseError> {
    let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l));
    let Some((_, first)) = lines.next() else {
        return Err(ParseError::Empty);
    };
    let head = record(first, 1).map_err(|_| ParseError::NotState)?;
    if head.kind != "ri2n-state" {
        return Err(ParseError::NotState);
    }
    let version: u32 = head
        .get("version")
        .and_then(|v| v.parse().ok())
        .ok_or(ParseError::NotState)?;
    if !VERSIONS.contains(&version) {
        return Err(ParseError::Version(version));
    }
    let (mut clock, mut device, mut params, mut counters, mut summary, mut auth) =
        (None, None, None, None, None, None);
    let mut slaves = Vec::new();
    let mut others = Vec::new();
    let mut peers: Vec<Peer> = Vec::new();
    let mut ended = false;
    for (n, line) in lines {
        if ended {
            return Err(ParseError::Malformed {
                line: n,
                why: "text after \"end\"".into(),
            });
        }
        let r = record(line, n)?;
        match r.kind.as_str() {
            "clock" => clock = Some(r),
            "device" => device = Some(r),
            "params" => params = Some(r),
            "slave" => slaves.push(r),
            "counters" => counters = Some(r),
            "auth" => auth = Some(r),
            "peers" => summary = Some(r),
            "peer" => {
                if r.get("mac").is_none() {
                    return Err(ParseError::Malformed {
                        line: n,
                        why: "peer without mac".into(),
                    });
                }
                peers.push(Peer {
                    rec: r,
                    endpoints: Vec::new(),
                });
            }
            "endpoint" => {
                let Some(p) = peers.last_mut().filter(|p| Some(p.mac()) == r.get("peer")) else {
                    return Err(ParseError::Malformed {
                        line: n,
                        why: "endpoint outside its peer".into(),
                    });
                };
                p.endpoints.push(r);
            }
            "end" => ended = true,
            _ => others.push(r), // A newer kernel's, same version.
        }
    }
    // A whole dump ends "end\n": a cut one may end in "end" (of
    // "endpoint") without its newline.
    if !ended || !text.ends_with('\n') {
        return Err(ParseError::Truncated);
    }
    let clock = clock.ok_or(ParseError::Missing("clock"))?;
    Ok(State {
        version,
        head,
        clock_ms: clock.num("ms"),
        clock,
        device: device.ok_or(ParseError::Missing("device"))?,
        params: params.ok_or(ParseError::Missing("params"))?,
        slaves,
        counters: counters.ok_or(ParseError::Missing("counters"))?,
        auth,
        peers_summary: summary.ok_or(ParseError::Missing("peers"))?,
        peers,
        others,
    })
}

/// `s` as records, the text [`parse`] reads.
pub fn to_records(s: &State) -> String {
    let mut o = String::new();
    let mut line = |r: &Record| {
        o += &r.kind;
        for (k, v) in &r.pairs {
            o += &format!(" {k}={v}");
        }
        o.push('\n');
    };
    line(&s.head);
    line(&s.clock);
    line(&s.device);
    line(&s.params);
    for r in &s.slaves {
        line(r);
    }
    line(&s.counters);
    if let Some(a) = &s.auth {
        line(a);
    }
    line(&s.peers_summary);
    for p in &s.peers {
        line(&p.rec);
        for e in &p.endpoints {
            line(e);
        }
    }
    for r in &s.others {
        line(r);
    }
    o += "end\n";
    o
}

/// The version of the JSON `ri2n show --json` prints.
pub const JSON_SCHEMA: u32 = 1;

/// Keys whose values are names or hex, strings whatever they look like
/// (an epoch may be all decimal digits, or 00000000).
const STRING_KEYS: &[&str] = &[
    "name",
    "mac",
    "peer",
    "slave",
    "epoch",
    "state",
    "carrier",
    "key_id",
    "accept_id",
    "peer_slave_mac",
];

/// Whether `v` is a JSON number as written: decimal digits, no leading
/// zero, within u64.
fn json_number(v: &str) -> bool {
    !v.is_empty()
        && v.bytes().all(|b| b.is_ascii_digit())
        && (v == "0" || !v.starts_with('0'))
        && v.parse::<u64>().is_ok()
}

/// A record's pairs as a JSON object: decimal values as numbers, the rest
/// (and [`STRING_KEYS`]) as strings; `skip` keys left out.
fn json_record(r: &Record, skip: &[&str]) -> Value {
    let mut m = Map::new();
    for (k, v) in &r.pairs {
        if skip.contains(&k.as_str()) {
            continue;
        }
        let v = match v.parse::<u64>() {
            Ok(n) if !STRING_KEYS.contains(&k.as_str()) && json_number(v) => Value::from(n),
            _ => Value::from(v.as_str()),
        };
        m.insert(k.clone(), v);
    }
    Value::Object(m)
}

/// One device's state as JSON.
fn json_state(s: &State) -> Value {
    let mut d = Map::new();
    d.insert("state_version".into(), s.version.into());
    d.insert("clock_ms".into(), s.clock_ms.into());
    d.insert("device".into(), json_record(&s.device, &[]));
    d.insert("params".into(), json_record(&s.params, &[]));
    let slaves = s.slaves.iter().map(|r| json_record(r, &[])).collect();
    d.insert("slaves".into(), Value::Array(slaves));
    d.insert("counters".into(), json_record(&s.counters, &[]));
    if let Some(a) = &s.auth {
        d.insert("auth".into(), json_record(a, &[]));
    }
    d.insert("format".into(), json_record(&s.head, &["version"]));
    d.insert("clock".into(), json_record(&s.clock, &[]));
    d.insert("peers_summary".into(), json_record(&s.peers_summary, &[]));
    let peers = s
        .peers
        .iter()
        .map(|p| {
            // The peer's own pairs, then its endpoints.
            let mut v = json_record(&p.rec, &[]);
            let eps = p
                .endpoints
                .iter()
                .map(|e| json_record(e, &["peer"]))
                .collect();
            v.as_object_mut()
                .expect("a record is an object")
                .insert("endpoints".into(), Value::Array(eps));
            v
        })
        .collect();
    d.insert("peers".into(), Value::Array(peers));
    if !s.others.is_empty() {
        let others = s
            .others
            .iter()
            .map(|r| json!({"kind": r.kind, "pairs": json_record(r, &[])}))
            .collect();
        d.insert("other_records".into(), Value::Array(others));
    }
    Value::Object(d)
}

/// The devices' states as JSON (schema [`JSON_SCHEMA`], in
/// Documentation/ri2n.rst), one line.
pub fn to_json(states: &[State]) -> String {
    let devices: Vec<Value> = states.iter().map(json_state).collect();
    let doc = json!({"schema": JSON_SCHEMA, "devices": devices});
    format!("{doc}\n")
}
