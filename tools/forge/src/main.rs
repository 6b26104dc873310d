//! `ri2n-forge`: a host on the segment that is not in the cluster, for the
//! lab's tests of keyed frames (tests/lab/ri2n_auth.sh). It has no key: it
//! can capture frames it sees, replay them, and forge new ones with tags it
//! must guess.
//!
//! ```text
//! ri2n-forge DEV capture FILE --src MAC [--kind data|bcast|hb] [--count N] [--timeout S]
//! ri2n-forge DEV replay FILE [--rate PPS] [--duration S]
//! ri2n-forge DEV forge KIND --from MAC --to MAC [--epoch HEX] [--seq N] [--sealed] [--link L]
//!                           [--rate PPS] [--duration S] [--peers N]
//!     KIND: hb-down  heartbeats saying every link is down
//!           hb-lossy heartbeats saying the link is out of use toward the
//!                    receiver for loss (HB_LOSSY): a peer that probes it
//!           epoch    heartbeats of another epoch (a fake restart)
//!           data     data frames numbered around --seq
//!           bcast    broadcasts numbered ahead of --seq (to pre-mark them)
//! ri2n-forge DEV tun [--count N]
//! ```
//!
//! Frames are raw Ethernet on DEV (an AF_PACKET socket); a captured frame
//! is one line of hex in FILE. Each command prints `sent N` or `captured N`.
//! With `--peers N`, forged frames come from N source MACs in turn, the
//! last two bytes of `--from` replaced by 0..N: that many peers.
//!
//! `tun` is not a host on the segment but a local user with CAP_NET_ADMIN
//! (in a user namespace, say): it creates DEV as a tun device whose frames
//! go through GRO (IFF_TUN with IFF_NAPI), and writes N data frames with
//! the RI2N ethertype into it: frames of our ethertype on a device that is
//! not a slave, which the shim's GRO must leave alone
//! (tests/lab/ri2n_tun_gro.sh).

use std::io::{BufRead, Write};
use std::time::{Duration, Instant};

const ETH_P_RI2N: u16 = 0x1004;

struct Sock {
    fd: i32,
}

impl Sock {
    fn open(dev: &str) -> Sock {
        let name = std::ffi::CString::new(dev).expect("device name");
        // SAFETY: A valid NUL-terminated name.
        let ifindex = unsafe { libc::if_nametoindex(name.as_ptr()) };
        if ifindex == 0 {
            die(&format!("no device {}", dev));
        }
        let proto = (ETH_P_RI2N).to_be() as i32;
        // SAFETY: Plain socket call.
        let fd = unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW, proto) };
        if fd < 0 {
            die("socket(AF_PACKET) failed (root?)");
        }
        // SAFETY: All-zero is a valid sockaddr_ll to fill in.
        let mut sa: libc::sockaddr_ll = unsafe { std::mem::zeroed() };
        sa.sll_family = libc::AF_PACKET as u16;
        sa.sll_protocol = ETH_P_RI2N.to_be();
        sa.sll_ifindex = ifindex as i32;
        // SAFETY: `sa` is a sockaddr_ll of the given size.
        let r = unsafe {
            libc::bind(
                fd,
                &sa as *const _ as *const libc::sockaddr,
                std::mem::size_of::<libc::sockaddr_ll>() as u32,
            )
        };
        if r < 0 {
            die("bind failed");
        }
        Sock { fd }
    }

    fn send(&self, frame: &[u8]) -> bool {
        // SAFETY: `frame` is valid for its length.
        unsafe {
            libc::send(self.fd, frame.as_ptr().cast(), frame.len(), 0) == frame.len() as isize
        }
    }

    /// One frame, or `None` after `timeout`.
    fn recv(&self, buf: &mut [u8], timeout: Duration) -> Option<usize> {
        let mut p = libc::pollfd {
            fd: self.fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: One valid pollfd.
        if unsafe { libc::poll(&mut p, 1, timeout.as_millis() as i32) } <= 0 {
            return None;
        }
        // SAFETY: `buf` is valid for its length.
        let n = unsafe { libc::recv(self.fd, buf.as_mut_ptr().cast(), buf.len(), 0) };
        (n > 0).then_some(n as usize)
    }
}

fn die(msg: &str) -> ! {
    eprintln!("ri2n-forge: {}", msg);
    std::process::exit(2);
}

fn mac(s: &str) -> [u8; 6] {
    let v: Vec<u8> = s
        .split(':')
        .map(|b| u8::from_str_radix(b, 16).unwrap_or_else(|_| die("bad MAC")))
        .collect();
    v.try_into().unwrap_or_else(|_| die("bad MAC"))
}

/// A small xorshift generator: forged tags and payloads need no quality.
struct Rng(u64);

impl Rng {
    fn new() -> Rng {
        let t = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        Rng(t.as_nanos() as u64 | 1)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn fill(&mut self, b: &mut [u8]) {
        for x in b {
            *x = self.next() as u8;
        }
    }
}

struct Opts {
    args: Vec<String>,
}

impl Opts {
    fn get(&self, name: &str) -> Option<&str> {
        let i = self.args.iter().position(|a| a == name)?;
        Some(
            self.args
                .get(i + 1)
                .unwrap_or_else(|| die(&format!("{} needs a value", name))),
        )
    }
    fn num(&self, name: &str, default: f64) -> f64 {
        self.get(name).map_or(default, |v| {
            v.parse().unwrap_or_else(|_| die(&format!("bad {}", name)))
        })
    }
    fn flag(&self, name: &str) -> bool {
        self.args.iter().any(|a| a == name)
    }
}

/// Sends what `next` builds, `rate` a second for `duration` (at least once).
fn pace(sock: &Sock, rate: f64, duration: f64, mut next: impl FnMut(u64) -> Vec<u8>) -> u64 {
    let start = Instant::now();
    let mut sent = 0u64;
    loop {
        if sock.send(&next(sent)) {
            sent += 1;
        }
        let due = Duration::from_secs_f64((sent as f64 + 1.0) / rate);
        if start.elapsed().as_secs_f64() >= duration {
            break;
        }
        if let Some(wait) = due.checked_sub(start.elapsed()) {
            std::thread::sleep(wait);
        }
    }
    sent
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{:02x}", x)).collect()
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap_or_else(|_| die("bad hex")))
        .collect()
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 2 {
        die("usage: ri2n-forge DEV capture|replay|forge|tun ... (see the source's header)");
    }
    let o = Opts { args: args.clone() };
    if args[1] == "tun" {
        let sent = tun_frames(&args[0], o.num("--count", 100.0) as u32);
        println!("sent {}", sent);
        return;
    }
    let sock = Sock::open(&args[0]);
    let rate = o.num("--rate", 10.0);
    let duration = o.num("--duration", 0.0);
    match args[1].as_str() {
        "capture" => {
            let file = args.get(2).unwrap_or_else(|| die("capture FILE"));
            let src = mac(o.get("--src").unwrap_or_else(|| die("--src MAC")));
            let kind = match o.get("--kind") {
                None => None,
                Some("data") => Some(1u8),
                Some("bcast") => Some(2),
                Some("hb") => Some(3),
                Some(k) => die(&format!("unknown kind {}", k)),
            };
            let count = o.num("--count", 1.0) as usize;
            let deadline = Instant::now() + Duration::from_secs_f64(o.num("--timeout", 10.0));
            let mut out = std::fs::File::create(file).unwrap_or_else(|_| die("cannot write FILE"));
            let (mut buf, mut n) = ([0u8; 2048], 0);
            while n < count {
                let Some(left) = deadline.checked_duration_since(Instant::now()) else {
                    break;
                };
                let Some(len) = sock.recv(&mut buf, left) else {
                    break;
                };
                let f = &buf[..len];
                if len < 22 || f[6..12] != src || kind.is_some_and(|k| f[15] != k) {
                    continue;
                }
                writeln!(out, "{}", hex(f)).unwrap_or_else(|_| die("write"));
                n += 1;
            }
            println!("captured {}", n);
        }
        "replay" => {
            let file = args.get(2).unwrap_or_else(|| die("replay FILE"));
            let f = std::fs::File::open(file).unwrap_or_else(|_| die("cannot read FILE"));
            let frames: Vec<Vec<u8>> = std::io::BufReader::new(f)
                .lines()
                .map_while(Result::ok)
                .filter(|l| !l.is_empty())
                .map(|l| unhex(&l))
                .collect();
            if frames.is_empty() {
                die("nothing to replay");
            }
            let sent = pace(&sock, rate, duration, |i| {
                frames[i as usize % frames.len()].clone()
            });
            println!("sent {}", sent);
        }
        "forge" => {
            let kind = args.get(2).unwrap_or_else(|| die("forge KIND")).clone();
            let from = mac(o.get("--from").unwrap_or_else(|| die("--from MAC")));
            let to = mac(o.get("--to").unwrap_or_else(|| die("--to MAC")));
            let epoch = o.get("--epoch").map_or(1, |e| {
                u64::from_str_radix(e, 16).unwrap_or_else(|_| die("bad --epoch"))
            });
            let seq = o.num("--seq", 0.0) as u32;
            let sealed = o.flag("--sealed");
            let link = o.num("--link", 0.0) as u8;
            let peers = (o.num("--peers", 1.0) as u64).clamp(1, 1 << 16);
            let mut rng = Rng::new();
            let sent = pace(&sock, rate, duration, |i| {
                let mut from = from;
                if peers > 1 {
                    from[4..6].copy_from_slice(&((i % peers) as u16).to_be_bytes());
                }
                let (k, dst, n, payload): (u8, [u8; 6], u32, Vec<u8>) = match kind.as_str() {
                    "hb-down" | "epoch" => {
                        let e = if kind == "epoch" {
                            epoch.wrapping_add(1 + i)
                        } else {
                            epoch
                        };
                        // Sealed: with the counter (28 bytes), as a keyed
                        // node sends them.
                        let mut p = vec![0u8; if sealed { 28 } else { 20 }];
                        p[..4].copy_from_slice(&(e as u32).to_be_bytes());
                        // Probe | counts (| counter); on the link it leaves
                        // on; every link down.
                        p[4] = if sealed { 0b111 } else { 0b011 };
                        p[5] = link;
                        p[6] = if kind == "hb-down" { 0xff } else { 0 };
                        rng.fill(&mut p[8..20]);
                        if sealed {
                            p[20..28].copy_from_slice(&(u64::MAX - i).to_be_bytes());
                        }
                        (3, to, seq, p)
                    }
                    "hb-lossy" => {
                        // Counts | HB_LOSSY, no probe (nothing to answer),
                        // on the link it leaves on, nothing down.
                        let mut p = vec![0u8; 20];
                        p[..4].copy_from_slice(&(epoch as u32).to_be_bytes());
                        p[4] = 0b1010;
                        p[5] = link;
                        rng.fill(&mut p[8..20]);
                        (3, to, seq, p)
                    }
                    "data" => {
                        let mut p = vec![0u8; 64];
                        rng.fill(&mut p);
                        (
                            1,
                            to,
                            seq.wrapping_add((rng.next() % 64) as u32).wrapping_sub(16),
                            p,
                        )
                    }
                    "bcast" => {
                        let mut p = vec![0u8; 46];
                        rng.fill(&mut p);
                        (2, [0xff; 6], seq.wrapping_add(1 + (i as u32 % 200)), p)
                    }
                    k => die(&format!("unknown kind {}", k)),
                };
                let mut f = Vec::with_capacity(128);
                f.extend_from_slice(&dst);
                f.extend_from_slice(&from);
                f.extend_from_slice(&ETH_P_RI2N.to_be_bytes());
                f.push(if sealed { 2 } else { 1 });
                f.push(k);
                f.extend_from_slice(&if k == 3 { 0u16 } else { 0x0800u16 }.to_be_bytes());
                f.extend_from_slice(&n.to_be_bytes());
                if sealed {
                    let e = if k == 3 && kind == "epoch" {
                        epoch.wrapping_add(1 + i)
                    } else {
                        epoch
                    };
                    f.extend_from_slice(&e.to_be_bytes());
                    let mut tag = [0u8; 8];
                    rng.fill(&mut tag);
                    f.extend_from_slice(&tag);
                }
                f.extend_from_slice(&payload);
                while f.len() < 60 {
                    f.push(0);
                }
                f
            });
            println!("sent {}", sent);
        }
        c => die(&format!("unknown command {}", c)),
    }
}

/// Creates tun device `name` with GRO (IFF_TUN | IFF_NAPI, packet
/// information on), sets it up, and writes `count` RI2N data frames into
/// it, each a numbered header before an IPv4/TCP packet, as GRO would merge
/// on a slave. Returns how many the kernel took.
fn tun_frames(name: &str, count: u32) -> u32 {
    const TUNSETIFF: libc::c_ulong = 0x400454ca;
    const IFF_TUN: libc::c_short = 0x0001;
    const IFF_NAPI: libc::c_short = 0x0010;
    // SAFETY: Plain open of a path we own the string of.
    let fd = unsafe { libc::open(c"/dev/net/tun".as_ptr(), libc::O_RDWR) };
    if fd < 0 {
        die("open /dev/net/tun failed (CONFIG_TUN? root?)");
    }
    // SAFETY: All-zero is a valid ifreq to fill in.
    let mut ifr: libc::ifreq = unsafe { std::mem::zeroed() };
    if name.len() >= ifr.ifr_name.len() {
        die("device name too long");
    }
    for (d, s) in ifr.ifr_name.iter_mut().zip(name.bytes()) {
        *d = s as libc::c_char;
    }
    ifr.ifr_ifru.ifru_flags = IFF_TUN | IFF_NAPI;
    // SAFETY: `ifr` is an ifreq, as TUNSETIFF reads and writes.
    if unsafe { libc::ioctl(fd, TUNSETIFF, &mut ifr) } < 0 {
        die("TUNSETIFF failed (IFF_NAPI needs CAP_NET_ADMIN)");
    }
    // SAFETY: Plain socket call.
    let s = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM, 0) };
    ifr.ifr_ifru.ifru_flags = (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
    // SAFETY: As above: SIOCSIFFLAGS reads the name and flags.
    if s < 0 || unsafe { libc::ioctl(s, libc::SIOCSIFFLAGS, &mut ifr) } < 0 {
        die("cannot set the tun device up");
    }
    let mut sent = 0;
    for n in 0..count {
        // Packet information: flags, then the protocol (the RI2N ethertype).
        let mut f: Vec<u8> = vec![0, 0];
        f.extend_from_slice(&ETH_P_RI2N.to_be_bytes());
        // RI2N header: version 1, data, IPv4 inside, number n.
        f.extend_from_slice(&[1, 1, 0x08, 0x00]);
        f.extend_from_slice(&n.to_be_bytes());
        // IPv4 (20 bytes, protocol TCP) and TCP (20 bytes), 100 bytes of data.
        let mut ip = [0u8; 20];
        ip[0] = 0x45;
        ip[2..4].copy_from_slice(&140u16.to_be_bytes());
        ip[8] = 64;
        ip[9] = 6;
        ip[12..16].copy_from_slice(&[10, 9, 0, 1]);
        ip[16..20].copy_from_slice(&[10, 9, 0, 2]);
        f.extend_from_slice(&ip);
        let mut tcp = [0u8; 20];
        tcp[0..2].copy_from_slice(&4000u16.to_be_bytes());
        tcp[2..4].copy_from_slice(&5000u16.to_be_bytes());
        tcp[4..8].copy_from_slice(&(n * 100).to_be_bytes());
        tcp[12] = 5 << 4;
        tcp[13] = 0x10;
        f.extend_from_slice(&tcp);
        f.extend_from_slice(&[0x5a; 100]);
        // SAFETY: Writes `f`, which lives across the call.
        if unsafe { libc::write(fd, f.as_ptr().cast(), f.len()) } == f.len() as isize {
            sent += 1;
        }
    }
    sent
}
