// SPDX-License-Identifier: GPL-2.0

//! RTNL, netlink extended acks, link attributes and messages being built.

use crate::net::bindings;
use core::marker::PhantomData;
use kernel::error::to_result;
use kernel::prelude::*;
use kernel::str::CStr;

use super::SliceWriter;

/// RTNL, the networking configuration lock: a witness that it is held.
///
/// Functions that need RTNL take `&Rtnl`. Callbacks the core calls under
/// RTNL (ndo and rtnl_link ops, notifiers) receive one; process context may
/// take it with [`Rtnl::lock`].
pub struct Rtnl {
    pub(super) _not_send: PhantomData<*mut ()>,
}

/// RTNL taken by [`Rtnl::lock`], released on drop.
pub struct RtnlGuard(pub(super) Rtnl);

impl Rtnl {
    /// Takes RTNL. Process context; sleeps.
    pub fn lock() -> RtnlGuard {
        // SAFETY: Process context, as documented.
        unsafe { bindings::rtnl_lock() };
        RtnlGuard(Rtnl {
            _not_send: PhantomData,
        })
    }

    /// A witness for a callback that runs under RTNL.
    ///
    /// # Safety
    ///
    /// RTNL is held for as long as the returned reference is used.
    pub unsafe fn assume_held<'a>() -> &'a Rtnl {
        &Rtnl {
            _not_send: PhantomData,
        }
    }
}

impl Rtnl {
    /// RTNL if it is free; otherwise the system call is restarted
    /// (`restart_syscall()`), as bonding's sysfs stores do: a store that
    /// waited for RTNL could deadlock with the device's unregistration,
    /// which holds RTNL while it removes the sysfs files and waits for the
    /// stores running in them.
    pub fn try_lock_or_restart() -> Result<RtnlGuard> {
        // SAFETY: No preconditions.
        if unsafe { bindings::rtnl_trylock() } != 0 {
            return Ok(RtnlGuard(Rtnl {
                _not_send: PhantomData,
            }));
        }
        // SAFETY: Process context (a sysfs store); only flags this task.
        Err(Error::from_errno(unsafe { bindings::restart_syscall() }))
    }
}

impl Rtnl {
    /// RTNL if it is free (`rtnl_trylock`).
    pub fn try_lock() -> Option<RtnlGuard> {
        // SAFETY: No preconditions.
        (unsafe { bindings::rtnl_trylock() } != 0).then(|| {
            RtnlGuard(Rtnl {
                _not_send: PhantomData,
            })
        })
    }
}

impl core::ops::Deref for RtnlGuard {
    type Target = Rtnl;
    fn deref(&self) -> &Rtnl {
        &self.0
    }
}

impl Drop for RtnlGuard {
    fn drop(&mut self) {
        // SAFETY: Taken by `Rtnl::lock`.
        unsafe { bindings::rtnl_unlock() }
    }
}

/// A netlink extended ack, where a refused request says why.
pub struct ExtAck(pub(super) *mut bindings::netlink_ext_ack);

impl ExtAck {
    /// The extack of a request the core is handling (null: none).
    pub(in crate::net) fn from_raw(ack: *mut bindings::netlink_ext_ack) -> ExtAck {
        ExtAck(ack)
    }

    /// No extack (a request not from netlink).
    pub fn none() -> ExtAck {
        ExtAck(core::ptr::null_mut())
    }

    /// Whether there is none: the request came from elsewhere (sysfs, a
    /// module parameter), where a refusal is logged instead.
    pub fn is_none(&self) -> bool {
        self.0.is_null()
    }

    /// Sets the message `ip` prints with the error (a static string).
    pub fn set_msg(&self, msg: &'static CStr) {
        if !self.0.is_null() {
            // SAFETY: A live extack of the current request; `msg` is static
            // (what NL_SET_ERR_MSG stores).
            unsafe { (*self.0)._msg = msg.as_char_ptr() }
        }
    }

    /// Sets the message `ip` prints with the error, formatted into the
    /// extack's own buffer, cut at its 79 bytes (NL_SET_ERR_MSG_FMT).
    pub fn set_msg_fmt(&self, args: core::fmt::Arguments<'_>) {
        if self.0.is_null() {
            return;
        }
        // SAFETY: A live extack of the current request, which only this
        // request's handler writes while it runs.
        let ack = unsafe { &mut *self.0 };
        // SAFETY: `_msg_buf` is a `c_char` array; `u8` has its layout.
        let buf: &mut [u8] = unsafe {
            core::slice::from_raw_parts_mut(ack._msg_buf.as_mut_ptr().cast(), ack._msg_buf.len())
        };
        let last = buf.len() - 1;
        let mut w = SliceWriter {
            buf: &mut buf[..last],
            at: 0,
        };
        let _ = kernel::fmt::Write::write_fmt(&mut w, args);
        let end = w.at;
        buf[end] = 0;
        ack._msg = ack._msg_buf.as_ptr();
    }

    /// Points the error at attribute `ty` of `attrs` (NL_SET_BAD_ATTR), if
    /// the request carries it.
    pub fn set_bad_attr(&self, attrs: &LinkAttrs<'_>, ty: u16) {
        if let (false, Some(a)) = (self.0.is_null(), attrs.raw(ty)) {
            // SAFETY: A live extack; `a` is in the request's message.
            unsafe { (*self.0).bad_attr = a };
        }
    }
}

/// The most attributes the core parses in a link kind's `IFLA_INFO_DATA`
/// (`RTNL_MAX_TYPE` of net/core/rtnetlink.c, in no header).
pub(super) const RTNL_MAX_TYPE: usize = 50;

/// What an attribute of a link kind's `IFLA_INFO_DATA` is, for
/// [`Link::ATTRS`].
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum AttrKind {
    /// No attribute has this number: a request carrying it is refused.
    Reserved,
    /// Reported by [`Link::fill_info`], never set: a request carrying it is
    /// refused with this message.
    ReadOnly(&'static CStr),
    /// A u32 the user sets, checked by [`Link::check_u32`].
    U32,
}

/// The attributes of `ip link add/set DEV type KIND ...` (`IFLA_INFO_DATA`),
/// each already checked against [`Link::ATTRS`] and [`Link::check_u32`].
pub struct LinkAttrs<'a> {
    /// `nlattr *data[kinds.len() + 1]`, indexed by type.
    pub(super) data: *mut *mut bindings::nlattr,
    pub(super) kinds: &'static [AttrKind],
    pub(super) _p: PhantomData<&'a bindings::nlattr>,
}

impl LinkAttrs<'_> {
    /// Attribute `ty`, if the request carries it.
    fn raw(&self, ty: u16) -> Option<*const bindings::nlattr> {
        if ty == 0 || usize::from(ty) > self.kinds.len() {
            return None;
        }
        // SAFETY: `data` has an entry for every type up to the kinds' count
        // (the maxtype the core parsed with).
        let a = unsafe { *self.data.add(usize::from(ty)) };
        (!a.is_null()).then_some(a.cast_const())
    }

    /// The value of u32 attribute `ty`, if the request carries it.
    pub fn u32(&self, ty: u16) -> Option<u32> {
        if self.kinds.get(usize::from(ty).wrapping_sub(1)) != Some(&AttrKind::U32) {
            return None;
        }
        // SAFETY: The policy (`NLA_U32`) made sure it holds 4 bytes.
        self.raw(ty).map(|a| unsafe { bindings::nla_get_u32(a) })
    }
}

/// A netlink message being filled (`fill_info`, `fill_slave_info`, a
/// generic netlink message).
///
/// Only lent, as `&NlMsg`, by what owns the message, for as long as it
/// is being built: a driver can neither keep one nor swap two, so every
/// attribute lands in the message it was lent for. Its methods take
/// `&self`: the message is the kernel's, written through the pointer.
pub struct NlMsg(pub(super) *mut bindings::sk_buff);

impl NlMsg {
    /// The message being built in `skb`.
    pub(in crate::net) fn from_raw(skb: *mut bindings::sk_buff) -> NlMsg {
        NlMsg(skb)
    }

    pub(in crate::net) fn as_raw(&self) -> *mut bindings::sk_buff {
        self.0
    }

    /// Adds a string attribute (with its NUL).
    pub fn put_str(&self, attr: u16, v: &str) -> Result {
        let len = i32::try_from(v.len() + 1).map_err(|_| EMSGSIZE)?;
        // SAFETY: A message being built; the attribute reserved has room
        // for the string and its NUL.
        unsafe {
            let a = bindings::nla_reserve(self.0, i32::from(attr), len);
            if a.is_null() {
                return Err(EMSGSIZE);
            }
            let data = a.cast::<u8>().add(4);
            core::ptr::copy_nonoverlapping(v.as_ptr(), data, v.len());
            *data.add(v.len()) = 0;
        }
        Ok(())
    }

    /// Adds nest `attr`, filled by `f`; if `f` fails (no room), the nest
    /// is taken out whole and the error returned.
    pub fn nest(&self, attr: u16, f: impl FnOnce(&NlMsg) -> Result) -> Result {
        // SAFETY: A message being built.
        let start = unsafe { bindings::nla_nest_start(self.0, i32::from(attr)) };
        if start.is_null() {
            return Err(EMSGSIZE);
        }
        let r = f(self);
        // SAFETY: `start` is this nest's, and everything after it in the
        // message was added by `f`: ending or trimming there is exact.
        unsafe {
            if r.is_ok() {
                bindings::nla_nest_end(self.0, start);
            } else {
                bindings::nla_nest_cancel(self.0, start);
            }
        }
        r
    }

    /// Adds the u64 attributes `first`, `first + 1`, ..., one per value.
    pub fn put_u64s(&self, first: u16, values: &[u64]) -> Result {
        for (i, v) in values.iter().enumerate() {
            self.put_u64(first + i as u16, *v)?;
        }
        Ok(())
    }

    /// Adds a u32 attribute.
    pub fn put_u32(&self, attr: u16, v: u32) -> Result {
        // SAFETY: A message the core is building for us.
        to_result(unsafe { bindings::nla_put_u32(self.0, i32::from(attr), v) })
            .map_err(|_| EMSGSIZE)
    }

    /// Adds a u8 attribute.
    pub fn put_u8(&self, attr: u16, v: u8) -> Result {
        // SAFETY: As above.
        to_result(unsafe { bindings::nla_put_u8(self.0, i32::from(attr), v) }).map_err(|_| EMSGSIZE)
    }

    /// Adds a u64 attribute.
    pub fn put_u64(&self, attr: u16, v: u64) -> Result {
        // SAFETY: As above.
        to_result(unsafe { bindings::nla_put_u64(self.0, i32::from(attr), v) })
            .map_err(|_| EMSGSIZE)
    }

    /// Adds a byte-string attribute.
    pub fn put_bytes(&self, attr: u16, v: &[u8]) -> Result {
        // SAFETY: As above; `v` is readable for its length.
        to_result(unsafe {
            bindings::nla_put(self.0, i32::from(attr), v.len() as i32, v.as_ptr().cast())
        })
        .map_err(|_| EMSGSIZE)
    }

    /// Room an attribute of `payload` bytes takes.
    pub const fn attr_size(payload: usize) -> usize {
        // NLA_HDRLEN + payload, aligned to 4 (nla_total_size()).
        (4 + payload + 3) & !3
    }
}
