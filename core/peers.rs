// SPDX-License-Identifier: GPL-2.0

//! The peer table (driver paper §5.8): MAC address to peer slot.
//!
//! Bounded by `max_peers`, so frames from random source MACs cannot exhaust
//! memory: when the table is full, a peer silent for longer than the caller's
//! idle limit is evicted to make room, else the new MAC is refused. Real
//! peers are never silent that long, because heartbeats flow every HBSPAN.
//!
//! Open addressing with linear probing over twice as many buckets as slots,
//! hashed with a per-device random key so that nobody can aim collisions.

use super::params::MAX_PEERS_LIMIT;
use super::time::{Duration, Instant};

/// An Ethernet address.
pub type Mac = [u8; 6];

const SLOTS: usize = MAX_PEERS_LIMIT as usize;
const BUCKETS: usize = 2 * SLOTS;
/// Buckets hold slot index + 1; 0, the all-zero state, is empty.
const EMPTY: u16 = 0;

/// Why a peer could not be added.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Full {
    /// `max_peers` peers are known and none is idle.
    NoRoom,
}

/// MAC → slot index in `0..max_peers`; the caller keeps the peers' state in
/// an array of its own, indexed the same way.
///
/// All-zero bytes are an empty table with key 0 (see [`PeerTable::set_key`]),
/// so the kernel can allocate one zeroed, in place.
///
/// # Invariants
///
/// A bucket holds a slot index + 1 or `EMPTY`; every used slot is in exactly one
/// bucket, reachable from its MAC's home bucket without crossing an empty one.
pub struct PeerTable {
    buckets: [u16; BUCKETS],
    macs: [Mac; SLOTS],
    last_seen: [Instant; SLOTS],
    used: [bool; SLOTS],
    count: usize,
    key: u64,
}

impl PeerTable {
    /// An empty table hashing with `key` (random per device).
    pub fn new(key: u64) -> PeerTable {
        PeerTable {
            buckets: [EMPTY; BUCKETS],
            macs: [[0; 6]; SLOTS],
            last_seen: [Instant(0); SLOTS],
            used: [false; SLOTS],
            count: 0,
            key,
        }
    }

    /// Sets the hash key; only while the table is empty.
    pub fn set_key(&mut self, key: u64) {
        if self.count == 0 {
            self.key = key;
        }
    }

    /// Peers in the table.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether the table is empty.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    fn home(&self, mac: &Mac) -> usize {
        let mut v = [0u8; 8];
        v[..6].copy_from_slice(mac);
        let mut h = u64::from_le_bytes(v) ^ self.key;
        // A 64-bit finaliser (splitmix64).
        h = (h ^ (h >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
        h = (h ^ (h >> 27)).wrapping_mul(0x94d049bb133111eb);
        h ^= h >> 31;
        (h as usize) & (BUCKETS - 1)
    }

    /// The slot of `mac`, if known.
    #[inline]
    pub fn lookup(&self, mac: &Mac) -> Option<usize> {
        let mut b = self.home(mac);
        loop {
            let s = self.buckets[b];
            if s == EMPTY {
                return None;
            }
            if self.macs[s as usize - 1] == *mac {
                return Some(s as usize - 1);
            }
            b = (b + 1) & (BUCKETS - 1);
        }
    }

    /// Records traffic from slot `slot` at `now` (for eviction).
    #[inline]
    pub fn touch(&mut self, slot: usize, now: Instant) {
        self.last_seen[slot] = now;
    }

    /// When slot `slot` was last touched.
    pub fn last_seen(&self, slot: usize) -> Instant {
        self.last_seen[slot]
    }

    /// The MAC of slot `slot`.
    pub fn mac(&self, slot: usize) -> &Mac {
        &self.macs[slot]
    }

    /// Used slots, in index order.
    pub fn slots(&self) -> impl Iterator<Item = usize> + '_ {
        (0..SLOTS).filter(|&s| self.used[s])
    }

    /// Adds `mac` (not in the table) and returns its slot, at most
    /// `max_peers` peers in all. Does not evict: see [`PeerTable::idle_slot`].
    pub fn insert(&mut self, mac: &Mac, now: Instant, max_peers: usize) -> Result<usize, Full> {
        if self.count >= max_peers.min(SLOTS) {
            return Err(Full::NoRoom);
        }
        let slot = (0..SLOTS).find(|&s| !self.used[s]).ok_or(Full::NoRoom)?;
        let mut b = self.home(mac);
        while self.buckets[b] != EMPTY {
            b = (b + 1) & (BUCKETS - 1);
        }
        self.buckets[b] = slot as u16 + 1;
        self.macs[slot] = *mac;
        self.last_seen[slot] = now;
        self.used[slot] = true;
        self.count += 1;
        Ok(slot)
    }

    /// The slot silent the longest, if silent for at least `idle` at `now`:
    /// the caller frees its state and calls [`PeerTable::remove`].
    pub fn idle_slot(&self, now: Instant, idle: Duration) -> Option<usize> {
        self.slots()
            .filter(|&s| now.since(self.last_seen[s]) >= idle)
            .min_by_key(|&s| self.last_seen[s])
    }

    /// Removes slot `slot`.
    pub fn remove(&mut self, slot: usize) {
        if !self.used[slot] {
            return;
        }
        let mut b = self.home(&self.macs[slot]);
        while self.buckets[b] as usize != slot + 1 {
            b = (b + 1) & (BUCKETS - 1);
        }
        // Backward-shift deletion keeps every probe chain unbroken.
        let mut hole = b;
        let mut j = b;
        loop {
            j = (j + 1) & (BUCKETS - 1);
            let s = self.buckets[j];
            if s == EMPTY {
                break;
            }
            let home = self.home(&self.macs[s as usize - 1]);
            // Move `s` into the hole unless its home lies cyclically in (hole, j].
            let dist_home = j.wrapping_sub(home) & (BUCKETS - 1);
            let dist_hole = j.wrapping_sub(hole) & (BUCKETS - 1);
            if dist_home >= dist_hole {
                self.buckets[hole] = s;
                hole = j;
            }
        }
        self.buckets[hole] = EMPTY;
        self.used[slot] = false;
        self.count -= 1;
    }
}
