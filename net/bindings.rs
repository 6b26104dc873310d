// SPDX-License-Identifier: GPL-2.0

//! The kernel's networking API as bindgen sees it, generated at build time
//! (see `Kbuild`): exported functions and types from the headers in
//! `net/bindings_helper.h`, and the static inline wrappers of
//! `net/helpers.c` under their kernel names.
//!
//! Types that also exist in `kernel::bindings` are distinct Rust types here;
//! the few places that pass one to the `kernel` crate cast the pointer.

#![allow(
    dead_code,
    missing_docs,
    non_camel_case_types,
    non_upper_case_globals,
    non_snake_case,
    improper_ctypes,
    unreachable_pub,
    unsafe_op_in_unsafe_fn,
    clippy::all,
    clippy::as_underscore,
    clippy::cast_lossless,
    clippy::missing_safety_doc,
    clippy::ptr_as_ptr,
    clippy::ptr_cast_constness,
    clippy::ref_as_ptr,
    clippy::undocumented_unsafe_blocks
)]
#![cfg_attr(CONFIG_RUSTC_HAS_UNNECESSARY_TRANSMUTES, allow(unnecessary_transmutes))]

use kernel::ffi;

type __kernel_size_t = usize;
type __kernel_ssize_t = isize;
type __kernel_ptrdiff_t = isize;

include!("bindings_generated.rs");
