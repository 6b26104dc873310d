// SPDX-License-Identifier: GPL-2.0

//! The one parser of ri2n's machine-readable state,
//! `/proc/net/ri2n_state/DEV` (Documentation/ri2n.rst, "Machine-readable
//! state"): one record per line, a kind and `key=value` pairs; the first
//! record names the format's version, the last is `end`.
//!
//! Records keep every pair in order, known or not, so that keys a newer
//! kernel adds within a version pass through (`ri2n show --json`); the
//! accessors below name the ones the tool relies on.

use std::fmt;

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
                "not a ri2n state file (no \"ri2n-state version=N\" first line)"
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

/// Parses one device's state file.
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

/// Where the kernel puts the state files.
pub const PROC_DIR: &str = "/proc/net/ri2n_state";

/// The version of the JSON `ri2n show --json` prints.
pub const JSON_SCHEMA: u32 = 1;

fn json_str(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

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
fn json_record(out: &mut String, r: &Record, skip: &[&str]) {
    out.push('{');
    let mut first = true;
    for (k, v) in &r.pairs {
        if skip.contains(&k.as_str()) {
            continue;
        }
        if !first {
            out.push(',');
        }
        first = false;
        json_str(out, k);
        out.push(':');
        if !STRING_KEYS.contains(&k.as_str()) && json_number(v) {
            out.push_str(v);
        } else {
            json_str(out, v);
        }
    }
    out.push('}');
}

/// The devices' states as JSON (schema [`JSON_SCHEMA`], in
/// Documentation/ri2n.rst).
pub fn to_json(states: &[State]) -> String {
    let mut o = String::new();
    o.push_str(&format!("{{\"schema\":{JSON_SCHEMA},\"devices\":["));
    for (i, s) in states.iter().enumerate() {
        if i > 0 {
            o.push(',');
        }
        o.push_str(&format!(
            "{{\"state_version\":{},\"clock_ms\":{},\"device\":",
            s.version, s.clock_ms
        ));
        json_record(&mut o, &s.device, &[]);
        o.push_str(",\"params\":");
        json_record(&mut o, &s.params, &[]);
        o.push_str(",\"slaves\":[");
        for (j, sl) in s.slaves.iter().enumerate() {
            if j > 0 {
                o.push(',');
            }
            json_record(&mut o, sl, &[]);
        }
        o.push_str("],\"counters\":");
        json_record(&mut o, &s.counters, &[]);
        if let Some(a) = &s.auth {
            o.push_str(",\"auth\":");
            json_record(&mut o, a, &[]);
        }
        o.push_str(",\"format\":");
        json_record(&mut o, &s.head, &["version"]);
        o.push_str(",\"clock\":");
        json_record(&mut o, &s.clock, &[]);
        o.push_str(",\"peers_summary\":");
        json_record(&mut o, &s.peers_summary, &[]);
        o.push_str(",\"peers\":[");
        for (j, p) in s.peers.iter().enumerate() {
            if j > 0 {
                o.push(',');
            }
            // The peer's own pairs, then its endpoints.
            json_record(&mut o, &p.rec, &[]);
            o.pop();
            o.push_str(",\"endpoints\":[");
            for (k, e) in p.endpoints.iter().enumerate() {
                if k > 0 {
                    o.push(',');
                }
                json_record(&mut o, e, &["peer"]);
            }
            o.push_str("]}");
        }
        o.push(']');
        if !s.others.is_empty() {
            // Each with its kind first.
            o.push_str(",\"other_records\":[");
            for (j, r) in s.others.iter().enumerate() {
                if j > 0 {
                    o.push(',');
                }
                o.push_str("{\"kind\":");
                json_str(&mut o, &r.kind);
                o.push_str(",\"pairs\":");
                json_record(&mut o, r, &[]);
                o.push('}');
            }
            o.push(']');
        }
        o.push('}');
    }
    o.push_str("]}\n");
    o
}
