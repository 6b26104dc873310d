// SPDX-License-Identifier: GPL-2.0

//! Generic netlink families: a driver's commands, each a `do` or a dump,
//! and its multicast groups.
//!
//! A driver implements [`Commands`] and keeps a [`Family`] in a `static`:
//! memory that a multicast may reach from any context, registered or not.
//! [`Family::register`] registers it for as long as the returned
//! [`Registration`] lives. The core parses every request against the policy
//! built from [`Commands::ATTRS`] before the driver sees it, strictly: an
//! attribute the policy does not know is refused, as is a request that
//! carries a read-only one.

use super::bindings;
use super::device::{Device, ExtAck, NlMsg};
use core::ffi::c_void;
use core::marker::PhantomData;
use core::mem::MaybeUninit;
use core::ptr::NonNull;
use core::sync::atomic::{AtomicU8, Ordering};
use kernel::error::to_result;
use kernel::prelude::*;
use kernel::sync::aref::ARef;
use kernel::types::Opaque;
use kernel::ThisModule;

/// What a top-level attribute of a request may be.
#[derive(Clone, Copy)]
pub enum Attr {
    /// No attribute has this number: a request carrying it is refused.
    Reserved,
    /// The kernel sends it, never takes it: a request carrying it is
    /// refused with this message.
    ReadOnly(&'static CStr),
    /// A u8.
    U8,
    /// A u32.
    U32,
    /// Present or not.
    Flag,
    /// A NUL-terminated string of at most this many bytes before the NUL.
    String(u16),
    /// Exactly this many bytes.
    Bytes(u16),
}

/// Who may run a command.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Perm {
    /// Anyone who can open a netlink socket.
    Anyone,
    /// `CAP_NET_ADMIN` over the requester's network namespace
    /// (`GENL_UNS_ADMIN_PERM`, the rule `ip link set` follows).
    NetAdmin,
}

/// One command of a family.
pub struct Op {
    /// Its number.
    pub cmd: u8,
    /// A dump (`NLM_F_DUMP`), or else a `do`.
    pub dump: bool,
    /// Who may run it.
    pub perm: Perm,
}

/// A driver's generic netlink family.
pub trait Commands: Sized + Sync + 'static {
    /// The family's name, as `genl-ctrl-list` shows it.
    const NAME: &'static CStr;
    /// Its version.
    const VERSION: u8;
    /// The kind of attribute `i + 1`, up to the highest.
    const ATTRS: &'static [Attr];
    /// The commands, by number, lowest first.
    const OPS: &'static [Op];
    /// The multicast groups: group `i` is `GROUPS[i]`.
    const GROUPS: &'static [&'static CStr];

    /// Runs `do` command `cmd` (process context; it may sleep).
    fn doit(cmd: u8, req: &Request<'_>) -> Result;

    /// Adds the next messages of dump `cmd`, as many as fit; adding none
    /// ends the dump (process context; it may sleep).
    fn dumpit(cmd: u8, dump: &mut Dump<'_>) -> Result;
}

/// A family, in a `static`.
///
/// # Invariants
///
/// `raw` is written only by [`Family::register`] in state [`REGISTERING`],
/// before the core sees it; from then on the core owns it, until
/// [`Registration`]'s drop unregisters it. The state is [`LIVE`] exactly
/// while the family is registered and not being unregistered: only then
/// are messages made and sent ([`Family::message`], `has_listeners`),
/// since the core frees its multicast groups' numbers at unregistration.
pub struct Family<T> {
    raw: Opaque<bindings::genl_family>,
    state: AtomicU8,
    _t: PhantomData<T>,
}

/// [`Family`]'s states.
const UNREGISTERED: u8 = 0;
const REGISTERING: u8 = 1;
const LIVE: u8 = 2;

// SAFETY: The core serialises its own use of `raw`; ours is confined to
// registration (invariant).
unsafe impl<T: Commands> Sync for Family<T> {}

impl<T: Commands> Family<T> {
    /// An unregistered family.
    #[allow(clippy::new_without_default)]
    pub const fn new() -> Self {
        Family {
            raw: Opaque::zeroed(),
            state: AtomicU8::new(UNREGISTERED),
            _t: PhantomData,
        }
    }

    /// Registers the family, owned by `module`; `EBUSY` if it is already.
    pub fn register(&'static self, module: &'static ThisModule) -> Result<Registration<T>> {
        if self
            .state
            .compare_exchange(
                UNREGISTERED,
                REGISTERING,
                Ordering::AcqRel,
                Ordering::Acquire,
            )
            .is_err()
        {
            return Err(EBUSY);
        }
        let r = Self::tables().and_then(|(policy, ops, groups)| {
            // SAFETY: In state REGISTERING, which only this call left
            // UNREGISTERED for: the core does not know `raw`, and nothing
            // else writes it. The tables it points at are heap buffers
            // that stay where they are when the vectors move into the
            // `Registration`, which unregisters the family before they go.
            unsafe {
                let f = self.raw.get();
                f.write(MaybeUninit::zeroed().assume_init());
                copy_name(&mut (*f).name, T::NAME);
                (*f).version = u32::from(T::VERSION);
                (*f).maxattr = T::ATTRS.len() as u32;
                (*f).set_netnsok(1);
                (*f).policy = policy.as_ptr();
                (*f).split_ops = ops.as_ptr();
                (*f).n_split_ops = ops.len() as u8;
                (*f).mcgrps = groups.as_ptr();
                (*f).n_mcgrps = groups.len() as u8;
                (*f).module = module.as_ptr().cast();
                to_result(bindings::genl_register_family(f))?;
            }
            Ok(Registration {
                family: self,
                _policy: policy,
                _ops: ops,
                _groups: groups,
            })
        });
        let to = if r.is_ok() { LIVE } else { UNREGISTERED };
        self.state.store(to, Ordering::Release);
        r
    }

    /// The policy, the ops and the groups of `T`.
    #[allow(clippy::type_complexity)]
    fn tables() -> Result<(
        KVec<bindings::nla_policy>,
        KVec<bindings::genl_split_ops>,
        KVec<bindings::genl_multicast_group>,
    )> {
        build_assert!(T::OPS.len() < 256 && T::GROUPS.len() < 256);
        let mut policy = KVec::with_capacity(T::ATTRS.len() + 1, GFP_KERNEL)?;
        // SAFETY: All-zero is a valid entry (`NLA_UNSPEC`, no validation).
        let zero: bindings::nla_policy = unsafe { MaybeUninit::zeroed().assume_init() };
        policy.push(zero, GFP_KERNEL)?;
        for a in T::ATTRS {
            let mut e = zero;
            match *a {
                Attr::Reserved => {}
                Attr::ReadOnly(msg) => {
                    e.type_ = bindings::NLA_REJECT as u8;
                    e.__bindgen_anon_1.reject_message = msg.as_char_ptr();
                }
                Attr::U8 => e.type_ = bindings::NLA_U8 as u8,
                Attr::U32 => e.type_ = bindings::NLA_U32 as u8,
                Attr::Flag => e.type_ = bindings::NLA_FLAG as u8,
                Attr::String(max) => {
                    e.type_ = bindings::NLA_NUL_STRING as u8;
                    e.len = max;
                }
                Attr::Bytes(len) => {
                    // NLA_POLICY_EXACT_LEN.
                    e.type_ = bindings::NLA_BINARY as u8;
                    e.validation_type = bindings::nla_policy_validation_NLA_VALIDATE_RANGE as u8;
                    e.__bindgen_anon_1.__bindgen_anon_1 =
                        bindings::nla_policy__bindgen_ty_1__bindgen_ty_1 {
                            min: len as i16,
                            max: len as i16,
                        };
                }
            }
            policy.push(e, GFP_KERNEL)?;
        }
        let mut ops = KVec::with_capacity(T::OPS.len(), GFP_KERNEL)?;
        for op in T::OPS {
            // SAFETY: All-zero is a valid op: no callback, no policy.
            let mut o: bindings::genl_split_ops = unsafe { MaybeUninit::zeroed().assume_init() };
            o.cmd = op.cmd;
            o.maxattr = T::ATTRS.len() as u32;
            // Complete: its heap buffer stays put when the vector moves.
            o.policy = policy.as_ptr();
            let perm = match op.perm {
                Perm::Anyone => 0,
                Perm::NetAdmin => bindings::GENL_UNS_ADMIN_PERM,
            };
            if op.dump {
                o.flags = (bindings::GENL_CMD_CAP_DUMP | perm) as u8;
                o.__bindgen_anon_1.__bindgen_anon_2.dumpit = Some(dumpit::<T>);
            } else {
                o.flags = (bindings::GENL_CMD_CAP_DO | perm) as u8;
                o.__bindgen_anon_1.__bindgen_anon_1.doit = Some(doit::<T>);
            }
            ops.push(o, GFP_KERNEL)?;
        }
        let mut groups = KVec::with_capacity(T::GROUPS.len(), GFP_KERNEL)?;
        for name in T::GROUPS {
            // SAFETY: All-zero is a valid group (no flags).
            let mut g: bindings::genl_multicast_group =
                unsafe { MaybeUninit::zeroed().assume_init() };
            copy_name(&mut g.name, name);
            groups.push(g, GFP_KERNEL)?;
        }
        Ok((policy, ops, groups))
    }

    /// Whether anyone in `dev`'s namespace listens to group `group`.
    pub fn has_listeners(&self, dev: &Device, group: u32) -> bool {
        if !self.live() || group as usize >= T::GROUPS.len() {
            return false;
        }
        // SAFETY: A registered family with this group (the checks above;
        // at worst it is being unregistered, when the core finds no
        // listener); `dev` is alive, so is its namespace.
        unsafe {
            bindings::genl_has_listeners(self.raw.get(), bindings::dev_net(dev.as_raw()), group)
        }
    }

    fn live(&self) -> bool {
        self.state.load(Ordering::Acquire) == LIVE
    }

    /// A message of command `cmd`, to fill and [`Message::multicast`];
    /// `ENODEV` while the family is not registered.
    pub fn message(&'static self, cmd: u8) -> Result<Message<T>> {
        if !self.live() {
            return Err(ENODEV);
        }
        // SAFETY: No preconditions (process context: GFP_KERNEL).
        let skb = NonNull::new(unsafe { bindings::genlmsg_new_default() }).ok_or(ENOMEM)?;
        // SAFETY: A fresh message of ours; the family's memory is static.
        let hdr = unsafe { bindings::genlmsg_put(skb.as_ptr(), 0, 0, self.raw.get(), 0, cmd) };
        if hdr.is_null() {
            // SAFETY: Ours, never sent.
            unsafe { bindings::nlmsg_free(skb.as_ptr()) };
            return Err(EMSGSIZE);
        }
        Ok(Message {
            msg: NlMsg::from_raw(skb.as_ptr()),
            skb,
            hdr,
            family: self,
        })
    }
}

/// Copies `name` into a `GENL_NAMSIZ` array, with its NUL, cut if need be.
fn copy_name(to: &mut [u8], name: &CStr) {
    let bytes = name.to_bytes();
    let n = bytes.len().min(to.len() - 1);
    to[..n].copy_from_slice(&bytes[..n]);
    to[n] = 0;
}

/// A registered family: unregistered when dropped.
pub struct Registration<T: Commands> {
    family: &'static Family<T>,
    // What the family points at, until it is unregistered.
    _policy: KVec<bindings::nla_policy>,
    _ops: KVec<bindings::genl_split_ops>,
    _groups: KVec<bindings::genl_multicast_group>,
}

// SAFETY: The tables are only read, by the core, after registration.
unsafe impl<T: Commands> Send for Registration<T> {}
// SAFETY: As above.
unsafe impl<T: Commands> Sync for Registration<T> {}

impl<T: Commands> Drop for Registration<T> {
    fn drop(&mut self) {
        // No message is made or sent from here on.
        self.family.state.store(REGISTERING, Ordering::Release);
        // SAFETY: Registered by `Family::register`, which made `self`; this
        // waits for requests under way, after which the core no longer
        // reads the tables, freed after this.
        unsafe { bindings::genl_unregister_family(self.family.raw.get()) };
        self.family.state.store(UNREGISTERED, Ordering::Release);
    }
}

/// The attributes of a request, each checked against the policy.
pub struct Attrs<'a> {
    /// `nlattr *tb[ATTRS.len() + 1]`, indexed by type.
    tb: *mut *mut bindings::nlattr,
    max: usize,
    _p: PhantomData<&'a bindings::nlattr>,
}

impl Attrs<'_> {
    fn raw(&self, ty: u16) -> Option<*mut bindings::nlattr> {
        if ty == 0 || usize::from(ty) > self.max || self.tb.is_null() {
            return None;
        }
        // SAFETY: `tb` has an entry for every type up to `max`.
        let a = unsafe { *self.tb.add(usize::from(ty)) };
        (!a.is_null()).then_some(a)
    }

    /// The payload of attribute `ty`, if the request carries it.
    pub fn bytes(&self, ty: u16) -> Option<&[u8]> {
        let a = self.raw(ty)?;
        // SAFETY: An attribute of the request, which outlives `self`: its
        // payload follows its 4-byte header, `nla_len` bytes in all.
        unsafe {
            let len = usize::from((*a).nla_len).saturating_sub(4);
            Some(core::slice::from_raw_parts(a.cast::<u8>().add(4), len))
        }
    }

    /// The u32 attribute `ty` (the policy checked its length).
    pub fn u32(&self, ty: u16) -> Option<u32> {
        let b = self.bytes(ty)?;
        Some(u32::from_ne_bytes(b.get(..4)?.try_into().ok()?))
    }

    /// The u8 attribute `ty`.
    pub fn u8(&self, ty: u16) -> Option<u8> {
        self.bytes(ty)?.first().copied()
    }

    /// Whether flag `ty` is present.
    pub fn flag(&self, ty: u16) -> bool {
        self.raw(ty).is_some()
    }

    /// The string attribute `ty`, up to its first NUL (the policy checked
    /// that there is one; padding may follow).
    pub fn str(&self, ty: u16) -> Option<&CStr> {
        CStr::from_bytes_until_nul(self.bytes(ty)?).ok()
    }
}

/// A `do` request.
pub struct Request<'a> {
    info: *mut bindings::genl_info,
    _p: PhantomData<&'a bindings::genl_info>,
}

impl Request<'_> {
    /// Its attributes.
    pub fn attrs(&self) -> Attrs<'_> {
        // SAFETY: `info` is the request's, valid while `self` is; the core
        // parsed the attributes with the family's maxattr.
        unsafe {
            Attrs {
                tb: (*self.info).attrs,
                max: (*(*self.info).family).maxattr as usize,
                _p: PhantomData,
            }
        }
    }

    /// Where a refusal says why.
    pub fn ext_ack(&self) -> ExtAck {
        // SAFETY: The request's extack, live while it runs.
        unsafe { ExtAck::from_raw((*self.info).extack) }
    }

    /// The device `ifindex` in the requester's namespace, counted.
    pub fn device_by_index(&self, ifindex: u32) -> Option<ARef<Device>> {
        // SAFETY: The request's namespace, alive while it runs.
        unsafe { by_index(bindings::genl_info_net(self.info), ifindex) }
    }

    /// The device named `name` in the requester's namespace, counted.
    pub fn device_by_name(&self, name: &CStr) -> Option<ARef<Device>> {
        // SAFETY: As above.
        unsafe { by_name(bindings::genl_info_net(self.info), name) }
    }
}

/// # Safety
///
/// `net` is a live namespace.
unsafe fn by_index(net: *mut bindings::net, ifindex: u32) -> Option<ARef<Device>> {
    // SAFETY: The caller's guarantee.
    unsafe { Device::by_index(net, i32::try_from(ifindex).ok()?) }
}

/// # Safety
///
/// `net` is a live namespace.
unsafe fn by_name(net: *mut bindings::net, name: &CStr) -> Option<ARef<Device>> {
    // SAFETY: The caller's guarantee; `name` is NUL-terminated.
    let p = unsafe { bindings::dev_get_by_name(net, name.as_char_ptr()) };
    // SAFETY: A held, live device.
    NonNull::new(p).map(|p| unsafe { ARef::from_raw(p.cast()) })
}

/// A dump under way: one call of its callback, filling one buffer.
pub struct Dump<'a> {
    skb: *mut bindings::sk_buff,
    cb: *mut bindings::netlink_callback,
    _p: PhantomData<&'a bindings::netlink_callback>,
}

impl Dump<'_> {
    fn info(&self) -> *const bindings::genl_dumpit_info {
        // SAFETY: The callback of a generic netlink dump, whose `data` the
        // core set to the dump's info (genl_start).
        unsafe { bindings::genl_dumpit_info(self.cb) }
    }

    /// The request's attributes.
    pub fn attrs(&self) -> Attrs<'_> {
        let info = self.info();
        // SAFETY: The dump's info, valid for the dump; the attributes were
        // parsed with the family's maxattr.
        unsafe {
            Attrs {
                tb: (*info).info.attrs,
                max: (*(*info).info.family).maxattr as usize,
                _p: PhantomData,
            }
        }
    }

    /// The device `ifindex` in the requester's namespace, counted.
    pub fn device_by_index(&self, ifindex: u32) -> Option<ARef<Device>> {
        // SAFETY: The dump's namespace, alive while the socket is.
        unsafe { by_index(bindings::genl_info_net(&(*self.info()).info), ifindex) }
    }

    /// The device named `name` in the requester's namespace, counted.
    pub fn device_by_name(&self, name: &CStr) -> Option<ARef<Device>> {
        // SAFETY: As above.
        unsafe { by_name(bindings::genl_info_net(&(*self.info()).info), name) }
    }

    /// Where a refusal says why.
    pub fn ext_ack(&self) -> ExtAck {
        // SAFETY: The dump's extack, live while its start runs (null
        // later, which `ExtAck` takes as none).
        unsafe { ExtAck::from_raw((*self.cb).extack) }
    }

    /// The dump's own state, zero at its start, kept between calls.
    pub fn state(&mut self) -> &mut [u64; 4] {
        const {
            use bindings::netlink_callback as Cb;
            assert!(core::mem::offset_of!(Cb, __bindgen_anon_1) % 8 == 0);
            assert!(core::mem::align_of::<Cb>() >= 8);
        }
        // SAFETY: `ctx` is 48 bytes of the callback, 8-aligned (the
        // assertions above), the dump's alone.
        unsafe {
            &mut *(*self.cb)
                .__bindgen_anon_1
                .ctx
                .as_mut_ptr()
                .cast::<[u64; 4]>()
        }
    }

    /// What is dumped is at generation `gen`: a message after one at
    /// another generation is flagged `NLM_F_DUMP_INTR`, so that the reader
    /// knows to dump again.
    pub fn set_generation(&mut self, gen: u32) {
        // SAFETY: The callback is the dump's.
        unsafe { (*self.cb).seq = gen }
    }

    /// Whether this call added nothing yet.
    pub fn is_empty(&self) -> bool {
        // SAFETY: The buffer being filled.
        unsafe { (*self.skb).len == 0 }
    }

    /// A new message of command `cmd`; `None` if no room is left.
    pub fn message(&mut self, cmd: u8) -> Option<DumpMessage<'_>> {
        let info = self.info();
        // SAFETY: The dump's buffer, callback and family.
        let hdr = unsafe {
            bindings::genlmsg_put(
                self.skb,
                bindings::netlink_cb_portid((*self.cb).skb),
                (*(*self.cb).nlh).nlmsg_seq,
                (*info).info.family,
                bindings::NLM_F_MULTI as i32,
                cmd,
            )
        };
        if hdr.is_null() {
            return None;
        }
        Some(DumpMessage {
            msg: NlMsg::from_raw(self.skb),
            cb: self.cb,
            hdr,
            ended: false,
            _p: PhantomData,
        })
    }
}

/// A message of a dump being filled: kept by [`DumpMessage::end`],
/// removed if dropped before.
pub struct DumpMessage<'a> {
    msg: NlMsg,
    cb: *mut bindings::netlink_callback,
    hdr: *mut c_void,
    ended: bool,
    _p: PhantomData<&'a mut Dump<'a>>,
}

impl DumpMessage<'_> {
    /// Keeps the message.
    ///
    /// The dump's generation is checked here, not when the message was
    /// begun: a message removed unsent must not count as the one that saw
    /// a change.
    pub fn end(mut self) {
        // SAFETY: `hdr` is this message's, at the end of its buffer, in
        // the dump of `cb`.
        unsafe {
            bindings::genl_dump_check_consistent(self.cb, self.hdr);
            bindings::genlmsg_end(self.msg.as_raw(), self.hdr);
        }
        self.ended = true;
    }
}

impl core::ops::Deref for DumpMessage<'_> {
    type Target = NlMsg;
    fn deref(&self) -> &NlMsg {
        &self.msg
    }
}

impl Drop for DumpMessage<'_> {
    fn drop(&mut self) {
        if !self.ended {
            // SAFETY: `hdr` is this message's, at the end of its buffer:
            // trimming there removes it whole.
            unsafe { bindings::genlmsg_cancel(self.msg.as_raw(), self.hdr) };
        }
    }
}

/// A message of the family's own, to multicast.
pub struct Message<T: Commands> {
    msg: NlMsg,
    skb: NonNull<bindings::sk_buff>,
    hdr: *mut c_void,
    family: &'static Family<T>,
}

impl<T: Commands> Message<T> {
    /// Its attributes.
    pub fn attrs(&self) -> &NlMsg {
        &self.msg
    }

    /// Sends it to group `group` in `dev`'s namespace; fails (and drops
    /// it) if nobody listens there, or the family is being unregistered.
    pub fn multicast(self, dev: &Device, group: u32) -> Result {
        if !self.family.live() || group as usize >= T::GROUPS.len() {
            return Err(EINVAL);
        }
        let me = core::mem::ManuallyDrop::new(self);
        // SAFETY: A whole message of the family's; the multicast consumes
        // it. `dev` is alive, so is its namespace. The family's memory is
        // static; unregistered meanwhile, the core finds no listener.
        to_result(unsafe {
            bindings::genlmsg_end(me.skb.as_ptr(), me.hdr);
            bindings::genlmsg_multicast_netns(
                me.family.raw.get(),
                bindings::dev_net(dev.as_raw()),
                me.skb.as_ptr(),
                0,
                group,
            )
        })
    }
}

impl<T: Commands> Drop for Message<T> {
    fn drop(&mut self) {
        // SAFETY: Ours, never sent.
        unsafe { bindings::nlmsg_free(self.skb.as_ptr()) };
    }
}

/// The C callback `doit`.
///
/// # Safety
///
/// Only the core calls it, for a request to a command of `T`'s family.
unsafe extern "C" fn doit<T: Commands>(
    _skb: *mut bindings::sk_buff,
    info: *mut bindings::genl_info,
) -> i32 {
    let req = Request {
        info,
        _p: PhantomData,
    };
    // SAFETY: The request's header, which the core checked is there.
    let cmd = unsafe { (*(*info).genlhdr).cmd };
    match T::doit(cmd, &req) {
        Ok(()) => 0,
        Err(e) => e.to_errno(),
    }
}

/// The C callback `dumpit`.
///
/// # Safety
///
/// Only the core calls it, for a dump of a command of `T`'s family.
unsafe extern "C" fn dumpit<T: Commands>(
    skb: *mut bindings::sk_buff,
    cb: *mut bindings::netlink_callback,
) -> i32 {
    let mut d = Dump {
        skb,
        cb,
        _p: PhantomData,
    };
    // SAFETY: The dump's info (genl_start set it).
    let cmd = unsafe { (*bindings::genl_dumpit_info(cb)).op.cmd };
    match T::dumpit(cmd, &mut d) {
        // Nothing added: the dump is over.
        // SAFETY: The buffer being filled.
        Ok(()) => unsafe { (*skb).len as i32 },
        Err(e) => e.to_errno(),
    }
}
