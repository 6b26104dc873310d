// SPDX-License-Identifier: GPL-2.0

//! ri2n-pingpong: TCP ping-pong against message size, as the RI2N/DRV paper
//! measured its Figs. 10-13 (and as NetPIPE does).
//!
//! ```text
//! ri2n-pingpong server [--port P] [--once]
//! ri2n-pingpong client HOST [--port P] [--sizes MIN:MAX] [--time SECS]
//! ri2n-pingpong clock HOST [--port P]
//! ```
//!
//! For each size (powers of two from MIN to MAX) the client sends a message
//! of that size and waits for the server to echo it back, over and over for
//! about `--time` seconds after a few warm-up round trips (in runs, each
//! sized from the one before, so that a slow start of the connection does
//! not cut the first size's measurement short). It prints one line
//! per size: bytes, round trips, the mean and the shortest round trip (µs),
//! the one-way latency (half the mean round trip, µs) and the ping-pong
//! throughput, size divided by the one-way latency (MB/s, 10^6 bytes/s), the
//! figure the paper plots.
//!
//! `clock` prints the server's wall clock minus this one's and the error
//! bound, in µs, from the quickest of a few exchanges: two lab guests' clocks
//! compared over a link of a few hundred µs round trip, so that events seen
//! in different guests (failover) can be put on one time line.
//!
//! Wire protocol, one TCP connection: before each run of round trips the
//! client sends a 12-byte request, the size (u64) and the number of round
//! trips (u32), big-endian; then both sides alternate `size` bytes each way.
//! A request of size 0 asks for the server's wall clock instead: it answers
//! with microseconds since the epoch (u64, big-endian).

use std::io::{self, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::ExitCode;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

const DEFAULT_PORT: u16 = 5301;
/// Largest message accepted, so that a stray client cannot make the server
/// allocate without bound.
const MAX_SIZE: u64 = 256 << 20;
const WARMUP: u32 = 4;
/// Fewest timed round trips per size, however slow.
const MIN_TRIPS: u32 = 3;
const MAX_TRIPS: u32 = 100_000;
/// The first timed run takes about this share of `--time`; later runs are
/// sized from the round trips measured so far.
const FIRST_RUN_SHARE: f64 = 0.1;
/// Clock exchanges; the quickest one counts.
const CLOCK_EXCHANGES: u32 = 50;

/// This machine's wall clock, µs since the epoch.
fn wall_us() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as u64)
}

fn usage() -> ExitCode {
    eprintln!(
        "usage: ri2n-pingpong server [--port P] [--once]\n       \
         ri2n-pingpong client HOST [--port P] [--sizes MIN:MAX] [--time SECS]\n       \
         ri2n-pingpong clock HOST [--port P]"
    );
    ExitCode::from(2)
}

/// "64", "4k", "16M" (binary multiples).
fn parse_size(s: &str) -> Option<u64> {
    let (num, mult) = match s.as_bytes().last()? {
        b'k' | b'K' => (&s[..s.len() - 1], 1 << 10),
        b'm' | b'M' => (&s[..s.len() - 1], 1 << 20),
        _ => (s, 1),
    };
    num.parse::<u64>().ok()?.checked_mul(mult)
}

/// The powers of two from `min` to `max`, both rounded up to one.
fn sizes(min: u64, max: u64) -> Vec<u64> {
    let mut v = Vec::new();
    let mut s = min.max(1).next_power_of_two();
    while s <= max {
        v.push(s);
        s *= 2;
    }
    v
}

fn serve(mut c: TcpStream) -> io::Result<()> {
    c.set_nodelay(true)?;
    let mut buf = Vec::new();
    let mut req = [0u8; 12];
    loop {
        match c.read_exact(&mut req) {
            Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(()),
            r => r?,
        }
        let size = u64::from_be_bytes(req[..8].try_into().unwrap());
        let trips = u32::from_be_bytes(req[8..].try_into().unwrap());
        if size > MAX_SIZE {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("message of {size} bytes refused"),
            ));
        }
        if size == 0 {
            c.write_all(&wall_us().to_be_bytes())?;
            continue;
        }
        buf.resize(size as usize, 0);
        for _ in 0..trips {
            c.read_exact(&mut buf)?;
            c.write_all(&buf)?;
        }
    }
}

fn server(port: u16, once: bool) -> io::Result<()> {
    let l = TcpListener::bind(("0.0.0.0", port))?;
    for c in l.incoming() {
        let c = c?;
        let peer = c.peer_addr()?;
        if let Err(e) = serve(c) {
            eprintln!("ri2n-pingpong: {peer}: {e}");
        }
        if once {
            break;
        }
    }
    Ok(())
}

/// `trips` round trips of `buf.len()` bytes; returns the mean and the
/// shortest round trip.
fn run(c: &mut TcpStream, buf: &mut [u8], trips: u32) -> io::Result<(Duration, Duration)> {
    let mut req = [0u8; 12];
    req[..8].copy_from_slice(&(buf.len() as u64).to_be_bytes());
    req[8..].copy_from_slice(&trips.to_be_bytes());
    c.write_all(&req)?;
    let mut best = Duration::MAX;
    let start = Instant::now();
    for _ in 0..trips {
        let t = Instant::now();
        c.write_all(buf)?;
        c.read_exact(buf)?;
        best = best.min(t.elapsed());
    }
    Ok((start.elapsed() / trips, best))
}

/// Round trips of `buf.len()` bytes for about `secs` seconds (at least
/// `MIN_TRIPS`, at most `MAX_TRIPS`), in runs; returns the number of round
/// trips, their mean and the shortest.
fn timed(
    c: &mut TcpStream,
    buf: &mut [u8],
    secs: f64,
    warm: Duration,
) -> io::Result<(u32, Duration, Duration)> {
    let mut done = 0u32;
    let mut total = Duration::ZERO;
    let mut best = Duration::MAX;
    let mut per_trip = warm.as_secs_f64().max(1e-6);
    let mut budget = secs * FIRST_RUN_SHARE;
    while done < MIN_TRIPS || (total.as_secs_f64() < secs && done < MAX_TRIPS) {
        let want = (budget / per_trip).ceil() as u64;
        let trips = want.clamp(MIN_TRIPS as u64, (MAX_TRIPS - done).max(MIN_TRIPS) as u64) as u32;
        let (mean, b) = run(c, buf, trips)?;
        done += trips;
        total += mean * trips;
        best = best.min(b);
        per_trip = total.as_secs_f64() / done as f64;
        budget = secs - total.as_secs_f64();
    }
    Ok((done, total / done, best))
}

/// The server's clock minus ours and the error bound (half the quickest
/// exchange's round trip), in µs.
fn clock_offset(c: &mut TcpStream) -> io::Result<(i64, u64)> {
    let (mut best_rtt, mut offset) = (u64::MAX, 0i64);
    for _ in 0..CLOCK_EXCHANGES {
        let mut ans = [0u8; 8];
        let t0 = wall_us();
        c.write_all(&[0u8; 12])?;
        c.read_exact(&mut ans)?;
        let t1 = wall_us();
        let (theirs, rtt) = (u64::from_be_bytes(ans), t1.saturating_sub(t0));
        if rtt < best_rtt {
            best_rtt = rtt;
            offset = theirs as i64 - ((t0 + t1) / 2) as i64;
        }
    }
    Ok((offset, best_rtt.div_ceil(2)))
}

fn clock(host: &str, port: u16) -> io::Result<()> {
    let mut c = TcpStream::connect((host, port))?;
    c.set_nodelay(true)?;
    let (offset, err) = clock_offset(&mut c)?;
    println!("{offset} {err}");
    Ok(())
}

fn client(host: &str, port: u16, sizes: &[u64], secs: f64) -> io::Result<()> {
    let mut c = TcpStream::connect((host, port))?;
    c.set_nodelay(true)?;
    let mut buf = vec![0x5a; *sizes.last().unwrap_or(&0) as usize];
    println!("# ri2n-pingpong to {host}:{port}, about {secs} s per size");
    println!(
        "# {:>9} {:>7} {:>11} {:>11} {:>11} {:>9}",
        "bytes", "trips", "rtt_us", "rtt_min_us", "latency_us", "MB/s"
    );
    for &size in sizes {
        let b = &mut buf[..size as usize];
        let (warm, _) = run(&mut c, b, WARMUP)?;
        let (trips, mean, best) = timed(&mut c, b, secs, warm)?;
        let one_way = mean.as_secs_f64() / 2.0;
        println!(
            "{:>11} {:>7} {:>11.1} {:>11.1} {:>11.1} {:>9.2}",
            size,
            trips,
            mean.as_secs_f64() * 1e6,
            best.as_secs_f64() * 1e6,
            one_way * 1e6,
            size as f64 / one_way / 1e6
        );
    }
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut port = DEFAULT_PORT;
    let (mut min, mut max) = (64, 16 << 20);
    let mut secs = 1.0;
    let mut once = false;
    let mut pos = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let ok = match a.as_str() {
            "--port" => it
                .next()
                .and_then(|v| v.parse().ok())
                .map(|v| port = v)
                .is_some(),
            "--time" => it
                .next()
                .and_then(|v| v.parse().ok())
                .map(|v| secs = v)
                .is_some(),
            "--once" => {
                once = true;
                true
            }
            "--sizes" => it
                .next()
                .and_then(|v| v.split_once(':'))
                .and_then(|(a, b)| Some((parse_size(a)?, parse_size(b)?)))
                .filter(|&(a, b)| a <= b && b <= MAX_SIZE)
                .map(|(a, b)| (min, max) = (a, b))
                .is_some(),
            s if !s.starts_with('-') => {
                pos.push(s);
                true
            }
            _ => false,
        };
        if !ok {
            return usage();
        }
    }
    let r = match pos.as_slice() {
        ["server"] => server(port, once),
        ["client", host] => client(host, port, &sizes(min, max), secs),
        ["clock", host] => clock(host, port),
        _ => return usage(),
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ri2n-pingpong: {e}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A server on loopback serving one connection, and that connection.
    fn loopback() -> (TcpStream, std::thread::JoinHandle<io::Result<()>>) {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = l.local_addr().unwrap().port();
        let srv = std::thread::spawn(move || serve(l.accept().unwrap().0));
        let c = TcpStream::connect(("127.0.0.1", port)).unwrap();
        c.set_nodelay(true).unwrap();
        (c, srv)
    }

    #[test]
    fn size_suffixes() {
        assert_eq!(parse_size("64"), Some(64));
        assert_eq!(parse_size("4k"), Some(4096));
        assert_eq!(parse_size("16M"), Some(16 << 20));
        assert_eq!(parse_size("x"), None);
        assert_eq!(parse_size(""), None);
    }

    #[test]
    fn powers_of_two() {
        assert_eq!(sizes(64, 512), [64, 128, 256, 512]);
        assert_eq!(sizes(100, 300), [128, 256]);
        assert!(sizes(1024, 512).is_empty());
    }

    #[test]
    fn echoes_over_loopback() {
        let (mut c, srv) = loopback();
        let mut buf: Vec<u8> = (0..100_000u32).map(|i| i as u8).collect();
        let sent = buf.clone();
        let (mean, best) = run(&mut c, &mut buf, 5).unwrap();
        assert_eq!(buf, sent, "the server echoes the message unchanged");
        assert!(best <= mean);
        drop(c);
        srv.join().unwrap().unwrap();
    }

    #[test]
    fn clock_of_this_machine_is_its_own() {
        let (mut c, srv) = loopback();
        let (offset, err) = clock_offset(&mut c).unwrap();
        // One clock on both ends: the offset is zero within the error bound.
        assert!(
            offset.unsigned_abs() <= err + 1,
            "offset {offset} µs, error {err} µs"
        );
        // The connection still carries ping-pong afterwards.
        let mut buf = vec![1u8; 100];
        run(&mut c, &mut buf, 3).unwrap();
        drop(c);
        srv.join().unwrap().unwrap();
    }

    #[test]
    fn timed_runs_fill_the_time() {
        let (mut c, srv) = loopback();
        let mut buf = vec![7u8; 64];
        // A warm-up 1000 times too slow must not shorten the measurement.
        let t = Instant::now();
        let (trips, mean, best) = timed(&mut c, &mut buf, 0.2, Duration::from_millis(50)).unwrap();
        let took = t.elapsed().as_secs_f64();
        assert!(took >= 0.2, "measured for {took} s, wanted 0.2 s");
        assert!(trips >= MIN_TRIPS && best <= mean);
        drop(c);
        srv.join().unwrap().unwrap();
    }
}
