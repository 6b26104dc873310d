// SPDX-License-Identifier: GPL-2.0

//! Keyed frames: the tag every frame carries once a device has a key, and
//! the rules that refuse replays.
//!
//! With a key, the RI2N header grows by [`SEAL_LEN`] bytes (version 2, see
//! `header.rs`): the sender's 64-bit epoch and a tag, SipHash-2-4 under the shared
//! 128-bit key over
//!
//! ```text
//! destination MAC (6) | source MAC (6) | header bytes 0..16 | heartbeat payload (28, heartbeats only)
//! ```
//!
//! that is, everything RI2N acts on: addresses, kind, protocol, sequence
//! number, epoch, and a heartbeat's counts, link bits and counter. The
//! packet a data frame carries is not covered: RI2N protects its own state
//! (windows, endpoints, epochs, peer table) and the order it restores, at a
//! fixed cost per frame; the payload's integrity is the business of the
//! layers above (IPsec, WireGuard, TLS), as it is over one NIC.
//!
//! SipHash-2-4 because it is a PRF made for short inputs: 28 to 56 bytes
//! cost 4 to 8 compressions, tens of nanoseconds, with no setup per frame
//! (Poly1305 needs a one-time key per message, hence a cipher; HMAC-SHA-256
//! costs two hash blocks). Its 64-bit tag leaves a forger one chance in
//! 2^64 per frame, and a success buys one frame. The kernel's `siphash()`
//! computes the same function; this file has its own so that the tag is
//! tested (against the reference vectors) and benchmarked as ordinary Rust.
//!
//! Replays of authentic frames are refused by what the tag covers:
//!
//! - data: (epoch, sequence number); the window refuses a number it
//!   already delivered (`Window::set_strict`);
//! - broadcast: the duplicate filter refuses numbers older than it keeps
//!   (`Dedup::accept_strict`);
//! - heartbeats: a counter that only grows ([`HbCounter`]), checked per
//!   sender link ([`HbReplay`]);
//! - epochs: a change is taken only from a verified frame, and only to a
//!   newer epoch ([`epoch_newer`]; epochs are the time a device was
//!   created, in milliseconds, 64 bits: they never wrap) unless the peer
//!   has been silent for long.

use super::MAX_LINKS;

/// Bytes a key has (SipHash's 128-bit key).
pub const KEY_LEN: usize = 16;
/// Bytes of a tag.
pub const TAG_LEN: usize = 8;
/// Bytes the seal adds to the RI2N header: epoch and tag.
pub const SEAL_LEN: usize = 8 + TAG_LEN;
/// Most bytes a tag covers: addresses, sealed header, heartbeat payload.
pub const MSG_MAX: usize = 12 + 24 + 28;

/// A device's shared key.
///
/// Not `Copy`, so that no copy of it is made unseen, and wiped when
/// dropped, so that memory it leaves does not keep it:
///
/// ```compile_fail
/// fn twice(k: ri2n_core::auth::Key) -> (ri2n_core::auth::Key, ri2n_core::auth::Key) {
///     (k, k)
/// }
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct Key {
    k0: u64,
    k1: u64,
}

impl core::fmt::Debug for Key {
    // Never the key itself, in a log or a panic.
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "Key(id {:08x})", self.id())
    }
}

impl Key {
    /// The key from its 16 bytes (SipHash's convention: two little-endian
    /// words).
    pub fn from_bytes(b: &[u8; KEY_LEN]) -> Key {
        let mut w = [0u8; 8];
        w.copy_from_slice(&b[..8]);
        let k0 = u64::from_le_bytes(w);
        w.copy_from_slice(&b[8..]);
        Key {
            k0,
            k1: u64::from_le_bytes(w),
        }
    }

    /// The key written as 32 hex digits (what the sysfs file takes).
    pub fn parse_hex(s: &str) -> Option<Key> {
        let s = s.as_bytes();
        if s.len() != 2 * KEY_LEN {
            return None;
        }
        let mut b = [0u8; KEY_LEN];
        for (i, out) in b.iter_mut().enumerate() {
            let hi = (s[2 * i] as char).to_digit(16)?;
            let lo = (s[2 * i + 1] as char).to_digit(16)?;
            *out = (hi * 16 + lo) as u8;
        }
        Some(Key::from_bytes(&b))
    }

    /// A name for the key that tells keys apart without revealing them
    /// (shown in procfs, so that nodes can be compared).
    pub fn id(&self) -> u32 {
        siphash(self, b"ri2n key id") as u32
    }

    /// Overwrites the key with zeros, stores the optimiser may not drop
    /// (`black_box` may read them), as `memzero_explicit` does.
    pub fn wipe(&mut self) {
        self.k0 = 0;
        self.k1 = 0;
        core::hint::black_box(&*self);
    }

    /// Whether the key is all zeros (wiped).
    pub fn is_wiped(&self) -> bool {
        self.k0 == 0 && self.k1 == 0
    }
}

impl Drop for Key {
    fn drop(&mut self) {
        self.wipe();
    }
}

const fn rotl(x: u64, b: u32) -> u64 {
    x.rotate_left(b)
}

#[inline(always)]
fn round(v: &mut [u64; 4]) {
    v[0] = v[0].wrapping_add(v[1]);
    v[1] = rotl(v[1], 13) ^ v[0];
    v[0] = rotl(v[0], 32);
    v[2] = v[2].wrapping_add(v[3]);
    v[3] = rotl(v[3], 16) ^ v[2];
    v[0] = v[0].wrapping_add(v[3]);
    v[3] = rotl(v[3], 21) ^ v[0];
    v[2] = v[2].wrapping_add(v[1]);
    v[1] = rotl(v[1], 17) ^ v[2];
    v[2] = rotl(v[2], 32);
}

/// SipHash-2-4 of `msg` under `key` (Aumasson and Bernstein, 2012), the
/// function the kernel's `siphash()` computes.
pub fn siphash(key: &Key, msg: &[u8]) -> u64 {
    let mut v = [
        key.k0 ^ 0x736f_6d65_7073_6575,
        key.k1 ^ 0x646f_7261_6e64_6f6d,
        key.k0 ^ 0x6c79_6765_6e65_7261,
        key.k1 ^ 0x7465_6462_7974_6573,
    ];
    let mut blocks = msg.chunks_exact(8);
    for b in &mut blocks {
        let mut w = [0u8; 8];
        w.copy_from_slice(b);
        let m = u64::from_le_bytes(w);
        v[3] ^= m;
        round(&mut v);
        round(&mut v);
        v[0] ^= m;
    }
    let rest = blocks.remainder();
    let mut last = [0u8; 8];
    last[..rest.len()].copy_from_slice(rest);
    last[7] = msg.len() as u8;
    let m = u64::from_le_bytes(last);
    v[3] ^= m;
    round(&mut v);
    round(&mut v);
    v[0] ^= m;
    v[2] ^= 0xff;
    for _ in 0..4 {
        round(&mut v);
    }
    v[0] ^ v[1] ^ v[2] ^ v[3]
}

/// What a tag covers, gathered from a frame: see the module comment.
pub struct Msg {
    buf: [u8; MSG_MAX],
    len: usize,
}

impl Msg {
    /// The bytes of a frame a tag covers: its addresses (`dst ‖ src`; in
    /// one-switch mode the ri2n addresses, not the slaves'), its sealed
    /// header up to the tag (16 bytes, 24 with an origin), and, for a
    /// heartbeat, its payload.
    ///
    /// # Panics
    ///
    /// If `header` is shorter than 16 bytes or `payload` longer than 28.
    pub fn new(addrs: &[u8; 12], header: &[u8], payload: &[u8]) -> Msg {
        Msg::with_header_len(addrs, header, 16, payload)
    }

    /// [`Msg::new`] for a header of `len` bytes before the tag (16, or 24
    /// with an origin).
    ///
    /// # Panics
    ///
    /// If `len` is above 24, `header` shorter, or `payload` above 28 bytes.
    pub fn with_header_len(addrs: &[u8; 12], header: &[u8], len: usize, payload: &[u8]) -> Msg {
        let mut buf = [0u8; MSG_MAX];
        buf[..12].copy_from_slice(addrs);
        buf[12..12 + len].copy_from_slice(&header[..len]);
        let at = 12 + len;
        buf[at..at + payload.len()].copy_from_slice(payload);
        Msg {
            buf,
            len: at + payload.len(),
        }
    }

    /// The tag of these bytes under `key`.
    pub fn tag(&self, key: &Key) -> [u8; TAG_LEN] {
        siphash(key, &self.buf[..self.len]).to_be_bytes()
    }
}

/// Tags compared in constant time: how long a comparison takes tells a
/// forger nothing about how many of its bytes were right.
pub fn tags_equal(a: &[u8; TAG_LEN], b: &[u8; TAG_LEN]) -> bool {
    let mut d = 0u8;
    for i in 0..TAG_LEN {
        // Opaque to the optimiser, which could otherwise stop at the
        // first difference.
        d = core::hint::black_box(d | (a[i] ^ b[i]));
    }
    d == 0
}

/// A device's keys: the one it seals with, and one more it accepts during
/// a rotation.
///
/// Rotation without loss, on every node in turn for each step:
/// 1. [`Keys::accept`] the new key (sealing goes on with the old);
/// 2. [`Keys::seal_with`] the new key (the old one is then the accepted one);
/// 3. `accept(None)`, once every node has done step 2.
///
/// At every moment each node seals with a key every other node accepts.
#[derive(Clone, Default, Debug)]
pub struct Keys {
    seal: Option<Key>,
    other: Option<Key>,
}

impl Keys {
    /// Whether frames are sealed (and unsealed frames refused).
    pub fn on(&self) -> bool {
        self.seal.is_some()
    }

    /// The key frames are sealed with.
    pub fn sealing(&self) -> Option<&Key> {
        self.seal.as_ref()
    }

    /// The other key accepted, if any.
    pub fn accepted(&self) -> Option<&Key> {
        self.other.as_ref()
    }

    /// Seals with `key` from now on; the key sealed with until now stays
    /// accepted. `None` turns keys off altogether (both are forgotten).
    pub fn seal_with(&mut self, key: Option<Key>) {
        match key {
            None => *self = Keys::default(),
            Some(k) if self.seal.as_ref() == Some(&k) => {}
            Some(k) => {
                self.other = self.seal.replace(k);
            }
        }
    }

    /// Accepts `key` besides the sealing key (`None`: only the sealing key).
    pub fn accept(&mut self, key: Option<Key>) {
        self.other = key;
    }

    /// Whether `tag` is the tag of `msg` under one of the keys.
    pub fn verify(&self, msg: &Msg, tag: &[u8; TAG_LEN]) -> bool {
        [&self.seal, &self.other]
            .into_iter()
            .flatten()
            .any(|k| tags_equal(&msg.tag(k), tag))
    }
}

/// Whether epoch `a` is later than `b`. Epochs are a device's creation
/// time in milliseconds since 1970: 64 bits, they never wrap.
pub fn epoch_newer(a: u64, b: u64) -> bool {
    a > b
}

/// The epoch of a device created at `realtime_ms` (milliseconds since
/// 1970): never 0, which means "none yet".
pub fn epoch_at(realtime_ms: u64) -> u64 {
    realtime_ms.max(1)
}

/// Whether two epochs are the same incarnation. A heartbeat's payload
/// carries an epoch's low 32 bits (what unkeyed peers compare), a sealed
/// header all 64: a value known only by its low half matches the whole.
pub fn same_epoch(a: u64, b: u64) -> bool {
    a == b || (a as u32 == b as u32 && (a >> 32 == 0 || b >> 32 == 0))
}

/// A sender's heartbeat counter: grows with every heartbeat it seals, on
/// any link to any peer (it starts from the monotonic clock, which a new
/// boot resets: receivers start their records again with a new epoch).
#[derive(Clone, Copy, Default, Debug)]
pub struct HbCounter(u64);

impl HbCounter {
    /// The next value: at least `now_us` (microseconds of a clock that
    /// only goes forward), and above the last one.
    pub fn next(&mut self, now_us: u64) -> u64 {
        self.0 = (self.0 + 1).max(now_us);
        self.0
    }
}

/// A receiver's record of one peer's heartbeat counters, per sender link
/// (each of the sender's links is one wire, so its heartbeats arrive in
/// the order they left). All zero: nothing heard.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub struct HbReplay {
    last: [u64; MAX_LINKS],
}

impl HbReplay {
    /// Whether a heartbeat with counter `ctr` from the sender's link
    /// `link` is new; records it. A replayed one is not.
    pub fn accept(&mut self, link: u8, ctr: u64) -> bool {
        let Some(last) = self.last.get_mut(link as usize) else {
            return false;
        };
        if ctr <= *last {
            return false;
        }
        *last = ctr;
        true
    }

    /// The peer restarted: its counters start again.
    pub fn reset(&mut self) {
        self.last = [0; MAX_LINKS];
    }

    /// The highest counter heard on any link. The sender's counter is one
    /// for all its links: a fresh heartbeat on any of them is above it.
    pub fn highest(&self) -> u64 {
        self.last.iter().copied().max().unwrap_or(0)
    }

    /// Refuses, on every link, counters up to `ctr` (heard before the
    /// peer was forgotten).
    pub fn at_least(&mut self, ctr: u64) {
        for l in &mut self.last {
            *l = (*l).max(ctr);
        }
    }
}

/// What a keyed device keeps of a peer it forgets (aged out, evicted):
/// the peer's epoch, its highest heartbeat counter, its next data number,
/// and ours for it. Taken up again when the peer comes back, it refuses
/// the recordings of the peer that a forgotten peer would take (an older
/// incarnation's frames, heartbeats heard before, data handed up before),
/// and our numbering goes on where the peer's record of us expects it.
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub struct Record {
    pub epoch: u64,
    pub counter: u64,
    pub next: u32,
    /// Our next number for the peer (the caller's to fill in and use).
    pub tx_next: u32,
    mac: [u8; 6],
}

/// The [`Record`]s of forgotten peers, one place per table slot over
/// storage the caller allocates, placed by a keyed hash of the MAC. A
/// record takes the place of the one there: memory stays bounded (a flood
/// of made-up sources cannot grow it), and only a peer whose place was
/// taken loses its protection.
pub struct Records<S> {
    places: S,
    key: u64,
}

impl Record {
    /// The record of a peer of `epoch`, whose highest heartbeat counter
    /// heard is `counter` and whose next data number is `next`.
    pub fn new(epoch: u64, counter: u64, next: u32) -> Record {
        Record {
            epoch,
            counter,
            next,
            tx_next: 0,
            mac: [0; 6],
        }
    }
}

impl<S: core::ops::DerefMut<Target = [Record]>> Records<S> {
    /// No record, over `places` (at least one), placed with `key`.
    pub fn new(places: S, key: u64) -> Self {
        Records { places, key }
    }

    fn place(&self, mac: &[u8; 6]) -> usize {
        (super::peers::mac_hash(mac, self.key) % self.places.len().max(1) as u64) as usize
    }

    /// Keeps `r` for the peer `mac`, which is forgotten.
    pub fn keep(&mut self, mac: &[u8; 6], mut r: Record) {
        let i = self.place(mac);
        r.mac = *mac;
        if let Some(p) = self.places.get_mut(i) {
            *p = r;
        }
    }

    /// The record of `mac`, if one is kept; it stays (the peer may be
    /// forgotten again before it is heard).
    pub fn find(&self, mac: &[u8; 6]) -> Option<Record> {
        self.places
            .get(self.place(mac))
            .filter(|r| r.epoch != 0 && r.mac == *mac)
            .copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The reference vectors of the SipHash paper (appendix A, key
    /// 00 01 .. 0f, messages 00 01 .. (n-1)), as the kernel's
    /// lib/siphash_kunit.c checks them.
    #[test]
    fn siphash_matches_the_reference_vectors() {
        let mut kb = [0u8; 16];
        for (i, b) in kb.iter_mut().enumerate() {
            *b = i as u8;
        }
        let key = Key::from_bytes(&kb);
        let msg: [u8; 64] = core::array::from_fn(|i| i as u8);
        let want: [u64; 16] = [
            0x726fdb47dd0e0e31,
            0x74f839c593dc67fd,
            0x0d6c8009d9a94f5a,
            0x85676696d7fb7e2d,
            0xcf2794e0277187b7,
            0x18765564cd99a68d,
            0xcbc9466e58fee3ce,
            0xab0200f58b01d137,
            0x93f5f5799a932462,
            0x9e0082df0ba9e4b0,
            0x7a5dbbc594ddb9f3,
            0xf4b32f46226bada7,
            0x751e8fbc860ee5fb,
            0x14ea5627c0843d90,
            0xf723ca908e7af2ee,
            0xa129ca6149be45e5,
        ];
        for (n, w) in want.iter().enumerate() {
            assert_eq!(siphash(&key, &msg[..n]), *w, "length {}", n);
        }
        assert_eq!(siphash(&key, &msg[..63]), 0x958a324ceb064572);
    }
}
