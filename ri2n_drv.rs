// SPDX-License-Identifier: GPL-2.0

//! ri2n: bonds several Ethernet links into one fast, fault-tolerant link.

use kernel::prelude::*;

#[path = "core/mod.rs"]
mod proto;

module! {
    type: Ri2nModule,
    name: "ri2n",
    authors: ["ri2n developers"],
    description: "RI2N/DRV: striped, reordered, fault-tolerant multi-link Ethernet",
    license: "GPL",
}

struct Ri2nModule;

impl kernel::Module for Ri2nModule {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let p = proto::params::Params::default();
        pr_info!("ri2n: loaded (fast_tout {} ms)\n", p.fast_tout().as_ms());
        Ok(Ri2nModule)
    }
}
