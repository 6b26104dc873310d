// SPDX-License-Identifier: GPL-2.0

//! What receive asks of the state: whether a frame is let in, its peer's
//! window, and where its packets go.

use super::timers::ms_until;
use super::{now, DevStats, State};
use crate::net::gro::{Claim, GroCells};
use crate::net::lock::Bh;
use crate::net::skb::{Skb, SkbList};
use crate::net::{Mac, MacFmt};
use crate::proto::auth::Msg;
use crate::proto::claims::{self};
use crate::proto::detector::{loss_probe_every, Transitions};
use crate::proto::events::Event;
use crate::proto::header::Seal;
use crate::proto::node::{Arrival, Frame, Fresh, Left};
use crate::proto::time::Instant;
use crate::proto::uapi::Reason;
use crate::proto::window::{span_of, Buffers};
use crate::proto::MAX_LINKS;
use crate::ri2n_peer::{Buf, CellMacs, Held, Slots};
use core::sync::atomic::Ordering;
use kernel::prelude::*;

use super::timers::log_transitions;
use crate::proto::peers::SweepNeed;

/// A frame receive hands the state.
pub(crate) struct RxIn {
    /// Our link it arrived on.
    pub(crate) link: usize,
    /// The peer's ri2n MAC.
    pub(crate) src: Mac,
    /// One-switch mode: what the wire said of it.
    pub(crate) wire: Option<Wire>,
    pub(crate) kind: Frame,
    pub(crate) sealed: Option<Sealed>,
    /// The packet (none for a frame only counted).
    pub(crate) skb: Option<Skb>,
}

/// Where receive's packets go: handed up in order, consumed, or dropped.
pub(crate) struct RxOut<'a> {
    pub(crate) up: &'a mut SkbList,
    pub(crate) done: &'a mut SkbList,
    pub(crate) garbage: &'a mut SkbList,
}

/// A frame [`State::rx_admit`] let through, for [`State::rx_take`].
struct Admitted {
    link: usize,
    slot: usize,
    /// It counts on `link` (not a flooded copy).
    credit: bool,
    /// The frames it stands for.
    frames: u32,
    /// Sealed: its seal's epoch.
    epoch: Option<u64>,
    /// Sealed data, counted in `Slots::sealed_judged` until its cell is held.
    judged: bool,
}

impl Admitted {
    /// Ends the count `judged` took in `Slots::sealed_judged`.
    fn judged_done(judged: bool, slots: &Slots) {
        if judged {
            slots.sealed_judged.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

/// Counts and disposes of what the engine left of a received packet
/// (a window release went up already).
fn rx_left(
    left: Left<Skb>,
    stats: &DevStats,
    held: &Held,
    done: &mut SkbList,
    garbage: &mut SkbList,
) {
    match left {
        Left::Nothing | Left::Up(_) => {}
        Left::Copy(s) => {
            stats.rx_bcast_copies.add(1);
            garbage.push(s);
        }
        Left::Duplicate(s) => {
            held.sub(s.truesize() as usize);
            stats.rx_duplicates.add(1);
            stats.rx_dropped.add(1);
            garbage.push(s);
        }
        Left::Replay(s) => {
            held.sub(s.truesize() as usize);
            stats.rx_replays.add(1);
            stats.rx_dropped.add(1);
            garbage.push(s);
        }
        Left::Consumed(s) => done.push(s),
    }
}

/// What a window released for receive to hand up, and what it adds up.
struct Delivery<'u> {
    up: &'u mut SkbList,
    /// Short packets skip an idle GRO cell (`ends_gro_run`).
    short_max: u32,
    /// Truesize of what left the window.
    out_bytes: usize,
    /// Every packet ends any run GRO could merge.
    ends_runs: bool,
    packets: u64,
    bytes: u64,
}

impl<'u> Delivery<'u> {
    fn new(up: &'u mut SkbList, short_max: u32) -> Self {
        Delivery {
            up,
            short_max,
            out_bytes: 0,
            ends_runs: true,
            packets: 0,
            bytes: 0,
        }
    }

    fn push(&mut self, mut s: Skb) {
        self.packets += u64::from(span_of(&s));
        self.bytes += u64::from(s.len());
        self.out_bytes += s.truesize() as usize;
        // After truesize is counted: parsing may pull, which can grow it.
        self.ends_runs = self.ends_runs && ends_gro_run(&mut s, self.short_max);
        self.up.push(s);
    }
}

/// One log line for a peer's restart.
fn log_restart(dev_name: &str, src: &Mac, epoch: u64) {
    if crate::net::ratelimit() {
        pr_info!(
            "{}: peer {} restarted (new epoch {:x})\n",
            dev_name,
            MacFmt(src),
            epoch
        );
    }
}

/// One-switch mode: what the wire said of a frame.
#[derive(Clone, Copy)]
pub(crate) struct Wire {
    /// Its source: the peer's slave MAC.
    pub(crate) src: Mac,
    /// The peer's link it left on (the origin's index).
    pub(crate) link: usize,
    /// It was addressed to the receiving slave's own MAC (not flooded).
    pub(crate) to_port: bool,
}

/// A sealed frame's seal and the bytes its tag covers.
pub(crate) struct Sealed {
    pub(crate) seal: Seal,
    pub(crate) msg: Msg,
}

/// What receive must do after the lock is dropped.
#[derive(Default)]
pub(crate) struct RxAfter<'g> {
    /// Send queued heartbeats now (probe answers, news of a failure).
    pub(crate) kick: bool,
    /// The peer's GRO cell, claimed for the caller to hand `up` through
    /// at once ([`hand_up`]); `None`: `up` is empty, or queued.
    pub(crate) claim: Option<Claim<'g>>,
    /// The sweep is due sooner than its timer is armed for: milliseconds
    /// from now, for `Timer::reduce_ms`.
    pub(crate) pull_ms: Option<u32>,
}

/// Hands what the window of the peer in `slot` released (`up`) to its GRO
/// cell, the caller holding the peer's cell, so that the peer's packets go
/// up in the order released, whichever CPU released them. Packets that all
/// end any run GRO could merge (`ends_runs`: short ones, the last of a
/// message) go up at once if the GRO cell is idle: with nothing held to
/// join and nothing to follow, its NAPI round would be a cost on every
/// message for nothing, a round trip's cost. Then the claim is
/// returned, for the caller to deliver `up` through after dropping its
/// locks (the claim keeps the cell's poll off until they are up), and `up`
/// is left as it is.
pub(crate) fn hand_up<'g>(
    gro: &'g GroCells,
    slot: usize,
    up: &mut SkbList,
    ends_runs: bool,
    bh: &'g Bh<'_>,
) -> Option<Claim<'g>> {
    if up.is_empty() {
        return None;
    }
    let i = cell_of(slot);
    let claim = if ends_runs { gro.claim(i, bh) } else { None };
    if claim.is_none() {
        gro.queue(i, core::mem::take(up), bh);
    }
    claim
}

/// The GRO cell that takes what the peer in `slot` releases: one per peer,
/// so that its packets go up in the order released, whichever CPU
/// released them (net/gro.rs); peers spread over the cells.
pub(crate) fn cell_of(slot: usize) -> usize {
    slot
}

/// Whether `s` may skip an idle GRO cell (ri2n_rx.rs) at little or no
/// cost in merging: a TCP segment whose flags make GRO flush the run it
/// ends (PSH, as the last segment of a message has; URG, RST, SYN, FIN),
/// or a short packet (at most `short_max` bytes, not GSO). Order is the
/// claim's business, not this: an idle cell holds nothing of the peer.
/// (A short TCP segment without those flags, rare, would be held by GRO
/// and could take later ones of its size: that merge is lost.)
pub(crate) fn ends_gro_run(s: &mut Skb, short_max: u32) -> bool {
    const FLUSHING: u8 = 0x01 | 0x02 | 0x04 | 0x08 | 0x20;
    (!s.is_gso() && s.len() <= short_max) || s.tcp_flags().is_some_and(|f| f & FLUSHING != 0)
}

impl State {
    /// Whether a frame from `src` may be looked at: sealed with a key we
    /// accept when we have one, unsealed when we have none. A refused
    /// frame is counted (and, now and then, logged) and nothing else.
    pub(crate) fn verify(&mut self, dev_name: &str, src: &Mac, sealed: Option<&Sealed>) -> bool {
        let why = match (sealed, self.keys.on()) {
            (None, false) => return true,
            (Some(s), true) if self.keys.verify(&s.msg, &s.seal.tag) => return true,
            (Some(_), true) => "its tag does not verify",
            (Some(_), false) => "it is sealed and this device has no key",
            (None, true) => "it is not sealed and this device has a key",
        };
        self.stats.rx_auth_fail.add(1);
        self.stats.rx_dropped.add(1);
        if crate::net::ratelimit() {
            pr_warn!(
                "{}: dropped a frame from {}: {}\n",
                dev_name,
                MacFmt(src),
                why
            );
        }
        false
    }

    /// Counts a receive drop (not a slave's frame, malformed, down...).
    pub(crate) fn rx_drop(&mut self) {
        self.stats.rx_dropped.add(1);
    }

    /// A frame in the other mode than ours (`one_switch`): counted, logged
    /// now and then.
    pub(crate) fn rx_mode_mismatch(&mut self, dev_name: &str, slave: &str, one_switch: bool) {
        self.stats.rx_mode_mismatch.add(1);
        self.stats.rx_dropped.add(1);
        if crate::net::ratelimit() {
            let (theirs, ours) = if one_switch {
                ("two-switch", "one_switch=1")
            } else {
                ("one-switch", "one_switch=0")
            };
            pr_warn!(
                "{}: dropped a {} mode frame on {}: this device has {}; the modes differ, set one_switch alike on every node\n",
                dev_name, theirs, slave, ours
            );
        }
    }

    /// Counts a malformed frame.
    pub(crate) fn rx_malformed(&mut self) {
        self.stats.rx_malformed.add(1);
        self.stats.rx_dropped.add(1);
    }

    /// A frame arrived for us (our address or a broadcast; frames for
    /// another address are only passed up when ri2n0 is promiscuous,
    /// outside every peer's order). Data is reordered into `out.up`; what
    /// must be dropped goes to `out.garbage`.
    pub(crate) fn rx_frame<'g>(
        &mut self,
        dev_name: &str,
        frame: RxIn,
        short_max: u32,
        gro: &'g GroCells,
        bh: &'g Bh<'_>,
        out: RxOut<'_>,
    ) -> RxAfter<'g> {
        let t = now();
        let admitted = self.rx_admit(dev_name, &frame, t, out.garbage);
        let Some(a) = admitted else {
            if let Some(s) = frame.skb {
                out.garbage.push(s);
            }
            return RxAfter::default();
        };
        let RxIn { kind, skb, src, .. } = frame;
        self.rx_take(dev_name, &src, a, kind, skb, t, short_max, gro, bh, out)
    }

    /// What receive decides before a frame touches its peer's cell: ri2n0
    /// is up, the frame verifies, counts on its link (one-switch mode: not
    /// a copy the switch flooded here, which only teaches a slave MAC), has
    /// a peer (admitted if new), and, sealed, is fresh. Counted here if
    /// refused (`None`; the caller drops the packet); else the peer is
    /// touched and its slave MAC learned.
    fn rx_admit(
        &mut self,
        dev_name: &str,
        f: &RxIn,
        t: Instant,
        garbage: &mut SkbList,
    ) -> Option<Admitted> {
        let (l, src) = (f.link, &f.src);
        if !self.up || !self.verify(dev_name, src, f.sealed.as_ref()) {
            if !self.up {
                self.stats.rx_dropped.add(1);
            }
            return None;
        }
        // Whether the frame counts on link `l` (its endpoint, loss marks,
        // link counters): not a copy the switch flooded here.
        let credit = f.wire.is_none_or(|w| w.link == l || w.to_port);
        if let Some(w) = f
            .wire
            .filter(|_| !credit && matches!(f.kind, Frame::Heartbeat(_)))
        {
            self.learn_from_flooded(dev_name, src, &w);
            self.stats.rx_not_for_us.add(1);
            self.stats.rx_dropped.add(1);
            return None;
        }
        let Some(slot) = self.peer_slot(src, Some(l), t, garbage) else {
            self.stats.rx_dropped.add(1);
            return None;
        };
        // Frames a slave's GRO merged count as the frames they were.
        let frames = f.skb.as_ref().map_or(1, span_of);
        let epoch = f.sealed.as_ref().map(|s| s.seal.epoch);
        // Sealed data: from the check until its window has it, receive
        // without the lock takes no sealed frame (`Slots::sealed_judged`).
        let judged = epoch.is_some() && matches!(f.kind, Frame::Data(_));
        if judged {
            self.slots.sealed_judged.fetch_add(1, Ordering::Relaxed);
        }
        // A replay is refused before it counts anywhere: it must not keep a
        // dead link alive or a peer in the table.
        if let Some(epoch) = epoch {
            let fresh = self.sealed_fresh(slot, epoch, &f.kind, frames);
            if fresh != Fresh::Yes {
                Admitted::judged_done(judged, &self.slots);
                self.count_stale(fresh, credit);
                return None;
            }
        }
        self.table
            .touch(slot, t, matches!(f.kind, Frame::Heartbeat(_)));
        if matches!(f.kind, Frame::Data(_)) {
            // Its next frames may take the peer's lock alone (ri2n_rx.rs),
            // which finds it by the index transmit reads.
            self.slots.note(src, slot);
        }
        // One-switch mode: a frame names the peer's link it left on; the
        // peer's slave MAC for our link of that index is its source,
        // wherever the switch delivered it (a frame to a ri2n MAC the switch
        // has not learned, or learned long ago, goes anywhere).
        if let Some(w) = f.wire {
            self.learn_link_mac(dev_name, slot, w.link, &w.src);
        }
        if credit {
            self.link_stats[l].rx_packets += u64::from(frames);
        }
        if frames > 1 {
            self.stats.rx_merged.add(1);
            self.stats.rx_merged_frames.add(u64::from(frames));
        }
        Some(Admitted {
            link: l,
            slot,
            credit,
            frames,
            epoch,
            judged,
        })
    }

    /// One-switch mode: a heartbeat the switch flooded here teaches the
    /// slave MAC `w.src` of `src`'s peer on our link `w.link`, if none is
    /// known yet: before the replay check, so only what is not known (a
    /// replay cannot move a learned MAC this way).
    fn learn_from_flooded(&mut self, dev_name: &str, src: &Mac, w: &Wire) {
        let Some(slot) = self.table.lookup(src) else {
            return;
        };
        let unknown = self.slots.cell(slot).is_some_and(|c| {
            c.lock()
                .peer
                .as_ref()
                .is_some_and(|p| p.link_mac.get(w.link) == Some(&[0; 6]))
        });
        if unknown {
            self.learn_link_mac(dev_name, slot, w.link, &w.src);
        }
    }

    /// Counts a sealed frame refused as not fresh: a flooded copy (one-switch
    /// mode: not `credit`), a broadcast's second copy, or a replay.
    fn count_stale(&mut self, fresh: Fresh, credit: bool) {
        if !credit {
            self.stats.rx_duplicates.add(1);
        } else if fresh == Fresh::Copy {
            self.stats.rx_bcast_copies.add(1);
        } else {
            self.stats.rx_replays.add(1);
        }
        self.stats.rx_dropped.add(1);
    }

    /// The admitted frame `a` of `src`'s peer, under the peer's cell: the
    /// engine takes it (core/node.rs), what its window released goes to
    /// `out.up` through the peer's GRO cell, and the peer goes on the
    /// sweep's and the heartbeats' lists as it now needs.
    #[allow(clippy::too_many_arguments)]
    fn rx_take<'g>(
        &mut self,
        dev_name: &str,
        src: &Mac,
        a: Admitted,
        kind: Frame,
        skb: Option<Skb>,
        t0: Instant,
        short_max: u32,
        gro: &'g GroCells,
        bh: &'g Bh<'_>,
        out: RxOut<'_>,
    ) -> RxAfter<'g> {
        let mut after = RxAfter::default();
        let RxOut { up, done, garbage } = out;
        let (params, carrier, is_up) = (self.params, self.carrier, self.up);
        let lossy_every = loss_probe_every(self.lossy_peers);
        let earliest = t0.plus(self.sweep_period());
        let State {
            bufs,
            slots,
            stats,
            slaves,
            probing,
            ports_changed,
            events,
            ..
        } = self;
        let held = &slots.held;
        // The detector counts what went out since, before it judges; the
        // links it allows are published after, under the same hold (a
        // sender to this peer waits: receive and it meet only here).
        let Some(cell) = slots.cell(a.slot) else {
            Admitted::judged_done(a.judged, slots);
            if let Some(s) = skb {
                garbage.push(s);
            }
            return after;
        };
        let mut c = cell.lock();
        // The cell is held from here to the window: done judging.
        Admitted::judged_done(a.judged, slots);
        let Some((ctx, peer)) = c.both() else {
            if let Some(s) = skb {
                garbage.push(s);
            }
            return after;
        };
        // Read again under the cell: receive on another CPU may have held
        // a packet since (core/window.rs, `waited_us`).
        let t = now();
        ctx.fold(peer);
        let mut dl = Delivery::new(up, short_max);
        if let (Frame::Data(_), Some(s)) = (&kind, &skb) {
            held.add(s.truesize() as usize);
        }
        let arrival = Arrival {
            link: a.link,
            now: t,
            carrier,
            credit: a.credit,
            sealed: a.epoch,
            frames: a.frames,
        };
        let got = peer.receive(&arrival, kind, skb, probing, &params, bufs, &mut |s| {
            dl.push(s)
        });
        let left = match got.left {
            Left::Up(s) => {
                // Not from a window: not in `out_bytes`.
                let size = s.truesize() as usize;
                dl.push(s);
                dl.out_bytes -= size;
                Left::Nothing
            }
            other => other,
        };
        rx_left(left, stats, held, done, garbage);
        if let Some(e) = got.restarted {
            events.push(Event::of_peer(Reason::PeerRestarted, src, t), t);
            log_restart(dev_name, src, e);
        }
        after.kick |= got.answer;
        // Whatever left a window (in order, a heartbeat's resync or loss
        // release, FAST_TOUT) is no longer held.
        held.sub(dl.out_bytes);
        if held.get() > params.held_mem() {
            // The arriving peer's window goes up whole: the total then
            // stays within held_mem plus a packet.
            stats.rx_held_full.add(1);
            dl.out_bytes = 0;
            peer.rx.flush(bufs, &mut |s| dl.push(s));
            held.sub(dl.out_bytes);
        }
        if !got.tr.is_empty() {
            *ports_changed = true;
            log_transitions(
                dev_name, slaves, src, &got.tr, t, &peer.det, carrier, events,
            );
        }
        ctx.publish(&peer.det);
        let need = peer.sweep_need(t, carrier, &params);
        if need == SweepNeed::Now {
            ctx.swept = true;
            // Not once ri2n0 is down: its timer is not re-armed then.
            let pull = is_up.then(|| {
                slots.pull_sweep_for(earliest, || peer.next_due(t, carrier, &params, lossy_every))
            });
            if let Some(at) = pull.flatten() {
                after.pull_ms = Some(ms_until(at, t));
            }
        }
        let hb = peer.hb_pending & carrier != 0;
        // Up under the peer's cell, so that what the window released goes
        // up before anything receive takes without the state lock later.
        let Delivery {
            up,
            ends_runs,
            packets,
            bytes,
            ..
        } = dl;
        after.claim = hand_up(gro, a.slot, up, ends_runs, bh);
        drop(c);
        stats.rx_packets.add(packets);
        stats.rx_bytes.add(bytes);
        self.rx_schedule(a.slot, need, hb);
        after
    }

    /// The peer in `slot` goes on the sweep's lists as `need` says, and on
    /// the heartbeat queue if `hb`; the pool's shortage is published.
    fn rx_schedule(&mut self, slot: usize, need: SweepNeed, hb: bool) {
        match need {
            SweepNeed::Now => self.work.sweep_soon(slot),
            SweepNeed::Slow => self.work.sweep_slow(slot),
            SweepNeed::None => {}
        }
        if hb {
            self.work.heartbeat(slot);
        }
        if self.bufs.refused != self.stats.rx_nobuf.get() {
            self.slots.bufs_short.store(true, Ordering::Relaxed);
        }
        self.stats.rx_nobuf.set(self.bufs.refused);
    }

    /// After receive took a frame of `mac`'s peer in `slot` without this
    /// lock (ri2n_rx.rs): what it could not do there. Its detector's
    /// transitions `tr` at `t` are logged and told to the peer (returns
    /// whether heartbeats are to go now); a duplicate it dropped (`dup`)
    /// and a window it flushed for `held_mem` (`full`) are counted; an idle
    /// window's buffer (`spare`) goes back to the pool.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn rx_lockless_after(
        &mut self,
        dev_name: &str,
        slot: usize,
        mac: &Mac,
        tr: Transitions,
        t: Instant,
        dup: bool,
        full: bool,
        spare: Option<Buf>,
    ) -> bool {
        if let Some(b) = spare {
            self.bufs.put(b);
        }
        if dup {
            self.stats.rx_duplicates.add(1);
            self.stats.rx_dropped.add(1);
        }
        self.stats.rx_held_full.add(u64::from(full));
        let mut kick = false;
        if !tr.is_empty() {
            self.ports_changed = true;
            let carrier = self.carrier;
            let queue = self.slots.cell(slot).is_some_and(|cell| {
                let mut c = cell.lock();
                let Some((_, p)) = c.peer_for(mac) else {
                    return false;
                };
                kick = p.tell(&tr, carrier);
                let ev = &mut *self.events;
                log_transitions(dev_name, &self.slaves, mac, &tr, t, &p.det, carrier, ev);
                p.hb_pending & carrier != 0
            });
            if queue {
                self.work.heartbeat(slot);
            }
        }
        kick
    }

    /// One-switch mode: the peer in `slot` sends on our link `l` from
    /// slave MAC `w`; a new one (a NIC replaced) is learned at once.
    fn learn_link_mac(&mut self, dev_name: &str, slot: usize, l: usize, w: &Mac) {
        // Never a group, zero or own address: our unicast to the peer
        // would flood, or come back to us.
        if l >= MAX_LINKS
            || w[0] & 1 != 0
            || *w == [0; 6]
            || self.slaves().any(|(_, s)| s.dev.addr() == *w)
        {
            return;
        }
        if self.table.get(slot).is_none() {
            return;
        }
        let Some(learned) = self.claims.learn(
            &mut CellMacs(&self.slots),
            claims::Claim { slot, link: l },
            w,
        ) else {
            return;
        };
        let mac = *self.table.mac(slot);
        let name = self.slaves[l].as_ref().map_or("?", |s| s.name());
        match learned.taken_from {
            Some(t) if t.slot != slot => {
                // The later claim wins; the earlier peer's frames to it
                // go to its ri2n MAC (flooded) until it is heard again.
                self.stats.slave_mac_taken.add(1);
                let other = *self.table.mac(t.slot);
                let logged = self
                    .slots
                    .cell(t.slot)
                    .is_some_and(|c| c.lock().peer.as_ref().is_some_and(|p| p.claim_logged));
                let Some(cell) = self.slots.cell(slot) else {
                    return;
                };
                let first = cell
                    .lock()
                    .peer
                    .as_mut()
                    .is_some_and(|p| !core::mem::replace(&mut p.claim_logged, true));
                if !logged && first {
                    pr_warn!(
                        "{}: slave MAC {} claimed by peers {} and {}: now {}'s on {} (logged once)\n",
                        dev_name, MacFmt(w), MacFmt(&other), MacFmt(&mac), MacFmt(&mac), name
                    );
                }
            }
            _ if learned.old != [0; 6] && crate::net::ratelimit() => {
                pr_info!(
                    "{}: peer {} link {}: slave MAC now {} (was {})\n",
                    dev_name,
                    MacFmt(&mac),
                    name,
                    MacFmt(w),
                    MacFmt(&learned.old)
                );
            }
            _ => {}
        }
    }

    /// Whether a verified sealed frame from the peer in `slot` is new
    /// ([`Peer::sealed_fresh`]).
    fn sealed_fresh(&mut self, slot: usize, epoch: u64, frame: &Frame, frames: u32) -> Fresh {
        let Some(cell) = self.slots.cell(slot) else {
            return Fresh::Replay;
        };
        let mut c = cell.lock();
        let Some((_, peer)) = c.both() else {
            return Fresh::Replay;
        };
        peer.sealed_fresh(epoch, frame, frames)
    }

    /// A frame for another of our addresses, or (promiscuous) another
    /// host's, passed up unordered.
    pub(crate) fn rx_unordered(&mut self, len: u32) {
        self.stats.rx_packets.add(1);
        self.stats.rx_bytes.add(u64::from(len));
        self.stats.rx_unordered.add(1);
    }

    /// A frame for another host, dropped.
    pub(crate) fn rx_not_for_us(&mut self) {
        self.stats.rx_not_for_us.add(1);
        self.stats.rx_dropped.add(1);
    }
}
