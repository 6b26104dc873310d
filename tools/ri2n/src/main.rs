// SPDX-License-Identifier: GPL-2.0

//! `ri2n`: the state of ri2n devices, in the spirit of `wg show`, over the
//! driver's generic netlink family (include/uapi/linux/ri2n.h).
//!
//! `show`, `watch` and `get` read a device's dump, decoded into records
//! (`state.rs`, `nl.rs`), so that `--dir DIR` (or `RI2N_DIR`) can read
//! saved ones instead. `events` subscribes to the
//! family's `events` group and waits: it never polls. `set` and `key`
//! write through netlink; `up` and `down` make and delete a device from
//! its file (`quick.rs`). `ri2n --help` and ri2n(8) (`ri2n generate man`)
//! say the rest.
//!
//! Exit status: 0; 1 events timed out, get found no such value, or the
//! device went away; 2 usage, no device, a state this tool cannot read,
//! or a refused request.

mod quick;

use clap::{CommandFactory, Parser, Subcommand, ValueEnum};
use ri2n_core::params::{Param, SPECS};
use ri2n_core::uapi::Reason;
use ri2n_state::nl::{self, Conn, KeyOp, NlError};
use ri2n_state::{parse, to_json, to_prometheus, to_records, Record, State};
use std::collections::HashMap;
use std::io::{IsTerminal, Write};
use std::process::exit;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime};

#[derive(Parser)]
#[command(
    name = "ri2n",
    version,
    about = "The state of ri2n devices: slaves, peers and the links toward each",
    long_about = "The state of ri2n devices: slaves, peers and the links toward each.\n\n\
        Without a command: `show`, of every ri2n device in this network namespace.",
    after_help = "Exit status: 0; 1 events timed out, get found no such value, or the device went \
        away; 2 usage, no device, a state this tool cannot read, or a refused request."
)]
struct Cli {
    /// Read states from DIR's files, one a device, saved by `ri2n show
    /// DEV --format records`, not from the kernel
    #[arg(long, global = true, value_name = "DIR", env = "RI2N_DIR")]
    dir: Option<String>,
    /// `show` of every device as JSON (without a command)
    #[arg(short, long)]
    json: bool,
    /// `show`'s format (without a command)
    #[arg(long, value_enum)]
    format: Option<Format>,
    #[command(subcommand)]
    cmd: Option<Cmd>,
}

#[derive(Subcommand)]
enum Cmd {
    /// Devices, parameters, slaves, peers and endpoints
    Show {
        /// One device (default: every one)
        dev: Option<String>,
        /// As JSON (schema 1)
        #[arg(short, long)]
        json: bool,
        /// Text, JSON, records (a line each, for scripts and saved
        /// copies), or Prometheus metrics for node_exporter's textfile
        /// collector
        #[arg(long, value_enum)]
        format: Option<Format>,
    },
    /// `show`, refreshed in place, with rates and each transition marked
    Watch {
        /// The device (default: the first)
        dev: Option<String>,
        /// Milliseconds between frames
        #[arg(long, default_value_t = 1000, value_name = "MS")]
        interval: u64,
    },
    /// Transitions as the kernel sends them: endpoints, carriers, peers
    Events {
        /// The device (default: the first)
        dev: Option<String>,
        /// Only this peer's (a MAC)
        #[arg(long)]
        peer: Option<String>,
        /// Only this slave's
        #[arg(long)]
        slave: Option<String>,
        /// Only transitions into these states (up, lossy, peer-failed,
        /// failed, no-carrier, down)
        #[arg(long, value_delimiter = ',', value_parser = split_states)]
        state: Vec<Vec<String>>,
        /// First the states as they are
        #[arg(long)]
        initial: bool,
        /// End after N events
        #[arg(long, value_name = "N")]
        count: Option<u64>,
        /// End after S seconds, with exit status 1
        #[arg(long, value_name = "S")]
        timeout: Option<u64>,
        /// One JSON object per line, times in ISO 8601
        #[arg(short, long)]
        json: bool,
    },
    /// One value, for scripts
    #[command(
        after_help = "WHAT: counter NAME | peers NAME | param NAME | device NAME | \
        auth NAME | slave SLAVE NAME | peer MAC NAME | endpoint MAC SLAVE NAME | \
        endpoints MAC NAME (summed over the links) | peer-list"
    )]
    Get {
        dev: String,
        #[arg(required = true, num_args = 1..=4, value_name = "WHAT")]
        what: Vec<String>,
    },
    /// Sets parameters, all or none, as `ip link set DEV type ri2n` does
    Set {
        dev: String,
        /// PARAM VALUE pairs (the names of /sys/class/net/DEV/ri2n/)
        #[arg(required = true, num_args = 2.., value_name = "PARAM VALUE")]
        pairs: Vec<String>,
    },
    /// Seals frames with a key, or also accepts one (a rotation)
    Key {
        dev: String,
        which: KeyWhich,
        /// A file of 32 hex digits (128 bits), or `none`
        file: String,
    },
    /// Makes a device from its file: ports, parameters, key, addresses
    #[command(
        after_help = "CONF: NAME for /etc/ri2n/NAME.conf, or a path to NAME.conf; \
        ri2n(8) and Documentation/ri2n.rst (Starting at boot) give its keys"
    )]
    Up { conf: String },
    /// Deletes a device `up` made (its ports go back as they were)
    Down {
        /// NAME, or the path of its file
        conf: String,
    },
    /// The man page or a shell's completions, on stdout
    #[command(hide = true)]
    Generate { what: Generated },
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Format {
    Text,
    Json,
    Records,
    Prometheus,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum KeyWhich {
    /// The key frames are sealed with
    Set,
    /// A key also accepted
    Accept,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Generated {
    Man,
    Bash,
    Zsh,
    Fish,
}

/// `--state a|b`: also split at `|`.
fn split_states(s: &str) -> Result<Vec<String>, String> {
    Ok(s.split('|').map(String::from).collect())
}

static STOP: AtomicBool = AtomicBool::new(false);
/// `watch` hid the terminal's cursor: whoever ends the program shows it.
static CURSOR_HIDDEN: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::Relaxed);
}

/// SIGINT and SIGTERM end `watch` cleanly.
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

/// Where states come from: the kernel, or a directory of saved records.
enum Source {
    Netlink(Conn),
    Dir(String),
}

impl Source {
    fn open(proc_dir: Option<String>) -> Source {
        match proc_dir {
            Some(d) => Source::Dir(d),
            None => match Conn::open() {
                Ok(c) => Source::Netlink(c),
                Err(NlError::NoFamily) => die(
                    "no ri2n device: no generic netlink family ri2n (is the ri2n module loaded?)",
                ),
                Err(e) => die(&e.to_string()),
            },
        }
    }

    fn conn(&self) -> &Conn {
        match self {
            Source::Netlink(c) => c,
            Source::Dir(_) => die("--dir reads saved states: it cannot write one"),
        }
    }

    /// Every device's name.
    fn names(&self) -> Vec<String> {
        match self {
            Source::Netlink(_) => nl::devices(),
            Source::Dir(d) => {
                let Ok(dir) = std::fs::read_dir(d) else {
                    die(&format!("no saved state: {d} is missing"))
                };
                let mut names: Vec<String> = dir
                    .filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect();
                names.sort();
                names
            }
        }
    }

    /// The devices to read: `dev`, or every one there is.
    fn devices(&self, dev: Option<&str>) -> Vec<String> {
        let names = self.names();
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
    fn read(&self, dev: &str) -> Option<State> {
        self.read_or(dev).unwrap_or_else(|e| die(&e))
    }

    /// Reads `dev`'s state: `None` if the device is gone, an error if its
    /// state cannot be read.
    fn read_or(&self, dev: &str) -> Result<Option<State>, String> {
        match self {
            Source::Netlink(c) => c.dump(dev).map_err(|e| format!("{dev}: {e}")),
            Source::Dir(d) => match std::fs::read_to_string(format!("{d}/{dev}")) {
                Ok(text) => parse(&text).map(Some).map_err(|e| format!("{dev}: {e}")),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
                Err(e) => Err(format!("{dev}: {e}")),
            },
        }
    }
}

/// Milliseconds since the epoch, now.
fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// ISO 8601 UTC, to the millisecond, of `ms` since the epoch.
fn iso8601(ms: u64) -> String {
    let (days, rem) = ((ms / 86_400_000) as i64, ms % 86_400_000);
    // Days to a civil date (H. Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    let s = rem / 1000;
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        s / 3600,
        s / 60 % 60,
        s % 60,
        rem % 1000
    )
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

fn show(src: &Source, dev: Option<&str>, format: Format) {
    let devs = src.devices(dev);
    // A device whose state cannot be read is named, and the others shown.
    let (mut unreadable, mut gone) = (false, false);
    let states: Vec<State> = devs
        .iter()
        .filter_map(|d| match src.read_or(d) {
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
    match format {
        Format::Json => emit(&to_json(&states)),
        Format::Prometheus => emit(&to_prometheus(&states)),
        Format::Records => emit(&states.iter().map(to_records).collect::<String>()),
        Format::Text => {
            let paint = Paint(std::io::stdout().is_terminal());
            let texts: Vec<String> = states
                .iter()
                .map(|s| render(s, &paint, None, &HashMap::new()))
                .collect();
            emit(&texts.join("\n"));
        }
    }
    if unreadable {
        exit(2);
    }
    if gone {
        exit(1);
    }
}

/// What `events` and `watch` pass on.
struct Filter {
    peer: Option<String>,
    slave: Option<String>,
    states: Vec<String>,
}

impl Filter {
    /// Whether a transition of `kind` (`peer` or `slave`) `a` (a MAC or a
    /// slave), on slave `b` for a peer, into `state`, is wanted.
    fn wants(&self, kind: &str, a: &str, b: &str, state: Option<&str>) -> bool {
        if let Some(p) = &self.peer {
            if kind != "peer" || !a.eq_ignore_ascii_case(p) {
                return false;
            }
        }
        if let Some(sl) = &self.slave {
            let slave = if kind == "peer" { b } else { a };
            if slave != sl {
                return false;
            }
        }
        self.states.is_empty() || state.is_some_and(|s| self.states.iter().any(|w| w == s))
    }
}

/// A transition seen between two readings.
struct Seen {
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

/// The changes from `before` to `s` (all of `s`'s states if `first`), as
/// `watch` marks them.
fn diff(dev: &str, s: &State, before: &HashMap<String, (String, u64)>, prev_ms: u64) -> Vec<Seen> {
    let mut out = Vec::new();
    let now = states_of(s);
    let mut keys: Vec<&String> = now.keys().collect();
    keys.sort();
    for k in keys {
        let (state, changed) = &now[k];
        let Some(old) = before.get(k).map(|v| v.0.as_str()) else {
            continue;
        };
        if old == state {
            continue;
        }
        // The driver's own time of it if it falls in between, else the
        // reading's.
        let t = s.clock_ms.saturating_sub(*changed);
        let at_ms = if t >= prev_ms { t } else { s.clock_ms };
        out.push(Seen {
            at_ms,
            what: format!("{dev} {k} {old} -> {state}"),
        });
    }
    out
}

/// One event line, text or JSON; `None` if the filter drops it.
fn event_line(e: &nl::Event, f: &Filter, json: bool) -> Option<String> {
    let reason = e.reason?;
    let at_ms = e.time_ns / 1_000_000;
    let seen = now_ms();
    let (kind, a, b, states) = match reason {
        Reason::CarrierDown | Reason::CarrierUp => {
            let up = reason == Reason::CarrierUp;
            let (old, new) = if up { ("down", "up") } else { ("up", "down") };
            (
                "slave",
                e.slave.clone()?,
                "carrier".to_string(),
                Some((old, new)),
            )
        }
        Reason::PeerNew | Reason::PeerForgotten | Reason::PeerRestarted => {
            ("peer", e.peer.clone()?, String::new(), None)
        }
        Reason::DeviceRemoved => return None,
        _ => ("peer", e.peer.clone()?, e.slave.clone()?, e.states),
    };
    if !f.wants(kind, &a, &b, states.map(|s| s.1)) {
        return None;
    }
    if json {
        let mut v = serde_json::json!({
            "time": iso8601(at_ms),
            "device": e.dev,
            "reason": reason.name(),
        });
        let m = v.as_object_mut().expect("an object");
        if let Some(p) = &e.peer {
            m.insert("peer".into(), p.as_str().into());
        }
        if let Some(l) = e.link {
            m.insert("link".into(), l.into());
        }
        if let Some(s) = &e.slave {
            m.insert("slave".into(), s.as_str().into());
        }
        if let Some((old, new)) = states {
            m.insert("old".into(), old.into());
            m.insert("new".into(), new.into());
        }
        m.insert("seen".into(), iso8601(seen).into());
        return Some(format!("{v}\n"));
    }
    // Text says state changes; a change that leaves the state as it was
    // (the peer failing a link already failed here) is in JSON only.
    if states.is_some_and(|(old, new)| old == new) {
        return None;
    }
    let what = match (reason, states) {
        (Reason::PeerNew, _) => format!("peer {a} new"),
        (Reason::PeerForgotten, _) => format!("peer {a} forgotten"),
        (Reason::PeerRestarted, _) => format!("peer {a} restarted"),
        (_, Some((old, new))) => format!("{kind} {a} {b} {old} -> {new}"),
        _ => return None,
    };
    Some(format!("{at_ms} {} {what} seen={seen}\n", e.dev))
}

#[allow(clippy::too_many_arguments)]
fn events(
    src: Source,
    dev: Option<&str>,
    f: Filter,
    initial: bool,
    count: Option<u64>,
    timeout: Option<u64>,
    json: bool,
) {
    let dev = src.devices(dev).remove(0);
    let Source::Netlink(conn) = src else {
        die("events come from the kernel: --dir has none")
    };
    if let Some(s) = timeout {
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_secs(s));
            exit(1);
        });
    }
    // Subscribed before the first reading, so that nothing falls between.
    let mut sub = nl::Events::subscribe(&conn).unwrap_or_else(|e| die(&e.to_string()));
    let ifindex: u32 = std::fs::read_to_string(format!("/sys/class/net/{dev}/ifindex"))
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0);
    let mut seen = 0u64;
    let mut out = |line: String| {
        emit(&line);
        seen += 1;
        if count.is_some_and(|c| seen >= c) {
            exit(0);
        }
    };
    if initial {
        let Some(s) = conn.dump(&dev).unwrap_or_else(|e| die(&e.to_string())) else {
            gone(&dev)
        };
        let now = states_of(&s);
        let mut keys: Vec<&String> = now.keys().collect();
        keys.sort();
        for k in keys {
            let (state, changed) = &now[k];
            let mut parts = k.split(' ');
            let (kind, a, b) = (
                parts.next().unwrap_or(""),
                parts.next().unwrap_or(""),
                parts.next().unwrap_or(""),
            );
            if f.wants(kind, a, b, Some(state)) {
                let at_ms = s.clock_ms.saturating_sub(*changed);
                if json {
                    let v = serde_json::json!({"time": iso8601(at_ms), "device": dev, "initial": k, "state": state});
                    out(format!("{v}\n"));
                } else {
                    out(format!("{at_ms} {dev} {k} {state} seen={}\n", s.clock_ms));
                }
            }
        }
    }
    // Its socket's thread wakes 10 times a second: gone before the wait.
    drop(conn);
    // On stderr, as tcpdump's "listening on": the device is found and
    // followed from here on (a script can wait for it).
    eprintln!("ri2n: following {dev}");
    let mut dropped = 0;
    loop {
        let m = match sub.next_event() {
            Ok(m) => m,
            Err(e @ NlError::Lost) => {
                eprintln!("ri2n: {dev}: {e}");
                continue;
            }
            Err(e) => die(&e.to_string()),
        };
        let Ok(e) = nl::decode_event(&m) else {
            continue;
        };
        if e.ifindex != ifindex && e.dev != dev {
            continue;
        }
        if e.reason == Some(Reason::DeviceRemoved) {
            gone(&dev);
        }
        if e.dropped > dropped {
            eprintln!(
                "ri2n: {dev} dropped {} events over its rate (RI2N_EVENTS_PER_SEC)",
                e.dropped - dropped
            );
            dropped = e.dropped;
        }
        if let Some(line) = event_line(&e, &f, json) {
            out(line);
        }
    }
}

fn watch(src: &Source, dev: Option<&str>, interval: Duration) {
    catch_signals();
    let dev = src.devices(dev).remove(0);
    let tty = std::io::stdout().is_terminal();
    let paint = Paint(tty);
    let mut prev: Option<Previous> = None;
    let mut before = HashMap::new();
    let mut log: Vec<String> = Vec::new();
    let mut recent: HashMap<String, u64> = HashMap::new();
    if tty {
        emit("\x1b[?25l");
        CURSOR_HIDDEN.store(true, Ordering::Relaxed);
    }
    while !STOP.load(Ordering::Relaxed) {
        let Some(s) = src.read(&dev) else { gone(&dev) };
        if prev.is_some() {
            for e in diff(&dev, &s, &before, prev.as_ref().map_or(0, |p| p.clock_ms)) {
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
        // In place on a terminal; elsewhere one frame after another.
        let mut frame = if tty {
            "\x1b[H\x1b[2J".to_string()
        } else {
            "\n".to_string()
        };
        frame += &format!(
            "{}  (every {} ms; Ctrl-C ends)\n\n",
            clock_text(s.clock_ms),
            interval.as_millis()
        );
        frame += &render(&s, &paint, prev.as_ref(), &recent);
        frame += &format!("\n{}\n", paint.bold("transitions"));
        for l in &log {
            frame += &format!("  {l}\n");
        }
        emit(&frame);
        before = states_of(&s);
        prev = Some(Previous::of(&s));
        nap(interval);
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

fn get(src: &Source, dev: &str, what: &[String]) {
    src.devices(Some(dev));
    let Some(s) = src.read(dev) else { gone(dev) };
    let rec_val = |r: Option<&Record>, k: &str| r.and_then(|r| r.get(k)).map(String::from);
    let what: Vec<&str> = what.iter().map(String::as_str).collect();
    let v = match what.as_slice() {
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
        _ => {
            let _ = Cli::command()
                .find_subcommand_mut("get")
                .map(|c| c.print_help());
            exit(2)
        }
    };
    match v {
        Some(v) => emit(&format!("{v}\n")),
        None => exit(1),
    }
}

/// A refused or failed write: what the kernel said, exit status 2.
fn refused(dev: &str, e: NlError) -> ! {
    die(&format!("{dev}: {e}"))
}

/// `set DEV PARAM VALUE...`: all or none, as `ip link set`.
fn set(src: &Source, dev: &str, pairs: &[String]) {
    if !pairs.len().is_multiple_of(2) {
        die("set takes PARAM VALUE pairs");
    }
    let mut attrs = Vec::new();
    for kv in pairs.chunks(2) {
        let Some(i) = SPECS.iter().position(|s| s.name == kv[0]) else {
            let names: Vec<&str> = SPECS.iter().map(|s| s.name).collect();
            die(&format!(
                "no parameter {} (parameters: {})",
                kv[0],
                names.join(" ")
            ))
        };
        let Ok(v) = kv[1].parse::<u32>() else {
            die(&format!("{}: {} is not a number", kv[0], kv[1]))
        };
        attrs.push((Param::ALL[i].attr(), v));
    }
    src.devices(Some(dev));
    src.conn()
        .set(dev, &attrs, None, None)
        .unwrap_or_else(|e| refused(dev, e));
}

/// `key DEV set|accept FILE|none`: the key in FILE, so that it never shows
/// on a command line or in the process list.
fn key(src: &Source, dev: &str, which: KeyWhich, file: &str) {
    let op = if file == "none" {
        KeyOp::None
    } else {
        KeyOp::Set(quick::read_key(std::path::Path::new(file), false).unwrap_or_else(|e| die(&e)))
    };
    src.devices(Some(dev));
    let (seal, accept) = match which {
        KeyWhich::Set => (Some(op), None),
        KeyWhich::Accept => (None, Some(op)),
    };
    src.conn()
        .set(dev, &[], seal, accept)
        .unwrap_or_else(|e| refused(dev, e));
}

/// `up CONF`: the device its file describes, or nothing changed.
fn up(conf: &str) {
    let (path, name) = quick::locate(conf).unwrap_or_else(|e| die(&e));
    let text =
        std::fs::read_to_string(&path).unwrap_or_else(|e| die(&format!("{}: {e}", path.display())));
    let c = quick::parse(&name, &path.display().to_string(), &text).unwrap_or_else(|e| die(&e));
    let set = |params: &[(u16, u32)], key: Option<[u8; 16]>| {
        let conn = Conn::open().map_err(|e| e.to_string())?;
        conn.set(&c.name, params, key.map(KeyOp::Set), None)
            .map_err(|e| format!("{}: {e}", c.name))
    };
    quick::up(&c, &set).unwrap_or_else(|e| die(&e));
}

fn generate(what: Generated) {
    let mut cmd = Cli::command();
    let mut out = std::io::stdout();
    let r = match what {
        Generated::Man => clap_mangen::Man::new(cmd).section("8").render(&mut out),
        Generated::Bash => {
            clap_complete::generate(clap_complete::Shell::Bash, &mut cmd, "ri2n", &mut out);
            Ok(())
        }
        Generated::Zsh => {
            clap_complete::generate(clap_complete::Shell::Zsh, &mut cmd, "ri2n", &mut out);
            Ok(())
        }
        Generated::Fish => {
            clap_complete::generate(clap_complete::Shell::Fish, &mut cmd, "ri2n", &mut out);
            Ok(())
        }
    };
    if r.is_err() {
        exit(0);
    }
}

fn main() {
    let cli = Cli::parse();
    let fmt = |json: bool, format: Option<Format>| {
        if json {
            Format::Json
        } else {
            format.unwrap_or(Format::Text)
        }
    };
    let cmd = cli.cmd.unwrap_or(Cmd::Show {
        dev: None,
        json: cli.json,
        format: cli.format,
    });
    if let Cmd::Generate { what } = cmd {
        return generate(what);
    }
    if let Cmd::Up { conf } = &cmd {
        return up(conf);
    }
    if let Cmd::Down { conf } = &cmd {
        let (_, name) = quick::locate(conf).unwrap_or_else(|e| die(&e));
        return quick::down(&name).unwrap_or_else(|e| die(&e));
    }
    let src = Source::open(cli.dir);
    match cmd {
        Cmd::Show { dev, json, format } => show(&src, dev.as_deref(), fmt(json, format)),
        Cmd::Watch { dev, interval } => {
            watch(&src, dev.as_deref(), Duration::from_millis(interval.max(1)))
        }
        Cmd::Events {
            dev,
            peer,
            slave,
            state,
            initial,
            count,
            timeout,
            json,
        } => {
            let f = Filter {
                peer,
                slave,
                states: state.into_iter().flatten().collect(),
            };
            events(src, dev.as_deref(), f, initial, count, timeout, json)
        }
        Cmd::Get { dev, what } => get(&src, &dev, &what),
        Cmd::Set { dev, pairs } => set(&src, &dev, &pairs),
        Cmd::Key { dev, which, file } => key(&src, &dev, which, &file),
        Cmd::Generate { .. } | Cmd::Up { .. } | Cmd::Down { .. } => unreachable!(),
    }
}

#[cfg(test)]
mod tests {
    use super::iso8601;

    #[test]
    fn iso8601_is_utc_to_the_millisecond() {
        assert_eq!(iso8601(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso8601(1_795_946_625_998), "2026-11-29T10:03:45.998Z");
        assert_eq!(iso8601(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(iso8601(4_102_444_799_999), "2099-12-31T23:59:59.999Z");
    }
}
