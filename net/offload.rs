// SPDX-License-Identifier: GPL-2.0

//! Late segmentation of a GSO packet that carries a shim between its
//! Ethernet header and its network header (as `net/mpls/mpls_gso.c` does
//! for MPLS): the upper device hands a whole GSO packet to a lower one, and
//! the lower one's software GSO cuts it, calling back here for the shim's
//! ethertype. The shim is taken off, the inner packet segmented as the
//! stack would, and each segment gets the shim back, which the driver then
//! fixes up per segment (a sequence number, say) through [`ShimOffload`].
//!
//! The sender sets the packet's network header at the shim (see
//! [`super::skb::Skb::mark_shim`]); a lower device must not segment the
//! packet in hardware, which would take the shim for the network header:
//! the driver turns hardware segmentation off on its lower devices.
//!
//! The receive side is GRO (as `net/8021q/vlan_core.c` does for VLAN tags):
//! a lower device's GRO merges frames that carry the shim when the driver
//! says one continues another ([`ShimOffload::follows`]) and the inner
//! protocol's GRO merges their inner packets. The merged packet keeps the
//! first frame's shim and counts its frames (`gso_segs`).
//!
//! Only frames on the driver's own lower devices are merged (the offload
//! list is every device's: a bridge forwarding others' frames must not
//! merge them), not inside a tunnel's GRO (the MAC header is the outer
//! one; the tunnel device's own GRO sees the frame again), only TCP or
//! UDP inside IP (ESP's GRO, say, would take the packet away from the
//! driver), and no short frame ([`SHORT_FRAME`]: a small message or an
//! ACK goes up at once).
//!
//! GRO keeps the order of each inner flow only; the driver needs the order
//! of all frames from one sender on one lower device (a link's order). So
//! at most one packet from a source address is held per lower device: a
//! frame from the same source that does not continue it sends it up first.
//! This assumes that the lower device hashes all frames from one source
//! alike (GRO looks only at the packets of the frame's hash bucket), as a
//! NIC that cannot parse the shim does, and that GRO stays on while they
//! flow (turning it off, or attaching XDP, lets frames pass a held one).

use super::bindings;
use super::device::NetDevice;
use super::rcu::InRcu;
use super::skb::headers;
use core::marker::PhantomData;
use core::sync::atomic::{AtomicI64, Ordering};
use kernel::prelude::*;
use kernel::types::Opaque;

/// What a driver says about its shim.
pub trait ShimOffload: 'static {
    /// The driver whose lower devices' frames GRO may merge.
    type Upper: super::device::Driver;
    /// The shim's ethertype.
    const ETHERTYPE: u16;
    /// The shim's length, from its first bytes (`shim`, as many as
    /// [`ShimOffload::MIN_LEN`] at least), and the inner packet's
    /// ethertype, IPv4 or IPv6 only; `None` if it is not to be segmented
    /// here.
    fn parse(shim: &[u8]) -> Option<(usize, u16)>;
    /// Bytes [`ShimOffload::parse`] needs.
    const MIN_LEN: usize;
    /// Fixes the shim of segment `index` (0 for the first) of a packet
    /// sent to `addrs` (Ethernet destination and source) on a lower
    /// device of `upper` (`None`: a device that is not ours segments it).
    /// False if it cannot: the whole packet is dropped. Called in the RCU
    /// read-side section `rcu` that GSO holds.
    fn fix(
        upper: Option<&NetDevice<Self::Upper>>,
        rcu: &InRcu,
        index: u32,
        addrs: &[u8; 12],
        shim: &mut [u8],
    ) -> bool;
    /// GRO: whether a frame to `addrs` (Ethernet destination and source,
    /// the held packet's too) with `shim`, received on a lower device of
    /// `upper`, continues the held packet whose first frame had `held` and
    /// which merged `count` frames. `shim` was accepted by
    /// [`ShimOffload::parse`]; `held` is as many bytes of the held packet,
    /// which only a shim that [`ShimOffload::parse`] takes alike (length
    /// and inner protocol) may continue. Called in the RCU read-side
    /// section `rcu` that GRO holds.
    fn follows(
        upper: &NetDevice<Self::Upper>,
        rcu: &InRcu,
        addrs: &[u8; 12],
        held: &[u8],
        shim: &[u8],
        count: u32,
    ) -> bool;
    /// GRO: the most frames one merged packet may take.
    const MAX_MERGE: u32;
}

/// A registered packet offload for `T::ETHERTYPE`.
///
/// # Invariants
///
/// `offload` is on the kernel's offload list from `new` until drop.
#[pin_data(PinnedDrop)]
pub struct Registration<T: ShimOffload> {
    #[pin]
    offload: Opaque<bindings::packet_offload>,
    _t: core::marker::PhantomData<T>,
}

// SAFETY: The kernel reads the registration under RCU from any CPU and
// writes only its list links, under its offload lock (`Opaque`).
unsafe impl<T: ShimOffload> Send for Registration<T> {}
// SAFETY: As above.
unsafe impl<T: ShimOffload> Sync for Registration<T> {}

impl<T: ShimOffload> Registration<T> {
    /// Registers the offload (module init): late segmentation (`gso`),
    /// GRO (`gro`), or both.
    pub fn new(gso: bool, gro: bool) -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            offload <- Opaque::ffi_init(|slot: *mut bindings::packet_offload| {
                // SAFETY: `slot` is ours, pinned, and lives until drop,
                // which removes it from the list first.
                unsafe {
                    slot.write(bindings::packet_offload::default());
                    (*slot).type_ = T::ETHERTYPE.to_be();
                    (*slot).priority = 15;
                    if gso {
                        (*slot).callbacks.gso_segment = Some(gso_segment::<T>);
                    }
                    if gro {
                        (*slot).callbacks.gro_receive = Some(gro_receive::<T>);
                        (*slot).callbacks.gro_complete = Some(gro_complete::<T>);
                    }
                    bindings::dev_add_offload(slot);
                }
            }),
            _t: core::marker::PhantomData,
        })
    }
}

#[pinned_drop]
impl<T: ShimOffload> PinnedDrop for Registration<T> {
    fn drop(self: Pin<&mut Self>) {
        // Dropped once the driver's devices are gone, so no port is ours and
        // nothing more is merged; a merged packet GRO still holds must find
        // `gro_complete` here (without it, GRO warns and drops the packet):
        // wait until no former port can hold one.
        let left = HELD_UNTIL.load(Ordering::Relaxed) - super::ktime_ns() as i64;
        if left > 0 {
            kernel::time::delay::fsleep(kernel::time::Delta::from_nanos(left));
        }
        // SAFETY: Registered in `new`; dev_remove_offload waits for the
        // readers (synchronize_net) before we free it.
        unsafe { bindings::dev_remove_offload(self.offload.get()) };
    }
}

/// Until when (`ktime_get`, ns) a former port's GRO may still hold a
/// packet that [`gro_receive`] merged: a registration is dropped no sooner.
static HELD_UNTIL: AtomicI64 = AtomicI64::new(0);

/// Over a port's GRO hold: a jiffy (at HZ 100 and more), in which a held
/// packet's poll may arm its timer again, and that poll's softirq.
const HOLD_MARGIN_NS: u64 = 20_000_000;

/// The longest a registration waits for a former port's GRO (module
/// exit): a port with a longer timeout may have a merged packet dropped,
/// with a warning from GRO.
const HOLD_MAX_NS: u64 = 10_000_000_000;

/// `port` has stopped taking the driver's frames (its rx_handler is gone,
/// so [`gro_receive`] merges no more of them): what its GRO holds of ours
/// goes up within its hold ([`super::device::Device::gro_hold`]).
pub(super) fn port_left(port: &super::device::Device) {
    let (hold, holds) = port.gro_hold();
    // A closed port's NAPI (napi_disable) keeps what its GRO held, with
    // no timer, until it is opened again: no wait bounds that.
    if holds && !port.running() {
        pr_warn!(
            "{}: down with a GRO flush timeout: a packet its GRO holds of ours may outlive the module\n",
            port.name()
        );
    }
    if hold > HOLD_MAX_NS {
        pr_warn!(
            "{}: GRO holds packets up to {} ms; a module unload waits {} ms for them\n",
            port.name(),
            hold / 1_000_000,
            HOLD_MAX_NS / 1_000_000
        );
    }
    let until = super::ktime_ns() + hold.min(HOLD_MAX_NS) + HOLD_MARGIN_NS;
    HELD_UNTIL.fetch_max(until as i64, Ordering::Relaxed);
}

/// `gso_segment` for a shim (softirq or process context, under RCU):
/// `skb->data` is at the shim, after the Ethernet header and any VLAN tags
/// `skb_mac_gso_segment` pulled.
///
/// The offload list is global: a packet that reaches here may come from
/// anywhere (a packet socket, a guest through tap), not only from the
/// driver. So only TCP and UDP GSO packets from the local stack are taken
/// (not `SKB_GSO_DODGY`), and [`ShimOffload::parse`] names an IP inner
/// packet only: a shim inside a shim would recurse.
///
/// # Safety
///
/// Called by the kernel's GSO with a packet it owns for the call.
unsafe extern "C" fn gso_segment<T: ShimOffload>(
    skb: *mut bindings::sk_buff,
    features: bindings::netdev_features_t,
) -> *mut bindings::sk_buff {
    let einval: *mut bindings::sk_buff = EINVAL.to_ptr();
    // SAFETY: The kernel's skb, ours for the call. Header offsets are read
    // again after each call that may move the data (pskb_may_pull).
    unsafe {
        if (*super::skb::shinfo(skb)).gso_type & !bindings::skb_gso_tcp_udp() != 0 {
            return einval;
        }
        // What was pulled before us: Ethernet header and VLAN tags.
        let Some(mac) = super::skb::mac_header(skb) else {
            return einval;
        };
        let depth = (*skb).data.offset_from(mac);
        if !(14..=64).contains(&depth) || !bindings::pskb_may_pull(skb, T::MIN_LEN as u32) {
            return einval;
        }
        let depth = depth as u32;
        let shim = core::slice::from_raw_parts((*skb).data, T::MIN_LEN);
        let Some((hlen, inner)) = T::parse(shim) else {
            return einval;
        };
        if !bindings::pskb_may_pull(skb, hlen as u32) {
            return einval;
        }
        let mac_offset = (*headers(skb)).mac_header;
        let mac_len = (*skb).mac_len;
        let outer = (*headers(skb)).protocol;
        // The sender took this many numbers for the packet, one per segment.
        let reserved = u32::from(super::skb::gso_segs(skb));
        (*headers(skb)).protocol = inner.to_be();
        bindings::skb_pull(skb, hlen as u32);
        (*skb).mac_len = 0;
        super::skb::reset_mac_header(skb);
        // Each segment whole, in software: no lower GSO for the inner packet.
        let segs = bindings::skb_mac_gso_segment(skb, features & !bindings::netif_f_gso_mask());
        if segs.is_null() || kernel::error::from_err_ptr(segs).is_err() {
            bindings::skb_gso_error_unwind(skb, outer, hlen as i32, mac_offset, i32::from(mac_len));
            return if segs.is_null() { einval } else { segs };
        }
        // More segments than numbers would reuse the next packet's numbers
        // (the receiver would drop real data as duplicates), fewer would
        // leave a gap: the packet is dropped instead, a few numbers lost.
        let mut n = 0u32;
        let mut s = segs;
        while !s.is_null() {
            n += 1;
            s = (*s).__bindgen_anon_1.__bindgen_anon_1.next;
        }
        if n != reserved {
            bindings::kfree_skb_list_reason(
                segs,
                bindings::skb_drop_reason_SKB_DROP_REASON_NOT_SPECIFIED,
            );
            bindings::skb_gso_error_unwind(skb, outer, hlen as i32, mac_offset, i32::from(mac_len));
            return einval;
        }
        // Each segment's data is at its inner network header, with a
        // private copy of the outer headers before it (skb_segment copies
        // the tunnel header length from SKB_GSO_CB's mac_offset on).
        let outer_len = depth + hlen as u32;
        // The lower device is `skb->dev`; skb_mac_gso_segment holds the
        // RCU read lock around us.
        let rcu = InRcu::assume();
        let upper = NetDevice::<T::Upper>::of_port_raw(super::skb::dev_of(skb));
        let mut s = segs;
        let mut i = 0u32;
        let mut fixed = true;
        while !s.is_null() {
            (*s).mac_len = mac_len;
            (*headers(s)).protocol = outer;
            bindings::skb_push(s, outer_len);
            // skb_reset_mac_header and skb_set_network_header, without a
            // call each per segment.
            super::skb::reset_mac_header(s);
            (*headers(s)).network_header = (*headers(s)).mac_header.wrapping_add(depth as u16);
            let frame = core::slice::from_raw_parts_mut((*s).data, outer_len as usize);
            let (eth, shim) = frame.split_at_mut(depth as usize);
            let mut addrs = [0u8; 12];
            addrs.copy_from_slice(&eth[..12]);
            if !T::fix(upper, &rcu, i, &addrs, shim) {
                fixed = false;
                break;
            }
            i += 1;
            s = (*s).__bindgen_anon_1.__bindgen_anon_1.next;
        }
        if !fixed {
            bindings::kfree_skb_list_reason(
                segs,
                bindings::skb_drop_reason_SKB_DROP_REASON_NOT_SPECIFIED,
            );
            bindings::skb_gso_error_unwind(skb, outer, hlen as i32, mac_offset, i32::from(mac_len));
            return einval;
        }
        segs
    }
}

/// `gro_receive` for the shim (softirq, in a lower device's NAPI poll):
/// `skb` arrived with its data at the shim; `head` is its hash bucket's
/// held packets, each with `same_flow` set if its Ethernet header equals
/// the frame's. Returns a held packet to send up now, if any.
///
/// # Safety
///
/// Called by the kernel's GRO with a packet and a list it owns for the
/// call.
unsafe extern "C" fn gro_receive<T: ShimOffload>(
    head: *mut bindings::list_head,
    skb: *mut bindings::sk_buff,
) -> *mut bindings::sk_buff {
    // SAFETY: The kernel's skb and list, ours for the call, BH disabled
    // (`Gro`'s invariant holds for the frame and each held packet). A held
    // packet's headers are linear up to where its GRO stopped, past the
    // shim and the inner headers (gro_try_pull_from_frag0); a held packet
    // of the same source and device has the frame's Ethernet header
    // length, so its shim is at `data + off` too (VLAN's GRO reads the
    // same way).
    unsafe {
        let frame = Gro::new(skb);
        let port = super::skb::dev_of(skb);
        // dev_gro_receive holds the RCU read lock around us.
        let rcu = InRcu::assume();
        // Inside a tunnel (VXLAN, say) the MAC header is the outer one, not
        // the peer's: such a frame is merged, if at all, by the GRO of the
        // device that takes it out of the tunnel.
        let upper = if frame.encap_mark() {
            None
        } else {
            NetDevice::<T::Upper>::of_port_raw(port)
        };
        // Only a frame on our port is read: any device's frames of the
        // ethertype come here, and one that is not Ethernet need not have
        // a MAC header.
        let ours = upper.is_some() && frame.mac_header().is_some();
        let off = frame.offset();
        // A short frame is not merged: it goes up at once, sending a held
        // packet of its source first, without the inner protocol's GRO.
        let merges = ours && frame.len() > SHORT_FRAME + off;
        let (shim, parsed) = if merges {
            shim_of::<T>(frame, off)
        } else {
            (core::ptr::null(), None)
        };
        // Read after `shim_of`, which may pull the frame into a new head.
        let mut addrs = [0u8; 12];
        if let (true, Some(mac)) = (ours, frame.mac_header()) {
            addrs.copy_from_slice(core::slice::from_raw_parts(mac, 12));
        }
        let src = &addrs[6..];
        // The packet held from the same source on this device (at most one,
        // see the module's doc), and whether this frame continues it.
        let mut mine: *mut bindings::sk_buff = core::ptr::null_mut();
        let (protocol, vlan_all) = (frame.protocol(), frame.vlan_all());
        let mut node = (*head).next;
        while ours && node != head {
            // `list` is at the start of an sk_buff (asserted below).
            let p = Gro::new(node.cast::<bindings::sk_buff>());
            node = (*node).next;
            // Only a packet this function held: one of our ethertype on
            // the same VLAN. A plain IP packet from the same MAC (a peer's
            // slave sends both in one-switch mode) taken for it was sent
            // up in its place, leaving two of ours held, and the younger
            // went up first. (A tag in the frame, which the port left in,
            // makes both `protocol`s 802.1Q: the driver's frames are sent
            // untagged, and over a VLAN device GRO runs on the parent,
            // which is no port of ours.)
            let same_source = super::skb::dev_of(p.0) == port
                && p.protocol() == protocol
                && p.vlan_all() == vlan_all
                && p.mac_header()
                    .is_some_and(|m| core::slice::from_raw_parts(m.add(6), 6) == src);
            if !same_source {
                continue;
            }
            let next = match (parsed, upper) {
                (Some((hlen, _)), Some(upper)) if mine.is_null() && p.same_flow() => {
                    // `same_flow`: the held packet's Ethernet header is the
                    // frame's.
                    let held_count = p.count();
                    let held = core::slice::from_raw_parts((*p.0).data.add(off as usize), hlen);
                    held_count + frame.count() <= T::MAX_MERGE
                        && T::follows(
                            upper,
                            &rcu,
                            &addrs,
                            held,
                            core::slice::from_raw_parts(shim, hlen),
                            held_count,
                        )
                }
                _ => false,
            };
            if mine.is_null() {
                mine = p.0;
            }
            if !next {
                p.clear_same_flow();
            }
        }
        let mut pp: *mut bindings::sk_buff = core::ptr::null_mut();
        let mut flush = true;
        if let Some((hlen, inner)) = parsed {
            let ptype = bindings::gro_find_receive_by_type(inner.to_be());
            if let Some(receive) = ptype.as_ref().and_then(|p| p.callbacks.gro_receive) {
                frame.set_network_offset(off + hlen as u32);
                frame.pull(hlen as u32);
                frame.postpull_rcsum(shim, hlen as u32);
                pp = frame.call(receive, head);
                flush = false;
            }
        }
        // Not merged into the held packet: that goes up before this frame
        // (held anew, or sent up at once).
        if pp.is_null() && !mine.is_null() && (flush || !frame.same_flow()) {
            pp = mine;
        }
        frame.flush_final(pp, flush);
        pp
    }
}

/// Longest frame, from the shim on, that GRO passes up unmerged: a small
/// message or an ACK, which TCP's GRO would hold only if it carried data
/// without PSH (every `sendmsg` ends with PSH) and UDP's only for a socket
/// that asked for it (QUIC's datagrams are 1,200 bytes and more). Parsing
/// the shim and the inner IP and TCP headers for nothing cost a 64 B round
/// trip some 290 instructions at each node (`make insns`).
const SHORT_FRAME: u32 = 256;

/// Bytes of the inner IP header that name its transport protocol: no
/// more than the inner protocol's GRO asks for first (IPv4 20, IPv6 40).
/// GRO's `frag0` is not reset when a request pulls the packet into a new
/// head, so a later, shorter request would read the old one.
const INNER_PEEK: usize = 20;

// `gro_receive` walks GRO's list of sk_buffs by their `list` member, which
// is at the start of an sk_buff (a union's member).
const _: () = assert!(core::mem::offset_of!(bindings::sk_buff, __bindgen_anon_1) == 0);

/// A packet in GRO, with its control block (`NAPI_GRO_CB`) read and
/// written here as `include/net/gro.h`'s inline functions do, each of
/// which would otherwise be a call per frame.
///
/// # Invariants
///
/// The packet is in GRO (its `cb` is a `napi_gro_cb`), and ours to read
/// and write for the duration of a `gro_receive` call: the frame GRO
/// hands us, or a packet on the list it passes with it.
#[derive(Clone, Copy)]
struct Gro<'a>(
    *mut bindings::sk_buff,
    PhantomData<&'a mut bindings::sk_buff>,
);

// `cb` holds a `napi_gro_cb`, aligned for it (`char cb[48] __aligned(8)`).
const _: () = {
    use core::mem::{align_of, offset_of, size_of};
    assert!(size_of::<bindings::napi_gro_cb>() <= 48);
    assert!(offset_of!(bindings::sk_buff, cb) % align_of::<bindings::napi_gro_cb>() == 0);
    assert!(align_of::<bindings::sk_buff>() >= align_of::<bindings::napi_gro_cb>());
};

impl Gro<'_> {
    /// # Safety
    ///
    /// `skb` is a packet in GRO that is ours for the lifetime (a
    /// `gro_receive` call): the frame, or one on the list passed with it.
    unsafe fn new(skb: *mut bindings::sk_buff) -> Self {
        // INVARIANT: As the caller guarantees.
        Gro(skb, PhantomData)
    }

    /// `GRO_RECURSION_LIMIT`: GRO callbacks one packet may pass through.
    const RECURSION_LIMIT: u8 = 15;

    fn cb(self) -> *mut bindings::napi_gro_cb {
        // SAFETY: A valid sk_buff (the invariant); a raw place, no
        // reference made.
        unsafe { core::ptr::addr_of_mut!((*self.0).cb).cast() }
    }

    /// The bit fields GRO zeroes for each frame.
    fn bits(self) -> *mut bindings::napi_gro_cb__bindgen_ty_2__bindgen_ty_1 {
        // SAFETY: As in `cb`.
        unsafe { core::ptr::addr_of_mut!((*self.cb()).__bindgen_anon_2.__bindgen_anon_1) }
    }

    /// `skb_gro_offset`: where GRO is, from `data`.
    fn offset(self) -> u32 {
        // SAFETY: The invariant: the cb is GRO's.
        unsafe { (*self.cb()).data_offset as u32 }
    }

    /// `skb_gro_header`: `hlen` bytes from `data` readable at `offset`,
    /// pulled into the linear part if not in `frag0`; null if the packet is
    /// shorter.
    fn header(self, hlen: u32, offset: u32) -> *const u8 {
        let cb = self.cb();
        // SAFETY: The invariant; `frag0` is valid for `frag0_len` bytes when
        // set (0 otherwise), and the C helper is the slow path of the same
        // inline function.
        unsafe {
            let fast = core::ptr::addr_of!((*cb).__bindgen_anon_1.__bindgen_anon_1);
            if hlen <= (*fast).frag0_len {
                (*fast).frag0.cast::<u8>().add(offset as usize)
            } else {
                bindings::skb_gro_header(self.0, hlen, offset).cast()
            }
        }
    }

    /// Its ethertype (`skb->protocol`, as the port's driver set it).
    fn protocol(self) -> u16 {
        // SAFETY: A valid sk_buff (the invariant); a plain field read.
        unsafe {
            (*self.0)
                .__bindgen_anon_4
                .__bindgen_anon_1
                .as_ref()
                .protocol
        }
    }

    /// Its VLAN tag and protocol as GRO compares them (`vlan_all`).
    fn vlan_all(self) -> u32 {
        // SAFETY: As above.
        unsafe {
            (*self.0)
                .__bindgen_anon_4
                .__bindgen_anon_1
                .as_ref()
                .__bindgen_anon_2
                .vlan_all
        }
    }

    /// The packet's length from its data on (`skb->len`).
    fn len(self) -> u32 {
        // SAFETY: A valid sk_buff (the invariant).
        unsafe { (*self.0).len }
    }

    /// `skb_gro_pull`.
    fn pull(self, len: u32) {
        // SAFETY: The invariant.
        unsafe { (*self.cb()).data_offset += len as i32 }
    }

    /// `skb_gro_postpull_rcsum`: takes `len` bytes at `start`, just pulled,
    /// out of a checksum GRO keeps.
    fn postpull_rcsum(self, start: *const u8, len: u32) {
        // SAFETY: The invariant; `start` is the pulled bytes, as the C
        // function requires.
        unsafe {
            if bindings::napi_gro_cb__bindgen_ty_2__bindgen_ty_1::csum_valid_raw(self.bits()) != 0 {
                bindings::skb_gro_postpull_rcsum(self.0, start.cast(), len);
            }
        }
    }

    /// Sets where the next network header is (at this encapsulation
    /// level), as an inner protocol's GRO expects.
    fn set_network_offset(self, off: u32) {
        // SAFETY: The invariant; `encap_mark` is 0 or 1.
        unsafe {
            let level =
                bindings::napi_gro_cb__bindgen_ty_2__bindgen_ty_1::encap_mark_raw(self.bits());
            (*self.cb()).__bindgen_anon_3.network_offsets[level as usize] = off as u16;
        }
    }

    /// Whether the packet is inside a tunnel's GRO (`encap_mark`).
    fn encap_mark(self) -> bool {
        // SAFETY: The invariant.
        unsafe {
            bindings::napi_gro_cb__bindgen_ty_2__bindgen_ty_1::encap_mark_raw(self.bits()) != 0
        }
    }

    fn same_flow(self) -> bool {
        // SAFETY: The invariant.
        unsafe {
            bindings::napi_gro_cb__bindgen_ty_2__bindgen_ty_1::same_flow_raw(self.bits()) != 0
        }
    }

    fn clear_same_flow(self) {
        // SAFETY: The invariant.
        unsafe {
            bindings::napi_gro_cb__bindgen_ty_2__bindgen_ty_1::set_same_flow_raw(self.bits(), 0)
        }
    }

    /// Frames merged into the packet.
    fn count(self) -> u32 {
        // SAFETY: The invariant.
        unsafe { u32::from((*self.cb()).count) }
    }

    /// `call_gro_receive`: the inner protocol's `receive`, unless the
    /// packet has passed through too many already.
    fn call(
        self,
        receive: unsafe extern "C" fn(
            *mut bindings::list_head,
            *mut bindings::sk_buff,
        ) -> *mut bindings::sk_buff,
        head: *mut bindings::list_head,
    ) -> *mut bindings::sk_buff {
        let bits = self.bits();
        // SAFETY: The invariant; `receive` is a registered offload's, called
        // as GRO calls it, with the list and packet we were given.
        unsafe {
            let depth =
                bindings::napi_gro_cb__bindgen_ty_2__bindgen_ty_1::recursion_counter_raw(bits) + 1;
            bindings::napi_gro_cb__bindgen_ty_2__bindgen_ty_1::set_recursion_counter_raw(
                bits, depth,
            );
            if depth == Self::RECURSION_LIMIT {
                (*self.cb()).flush |= 1;
                return core::ptr::null_mut();
            }
            receive(head, self.0)
        }
    }

    /// `skb_gro_flush_final`: unless the inner protocol kept the packet
    /// (`-EINPROGRESS`), whether it must not be held.
    fn flush_final(self, pp: *mut bindings::sk_buff, flush: bool) {
        if pp as isize != EINPROGRESS.to_errno() as isize {
            // SAFETY: The invariant.
            unsafe { (*self.cb()).flush |= u16::from(flush) }
        }
    }

    /// The MAC header, if the packet has one (`skb_mac_header`, which warns
    /// when there is none).
    fn mac_header(self) -> Option<*const u8> {
        // SAFETY: A valid sk_buff (the invariant).
        unsafe { super::skb::mac_header(self.0) }.map(|m| m.cast_const())
    }
}

/// The shim of the frame at GRO offset `off`, and its length and inner
/// ethertype if it may be merged: [`ShimOffload::parse`] takes it, and the
/// inner packet is TCP or UDP in IPv4 or IPv6 (no IPv6 extension header).
fn shim_of<T: ShimOffload>(frame: Gro<'_>, off: u32) -> (*const u8, Option<(usize, u16)>) {
    const TCP: u8 = 6;
    const UDP: u8 = 17;
    // The shortest shim and the inner headers at once: a frame too short
    // for them is not merged anyway.
    let mut shim = frame.header(off + (T::MIN_LEN + INNER_PEEK) as u32, off);
    if shim.is_null() {
        return (shim, None);
    }
    // SAFETY: `header` made the bytes readable.
    let Some((hlen, inner)) = T::parse(unsafe { core::slice::from_raw_parts(shim, T::MIN_LEN) })
    else {
        return (shim, None);
    };
    if hlen > T::MIN_LEN {
        shim = frame.header(off + (hlen + INNER_PEEK) as u32, off);
        if shim.is_null() {
            return (shim, None);
        }
    }
    // SAFETY: As above.
    let ip = unsafe { core::slice::from_raw_parts(shim.add(hlen), INNER_PEEK) };
    let proto = match inner {
        0x0800 if ip[0] >> 4 == 4 => ip[9],
        0x86dd if ip[0] >> 4 == 6 => ip[6],
        _ => return (shim, None),
    };
    (
        shim,
        (proto == TCP || proto == UDP).then_some((hlen, inner)),
    )
}

/// `gro_complete` for the shim: `skb` is a merged packet of more than one
/// frame, its shim at `nhoff`; the inner protocol completes it (its
/// `gso_segs` become the frames merged).
///
/// # Safety
///
/// Called by the kernel's GRO with a packet it owns, merged by
/// [`gro_receive`].
unsafe extern "C" fn gro_complete<T: ShimOffload>(
    skb: *mut bindings::sk_buff,
    nhoff: kernel::ffi::c_int,
) -> kernel::ffi::c_int {
    // SAFETY: The kernel's skb; gro_receive saw its shim and headers
    // linear at `nhoff`.
    unsafe {
        let shim = core::slice::from_raw_parts((*skb).data.add(nhoff as usize), T::MIN_LEN);
        let Some((hlen, inner)) = T::parse(shim) else {
            return EINVAL.to_errno();
        };
        let ptype = bindings::gro_find_complete_by_type(inner.to_be());
        match ptype.as_ref().and_then(|p| p.callbacks.gro_complete) {
            Some(complete) => complete(skb, nhoff + hlen as kernel::ffi::c_int),
            None => ENOENT.to_errno(),
        }
    }
}
