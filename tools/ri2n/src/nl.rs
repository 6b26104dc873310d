// SPDX-License-Identifier: GPL-2.0

//! ri2n's generic netlink family from user space
//! (include/uapi/linux/ri2n.h, numbered by `ri2n_core::uapi`, the table
//! the driver fills its messages from): a device's dump decoded into
//! records ([`State`]), an event decoded, and the
//! requests that set parameters and keys.
//!
//! The decoders take parsed messages and are tested against replies
//! recorded in the lab (tests/data/*.nl); [`Conn`] is the socket.

use crate::{Peer, Record, State};
use neli::consts::nl::NlmF;
use neli::consts::nl::NlmsgerrAttr;
use neli::consts::socket::NlFamily;
use neli::err::SocketError;
use neli::genl::{AttrTypeBuilder, Genlmsghdr, GenlmsghdrBuilder, Nlattr, NlattrBuilder};
use neli::nl::{NlPayload, Nlmsghdr, NlmsghdrBuilder};
use neli::socket::synchronous::NlSocketHandle;
use neli::types::{Buffer, GenlBuffer, NlBuffer};
use neli::utils::Groups;
use neli::{FromBytesWithInput, ToBytes};
use ri2n_core::params::{Param, SPECS};
use ri2n_core::uapi::{self, attr, cmd, endpoint, event, peer, slave, EndpointState, Reason};
use std::collections::VecDeque;
use std::fmt;
use std::io::Cursor;

/// A message of the family, its attributes by number.
pub type Msg = Genlmsghdr<u8, u16>;
type Attr = Nlattr<u16, Buffer>;

/// Why messages are not a device's state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodeError(pub String);

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

fn bad(why: impl Into<String>) -> DecodeError {
    DecodeError(why.into())
}

fn ty(a: &Attr) -> u16 {
    *a.nla_type().nla_type()
}

fn payload(a: &Attr) -> &[u8] {
    a.nla_payload().as_ref()
}

/// An unsigned attribute of any width.
fn num(a: &Attr) -> Result<u64, DecodeError> {
    let b = payload(a);
    Ok(match b.len() {
        1 => u64::from(b[0]),
        2 => u64::from(u16::from_ne_bytes([b[0], b[1]])),
        4 => u64::from(u32::from_ne_bytes(b.try_into().unwrap())),
        8 => u64::from_ne_bytes(b.try_into().unwrap()),
        n => return Err(bad(format!("attribute {}: {n} bytes is no number", ty(a)))),
    })
}

/// A string attribute, without its NUL.
fn text(a: &Attr) -> String {
    let b = payload(a);
    let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
    String::from_utf8_lossy(&b[..end]).into_owned()
}

/// A MAC attribute as `aa:bb:cc:dd:ee:ff`.
fn mac(a: &Attr) -> Result<String, DecodeError> {
    let b = payload(a);
    if b.len() != 6 {
        return Err(bad(format!("attribute {}: a MAC is 6 bytes", ty(a))));
    }
    Ok(b.iter()
        .map(|x| format!("{x:02x}"))
        .collect::<Vec<_>>()
        .join(":"))
}

/// The attributes nested in `a`.
fn nested(a: &Attr) -> Result<Vec<Attr>, DecodeError> {
    let h = a
        .get_attr_handle::<u16>()
        .map_err(|e| bad(format!("attribute {}: {e}", ty(a))))?;
    Ok(h.iter().cloned().collect())
}

/// Adds `a`, a u64 of a nest's list from [`uapi::U64_FIRST`] on, as
/// `names` names it; one this tool does not know as `attrN`.
fn push_u64(r: &mut Record, a: &Attr, first: u16, names: &[&str]) -> Result<(), DecodeError> {
    let i = ty(a).checked_sub(first).map(usize::from);
    let v = num(a)?.to_string();
    match i.and_then(|i| names.get(i)) {
        Some(n) => r.pairs.push((n.to_string(), v)),
        None => r.pairs.push((format!("attr{}", ty(a)), v)),
    }
    Ok(())
}

fn record(kind: &str) -> Record {
    Record {
        kind: kind.into(),
        pairs: Vec::new(),
    }
}

fn pair(r: &mut Record, k: &str, v: impl ToString) {
    r.pairs.push((k.into(), v.to_string()));
}

fn state_name(n: u64) -> &'static str {
    u8::try_from(n)
        .ok()
        .and_then(EndpointState::from_u8)
        .map_or("unknown", EndpointState::name)
}

/// Decodes a dump of `RI2N_CMD_GET_DEVICE`: the device's message first,
/// then messages of peers, into records (`ri2n show --format records`),
/// which the kernel wrote itself before it had the family: the same, key
/// for key.
pub fn decode_dump(msgs: &[Msg]) -> Result<State, DecodeError> {
    let (first, rest) = msgs.split_first().ok_or_else(|| bad("an empty dump"))?;
    let mut head = record("ri2n-state");
    pair(&mut head, "version", 1);
    let mut clock = record("clock");
    let mut device = record("device");
    let mut params = record("params");
    let mut slaves = Vec::new();
    let mut counters = record("counters");
    let mut auth = record("auth");
    let (mut keys_on, mut key_id, mut accept_id) = (0, None, None);
    let mut summary = record("peers");
    let mut dev_fields: Vec<(u16, String)> = Vec::new();
    let mut param_values = vec![None; SPECS.len()];
    for a in first.attrs().iter() {
        match ty(a) {
            attr::IFNAME => dev_fields.push((0, text(a))),
            attr::MAC => dev_fields.push((1, mac(a)?)),
            attr::MTU => dev_fields.push((2, num(a)?.to_string())),
            attr::UP => {
                let up = if num(a)? != 0 { "up" } else { "down" };
                dev_fields.push((3, up.into()))
            }
            attr::EPOCH64 => dev_fields.push((4, format!("{:x}", num(a)?))),
            attr::CLOCK_MS => pair(&mut clock, "ms", num(a)?),
            attr::MONO_MS => pair(&mut clock, "mono_ms", num(a)?),
            uapi::IFLA_VERSION => pair(&mut head, "protocol", num(a)?),
            attr::KEYS_ON => keys_on = num(a)?,
            attr::KEY_ID => key_id = Some(num(a)?),
            attr::ACCEPT_ID => accept_id = Some(num(a)?),
            attr::SLAVE => {
                let mut r = record("slave");
                for s in nested(a)? {
                    match ty(&s) {
                        slave::LINK => pair(&mut r, "link", num(&s)?),
                        slave::NAME => pair(&mut r, "name", text(&s)),
                        slave::CARRIER => {
                            let c = if num(&s)? != 0 { "up" } else { "down" };
                            pair(&mut r, "carrier", c)
                        }
                        _ => push_u64(&mut r, &s, uapi::U64_FIRST, &slave::U64)?,
                    }
                }
                slaves.push(r);
            }
            attr::COUNTERS => {
                for c in nested(a)? {
                    push_u64(&mut counters, &c, 1, &uapi::COUNTERS)?;
                }
            }
            attr::PEERS_SUMMARY => {
                for c in nested(a)? {
                    push_u64(&mut summary, &c, 1, &uapi::PEERS_SUMMARY)?;
                }
            }
            t => {
                if let Some((i, _)) = Param::ALL.iter().enumerate().find(|(_, p)| p.attr() == t) {
                    param_values[i] = Some(num(a)?);
                }
            }
        }
    }
    dev_fields.sort_by_key(|f| f.0);
    for (i, v) in dev_fields {
        pair(
            &mut device,
            ["name", "mac", "mtu", "state", "epoch"][usize::from(i)],
            v,
        );
    }
    for (spec, v) in SPECS.iter().zip(param_values) {
        if let Some(v) = v {
            pair(&mut params, spec.name, v);
        }
    }
    let id = |v: Option<u64>| v.map_or("none".to_string(), |v| format!("{v:08x}"));
    pair(&mut auth, "state", if keys_on != 0 { "on" } else { "off" });
    pair(&mut auth, "key_id", id(key_id));
    pair(&mut auth, "accept_id", id(accept_id));
    if device.get("name").is_none() {
        return Err(bad("the first message names no device"));
    }
    let names: Vec<(u64, String)> = slaves
        .iter()
        .map(|s| (s.num("link"), s.str("name").to_string()))
        .collect();
    let mut peers: Vec<Peer> = Vec::new();
    for m in rest {
        for a in m.attrs().iter().filter(|a| ty(a) == attr::PEER) {
            let p = decode_peer(a, &names)?;
            // A peer seen twice (the dump was interrupted): the later.
            peers.retain(|q| q.mac() != p.mac());
            peers.push(p);
        }
    }
    let clock_ms = clock.num("ms");
    Ok(State {
        version: 1,
        head,
        clock_ms,
        clock,
        device,
        params,
        slaves,
        counters,
        auth: Some(auth),
        peers_summary: summary,
        peers,
        others: Vec::new(),
    })
}

/// One `RI2N_A_PEER` nest; `names`: the slaves' names by link.
fn decode_peer(a: &Attr, names: &[(u64, String)]) -> Result<Peer, DecodeError> {
    let mut rec = record("peer");
    let mut endpoints = Vec::new();
    let mut mac_s = String::new();
    for f in nested(a)? {
        match ty(&f) {
            peer::MAC => {
                mac_s = mac(&f)?;
                pair(&mut rec, "mac", &mac_s);
            }
            peer::EPOCH => pair(&mut rec, "epoch", format!("{:x}", num(&f)?)),
            peer::ENDPOINT => endpoints.push(nested(&f)?),
            _ => push_u64(&mut rec, &f, uapi::U64_FIRST, &peer::U64)?,
        }
    }
    if mac_s.is_empty() {
        return Err(bad("a peer without its MAC"));
    }
    let mut eps = Vec::new();
    for attrs in endpoints {
        let mut r = record("endpoint");
        pair(&mut r, "peer", &mac_s);
        let mut slave_mac = None;
        for f in &attrs {
            match ty(f) {
                endpoint::LINK => {
                    let l = num(f)?;
                    pair(&mut r, "link", l);
                    let name = names.iter().find(|n| n.0 == l).map_or("?", |n| &n.1);
                    pair(&mut r, "slave", name);
                }
                endpoint::STATE => pair(&mut r, "state", state_name(num(f)?)),
                endpoint::PEER_SLAVE_MAC => slave_mac = Some(mac(f)?),
                _ => push_u64(&mut r, f, uapi::U64_FIRST, &endpoint::U64)?,
            }
        }
        if let Some(m) = slave_mac {
            pair(&mut r, "peer_slave_mac", m);
        }
        eps.push(r);
    }
    Ok(Peer {
        rec,
        endpoints: eps,
    })
}

/// One transition, as the kernel sent it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Event {
    pub ifindex: u32,
    pub dev: String,
    pub reason: Option<Reason>,
    /// Wall clock, ns since the epoch.
    pub time_ns: u64,
    pub peer: Option<String>,
    pub link: Option<u32>,
    pub slave: Option<String>,
    /// The endpoint's state before and after.
    pub states: Option<(&'static str, &'static str)>,
    /// Events the device dropped so far.
    pub dropped: u64,
}

/// Decodes an `RI2N_CMD_EVENT` message.
pub fn decode_event(m: &Msg) -> Result<Event, DecodeError> {
    let mut e = Event {
        ifindex: 0,
        dev: String::new(),
        reason: None,
        time_ns: 0,
        peer: None,
        link: None,
        slave: None,
        states: None,
        dropped: 0,
    };
    let (mut old, mut new) = (None, None);
    for a in m.attrs().iter() {
        match ty(a) {
            attr::IFINDEX => e.ifindex = num(a)? as u32,
            attr::IFNAME => e.dev = text(a),
            attr::EVENT => {
                for f in nested(a)? {
                    match ty(&f) {
                        event::REASON => {
                            e.reason = u8::try_from(num(&f)?).ok().and_then(Reason::from_u8)
                        }
                        event::TIME_NS => e.time_ns = num(&f)?,
                        event::PEER => e.peer = Some(mac(&f)?),
                        event::LINK => e.link = Some(num(&f)? as u32),
                        event::SLAVE => e.slave = Some(text(&f)),
                        event::OLD => old = Some(state_name(num(&f)?)),
                        event::NEW => new = Some(state_name(num(&f)?)),
                        event::DROPPED => e.dropped = num(&f)?,
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    if let (Some(o), Some(n)) = (old, new) {
        e.states = Some((o, n));
    }
    if e.dev.is_empty() {
        return Err(bad("an event that names no device"));
    }
    Ok(e)
}

/// Messages as recorded for the tests: each a u32 length (little endian)
/// and the message from its generic netlink header on, as the kernel sent
/// it.
pub fn encode_recording(msgs: &[Msg]) -> Vec<u8> {
    let mut out = Vec::new();
    for m in msgs {
        let mut c = Cursor::new(Vec::new());
        // Writing to memory cannot fail.
        let _ = m.to_bytes(&mut c);
        let b = c.into_inner();
        out.extend_from_slice(&(b.len() as u32).to_le_bytes());
        out.extend_from_slice(&b);
    }
    out
}

/// The length-prefixed pieces of a recording, each a `u32` length (little
/// endian) and that many bytes.
fn pieces(mut b: &[u8]) -> impl Iterator<Item = Result<&[u8], DecodeError>> {
    std::iter::from_fn(move || {
        if b.is_empty() {
            return None;
        }
        let Some(len) = b
            .get(..4)
            .map(|l| u32::from_le_bytes(l.try_into().unwrap()) as usize)
        else {
            b = &[];
            return Some(Err(bad("a recording cut in a length")));
        };
        let Some(m) = b.get(4..4 + len) else {
            b = &[];
            return Some(Err(bad("a recording cut in a piece")));
        };
        b = &b[4 + len..];
        Some(Ok(m))
    })
}

/// The messages of a recording ([`encode_recording`]).
pub fn decode_recording(b: &[u8]) -> Result<Vec<Msg>, DecodeError> {
    pieces(b)
        .map(|m| {
            let m = m?;
            Msg::from_bytes_with_input(&mut Cursor::new(m), m.len())
                .map_err(|e| bad(format!("a recorded message: {e}")))
        })
        .collect()
}

/// What a dump was made of, for `RI2N_DUMP_STATS`: its messages, their
/// sizes, its peers and the peers in it more than once.
pub fn dump_stats(msgs: &[Msg]) -> String {
    let sizes: Vec<usize> = msgs
        .iter()
        .map(|m| {
            let mut c = Cursor::new(Vec::new());
            let _ = m.to_bytes(&mut c);
            c.into_inner().len()
        })
        .collect();
    let mut macs: Vec<String> = Vec::new();
    for m in msgs.iter().skip(1) {
        for a in m.attrs().iter().filter(|a| ty(a) == attr::PEER) {
            if let Ok(f) = nested(a) {
                if let Some(m) = f.iter().find(|f| ty(f) == peer::MAC) {
                    macs.push(mac(m).unwrap_or_default());
                }
            }
        }
    }
    let n = macs.len();
    macs.sort();
    macs.dedup();
    format!(
        "{} messages, {} bytes, largest {} bytes, {} peers, {} twice",
        msgs.len(),
        sizes.iter().sum::<usize>(),
        sizes.iter().max().copied().unwrap_or(0),
        n,
        n - macs.len()
    )
}

/// With `RI2N_RECORD=FILE`, appends `msgs` to FILE (for the tests).
fn record_to_env(msgs: &[Msg]) {
    if let Some(path) = std::env::var_os("RI2N_RECORD") {
        append(&path, &encode_recording(msgs));
    }
}

fn append(path: &std::ffi::OsStr, bytes: &[u8]) {
    use std::io::Write;
    let f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path);
    if let Ok(mut f) = f {
        let _ = f.write_all(bytes);
    }
}

/// One buffer of replies as received, whole netlink messages (headers,
/// acks and errors too), length-prefixed as [`encode_recording`]'s.
fn encode_replies(msgs: &NlBuffer<u16, Msg>) -> Vec<u8> {
    let mut c = Cursor::new(Vec::new());
    let _ = msgs.to_bytes(&mut c);
    let b = c.into_inner();
    let mut out = (b.len() as u32).to_le_bytes().to_vec();
    out.extend_from_slice(&b);
    out
}

/// The buffers of replies in a recording of them (`RI2N_RECORD_REPLIES`).
pub fn decode_replies(b: &[u8]) -> Result<Vec<NlBuffer<u16, Msg>>, DecodeError> {
    pieces(b)
        .map(|m| {
            let m = m?;
            NlBuffer::from_bytes_with_input(&mut Cursor::new(m), m.len())
                .map_err(|e| bad(format!("a recorded reply: {e}")))
        })
        .collect()
}

/// Takes one buffer of replies to request `seq` (sent with `flags`): its
/// messages go to `out`; returns whether the reply is whole (the dump's
/// end, the ack, or the one answer), or the kernel's refusal with its
/// extended ack's message.
pub fn take_reply(
    msgs: NlBuffer<u16, Msg>,
    seq: u32,
    flags: NlmF,
    out: &mut Vec<Nlmsghdr<u16, Msg>>,
) -> Result<bool, NlError> {
    let dump = flags.contains(NlmF::DUMP);
    let ack = flags.contains(NlmF::ACK);
    for m in msgs {
        if *m.nl_seq() != seq {
            continue;
        }
        match m.nl_payload() {
            NlPayload::Err(e) => {
                return Err(NlError::Refused(Refused {
                    errno: -*e.error(),
                    msg: ext_ack_msg(e.ext_ack()),
                }))
            }
            NlPayload::DumpExtAck(e) if *e.error() != 0 => {
                return Err(NlError::Refused(Refused {
                    errno: -*e.error(),
                    msg: ext_ack_msg(e.ext_ack()),
                }))
            }
            NlPayload::Ack(_) | NlPayload::DumpExtAck(_) => return Ok(true),
            NlPayload::Empty if *m.nl_type() == NLMSG_DONE => return Ok(true),
            NlPayload::Payload(_) => {
                out.push(m);
                if !dump && !ack {
                    return Ok(true);
                }
            }
            NlPayload::Empty => {}
        }
    }
    Ok(false)
}

/// A key operation of `set`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyOp {
    /// Seal (or also accept) with this key.
    Set([u8; uapi::KEY_LEN]),
    /// No key.
    None,
}

/// What the kernel said of a refused request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refused {
    /// The error number.
    pub errno: i32,
    /// Its extended ack's message, if any.
    pub msg: Option<String>,
}

impl fmt::Display for Refused {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let e = std::io::Error::from_raw_os_error(self.errno);
        match &self.msg {
            Some(m) => write!(f, "{m} ({e})"),
            None => write!(f, "{e}"),
        }
    }
}

/// A failure talking to the kernel.
#[derive(Debug)]
pub enum NlError {
    /// No generic netlink family `ri2n`: the module is not loaded.
    NoFamily,
    /// The request was refused.
    Refused(Refused),
    /// Events were lost: the socket's buffer overflowed.
    Lost,
    /// Anything else.
    Other(String),
}

impl fmt::Display for NlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NlError::NoFamily => write!(
                f,
                "no generic netlink family {} (is the ri2n module loaded?)",
                uapi::GENL_NAME
            ),
            NlError::Refused(r) => r.fmt(f),
            NlError::Lost => write!(f, "events lost: the socket's buffer overflowed"),
            NlError::Other(s) => f.write_str(s),
        }
    }
}

/// The message of an extended ack's attributes (`NLMSGERR_ATTR_MSG`).
fn ext_ack_msg(attrs: &GenlBuffer<NlmsgerrAttr, Buffer>) -> Option<String> {
    attrs
        .iter()
        .find(|a| *a.nla_type().nla_type() == NlmsgerrAttr::Msg)
        .map(|a| {
            let b: &[u8] = a.nla_payload().as_ref();
            let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
            String::from_utf8_lossy(&b[..end]).into_owned()
        })
}

fn u32_attr(t: u16, v: u32) -> Result<Attr, NlError> {
    bytes_attr(t, &v.to_ne_bytes())
}

fn bytes_attr(t: u16, v: &[u8]) -> Result<Attr, NlError> {
    NlattrBuilder::default()
        .nla_type(
            AttrTypeBuilder::default()
                .nla_type(t)
                .build()
                .map_err(other)?,
        )
        .nla_payload(Buffer::from(v))
        .build()
        .map_err(other)
}

fn other(e: impl fmt::Display) -> NlError {
    NlError::Other(e.to_string())
}

/// The device attribute of a request: its name, with the NUL.
fn name_attr(dev: &str) -> Result<Attr, NlError> {
    let mut b = dev.as_bytes().to_vec();
    b.push(0);
    bytes_attr(attr::IFNAME, &b)
}

/// A socket of the family, for requests: blocking, one request at a time.
pub struct Conn {
    sock: NlSocketHandle,
    family: u16,
    /// The family's multicast groups, by name.
    groups: Vec<(String, u32)>,
    seq: std::cell::Cell<u32>,
}

/// `NLMSG_DONE`.
const NLMSG_DONE: u16 = 3;

/// `genetlink`'s controller (`GENL_ID_CTRL`), its `CTRL_CMD_GETFAMILY` and
/// the attributes of its reply (linux/genetlink.h).
const GENL_ID_CTRL: u16 = 0x10;
const CTRL_CMD_GETFAMILY: u8 = 3;
const CTRL_ATTR_FAMILY_ID: u16 = 1;
const CTRL_ATTR_FAMILY_NAME: u16 = 2;
const CTRL_ATTR_MCAST_GROUPS: u16 = 7;
const CTRL_ATTR_MCAST_GRP_NAME: u16 = 1;
const CTRL_ATTR_MCAST_GRP_ID: u16 = 2;

/// How often a dump interrupted by peers coming and going is tried again.
const DUMP_TRIES: usize = 5;

impl Conn {
    /// Opens a socket and finds the family.
    pub fn open() -> Result<Conn, NlError> {
        let sock =
            NlSocketHandle::connect(NlFamily::Generic, None, Groups::empty()).map_err(other)?;
        sock.enable_ext_ack(true).map_err(other)?;
        let mut c = Conn {
            sock,
            family: GENL_ID_CTRL,
            groups: Vec::new(),
            seq: std::cell::Cell::new(0),
        };
        let mut name = uapi::GENL_NAME.as_bytes().to_vec();
        name.push(0);
        let reply = c
            .transact(
                GENL_ID_CTRL,
                CTRL_CMD_GETFAMILY,
                2,
                vec![bytes_attr(CTRL_ATTR_FAMILY_NAME, &name)?],
                NlmF::empty(),
            )
            .map_err(|e| match e {
                NlError::Refused(r) if r.errno == libc::ENOENT => NlError::NoFamily,
                e => e,
            })?;
        let m = reply
            .first()
            .and_then(|m| m.get_payload())
            .ok_or(NlError::NoFamily)?;
        for a in m.attrs().iter() {
            match ty(a) {
                CTRL_ATTR_FAMILY_ID => c.family = num(a).map_err(other)? as u16,
                CTRL_ATTR_MCAST_GROUPS => {
                    for g in nested(a).map_err(other)? {
                        let f = nested(&g).map_err(other)?;
                        let name = f
                            .iter()
                            .find(|f| ty(f) == CTRL_ATTR_MCAST_GRP_NAME)
                            .map(text);
                        let id = f.iter().find(|f| ty(f) == CTRL_ATTR_MCAST_GRP_ID).map(num);
                        if let (Some(n), Some(Ok(id))) = (name, id) {
                            c.groups.push((n, id as u32));
                        }
                    }
                }
                _ => {}
            }
        }
        if c.family == GENL_ID_CTRL {
            return Err(NlError::NoFamily);
        }
        Ok(c)
    }

    /// Sends command `c` of family `ty` and reads the reply to its end:
    /// the messages of a dump, an answer, or an ack.
    fn transact(
        &self,
        ty: u16,
        c: u8,
        version: u8,
        attrs: Vec<Attr>,
        flags: NlmF,
    ) -> Result<Vec<Nlmsghdr<u16, Msg>>, NlError> {
        let msg = GenlmsghdrBuilder::<u8, u16>::default()
            .cmd(c)
            .version(version)
            .attrs(attrs.into_iter().collect::<GenlBuffer<u16, Buffer>>())
            .build()
            .map_err(other)?;
        let seq = self.seq.get().wrapping_add(1);
        self.seq.set(seq);
        let req = NlmsghdrBuilder::default()
            .nl_type(ty)
            .nl_flags(NlmF::REQUEST | flags)
            .nl_seq(seq)
            .nl_payload(NlPayload::Payload(msg))
            .build()
            .map_err(other)?;
        self.sock.send(&req).map_err(other)?;
        let mut out = Vec::new();
        loop {
            let (msgs, _) = self.sock.recv_all::<u16, Msg>().map_err(other)?;
            if let Some(path) = std::env::var_os("RI2N_RECORD_REPLIES") {
                append(&path, &encode_replies(&msgs));
            }
            if take_reply(msgs, seq, flags, &mut out)? {
                return Ok(out);
            }
        }
    }

    fn request(
        &self,
        c: u8,
        attrs: Vec<Attr>,
        flags: NlmF,
    ) -> Result<Vec<Nlmsghdr<u16, Msg>>, NlError> {
        self.transact(self.family, c, uapi::GENL_VERSION, attrs, flags)
    }

    /// The messages of one whole dump of `dev` (tried again while peers
    /// came and went during it), or `None` if there is no such device.
    pub fn dump_raw(&self, dev: &str) -> Result<Option<Vec<Msg>>, NlError> {
        let mut last = Vec::new();
        for _ in 0..DUMP_TRIES {
            let r = self.request(cmd::GET_DEVICE, vec![name_attr(dev)?], NlmF::DUMP);
            let msgs = match r {
                // No such device; or no such family any more, or its
                // module going (a dump cannot hold it): the devices go
                // with it.
                Err(NlError::Refused(r))
                    if [libc::ENODEV, libc::ENOENT, libc::EPROTONOSUPPORT].contains(&r.errno) =>
                {
                    return Ok(None)
                }
                r => r?,
            };
            let intr = msgs.iter().any(|m| m.nl_flags().contains(NlmF::DUMP_INTR));
            last = msgs
                .into_iter()
                .filter_map(|m| m.get_payload().cloned())
                .collect();
            if std::env::var_os("RI2N_DUMP_STATS").is_some() {
                eprintln!(
                    "ri2n: dump of {dev}: {}, interrupted {}",
                    dump_stats(&last),
                    if intr { "yes" } else { "no" }
                );
            }
            if !intr {
                break;
            }
        }
        record_to_env(&last);
        Ok(Some(last))
    }

    /// `dev`'s state, or `None` if there is no such device.
    pub fn dump(&self, dev: &str) -> Result<Option<State>, NlError> {
        match self.dump_raw(dev)? {
            None => Ok(None),
            Some(msgs) => decode_dump(&msgs)
                .map(Some)
                .map_err(|e| other(format!("{dev}: {e}"))),
        }
    }

    /// Sets `params` (attribute, value), all or none, then the keys.
    pub fn set(
        &self,
        dev: &str,
        params: &[(u16, u32)],
        seal: Option<KeyOp>,
        accept: Option<KeyOp>,
    ) -> Result<(), NlError> {
        let mut attrs = vec![name_attr(dev)?];
        for &(t, v) in params {
            attrs.push(u32_attr(t, v)?);
        }
        for (op, set, none) in [
            (seal, attr::KEY, attr::KEY_NONE),
            (accept, attr::KEY_ACCEPT, attr::ACCEPT_NONE),
        ] {
            match op {
                Some(KeyOp::Set(k)) => attrs.push(bytes_attr(set, &k)?),
                Some(KeyOp::None) => attrs.push(bytes_attr(none, &[])?),
                None => {}
            }
        }
        self.request(cmd::SET_DEVICE, attrs, NlmF::ACK).map(|_| ())
    }
}

/// A socket subscribed to the group `events`: a blocking one of its own,
/// so that a listener sleeps in the kernel until an event comes.
pub struct Events {
    sock: NlSocketHandle,
    pending: VecDeque<Msg>,
}

impl Events {
    /// Subscribes, finding the group through `conn`.
    pub fn subscribe(conn: &Conn) -> Result<Events, NlError> {
        let id = conn
            .groups
            .iter()
            .find(|g| g.0 == uapi::MCGRP_EVENTS)
            .map(|g| g.1)
            .ok_or_else(|| other("the family has no group events"))?;
        let sock =
            NlSocketHandle::connect(NlFamily::Generic, None, Groups::empty()).map_err(other)?;
        sock.add_mcast_membership(Groups::new_groups(&[id]))
            .map_err(other)?;
        Ok(Events {
            sock,
            pending: VecDeque::new(),
        })
    }

    /// The next event message (blocks until there is one).
    pub fn next_event(&mut self) -> Result<Msg, NlError> {
        loop {
            if let Some(m) = self.pending.pop_front() {
                record_to_env(std::slice::from_ref(&m));
                return Ok(m);
            }
            let (msgs, _) = self.sock.recv_all::<u16, Msg>().map_err(|e| match e {
                SocketError::Io(e) if e.raw_os_error() == Some(libc::ENOBUFS) => NlError::Lost,
                e => other(e),
            })?;
            for m in msgs {
                if let Some(p) = m.get_payload().filter(|p| *p.cmd() == cmd::EVENT) {
                    self.pending.push_back(p.clone());
                }
            }
        }
    }
}

/// The ri2n devices of this network namespace: those with a `ri2n`
/// directory of parameters in sysfs.
pub fn devices() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir("/sys/class/net")
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| std::path::Path::new(&format!("/sys/class/net/{n}/ri2n")).is_dir())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}
