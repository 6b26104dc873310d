// SPDX-License-Identifier: GPL-2.0

//! Probe rounds, which find a dead link the counters miss, and the
//! retries of failed links.
//!
//! Probes close the gap the counters leave. When a link dies, the traffic
//! that would push a counter past FT_HTHRESH often stops too (TCP waits out
//! a retransmission timeout), and an idle peer's heartbeats take
//! FT_HTHRESH / HBWEIGHT periods to get there. So when a usable link has
//! been silent for SLOW_TOUT while another delivered within SLOW_TOUT, the
//! driver asks for a heartbeat on every usable link at once ([`probe_due`],
//! at most one round per SLOW_TOUT); FAST_TOUT after the first answer (at
//! least FAST_TOUT after the round began), the longest one link may lag
//! another, a link silent since before the round that brought nothing
//! while another link answered is failed ([`probe_end`]). An
//! answer is a heartbeat from a peer that had heard one of ours sent in
//! the round (its counts' echo), not what waited in our receive queues
//! meanwhile. A link that brings anything in the round is spared whatever
//! its counter, and so is one that delivered within SLOW_TOUT before the
//! round: the answer it owes may wait behind a full switch queue for
//! longer than FAST_TOUT.
//! A link out of use for loss still delivers (its loss probes' answers):
//! so when every usable link has been silent for SLOW_TOUT, one of them
//! busy with data until then, the round also asks such a link that
//! delivered within SLOW_TOUT, as a witness. An idle link (heartbeats
//! only) is not probed so, or every idle peer with a lossy link would
//! have a round every SLOW_TOUT; a busy one once per burst of data (its
//! answer clears `busy`), and until it answers or fails. Such a round
//! lasts FAST_TOUT after SLOW_TOUT at least, not FAST_TOUT after the
//! witness's answer: a link of ours lossy toward every peer carries no
//! data, so that answer comes at once, while the suspect's may wait
//! behind other peers' data.
//! Failed links are probed every HBSPAN / 8 ([`retry_due`]), so that one
//! that heals is back within a fraction of HBSPAN.
//!
//! [`probe_due`]: Detector::probe_due
//! [`probe_end`]: Detector::probe_end
//! [`retry_due`]: Detector::retry_due

use super::{Detector, Duration, Instant, Params, Transitions};

impl Detector {
    /// Starts a probe round if one is due at `now` (`Detector::round`),
    /// and none was within SLOW_TOUT. Returns the links to send a probe on
    /// (every usable one that is up, and the witnesses), or 0.
    pub fn probe_due(&mut self, now: Instant, up: u8, p: &Params) -> u8 {
        if self.probing != 0 || now.since(self.probed) < p.slow_tout() {
            return 0;
        }
        let ask = self.round(now, up, p);
        if ask == 0 {
            return 0;
        }
        self.probing = ask;
        self.witnessed = ask & self.sparse() != 0;
        self.answered = 0;
        for (l, e) in self.endpoints.iter().enumerate() {
            self.probe_tx[l] = e.tx_frames;
        }
        self.probed = now;
        ask
    }

    /// The links a probe round at `now` would ask, or 0 if none is due
    /// (whenever the last one was): some usable link among `up` silent
    /// for SLOW_TOUT while another delivered within it; or every usable
    /// one silent, one of them busy until then, while a link out of use
    /// for loss only delivered within SLOW_TOUT (its loss probes'
    /// answers), which is asked too, as a witness. Without witnesses the
    /// last usable link beside lossy ones was judged by the counters
    /// alone: found dead 6-11 s after it died (lossy-failover-lab). With
    /// over 320 peers with a lossy link (SLOW_TOUT / [`LOSS_PROBE_MS`] ×
    /// [`LOSS_PROBE_PEERS`] at the defaults), loss probes come less often
    /// than SLOW_TOUT ([`loss_probe_every`]): the round then starts at the
    /// next probe's answer, up to one probe interval later (1.28 s at 4096
    /// such peers).
    pub(super) fn round(&self, now: Instant, up: u8, p: &Params) -> u8 {
        let live = self.live() & up;
        let recent = self.mask(|e| now.since(e.last_rx) < p.slow_tout());
        let silent = live & !recent;
        if silent != 0 && silent != live {
            return live;
        }
        let witnesses = self.sparse() & up & recent;
        if silent != 0 && silent & self.busy != 0 && witnesses != 0 {
            return live | witnesses;
        }
        0
    }

    /// Ends the probe round FAST_TOUT after it started, or FAST_TOUT after
    /// its first answer came (the longest one link may lag another: a slow
    /// host that took 15 ms to answer on one link leaves the other link's
    /// answer FAST_TOUT from then), later with witnesses
    /// ([`Detector::round_length`]): every probed link
    /// that was silent for SLOW_TOUT when it started and brought nothing
    /// since, while another probed link answered, fails. A
    /// link that delivered within SLOW_TOUT before the round is no
    /// suspect: behind a full queue its answer may take longer than
    /// FAST_TOUT (the next round judges it if it stays silent).
    ///
    /// An answer is a heartbeat whose sender had heard one of ours sent
    /// since the round began (its counts' `echo_tx`): what waited in this
    /// node's receive queues, one NIC's taken before the other's (a node
    /// resumed from a stop on a busy host, its receive softirq behind a
    /// task), left the peer before the round and proves nothing about the
    /// other link, data or heartbeats (under load, the answers to our
    /// loss reports). The peer's answers go out on every link at once and
    /// come in behind both queues (ri2n_stall: "failed, nothing received
    /// for 272 ms"). A heartbeat without counts (from
    /// [`Detector::heartbeat`]) answers: nothing tells when it left.
    /// `tx_frames` also drops by frames a slave gave back (`unsent`),
    /// which can make an echo look older or newer than it is by those:
    /// under such drops a round may end without a verdict, or be decided
    /// as before this rule.
    pub fn probe_end(&mut self, now: Instant, p: &Params) -> Transitions {
        let mut t = Transitions::default();
        if self.probing == 0 || now.since(self.probed) < self.round_length(p) {
            return t;
        }
        let probed = self.probed;
        let delivered = self.probing & self.mask(|e| e.last_rx.0 >= probed.0);
        let suspects = self.probing & self.mask(|e| probed.since(e.last_rx) >= p.slow_tout());
        if self.probing & self.answered != 0 {
            for l in 0..self.n() {
                let e = &mut self.endpoints[l];
                if suspects & !delivered & (1 << l) != 0 && !e.failed {
                    e.set(true, e.peer_failed, now);
                    e.fails += 1;
                    t.failed |= 1 << l;
                }
            }
        }
        // A failed link is out of rounds; back in use, it is busy again
        // only once data comes.
        self.busy &= !t.failed;
        self.probing = 0;
        t
    }

    /// How long the current round lasts: FAST_TOUT, or FAST_TOUT after its
    /// first answer. With witnesses, FAST_TOUT after SLOW_TOUT at least:
    /// their queues carry no data, so their answers come at once, while
    /// the suspect's may wait behind the data it carries to other peers
    /// (our bad cable makes a link lossy toward all of them): 1024 frames
    /// in its link queue and 1000 in a qdisc are 25 ms at 1 Gbit/s.
    /// SLOW_TOUT is the silence any link is allowed.
    pub(super) fn round_length(&self, p: &Params) -> Duration {
        let answered = self.probing & self.answered != 0;
        let mut lag = if answered {
            Duration::from_us(u64::from(self.answer_us))
        } else {
            Duration(0)
        };
        if self.witnessed {
            lag = lag.max(p.slow_tout());
        }
        Duration(p.fast_tout().0.saturating_add(lag.0))
    }

    /// Failed links among `up` to probe for recovery at `now`: every
    /// HBSPAN / 8, so that a healed link returns within a fraction of HBSPAN
    /// rather than at the next heartbeat. The peer's answer recovers it.
    pub fn retry_due(&mut self, now: Instant, up: u8, p: &Params) -> u8 {
        let failed = self.failed() & up;
        if failed == 0 || now.since(self.retried).0 < p.hbspan().0 / 8 {
            return 0;
        }
        self.retried = now;
        failed
    }
}
