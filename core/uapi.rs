// SPDX-License-Identifier: GPL-2.0

//! The numbers user space sees, as `include/uapi/linux/ri2n.h` gives them
//! (a unit test compares the two): the rtnetlink attributes of a ri2n
//! device and of its slaves. Append only.

use super::params::{Param, NPARAMS};

/// `IFLA_INFO_DATA`: the low 32 bits of the device's epoch (read only).
pub const IFLA_EPOCH: u16 = 1;
/// `IFLA_INFO_DATA`: the RI2N header version sent (read only).
pub const IFLA_VERSION: u16 = 2;
/// `IFLA_INFO_DATA`: slaves now (read only).
pub const IFLA_SLAVES: u16 = 3;
/// `IFLA_INFO_DATA`: peers known now (read only).
pub const IFLA_PEERS: u16 = 4;
/// `IFLA_INFO_DATA`: the first parameter's attribute; the others follow in
/// [`Param`] order.
pub const IFLA_PARAM0: u16 = 16;
/// `IFLA_INFO_DATA`: the highest attribute.
pub const IFLA_MAX: u16 = IFLA_PARAM0 + NPARAMS as u16 - 1;

/// `IFLA_INFO_SLAVE_DATA`: the slave's link index.
pub const IFLA_SLAVE_LINK: u16 = 1;
/// `IFLA_INFO_SLAVE_DATA`: 1 if the slave has carrier.
pub const IFLA_SLAVE_CARRIER: u16 = 2;
/// `IFLA_INFO_SLAVE_DATA`: peers the link is in use toward.
pub const IFLA_SLAVE_PEERS_UP: u16 = 3;
/// `IFLA_INFO_SLAVE_DATA`: peers the link is failed toward.
pub const IFLA_SLAVE_PEERS_DOWN: u16 = 4;

/// What an `IFLA_INFO_DATA` attribute is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Attr {
    /// State: reported, never set.
    State,
    /// No attribute has this number (yet).
    Reserved,
    /// A parameter, set as a u32.
    Param(Param),
}

impl Attr {
    /// Attribute `ty` of `IFLA_INFO_DATA` (1..=[`IFLA_MAX`]).
    pub const fn of(ty: u16) -> Attr {
        match ty {
            IFLA_EPOCH..=IFLA_PEERS => Attr::State,
            IFLA_PARAM0..=IFLA_MAX => Attr::Param(Param::ALL[(ty - IFLA_PARAM0) as usize]),
            _ => Attr::Reserved,
        }
    }
}

impl Param {
    /// This parameter's `IFLA_INFO_DATA` attribute.
    pub const fn attr(self) -> u16 {
        IFLA_PARAM0 + self as u16
    }
}
