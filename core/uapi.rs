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

/// The generic netlink family (`ri2n.h`: `RI2N_GENL_NAME`).
pub const GENL_NAME: &str = "ri2n";
/// Its version.
pub const GENL_VERSION: u8 = 1;
/// Its multicast group of transitions.
pub const MCGRP_EVENTS: &str = "events";
/// Events a device sends a second, at most.
pub const EVENTS_PER_SEC: u32 = 1000;
/// Events a device sends in one burst, at most.
pub const EVENTS_BURST: u32 = 64;
/// Bytes of a key.
pub const KEY_LEN: usize = 16;

/// The family's commands (`enum ri2n_cmd`).
pub mod cmd {
    /// Dump one device: the device, then its peers.
    pub const GET_DEVICE: u8 = 1;
    /// Set parameters and keys.
    pub const SET_DEVICE: u8 = 2;
    /// A transition, to the `events` group.
    pub const EVENT: u8 = 3;
}

/// The family's top-level attributes (`enum ri2n_attr`); below 32, those
/// of `IFLA_INFO_DATA` ([`IFLA_PARAM0`] ...).
pub mod attr {
    pub const IFINDEX: u16 = 32;
    pub const IFNAME: u16 = 33;
    pub const MAC: u16 = 34;
    pub const MTU: u16 = 35;
    pub const UP: u16 = 36;
    pub const EPOCH64: u16 = 37;
    pub const CLOCK_MS: u16 = 38;
    pub const MONO_MS: u16 = 39;
    pub const KEYS_ON: u16 = 40;
    pub const KEY_ID: u16 = 41;
    pub const ACCEPT_ID: u16 = 42;
    pub const SLAVE: u16 = 43;
    pub const COUNTERS: u16 = 44;
    pub const PEERS_SUMMARY: u16 = 45;
    pub const PEER: u16 = 46;
    pub const KEY: u16 = 47;
    pub const KEY_ACCEPT: u16 = 48;
    pub const KEY_NONE: u16 = 49;
    pub const ACCEPT_NONE: u16 = 50;
    pub const EVENT: u16 = 51;
    /// The highest.
    pub const MAX: u16 = EVENT;
}

/// In every nest, the first u64 attribute; those from here on are named by
/// the nest's `U64` table, in order, and the table grows at its end.
pub const U64_FIRST: u16 = 16;

/// `RI2N_A_SLAVE` nests (`enum ri2n_slave_attr`).
pub mod slave {
    pub const LINK: u16 = 1;
    pub const NAME: u16 = 2;
    pub const CARRIER: u16 = 3;
    /// From [`super::U64_FIRST`] on.
    pub const U64: [&str; 5] = [
        "changed_ms",
        "tx_packets",
        "rx_packets",
        "tx_dropped",
        "tx_whole",
    ];
}

/// `RI2N_A_COUNTERS` (`enum ri2n_counter`): counter `COUNTERS[i]` is
/// attribute `i + 1`.
pub const COUNTERS: [&str; 34] = [
    "rx_packets",
    "rx_bytes",
    "tx_packets",
    "tx_bytes",
    "rx_dropped",
    "tx_dropped",
    "tx_no_link",
    "tx_queue_full",
    "tx_loop",
    "rx_malformed",
    "rx_not_for_us",
    "rx_unordered",
    "rx_bcast_copies",
    "rx_duplicates",
    "peers_new",
    "peers_refused",
    "peers_evicted",
    "peers_aged",
    "rx_nobuf",
    "rx_held_full",
    "hb_sent",
    "rx_auth_fail",
    "rx_replays",
    "rx_mode_mismatch",
    "slave_mac_taken",
    "rx_merged",
    "rx_merged_frames",
    "lock_rounds",
    "lock_contended",
    "tx_peer_contended",
    "sweeps",
    "up_now",
    "up_gro",
    "events_dropped",
];

/// `RI2N_A_PEERS_SUMMARY` (`enum ri2n_peers_summary`): `PEERS_SUMMARY[i]`
/// is attribute `i + 1`.
pub const PEERS_SUMMARY: [&str; 8] = [
    "count",
    "capacity",
    "bufs",
    "bufs_max",
    "held_bytes",
    "lossy_peers",
    "probing_peers",
    "probe_shift",
];

/// `RI2N_A_PEER` nests (`enum ri2n_peer_attr`).
pub mod peer {
    pub const MAC: u16 = 1;
    pub const EPOCH: u16 = 2;
    pub const ENDPOINT: u16 = 3;
    /// From [`super::U64_FIRST`] on.
    pub const U64: [&str; 14] = [
        "tx_next",
        "rx_next",
        "held",
        "in_order",
        "timeout",
        "loss",
        "flushes",
        "jumps",
        "gaps",
        "late",
        "late_loss",
        "duplicates",
        "restarts",
        "unbuffered",
    ];
}

/// `RI2N_PEER_A_ENDPOINT` nests (`enum ri2n_endpoint_attr`).
pub mod endpoint {
    pub const LINK: u16 = 1;
    pub const STATE: u16 = 2;
    pub const PEER_SLAVE_MAC: u16 = 3;
    /// From [`super::U64_FIRST`] on.
    pub const U64: [&str; 12] = [
        "counter",
        "last_rx_ms",
        "changed_ms",
        "rx",
        "hb",
        "late",
        "tx",
        "fails",
        "recoveries",
        "loss_bp",
        "lossy",
        "peer_lossy",
    ];
}

/// `RI2N_A_EVENT` nests (`enum ri2n_event_attr`).
pub mod event {
    pub const REASON: u16 = 1;
    pub const TIME_NS: u16 = 2;
    pub const PEER: u16 = 3;
    pub const LINK: u16 = 4;
    pub const SLAVE: u16 = 5;
    pub const OLD: u16 = 6;
    pub const NEW: u16 = 7;
    pub const DROPPED: u16 = 8;
}

/// An endpoint's state (`enum ri2n_endpoint_state`), the worst that holds.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u8)]
pub enum EndpointState {
    Up = 1,
    Lossy = 2,
    PeerFailed = 3,
    Failed = 4,
    NoCarrier = 5,
}

impl EndpointState {
    /// Every state, by number - 1.
    pub const ALL: [EndpointState; 5] = [
        EndpointState::Up,
        EndpointState::Lossy,
        EndpointState::PeerFailed,
        EndpointState::Failed,
        EndpointState::NoCarrier,
    ];

    /// The state of an endpoint with these flags.
    pub const fn of(carrier: bool, failed: bool, peer_failed: bool, lossy: bool) -> Self {
        if !carrier {
            EndpointState::NoCarrier
        } else if failed {
            EndpointState::Failed
        } else if peer_failed {
            EndpointState::PeerFailed
        } else if lossy {
            EndpointState::Lossy
        } else {
            EndpointState::Up
        }
    }

    /// The name procfs and the `ri2n` command give it.
    pub const fn name(self) -> &'static str {
        match self {
            EndpointState::Up => "up",
            EndpointState::Lossy => "lossy",
            EndpointState::PeerFailed => "peer-failed",
            EndpointState::Failed => "failed",
            EndpointState::NoCarrier => "no-carrier",
        }
    }

    /// State number `n`, if there is one.
    pub fn from_u8(n: u8) -> Option<Self> {
        Self::ALL.get(usize::from(n).wrapping_sub(1)).copied()
    }
}

/// What an event says happened (`enum ri2n_event_reason`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(u8)]
pub enum Reason {
    Failed = 1,
    Recovered = 2,
    PeerFailed = 3,
    PeerRecovered = 4,
    Lossy = 5,
    Lossless = 6,
    CarrierDown = 7,
    CarrierUp = 8,
    PeerNew = 9,
    PeerForgotten = 10,
    PeerRestarted = 11,
    DeviceRemoved = 12,
}

impl Reason {
    /// Every reason, by number - 1.
    pub const ALL: [Reason; 12] = [
        Reason::Failed,
        Reason::Recovered,
        Reason::PeerFailed,
        Reason::PeerRecovered,
        Reason::Lossy,
        Reason::Lossless,
        Reason::CarrierDown,
        Reason::CarrierUp,
        Reason::PeerNew,
        Reason::PeerForgotten,
        Reason::PeerRestarted,
        Reason::DeviceRemoved,
    ];

    /// Its name, as the header's without `RI2N_EV_`, in lower case.
    pub const fn name(self) -> &'static str {
        match self {
            Reason::Failed => "failed",
            Reason::Recovered => "recovered",
            Reason::PeerFailed => "peer_failed",
            Reason::PeerRecovered => "peer_recovered",
            Reason::Lossy => "lossy",
            Reason::Lossless => "lossless",
            Reason::CarrierDown => "carrier_down",
            Reason::CarrierUp => "carrier_up",
            Reason::PeerNew => "peer_new",
            Reason::PeerForgotten => "peer_forgotten",
            Reason::PeerRestarted => "peer_restarted",
            Reason::DeviceRemoved => "device_removed",
        }
    }

    /// Reason number `n`, if there is one.
    pub fn from_u8(n: u8) -> Option<Self> {
        Self::ALL.get(usize::from(n).wrapping_sub(1)).copied()
    }
}
