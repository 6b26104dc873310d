// SPDX-License-Identifier: GPL-2.0

//! One-switch mode: whose each learned slave MAC is, so that a slave MAC
//! two peers claim is noticed. The later claim wins: two ri2n devices
//! sending from one NIC address is a misconfiguration (a cloned VM, a NIC
//! moved between nodes), and the one heard last is the one the switch now
//! delivers that address to.
//!
//! The MACs themselves live in the peers (`Peer::link_mac`); the map keeps
//! only a 32-bit code per claim and reads a claim's MAC through the
//! caller's `mac_of`, so it costs a peer 2 × [`MAX_LINKS`] buckets
//! (`peers::SLOT_BYTES`).

use super::peers::Mac;
use super::MAX_LINKS;
use core::ops::DerefMut;

/// A peer's slave MAC on one of our links: the peer's table slot and the
/// link.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Claim {
    /// The peer's slot in the peer table.
    pub slot: usize,
    /// Our link the MAC was learned for.
    pub link: usize,
}

impl Claim {
    fn code(self) -> u32 {
        (self.slot * MAX_LINKS + self.link) as u32 + 1
    }

    fn of(code: u32) -> Claim {
        let c = code as usize - 1;
        Claim {
            slot: c / MAX_LINKS,
            link: c % MAX_LINKS,
        }
    }
}

/// Empty bucket.
const NIL: u32 = 0;

/// Buckets for the claims of a table of `slots` peers: twice as many as
/// there can be claims, a power of two.
pub const fn buckets_for(slots: usize) -> usize {
    super::peers::buckets_for(slots * MAX_LINKS)
}

/// Slave MAC → claim, by open addressing with linear probing over
/// `buckets`, hashed with a per-device random key.
///
/// # Invariants
///
/// A bucket holds a claim's code or [`NIL`]. Each claim is in exactly one
/// bucket, reachable from the home bucket of its MAC (as `mac_of` reads
/// it) without crossing an empty one, and no two claims have the same
/// MAC. So the caller changes a claimed MAC, or frees the peer holding it,
/// only after [`Claims::release`].
pub struct Claims<K> {
    buckets: K,
    key: u64,
}

impl<K: DerefMut<Target = [u32]>> Claims<K> {
    /// No claims, over `buckets` (zeroed, [`buckets_for`] the table's
    /// slots), hashing with `key`.
    pub fn new(buckets: K, key: u64) -> Self {
        assert!(buckets.len().is_power_of_two());
        Claims { buckets, key }
    }

    fn home(&self, mac: &Mac) -> usize {
        (super::peers::mac_hash(mac, self.key) as usize) & (self.buckets.len() - 1)
    }

    /// The bucket holding `mac`'s claim, or the empty one it would go to.
    fn find(&self, mac: &Mac, mac_of: &impl Fn(Claim) -> Mac) -> Result<usize, usize> {
        let mask = self.buckets.len() - 1;
        let mut b = self.home(mac);
        loop {
            match self.buckets[b] {
                NIL => return Err(b),
                c if mac_of(Claim::of(c)) == *mac => return Ok(b),
                _ => b = (b + 1) & mask,
            }
        }
    }

    /// Who holds `mac`, if anyone.
    pub fn owner(&self, mac: &Mac, mac_of: impl Fn(Claim) -> Mac) -> Option<Claim> {
        self.find(mac, &mac_of)
            .ok()
            .map(|b| Claim::of(self.buckets[b]))
    }

    /// Records that `mac` is now `claim`'s (whose MAC `mac_of` already
    /// reads as `mac`, and which holds no other); returns the claim it
    /// takes `mac` from, whose MAC the caller then clears.
    pub fn claim(
        &mut self,
        mac: &Mac,
        claim: Claim,
        mac_of: impl Fn(Claim) -> Mac,
    ) -> Option<Claim> {
        match self.find(mac, &mac_of) {
            Ok(b) => {
                let old = Claim::of(core::mem::replace(&mut self.buckets[b], claim.code()));
                (old != claim).then_some(old)
            }
            Err(b) => {
                self.buckets[b] = claim.code();
                None
            }
        }
    }

    /// Forgets `claim`'s `mac` (as `mac_of` still reads it), if it holds
    /// it.
    pub fn release(&mut self, mac: &Mac, claim: Claim, mac_of: impl Fn(Claim) -> Mac) {
        let Ok(b) = self.find(mac, &mac_of) else {
            return;
        };
        if self.buckets[b] != claim.code() {
            return;
        }
        // Backward-shift deletion keeps every probe chain unbroken (as the
        // peer table).
        let mask = self.buckets.len() - 1;
        let (mut hole, mut j) = (b, b);
        loop {
            j = (j + 1) & mask;
            let c = self.buckets[j];
            if c == NIL {
                break;
            }
            let home = self.home(&mac_of(Claim::of(c)));
            if j.wrapping_sub(home) & mask >= j.wrapping_sub(hole) & mask {
                self.buckets[hole] = c;
                hole = j;
            }
        }
        self.buckets[hole] = NIL;
    }

    /// Forgets every claim (the peers are all gone).
    pub fn clear(&mut self) {
        self.buckets.fill(NIL);
    }
}

/// The peers' slave MACs, by claim (the peer table's `Peer::link_mac`).
pub trait LinkMacs {
    /// `c`'s slave MAC; zero if none is learned.
    fn link_mac(&self, c: Claim) -> Mac;
    /// Sets `c`'s slave MAC.
    fn set_link_mac(&mut self, c: Claim, mac: Mac);
}

/// What [`Claims::learn`] changed.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Learned {
    /// The claim's MAC before (zero: none).
    pub old: Mac,
    /// The claim that held the MAC until now, whose MAC is now zero.
    pub taken_from: Option<Claim>,
}

impl<K: DerefMut<Target = [u32]>> Claims<K> {
    /// Learns `mac` (unicast, not zero) as `c`'s slave MAC in `macs`,
    /// taking it from whoever held it; `None` if it was already `c`'s.
    pub fn learn(&mut self, macs: &mut impl LinkMacs, c: Claim, mac: &Mac) -> Option<Learned> {
        let old = macs.link_mac(c);
        if old == *mac {
            return None;
        }
        if old != [0; 6] {
            self.release(&old, c, |x| macs.link_mac(x));
        }
        macs.set_link_mac(c, *mac);
        let taken_from = self.claim(mac, c, |x| macs.link_mac(x));
        if let Some(t) = taken_from {
            macs.set_link_mac(t, [0; 6]);
        }
        Some(Learned { old, taken_from })
    }

    /// Releases every claim of the peer in `slot`, before it leaves the
    /// table.
    pub fn forget(&mut self, macs: &impl LinkMacs, slot: usize) {
        for link in 0..MAX_LINKS {
            let c = Claim { slot, link };
            let m = macs.link_mac(c);
            if m != [0; 6] {
                self.release(&m, c, |x| macs.link_mac(x));
            }
        }
    }
}
