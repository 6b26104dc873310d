// SPDX-License-Identifier: GPL-2.0

//! Socket buffers: [`Skb`], one we own, and [`SkbList`], a list of them
//! chained through their own `next` pointers (no allocation), so that work
//! decided under a lock (deliver, transmit, free) can be done after it is
//! released; [`SkbStack`], the same chain pushed to by many CPUs at once
//! without a lock and taken whole by one (the kernel's `llist`).

use super::bindings;
use super::device::Device;
use core::ptr::NonNull;
use core::sync::atomic::{AtomicPtr, Ordering};
use kernel::error::to_result;
use kernel::prelude::*;

/// Why a packet is dropped (`enum skb_drop_reason`), for drop monitors.
#[derive(Clone, Copy)]
#[repr(u32)]
pub enum DropReason {
    /// Nothing more specific applies.
    NotSpecified = bindings::skb_drop_reason_SKB_DROP_REASON_NOT_SPECIFIED,
    /// The device is down, or has no way to send it.
    DevReady = bindings::skb_drop_reason_SKB_DROP_REASON_DEV_READY,
    /// A header is malformed or short.
    HdrTrunc = bindings::skb_drop_reason_SKB_DROP_REASON_HDR_TRUNC,
    /// Not for this host.
    OtherHost = bindings::skb_drop_reason_SKB_DROP_REASON_OTHERHOST,
    /// Out of memory.
    NoMem = bindings::skb_drop_reason_SKB_DROP_REASON_NOMEM,
    /// A duplicate or a queue that is full.
    Full = bindings::skb_drop_reason_SKB_DROP_REASON_FULL_RING,
    /// A loop was detected on transmit.
    Recursion = bindings::skb_drop_reason_SKB_DROP_REASON_RECURSION_LIMIT,
}

/// A socket buffer we own: dropped (`kfree_skb`) unless handed on.
///
/// # Invariants
///
/// `self.0` points to an sk_buff that nobody else uses and that is not
/// shared (received ones went through `skb_share_check`).
#[repr(transparent)]
pub struct Skb(NonNull<bindings::sk_buff>);

// SAFETY: An owned sk_buff may be passed on or freed on any CPU.
unsafe impl Send for Skb {}

impl Drop for Skb {
    fn drop(&mut self) {
        // SAFETY: We own it (type invariant).
        unsafe {
            bindings::sk_skb_reason_drop(
                core::ptr::null_mut(),
                self.as_raw(),
                DropReason::NotSpecified as u32,
            )
        }
    }
}

impl Skb {
    /// Takes ownership of `skb`.
    ///
    /// # Safety
    ///
    /// `skb` is a valid, unshared sk_buff whose ownership passes to the
    /// returned value.
    pub unsafe fn from_raw(skb: *mut bindings::sk_buff) -> Option<Skb> {
        NonNull::new(skb).map(Skb)
    }

    /// The raw pointer, still owned by `self`.
    pub fn as_raw(&self) -> *mut bindings::sk_buff {
        self.0.as_ptr()
    }

    /// Gives up ownership.
    pub fn into_raw(self) -> *mut bindings::sk_buff {
        let p = self.as_raw();
        core::mem::forget(self);
        p
    }

    /// Allocates a packet for `dev` with `len` zeroed bytes of data (atomic).
    pub fn alloc(dev: &Device, len: u32) -> Option<Skb> {
        // SAFETY: `dev` is alive (reference); GFP_ATOMIC inside.
        let skb = unsafe { Skb::from_raw(bindings::netdev_alloc_skb(dev.as_raw(), len))? };
        // SAFETY: A fresh skb has `len` bytes of tailroom.
        unsafe { bindings::skb_put_zero(skb.as_raw(), len) };
        Some(skb)
    }

    /// Drops the packet, telling drop monitors why.
    pub fn drop_reason(self, why: DropReason) {
        // SAFETY: We own it.
        unsafe { bindings::sk_skb_reason_drop(core::ptr::null_mut(), self.into_raw(), why as u32) }
    }

    /// Frees a packet that was handled, not dropped.
    pub fn consume(self) {
        // SAFETY: We own it.
        unsafe { bindings::skb_consume(self.into_raw()) }
    }

    /// The Ethertype the receiving driver found (`skb->protocol`, host order).
    pub fn protocol(&self) -> u16 {
        // SAFETY: We own it; a plain field read.
        u16::from_be(unsafe {
            (*self.as_raw())
                .__bindgen_anon_4
                .__bindgen_anon_1
                .as_ref()
                .protocol
        })
    }

    /// Bytes in the packet.
    pub fn len(&self) -> u32 {
        // SAFETY: We own it; a plain field read.
        unsafe { (*self.as_raw()).len }
    }

    /// Whether the packet carries no bytes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes before `data` in the head (`skb_headroom`).
    pub fn headroom(&self) -> u32 {
        // SAFETY: We own it; `data` points into the head, at or after `head`.
        unsafe { (*self.as_raw()).data.offset_from((*self.as_raw()).head) as u32 }
    }

    /// Memory the packet takes (`skb->truesize`): what holding it costs.
    pub fn truesize(&self) -> u32 {
        // SAFETY: We own it; a plain field read.
        unsafe { (*self.as_raw()).truesize }
    }

    /// Whether the packet is a GSO packet (several segments in one).
    pub fn is_gso(&self) -> bool {
        // SAFETY: We own it.
        unsafe { (*shinfo(self.as_raw())).gso_size != 0 }
    }

    /// Sets the packet's protocol (`skb->protocol`, host order given).
    pub fn set_protocol(&mut self, protocol: u16) {
        // SAFETY: We own it; a plain field of the `headers` group.
        unsafe {
            (*self.as_raw())
                .__bindgen_anon_4
                .__bindgen_anon_1
                .as_mut()
                .protocol = protocol.to_be()
        };
    }

    /// Segments of a GSO packet (as the sender counted them).
    pub fn gso_segs(&self) -> u16 {
        // SAFETY: We own it.
        unsafe { gso_segs(self.as_raw()) }
    }

    /// Whether the GSO packet came from an untrusted source (a guest, a
    /// packet socket: `SKB_GSO_DODGY`), its segment count not yet known.
    pub fn gso_dodgy(&self) -> bool {
        // SAFETY: We own it.
        unsafe { (*shinfo(self.as_raw())).gso_type & bindings::SKB_GSO_DODGY as u32 != 0 }
    }

    /// Marks the `shim` after the Ethernet header as the network header,
    /// for a GSO packet that a lower device is to segment late
    /// (`net/offload.rs`).
    pub fn mark_shim(&mut self) {
        // SAFETY: We own it; `data` is at the Ethernet header.
        unsafe {
            reset_mac_header(self.as_raw());
            bindings::skb_set_network_header(self.as_raw(), 14);
        }
    }

    /// Software GSO: the packet cut into its segments, each a packet of its
    /// own; checksums and scatter-gather are left to the device the
    /// segments go to (`features`). On failure the packet comes back.
    pub fn gso_segments(self, features: u64) -> core::result::Result<SkbList, Skb> {
        // SAFETY: We own the skb; skb_gso_segment leaves it untouched and
        // returns a new list, an ERR_PTR or NULL.
        let segs = unsafe { bindings::skb_gso_segment(self.as_raw(), features) };
        self.segments_or_back(segs)
    }

    /// [`Skb::gso_segments`], cut as device `dev` (which the segments then
    /// name, to be sent there while it lives) would cut it in its own
    /// transmit: a shim's offload sees the lower device it goes out on.
    pub fn gso_segments_on(
        self,
        dev: &super::device::Device,
        features: u64,
    ) -> core::result::Result<SkbList, Skb> {
        let p = self.as_raw();
        // SAFETY: We own the skb; `dev` is alive for the call. Then as in
        // `gso_segments`.
        let segs = unsafe {
            (*p).__bindgen_anon_1.__bindgen_anon_1.__bindgen_anon_1.dev = dev.as_raw();
            bindings::skb_gso_segment(p, features)
        };
        self.segments_or_back(segs)
    }

    /// The segments `skb_gso_segment` made of `self` (which goes), or
    /// `self` back if it made none.
    fn segments_or_back(self, segs: *mut bindings::sk_buff) -> core::result::Result<SkbList, Skb> {
        if segs.is_null() || kernel::error::from_err_ptr(segs).is_err() {
            return Err(self);
        }
        self.consume();
        // SAFETY: A list of fresh segments, ours alone.
        Ok(unsafe { SkbList::from_raw_chain(segs) })
    }

    /// A clone sharing the data (to send one frame on several devices).
    pub fn clone_skb(&self) -> Option<Skb> {
        // SAFETY: We own `self`; skb_clone leaves both usable.
        unsafe {
            Skb::from_raw(bindings::skb_clone(
                self.as_raw(),
                kernel::bindings::GFP_ATOMIC,
            ))
        }
    }

    /// Makes the first `len` bytes linear; false if the packet is shorter.
    pub fn may_pull(&mut self, len: u32) -> bool {
        // SAFETY: We own it.
        unsafe { bindings::pskb_may_pull(self.as_raw(), len) }
    }

    /// The flags byte of the TCP header of a received packet whose data
    /// starts at its IPv4 or IPv6 header (`eth_type_trans` done), or
    /// `None` if it is not an unfragmented TCP segment without IPv6
    /// extension headers.
    pub fn tcp_flags(&mut self) -> Option<u8> {
        const TCP: u8 = 6;
        let ip = match self.protocol() {
            p if p == bindings::ETH_P_IP as u16 => {
                if !self.may_pull(20) {
                    return None;
                }
                let d = self.data();
                // Not a fragment (offset and "more fragments" clear).
                if d[9] != TCP || u16::from_be_bytes([d[6], d[7]]) & 0x3fff != 0 {
                    return None;
                }
                u32::from(d[0] & 0xf) * 4
            }
            p if p == bindings::ETH_P_IPV6 as u16 => {
                if !self.may_pull(40) || self.data()[6] != TCP {
                    return None;
                }
                40
            }
            _ => return None,
        };
        if ip < 20 || !self.may_pull(ip + 14) {
            return None;
        }
        Some(self.data()[ip as usize + 13])
    }

    /// The linear data from `skb->data`.
    pub fn data(&self) -> &[u8] {
        // SAFETY: We own it; `data` has `headlen` linear bytes, valid while
        // we do not change the skb (the borrow).
        unsafe {
            let p = self.as_raw();
            core::slice::from_raw_parts((*p).data, headlen(p) as usize)
        }
    }

    /// The linear data, writable: the header is private (after
    /// [`Skb::make_writable`], or in a packet we allocated).
    fn data_mut(&mut self) -> &mut [u8] {
        // SAFETY: We own it and its header is not shared (callers'
        // precondition); `data` has `headlen` linear bytes.
        unsafe {
            let p = self.as_raw();
            core::slice::from_raw_parts_mut((*p).data, headlen(p) as usize)
        }
    }

    /// Ensures `headroom` bytes before the data and a private header.
    pub fn make_writable(&mut self, headroom: u32) -> Result {
        // SAFETY: We own it.
        to_result(unsafe { bindings::skb_cow_head(self.as_raw(), headroom) })
    }

    /// The 12 address bytes (destination, source) of the Ethernet header of
    /// a received packet; `None` if it has no Ethernet header before `data`.
    pub fn mac_addrs(&self) -> Option<[u8; 12]> {
        let p = self.as_raw();
        // SAFETY: We own it; reads of header offsets.
        let (mac, data) = unsafe { (mac_header(p), (*p).data) };
        let mac = mac?;
        if (mac as usize).saturating_add(14) > data as usize {
            return None;
        }
        let mut a = [0u8; 12];
        // SAFETY: The 14 bytes from `mac` lie between `head` and `data`,
        // in the linear part (checked above).
        unsafe { core::ptr::copy_nonoverlapping(mac, a.as_mut_ptr(), 12) };
        Some(a)
    }

    /// Transmit side: inserts `shim` between the Ethernet header at `data`
    /// and the payload, and sets the Ethertype to `ethertype`. Returns the
    /// original Ethertype.
    pub fn insert_after_eth(&mut self, ethertype: u16, shim: &[u8]) -> Result<u16> {
        let n = shim.len();
        if !self.may_pull(14) {
            return Err(EINVAL);
        }
        self.make_writable(n as u32)?;
        // SAFETY: cow_head made `n` bytes of private headroom.
        unsafe { bindings::skb_push(self.as_raw(), n as u32) };
        let d = self.data_mut();
        d.copy_within(n..n + 12, 0);
        let orig = u16::from_be_bytes([d[12 + n], d[13 + n]]);
        d[12..14].copy_from_slice(&ethertype.to_be_bytes());
        d[14..14 + n].copy_from_slice(shim);
        // SAFETY: We own it.
        unsafe { reset_mac_header(self.as_raw()) };
        Ok(orig)
    }

    /// Receive side: `data` is at a shim of `shim_len` bytes that follows
    /// the Ethernet header. Drops the shim, rebuilds the Ethernet header
    /// right before the payload with `ethertype`, and runs
    /// `eth_type_trans()` as `dev` would (protocol, packet type, `skb->dev`).
    /// `addrs`, if given, replace the received addresses (destination,
    /// source).
    pub fn strip_shim(
        &mut self,
        shim_len: u32,
        ethertype: u16,
        dev: &Device,
        addrs: Option<&[u8; 12]>,
    ) -> Result {
        let addrs = match addrs {
            Some(a) => *a,
            None => self.mac_addrs().ok_or(EINVAL)?,
        };
        // The Ethernet header is before `data` (`mac_addrs` checks it; a
        // caller that gives the addresses need not have).
        if self.headroom() < 14 || !self.may_pull(shim_len) {
            return Err(EINVAL);
        }
        self.make_writable(0)?;
        // SAFETY: `shim_len` bytes are linear (may_pull); pull_rcsum keeps a
        // CHECKSUM_COMPLETE sum right.
        unsafe { bindings::skb_pull_rcsum(self.as_raw(), shim_len) };
        // SAFETY: 14 bytes of headroom were there before the pull, and the
        // head is private (make_writable).
        unsafe { bindings::skb_push(self.as_raw(), 14) };
        let d = self.data_mut();
        d[..12].copy_from_slice(&addrs);
        d[12..14].copy_from_slice(&ethertype.to_be_bytes());
        // eth_type_trans() only changes pkt_type when the destination is not
        // `dev`'s own address; the port's driver set it for the port's
        // address, so start again from PACKET_HOST.
        // SAFETY: We own the skb; `dev` is alive; eth_type_trans pulls the
        // 14 linear bytes just written.
        unsafe {
            let p = self.as_raw();
            let h = (*p).__bindgen_anon_4.__bindgen_anon_1.as_mut();
            h.set_pkt_type(bindings::PACKET_HOST as u8);
            h.protocol = bindings::eth_type_trans(p, dev.as_raw());
            // The port's hash and receive queue are the outer frame's, not
            // the inner packet's flow: a sender's hash per link (kept by
            // veth) or a NIC's per port split one flow between `dev`'s
            // GRO buckets and RPS CPUs, out of the order it is handed up
            // in (ri2n_veth). `dev` computes its own (skb_clear_hash; no
            // queue recorded).
            h.hash = 0;
            h.set_sw_hash(0);
            h.set_l4_hash(0);
            (*p).queue_mapping = 0;
        }
        Ok(())
    }

    /// Transmit side: replaces the Ethernet addresses at `data` (making
    /// the header private first, for a clone).
    pub fn set_eth_addrs(&mut self, dst: &[u8; 6], src: &[u8; 6]) -> Result {
        if !self.may_pull(14) {
            return Err(EINVAL);
        }
        self.make_writable(0)?;
        let d = self.data_mut();
        d[..6].copy_from_slice(dst);
        d[6..12].copy_from_slice(src);
        Ok(())
    }

    /// Writes `bytes` at offset `at` of a packet we allocated (whose data
    /// no clone shares); false if it is shared or too short.
    pub fn write(&mut self, at: usize, bytes: &[u8]) -> bool {
        // SAFETY: We own it; reads the clone state.
        if unsafe { bindings::skb_header_cloned(self.as_raw()) } {
            return false;
        }
        match self.data_mut().get_mut(at..at + bytes.len()) {
            Some(d) => {
                d.copy_from_slice(bytes);
                true
            }
            None => false,
        }
    }

    /// Sends the packet out of `dev` (`dev_queue_xmit`, which consumes it)
    /// as a frame of Ethertype `protocol`, part of the flow `flow_hash`.
    /// Must not be called with a spinlock held.
    ///
    /// The device's qdisc and queue choice keep a flow's packets in the
    /// order they are sent, whatever they are: the hash is the flow's for
    /// flow-queueing qdiscs (fq_codel, fq); the packet has no priority of
    /// its own (pfifo_fast's bands); its transmit queue is chosen afresh
    /// (`ooo_okay`), not from a socket's cached queue, which differs from
    /// packet to packet of one flow; and XPS sees the same "sending CPU"
    /// for every packet: the last CPU number the kernel allows, which on
    /// most machines is no CPU at all (XPS then leaves the choice to the
    /// hash), and otherwise one CPU's queues, chosen among by the hash.
    ///
    /// Returns false if the packet was dropped on the way (the qdisc full,
    /// the device down): it never left.
    pub fn xmit_on(self, dev: &Device, protocol: u16, flow_hash: u32) -> bool {
        let p = self.into_raw();
        // SAFETY: We own the skb; `dev` is alive for the call, which queues
        // the packet; the header fields are the `headers` struct group.
        unsafe {
            (*p).__bindgen_anon_1.__bindgen_anon_1.__bindgen_anon_1.dev = dev.as_raw();
            let h = (*p).__bindgen_anon_4.__bindgen_anon_1.as_mut();
            h.protocol = protocol.to_be();
            h.priority = 0;
            h.hash = flow_hash;
            h.set_sw_hash(1);
            h.set_l4_hash(1);
            h.set_ooo_okay(1);
            h.__bindgen_anon_3.sender_cpu = bindings::nr_cpus_max();
            reset_mac_header(p);
            let rc = bindings::__dev_queue_xmit(p, core::ptr::null_mut());
            // NET_XMIT_CN: queued, another packet was dropped.
            !(rc < 0 || rc == bindings::NET_XMIT_DROP as i32)
        }
    }
}

/// A FIFO of packets we own, chained through `skb->next`; whatever is left
/// is freed on drop. Pushing and popping never allocate.
///
/// # Invariants
///
/// `head` is NULL or the first of a `next`-linked chain of sk_buffs we own,
/// whose last one is `tail` and has `next == NULL`; `len` counts them.
pub struct SkbList {
    head: *mut bindings::sk_buff,
    tail: *mut bindings::sk_buff,
    len: usize,
}

// SAFETY: It owns its packets, which may move between CPUs.
unsafe impl Send for SkbList {}

impl Default for SkbList {
    fn default() -> Self {
        Self::new()
    }
}

/// The device of the raw sk_buff `skb` (the one it arrived on, or is being
/// sent through): the field sits in anonymous unions of the binding.
///
/// # Safety
///
/// `skb` is a valid sk_buff.
pub(super) unsafe fn dev_of(skb: *const bindings::sk_buff) -> *mut bindings::net_device {
    // SAFETY: As the caller guarantees; a plain read of the field.
    unsafe {
        (*skb)
            .__bindgen_anon_1
            .__bindgen_anon_1
            .__bindgen_anon_1
            .dev
    }
}

// The static inline accessors of `include/linux/skbuff.h` that run for
// every packet, here rather than as a call each to `net/helpers.c`.
// Header offsets and `end` are offsets from `head` on 64-bit
// (NET_SKBUFF_DATA_USES_OFFSET), as the types below require.
const _: bindings::sk_buff_data_t = 0u32;

/// The sk_buff's `headers` group, as a raw place (no reference made).
///
/// # Safety
///
/// `skb` is a valid sk_buff.
pub(super) unsafe fn headers(
    skb: *const bindings::sk_buff,
) -> *mut bindings::sk_buff__bindgen_ty_4__bindgen_ty_1 {
    // SAFETY: As the caller guarantees.
    unsafe {
        core::ptr::addr_of!((*skb).__bindgen_anon_4.__bindgen_anon_1)
            .cast_mut()
            .cast()
    }
}

/// `skb_headlen`: bytes in the linear part.
///
/// # Safety
///
/// `skb` is a valid sk_buff.
pub(super) unsafe fn headlen(skb: *const bindings::sk_buff) -> u32 {
    // SAFETY: As the caller guarantees; plain field reads.
    unsafe { (*skb).len.wrapping_sub((*skb).data_len) }
}

/// `skb_shinfo`: the shared info at the end of the buffer.
///
/// # Safety
///
/// `skb` is a valid sk_buff.
pub(super) unsafe fn shinfo(skb: *const bindings::sk_buff) -> *mut bindings::skb_shared_info {
    // SAFETY: As the caller guarantees: `end` is the shared info's offset
    // from `head`, within the buffer.
    unsafe { (*skb).head.add((*skb).end as usize).cast() }
}

/// Segments of a GSO packet, as its sender counted them.
///
/// # Safety
///
/// `skb` is a valid sk_buff.
pub(super) unsafe fn gso_segs(skb: *const bindings::sk_buff) -> u16 {
    // SAFETY: As the caller guarantees.
    unsafe { (*shinfo(skb)).gso_segs }
}

/// `skb_mac_header`, if set (`skb_mac_header_was_set`).
///
/// # Safety
///
/// `skb` is a valid sk_buff.
pub(super) unsafe fn mac_header(skb: *const bindings::sk_buff) -> Option<*mut u8> {
    // SAFETY: As the caller guarantees; the offset is from `head` when
    // set (not `~0`).
    unsafe {
        let at = (*headers(skb)).mac_header;
        (at != u16::MAX).then(|| (*skb).head.add(at as usize))
    }
}

/// `skb_reset_mac_header`: the MAC header at `data`.
///
/// # Safety
///
/// `skb` is a valid sk_buff the caller may write.
pub(super) unsafe fn reset_mac_header(skb: *mut bindings::sk_buff) {
    // SAFETY: As the caller guarantees; `data` lies in the buffer from
    // `head`, less than 64 KiB on.
    unsafe {
        let at = (*skb).data.offset_from((*skb).head) as u16;
        (*headers(skb)).mac_header = at;
    }
}

impl SkbList {
    /// An empty list.
    pub const fn new() -> SkbList {
        SkbList {
            head: core::ptr::null_mut(),
            tail: core::ptr::null_mut(),
            len: 0,
        }
    }

    /// Takes over a NULL-terminated chain of packets.
    ///
    /// # Safety
    ///
    /// `head` is NULL or a `next`-linked, NULL-terminated chain of sk_buffs
    /// whose ownership passes to the list.
    unsafe fn from_raw_chain(head: *mut bindings::sk_buff) -> SkbList {
        let mut l = SkbList::new();
        let mut p = head;
        while !p.is_null() {
            // SAFETY: Each element is valid and ours (precondition).
            let next = unsafe { (*p).__bindgen_anon_1.__bindgen_anon_1.next };
            // SAFETY: As above; `push` relinks it.
            l.push(unsafe { Skb::from_raw(p).unwrap_unchecked() });
            p = next;
        }
        l
    }

    /// Packets in the list.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the list is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends `skb`.
    pub fn push(&mut self, skb: Skb) {
        let p = skb.into_raw();
        // SAFETY: We own `p` now and, by the invariant, `tail`.
        unsafe {
            (*p).__bindgen_anon_1.__bindgen_anon_1.next = core::ptr::null_mut();
            if self.tail.is_null() {
                self.head = p;
            } else {
                (*self.tail).__bindgen_anon_1.__bindgen_anon_1.next = p;
            }
        }
        self.tail = p;
        self.len += 1;
    }

    /// Removes and returns the first packet.
    pub fn pop(&mut self) -> Option<Skb> {
        let p = self.head;
        if p.is_null() {
            return None;
        }
        // SAFETY: `p` is the head of our chain (invariant).
        unsafe {
            self.head = (*p).__bindgen_anon_1.__bindgen_anon_1.next;
            (*p).__bindgen_anon_1.__bindgen_anon_1.next = core::ptr::null_mut();
        }
        if self.head.is_null() {
            self.tail = core::ptr::null_mut();
        }
        self.len -= 1;
        // SAFETY: Unlinked, and ours.
        unsafe { Skb::from_raw(p) }
    }

    /// Moves every packet of `other` to the end of `self`.
    pub fn append(&mut self, other: &mut SkbList) {
        while let Some(s) = other.pop() {
            self.push(s);
        }
    }
}

impl Iterator for SkbList {
    type Item = Skb;

    fn next(&mut self) -> Option<Skb> {
        self.pop()
    }
}

impl Drop for SkbList {
    fn drop(&mut self) {
        while let Some(s) = self.pop() {
            drop(s);
        }
    }
}

/// Packets many CPUs push at once, without a lock, and one consumer takes
/// all at a time, oldest first (the kernel's `llist_add` and
/// `llist_del_all`, over the packets' own `next` pointers).
///
/// # Invariants
///
/// `head` is NULL or the newest of a `next`-linked, NULL-terminated chain
/// of sk_buffs we own, newest first.
pub struct SkbStack {
    head: AtomicPtr<bindings::sk_buff>,
}

// SAFETY: It owns its packets, which may move between CPUs; every access
// to the chain goes through the atomic `head`.
unsafe impl Send for SkbStack {}
// SAFETY: As above: `push` and `take_all` are safe to call concurrently.
unsafe impl Sync for SkbStack {}

impl Default for SkbStack {
    fn default() -> Self {
        Self::new()
    }
}

impl SkbStack {
    /// An empty stack.
    pub const fn new() -> SkbStack {
        SkbStack {
            head: AtomicPtr::new(core::ptr::null_mut()),
        }
    }

    /// Adds `skb`. Sequentially consistent with [`SkbStack::is_empty`] and
    /// [`SkbStack::take_all`], so that a consumer that stops after finding
    /// the stack empty and a producer that then looks for a consumer
    /// cannot miss each other.
    pub fn push(&self, skb: Skb) {
        let p = skb.into_raw();
        let mut old = self.head.load(Ordering::Relaxed);
        loop {
            // SAFETY: `p` is ours and not yet visible to anyone else.
            unsafe { (*p).__bindgen_anon_1.__bindgen_anon_1.next = old };
            match self
                .head
                .compare_exchange_weak(old, p, Ordering::SeqCst, Ordering::Relaxed)
            {
                Ok(_) => return,
                Err(now) => old = now,
            }
        }
    }

    /// Takes every packet pushed so far, oldest first.
    pub fn take_all(&self) -> SkbList {
        let mut p = self.head.swap(core::ptr::null_mut(), Ordering::SeqCst);
        // Newest first: reverse the chain.
        let mut fifo: *mut bindings::sk_buff = core::ptr::null_mut();
        while !p.is_null() {
            // SAFETY: The chain is ours now (invariant; nobody else can
            // reach it since the swap).
            unsafe {
                let next = (*p).__bindgen_anon_1.__bindgen_anon_1.next;
                (*p).__bindgen_anon_1.__bindgen_anon_1.next = fifo;
                fifo = p;
                p = next;
            }
        }
        // SAFETY: A NULL-terminated chain of packets we own.
        unsafe { SkbList::from_raw_chain(fifo) }
    }

    /// Whether nothing was pushed since the last [`SkbStack::take_all`].
    pub fn is_empty(&self) -> bool {
        self.head.load(Ordering::SeqCst).is_null()
    }
}

impl Drop for SkbStack {
    fn drop(&mut self) {
        drop(self.take_all());
    }
}
