// SPDX-License-Identifier: GPL-2.0

//! The RI2N header (driver paper §5.2, Fig. 7) and the heartbeat payload.
//!
//! On the wire, after an Ethernet header whose ethertype is [`ETH_P_RI2N`]:
//!
//! ```text
//!  0         1         2                   4                                   8
//!  +---------+---------+-------------------+-----------------------------------+
//!  | version |  kind   | protocol (BE)     | sequence number (BE)              |
//!  +---------+---------+-------------------+-----------------------------------+
//! ```
//!
//! The paper's 16-bit `type` field is split into a version byte, so that a
//! future format is refused instead of misread, and a kind byte. `protocol` is
//! the original ethertype, restored on receive.
//!
//! A device with a key (`auth.rs`) sends version 2, "sealed": the same eight
//! bytes followed by the sender's 64-bit epoch and a tag, 24 bytes in all:
//!
//! ```text
//!  8                                                                               16
//!  +-------------------------------------------------------------------------------+
//!  | epoch (BE, 8 bytes: the sender's creation time, ms since 1970)                |
//!  +-------------------------------------------------------------------------------+
//!  | tag (SipHash-2-4, 8 bytes, BE)                                                |
//!  +-------------------------------------------------------------------------------+ 24
//! ```
//!
//! A heartbeat's sequence number is the sender's next data sequence number
//! for the receiving peer (it consumes none), and its payload is:
//!
//! ```text
//!  0                                       4         5         6         7         8
//!  +---------------------------------------+---------+---------+---------+---------+
//!  | epoch (BE)                            |  flags  |  link   |  down   |  shift  |
//!  +---------------------------------------+---------+---------+---------+---------+
//!  | tx (BE)                               | echo_tx (BE)                          |
//!  +---------------------------------------+---------------------------------------+
//!  | echo_rx (BE)                          |   (bytes 8..20 only with HB_COUNTS)
//!  +---------------------------------------+---------------------------------------+
//!  | counter (BE, 8 bytes)                                                         |
//!  +-------------------------------------------------------------------------------+
//!      (bytes 20..28 only with HB_COUNTER: sealed heartbeats, see auth.rs)
//! ```
//!
//! With `HB_COUNTS`, `tx` is how many frames (data and heartbeats) the
//! sender had sent the receiver on this link before this heartbeat, and
//! `echo_tx`/`echo_rx` are the `tx` of the last heartbeat it heard from the
//! receiver on this link and how many frames it had received from it on
//! the link by then. A link carries a peer's frames in order, so between
//! two echoes the receiver lost exactly the difference of the two counts.
//!
//! `link` is the sender's index of the slave the heartbeat left on, `down` the
//! sender's links (by its own indices) that are unusable toward the receiver:
//! failed by its detector (frames from the receiver do not arrive), without
//! carrier, or removed. The receiver learns which of its links is which of
//! the sender's from `link`, and stops sending on the links in `down` (one-way
//! failures, and the far side's carrier loss, as RI2N/UDP told its peer).
//!
//! `shift` asks the receiver to send loss probes on the links it took out
//! of use for loss toward the sender no more often than every
//! `LOSS_PROBE_MS << shift` ms: a node with many peers behind one lossy
//! cable of its own probes each of them that much less often, and has them
//! do the same, so that it neither sends nor receives more loss probes as
//! the cluster grows (`detector::loss_probe_shift`). Senders before it
//! wrote 0 there, receivers before it ignore it. The peers it has to
//! answer are those whose heartbeats carry `HB_LOSSY`: a node whose cable
//! loses only what it receives asks them too.

use super::auth::{Key, Keys, Msg, SEAL_LEN, TAG_LEN};
use super::seq::Seq;

/// The RI2N ethertype (the paper's 0x1004).
pub const ETH_P_RI2N: u16 = 0x1004;

/// Bytes of the RI2N header.
pub const HEADER_LEN: usize = 8;

/// Bytes of a heartbeat's payload, as sent (with the counts).
pub const HEARTBEAT_LEN: usize = 20;

/// Bytes of a sealed heartbeat's payload (with the counts and the counter).
pub const HEARTBEAT_SEALED_LEN: usize = 28;

/// Bytes of a sealed RI2N header (version 2).
pub const SEALED_LEN: usize = HEADER_LEN + SEAL_LEN;

/// Bytes of a heartbeat's payload without the counts (from a sender that
/// does not set `HB_COUNTS`).
pub const HEARTBEAT_MIN_LEN: usize = 8;

/// The format version of a device without a key.
pub const VERSION: u8 = 1;

/// The format version of a device with a key: sealed frames.
pub const VERSION_SEALED: u8 = 2;

/// The format version of a device in one-switch mode: the sender's ri2n
/// MAC follows the first eight bytes ([`ORIGIN_LEN`] bytes).
pub const VERSION_ONE_SWITCH: u8 = 3;

/// One-switch mode and sealed: the origin, then the seal.
pub const VERSION_ONE_SWITCH_SEALED: u8 = 4;

/// Bytes the origin (one-switch mode) adds: the sender's ri2n MAC, the
/// index of the sender's link the frame left on, and a zero byte.
pub const ORIGIN_LEN: usize = 8;

/// One-switch mode: who sent a frame, and on which of its links.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Origin {
    /// The sender's ri2n MAC.
    pub mac: [u8; 6],
    /// The sender's index of the link the frame left on: a frame pairs
    /// the sender's link `link` with the receiver's link of the same index,
    /// wherever the switch delivers it.
    pub link: u8,
}

/// The longest RI2N header: one-switch and sealed.
pub const MAX_HEADER_LEN: usize = HEADER_LEN + ORIGIN_LEN + SEAL_LEN;

/// Bytes of the RI2N header, sealed or not (two-switch mode).
pub const fn header_len(sealed: bool) -> usize {
    header_len_for(sealed, false)
}

/// Bytes of the RI2N header, sealed or not, in one-switch mode or not.
pub const fn header_len_for(sealed: bool, one_switch: bool) -> usize {
    HEADER_LEN + if one_switch { ORIGIN_LEN } else { 0 } + if sealed { SEAL_LEN } else { 0 }
}

/// A decoded header with what follows it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Decoded {
    /// The first eight bytes.
    pub header: Header,
    /// One-switch mode: the sender's ri2n MAC and link.
    pub origin: Option<Origin>,
    /// Sealed: epoch and tag.
    pub seal: Option<Seal>,
    /// Bytes of the whole header.
    pub len: usize,
}

/// What a frame carries.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u8)]
pub enum Kind {
    /// A unicast packet, numbered per destination peer and reordered.
    Data = 1,
    /// A broadcast or multicast packet, sent on every link, numbered per
    /// sender and de-duplicated rather than reordered.
    Bcast = 2,
    /// A heartbeat (§5.7): liveness, recovery and one-way failure feedback.
    Heartbeat = 3,
}

/// A decoded RI2N header.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Header {
    /// What the frame carries.
    pub kind: Kind,
    /// The original ethertype (0 in heartbeats).
    pub protocol: u16,
    /// The sequence number.
    pub seq: Seq,
}

/// What a sealed header adds: the sender's epoch and the tag.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Seal {
    /// The sender's epoch (its heartbeats carry the low 32 bits).
    pub epoch: u64,
    /// The tag (`auth.rs`).
    pub tag: [u8; TAG_LEN],
}

/// Why a frame was refused.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum DecodeError {
    /// Fewer bytes than the header (or the heartbeat payload) needs.
    Short,
    /// A version this code does not speak.
    Version(u8),
    /// A kind this code does not know.
    Kind(u8),
    /// One-switch mode: an origin that is a group or zero address.
    Origin,
}

impl DecodeError {
    /// The counter name and log word for this error.
    pub fn reason(self) -> &'static str {
        match self {
            DecodeError::Short => "short",
            DecodeError::Version(_) => "bad version",
            DecodeError::Kind(_) => "unknown kind",
            DecodeError::Origin => "group or zero origin MAC",
        }
    }
}

impl Header {
    /// Encodes into the first [`HEADER_LEN`] bytes of `out`.
    ///
    /// # Panics
    ///
    /// If `out` is shorter than [`HEADER_LEN`]; callers reserve the room.
    pub fn encode(&self, out: &mut [u8]) {
        out[0] = VERSION;
        out[1] = self.kind as u8;
        out[2..4].copy_from_slice(&self.protocol.to_be_bytes());
        out[4..8].copy_from_slice(&self.seq.0.to_be_bytes());
    }

    /// Encodes a sealed header into the first [`SEALED_LEN`] bytes of
    /// `out`, with the tag's bytes zero (the tag is computed over the
    /// first 16 bytes, then written: `auth::Msg`).
    ///
    /// # Panics
    ///
    /// If `out` is shorter than [`SEALED_LEN`].
    pub fn encode_sealed(&self, epoch: u64, out: &mut [u8]) {
        self.encode(out);
        out[0] = VERSION_SEALED;
        out[8..16].copy_from_slice(&epoch.to_be_bytes());
        out[16..SEALED_LEN].fill(0);
    }

    /// Encodes the header with the origin (one-switch mode) and, if
    /// `epoch` is given, a seal whose tag bytes are zero (written after:
    /// `auth::Msg` covers every byte before them). Returns the length.
    ///
    /// # Panics
    ///
    /// If `out` is shorter than [`MAX_HEADER_LEN`].
    pub fn encode_full(
        &self,
        origin: Option<&Origin>,
        epoch: Option<u64>,
        out: &mut [u8],
    ) -> usize {
        self.encode(out);
        out[0] = match (origin.is_some(), epoch.is_some()) {
            (false, false) => VERSION,
            (false, true) => VERSION_SEALED,
            (true, false) => VERSION_ONE_SWITCH,
            (true, true) => VERSION_ONE_SWITCH_SEALED,
        };
        let mut at = HEADER_LEN;
        if let Some(o) = origin {
            out[at..at + 6].copy_from_slice(&o.mac);
            out[at + 6] = o.link;
            out[at + 7] = 0;
            at += ORIGIN_LEN;
        }
        if let Some(e) = epoch {
            out[at..at + 8].copy_from_slice(&e.to_be_bytes());
            out[at + 8..at + SEAL_LEN].fill(0);
            at += SEAL_LEN;
        }
        at
    }

    /// Decodes the header at the start of `buf`, and its seal if the
    /// header is sealed (version 2); a one-switch header (versions 3, 4)
    /// is refused here: see [`Header::decode_full`].
    pub fn decode(buf: &[u8]) -> Result<(Header, Option<Seal>), DecodeError> {
        let d = Header::decode_full(buf)?;
        if d.origin.is_some() {
            return Err(DecodeError::Version(buf[0]));
        }
        Ok((d.header, d.seal))
    }

    /// Decodes a header of any version this code speaks.
    pub fn decode_full(buf: &[u8]) -> Result<Decoded, DecodeError> {
        if buf.len() < HEADER_LEN {
            return Err(DecodeError::Short);
        }
        let (one_switch, sealed) = match buf[0] {
            VERSION => (false, false),
            VERSION_SEALED => (false, true),
            VERSION_ONE_SWITCH => (true, false),
            VERSION_ONE_SWITCH_SEALED => (true, true),
            v => return Err(DecodeError::Version(v)),
        };
        let len = header_len_for(sealed, one_switch);
        if buf.len() < len {
            return Err(DecodeError::Short);
        }
        let origin = one_switch.then(|| {
            let mut mac = [0u8; 6];
            mac.copy_from_slice(&buf[HEADER_LEN..HEADER_LEN + 6]);
            Origin {
                mac,
                link: buf[HEADER_LEN + 6],
            }
        });
        let seal = sealed.then(|| {
            let mut tag = [0u8; TAG_LEN];
            tag.copy_from_slice(&buf[len - TAG_LEN..len]);
            let mut e = [0u8; 8];
            e.copy_from_slice(&buf[len - SEAL_LEN..len - TAG_LEN]);
            Seal {
                epoch: u64::from_be_bytes(e),
                tag,
            }
        });
        let kind = match buf[1] {
            1 => Kind::Data,
            2 => Kind::Bcast,
            3 => Kind::Heartbeat,
            k => return Err(DecodeError::Kind(k)),
        };
        let header = Header {
            kind,
            protocol: u16::from_be_bytes([buf[2], buf[3]]),
            seq: Seq(u32::from_be_bytes([buf[4], buf[5], buf[6], buf[7]])),
        };
        Ok(Decoded {
            header,
            origin,
            seal,
            len,
        })
    }
}

/// Heartbeat flag: the sender asks for an immediate heartbeat back on this
/// link (sent when a link comes back, so recovery need not wait an HBSPAN,
/// and in a probe round, when one link fell silent while another did not).
pub const HB_PROBE: u8 = 1 << 0;

/// Heartbeat flag: the frame counts follow (bytes 8..20), from which the
/// receiver learns its delivery ratio on the link.
pub const HB_COUNTS: u8 = 1 << 1;

/// Heartbeat flag: the sender's heartbeat counter follows the counts
/// (bytes 20..28; sealed heartbeats, which must carry both).
pub const HB_COUNTER: u8 = 1 << 2;

/// Heartbeat flag: the sender has the link this heartbeat left on out of
/// use toward the receiver for loss, and sends loss probes on it. The
/// receiver expects no data there, only probes and heartbeats, as far
/// apart as its `probe_shift` asks, and counts the sender among the peers
/// that probe it, toward that shift (`detector::node_probe_shift`).
/// Senders before it never set it; receivers before it ignore it.
pub const HB_LOSSY: u8 = 1 << 3;

/// The largest `probe_shift` a heartbeat carries or is taken with: loss
/// probes every 2.56 s, what 8,192 peers with a lossy link give
/// (`detector::loss_probe_every`); a larger one, forged, could not slow
/// our probes further.
pub const MAX_PROBE_SHIFT: u8 = 9;

/// A heartbeat's frame counts (wrapping).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct Counts {
    /// Frames the sender sent the receiver on this link before this one.
    pub tx: u32,
    /// `tx` of the last heartbeat the sender heard from the receiver here.
    pub echo_tx: u32,
    /// Frames the sender had received from the receiver here by then.
    pub echo_rx: u32,
}

/// A heartbeat's payload.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Heartbeat {
    /// The sender's incarnation: a new value means the peer restarted and
    /// its sequence numbers start again.
    pub epoch: u32,
    /// `HB_*` bits.
    pub flags: u8,
    /// The sender's index of the slave it went out on.
    pub link: u8,
    /// The sender's links that are unusable toward the receiver (bit per
    /// sender link index).
    pub down: u8,
    /// Loss probes to the sender's lossy links at most every
    /// `LOSS_PROBE_MS << probe_shift` ms (at most [`MAX_PROBE_SHIFT`]).
    pub probe_shift: u8,
    /// Frame counts on the link the heartbeat left on (`HB_COUNTS`).
    pub counts: Option<Counts>,
    /// The sender's heartbeat counter (`HB_COUNTER`, with the counts).
    pub counter: Option<u64>,
}

impl Heartbeat {
    /// Encodes into `out`: [`HEARTBEAT_SEALED_LEN`] bytes with counts and
    /// counter, [`HEARTBEAT_LEN`] with counts, [`HEARTBEAT_MIN_LEN`]
    /// without (a counter needs the counts). Returns the length.
    ///
    /// # Panics
    ///
    /// If `out` is shorter than that.
    pub fn encode(&self, out: &mut [u8]) -> usize {
        let mut flags = self.flags & !(HB_COUNTS | HB_COUNTER);
        if self.counts.is_some() {
            flags |= HB_COUNTS;
            if self.counter.is_some() {
                flags |= HB_COUNTER;
            }
        }
        out[0..4].copy_from_slice(&self.epoch.to_be_bytes());
        out[4] = flags;
        out[5] = self.link;
        out[6] = self.down;
        out[7] = self.probe_shift.min(MAX_PROBE_SHIFT);
        match self.counts {
            Some(c) => {
                out[8..12].copy_from_slice(&c.tx.to_be_bytes());
                out[12..16].copy_from_slice(&c.echo_tx.to_be_bytes());
                out[16..20].copy_from_slice(&c.echo_rx.to_be_bytes());
                match self.counter {
                    Some(n) => {
                        out[20..28].copy_from_slice(&n.to_be_bytes());
                        HEARTBEAT_SEALED_LEN
                    }
                    None => HEARTBEAT_LEN,
                }
            }
            None => HEARTBEAT_MIN_LEN,
        }
    }

    /// Decodes a heartbeat payload; unknown flag bits are ignored so that
    /// later versions may add some.
    pub fn decode(buf: &[u8]) -> Result<Heartbeat, DecodeError> {
        if buf.len() < HEARTBEAT_MIN_LEN {
            return Err(DecodeError::Short);
        }
        let be = |i: usize| u32::from_be_bytes([buf[i], buf[i + 1], buf[i + 2], buf[i + 3]]);
        let flags = buf[4];
        let counts = if flags & HB_COUNTS != 0 {
            if buf.len() < HEARTBEAT_LEN {
                return Err(DecodeError::Short);
            }
            Some(Counts {
                tx: be(8),
                echo_tx: be(12),
                echo_rx: be(16),
            })
        } else {
            None
        };
        let counter = if flags & HB_COUNTS != 0 && flags & HB_COUNTER != 0 {
            let b = buf
                .get(20..HEARTBEAT_SEALED_LEN)
                .ok_or(DecodeError::Short)?;
            let mut w = [0u8; 8];
            w.copy_from_slice(b);
            Some(u64::from_be_bytes(w))
        } else {
            None
        };
        let flags = flags & !(HB_COUNTS | HB_COUNTER);
        let probe_shift = buf[7].min(MAX_PROBE_SHIFT);
        Ok(Heartbeat {
            epoch: be(0),
            flags,
            link: buf[5],
            down: buf[6],
            probe_shift,
            counts,
            counter,
        })
    }
}

/// A data header's number (bytes 4..8).
fn seq_of(shim: &[u8]) -> u32 {
    u32::from_be_bytes([shim[4], shim[5], shim[6], shim[7]])
}

/// Late segmentation (`tx_gso`): makes `shim`, the header of a GSO
/// packet's first segment (version 1, 2 or 3), that of segment `index`:
/// its number `index` further on and, sealed, its tag anew over the
/// segment's addresses `addrs` (destination, source) under `key`. False
/// if it cannot be: a sealed header without a key, or one in one-switch
/// mode (whose tag covers the ri2n destination, which the frame does not
/// carry once it is sent to a peer's slave MAC).
pub fn shim_for_segment(shim: &mut [u8], index: u32, addrs: &[u8; 12], key: Option<&Key>) -> bool {
    if shim.len() < HEADER_LEN || shim[0] == VERSION_ONE_SWITCH_SEALED {
        return false;
    }
    let seq = seq_of(shim).wrapping_add(index);
    shim[4..8].copy_from_slice(&seq.to_be_bytes());
    if shim[0] == VERSION_SEALED {
        let (Some(k), true) = (key, shim.len() >= SEALED_LEN) else {
            return false;
        };
        let tag = Msg::new(addrs, shim, &[]).tag(k);
        shim[SEALED_LEN - TAG_LEN..SEALED_LEN].copy_from_slice(&tag);
    }
    true
}

/// GRO on receive: whether a frame to `addrs` whose header is `shim`
/// continues a held packet whose first frame's header was `held` and
/// which merged `count` frames: the same header but for the number, which
/// is next in line, and the tag. Sealed frames (`keys`: the device's, if
/// it has any) merge only with their tags verified, the held frame's with
/// its first follower's (GRO holds one per addresses): receive verifies
/// only a merged packet's first tag, and a forged head must not take
/// authentic frames down with it. Unsealed frames merge only on a device
/// without keys (one with keys refuses them).
pub fn shim_continues(
    held: &[u8],
    shim: &[u8],
    count: u32,
    addrs: &[u8; 12],
    keys: Option<&Keys>,
) -> bool {
    if held.len() != shim.len() || shim.len() < HEADER_LEN || held[..4] != shim[..4] {
        return false;
    }
    if seq_of(shim) != seq_of(held).wrapping_add(count) {
        return false;
    }
    match shim[0] {
        // (A plain header has nothing past the number to compare.)
        VERSION | VERSION_ONE_SWITCH => {
            keys.is_none() && (shim.len() == HEADER_LEN || held[8..] == shim[8..])
        }
        VERSION_SEALED if shim.len() == SEALED_LEN => {
            let tag_at = SEALED_LEN - TAG_LEN;
            let verified = |h: &[u8]| match (
                keys,
                h.get(tag_at..SEALED_LEN)
                    .and_then(|t| <[u8; TAG_LEN]>::try_from(t).ok()),
            ) {
                (Some(k), Some(tag)) => k.verify(&Msg::new(addrs, h, &[]), &tag),
                _ => false,
            };
            held[8..tag_at] == shim[8..tag_at] && verified(shim) && (count > 1 || verified(held))
        }
        _ => false,
    }
}
