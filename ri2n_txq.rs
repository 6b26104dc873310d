// SPDX-License-Identifier: GPL-2.0

//! The links' transmit queues: each link carries every peer's numbers in
//! increasing order (the loss rule's assumption), without a lock held
//! across `dev_queue_xmit`, and without the state lock on the way out.
//!
//! Frames are numbered and pushed under the state lock, so a link's queue
//! holds them in number order; the push itself takes no lock
//! (`SkbStack`). One task at a time, the drainer, holds the queue's token:
//! it moves the frames pushed so far to a backlog only it touches and
//! hands them to the slave in order, at most [`DRAIN_BUDGET`] per call.
//! Taking and returning the token are atomic: a task that pushes, then
//! finds nobody draining, drains; a drainer that stops, then finds a
//! frame pushed meanwhile, takes the queue back unless the pusher already
//! did. A drainer that used its budget with frames left pauses the queue
//! (nobody else starts) and the sweep timer adopts it.
//!
//! Drainers run with bottom halves disabled (`ndo_start_xmit`, timers),
//! which is an RCU read section: they find the slave under RCU
//! (`RcuDevice`). Releasing a slave waits out those sections, then for
//! the token, before its queue is flushed.

use crate::net::device::RcuDevice;
use crate::net::skb::{DropReason, Skb, SkbList, SkbStack};
use crate::net::Mac;
use crate::proto::header::ETH_P_RI2N;
use crate::proto::links_in;
use crate::ri2n_dev::Ri2nDev;
use crate::ri2n_tx::{task, SEG_FEATURES};
use core::cell::UnsafeCell;
use core::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// Frames a link's queue holds at most; more are dropped (`tx_queue_full`).
pub(crate) const TXQ_LIMIT: usize = 1024;

/// Most frames one drainer hands to a slave per call, so that a busy link
/// cannot keep one CPU in a bottom-half section for long.
pub(crate) const DRAIN_BUDGET: usize = 256;

/// `drainer` while nobody drains.
const IDLE: usize = 0;
/// `drainer` while paused for the sweep.
const PAUSED: usize = usize::MAX;
/// `drainer` while a released slave's queue is flushed.
const FLUSHING: usize = usize::MAX - 1;

/// One link's transmit queue and slave, on a cache line of its own: every
/// transmit reads each link's `drainer`.
///
/// # Invariants
///
/// `backlog` is touched only by the task whose identity `drainer` holds
/// (or by [`LinkQueue::flush`] while it holds [`FLUSHING`]); `len` counts
/// the frames in `frames` and `backlog`, give or take pushes and takes
/// under way.
#[repr(align(64))]
#[derive(Default)]
pub(crate) struct LinkQueue {
    frames: SkbStack,
    backlog: UnsafeCell<SkbList>,
    len: AtomicUsize,
    /// The token: the draining task (`net::task_id`, never 0 nor one of
    /// the values above), [`IDLE`], [`PAUSED`] or [`FLUSHING`].
    drainer: AtomicUsize,
    /// The slave, for the drainer.
    pub(crate) slave: RcuDevice,
    /// Frames handed to the slave (a whole GSO packet's segments each).
    tx_packets: AtomicU64,
    /// GSO packets handed to the slave whole, for it to segment (`tx_gso`).
    tx_whole: AtomicU64,
}

// SAFETY: `backlog` is reached only by the token's holder (invariant), one
// task at a time; everything else is atomic or `Sync`.
unsafe impl Sync for LinkQueue {}

impl LinkQueue {
    /// Queues `frame`: `Ok(true)` if the caller now holds the token and is
    /// to drain the queue ([`drain_links`]), `Err` with the frame
    /// if the queue is full. Called under the lock of the frame's peer
    /// (its transmit side), which orders that peer's frames.
    pub(crate) fn push(&self, frame: Skb, task: usize) -> core::result::Result<bool, Skb> {
        if self.len.fetch_add(1, Ordering::Relaxed) >= TXQ_LIMIT {
            self.len.fetch_sub(1, Ordering::Relaxed);
            return Err(frame);
        }
        self.frames.push(frame);
        Ok(self
            .drainer
            .compare_exchange(IDLE, task, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok())
    }

    /// Whether `task` is draining this queue (a transmit re-entering from
    /// our own slave's egress).
    pub(crate) fn drained_by(&self, task: usize) -> bool {
        self.drainer.load(Ordering::Relaxed) == task
    }

    /// For the drainer `task`: up to `max` frames, oldest first; `None`
    /// once none are left and the token is returned (or passed to a task
    /// that pushed meanwhile), or if `task` does not hold it.
    pub(crate) fn take(&self, task: usize, max: usize) -> Option<SkbList> {
        if matches!(task, IDLE | PAUSED | FLUSHING) || self.drainer.load(Ordering::SeqCst) != task {
            return None;
        }
        // SAFETY: `task` holds the token (checked above; only its holder
        // gives it up), so nobody else touches the backlog.
        let backlog = unsafe { &mut *self.backlog.get() };
        loop {
            if backlog.is_empty() {
                backlog.append(&mut self.frames.take_all());
            }
            if !backlog.is_empty() {
                let mut batch = SkbList::new();
                while batch.len() < max {
                    let Some(f) = backlog.pop() else { break };
                    batch.push(f);
                }
                self.len.fetch_sub(batch.len(), Ordering::Relaxed);
                return Some(batch);
            }
            if !self.give_back(task) {
                return None;
            }
        }
    }

    /// Returns the token with both lists empty; true if a frame pushed
    /// before that (whose pusher found the token taken) made us take it
    /// back.
    fn give_back(&self, task: usize) -> bool {
        self.drainer.store(IDLE, Ordering::SeqCst);
        !self.frames.is_empty()
            && self
                .drainer
                .compare_exchange(IDLE, task, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
    }

    /// For the drainer `task` that used its budget: pauses the queue for
    /// the sweep if frames are left (true), else returns the token (false).
    pub(crate) fn pause(&self, task: usize) -> bool {
        if matches!(task, IDLE | PAUSED | FLUSHING) || self.drainer.load(Ordering::SeqCst) != task {
            return false;
        }
        // SAFETY: As in `take`.
        let left = !unsafe { &*self.backlog.get() }.is_empty() || !self.frames.is_empty();
        if left || self.give_back(task) {
            self.drainer.store(PAUSED, Ordering::SeqCst);
            return true;
        }
        false
    }

    /// Whether the queue waits for the sweep.
    pub(crate) fn paused(&self) -> bool {
        self.drainer.load(Ordering::Relaxed) == PAUSED
    }

    /// The sweep takes over a paused queue: true if it now holds the token.
    pub(crate) fn adopt(&self, task: usize) -> bool {
        self.drainer
            .compare_exchange(PAUSED, task, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
    }

    /// Empties the queue, of a slave just released (nothing is pushed for
    /// it any more, and no drainer sees it: `RcuDevice::set` waited) or of
    /// a device gone down (its timers stopped), and returns what was left.
    /// Waits, sleeping, for a drainer still holding the token (one that
    /// took it before, or the sweep, dropping frames that have no slave),
    /// and leaves the queue idle, not paused. Process context.
    pub(crate) fn flush(&self) -> SkbList {
        loop {
            let t = self.drainer.load(Ordering::SeqCst);
            if (t == IDLE || t == PAUSED)
                && self
                    .drainer
                    .compare_exchange(t, FLUSHING, Ordering::SeqCst, Ordering::SeqCst)
                    .is_ok()
            {
                break;
            }
            // A holder preempted on this CPU (PREEMPT_RT) must get to run.
            kernel::time::delay::fsleep(kernel::time::Delta::from_micros(50));
        }
        // SAFETY: We hold the token (`FLUSHING`).
        let mut left = core::mem::take(unsafe { &mut *self.backlog.get() });
        left.append(&mut self.frames.take_all());
        self.len.fetch_sub(left.len(), Ordering::Relaxed);
        self.drainer.store(IDLE, Ordering::SeqCst);
        left
    }

    /// Counts `frames` handed to the slave, `whole` GSO packets among
    /// them (by the drainer only).
    pub(crate) fn sent(&self, frames: u64, whole: u64) {
        self.tx_packets.fetch_add(frames, Ordering::Relaxed);
        if whole > 0 {
            self.tx_whole.fetch_add(whole, Ordering::Relaxed);
        }
    }

    /// Frames waiting in the queue now.
    pub(crate) fn queued(&self) -> usize {
        self.len.load(Ordering::Relaxed)
    }

    /// Frames handed to the slave since it was enslaved.
    pub(crate) fn tx_packets(&self) -> u64 {
        self.tx_packets.load(Ordering::Relaxed)
    }

    /// GSO packets handed to the slave whole since it was enslaved.
    pub(crate) fn tx_whole(&self) -> u64 {
        self.tx_whole.load(Ordering::Relaxed)
    }

    /// A new slave: its counts start at 0.
    pub(crate) fn reset_count(&self) {
        self.tx_packets.store(0, Ordering::Relaxed);
        self.tx_whole.store(0, Ordering::Relaxed);
    }
}

/// Hands the frames queued on the links in `links` to their slaves, in
/// order, until the queues are empty or `DRAIN_BUDGET` frames per link are
/// sent (the sweep then goes on). Called without the state lock by the
/// task that became each queue's drainer, with bottom halves disabled
/// (`ndo_start_xmit`, timers).
pub(crate) fn drain_links(dev: &Ri2nDev, links: u8) {
    let d = dev.data();
    let me = task();
    let mut paused = false;
    for l in links_in(links) {
        let q = &d.txq[l];
        let mut sent = 0;
        loop {
            if sent >= DRAIN_BUDGET {
                paused |= q.pause(me);
                break;
            }
            // Taken and sent in one RCU section: a slave released meanwhile
            // waits for it before its queue is flushed.
            let rcu = kernel::sync::rcu::read_lock();
            let Some(frames) = q.take(me, DRAIN_BUDGET - sent) else {
                break;
            };
            let Some(slave) = q.slave.get(&rcu) else {
                // The slave is being released: what was queued for it goes.
                drop(frames);
                continue;
            };
            sent += frames.len();
            let (mut nframes, mut nwhole) = (0u64, 0u64);
            // Frames the slave dropped (its qdisc full, say) never left:
            // taken back from their peers' counts, for up to 8
            // destinations per batch (a peer's ri2n MAC, or in one-switch
            // mode its slave MAC), all drops to one taking one entry (the
            // rest only counted on the link).
            let mut dropped: [(Mac, u32); 8] = [([0; 6], 0); 8];
            let (mut ndropped, mut nlost) = (0, 0u64);
            let mut lost = |dst: &Mac, n: u32| {
                nlost += u64::from(n);
                if dst[0] & 1 != 0 {
                    return;
                }
                if let Some(e) = dropped[..ndropped].iter_mut().find(|e| e.0 == *dst) {
                    e.1 += n;
                } else if ndropped < dropped.len() {
                    dropped[ndropped] = (*dst, n);
                    ndropped += 1;
                }
            };
            for mut f in frames {
                let hash = flow_hash(&f, l);
                let mut dst: Mac = [0; 6];
                dst.copy_from_slice(f.data().get(..6).unwrap_or(&[0; 6]));
                // A whole GSO packet (`tx_gso`) counts as its segments. A
                // slave that would segment it in hardware (its TSO turned
                // back on, a macvlan) gets it cut here, through the same
                // offload: its hardware would take our header for IP's.
                let segs = if f.is_gso() {
                    u32::from(f.gso_segs().max(1))
                } else {
                    1
                };
                nframes += u64::from(segs);
                if segs > 1 && slave.hw_gso() {
                    f.set_protocol(ETH_P_RI2N);
                    match f.gso_segments_on(slave, SEG_FEATURES) {
                        Ok(parts) => {
                            for p in parts {
                                if !p.xmit_on(slave, ETH_P_RI2N, hash) {
                                    lost(&dst, 1);
                                }
                            }
                        }
                        Err(f) => {
                            f.drop_reason(DropReason::NoMem);
                            lost(&dst, segs);
                        }
                    }
                } else {
                    nwhole += u64::from(segs > 1);
                    if !f.xmit_on(slave, ETH_P_RI2N, hash) {
                        lost(&dst, segs);
                    }
                }
            }
            q.sent(nframes, nwhole);
            if nlost > 0 {
                let mut st = d.lock_state();
                st.tx_slave_dropped(l, nlost);
                for (dst, n) in &dropped[..ndropped] {
                    st.tx_unsent(dst, l, *n);
                }
            }
        }
    }
    if paused {
        crate::ri2n_hb::kick(dev);
    }
}

/// Frames taken back from link `l`'s queue without leaving (ri2n0 went
/// down): dropped, counted on the link, and taken back from their peers'
/// counts, so that the peer's loss measure does not blame the link for
/// frames never sent.
pub(crate) fn unsent(dev: &Ri2nDev, l: usize, frames: SkbList) {
    if frames.is_empty() {
        return;
    }
    let mut st = dev.data().lock_state();
    let (mut total, mut garbage) = (0u64, SkbList::new());
    for f in frames {
        let mut dst: Mac = [0; 6];
        dst.copy_from_slice(f.data().get(..6).unwrap_or(&[0; 6]));
        let segs = if f.is_gso() {
            u32::from(f.gso_segs().max(1))
        } else {
            1
        };
        total += u64::from(segs);
        if dst[0] & 1 == 0 {
            st.tx_unsent(&dst, l, segs);
        }
        garbage.push(f);
    }
    st.tx_slave_dropped(l, total);
    // Freed after the lock, as every packet is.
    drop(st);
    drop(garbage);
}

/// The flow of a frame on link `l`: its destination and the link. All of
/// a peer's frames on one link (data and heartbeats) are one flow, which
/// the slave keeps in order; different peers spread over the slave's
/// queues.
fn flow_hash(frame: &Skb, l: usize) -> u32 {
    let d = frame.data();
    let mut h: u64 = 0x9e37_79b9_7f4a_7c15 ^ l as u64;
    for &b in d.get(..6).unwrap_or(&[]) {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    ((h >> 32) as u32 ^ h as u32).max(1)
}
