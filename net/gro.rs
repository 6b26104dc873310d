// SPDX-License-Identifier: GPL-2.0

//! GRO cells: NAPI contexts through which a virtual device hands packets
//! to the stack, so that consecutive TCP segments are coalesced first (as
//! tunnels do), made as `net/core/gro_cells.c` makes them, one per CPU.
//!
//! Two things more than the kernel's, whose state is private to
//! gro_cells.c:
//!
//! - A caller picks the cell ([`GroCells::queue`]), so that what must stay
//!   in order takes one cell, whichever CPU hands it over: one cell's
//!   packets go up in the order queued, since only one poll of it runs at a
//!   time and it flushes its GRO before the next may start.
//! - A caller may claim an idle cell ([`GroCells::claim`]) and hand packets
//!   up at once through it, saving its NAPI round: while claimed, no poll
//!   of it runs, so what others queue on it meanwhile goes up after.

use super::bindings;
use super::device::Device;
use super::lock::Bh;
use super::skb::{DropReason, Skb, SkbList};
use core::ffi::{c_int, c_void};
use core::marker::PhantomData;
use core::ptr;
use core::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use kernel::prelude::*;
use kernel::types::Opaque;

/// A cell: a queue of packets and the NAPI context whose poll hands them
/// up through GRO. Any CPU may queue on it, claim it or run its poll.
///
/// # Invariants
///
/// Once [`GroCells::new`] returns: `queue` is initialised, `napi` added to
/// the device and enabled, until [`GroCells::destroy`]. `queue` is only
/// touched under its lock, in softirq or with BH off (a threaded poll); a
/// packet that finds it empty schedules the poll, and the poll completes
/// only once it found it empty: so a queued packet always has a poll to
/// come.
#[repr(C)]
struct Cell {
    /// First: `poll` finds the cell from it.
    napi: Opaque<bindings::napi_struct>,
    queue: Opaque<bindings::sk_buff_head>,
    /// Packets handed up at once (by claims) and through the poll.
    now: AtomicU64,
    polled: AtomicU64,
}

impl Cell {
    fn napi(&self) -> *mut bindings::napi_struct {
        self.napi.get()
    }

    fn qlen(&self) -> u32 {
        // SAFETY: An initialised queue (invariant); a racy read, as
        // skb_queue_len_lockless.
        unsafe { ptr::read_volatile(&raw const (*self.queue.get()).qlen) }
    }

    /// Runs `f` on the queue under its lock.
    fn locked<R>(&self, f: impl FnOnce(*mut bindings::sk_buff_head) -> R) -> R {
        let q = self.queue.get();
        // SAFETY: An initialised queue (invariant); BH is off in every
        // context that takes this lock, so a plain spin_lock suffices.
        unsafe { bindings::spin_lock(&raw mut (*q).lock) };
        let r = f(q);
        // SAFETY: Taken above.
        unsafe { bindings::spin_unlock(&raw mut (*q).lock) };
        r
    }

    /// Queues `skbs` for the poll, in one round of the queue's lock.
    fn queue(&self, skbs: SkbList) {
        // As gro_cells.c: a poll that cannot keep up drops, not hoards.
        // SAFETY: A read of a tunable.
        let max = unsafe { bindings::max_backlog() } as u32;
        let (was_empty, mut dropped) = self.locked(|q| {
            // SAFETY: The queue, locked.
            let was_empty = unsafe { (*q).qlen } == 0;
            let mut dropped = SkbList::new();
            for skb in skbs {
                // SAFETY: As above; __skb_queue_tail takes the skb.
                unsafe {
                    if !up(&skb) || (*q).qlen > max {
                        dropped.push(skb);
                        continue;
                    }
                    bindings::skb_unset_transport_header(skb.as_raw());
                    bindings::__skb_queue_tail(q, skb.into_raw());
                }
            }
            (was_empty, dropped)
        });
        if was_empty && self.qlen() != 0 {
            // SAFETY: An initialised NAPI context (invariant). It schedules
            // the poll, or finds it scheduled (a poll about to complete, or
            // a claim) and sets MISSED, so that it polls again.
            unsafe { bindings::napi_schedule(self.napi()) };
        }
        while let Some(skb) = dropped.pop() {
            // SAFETY: The skb's device (ri2n0) is alive while its packets are.
            unsafe { bindings::dev_core_stats_rx_dropped_inc(super::skb::dev_of(skb.as_raw())) };
            skb.drop_reason(DropReason::Full);
        }
    }
}

/// A device's GRO cells.
///
/// # Invariants
///
/// `cells` is a per-CPU allocation of [`Cell`]s, each initialised (see
/// [`Cell`]) for a device that outlives this, until `dead` is set; freed
/// on drop. The device's teardown leaves that until an RCU grace period
/// after `destroy` (its private data goes in `priv_destructor`), or, when
/// registration failed, at once: the device was never published, and
/// its cells have no NAPI id and no netpoll. `cpus` lists the possible
/// CPUs, at least one: cell `i` lives in CPU `cpus[i]`'s slot, for
/// memory's sake only (any CPU uses any cell).
pub struct GroCells {
    cells: *mut c_void,
    cpus: KVec<u32>,
    dead: AtomicBool,
}

// SAFETY: Cells whose queues are under their own locks, NAPI contexts the
// core serialises, counters atomic; `dead` is atomic.
unsafe impl Send for GroCells {}
// SAFETY: As above.
unsafe impl Sync for GroCells {}

/// What the cells handed up, summed over the CPUs.
#[derive(Clone, Copy, Default)]
pub struct GroCounts {
    /// At once, through a claim ([`GroCells::claim`]).
    pub now: u64,
    /// Through a cell's NAPI poll and GRO.
    pub polled: u64,
}

/// The possible CPUs (those a per-CPU allocation has room for).
fn possible_cpus() -> impl Iterator<Item = u32> {
    // SAFETY: Reads of boot-time constants.
    (0..unsafe { bindings::nr_cpu_ids() }).filter(|&c| unsafe { bindings::cpu_possible(c) })
}

impl GroCells {
    /// Cells for `dev` (its `ndo_init`, process context).
    ///
    /// # Safety
    ///
    /// `dev` is the device being initialised, and the cells become part of
    /// its private data: [`GroCells::destroy`] runs in its `ndo_uninit`,
    /// and the cells are dropped with the data (`priv_destructor`, an RCU
    /// grace period after unregistration), or at once if registration
    /// failed. Dropped anywhere else, they would free NAPI contexts that
    /// RCU readers of the device's NAPI list may still see.
    pub unsafe fn new(dev: &Device) -> Result<Self> {
        let mut cpus = KVec::new();
        for cpu in possible_cpus() {
            cpus.push(cpu, GFP_KERNEL_ACCOUNT)?;
        }
        let (size, align) = (core::mem::size_of::<Cell>(), core::mem::align_of::<Cell>());
        // SAFETY: A plain allocation, all bytes zero, charged to the
        // creator's memory cgroup.
        let cells = unsafe { bindings::alloc_percpu_account(size, align) };
        if cells.is_null() || cpus.is_empty() {
            // SAFETY: Ours, or NULL (a no-op).
            unsafe { bindings::free_percpu(cells) };
            return Err(ENOMEM);
        }
        for &cpu in cpus.iter() {
            // SAFETY: `cpu` is possible, so it has a slot in `cells`.
            let c = unsafe { &*bindings::per_cpu_ptr(cells, cpu).cast::<Cell>() };
            // SAFETY: `c` is zeroed, ours, and not shared yet: an all-zero
            // napi_struct is what netif_napi_add expects (as gro_cells.c);
            // `dev` is being registered and outlives its private data.
            unsafe {
                bindings::skb_queue_head_init(c.queue.get());
                bindings::napi_set_no_busy_poll(c.napi());
                bindings::netif_napi_add(dev.as_raw(), c.napi(), Some(poll));
                bindings::napi_enable(c.napi());
            }
        }
        // INVARIANT: Every possible CPU's cell is initialised above.
        Ok(GroCells {
            cells,
            cpus,
            dead: AtomicBool::new(false),
        })
    }

    /// Cell `i` (any number: they wrap), or `None` once destroyed.
    fn cell(&self, i: usize) -> Option<&Cell> {
        if self.dead.load(Ordering::Acquire) {
            return None;
        }
        // No panicking `%` (objtool does not know core's rem_by_zero panic
        // as noreturn); `cpus` is never empty (invariant).
        let cpu = *i
            .checked_rem(self.cpus.len())
            .and_then(|j| self.cpus.get(j))?;
        // SAFETY: The cells are live until drop (invariant).
        Some(unsafe { &*bindings::per_cpu_ptr(self.cells, cpu).cast::<Cell>() })
    }

    /// This CPU's cell, or `None` once destroyed.
    fn this_cell(&self) -> Option<&Cell> {
        if self.dead.load(Ordering::Acquire) {
            return None;
        }
        // SAFETY: The cells are live until drop (invariant); the caller is
        // in softirq, so it stays on this CPU.
        Some(unsafe { &*bindings::this_cpu_ptr(self.cells).cast::<Cell>() })
    }

    /// Hands `skb` to the stack through this CPU's cell (BH off: `_bh`),
    /// for packets that need no order with others.
    pub fn receive(&self, skb: Skb, _bh: &Bh<'_>) {
        let mut l = SkbList::new();
        l.push(skb);
        match self.this_cell() {
            Some(c) => c.queue(l),
            None => drop(l),
        }
    }

    /// Hands `skbs` to the stack through cell `i` (BH off: `_bh`): after
    /// everything queued on that cell before, from any CPU. It only queues
    /// and schedules, so the caller may hold its own lock, which then
    /// orders what the cell hands up.
    pub fn queue(&self, i: usize, skbs: SkbList, _bh: &Bh<'_>) {
        if let Some(c) = self.cell(i) {
            c.queue(skbs);
        }
    }

    /// Claims cell `i`, if nothing of it is queued, polled or held by its
    /// GRO, to hand packets up at once through the claim, which lives no
    /// longer than BH is off (`_bh`). While claimed, no poll of the cell
    /// runs: packets queued on it meanwhile go up after the claim's, when
    /// it is dropped. Like [`GroCells::queue`], it may be taken under the
    /// caller's lock.
    pub fn claim<'a>(&'a self, i: usize, _bh: &'a Bh<'_>) -> Option<Claim<'a>> {
        let c = self.cell(i)?;
        // SAFETY: An initialised NAPI context (invariant). Taking SCHED
        // (napi_schedule_prep) keeps every poll of it off until we give it
        // back (netpoll, which polls regardless, is off for ri2n0); a poll that held packets with a flush timeout left them in
        // its GRO, and those go first: schedule it, and queue behind.
        unsafe {
            // Busy: no need to tell the poll (prep would set MISSED).
            if bindings::napi_is_scheduled(c.napi()) || !bindings::napi_schedule_prep(c.napi()) {
                return None;
            }
            if c.qlen() != 0 || ptr::read_volatile(&raw const (*c.napi()).gro.bitmask) != 0 {
                bindings::__napi_schedule(c.napi());
                return None;
            }
        }
        Some(Claim {
            cell: c,
            _not_send: PhantomData,
        })
    }

    /// What the cells handed up so far.
    pub fn counts(&self) -> GroCounts {
        let mut n = GroCounts::default();
        for &cpu in self.cpus.iter() {
            // SAFETY: Live until drop (invariant); the counters are atomics.
            let c = unsafe { &*bindings::per_cpu_ptr(self.cells, cpu).cast::<Cell>() };
            n.now += c.now.load(Ordering::Relaxed);
            n.polled += c.polled.load(Ordering::Relaxed);
        }
        n
    }

    /// Stops the cells and frees what they hold (`ndo_uninit`, process
    /// context, once nothing calls `receive`); again is a no-op.
    pub fn destroy(&self) {
        if self.dead.swap(true, Ordering::AcqRel) {
            return;
        }
        for &cpu in self.cpus.iter() {
            // SAFETY: Initialised (invariant, `dead` was clear).
            let c = unsafe { &*bindings::per_cpu_ptr(self.cells, cpu).cast::<Cell>() };
            // SAFETY: napi_disable waits for a running poll (and a claim,
            // which holds SCHED); nothing queues after (the caller's
            // promise), so the purge frees the rest.
            unsafe {
                bindings::napi_disable(c.napi());
                bindings::__netif_napi_del(c.napi());
                bindings::skb_queue_purge(c.queue.get());
            }
        }
    }
}

impl Drop for GroCells {
    fn drop(&mut self) {
        self.destroy();
        // SAFETY: Our allocation, unused since `destroy` a grace period ago
        // (invariant): neither netpoll nor a poll sees it.
        unsafe { bindings::free_percpu(self.cells) };
    }
}

/// A cell claimed to hand packets up at once ([`GroCells::claim`]); given
/// back on drop, in the same softirq (it is not `Send`).
pub struct Claim<'a> {
    cell: &'a Cell,
    _not_send: PhantomData<*mut ()>,
}

impl Claim<'_> {
    /// Hands `skb` to the stack now (`netif_receive_skb`).
    pub fn deliver(&self, skb: Skb) {
        if !up(&skb) {
            return skb.drop_reason(DropReason::DevReady);
        }
        self.cell.now.fetch_add(1, Ordering::Relaxed);
        // SAFETY: Softirq context; netif_receive_skb takes the skb. The
        // transport header still points into the stripped shim.
        unsafe {
            bindings::skb_unset_transport_header(skb.as_raw());
            bindings::netif_receive_skb(skb.into_raw());
        }
    }
}

impl Drop for Claim<'_> {
    fn drop(&mut self) {
        // SAFETY: We hold the cell's SCHED bit (the claim), with nothing in
        // its GRO and the cell on no poll list: napi_complete_done gives
        // the bit back, or, if a packet was queued meanwhile (its
        // napi_schedule found the bit taken and set MISSED), schedules the
        // poll for it. It would return early, leaving SCHED set, while
        // netpoll or busy polling service the context (NPSVC,
        // IN_BUSY_POLL): neither can, as the cells have no NAPI id
        // (NO_BUSY_POLL) and the device no netpoll (IFF_DISABLE_NETPOLL).
        // With a GRO flush timeout set on ri2n0 it may arm the watchdog,
        // which then polls an empty cell once.
        unsafe { bindings::napi_complete_done(self.cell.napi(), 0) };
    }
}

/// Whether the packet's device (ri2n0) is up: as gro_cells.c, a device
/// going down drops what still comes.
fn up(skb: &Skb) -> bool {
    // SAFETY: We own the skb, whose `dev` is set (eth_type_trans) and
    // alive while its packets are; `flags` is read as dev_get_flags does.
    unsafe { (*super::skb::dev_of(skb.as_raw())).flags & bindings::net_device_flags_IFF_UP != 0 }
}

/// A cell's NAPI poll (softirq, or its thread): up to `budget` packets
/// through GRO, taken off the queue in one round of its lock.
///
/// GRO may steal a packet's head or frags: the driver hands up packets
/// whose head is its own (`Skb::strip_shim` makes it writable).
///
/// # Safety
///
/// Only the kernel calls it, through the table this module fills in, with
/// the arguments and in the context that table's contract gives.
unsafe extern "C" fn poll(napi: *mut bindings::napi_struct, budget: c_int) -> c_int {
    // SAFETY: `napi` is the first field of a live cell (repr(C)): NAPI
    // polls only while enabled, and `destroy` disables it first.
    let c = unsafe { &*napi.cast::<Cell>() };
    let mut batch = SkbList::new();
    c.locked(|q| {
        while (batch.len() as c_int) < budget {
            // SAFETY: The queue, locked; __skb_dequeue hands us the skb.
            match unsafe { Skb::from_raw(bindings::__skb_dequeue(q)) } {
                Some(skb) => batch.push(skb),
                None => break,
            }
        }
    });
    let done = batch.len() as c_int;
    for skb in batch {
        // SAFETY: GRO takes the skb; we are the cell's poll.
        unsafe { bindings::napi_gro_receive(napi, skb.into_raw()) };
    }
    c.polled.fetch_add(done as u64, Ordering::Relaxed);
    // With the queue found empty (fewer than the budget), complete: a
    // packet queued since then scheduled the poll again (MISSED).
    if done < budget {
        // SAFETY: Our poll, done with less than its budget.
        unsafe { bindings::napi_complete_done(napi, done) };
    }
    done
}
