// SPDX-License-Identifier: GPL-2.0

//! The netdev notifier: events of every network device, under RTNL.

use super::bindings;
use super::device::{Device, Rtnl};
use kernel::error::to_result;
use kernel::prelude::*;
use kernel::types::Opaque;

/// A netdev event (`enum netdev_cmd`), the ones a stacking driver acts on.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Event {
    /// The device went up.
    Up,
    /// The device went down.
    Down,
    /// Carrier or operational state changed.
    Change,
    /// The device is being unregistered, or leaves the namespace.
    Unregister,
    /// The MTU changed (the device's `mtu()` is the new one). Vetoing it
    /// sets the old one back, and tells every handler again.
    ChangeMtu,
    /// The MAC address changed.
    ChangeAddr,
    /// The device was renamed.
    ChangeName,
    /// The device is about to change its link-layer type (vetoable).
    PreTypeChange,
    // No event before an MTU change: the core sends NETDEV_PRECHANGEMTU
    // without the new MTU (netif_set_mtu_ext()); ChangeMtu has it.
    /// Anything else.
    Other,
}

impl Event {
    fn from_raw(e: usize) -> Event {
        match e as u32 {
            bindings::netdev_cmd_NETDEV_PRE_TYPE_CHANGE => Event::PreTypeChange,
            bindings::netdev_cmd_NETDEV_UP => Event::Up,
            bindings::netdev_cmd_NETDEV_DOWN => Event::Down,
            bindings::netdev_cmd_NETDEV_CHANGE => Event::Change,
            bindings::netdev_cmd_NETDEV_UNREGISTER => Event::Unregister,
            bindings::netdev_cmd_NETDEV_CHANGEMTU => Event::ChangeMtu,
            bindings::netdev_cmd_NETDEV_CHANGEADDR => Event::ChangeAddr,
            bindings::netdev_cmd_NETDEV_CHANGENAME => Event::ChangeName,
            _ => Event::Other,
        }
    }
}

/// What a handler says of an event.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Verdict {
    /// Go on.
    Done,
    /// Refuse a vetoable event (`Pre*`); others go on anyway.
    Veto,
}

/// What a notifier does with events.
pub trait Handler: Send + Sync + 'static {
    /// `event` happened, or is about to, to `dev`; under RTNL.
    fn event(&self, rtnl: &Rtnl, event: Event, dev: &Device) -> Verdict;
}

/// A registered netdev notifier, unregistered on drop.
///
/// Note that registering replays `Up` events, and unregistering replays
/// `Down` and `Unregister` events, for every existing device.
#[pin_data(PinnedDrop)]
#[repr(C)]
pub struct Registration<H: Handler> {
    #[pin]
    nb: Opaque<bindings::notifier_block>,
    handler: H,
}

// SAFETY: The core only calls the block; `H` is Sync.
unsafe impl<H: Handler> Sync for Registration<H> {}
// SAFETY: As above; `H` is Send.
unsafe impl<H: Handler> Send for Registration<H> {}

/// The C callback `call`.
///
/// # Safety
///
/// Only the kernel calls it, through the table this module fills in, with
/// the arguments and in the context that table's contract gives.
unsafe extern "C" fn call<H: Handler>(
    nb: *mut bindings::notifier_block,
    event: usize,
    ptr: *mut core::ffi::c_void,
) -> i32 {
    // SAFETY: `nb` is the first field of a pinned, registered
    // `Registration<H>` (repr(C)); netdev notifiers run under RTNL with a
    // `netdev_notifier_info` whose device is alive for the call.
    let verdict = unsafe {
        let reg = &*nb.cast::<Registration<H>>();
        let info = ptr.cast::<bindings::netdev_notifier_info>();
        let dev = Device::from_raw((*info).dev);
        reg.handler
            .event(Rtnl::assume_held(), Event::from_raw(event), dev)
    };
    match verdict {
        Verdict::Done => bindings::NOTIFY_DONE as i32,
        Verdict::Veto => bindings::NOTIFY_BAD as i32,
    }
}

impl<H: Handler> Registration<H> {
    /// Registers `handler`.
    pub fn new(handler: H) -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            handler,
            nb <- Opaque::try_ffi_init(|slot: *mut bindings::notifier_block| {
                // SAFETY: `slot` is ours to write; the block stays pinned
                // until `drop` unregisters it.
                unsafe {
                    slot.write(core::mem::zeroed());
                    (*slot).notifier_call = Some(call::<H>);
                    to_result(bindings::register_netdevice_notifier(slot))
                }
            }),
        })
    }
}

#[pinned_drop]
impl<H: Handler> PinnedDrop for Registration<H> {
    fn drop(self: Pin<&mut Self>) {
        // SAFETY: Registered in `new`; unregistering waits for callers (the
        // chain runs under RTNL, which this takes).
        unsafe { bindings::unregister_netdevice_notifier(self.nb.get()) };
    }
}
