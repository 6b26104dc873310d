// SPDX-License-Identifier: GPL-2.0

//! GRO cells: per-CPU NAPI contexts through which a virtual device hands
//! packets to the stack, so that consecutive TCP segments are coalesced
//! first (as tunnels do).

use super::bindings;
use super::device::Device;
use super::skb::Skb;
use kernel::error::to_result;
use kernel::prelude::*;
use kernel::types::Opaque;

/// A device's GRO cells.
///
/// # Invariants
///
/// Initialised by `gro_cells_init` for a device that outlives them; after
/// [`GroCells::destroy`] (or drop) the cells are gone and `receive` frees
/// what it is given.
#[pin_data(PinnedDrop)]
pub struct GroCells {
    #[pin]
    cells: Opaque<bindings::gro_cells>,
}

// SAFETY: Per-CPU state the core serialises.
unsafe impl Send for GroCells {}
// SAFETY: As above.
unsafe impl Sync for GroCells {}

impl GroCells {
    /// Cells for `dev` (its `ndo_init`).
    pub fn new(dev: &Device) -> impl PinInit<Self, Error> + '_ {
        try_pin_init!(Self {
            // SAFETY: `slot` is ours and stays pinned; `dev` is being
            // registered and outlives its private data, which holds this.
            cells <- Opaque::try_ffi_init(|slot| to_result(unsafe { bindings::gro_cells_init(slot, dev.as_raw()) })),
        })
    }

    /// Hands `skb` to the stack on this CPU's cell (softirq context).
    pub fn receive(&self, skb: Skb) {
        // SAFETY: Initialised (invariant); gro_cells_receive takes the skb
        // and frees it if the cells are gone or the device is down.
        unsafe { bindings::gro_cells_receive(self.cells.get(), skb.into_raw()) };
    }

    /// Frees the cells (`ndo_uninit`, once nothing calls `receive`).
    pub fn destroy(&self) {
        // SAFETY: Initialised; gro_cells_destroy is idempotent (it clears
        // the per-CPU pointer) and `receive` copes with destroyed cells.
        unsafe { bindings::gro_cells_destroy(self.cells.get()) };
    }
}

#[pinned_drop]
impl PinnedDrop for GroCells {
    fn drop(self: Pin<&mut Self>) {
        self.destroy();
    }
}
