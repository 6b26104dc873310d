// SPDX-License-Identifier: GPL-2.0

//! Failure and recovery detection per endpoint (driver paper §4.4, §5.7).
//!
//! An endpoint is one (peer, link) pair. Each counts what it receives. When
//! any counter of a peer exceeds FT_HTHRESH, the peer is judged: every
//! endpoint whose counter is at most FT_LTHRESH *and* that has received
//! nothing for SLOW_TOUT (a low-pass filter against the bursts NIC buffering
//! causes) is failed; then all counters start again.
//!
//! Heartbeats go every HBSPAN on every endpoint, failed ones included. One
//! received on a failed endpoint recovers it; on a healthy one it adds
//! HBWEIGHT to the counter, so an idle or stalled peer still reaches
//! FT_HTHRESH and a dead link is found.
//!
//! Receiving only sees one direction. A heartbeat therefore also carries the
//! sender's unusable links (`Heartbeat::down`): failed by its detector,
//! without carrier, or removed. The receiver marks those endpoints
//! `peer_failed` and stops sending on them too, as RI2N/UDP told its peer
//! explicitly; sent on every surviving link at each change, this also makes
//! the far side's carrier loss take effect within a round trip. Heartbeats
//! name the link they left on, so the receiver learns which of its links is
//! which of the peer's, whatever order each node listed its slaves in.
//!
//! Probes close the gap the counters leave. When a link dies, the traffic
//! that would push a counter past FT_HTHRESH often stops too (TCP waits out
//! a retransmission timeout), and an idle peer's heartbeats take
//! FT_HTHRESH / HBWEIGHT periods to get there. So when a usable link has
//! been silent for SLOW_TOUT while another delivered within SLOW_TOUT, the
//! driver asks for a heartbeat on every usable link at once ([`probe_due`],
//! at most one round per SLOW_TOUT); FAST_TOUT later, the longest one link
//! may lag another, a probed link that brought nothing while another did is
//! failed ([`probe_end`]). A link that answers is spared whatever its counter.
//! Failed links are probed every HBSPAN / 8 ([`retry_due`]), so that one
//! that heals is back within a fraction of HBSPAN.
//!
//! [`probe_due`]: Detector::probe_due
//! [`probe_end`]: Detector::probe_end
//! [`retry_due`]: Detector::retry_due

use super::params::Params;
use super::time::Instant;
use super::MAX_LINKS;

/// One (peer, link) endpoint.
#[derive(Clone, Copy, Default, Debug)]
pub struct Endpoint {
    /// Packets (and weighted heartbeats) since the last judgement.
    pub counter: u32,
    /// When anything last arrived on it (or when the peer became known).
    pub last_rx: Instant,
    /// Failed by our own judgement: nothing arrives from the peer on it.
    pub failed: bool,
    /// The peer says our frames on this link do not reach it.
    pub peer_failed: bool,
    /// Transitions into `failed`.
    pub fails: u32,
    /// Transitions out of `failed`.
    pub recoveries: u32,
    /// Data packets received.
    pub rx_packets: u64,
    /// Heartbeats received.
    pub rx_heartbeats: u64,
    /// When the endpoint last went out of use or back into it: failing
    /// while the peer still reported it up, say, changes the state but not
    /// this (procfs' `changed_ms`, failover timing).
    pub changed: Instant,
}

impl Endpoint {
    /// Whether data may be sent to the peer on this endpoint.
    pub fn usable(&self) -> bool {
        !self.failed && !self.peer_failed
    }

    /// Sets both failure flags; notes `now` in `changed` if that takes the
    /// endpoint out of use or back into it.
    fn set(&mut self, failed: bool, peer_failed: bool, now: Instant) {
        let was = self.usable();
        self.failed = failed;
        self.peer_failed = peer_failed;
        if self.usable() != was {
            self.changed = now;
        }
    }
}

/// State changes of one event, as link bitmasks, for the driver to log and
/// act on (send a heartbeat telling the peer, or probe).
#[derive(Clone, Copy, Default, Debug, PartialEq, Eq)]
pub struct Transitions {
    /// Links that became failed.
    pub failed: u8,
    /// Links that recovered.
    pub recovered: u8,
    /// Links the peer newly reports as failed.
    pub peer_failed: u8,
    /// Links the peer no longer reports as failed.
    pub peer_recovered: u8,
}

impl Transitions {
    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        *self == Transitions::default()
    }
}

/// The endpoints of one peer.
///
/// All-zero bytes are a valid detector over no links; [`Detector::start`]
/// makes it one over the device's links.
#[derive(Clone, Debug, Default)]
pub struct Detector {
    /// Indexed by link.
    pub endpoints: [Endpoint; MAX_LINKS],
    nlinks: usize,
    /// Our link for each of the peer's links, + 1 (0: not yet learned).
    peer_link: [u8; MAX_LINKS],
    /// Links asked for a heartbeat in the current probe round (0: none).
    probing: u8,
    /// When the current or last probe round started.
    probed: Instant,
    /// When failed links were last probed for recovery.
    retried: Instant,
}

impl Detector {
    /// Endpoints over `nlinks` links for a peer first heard of at `now`;
    /// SLOW_TOUT counts from then, so a link is not failed before it could
    /// have delivered anything.
    pub fn new(nlinks: usize, now: Instant) -> Detector {
        let mut endpoints = [Endpoint::default(); MAX_LINKS];
        for e in endpoints.iter_mut() {
            e.last_rx = now;
        }
        Detector {
            endpoints,
            nlinks: nlinks.min(MAX_LINKS),
            peer_link: [0; MAX_LINKS],
            probing: 0,
            probed: Instant(0),
            retried: Instant(0),
        }
    }

    /// Resets to `nlinks` fresh endpoints for a peer first heard of at `now`.
    pub fn start(&mut self, nlinks: usize, now: Instant) {
        *self = Detector::new(nlinks, now);
    }

    /// The device's links changed to `nlinks` (a slave was added or
    /// removed): endpoints of links that are new, or were `vacated`, start
    /// afresh at `now`, so a link index reused for another NIC carries
    /// nothing of the old one.
    pub fn set_links(&mut self, nlinks: usize, vacated: u8, now: Instant) {
        let nlinks = nlinks.min(MAX_LINKS);
        for l in 0..MAX_LINKS {
            if l >= self.nlinks || vacated & (1 << l) != 0 {
                self.endpoints[l] = Endpoint { last_rx: now, changed: now, ..Endpoint::default() };
                self.probing &= !(1 << l);
                for p in self.peer_link.iter_mut() {
                    if *p as usize == l + 1 {
                        *p = 0;
                    }
                }
            }
        }
        self.nlinks = nlinks;
    }

    /// Links usable for data (neither failed nor reported failed by the peer).
    pub fn usable(&self) -> u8 {
        self.mask(|e| e.usable())
    }

    /// Links we have failed (part of `Heartbeat::down` in ours).
    pub fn failed(&self) -> u8 {
        self.mask(|e| e.failed)
    }

    fn mask(&self, f: impl Fn(&Endpoint) -> bool) -> u8 {
        let mut m = 0;
        for (l, e) in self.endpoints[..self.nlinks].iter().enumerate() {
            if f(e) {
                m |= 1 << l;
            }
        }
        m
    }

    /// A data packet from the peer arrived on `link` at `now`.
    pub fn data(&mut self, link: usize, now: Instant, p: &Params) -> Transitions {
        let e = &mut self.endpoints[link];
        e.rx_packets += 1;
        e.counter = e.counter.saturating_add(1);
        e.last_rx = now;
        self.judge(now, p)
    }

    /// A heartbeat from the peer arrived on our `link` at `now`; it left on
    /// the peer's link `peer_link`, and `down` are the peer's links unusable
    /// toward us (by its indices).
    pub fn heartbeat(&mut self, link: usize, now: Instant, peer_link: usize, down: u8, p: &Params) -> Transitions {
        let mut t = Transitions::default();
        let bit = 1u8 << link;
        if peer_link < MAX_LINKS {
            self.peer_link[peer_link] = link as u8 + 1;
        }
        let e = &mut self.endpoints[link];
        e.rx_heartbeats += 1;
        e.last_rx = now;
        if e.failed {
            e.set(false, e.peer_failed, now);
            e.recoveries += 1;
            e.counter = 0;
            t.recovered = bit;
        } else {
            e.counter = e.counter.saturating_add(p.hbweight());
        }
        for (j, &ours) in self.peer_link.iter().enumerate() {
            if ours == 0 || ours as usize > self.nlinks {
                continue;
            }
            let l = ours as usize - 1;
            let e = &mut self.endpoints[l];
            let says_down = down & (1 << j) != 0;
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

    /// Starts a probe round if one is due at `now`: a usable link among
    /// `up` (ours with carrier) silent for SLOW_TOUT while another delivered
    /// within SLOW_TOUT, and no round within SLOW_TOUT. Returns the links to
    /// send a probe on (every usable one that is up), or 0.
    pub fn probe_due(&mut self, now: Instant, up: u8, p: &Params) -> u8 {
        if self.probing != 0 || now.since(self.probed) < p.slow_tout() {
            return 0;
        }
        let live = self.usable() & up;
        let silent = live & self.mask(|e| now.since(e.last_rx) >= p.slow_tout());
        if silent == 0 || silent == live {
            return 0;
        }
        self.probing = live;
        self.probed = now;
        live
    }

    /// Ends the probe round FAST_TOUT after it started: every probed link
    /// that brought nothing since, while another probed link did, fails.
    pub fn probe_end(&mut self, now: Instant, p: &Params) -> Transitions {
        let mut t = Transitions::default();
        if self.probing == 0 || now.since(self.probed) < p.fast_tout() {
            return t;
        }
        let probed = self.probed;
        let answered = self.probing & self.mask(|e| e.last_rx.0 >= probed.0);
        if answered != 0 {
            for l in 0..self.nlinks {
                let e = &mut self.endpoints[l];
                if self.probing & !answered & (1 << l) != 0 && !e.failed {
                    e.set(true, e.peer_failed, now);
                    e.fails += 1;
                    t.failed |= 1 << l;
                }
            }
        }
        self.probing = 0;
        t
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

    /// The judgement (§4.4): runs when a counter exceeds FT_HTHRESH.
    fn judge(&mut self, now: Instant, p: &Params) -> Transitions {
        let eps = &mut self.endpoints[..self.nlinks];
        if !eps.iter().any(|e| e.counter > p.ft_hthresh()) {
            return Transitions::default();
        }
        let mut t = Transitions::default();
        for (l, e) in eps.iter_mut().enumerate() {
            if !e.failed && e.counter <= p.ft_lthresh() && now.since(e.last_rx) >= p.slow_tout() {
                e.set(true, e.peer_failed, now);
                e.fails += 1;
                t.failed |= 1 << l;
            }
            e.counter = 0;
        }
        t
    }
}
