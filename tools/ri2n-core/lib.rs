// SPDX-License-Identifier: GPL-2.0

//! The RI2N protocol core as a userspace crate: the very files the kernel
//! module compiles (`core/`), mounted here unchanged.

#![no_std]
#![forbid(unsafe_code)]

#[path = "../../core/mod.rs"]
mod proto;

pub use proto::*;
