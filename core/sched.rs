// SPDX-License-Identifier: GPL-2.0

//! Per-peer round-robin over the usable links (driver paper §5.3).

/// The transmit scheduler of one peer.
#[derive(Default, Debug, Clone)]
pub struct RoundRobin {
    last: u8,
}

impl RoundRobin {
    /// The link after the last one used whose bit is set in `usable`
    /// (endpoint not failed, carrier up, queue not stopped), wrapping; `None`
    /// when no link is usable, and the caller drops the packet.
    #[inline]
    pub fn pick(&mut self, usable: u8) -> Option<usize> {
        if usable == 0 {
            return None;
        }
        // Links above the last one first, then from the lowest.
        let above = usable & !((2u16 << self.last) - 1) as u8;
        let l = if above != 0 { above.trailing_zeros() } else { usable.trailing_zeros() };
        self.last = l as u8;
        Some(l as usize)
    }
}
