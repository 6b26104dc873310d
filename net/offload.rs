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

use super::bindings;
use kernel::prelude::*;
use kernel::types::Opaque;

/// What a driver says about its shim.
pub trait ShimOffload: 'static {
    /// The shim's ethertype.
    const ETHERTYPE: u16;
    /// The shim's length, from its first bytes (`shim`, as many as
    /// [`ShimOffload::MIN_LEN`] at least), and the inner packet's
    /// ethertype; `None` if it is not to be segmented here.
    fn parse(shim: &[u8]) -> Option<(usize, u16)>;
    /// Bytes [`ShimOffload::parse`] needs.
    const MIN_LEN: usize;
    /// Fixes the shim of segment `index` (0 for the first), whose Ethernet
    /// header and shim are `frame`.
    fn fix(index: u32, frame: &mut [u8]);
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

// SAFETY: The kernel reads the registration under RCU from any CPU; it is
// never written after registration.
unsafe impl<T: ShimOffload> Send for Registration<T> {}
// SAFETY: As above.
unsafe impl<T: ShimOffload> Sync for Registration<T> {}

impl<T: ShimOffload> Registration<T> {
    /// Registers the offload (module init).
    pub fn new() -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            offload <- Opaque::ffi_init(|slot: *mut bindings::packet_offload| {
                // SAFETY: `slot` is ours, pinned, and lives until drop,
                // which removes it from the list first.
                unsafe {
                    slot.write(bindings::packet_offload::default());
                    (*slot).type_ = T::ETHERTYPE.to_be();
                    (*slot).priority = 15;
                    (*slot).callbacks.gso_segment = Some(gso_segment::<T>);
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
        // SAFETY: Registered in `new`; dev_remove_offload waits for the
        // readers (synchronize_net) before we free it.
        unsafe { bindings::dev_remove_offload(self.offload.get()) };
    }
}

/// `gso_segment` for a shim (softirq or process context, under RCU):
/// `skb->data` is at the shim, the Ethernet header before it.
///
/// # Safety
///
/// Called by the kernel's GSO with a packet it owns for the call.
unsafe extern "C" fn gso_segment<T: ShimOffload>(
    skb: *mut bindings::sk_buff,
    features: bindings::netdev_features_t,
) -> *mut bindings::sk_buff {
    let einval: *mut bindings::sk_buff = EINVAL.to_ptr();
    // SAFETY: The kernel's skb, ours for the call; the header fields are
    // the `headers` struct group.
    unsafe {
        let h = (*skb).__bindgen_anon_4.__bindgen_anon_1.as_mut();
        let mac_offset = h.mac_header;
        let mac_len = (*skb).mac_len;
        let outer = h.protocol;
        if !bindings::pskb_may_pull(skb, T::MIN_LEN as u32) {
            return einval;
        }
        let shim = core::slice::from_raw_parts((*skb).data, T::MIN_LEN);
        let Some((hlen, inner)) = T::parse(shim) else { return einval };
        if !bindings::pskb_may_pull(skb, hlen as u32) {
            return einval;
        }
        h.protocol = inner.to_be();
        bindings::skb_pull(skb, hlen as u32);
        (*skb).mac_len = 0;
        bindings::skb_reset_mac_header(skb);
        // Each segment whole, in software: no lower GSO for the inner packet.
        let segs = bindings::skb_mac_gso_segment(skb, features & !bindings::netif_f_gso_mask());
        if segs.is_null() || kernel::error::from_err_ptr(segs).is_err() {
            bindings::skb_gso_error_unwind(skb, outer, hlen as i32, mac_offset, mac_len as i32);
            return if segs.is_null() { einval } else { segs };
        }
        // Each segment carries a copy of the Ethernet header and the shim
        // before its data (skb_segment copies from the mac header on).
        let outer_len = hlen as u32 + mac_len as u32;
        let mut s = segs;
        let mut i = 0u32;
        while !s.is_null() {
            (*s).mac_len = mac_len;
            (*s).__bindgen_anon_4.__bindgen_anon_1.as_mut().protocol = outer;
            bindings::skb_push(s, outer_len);
            bindings::skb_reset_mac_header(s);
            bindings::skb_set_network_header(s, mac_len as i32);
            let frame = core::slice::from_raw_parts_mut((*s).data, outer_len as usize);
            T::fix(i, frame);
            i += 1;
            s = (*s).__bindgen_anon_1.__bindgen_anon_1.next;
        }
        segs
    }
}
