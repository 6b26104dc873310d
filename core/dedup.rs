// SPDX-License-Identifier: GPL-2.0

//! Duplicate filter for broadcast and multicast frames.
//!
//! A broadcast has no single peer, so it cannot be striped: it goes out on
//! every link, so that ARP still works while one link is dead but not yet
//! detected. The receiver must then pass only the first copy up. Each sender
//! numbers its broadcasts, and the receiver keeps a bitmap of the last
//! [`DEDUP_BITS`] numbers seen from it, as WireGuard's replay counter does.

use super::seq::Seq;

/// How far behind the newest number a copy is still recognised.
pub const DEDUP_BITS: usize = 256;
const WORDS: usize = DEDUP_BITS / 64;

/// The numbers recently seen from one sender.
#[derive(Default, Debug, Clone)]
pub struct Dedup {
    newest: Seq,
    bits: [u64; WORDS],
    started: bool,
    /// Every number since the filter started came in a verified (sealed)
    /// frame ([`Dedup::accept_strict`]).
    verified: bool,
}

impl Dedup {
    /// Whether `seq` is new; records it. A number more than the bitmap
    /// behind the newest means the sender restarted its numbering: the
    /// filter starts again from it.
    pub fn accept(&mut self, seq: Seq) -> bool {
        self.verified = false;
        self.record(seq)
    }

    fn record(&mut self, seq: Seq) -> bool {
        let d = seq.diff(self.newest);
        if !self.started || d >= DEDUP_BITS as i32 || d <= -(DEDUP_BITS as i32) {
            self.started = true;
            self.bits = [0; WORDS];
            self.newest = seq;
            self.set(seq);
            return true;
        }
        if d > 0 {
            // Clear the bits of the numbers moved over, `seq`'s included:
            // they still hold the numbers a whole bitmap older.
            let mut s = self.newest;
            while s != seq {
                s = s.next();
                self.clear(s);
            }
            self.newest = seq;
        }
        let new = !self.get(seq);
        self.set(seq);
        new
    }

    /// [`Dedup::accept`] for sealed frames, whose restarts come with an
    /// authenticated epoch ([`Dedup::reset`]): a number older than the
    /// bitmap is a replay, refused.
    ///
    /// What unsealed frames left (before a key was set: anyone's, a
    /// forger's among them) says nothing: the first sealed number starts
    /// the filter afresh. Else a forger's numbers, far ahead of the
    /// sender's, would have every one of its broadcasts refused as old
    /// once keys are on, ARP with them.
    pub fn accept_strict(&mut self, seq: Seq) -> bool {
        if !self.verified {
            *self = Dedup {
                verified: true,
                ..Dedup::default()
            };
        }
        !self.too_old(seq) && self.record(seq)
    }

    /// Whether the filter holds only numbers from verified frames, so that
    /// [`Dedup::is_new`] and [`Dedup::too_old`] speak for sealed ones.
    pub fn verified(&self) -> bool {
        self.verified
    }

    /// Whether `seq` would be new (no side effect).
    pub fn is_new(&self, seq: Seq) -> bool {
        let d = seq.diff(self.newest);
        !self.started || d >= DEDUP_BITS as i32 || (d > -(DEDUP_BITS as i32) && !self.get(seq))
    }

    /// Whether `seq` is older than the bitmap keeps.
    pub fn too_old(&self, seq: Seq) -> bool {
        self.started && seq.diff(self.newest) <= -(DEDUP_BITS as i32)
    }

    /// The sender restarted: its numbering starts again.
    pub fn reset(&mut self) {
        *self = Dedup::default();
    }

    fn pos(seq: Seq) -> (usize, u64) {
        let b = seq.0 as usize % DEDUP_BITS;
        (b / 64, 1u64 << (b % 64))
    }
    fn get(&self, seq: Seq) -> bool {
        let (w, m) = Self::pos(seq);
        self.bits[w] & m != 0
    }
    fn set(&mut self, seq: Seq) {
        let (w, m) = Self::pos(seq);
        self.bits[w] |= m;
    }
    fn clear(&mut self, seq: Seq) {
        let (w, m) = Self::pos(seq);
        self.bits[w] &= !m;
    }
}
