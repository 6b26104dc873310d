// SPDX-License-Identifier: GPL-2.0

//! A string module parameter (`charp`), which the `kernel` crate's
//! `module!` does not offer: `charp_param!(name, "description")` declares
//! a `Charp` static read with [`Charp::get`], shown read-only (0444) under
//! `/sys/module/MODULE/parameters/`.

use core::cell::UnsafeCell;
use kernel::prelude::*;

/// A `charp` module parameter's storage: NULL, or the string the kernel's
/// `param_ops_charp` set at load time.
#[repr(transparent)]
pub struct Charp(UnsafeCell<*mut kernel::ffi::c_char>);

// SAFETY: Written only by the kernel's parameter parser before module init
// (the parameter is read-only afterwards), then only read.
unsafe impl Sync for Charp {}

impl Charp {
    /// An unset parameter.
    pub const fn new() -> Charp {
        Charp(UnsafeCell::new(core::ptr::null_mut()))
    }

    /// The storage, for the `kernel_param` entry.
    pub const fn as_void_ptr(&self) -> *mut core::ffi::c_void {
        self.0.get().cast()
    }

    /// The value given at load time, if any.
    pub fn get(&self) -> Option<&CStr> {
        // SAFETY: Set (or left NULL) before module init and never changed
        // after (mode 0444); a set value is a NUL-terminated string the
        // kernel frees only when the module goes.
        unsafe {
            let p = *self.0.get();
            (!p.is_null()).then(|| CStr::from_char_ptr(p))
        }
    }
}

impl Default for Charp {
    fn default() -> Self {
        Self::new()
    }
}

/// The bytes of `s` as an array (for `.modinfo` strings).
pub const fn str_array<const N: usize>(s: &str) -> [u8; N] {
    let b = s.as_bytes();
    let mut a = [0u8; N];
    let mut i = 0;
    while i < N {
        a[i] = b[i];
        i += 1;
    }
    a
}

/// Declares a read-only `charp` module parameter `$name` (a [`Charp`]).
#[macro_export]
macro_rules! charp_param {
    ($name:ident, $desc:literal) => {
        #[allow(non_upper_case_globals)]
        pub(crate) static $name: $crate::net::param::Charp = $crate::net::param::Charp::new();
        const _: () = {
            const NAME: &str = concat!(stringify!($name), "\0");
            #[link_section = "__param"]
            #[used(compiler)]
            static PARAM: kernel::module_param::KernelParam =
                kernel::module_param::KernelParam::new(kernel::bindings::kernel_param {
                    name: NAME.as_ptr().cast(),
                    // `__this_module` is the kernel's, for as long as the
                    // module is loaded.
                    mod_: (&raw const kernel::bindings::__this_module).cast_mut(),
                    // SAFETY: The kernel's own charp operations.
                    ops: unsafe { core::ptr::from_ref(&kernel::bindings::param_ops_charp) },
                    perm: 0o444,
                    level: -1,
                    flags: 0,
                    __bindgen_anon_1: kernel::bindings::kernel_param__bindgen_ty_1 {
                        arg: $name.as_void_ptr(),
                    },
                });
            const T: &str = concat!("parmtype=", stringify!($name), ":charp\0");
            #[link_section = ".modinfo"]
            #[used(compiler)]
            static PARMTYPE: [u8; T.len()] = $crate::net::param::str_array(T);
            const D: &str = concat!("parm=", stringify!($name), ":", $desc, "\0");
            #[link_section = ".modinfo"]
            #[used(compiler)]
            static PARM: [u8; D.len()] = $crate::net::param::str_array(D);
        };
    };
}
