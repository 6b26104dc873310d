// SPDX-License-Identifier: GPL-2.0

//! `ri2n`: the state of ri2n devices, in the spirit of `wg show`.
//!
//!     ri2n [show] [DEV] [--json | --format text|json|prometheus]
//!                                     devices, slaves, peers and endpoints;
//!                                     prometheus: metrics for
//!                                     node_exporter's textfile collector
//!     ri2n watch [DEV] [--interval MS]   the same, refreshed in place, with
//!                                     rates and each transition highlighted
//!     ri2n events [DEV] [--interval MS] [--peer MAC] [--slave NAME]
//!                 [--state S[|S...]] [--initial] [--count N] [--timeout S]
//!                                     endpoint and carrier transitions, a
//!                                     line each: the driver's time of it
//!                                     (ms since the epoch), what, and
//!                                     seen=when this tool read it
//!     ri2n get DEV counter NAME | peers NAME | param NAME | device NAME |
//!              auth NAME | peer MAC NAME | endpoint MAC SLAVE NAME |
//!              endpoints MAC NAME (summed) | slave SLAVE NAME | peer-list
//!                                     one value, for scripts
//!     ri2n key DEV set FILE|none      seal frames with the key in FILE (32
//!                                     hex digits); `none`: keys off
//!     ri2n key DEV accept FILE|none   also accept the key in FILE (a
//!                                     rotation: Documentation/ri2n.rst)
//!
//! Everything comes from `/proc/net/ri2n_state/DEV` through the one parser
//! (`state.rs`); `--proc DIR` or `RI2N_PROC` reads another directory.
//! Exit status: 0, 1 (events: timeout; get: no such value), 2 (usage, no
//! device, a state the tool cannot read).

use ri2n_state::{parse, to_json, to_prometheus, Record, State, PROC_DIR};
use std::collections::HashMap;
use std::io::{IsTerminal, Write};
use std::process::exit;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

static STOP: AtomicBool = AtomicBool::new(false);
/// `watch` hid the terminal's cursor: whoever ends the program shows it.
static CURSOR_HIDDEN: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::Relaxed);
}

/// SIGINT and SIGTERM end `watch` and `events` cleanly.
fn catch_signals() {
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: The handler only stores to an atomic, which is
        // async-signal-safe.
        unsafe { libc::signal(sig, on_signal as *const () as libc::sighandler_t) };
    }
}

fn die(msg: &str) -> ! {
    show_cursor();
    eprintln!("ri2n: {msg}");
    exit(2)
}

/// `dev` went away while it was read or followed: exit status 1.
fn gone(dev: &str) -> ! {
    show_cursor();
    eprintln!("ri2n: {dev} went away");
    exit(1)
}

fn show_cursor() {
    if CURSOR_HIDDEN.swap(false, Ordering::Relaxed) {
        let mut out = std::io::stdout();
        let _ = write!(out, "\x1b[?25h");
        let _ = out.flush();
    }
}

/// Writes `text` to stdout; a closed pipe (`| head`) ends the program
/// quietly, as for other tools.
fn emit(text: &str) {
    let mut out = std::io::stdout().lock();
    if out
        .write_all(text.as_bytes())
        .and_then(|_| out.flush())
        .is_err()
    {
        exit(0);
    }
}

/// Sleeps `d`, in slices, so that a signal ends the wait soon.
fn nap(d: Duration) {
    let t = Instant::now();
    while t.elapsed() < d && !STOP.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(20).min(d));
    }
}

const USAGE: &str = "\
usage: ri2n [show] [DEV] [--json | --format text|json|prometheus]
       ri2n watch [DEV] [--interval MS]
       ri2n events [DEV] [--interval MS] [--peer MAC] [--slave NAME] [--state S[|S...]]
                   [--initial] [--count N] [--timeout S]
       ri2n get DEV counter|peers|param|device|auth KEY
       ri2n get DEV slave SLAVE KEY | peer MAC KEY | endpoint MAC SLAVE KEY
       ri2n get DEV endpoints MAC KEY (summed over links) | peer-list
       ri2n key DEV set|accept FILE|none
watch and events follow one device: DEV, or the first there is.
--proc DIR (or RI2N_PROC=DIR) reads the state from DIR, not /proc/net/ri2n_state.
Exit status: 0; 1 events timed out, get found no such value, or the device
went away; 2 usage, no device, or a state this tool cannot read.";

/// What `show` writes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Format {
    Text,
    Json,
    Prometheus,
}

struct Opts {
    proc_dir: String,
    format: Format,
    interval: Duration,
    peer: Option<String>,
    slave: Option<String>,
    states: Option<Vec<String>>,
    initial: bool,
    count: Option<u64>,
    timeout: Option<Duration>,
    args: Vec<String>,
}

fn parse_args() -> (String, Opts) {
    let mut o = Opts {
        proc_dir: std::env::var("RI2N_PROC").unwrap_or_else(|_| PROC_DIR.into()),
        format: Format::Text,
        interval: Duration::from_millis(10),
        peer: None,
        slave: None,
        states: None,
        initial: false,
        count: None,
        timeout: None,
        args: Vec::new(),
    };
    let mut it = std::env::args().skip(1);
    let num = |v: Option<String>, what: &str| -> u64 {
        v.and_then(|v| v.parse().ok())
            .unwrap_or_else(|| die(&format!("{what} needs a number\n{USAGE}")))
    };
    let mut interval_set = false;
    while let Some(a) = it.next() {
        match a.as_str() {
            "--json" | "-j" => o.format = Format::Json,
            "--format" => {
                o.format = match it.next().as_deref() {
                    Some("text") => Format::Text,
                    Some("json") => Format::Json,
                    Some("prometheus") => Format::Prometheus,
                    _ => die(&format!("--format takes text, json or prometheus\n{USAGE}")),
                }
            }
            "--interval" => {
                o.interval = Duration::from_millis(num(it.next(), "--interval").max(1));
                interval_set = true;
            }
            "--peer" => o.peer = Some(it.next().unwrap_or_else(|| die(USAGE))),
            "--slave" => o.slave = Some(it.next().unwrap_or_else(|| die(USAGE))),
            "--state" => {
                o.states = Some(
                    it.next()
                        .unwrap_or_else(|| die(USAGE))
                        .split(['|', ','])
                        .map(String::from)
                        .collect(),
                )
            }
            "--initial" => o.initial = true,
            "--count" => o.count = Some(num(it.next(), "--count")),
            "--timeout" => {
                o.timeout = Some(Duration::from_millis(
                    num(it.next(), "--timeout").saturating_mul(1000),
                ))
            }
            "--proc" => o.proc_dir = it.next().unwrap_or_else(|| die(USAGE)),
            "-h" | "--help" => {
                println!("{USAGE}");
                exit(0)
            }
            s if s.starts_with('-') => die(&format!("unknown option {s}\n{USAGE}")),
            _ => o.args.push(a),
        }
    }
    let cmd = match o.args.first().map(String::as_str) {
        Some("show" | "watch" | "events" | "get" | "key") => o.args.remove(0),
        _ => "show".into(),
    };
    if cmd == "watch" && !interval_set {
        o.interval = Duration::from_secs(1);
    }
    (cmd, o)
}

/// The devices to read: `DEV`, or every one there is.
fn devices(o: &Opts, dev: Option<&str>) -> Vec<String> {
    let Ok(dir) = std::fs::read_dir(&o.proc_dir) else {
        die(&format!(
            "no ri2n device: {} is missing (is the ri2n module loaded?)",
            o.proc_dir
        ))
    };
    let mut names: Vec<String> = dir
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    match dev {
        Some(d) if names.iter().any(|n| n == d) => vec![d.to_string()],
        Some(d) => die(&format!(
            "no ri2n device {d} (ri2n devices here: {})",
            if names.is_empty() {
                "none".into()
            } else {
                names.join(" ")
            }
        )),
        None if names.is_empty() => die("no ri2n device (none in this network namespace)"),
        None => names,
    }
}

/// Reads `dev`'s state; `None` if the device is gone.
fn read(o: &Opts, dev: &str) -> Option<State> {
    read_or(o, dev).unwrap_or_else(|e| die(&e))
}

/// Reads `dev`'s state: `None` if the device is gone, an error if its
/// state cannot be read. A device deleted while its file is read fails
/// that read (an error, or a state cut short) before its file goes: a
/// failed read is tried again a few times, and counts only if the file is
/// still there.
fn read_or(o: &Opts, dev: &str) -> Result<Option<State>, String> {
    let path = format!("{}/{dev}", o.proc_dir);
    let mut tries = 0;
    loop {
        let r = match std::fs::read_to_string(&path) {
            Ok(text) => parse(&text).map(Some).map_err(|e| format!("{dev}: {e}")),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => Err(format!("{dev}: {e}")),
        };
        tries += 1;
        if r.is_ok() || tries == 5 {
            return r;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

struct Paint(bool);

impl Paint {
    fn wrap(&self, code: &str, s: &str) -> String {
        if self.0 {
            format!("\x1b[{code}m{s}\x1b[0m")
        } else {
            s.to_string()
        }
    }
    fn bold(&self, s: &str) -> String {
        self.wrap("1", s)
    }
    fn state(&self, s: &str) -> String {
        let code = match s {
            "up" => "32",
            "failed" | "no-carrier" | "down" => "31",
            _ => "33",
        };
        self.wrap(code, s)
    }
}

fn age(ms: u64) -> String {
    if ms < 10_000 {
        format!("{ms} ms")
    } else {
        format!("{:.1} s", ms as f64 / 1000.0)
    }
}

/// Per second, from two readings `dt` apart.
fn rate(now: u64, before: Option<u64>, dt: f64) -> Option<f64> {
    before
        .filter(|_| dt > 0.0)
        .map(|b| now.wrapping_sub(b) as f64 / dt)
}

/// [`rate`] of a count that wraps at 32 bits (an endpoint's `tx`).
fn rate32(now: u64, before: Option<u64>, dt: f64) -> Option<f64> {
    before
        .filter(|_| dt > 0.0)
        .map(|b| (now as u32).wrapping_sub(b as u32) as f64 / dt)
}

/// Counters that are 0 on a healthy device, and what each one points at:
/// `show` names those that are not.
const TROUBLE: &[(&str, &str)] = &[
    (
        "rx_auth_fail",
        "tags that failed: a key another node does not have?",
    ),
    (
        "rx_replays",
        "sealed frames replayed or from before a restart",
    ),
    ("rx_mode_mismatch", "frames of the other one_switch mode"),
    ("tx_queue_full", "packets dropped at a full slave queue"),
    ("tx_loop", "packets that came back to ri2n0"),
    ("peers_refused", "peers refused: peer_mem is full"),
    ("rx_nobuf", "packets with no reorder buffer free"),
    ("rx_held_full", "windows released early: held_mem is full"),
    ("slave_mac_taken", "slave MACs claimed by two peers"),
];

/// What `watch` remembers from the reading before.
#[derive(Default)]
struct Previous {
    clock_ms: u64,
    values: HashMap<String, u64>,
}

impl Previous {
    fn of(s: &State) -> Previous {
        let mut values = HashMap::new();
        for sl in &s.slaves {
            for k in ["tx_packets", "rx_packets"] {
                values.insert(format!("slave {} {k}", sl.str("name")), sl.num(k));
            }
        }
        for p in &s.peers {
            for e in &p.endpoints {
                values.insert(
                    format!("{} {} rx", p.mac(), e.str("slave")),
                    e.num("rx") + e.num("hb"),
                );
                values.insert(format!("{} {} tx", p.mac(), e.str("slave")), e.num("tx"));
            }
        }
        Previous {
            clock_ms: s.clock_ms,
            values,
        }
    }
}

/// The text of `show` (and of each `watch` frame, with rates).
fn render(
    s: &State,
    paint: &Paint,
    prev: Option<&Previous>,
    recent: &HashMap<String, u64>,
) -> String {
    let mut o = String::new();
    let dt = prev.map_or(0.0, |p| {
        s.clock_ms.saturating_sub(p.clock_ms) as f64 / 1000.0
    });
    let before = |k: &str| prev.and_then(|p| p.values.get(k).copied());
    let d = &s.device;
    o += &format!("{}: {}\n", paint.bold("device"), paint.bold(s.name()));
    o += &format!(
        "  mac: {}  mtu: {}  state: {}  epoch: {}\n",
        d.str("mac"),
        d.str("mtu"),
        paint.state(d.str("state")),
        d.str("epoch")
    );
    let params: Vec<String> = s
        .params
        .pairs
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    o += &format!("  parameters: {}\n", params.join(" "));
    if let Some(a) = &s.auth {
        o += &match a.str("state") {
            "on" => format!(
                "  keys: on, key id {}, also accepted {}\n",
                a.str("key_id"),
                a.str("accept_id")
            ),
            st => format!("  keys: {st}\n"),
        };
    }
    let sm = &s.peers_summary;
    o += &format!(
        "  peers: {} of {}, reorder buffers {} of {}, held {} bytes\n",
        sm.str("count"),
        sm.str("capacity"),
        sm.str("bufs"),
        sm.str("bufs_max"),
        sm.str("held_bytes")
    );
    // Older modules have no such keys.
    if sm.get("probing_peers").is_some() && (sm.num("lossy_peers") | sm.num("probing_peers")) != 0 {
        let peers = |n: u64| format!("{n} peer{}", if n == 1 { "" } else { "s" });
        o += &format!(
            "  loss probes: to {}, from {}, asked no faster than every {} ms\n",
            peers(sm.num("lossy_peers")),
            peers(sm.num("probing_peers")),
            5u64 << sm.num("probe_shift").min(9)
        );
    }
    let c = &s.counters;
    o += &format!(
        "  packets: rx {} tx {}  dropped: rx {} tx {} (no link {})  malformed {}\n",
        c.num("rx_packets"),
        c.num("tx_packets"),
        c.num("rx_dropped"),
        c.num("tx_dropped"),
        c.num("tx_no_link"),
        c.num("rx_malformed")
    );
    for (k, why) in TROUBLE {
        if c.num(k) != 0 {
            o += &format!("  {}: {} {}\n", paint.wrap("33", k), c.num(k), why);
        }
    }
    for sl in &s.slaves {
        let name = sl.str("name");
        let mut line = format!(
            "  {} {} (link {}): carrier {}, changed {} ago, tx {} rx {} packets",
            paint.bold("slave"),
            paint.bold(name),
            sl.str("link"),
            paint.state(sl.str("carrier")),
            age(sl.num("changed_ms")),
            sl.num("tx_packets"),
            sl.num("rx_packets")
        );
        if let (Some(tx), Some(rx)) = (
            rate(
                sl.num("tx_packets"),
                before(&format!("slave {name} tx_packets")),
                dt,
            ),
            rate(
                sl.num("rx_packets"),
                before(&format!("slave {name} rx_packets")),
                dt,
            ),
        ) {
            line += &format!(", now tx {tx:.0}/s rx {rx:.0}/s");
        }
        if sl.num("tx_dropped") != 0 {
            line += &format!(", dropped {} at its queue", sl.num("tx_dropped"));
        }
        o += &line;
        o.push('\n');
    }
    for p in &s.peers {
        let r = &p.rec;
        o += &format!("\n{}: {}\n", paint.bold("peer"), paint.bold(p.mac()));
        o += &format!(
            "  epoch {}  tx_next {}  rx_next {}  held {}\n",
            r.str("epoch"),
            r.str("tx_next"),
            r.str("rx_next"),
            r.str("held")
        );
        o += &format!(
            "  released: in order {}, timeout {}, loss {}, flushes {}; gaps {}, late {} (after the loss rule {}), restarts {}\n",
            r.num("in_order"), r.num("timeout"), r.num("loss"), r.num("flushes"), r.num("gaps"), r.num("late"), r.num("late_loss"), r.num("restarts")
        );
        for e in &p.endpoints {
            let slave = e.str("slave");
            let key = format!("{} {slave}", p.mac());
            let state = paint.state(e.str("state"));
            let state = if recent.contains_key(&key) {
                paint.wrap("7", &state)
            } else {
                state
            };
            // Frames that came too late to count: shown once there are any.
            let late = match e.num("late") {
                0 => String::new(),
                n => format!(" late {n}"),
            };
            let mut line = format!(
                "  endpoint {slave}: {state}, changed {} ago, last rx {} ago, rx {} hb {}{late} tx {}, loss {}.{:02} %, fails {} recoveries {} lossy {}",
                age(e.num("changed_ms")), age(e.num("last_rx_ms")), e.num("rx"), e.num("hb"), e.num("tx"),
                e.num("loss_bp") / 100, e.num("loss_bp") % 100, e.num("fails"), e.num("recoveries"), e.num("lossy")
            );
            if let (Some(rx), Some(tx)) = (
                rate(e.num("rx") + e.num("hb"), before(&format!("{key} rx")), dt),
                rate32(e.num("tx"), before(&format!("{key} tx")), dt),
            ) {
                line += &format!(", now rx {rx:.0}/s tx {tx:.0}/s");
            }
            if e.num("peer_lossy") != 0 {
                line += ", the peer has it out of use for loss toward us";
            }
            if let Some(m) = e
                .get("peer_slave_mac")
                .filter(|m| *m != "none" && *m != "00:00:00:00:00:00")
            {
                line += &format!(", the peer's slave {m}");
            }
            o += &line;
            o.push('\n');
        }
    }
    o
}

fn show(o: &Opts) {
    let devs = devices(o, o.args.first().map(String::as_str));
    // A device whose state cannot be read is named, and the others shown.
    let (mut unreadable, mut gone) = (false, false);
    let states: Vec<State> = devs
        .iter()
        .filter_map(|d| match read_or(o, d) {
            Ok(Some(s)) => Some(s),
            Ok(None) => {
                eprintln!("ri2n: {d} went away");
                gone = true;
                None
            }
            Err(e) => {
                eprintln!("ri2n: {e}");
                unreadable = true;
                None
            }
        })
        .collect();
    if o.format == Format::Json {
        emit(&to_json(&states));
    } else if o.format == Format::Prometheus {
        emit(&to_prometheus(&states));
    } else {
        let paint = Paint(std::io::stdout().is_terminal());
        let texts: Vec<String> = states
            .iter()
            .map(|s| render(s, &paint, None, &HashMap::new()))
            .collect();
        emit(&texts.join("\n"));
    }
    if unreadable {
        exit(2);
    }
    if gone {
        exit(1);
    }
}

/// A transition seen between two readings.
struct Event {
    at_ms: u64,
    what: String,
}

/// Endpoint and carrier states of one reading, by key.
fn states_of(s: &State) -> HashMap<String, (String, u64)> {
    let mut m = HashMap::new();
    for sl in &s.slaves {
        m.insert(
            format!("slave {} carrier", sl.str("name")),
            (sl.str("carrier").to_string(), sl.num("changed_ms")),
        );
    }
    for p in &s.peers {
        for e in &p.endpoints {
            m.insert(
                format!("peer {} {}", p.mac(), e.str("slave")),
                (e.str("state").to_string(), e.num("changed_ms")),
            );
        }
    }
    m
}

/// When a change seen in reading `s` (the one before was at `prev_ms`)
/// happened: the driver's own time of it if it falls in between, else the
/// reading's.
fn when(s: &State, prev_ms: u64, changed_ms: u64) -> u64 {
    let t = s.clock_ms.saturating_sub(changed_ms);
    if t >= prev_ms {
        t
    } else {
        s.clock_ms
    }
}

fn wanted(o: &Opts, key: &str, state: &str) -> bool {
    let mut parts = key.split(' ');
    let (kind, a, b) = (
        parts.next().unwrap_or(""),
        parts.next().unwrap_or(""),
        parts.next().unwrap_or(""),
    );
    if let Some(p) = &o.peer {
        if kind != "peer" || !a.eq_ignore_ascii_case(p) {
            return false;
        }
    }
    if let Some(sl) = &o.slave {
        let slave = if kind == "peer" { b } else { a };
        if slave != sl {
            return false;
        }
    }
    o.states
        .as_ref()
        .is_none_or(|ss| ss.iter().any(|s| s == state))
}

fn diff(
    o: &Opts,
    dev: &str,
    s: &State,
    before: &HashMap<String, (String, u64)>,
    prev_ms: u64,
    first: bool,
) -> Vec<Event> {
    let mut out = Vec::new();
    let now = states_of(s);
    let mut keys: Vec<&String> = now.keys().collect();
    keys.sort();
    for k in keys {
        let (state, changed) = &now[k];
        let old = before.get(k).map(|v| v.0.as_str());
        let changed_now = if first {
            o.initial
        } else {
            old != Some(state.as_str())
        };
        if !changed_now || !wanted(o, k, state) {
            continue;
        }
        let at_ms = if first {
            s.clock_ms.saturating_sub(*changed)
        } else {
            when(s, prev_ms, *changed)
        };
        let what = match old {
            Some(old) if !first => format!("{dev} {k} {old} -> {state}"),
            _ => format!("{dev} {k} {state}"),
        };
        out.push(Event { at_ms, what });
    }
    out
}

fn events(o: &Opts) {
    catch_signals();
    let dev = devices(o, o.args.first().map(String::as_str)).remove(0);
    let start = Instant::now();
    let mut seen = 0u64;
    let mut before = HashMap::new();
    let mut prev_ms = 0;
    let mut first = true;
    while !STOP.load(Ordering::Relaxed) {
        let Some(s) = read(o, &dev) else { gone(&dev) };
        if first {
            // On stderr, as tcpdump's "listening on": the device is found
            // and followed from here on (a script can wait for it).
            eprintln!("ri2n: following {dev}");
        }
        for e in diff(o, &dev, &s, &before, prev_ms, first) {
            emit(&format!("{} {} seen={}\n", e.at_ms, e.what, s.clock_ms));
            seen += 1;
            if o.count.is_some_and(|c| seen >= c) {
                return;
            }
        }
        before = states_of(&s);
        prev_ms = s.clock_ms;
        first = false;
        if o.timeout.is_some_and(|t| start.elapsed() >= t) {
            exit(1);
        }
        nap(o.interval);
    }
}

fn watch(o: &Opts) {
    catch_signals();
    let dev = devices(o, o.args.first().map(String::as_str)).remove(0);
    let paint = Paint(std::io::stdout().is_terminal());
    let mut prev: Option<Previous> = None;
    let mut before = HashMap::new();
    let mut log: Vec<String> = Vec::new();
    let mut recent: HashMap<String, u64> = HashMap::new();
    let mut first = true;
    emit("\x1b[?25l");
    CURSOR_HIDDEN.store(true, Ordering::Relaxed);
    while !STOP.load(Ordering::Relaxed) {
        let Some(s) = read(o, &dev) else { gone(&dev) };
        if !first {
            for e in diff(
                o,
                &dev,
                &s,
                &before,
                prev.as_ref().map_or(0, |p| p.clock_ms),
                false,
            ) {
                let key = e
                    .what
                    .split(' ')
                    .skip(2)
                    .take(2)
                    .collect::<Vec<_>>()
                    .join(" ");
                recent.insert(key, s.clock_ms);
                log.push(format!("{} {}", clock_text(e.at_ms), e.what));
            }
        }
        recent.retain(|_, t| s.clock_ms.saturating_sub(*t) < 5_000);
        let keep = log.len().saturating_sub(8);
        log.drain(..keep);
        let mut frame = format!(
            "\x1b[H\x1b[2J{}  (every {} ms; Ctrl-C ends)\n\n",
            clock_text(s.clock_ms),
            o.interval.as_millis()
        );
        frame += &render(&s, &paint, prev.as_ref(), &recent);
        frame += &format!("\n{}\n", paint.bold("transitions"));
        for l in &log {
            frame += &format!("  {l}\n");
        }
        emit(&frame);
        before = states_of(&s);
        prev = Some(Previous::of(&s));
        first = false;
        nap(o.interval);
    }
    show_cursor();
}

/// `HH:MM:SS.mmm` UTC of a time in ms since the epoch.
fn clock_text(ms: u64) -> String {
    let s = ms / 1000;
    format!(
        "{:02}:{:02}:{:02}.{:03}",
        s / 3600 % 24,
        s / 60 % 60,
        s % 60,
        ms % 1000
    )
}

fn get(o: &Opts) {
    let a: Vec<&str> = o.args.iter().map(String::as_str).collect();
    let Some((&dev, what)) = a.split_first() else {
        die(USAGE)
    };
    devices(o, Some(dev));
    let Some(s) = read(o, dev) else { gone(dev) };
    let rec_val = |r: Option<&Record>, k: &str| r.and_then(|r| r.get(k)).map(String::from);
    let v = match what {
        ["counter", k] => rec_val(Some(&s.counters), k),
        ["peers", k] => rec_val(Some(&s.peers_summary), k),
        ["param", k] => rec_val(Some(&s.params), k),
        ["device", k] => rec_val(Some(&s.device), k),
        ["auth", k] => rec_val(s.auth.as_ref(), k),
        ["slave", sl, k] => rec_val(s.slaves.iter().find(|r| r.get("name") == Some(sl)), k),
        ["peer", mac, k] => rec_val(s.peer(mac).map(|p| &p.rec), k),
        ["endpoint", mac, sl, k] => rec_val(s.peer(mac).and_then(|p| p.endpoint(sl)), k),
        ["endpoints", mac, k] => s
            .peer(mac)
            .filter(|p| p.endpoints.iter().any(|e| e.get(k).is_some()))
            .map(|p| {
                p.endpoints
                    .iter()
                    .map(|e| e.num(k))
                    .sum::<u64>()
                    .to_string()
            }),
        ["peer-list"] => Some(
            s.peers
                .iter()
                .map(|p| p.mac().to_string())
                .collect::<Vec<_>>()
                .join("\n"),
        ),
        _ => die(USAGE),
    };
    match v {
        Some(v) => emit(&format!("{v}\n")),
        None => exit(1),
    }
}

/// `key DEV set|accept FILE|none`: writes the key in FILE to the device's
/// write-only sysfs file, so that it never shows on a command line or in
/// the process list.
fn key(o: &Opts) {
    let [dev, what, src] = o.args.as_slice() else {
        die(USAGE)
    };
    let attr = match what.as_str() {
        "set" => "key",
        "accept" => "key_accept",
        _ => die(USAGE),
    };
    let value = if src == "none" {
        "none".to_string()
    } else {
        let text = std::fs::read_to_string(src).unwrap_or_else(|e| die(&format!("{src}: {e}")));
        use std::os::unix::fs::PermissionsExt;
        if std::fs::metadata(src).is_ok_and(|m| m.permissions().mode() & 0o077 != 0) {
            eprintln!("ri2n: warning: {src} is readable by others than its owner (chmod 600 it)");
        }
        let hex: String = text.chars().filter(|c| !c.is_whitespace()).collect();
        if hex.len() != 32 || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
            die(&format!("{src}: a key is 32 hex digits (128 bits)"));
        }
        hex
    };
    let path = format!("/sys/class/net/{dev}/ri2n/{attr}");
    if let Err(e) = std::fs::write(&path, value + "\n") {
        die(&format!("{path}: {e}"));
    }
}

fn main() {
    let (cmd, o) = parse_args();
    match cmd.as_str() {
        "show" => show(&o),
        "watch" => watch(&o),
        "events" => events(&o),
        "get" => get(&o),
        "key" => key(&o),
        _ => die(USAGE),
    }
}
