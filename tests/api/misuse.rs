// SPDX-License-Identifier: GPL-2.0

//! What the net abstraction refuses to compile. Each function misuses it
//! as a driver could, and `scripts/api-misuse.sh` builds the module with
//! `--cfg ri2n_api_misuse` and expects, on each line marked `refused:`,
//! the error it names, and no other error anywhere: the compile_fail
//! doctests an out-of-tree module cannot have. A marked line holds only
//! the misuse, so that its error can have no other cause.

use crate::net::device::Device;
use crate::net::gro::GroCells;
use crate::net::lock::Bh;
use crate::net::timer::DeviceTimer;
use crate::net::work::DeviceWork;
use crate::Ri2n;
use kernel::prelude::*;

/// GRO cells dropped anywhere but in their device's teardown free NAPI
/// contexts that readers may still see: made only under a contract.
fn cells_for_any_device(dev: &Device) -> Result<GroCells> {
    GroCells::new(dev) // refused: E0133
}

/// A driver's data made outside a device has no timer to arm: the timer
/// callback would take the memory around it for a device.
fn timer_of_data_outside_a_device(data: &Ri2n) {
    let timer = DeviceTimer::<0>::timer(data); // refused: E0308
    timer.arm_ms(1);
}

/// Nor work to queue, for the same reason.
fn work_of_data_outside_a_device(data: &Ri2n) {
    let work = DeviceWork::<0>::work(data); // refused: E0308
    work.queue_ms(1);
}

/// Only the contexts that have bottom halves off make their witness.
fn bh_witness_anywhere() {
    let _bh = Bh::new(); // refused: E0133
}

/// A claim on a cell lives no longer than the witness it was taken under.
fn claim_past_its_witness(cells: &GroCells) {
    let claim = {
        // SAFETY: Not sound; the line under test is the next one.
        let bh = unsafe { Bh::new() };
        cells.claim(0, &bh) // refused: E0597
    };
    drop(claim);
}

/// A device's procfs file is the abstraction's, made and removed with the
/// device: a driver cannot make one to keep past it (whose name a new
/// device could then not take).
fn proc_file_of_the_drivers_own(dev: &Device) {
    // SAFETY: Not sound; the call's privacy is what is under test.
    let file = unsafe { crate::net::proc::create::<Ri2n>(dev) }; // refused: E0603
    core::mem::forget(file);
}
