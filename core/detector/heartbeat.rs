// SPDX-License-Identifier: GPL-2.0

//! Heartbeats as the detector takes them: counted, weighed, and what they
//! say of the peer's links.
//!
//! Receiving only sees one direction. A heartbeat therefore also carries the
//! sender's unusable links (`Heartbeat::down`): failed by its detector,
//! without carrier, or removed. The receiver marks those endpoints
//! `peer_failed` and stops sending on them too, as RI2N/UDP told its peer
//! explicitly; sent on every surviving link at each change, this also makes
//! the far side's carrier loss take effect within a round trip. Heartbeats
//! name the link they left on, so the receiver learns which of its links is
//! which of the peer's, whatever order each node listed its slaves in.

use super::{ms, Detector, Instant, Params, Seq, Transitions, MAX_LINKS};

/// Whether a heartbeat that left on the peer's `peer_link` saying `down`
/// came on a link the peer cannot use toward us (failed by its detector,
/// say, in a one-way failure): one of its retries, every HBSPAN / 8
/// ([`Detector::retry_due`]), or its heartbeats, which carry nothing of
/// the traffic. It weighs nothing: weighed HBWEIGHT, four retries took a
/// counter past FT_HTHRESH within about a second and judged the other
/// links of an idle peer, a healthy one failed half the time (ri2n_oneway
/// on the debug kernel). It still shows the link works toward us
/// (`last_rx`) and recovers it.
fn retry(peer_link: usize, down: u8) -> bool {
    peer_link < MAX_LINKS && down & (1 << peer_link) != 0
}

/// Most frames a heartbeat can fall behind a later one by waiting in a
/// longer queue ([`Detector::heartbeat_numbered`]): the frames sent on the
/// other links meanwhile, some thousands in a slave's qdisc and our link
/// queue; 65536 is half a second at 130k frames a second.
pub const HB_REORDER: i32 = 1 << 16;

impl Detector {
    /// A heartbeat from the peer arrived on our `link` at `now`; it left on
    /// the peer's link `peer_link`, and `down` are the peer's links unusable
    /// toward us (by its indices).
    /// It answers a probe round on its link: without counts, nothing
    /// tells when it left.
    pub fn heartbeat(
        &mut self,
        link: usize,
        now: Instant,
        peer_link: usize,
        down: u8,
        p: &Params,
    ) -> Transitions {
        self.heartbeat_down(
            link,
            now,
            peer_link,
            Some(down),
            retry(peer_link, down),
            true,
            p,
        )
    }

    /// [`Detector::heartbeat`] for a heartbeat that carried `next`, the
    /// peer's next number for us when it left. One that left before a
    /// heartbeat already taken (a smaller `next`: it waited in a longer
    /// queue, on another link) still shows that its link works, but its
    /// down bits are old: taken, they would stop our sending on a link the
    /// peer has recovered since, until its next heartbeat (seen in `make
    /// demo` after the link came back: "peer receives nothing from us",
    /// then "receives again" half a millisecond later). After the peer
    /// restarts, its numbers start anew: [`Detector::renumbered`]. A
    /// number more than [`HB_REORDER`] behind, or one that comes SLOW_TOUT
    /// or more after the newest was taken, is no late heartbeat but new
    /// numbering (a peer that forgot us starts again from 0), and taken: a
    /// heartbeat's down bits are never ignored for longer than SLOW_TOUT.
    pub fn heartbeat_numbered(
        &mut self,
        link: usize,
        now: Instant,
        peer_link: usize,
        down: u8,
        next: Seq,
        p: &Params,
    ) -> Transitions {
        self.heartbeat_echoed(link, now, peer_link, down, next, None, p)
    }

    /// [`Detector::heartbeat_numbered`] for a heartbeat whose counts echo
    /// `echo_tx` (`Counts::echo_tx`, if it had counts): it answers a probe
    /// round on its link only if its sender had heard one of our
    /// heartbeats sent since the round began ([`Detector::probe_end`]),
    /// and only if it did not leave before a heartbeat already taken.
    #[allow(clippy::too_many_arguments)]
    pub fn heartbeat_echoed(
        &mut self,
        link: usize,
        now: Instant,
        peer_link: usize,
        down: u8,
        next: Seq,
        echo_tx: Option<u32>,
        p: &Params,
    ) -> Transitions {
        // A queue delays a heartbeat for a fraction of SLOW_TOUT: one
        // behind that came later than that is new numbering (a peer that
        // forgot us, in the same epoch, starts from 0), and taken.
        let now_ms = ms(now).max(1);
        let recent = self.hb_taken_ms != 0
            && u64::from(now_ms.wrapping_sub(self.hb_taken_ms)) < p.slow_tout().as_ms();
        let behind = next.diff(self.hb_next);
        let old = recent && behind < 0 && behind > -HB_REORDER;
        if !old {
            self.hb_next = next;
            self.hb_taken_ms = now_ms;
        }
        // Not older than the round, nor newer than what we sent (the peer's
        // echo from before this link's count started again: `set_links`).
        let sent = self.endpoints[link].tx_frames;
        let fresh = echo_tx.is_none_or(|x| {
            x.wrapping_sub(self.probe_tx[link]) as i32 >= 0 && sent.wrapping_sub(x) as i32 >= 0
        });
        self.heartbeat_down(
            link,
            now,
            peer_link,
            (!old).then_some(down),
            retry(peer_link, down),
            !old && fresh,
            p,
        )
    }

    /// The peer numbers anew (a new epoch): the next heartbeat's number is
    /// the newest, whatever it is.
    pub fn renumbered(&mut self) {
        self.hb_taken_ms = 0;
        // Its links' loss is its new incarnation's to tell.
        self.peer_lossy = 0;
    }

    /// `retry`: the peer cannot use the link it sent this on (see
    /// [`retry`]); it weighs nothing.
    #[allow(clippy::too_many_arguments)]
    fn heartbeat_down(
        &mut self,
        link: usize,
        now: Instant,
        peer_link: usize,
        down: Option<u8>,
        retry: bool,
        answers: bool,
        p: &Params,
    ) -> Transitions {
        let mut t = Transitions::default();
        let bit = 1u8 << link;
        if peer_link < MAX_LINKS {
            self.peer_link[peer_link] = link as u8 + 1;
        }
        self.arrived(now, p);
        if answers && self.probing & bit != 0 {
            if self.probing & self.answered == 0 {
                self.answer_us = (now.since(self.probed).0 / 1000).min(u64::from(u32::MAX)) as u32;
            }
            self.answered |= bit;
            self.busy &= !bit;
        }
        let e = &mut self.endpoints[link];
        e.rx_heartbeats += 1;
        e.last_rx = now;
        if e.failed {
            e.set(false, e.peer_failed, now);
            e.recoveries += 1;
            e.counter = 0;
            t.recovered = bit;
        } else if !retry && self.weighs(link, now, p) {
            self.endpoints[link].counter =
                self.endpoints[link].counter.saturating_add(p.hbweight());
        }
        let Some(down) = down else {
            let j = self.judge(now, p);
            t.failed |= j.failed;
            return t;
        };
        // The peer's down bits, by our link indices.
        let mut claimed = 0u8;
        for (j, &ours) in self.peer_link.iter().enumerate() {
            if ours != 0 && (ours as usize) <= self.n() && down & (1 << j) != 0 {
                claimed |= 1 << (ours - 1);
            }
        }
        // One heartbeat alone never takes the last usable links out: the
        // same claim must come twice in a row (a forged or corrupt one
        // would otherwise cut the peer off; a real one repeats).
        let newly = claimed & !self.mask(|e| e.peer_failed);
        let confirmed = newly & self.down_seen == newly;
        self.down_seen = claimed;
        let defer = newly != 0 && !confirmed && self.usable() & !newly == 0 && self.usable() != 0;
        for (j, &ours) in self.peer_link.iter().enumerate() {
            if ours == 0 || ours as usize > self.n() {
                continue;
            }
            let l = ours as usize - 1;
            let e = &mut self.endpoints[l];
            let says_down = down & (1 << j) != 0;
            if says_down && defer && !e.peer_failed {
                continue;
            }
            if says_down != e.peer_failed {
                e.set(e.failed, says_down, now);
                if says_down {
                    t.peer_failed |= 1 << l;
                } else {
                    t.peer_recovered |= 1 << l;
                }
            }
        }
        let j = self.judge(now, p);
        t.failed |= j.failed;
        t
    }
}
