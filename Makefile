# SPDX-License-Identifier: GPL-2.0
#
#   make demo     two nodes, ri2n0 over two links, a TCP transfer with one link
#                 cut and restored; prints the throughput timeline and state
#   make check    the style gate (scripts/style.sh), userspace unit tests,
#                 then every lab test
#   make style    rustfmt, clippy (module and userspace, warnings denied)
#                 and shellcheck
#   make tool     the ri2n command, tools/target/release/ri2n (show, watch,
#                 events, get, set, key; the lab's guests carry it), its
#                 man page ri2n.8 and bash, zsh and fish completions
#   make iplink   ip(8)'s ri2n link kind, tools/target/link_ri2n.so: ip link
#                 add/set DEV type ri2n PARAM VALUE..., ip -d link show
#   make module   ri2n.ko against KDIR (a Rust-enabled kernel build directory;
#                 default: the lab's cached guest kernel, built if missing)
#   make install  that ri2n.ko into /lib/modules/RELEASE/extra (under
#                 INSTALL_MOD_PATH if set), then depmod
#   make check-debug  every lab test on the debug kernel (KASAN, lockdep,
#                 kmemleak, atomic-sleep checks)
#   make check-stock  every lab test on Debian's own kernel, with ri2n
#                 built and signed by DKMS
#   make bench    ri2n vs one link vs bonding balance-rr in the lab: ping-pong,
#                 bulk TCP, failover timelines, MPI; bench/results/README.md
#   make bench-apps   LAMMPS on 2 and 4 nodes (uncut and with a link cut),
#                 netperf, sockperf and MPI collectives over ri2n, one link,
#                 bonding (miimon and ARP monitor) and OpenMPI over both
#                 NICs; bench/results/apps/README.md
#   make insns    guest instructions per round trip and per MiB, by function
#                 (a QEMU plugin); bench/results/insns
#   make hostprof where a round trip's wall time goes under TCG, seen from
#                 the host; bench/results/hostprof
#   make bench-core   the reorder window against the paper's sorted list
#   make bench-sim    N peers x K links over simulated time (memory, cost
#                 per packet, heartbeat load, detection and recovery);
#                 bench/results/sim.md
#   make fuzz     the core's fuzz targets, FUZZ_SECS (600) each
#
# Everything installs what it needs first (scripts/setup-host.sh).

KDIR ?=
LLVM_BIN := /usr/lib/llvm-19/bin
CARGO := cargo

.PHONY: all tool iplink module install demo check check-debug check-stock stock-test style unit lab-test bench bench-apps insns hostprof bench-core bench-sim fuzz setup clean

all: module

setup:
	@scripts/setup-host.sh

# The kernel build directory: KDIR, or the lab's guest kernel (built if
# missing); checked to be a built Rust-enabled kernel, and to be built by
# this rustc: the module calls the kernel's Rust by mangled names, which
# carry the compiler's crate hashes, so another rustc's module does not load.
kpath = PATH="$(LLVM_BIN):$${RI2N_CACHE:-$${XDG_CACHE_HOME:-$$HOME/.cache}/ri2n}/tools/bin:$$PATH"
find_kdir = kdir="$(KDIR)"; \
	if [ -z "$$kdir" ]; then scripts/setup-host.sh && kdir=$$(scripts/build-kernel.sh guest) || exit 1; fi; \
	[ -f "$$kdir/Module.symvers" ] && grep -q '^CONFIG_RUST=y' "$$kdir/.config" || \
		{ echo "error: KDIR=$$kdir is not a built Rust-enabled kernel (no Module.symvers or CONFIG_RUST)." >&2; exit 1; }; \
	built=$$(sed -n 's/^CONFIG_RUSTC_VERSION_TEXT="\(.*\)"$$/\1/p' "$$kdir/.config"); \
	here=$$($(kpath) $${RUSTC:-rustc} --version 2>/dev/null); \
	[ "$$here" = "$$built" ] || \
		{ echo "error: KDIR=$$kdir was built by $$built, but $${RUSTC:-rustc} is $${here:-missing}: build with the kernel's rustc (RUSTC=...)." >&2; exit 1; }; \
	$(kcc)
# The kernel's own C compiler: clang and LLVM's tools for a kernel clang
# built (the lab's); for one gcc built, the gcc its build directory names
# (a distribution's headers do).
kcc = llvm=; if grep -q '^CONFIG_CC_IS_CLANG=y' "$$kdir/.config"; then llvm=LLVM=1; fi
kmake = $(kpath) $(MAKE) -C "$$kdir" M="$(CURDIR)" $$llvm $${RUSTC:+RUSTC=$$RUSTC}

module:
	@$(find_kdir); $(kmake) modules

# Into INSTALL_MOD_PATH (default /)/lib/modules/RELEASE/extra, then depmod.
install: module
	@$(find_kdir); rel=$$(cat "$$kdir/include/config/kernel.release"); \
	$(kmake) INSTALL_MOD_DIR=extra modules_install && \
	depmod -b "$${INSTALL_MOD_PATH:-/}" -a "$$rel" && \
	echo "installed $${INSTALL_MOD_PATH:-}/lib/modules/$$rel/extra/ri2n.ko"

tool:
	cd tools && $(CARGO) build --release -p ri2n
	cd tools/target/release && ./ri2n generate man >ri2n.8 && \
		./ri2n generate bash >ri2n.bash && ./ri2n generate zsh >_ri2n && \
		./ri2n generate fish >ri2n.fish

# iproute2 looks for link_KIND.so in its library directory; a slave's kind
# is KIND_slave, hence the link.
iplink: tools/target/link_ri2n.so
# Built with the lab's LLVM, which the host setup installs (no gcc needed).
tools/target/link_ri2n.so: tools/iproute2/link_ri2n.c include/uapi/linux/ri2n.h
	NM=$(LLVM_BIN)/llvm-nm tools/iproute2/check-ip.sh
	mkdir -p tools/target
	$(LLVM_BIN)/clang -O2 -Wall -Wextra -Werror -shared -fPIC -o $@ $<
	ln -sf link_ri2n.so tools/target/link_ri2n_slave.so

style: setup
	scripts/style.sh $(KDIR)

unit:
	cd tools && $(CARGO) test --release

lab-test:
	scripts/lab test

# Debian's own kernel (scripts/build-stock-env.sh): make module's refusals,
# then one lab test on it with ri2n from DKMS; before lab-test, whose summary
# line ends make check.
stock-test:
	tests/build/kdir.sh
	scripts/lab test --stock ri2n_basic

check: setup style unit stock-test lab-test

check-debug: setup
	scripts/lab test --debug

check-stock: setup
	scripts/lab test --stock

demo:
	scripts/setup-host.sh --demo
	scripts/lab run scripts/demo-lab.sh

bench:
	scripts/setup-host.sh --bench
	LAB_MPI=1 scripts/lab run scripts/bench-lab.sh

bench-apps:
	scripts/setup-host.sh --apps
	rm -rf bench/results/apps/raw
	LAB_APPS=1 scripts/lab run scripts/apps-lab.sh

# Where the guests' CPU time goes (perf, by kernel symbol), for 64-byte and
# 16 KiB ping-pong and unshaped bulk over one link, bonding, ri2n and ri2n
# with tx_gso=1; bench/results/profile/README.md puts each configuration's
# CPU per round trip or per GB side by side, split by where it goes.
profile:
	scripts/setup-host.sh --bench
	LAB_PERF=1 BENCH_ONLY=profile BENCH_RAW=$${BENCH_RAW:-bench/results/profile} scripts/lab run scripts/bench-lab.sh

# Guest instructions per 64 B round trip and per MiB of bulk TCP, by kernel
# function, over ri2n, one link and bonding (a QEMU plugin counts them:
# scripts/insns-lab.sh); exact where perf's times under TCG are not.
insns:
	scripts/setup-host.sh
	INSNS_OUT=$${INSNS_OUT:-bench/results/insns} scripts/lab run scripts/insns-lab.sh

# Where a 64 B round trip's wall time goes under TCG, seen from the host
# (perf on the QEMUs, their translated code named by guest function):
# scripts/hostprof-lab.sh. HOSTPROF_INSNS=report.txt of `make insns`
# (INSNS_TOP=400) adds ns per guest instruction of the same kernel code.
hostprof:
	scripts/setup-host.sh --bench
	HOSTPROF_OUT=$${HOSTPROF_OUT:-bench/results/hostprof} scripts/lab run scripts/hostprof-lab.sh

bench-core:
	cd tools && $(CARGO) bench -p ri2n-core

bench-sim:
	cd tools && $(CARGO) run --release --quiet -p ri2n-sim > ../bench/results/sim.md.tmp
	mv bench/results/sim.md.tmp bench/results/sim.md
	cat bench/results/sim.md

# The fuzz targets (header, window), FUZZ_SECS each; cargo-fuzz runs on the
# stable toolchain with RUSTC_BOOTSTRAP=1.
FUZZ_SECS ?= 600
fuzz:
	command -v cargo-fuzz >/dev/null || $(CARGO) install --locked cargo-fuzz
	cd tools/ri2n-core/fuzz && for t in header window; do \
		RUSTC_BOOTSTRAP=1 $(CARGO) fuzz run -O $$t -- -max_total_time=$(FUZZ_SECS) -print_final_stats=1 || exit 1; \
	done

clean:
	@kdir="$(KDIR)"; [ -n "$$kdir" ] || kdir=$$(ls -d $${XDG_CACHE_HOME:-$$HOME/.cache}/ri2n/kernel/guest-* 2>/dev/null | head -1); \
	[ -z "$$kdir" ] || { $(kcc); $(kpath) $(MAKE) -C "$$kdir" M="$(CURDIR)" $$llvm clean; }
	rm -rf tools/target
