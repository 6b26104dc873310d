// SPDX-License-Identifier: GPL-2.0

//! ri2n: RI2N/DRV, several Ethernet links bonded into one fast,
//! fault-tolerant link (Okamoto et al., IPSJ 2008).
//!
//! `ip link add ri2n0 type ri2n` and `ip link set eth0 master ri2n0` make a
//! device over slave NICs (`insmod ri2n.ko slaves=eth0,eth1` still makes
//! `ri2n0`, the paper's way). On transmit each packet gets an 8-byte RI2N
//! header and is spread, per peer, over the links that work
//! (`ri2n_tx.rs`); on receive each peer's packets are reordered and handed
//! up as if the device had received them (`ri2n_rx.rs`); heartbeats and
//! counters find dead links and take them back when they heal
//! (`ri2n_hb.rs`). Every decision is made by the kernel-free protocol core
//! (`core/`); the kernel is reached through the net abstraction (`net/`).
//!
//! This file: the module, its parameters (the defaults of new devices),
//! and the registrations.

use kernel::prelude::*;

// The net abstraction is a library: public, so that the compiler checks
// its API as a library's (documented, every private item used).
pub mod net;
// The protocol core is the userspace crate's API too (tools/ri2n-core
// mounts the same files): its items are `pub` for that crate, and some
// only that crate calls. Private here, so that the module's own calls
// into it inline as they would into any module's private functions (as
// a public module, its single-call functions keep a symbol and cost a
// 64 B round trip some 50 instructions, `make insns`).
/// The net abstraction's compile_fail tests (scripts/api-misuse.sh).
#[cfg(ri2n_api_misuse)]
#[path = "tests/api/misuse.rs"]
mod api_misuse;
#[allow(dead_code, unreachable_pub)]
#[path = "core/mod.rs"]
mod proto;
mod ri2n_conf;
mod ri2n_dev;
mod ri2n_genl;
mod ri2n_hb;
mod ri2n_peer;
mod ri2n_proc;
mod ri2n_rx;
mod ri2n_slave;
mod ri2n_state;
mod ri2n_tx;
mod ri2n_txq;

use net::device::{Device, NetDevice, Registration, Rtnl};
use proto::params::{Param, Params, NPARAMS};
use proto::MAX_LINKS;
use ri2n_dev::Ri2n;

/// The module and its device parameters, each parameter declared once: its
/// name (module parameter and sysfs file), its [`Param`] (whose `SPECS`
/// entry gives its default, range and unit) and its `modinfo` line, in
/// `Param::ALL` order (checked at build time). The module parameters are
/// the defaults of new devices; each device has its own, in
/// /sys/class/net/DEV/ri2n/.
macro_rules! ri2n_module {
    ($($name:ident = $param:ident: $desc:tt,)*) => {
        module! {
            type: Ri2nModule,
            name: "ri2n",
            authors: ["ri2n developers"],
            description: "RI2N/DRV: striped, reordered, fault-tolerant multi-link Ethernet",
            license: "GPL",
            alias: ["rtnl-link-ri2n", "net-pf-16-proto-16-family-ri2n"],
            params: {
                $($name: u32 {
                    default: crate::proto::params::SPECS[crate::proto::params::Param::$param as usize].default,
                    description: $desc,
                },)*
                rx_gro: u32 { default: 1, description: "1: the slaves' GRO merges RI2N frames that follow one another on a link (a peer's tx_gso packets, or all of its frames on its one link), and ri2n takes each merged packet whole; 0: frame by frame", },
                stripe_segs: u32 { default: 8, description: "with tx_gso=0: a GSO packet of at most this many segments (1..64; more act as 64) goes whole to one link, a longer one segment by segment over every link (default 8; 1: every segment to the next link, the paper's)", },
                tx_gso: u32 { default: 1, description: "1 (default): a GSO packet goes whole to one slave, links chosen by bytes, and the slave segments it (hardware segmentation off on the slaves); 0: ri2n segments it and stripes the segments (stripe_segs)", },
            },
        }

        // Each name is its parameter's, in `Param::ALL` order.
        const _: () = {
            let mut i = 0;
            $(
                assert!(Param::ALL[i] as usize == Param::$param as usize);
                assert!(proto::params::name_is(Param::$param, stringify!($name)));
                i += 1;
            )*
            assert!(i == NPARAMS);
        };

        /// The module parameters' values, in `Param::ALL` order.
        fn module_values() -> [u32; NPARAMS] {
            [$(module_parameters::$name.value(),)*]
        }

        /// The sysfs file names, in `Param::ALL` order.
        pub(crate) const PARAM_FILES: [&kernel::str::CStr; NPARAMS] =
            [$(kernel::c_str!(stringify!($name)),)*];
    };
}

ri2n_module! {
    ft_hthresh = FtHthresh: "FT_HTHRESH: judge a peer when a counter exceeds this (packets)",
    ft_lthresh = FtLthresh: "FT_LTHRESH: fail endpoints counting at most this (packets)",
    slow_tout = SlowTout: "SLOW_TOUT: never fail an endpoint that received within this (ms)",
    hbspan = Hbspan: "HBSPAN: heartbeat period (ms)",
    hbweight = Hbweight: "HBWEIGHT: counter weight of a heartbeat (packets)",
    fast_tout = FastTout: "FAST_TOUT: longest a packet waits for a gap (ms)",
    maxbuf = Maxbuf: "MAXBUF: most packets held per peer (max 511)",
    peer_mem = PeerMem: "bytes per device for peers: state, table, reorder buffers (16 MiB: 8026 peers)",
    held_mem = HeldMem: "bytes of packets all windows of a device may hold",
    loss_thresh = LossThresh: "a link losing clearly more than this (0.1 %) of our frames, and than the other links, goes out of use; 0: never; default 5 (0.5 %)",
    one_switch = OneSwitch: "1: all links through one switch; frames leave each slave with its own MAC (default 0: a switch per link, the paper's wire)",
}

/// `modinfo ri2n`'s version line, as C's `MODULE_VERSION` writes it
/// (`module!` has no field for it): the tools' version, which a unit test
/// checks it against (tools/ri2n-core/tests/misc.rs).
#[cfg(MODULE)]
#[link_section = ".modinfo"]
#[used(compiler)]
static MODULE_VERSION: [u8; 14] = *b"version=0.1.0\0";

crate::charp_param!(
    slaves,
    "slave NICs of ri2n0, 2 to 8, e.g. eth0,eth1 (without it, no device is made)"
);

/// The module parameters as a validated set: the defaults of new devices
/// (each device has its own, in /sys/class/net/DEV/ri2n/).
fn params_from_module() -> core::result::Result<Params, proto::params::ParamError> {
    let v = module_values();
    let mut pairs = [(Param::FtHthresh, 0u32); NPARAMS];
    for (i, p) in Param::ALL.iter().enumerate() {
        pairs[i] = (*p, v[i]);
    }
    Params::from_values(&pairs)
}

/// `tx_gso`: whole GSO packets to the slaves, segmented there.
pub(crate) fn tx_gso() -> bool {
    module_parameters::tx_gso.value() != 0
}

/// `stripe_segs`: the most segments of a GSO packet kept on one link.
pub(crate) fn stripe_segs() -> u32 {
    module_parameters::stripe_segs.value()
}

/// `rx_gro`: the slaves' GRO merges RI2N frames.
pub(crate) fn rx_gro() -> bool {
    module_parameters::rx_gro.value() != 0
}

/// The defaults of a new device (checked valid at load).
pub(crate) fn module_defaults() -> Params {
    params_from_module().unwrap_or_default()
}

/// Checks the module parameters, naming the first one out of range.
fn check_params() -> Result {
    let v = module_values();
    for (i, p) in Param::ALL.iter().enumerate() {
        let spec = p.spec();
        if p.check(v[i]).is_err() {
            pr_err!(
                "{} must be {}..={} {}, not {}\n",
                spec.name,
                spec.min,
                spec.max,
                spec.unit,
                v[i]
            );
            return Err(EINVAL);
        }
    }
    params_from_module().map(|_| ()).map_err(|e| {
        pr_err!("invalid parameters: {}\n", e.reason());
        EINVAL
    })
}

/// `slaves=`: creates ri2n0 over the named NICs, all or nothing.
fn create_from_param(link: &Registration<Ri2n>) -> Result {
    let Some(arg) = slaves.get() else {
        return Ok(());
    };
    let arg = arg.to_str().map_err(|_| EINVAL)?;
    let mut names: KVec<&str> = KVec::new();
    for name in arg.split(',') {
        if names.len() == MAX_LINKS {
            pr_err!("at most {} slaves\n", MAX_LINKS);
            return Err(EINVAL);
        }
        if name.is_empty() || name.len() >= 16 {
            pr_err!("slave name '{}' is not an interface name\n", name);
            return Err(EINVAL);
        }
        if names.contains(&name) {
            pr_err!("slave {} listed twice\n", name);
            return Err(EINVAL);
        }
        names.push(name, GFP_KERNEL)?;
    }
    if names.len() < ri2n_slave::MIN_SLAVES {
        pr_err!(
            "at least {} slaves are needed, {} given\n",
            ri2n_slave::MIN_SLAVES,
            names.len()
        );
        return Err(EINVAL);
    }
    let rtnl = Rtnl::lock();
    let mut ports = KVec::new();
    for name in names.iter() {
        let mut buf = [0u8; 16];
        buf[..name.len()].copy_from_slice(name.as_bytes());
        let cname = CStr::from_bytes_with_nul(&buf[..=name.len()]).map_err(|_| EINVAL)?;
        let Some(port) = Device::by_name(&rtnl, cname) else {
            pr_err!("slave {}: no such device\n", name);
            return Err(ENODEV);
        };
        ports.push(port, GFP_KERNEL)?;
    }
    let dev = NetDevice::<Ri2n>::create(link, &rtnl)?;
    let none = net::device::ExtAck::none();
    for port in ports.iter() {
        if let Err(e) = ri2n_slave::enslave(dev, &rtnl, port, &none) {
            pr_err!(
                "slave {}: not enslaved, {} not created\n",
                port.name(),
                dev.name()
            );
            dev.delete(&rtnl);
            return Err(e);
        }
    }
    Ok(())
}

struct Ri2nModule {
    /// Dropped first: deletes every ri2n device (releasing their slaves),
    /// so the notifier, dropped next, replays nothing that is ours.
    link: Pin<KBox<Registration<Ri2n>>>,
    /// The generic netlink family, after the devices, whose events work
    /// sends through it.
    _genl: net::genl::Registration<ri2n_genl::Ri2nGenl>,
    _events: Pin<KBox<net::notifier::Registration<ri2n_slave::Events>>>,
    /// Late segmentation of RI2N GSO packets on the slaves (`tx_gso`) and
    /// their GRO (`rx_gro`).
    _offload: Option<Pin<KBox<net::offload::Registration<ri2n_tx::Offload>>>>,
}

impl kernel::Module for Ri2nModule {
    fn init(module: &'static ThisModule) -> Result<Self> {
        check_params()?;
        // Only what is asked for: the offload list is every device's.
        let offload = if tx_gso() || rx_gro() {
            let reg = net::offload::Registration::<ri2n_tx::Offload>::new(tx_gso(), rx_gro());
            Some(KBox::pin_init(reg, GFP_KERNEL)?)
        } else {
            None
        };
        // The notifier before the link type: a slave enslaved right away
        // must be released when it goes.
        let events = KBox::pin_init(
            net::notifier::Registration::new(ri2n_slave::Events),
            GFP_KERNEL,
        )?;
        let link = KBox::pin_init(Registration::<Ri2n>::new(), GFP_KERNEL)?;
        create_from_param(&link)?;
        // Last, as WireGuard's: once it is registered, a request may come
        // (and hold the module), so nothing after it may fail.
        let genl = ri2n_genl::FAMILY.register(module)?;
        Ok(Ri2nModule {
            link,
            _genl: genl,
            _events: events,
            _offload: offload,
        })
    }
}

impl Drop for Ri2nModule {
    fn drop(&mut self) {
        // Fields drop in order: devices (and their procfs files), then
        // the generic netlink family, notifier and offloads.
        let _ = &self.link;
        pr_info!("unloaded\n");
    }
}
