// SPDX-License-Identifier: GPL-2.0

//! Slaves: enslaving a NIC (`ip link set eth0 master ri2n0`, or
//! `slaves=` at load), releasing it (`nomaster`, its unregistration, or
//! ri2n0's deletion), and what the slaves' own events mean for ri2n0.
//!
//! A slave is owned as bonding and team own theirs: an rx_handler takes
//! its frames and it is linked below ri2n0 as a master's lower device, so
//! no bond, bridge or team can take it while we have it. Everything
//! enslaving changes on the NIC is recorded and undone on release: our
//! MAC in its unicast filter, all-multicast, promiscuity (while ri2n0 is
//! promiscuous), ri2n0's secondary addresses, and up if we opened it.
//!
//! Slave carrier loss is also seen by transmit, which leaves the link out
//! and wakes the sweep, and polled by the sweep (ri2n_hb.rs), since the
//! notifier hears of it only when linkwatch gets to it; carrier back is
//! taken from the notifier alone, because linkwatch reactivates the
//! slave's qdisc first, and a probe sent before would be dropped.

use crate::net::device::{AddrListLocked, Device, ExtAck, NetDevice, Rtnl, IFF_PROMISC};
use crate::net::notifier::{Event, Handler, Verdict};
use crate::net::{Mac, MacFmt};
use crate::proto::header::MAX_HEADER_LEN;
use crate::proto::MAX_LINKS;
use crate::ri2n_dev::{Ri2n, Ri2nDev};
use crate::ri2n_state::{log_carrier, Slave, State};
use kernel::prelude::*;

/// Fewest slaves `slaves=` takes: a device made at load bonds links. One
/// made with `ip link add` may have any number, and its slaves may be
/// released down to none, as a bond's: one left is the degraded state a
/// failed link already gives, and none, a device without carrier.
pub(crate) const MIN_SLAVES: usize = 2;

/// Why a NIC cannot be a slave, if it cannot: one message for the log
/// and for `ip`.
fn refusal(dev: &Ri2nDev, rtnl: &Rtnl, port: &Device) -> Option<(Error, &'static CStr)> {
    if port.as_raw() == dev.as_raw() {
        return Some((EINVAL, c"a device cannot be its own slave"));
    }
    if NetDevice::<Ri2n>::of(port).is_some() {
        return Some((EINVAL, c"a ri2n device cannot be a slave"));
    }
    if port.is_loopback() || !port.is_ether() {
        return Some((EINVAL, c"slaves must be Ethernet devices"));
    }
    if !port.same_netns(dev) {
        return Some((EINVAL, c"slave and device must be in one network namespace"));
    }
    if port.master(rtnl).is_some() || port.rx_handler_busy(rtnl) {
        return Some((
            EBUSY,
            c"the device is already in use (a bond, bridge, team, macvlan or ri2n port)",
        ));
    }
    if port.mtu() < min_slave_mtu() {
        return Some((EINVAL, c"the slave's MTU is too small for the RI2N header"));
    }
    None
}

/// Opens `port` if it is down and attaches it to `dev` as its lower
/// device, with our address, all multicast and (if `dev` is promiscuous)
/// our promiscuity on it; undoes it all on failure. Returns whether it
/// opened the port and whether it made it promiscuous.
fn take_port(dev: &Ri2nDev, rtnl: &Rtnl, port: &Device, extack: &ExtAck) -> Result<(bool, bool)> {
    let mac = dev.addr();
    let opened = !port.running();
    if opened {
        port.open(rtnl)?;
    }
    let undo_open = |r: Error| {
        if opened {
            port.close(rtnl);
        }
        r
    };
    port.uc_add(rtnl, &mac).map_err(undo_open)?;
    if let Err(e) = port.set_allmulti(rtnl, 1) {
        let _ = port.uc_del(rtnl, &mac);
        return Err(undo_open(e));
    }
    let promisc = dev.flags() & IFF_PROMISC != 0;
    if promisc {
        if let Err(e) = port.set_promiscuity(rtnl, 1) {
            let _ = port.set_allmulti(rtnl, -1);
            let _ = port.uc_del(rtnl, &mac);
            return Err(undo_open(e));
        }
    }
    if let Err(e) = dev.attach_port(rtnl, port, extack) {
        if promisc {
            let _ = port.set_promiscuity(rtnl, -1);
        }
        let _ = port.set_allmulti(rtnl, -1);
        let _ = port.uc_del(rtnl, &mac);
        pr_err!("{}: cannot enslave {}: {:?}\n", dev.name(), port.name(), e);
        return Err(undo_open(e));
    }
    Ok((opened, promisc))
}

/// `ndo_add_slave`: makes `port` a slave of `dev`.
pub(crate) fn enslave(dev: &Ri2nDev, rtnl: &Rtnl, port: &Device, extack: &ExtAck) -> Result {
    if let Some((err, msg)) = refusal(dev, rtnl, port) {
        extack.set_msg(msg);
        pr_err!(
            "{}: cannot enslave {}: {}\n",
            dev.name(),
            port.name(),
            msg.to_str().unwrap_or("?")
        );
        return Err(err);
    }
    let Some(link) = dev.data().lock_state().free_link() else {
        extack.set_msg(c"at most 8 slaves");
        pr_err!(
            "{}: cannot enslave {}: at most {} slaves\n",
            dev.name(),
            port.name(),
            MAX_LINKS
        );
        return Err(EINVAL);
    };
    if !dev.data().lock_state().choose_mac() {
        // The first slave gives the device its lasting address.
        let stable = stable_mac(port);
        if let Err(e) = dev.set_mac(rtnl, &stable) {
            pr_warn!("{}: keeps a random MAC address: {:?}\n", dev.name(), e);
        }
    }
    let (opened, promisc) = take_port(dev, rtnl, port, extack)?;
    if dev.running() {
        port.sync_addrs_from_unlocked(rtnl, dev);
    }
    let mut name = [0u8; 16];
    let ifname = port.name();
    let n = ifname.as_bytes();
    name[..n.len().min(15)].copy_from_slice(&n[..n.len().min(15)]);
    let carrier = port.running() && port.carrier_ok();
    // tx_gso: the slave segments our GSO packets in software (the shim is
    // no header its hardware knows).
    let gso_off = if crate::tx_gso() {
        port.hw_gso_off(rtnl)
    } else {
        0
    };
    // The drainer finds the slave before any frame can be queued for it.
    dev.data().txq[link].reset_count();
    dev.data().txq[link].slave.set(rtnl, Some(port.get()));
    dev.data().lock_state().add_slave(
        link,
        Slave {
            dev: port.get(),
            name,
            opened,
            promisc,
            gso_off,
        },
        carrier,
    );
    Ri2n::update_mtu(dev, rtnl);
    Ri2n::update_carrier(dev);
    crate::ri2n_hb::kick(dev);
    tell_all(dev);
    pr_info!(
        "{}: link {}: {} enslaved (carrier {})\n",
        dev.name(),
        link,
        port.name(),
        if carrier { "up" } else { "down" }
    );
    Ok(())
}

/// Why a slave is released.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Release {
    /// On request (`ndo_del_slave`).
    Asked,
    /// The slave goes away (unregistered, or to another namespace).
    Gone,
    /// ri2n0 is being deleted (`ndo_uninit`, after `NETDEV_UNREGISTER`):
    /// nothing of ri2n0's own changes, neither its MTU nor its carrier,
    /// for IPv4 and IPv6 would rebuild their state of a dying device and
    /// hold its references up.
    Teardown,
}

/// Releases slave `port` of `dev`, for the reason `why`.
pub(crate) fn release(dev: &Ri2nDev, rtnl: &Rtnl, port: &Device, why: Release) -> Result {
    let (slave, left) = {
        let mut st = dev.data().lock_state();
        let Some(link) = st.link_of(port) else {
            drop(st);
            pr_err!("{}: {} is not a slave\n", dev.name(), port.name());
            return Err(EINVAL);
        };
        let slave = st.remove_slave(link).map(|s| (link, s));
        (slave, st.nslaves())
    };
    let Some((link, slave)) = slave else {
        return Ok(());
    };
    // No frame is queued for it any more; once every drainer let go of it
    // (a grace period), what is left in its queue goes.
    let q = &dev.data().txq[link];
    q.slave.set(rtnl, None);
    drop(q.flush());
    // No more frames reach our handler after this, and none is running.
    dev.detach_port(rtnl, port);
    give_back(dev, rtnl, &slave);
    if why != Release::Teardown {
        Ri2n::update_mtu(dev, rtnl);
        Ri2n::update_carrier(dev);
        crate::ri2n_hb::kick(dev);
        Ri2n::events_work(dev).queue_highpri();
    }
    pr_info!(
        "{}: link {}: slave released{}\n",
        dev.name(),
        slave.name(),
        if matches!(why, Release::Gone) {
            " (it went away)"
        } else {
            ""
        }
    );
    if why != Release::Teardown && left < 2 {
        let what = if left == 1 {
            "one slave left: no link to fail over to"
        } else {
            "no slave left: no carrier until one is added"
        };
        pr_warn!("{}: {}\n", dev.name(), what);
    }
    Ok(())
}

/// Undoes what enslaving changed on the slave. The filter entries go
/// first: the all-multicast change after them runs the slave's deferred rx
/// mode update at once, while it is still up, so a slave that had to go
/// promiscuous for our address (no unicast filter) leaves that mode too.
fn give_back(dev: &Ri2nDev, rtnl: &Rtnl, slave: &Slave) {
    let port = &*slave.dev;
    // Whether or not ri2n0 is up: it syncs only while up, but a release
    // after it went down must still take its addresses back.
    port.unsync_addrs_from(rtnl, dev);
    let _ = port.uc_del(rtnl, &dev.addr());
    if slave.promisc {
        let _ = port.set_promiscuity(rtnl, -1);
    }
    let _ = port.set_allmulti(rtnl, -1);
    if slave.gso_off != 0 {
        // Our whole GSO packets may still wait in its qdisc, and its
        // hardware would take their RI2N header for IP's: segmentation
        // comes back once they left (at line rate) and a grace period
        // passed (a qdisc dequeues a packet before validate_xmit_skb cuts
        // it, BH disabled). A queue that does not drain within 100 ms (a
        // stopped ring, a slow shaper) keeps it off, said in the log.
        if port.wait_qdiscs_empty(rtnl, 100) {
            crate::net::synchronize_net();
            port.restore_features(rtnl, slave.gso_off);
        } else {
            pr_warn!(
                "{}: {}'s queue did not drain; its segmentation offloads stay off (ethtool -K {} tso on)\n",
                dev.name(), port.name(), port.name()
            );
        }
    }
    if slave.opened {
        port.close(rtnl);
    }
}

/// ri2n0 went down: the addresses it synced to its slaves' filters while
/// up leave them (`set_rx_mode` syncs them again at the next up), as
/// bonding's `bond_close` does. The core empties ri2n0's lists before
/// `ndo_uninit` when it is deleted, so a release then would find nothing
/// to take back.
pub(crate) fn unsync_all(dev: &Ri2nDev, rtnl: &Rtnl) {
    let refs = dev.data().lock_state().slave_refs();
    for port in refs.iter().flatten() {
        port.unsync_addrs_from(rtnl, dev);
    }
}

/// Releases every slave (ri2n0 is being deleted).
pub(crate) fn release_all(dev: &Ri2nDev, rtnl: &Rtnl) {
    let refs = dev.data().lock_state().slave_refs();
    for port in refs.iter().flatten() {
        let _ = release(dev, rtnl, port, Release::Teardown);
    }
}

/// The address a device takes from its first slave, the same across
/// reloads and reboots, so that a node that restarts is reachable at once
/// under the address its peers' neighbour tables hold (bonding takes its
/// first slave's address for the same reason). Derived from the slave's
/// permanent address (its current one if it has none), mixed so that it is
/// not the slave's own, and locally administered.
fn stable_mac(port: &Device) -> Mac {
    let mut base = port.perm_addr();
    if base == [0; 6] {
        base = port.addr();
    }
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in base {
        h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
    }
    let b = h.to_be_bytes();
    let mut m: Mac = [b[2], b[3], b[4], b[5], b[6], b[7]];
    m[0] = (m[0] | 0x02) & !0x01;
    m
}

/// `ndo_set_mac_address`: `addr` must be a unicast address; the slaves'
/// filters move to it, all or none. Peers are told (gratuitous ARP,
/// unsolicited NA) once the core has set it.
pub(crate) fn move_mac(dev: &Ri2nDev, rtnl: &Rtnl, addr: &Mac) -> Result {
    if addr[0] & 1 != 0 || *addr == [0; 6] {
        pr_err!(
            "{}: {} is not a unicast address\n",
            dev.name(),
            MacFmt(addr)
        );
        return Err(EADDRNOTAVAIL);
    }
    dev.data().lock_state().choose_mac();
    let old = dev.addr();
    let refs = dev.data().lock_state().slave_refs();
    for (i, s) in refs.iter().enumerate() {
        let Some(s) = s else { continue };
        if let Err(e) = s.uc_add(rtnl, addr) {
            for t in refs[..i].iter().flatten() {
                let _ = t.uc_del(rtnl, addr);
            }
            return Err(e);
        }
    }
    for s in refs.iter().flatten() {
        // Best effort: a stale entry only costs a filter slot.
        let _ = s.uc_del(rtnl, &old);
    }
    Ok(())
}

/// `ndo_change_rx_flags`: ri2n0's promiscuity reaches the slaves (a bridge
/// over ri2n0 needs it). All-multicast is always on for slaves.
pub(crate) fn change_rx_flags(dev: &Ri2nDev, rtnl: &Rtnl, change: u32) {
    if change & IFF_PROMISC == 0 {
        return;
    }
    let on = dev.flags() & IFF_PROMISC != 0;
    let refs = dev.data().lock_state().slave_refs();
    for (l, s) in refs.iter().enumerate() {
        let Some(s) = s else { continue };
        // RTNL keeps the slave ours; the count changes without our lock,
        // and is recorded only once it did.
        if dev.data().lock_state().slave_promisc(l) != on
            && s.set_promiscuity(rtnl, if on { 1 } else { -1 }).is_ok()
        {
            dev.data().lock_state().set_slave_promisc(l, on);
        }
    }
}

/// `ndo_set_rx_mode`: ri2n0's secondary unicast and multicast addresses
/// (macvlan, IPv6 multicast) go to every slave. Under ri2n0's address lock.
pub(crate) fn sync_rx_mode(dev: &Ri2nDev, locked: &AddrListLocked<'_>) {
    // Not once going down (`unsync_all` took the addresses back).
    if !dev.running() {
        return;
    }
    let refs = dev.data().lock_state().slave_refs();
    for s in refs.iter().flatten() {
        s.sync_addrs_from(locked);
    }
}

/// The netdev notifier: events of our slaves and of our own devices.
pub(crate) struct Events;

impl Handler for Events {
    fn event(&self, rtnl: &Rtnl, event: Event, dev: &Device) -> Verdict {
        if let Some(ours) = NetDevice::<Ri2n>::of(dev) {
            match event {
                // Neighbours learn the address at once (gratuitous ARP,
                // unsolicited NA), not when their entries time out.
                Event::Up | Event::ChangeAddr if ours.running() => ours.notify_peers_locked(rtnl),
                _ => {}
            }
            return Verdict::Done;
        }
        let Some(master) = NetDevice::<Ri2n>::master_of(rtnl, dev) else {
            return Verdict::Done;
        };
        match event {
            // A slave stays Ethernet, with room for the RI2N header.
            Event::PreTypeChange => {
                pr_err!(
                    "{}: {} cannot change type while a slave\n",
                    master.name(),
                    dev.name()
                );
                return Verdict::Veto;
            }
            // Judged once set, the only time the kernel tells the new MTU:
            // the veto sets the old one back.
            Event::ChangeMtu if dev.mtu() < min_slave_mtu() => {
                pr_err!(
                    "{}: {}: mtu {} leaves no room for the RI2N header\n",
                    master.name(),
                    dev.name(),
                    dev.mtu()
                );
                return Verdict::Veto;
            }
            Event::Up | Event::Down | Event::Change => {
                let up = dev.running() && dev.carrier_ok();
                let changed = {
                    let mut st = master.data().lock_state();
                    let Some(l) = st.link_of(dev) else {
                        return Verdict::Done;
                    };
                    st.carrier_changed_to(l, up).then(|| st.carrier())
                };
                if let Some(carrier) = changed {
                    log_carrier(&master.name(), &dev.name(), up, carrier);
                    Ri2n::update_carrier(master);
                    crate::ri2n_hb::kick(master);
                }
                // Also when the sweep saw the carrier change first: the
                // work tells only what changed since it last told.
                tell_all(master);
            }
            Event::ChangeMtu => Ri2n::update_mtu(master, rtnl),
            // Unregistered, or moved to another namespace: it is no longer
            // ours to use.
            Event::Unregister => {
                let _ = release(master, rtnl, dev, Release::Gone);
            }
            _ => {}
        }
        Verdict::Done
    }
}

/// `ports_work`: tells the stack each slave's lower state where it changed
/// (`netdev_lower_state_changed`, as bonding does for its ports), so that
/// `ip monitor link` shows a port going bad and coming back: up with
/// carrier, transmit enabled while no peer has its link out of use.
pub(crate) fn tell_ports(dev: &Ri2nDev) {
    // RTNL before the state lock, as configuration takes them; tried, as
    // bonding's works do, so that nothing that holds RTNL need wait for
    // this work. Run after ri2n0's unregistration, it finds no slave.
    let Some(rtnl) = Rtnl::try_lock() else {
        Ri2n::ports_work(dev).queue_ms(1);
        return;
    };
    let ports = dev.data().lock_state().ports_to_tell();
    for (port, up, tx) in ports.iter().flatten() {
        port.lower_state_changed(&rtnl, *up, *tx);
    }
}

/// Queues [`tell_ports`] if an endpoint or a carrier changed state since
/// it last ran, and the events work if transitions wait to be sent; `st`
/// is the state, locked.
pub(crate) fn tell_changes(dev: &Ri2nDev, st: &mut State) {
    if st.take_ports_changed() {
        Ri2n::ports_work(dev).queue_ms(0);
    }
    if st.events_pending() {
        Ri2n::events_work(dev).queue_highpri();
    }
}

/// Queues [`tell_ports`] and the events work, after a change made outside
/// the data path (a slave added, a carrier event).
pub(crate) fn tell_all(dev: &Ri2nDev) {
    Ri2n::ports_work(dev).queue_ms(0);
    Ri2n::events_work(dev).queue_highpri();
}

/// The smallest slave MTU that leaves room for an IPv4 packet (under a
/// sealed one-switch header, the longest, so that a key or the mode can
/// always be set).
pub(crate) const fn min_slave_mtu() -> u32 {
    68 + MAX_HEADER_LEN as u32
}
