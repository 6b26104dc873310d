// SPDX-License-Identifier: GPL-2.0

//! The tunables of the driver paper's Table 2, plus the memory budgets and
//! the loss threshold.
//!
//! One table ([`SPECS`]) gives every parameter's name, unit, default and
//! range; the driver builds its module parameters and sysfs files from it and
//! the documentation quotes it, so the three cannot drift apart.

use super::peers::MIN_BUDGET;
use super::time::Duration;
use super::window::WINDOW_SLOTS;

/// A tunable, in the order of [`SPECS`].
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(usize)]
pub enum Param {
    /// A peer's counters are judged when one of them exceeds this (packets).
    FtHthresh = 0,
    /// An endpoint whose counter is at most this at judgement may be failed.
    FtLthresh,
    /// An endpoint that received within this is never failed (ms).
    SlowTout,
    /// Heartbeat period (ms).
    Hbspan,
    /// Counter weight of one heartbeat on a healthy endpoint.
    Hbweight,
    /// A held packet is passed up after this long even with a gap (ms).
    FastTout,
    /// Most packets held per peer before the whole buffer is flushed.
    Maxbuf,
    /// Bytes one device may spend on peers: their state, the table and the
    /// reorder buffers (see `peers::capacity`).
    PeerMem,
    /// Bytes of packets (truesize) all of a device's windows may hold.
    HeldMem,
    /// A link losing more than this share of our frames to a peer goes out
    /// of use toward it (per mille, 0.1 %; 0: never).
    LossThresh,
    /// One-switch mode (1): every link through one switch or fabric; frames
    /// leave each slave with its own MAC (see `header.rs`, origin).
    OneSwitch,
}

/// Number of parameters.
pub const NPARAMS: usize = 11;

/// The default `peer_mem`: 16 MiB, room for 8,026 peers and 256 reorder
/// buffers (Documentation/ri2n.rst gives the arithmetic).
pub const PEER_MEM_DEFAULT: u32 = 16 << 20;

/// Name, unit, default and range of a parameter.
#[derive(Debug)]
pub struct Spec {
    /// The module parameter and sysfs name.
    pub name: &'static str,
    /// Unit, for logs and documentation.
    pub unit: &'static str,
    /// The paper's value (Table 2).
    pub default: u32,
    /// Smallest accepted value.
    pub min: u32,
    /// Largest accepted value.
    pub max: u32,
    /// One line for `modinfo` and the documentation.
    pub doc: &'static str,
}

/// Every parameter, indexed by [`Param`].
pub const SPECS: [Spec; NPARAMS] = [
    Spec { name: "ft_hthresh", unit: "packets", default: 10, min: 1, max: 1_000_000,
        doc: "judge a peer's endpoints when one counter exceeds this" },
    Spec { name: "ft_lthresh", unit: "packets", default: 1, min: 0, max: 999_999,
        doc: "endpoints counting at most this (and silent for slow_tout) are failed; < ft_hthresh" },
    Spec { name: "slow_tout", unit: "ms", default: 100, min: 1, max: 600_000,
        doc: "an endpoint that received within this is never failed" },
    Spec { name: "hbspan", unit: "ms", default: 2000, min: 10, max: 3_600_000,
        doc: "heartbeat period, on every endpoint including failed ones" },
    Spec { name: "hbweight", unit: "packets", default: 3, min: 0, max: 1_000_000,
        doc: "counter increment of one heartbeat on a healthy endpoint" },
    Spec { name: "fast_tout", unit: "ms", default: 20, min: 1, max: 10_000,
        doc: "pass a held packet up after this long even if a gap precedes it" },
    Spec { name: "maxbuf", unit: "packets", default: 300, min: 1, max: WINDOW_SLOTS as u32 - 1,
        doc: "most packets held per peer; one more flushes them all" },
    Spec { name: "peer_mem", unit: "bytes", default: PEER_MEM_DEFAULT, min: MIN_BUDGET as u32, max: 1 << 30,
        doc: "memory for peers: state, table and reorder buffers; set while the device is down" },
    Spec { name: "held_mem", unit: "bytes", default: 32 << 20, min: 64 << 10, max: 1 << 30,
        doc: "most bytes of packets all peers' windows hold; beyond, the arriving peer's window is flushed" },
    Spec { name: "loss_thresh", unit: "0.1 %", default: 5, min: 0, max: 1000,
        doc: "a link losing more of our frames than this goes out of use toward that peer (0: never)" },
    Spec { name: "one_switch", unit: "0/1", default: 0, min: 0, max: 1,
        doc: "1: every link goes through one switch; frames leave each slave with its own MAC (set while the device is down)" },
];

/// Whether `name` is parameter `p`'s (in a constant, where `==` on
/// strings is not allowed).
pub const fn name_is(p: Param, name: &str) -> bool {
    let (a, b) = (SPECS[p as usize].name.as_bytes(), name.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Why a value was refused.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ParamError {
    /// Below the parameter's minimum.
    TooSmall,
    /// Above the parameter's maximum.
    TooLarge,
    /// `ft_lthresh` must stay below `ft_hthresh`.
    LthreshNotBelowHthresh,
    /// No parameter has that name.
    UnknownName,
}

impl ParamError {
    /// One sentence for the kernel log.
    pub fn reason(self) -> &'static str {
        match self {
            ParamError::TooSmall => "value below the parameter's minimum",
            ParamError::TooLarge => "value above the parameter's maximum",
            ParamError::LthreshNotBelowHthresh => "ft_lthresh must be below ft_hthresh",
            ParamError::UnknownName => "no such parameter",
        }
    }
}

/// A value refused for a parameter, and why: one line for the kernel log
/// or a netlink extended ack (at most 79 bytes, the ack's room).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Refusal {
    /// The parameter refused.
    pub param: Param,
    /// Its value refused.
    pub value: u32,
    /// Why.
    pub error: ParamError,
}

impl core::fmt::Display for Refusal {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        let s = self.param.spec();
        match self.error {
            ParamError::LthreshNotBelowHthresh => {
                write!(f, "ft_lthresh {} must be below ft_hthresh", self.value)
            }
            _ => write!(
                f,
                "{} must be {}..={} {}, not {}",
                s.name, s.min, s.max, s.unit, self.value
            ),
        }
    }
}

impl Param {
    /// Every parameter, in table order.
    pub const ALL: [Param; NPARAMS] = [
        Param::FtHthresh,
        Param::FtLthresh,
        Param::SlowTout,
        Param::Hbspan,
        Param::Hbweight,
        Param::FastTout,
        Param::Maxbuf,
        Param::PeerMem,
        Param::HeldMem,
        Param::LossThresh,
        Param::OneSwitch,
    ];

    /// This parameter's row of [`SPECS`].
    pub fn spec(self) -> &'static Spec {
        &SPECS[self as usize]
    }

    /// Whether `value` lies in this parameter's range.
    pub fn check(self, value: u32) -> Result<(), ParamError> {
        let spec = self.spec();
        if value < spec.min {
            Err(ParamError::TooSmall)
        } else if value > spec.max {
            Err(ParamError::TooLarge)
        } else {
            Ok(())
        }
    }

    /// Whether it changes only while the device is down: a new peer table
    /// (`peer_mem`), a new wire format (`one_switch`).
    pub fn down_only(self) -> bool {
        matches!(self, Param::PeerMem | Param::OneSwitch)
    }

    /// The parameter called `name`.
    pub fn by_name(name: &str) -> Result<Param, ParamError> {
        Param::ALL
            .iter()
            .copied()
            .find(|p| p.spec().name == name)
            .ok_or(ParamError::UnknownName)
    }
}

/// A validated set of parameter values.
///
/// # Invariants
///
/// Every value lies within its [`Spec`] range and `ft_lthresh < ft_hthresh`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Params {
    values: [u32; NPARAMS],
}

impl Default for Params {
    fn default() -> Self {
        let mut values = [0; NPARAMS];
        for (v, s) in values.iter_mut().zip(SPECS.iter()) {
            *v = s.default;
        }
        Params { values }
    }
}

impl Params {
    /// Every value, in [`Param`] order (to publish a copy, word by word).
    pub fn words(&self) -> [u32; NPARAMS] {
        self.values
    }

    /// The set whose [`Params::words`] these are. Only for a whole copy of
    /// a valid set: nothing is checked.
    pub fn from_words(values: [u32; NPARAMS]) -> Params {
        Params { values }
    }

    /// The value of `p`.
    #[inline]
    pub fn get(&self, p: Param) -> u32 {
        self.values[p as usize]
    }

    /// Sets `p` to `value` if the result is still a valid set; else nothing
    /// changes.
    pub fn set(&mut self, p: Param, value: u32) -> Result<(), ParamError> {
        let mut next = *self;
        next.values[p as usize] = value;
        *self = next.validated(p)?;
        Ok(())
    }

    /// `self` if `changed`'s value is in range and the set is consistent.
    fn validated(self, changed: Param) -> Result<Params, ParamError> {
        changed.check(self.get(changed))?;
        if self.get(Param::FtLthresh) >= self.get(Param::FtHthresh) {
            return Err(ParamError::LthreshNotBelowHthresh);
        }
        Ok(self)
    }

    /// Builds a set from `(param, value)` pairs applied to the defaults, as a
    /// whole: the order of the pairs does not matter, only the final values.
    pub fn from_values(pairs: &[(Param, u32)]) -> Result<Params, ParamError> {
        let mut p = Params::default();
        for &(k, v) in pairs {
            k.check(v)?;
            p.values[k as usize] = v;
        }
        p.validated(Param::FtHthresh)
    }

    /// `self` with `pairs` applied as a whole: the order of the pairs does
    /// not matter, only the final values; refused, the first value out of
    /// range (in `pairs` order), else the set's inconsistency.
    pub fn with(&self, pairs: &[(Param, u32)]) -> Result<Params, Refusal> {
        let mut next = *self;
        for &(p, v) in pairs {
            p.check(v).map_err(|error| Refusal {
                param: p,
                value: v,
                error,
            })?;
            next.values[p as usize] = v;
        }
        next.validated(Param::FtHthresh).map_err(|error| Refusal {
            param: Param::FtLthresh,
            value: next.ft_lthresh(),
            error,
        })?;
        Ok(next)
    }

    /// FT_HTHRESH.
    pub fn ft_hthresh(&self) -> u32 {
        self.get(Param::FtHthresh)
    }
    /// FT_LTHRESH.
    pub fn ft_lthresh(&self) -> u32 {
        self.get(Param::FtLthresh)
    }
    /// SLOW_TOUT.
    pub fn slow_tout(&self) -> Duration {
        Duration::from_ms(u64::from(self.get(Param::SlowTout)))
    }
    /// How long a link goes unchosen before the scheduler counts it level
    /// again ([`crate::sched::RoundRobin::at`]): SLOW_TOUT / 8. A link
    /// can then stay silent for two such periods and the gaps between
    /// packets, some 25 ms plus two gaps, which leaves the receiver's
    /// detector (SLOW_TOUT) half its time for a late timer, a late vCPU
    /// or a queue on either side. With SLOW_TOUT / 4 the scheduler alone
    /// uses up to 74 of its 100 ms when packets come 12 ms apart, and a
    /// slow host makes up the rest ("nothing received for 104 ms").
    pub fn level_after(&self) -> Duration {
        Duration(self.slow_tout().0 / 8)
    }
    /// The gap in a peer's arrivals, on all links together, that ends a
    /// run of them ([`crate::detector::Detector`]): SLOW_TOUT / 4. After
    /// a stop of either node every link falls silent at once, then the
    /// queued frames come one link's after the other's; a link that
    /// delivered until SLOW_TOUT / 2 before the gap is left to probe rounds
    /// for SLOW_TOUT. A quarter is no gap in a stream, and a stop shorter
    /// than it would need a healthy link silent for three quarters of
    /// SLOW_TOUT before it to fail that link.
    pub fn run_gap(&self) -> Duration {
        Duration(self.slow_tout().0 / 4)
    }
    /// HBSPAN.
    pub fn hbspan(&self) -> Duration {
        Duration::from_ms(u64::from(self.get(Param::Hbspan)))
    }
    /// HBWEIGHT.
    pub fn hbweight(&self) -> u32 {
        self.get(Param::Hbweight)
    }
    /// FAST_TOUT.
    pub fn fast_tout(&self) -> Duration {
        Duration::from_ms(u64::from(self.get(Param::FastTout)))
    }
    /// MAXBUF.
    pub fn maxbuf(&self) -> usize {
        self.get(Param::Maxbuf) as usize
    }
    /// The peers' memory budget, in bytes.
    pub fn peer_mem(&self) -> usize {
        self.get(Param::PeerMem) as usize
    }
    /// The held packets' budget, in bytes.
    pub fn held_mem(&self) -> usize {
        self.get(Param::HeldMem) as usize
    }
    /// One-switch mode.
    pub fn one_switch(&self) -> bool {
        self.get(Param::OneSwitch) != 0
    }
    /// The loss threshold, in basis points (1/100 of a percent); 0: never.
    pub fn loss_thresh_bp(&self) -> u32 {
        self.get(Param::LossThresh) * 10
    }
}
