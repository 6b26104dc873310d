// SPDX-License-Identifier: GPL-2.0

//! A device's parameters set at run time, from netlink (`ip link add/set
//! DEV type ri2n PARAM VALUE...`) or from a sysfs file: all or none, under
//! RTNL, a refusal said in the request's extended ack or, without one, in
//! the kernel log.

use crate::net::device::{ExtAck, Rtnl};
use crate::net::skb::SkbList;
use crate::proto::params::{Param, Params};
use crate::ri2n_dev::{Ri2n, Ri2nDev};
use core::fmt;
use core::sync::atomic::Ordering;
use kernel::prelude::*;

/// Says why a request is refused: in `extack` (what `ip` prints), or in
/// the log when the request came from sysfs.
fn refuse(dev: &Ri2nDev, extack: &ExtAck, why: fmt::Arguments<'_>) {
    if extack.is_none() {
        // As bonding's sysfs options: one line per refused write.
        pr_err!("{}: {}\n", dev.name(), why);
    } else {
        extack.set_msg_fmt(why);
    }
}

/// Sets `pairs` on `dev` as a whole: the order of the pairs does not
/// matter, and a refused one leaves every parameter as it was. `peer_mem`
/// and `one_switch` change only while the device is down (`EBUSY`).
/// Refused, returns the error and the parameter it is about.
pub(crate) fn set_params(
    dev: &Ri2nDev,
    rtnl: &Rtnl,
    pairs: &[(Param, u32)],
    extack: &ExtAck,
) -> core::result::Result<(), (Error, Param)> {
    // RTNL serialises every writer and the device's opening and closing:
    // `cur` and `up` hold until the end.
    let (cur, up) = {
        let st = dev.data().lock_state();
        (*st.params(), st.is_up())
    };
    let next = cur.with(pairs).map_err(|r| {
        refuse(dev, extack, format_args!("{}", r));
        (EINVAL, r.param)
    })?;
    if let Err(p) = within_memory_allowed(&cur, &next) {
        refuse(dev, extack, format_args!("{}", MemoryRefusal(p)));
        return Err((EPERM, p));
    }
    for &(p, _) in pairs {
        if p.down_only() && up && next.get(p) != cur.get(p) {
            refuse(
                dev,
                extack,
                format_args!(
                    "{} can only change while {} is down",
                    p.spec().name,
                    dev.name()
                ),
            );
            return Err((EBUSY, p));
        }
    }
    if next.peer_mem() != cur.peer_mem() {
        set_peer_mem(dev, next.get(Param::PeerMem)).map_err(|e| {
            let why = if e == ENOMEM {
                "no memory for"
            } else {
                "cannot make"
            };
            refuse(
                dev,
                extack,
                format_args!("peer_mem: {} a table of {} bytes", why, next.peer_mem()),
            );
            (e, Param::PeerMem)
        })?;
    }
    {
        let mut st = dev.data().lock_state();
        st.replace_params(next);
        // The heartbeat timer may sleep for up to the old HBSPAN: a shorter
        // one wakes it within a phase of the new (under the lock, as `stop`
        // is, so that a device going down stays unarmed).
        if next.hbspan() < cur.hbspan() && st.is_up() {
            Ri2n::hb_timer(dev)
                .reduce_ms(next.hbspan().as_ms() as u32 / crate::ri2n_state::HB_PHASES as u32);
        }
        // The sweep plans with the new times from its next run.
        crate::ri2n_hb::kick_locked(dev, &mut st);
    }
    if next.one_switch() != cur.one_switch() {
        // The header's length changes, and with it the MTU.
        dev.data()
            .one_switch
            .store(next.one_switch(), Ordering::Relaxed);
        Ri2n::update_mtu(dev, rtnl);
    }
    Ok(())
}

/// The memory budgets a container may raise only up to the module's
/// defaults: beyond is the host administrator's to give.
const MEMORY: [Param; 2] = [Param::PeerMem, Param::HeldMem];

/// Whether the current task may take `next`'s memory budgets, `cur`'s
/// being the device's now: above the module's defaults (which only the
/// host sets) and higher than now needs `CAP_NET_ADMIN` in the initial user
/// namespace. Root of a container's user namespace administers its own
/// devices, within the memory the host allows each (every allocation is
/// charged to its memory cgroup as well). Else the budget refused.
pub(crate) fn within_memory_allowed(
    cur: &Params,
    next: &Params,
) -> core::result::Result<(), Param> {
    let ceiling = crate::module_defaults();
    for p in MEMORY {
        let v = next.get(p);
        if v > cur.get(p) && v > ceiling.get(p) && !crate::net::host_net_admin() {
            return Err(p);
        }
    }
    Ok(())
}

/// Why a budget was refused (for the log or an extended ack).
pub(crate) struct MemoryRefusal(pub(crate) Param);

impl fmt::Display for MemoryRefusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = self.0;
        write!(
            f,
            "{} above {} needs CAP_NET_ADMIN over the host",
            p.spec().name,
            crate::module_defaults().get(p)
        )
    }
}

/// A new peer table of `v` bytes, made here in process context before the
/// lock is taken; the device is down (no transmit runs).
fn set_peer_mem(dev: &Ri2nDev, v: u32) -> Result {
    let new = crate::ri2n_state::NewTable::new(v as usize)?;
    let mut garbage = SkbList::new();
    let (r, old) = {
        let mut st = dev.data().lock_state();
        let r = st.set_peer_mem(v, new, &mut garbage);
        dev.data()
            .slots
            .store(st.slots_ptr().cast_mut(), Ordering::Release);
        crate::ri2n_slave::tell_changes(dev, &mut st);
        r
    };
    // The old table (or the unused new one) is freed here, unlocked: a
    // straggler that read the old slots is done after a grace period.
    drop(garbage);
    crate::net::synchronize_net();
    drop(old);
    r
}
