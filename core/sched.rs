// SPDX-License-Identifier: GPL-2.0

//! Per-peer link choice over the usable links (driver paper §5.3).
//!
//! The paper's scheduler takes the next link for every packet, which
//! spreads a peer's segments evenly. When whole GSO packets go to one link
//! (the `tx_gso` mode), packets range from an ACK to 64 KiB, and turn by
//! turn would load the links unevenly: one link's queue, and its delay,
//! would grow past the other's until the reorder window gave up waiting.
//! There the link is chosen by bytes instead ([`RoundRobin::pick_bytes`]).
//!
//! A GSO packet of a few segments that ri2n segments goes whole to one
//! link, as one block of consecutive numbers ([`RoundRobin::pick_block`],
//! [`stripe_block`]): splitting it would only add each NIC's per-packet
//! cost to its latency. A longer one is still spread segment by segment. A
//! block's frames follow one another on their link, so the receiving
//! slave's GRO can merge them (`rx_gro`). Since blocks, like whole GSO
//! packets, differ in size, every choice is made by bytes; but a link left
//! idle is level again, whatever it carried before ([`RoundRobin::at`]):
//! its queue has drained, and the receiver's failure detector must not
//! see it fall silent.

use super::time::{Duration, Instant};
use super::{links_in, MAX_LINKS};

/// The transmit scheduler of one peer.
#[derive(Default, Debug, Clone)]
pub struct RoundRobin {
    last: u8,
    /// Frames of the current block after the one last sent
    /// ([`RoundRobin::pick_block`]).
    left: u8,
    /// Bytes each usable link carried beyond the least loaded usable one
    /// ([`RoundRobin::pick_bytes`]); 0 for the others from the first pick
    /// after they left `usable` (cleared then, see `was_usable`).
    ahead: [u32; MAX_LINKS],
    /// Links chosen since `period_ms` ([`RoundRobin::at`]).
    chosen: u8,
    /// `usable` of the last [`RoundRobin::pick_bytes`]: a link that left
    /// it has its `ahead` cleared then.
    was_usable: u8,
    /// When the current idle period began, in ms, wrapping.
    period_ms: u32,
}

impl RoundRobin {
    /// The paper's choice, turn by turn (the tests' reference; the driver
    /// chooses by bytes): the link after the last one used whose bit is set in `usable`
    /// (endpoint not failed, carrier up, queue not stopped), wrapping; `None`
    /// when no link is usable, and the caller drops the packet.
    #[inline]
    pub fn pick(&mut self, usable: u8) -> Option<usize> {
        if usable == 0 {
            return None;
        }
        // Links above the last one first, then from the lowest.
        let above = usable & !((2u16 << self.last) - 1) as u8;
        let l = if above != 0 {
            above.trailing_zeros()
        } else {
            usable.trailing_zeros()
        };
        self.last = l as u8;
        Some(l as usize)
    }

    /// Sets the time of the choices that follow to `now`. A link not
    /// chosen over a whole period of `idle` or longer (so, silent between
    /// `idle` and twice that, plus the gap between calls) has sent what it
    /// was ahead by: it starts level with the least loaded one again.
    ///
    /// By bytes alone, one 1.5 KB frame on a link sends the next twenty
    /// short ones to the other. Trickling out at a flow's end, they leave
    /// the first link silent, and the receiver's detector fails it (more
    /// than FT_HTHRESH frames on one link while another stayed silent for
    /// SLOW_TOUT): the caller passes an `idle` well below SLOW_TOUT.
    pub fn at(&mut self, now: Instant, idle: Duration) {
        let now_ms = now.ms32();
        let idle_ms = idle.as_ms().clamp(1, u64::from(u32::MAX)) as u32;
        if now_ms.wrapping_sub(self.period_ms) < idle_ms {
            return;
        }
        for (l, a) in self.ahead.iter_mut().enumerate() {
            if self.chosen & (1 << l) == 0 {
                *a = 0;
            }
        }
        self.chosen = 0;
        self.period_ms = now_ms;
    }

    /// The link for one frame of a packet that ri2n numbers: `Some((segs,
    /// bytes))` for a packet's first frame, the start of a block of `segs`
    /// frames of `bytes` in all that go to one link ([`stripe_block`]);
    /// `None` for the frames after it, `len` bytes each, which must follow
    /// under the same lock as their first (another packet to the peer in
    /// between starts a block of its own). Each block goes to the usable
    /// link that carried the fewest bytes, preferring those in `prefer`
    /// ([`RoundRobin::pick_bytes`]: frames one at a time, of equal size,
    /// still go turn by turn); a block whose link goes out of use, or
    /// whose queue stops, goes on on another.
    #[inline]
    pub fn pick_block(
        &mut self,
        usable: u8,
        prefer: u8,
        first: Option<(u32, u32)>,
        len: u32,
    ) -> Option<usize> {
        let last = 1u8 << self.last;
        let stay = preferred(usable, prefer);
        match first {
            Some((segs, bytes)) => {
                let l = self.pick_bytes(usable, prefer, bytes)?;
                self.left = (segs.clamp(1, MAX_BLOCK) - 1) as u8;
                Some(l)
            }
            None if self.left > 0 && stay & last != 0 => {
                self.left -= 1;
                Some(self.last as usize)
            }
            None => {
                let l = self.pick_bytes(usable, prefer, len)?;
                self.left = self.left.saturating_sub(1);
                Some(l)
            }
        }
    }

    /// The usable link (as in [`RoundRobin::pick`]) that carried the
    /// fewest bytes, ties taken in turn, for a packet of `len` bytes; among
    /// the links in `prefer` (queue not stopped) if any is usable. A link
    /// that comes back into use starts level with the least loaded one: it
    /// is not given the backlog of its absence. A link passed over only
    /// for `prefer` keeps its count: its queue stopped because it is full.
    pub fn pick_bytes(&mut self, usable: u8, prefer: u8, len: u32) -> Option<usize> {
        if usable == 0 {
            return None;
        }
        // Only links set in the masks are visited: with two links of
        // eight, the loop over all of them was most of a packet's cost.
        for l in links_in(self.was_usable & !usable) {
            self.ahead[l] = 0;
        }
        self.was_usable = usable;
        // In turn from the link after the last one, so that ties go in turn.
        let from = (self.last as usize + 1) % MAX_LINKS;
        let mut best: Option<usize> = None;
        for k in links_in(preferred(usable, prefer).rotate_right(from as u32)) {
            let l = (k + from) % MAX_LINKS;
            if best.is_none_or(|b| self.ahead[l] < self.ahead[b]) {
                best = Some(l);
            }
        }
        let l = best?;
        self.chosen |= 1 << l;
        self.last = l as u8;
        self.ahead[l] = self.ahead[l].saturating_add(len);
        let least = links_in(usable).map(|i| self.ahead[i]).min().unwrap_or(0);
        for i in links_in(usable) {
            self.ahead[i] -= least;
        }
        Some(l)
    }
}

/// The links of `usable` in `prefer` (queue not stopped), or all of
/// `usable` if none is: a stopped queue still serves, its qdisc queues.
fn preferred(usable: u8, prefer: u8) -> u8 {
    if usable & prefer != 0 {
        usable & prefer
    } else {
        usable
    }
}

/// The longest block, in segments.
pub const MAX_BLOCK: u32 = 64;

/// Segments per block of a GSO packet of `segs` segments: a packet of at
/// most `whole` segments goes whole to one link, where splitting it would
/// only add each NIC's per-packet cost to the message's latency; a longer
/// one is spread segment by segment, the paper's way, which keeps a bulk
/// stream's links evenly loaded and its TCP healthy (cutting long packets
/// into blocks was measured worse: Documentation/ri2n-design.rst, striping).
pub fn stripe_block(segs: u32, whole: u32) -> u32 {
    if segs <= whole.min(MAX_BLOCK) {
        segs.max(1)
    } else {
        1
    }
}
