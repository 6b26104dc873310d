# Shared helpers and settings for scripts/*.sh. Sourced, not run.
# shellcheck shell=bash

RI2N_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# Slow build outputs live outside the repo, keyed by what they depend on.
RI2N_CACHE=${RI2N_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/ri2n}
TOOLS_DIR=$RI2N_CACHE/tools
BINDGEN_VERSION=0.73.2
LLVM_DIR=/usr/lib/llvm-19
KERNEL_PKG=linux-source-7.3
export PATH="$TOOLS_DIR/bin:$LLVM_DIR/bin:$HOME/.cargo/bin:$PATH"

# need_pkgs SETUP_FLAG PKG...: dies naming the first package not installed
# and the setup-host.sh call that installs it.
need_pkgs() {
	local flag=$1 p
	shift
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
			die "package $p is missing: run scripts/setup-host.sh${flag:+ $flag}."
	done
}
log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

bindgen_ok() {
	command -v bindgen >/dev/null 2>&1 &&
		[ "$(bindgen --version 2>/dev/null | awk '{print $2}')" = "$BINDGEN_VERSION" ]
}

# "1.95.0" from "rustc 1.95.0 (59807616e 2026-04-14)".
rustc_version() { rustc --version | awk '{print $2}'; }

# Kernel source and rust-src unpacked by fetch-sources.sh.
kernel_src() {
	local v
	v=$(apt-cache madison $KERNEL_PKG 2>/dev/null | awk 'NR == 1 {print $3}')
	[ -n "$v" ] || die "apt knows no $KERNEL_PKG: run scripts/setup-host.sh first."
	echo "$RI2N_CACHE/src/linux-$v"
}
rust_lib_src() { echo "$RI2N_CACHE/src/rust-src-$(rustc_version)/library"; }

# Debian's Rust-enabled kernel (trixie-backports) that the "stock" lab
# variant boots (scripts/build-stock-env.sh).
# shellcheck disable=SC2034 # for the scripts that source this
STOCK_ABI=7.3.4+deb13-amd64
# Its modules that the lab's guests load (the lab's own kernel has them
# built in): the NIC, and what the tests' qdiscs, filters and virtual
# devices need, with their dependencies.
# shellcheck disable=SC2034
STOCK_MODULES=(virtio_net 8021q bridge macvlan veth tun ifb dummy bonding sch_netem sch_tbf
	sch_fq sch_prio sch_htb sch_ingress sch_mqprio sch_multiq act_mirred act_gact
	cls_matchall cls_u32 cls_flower)

# ri2n's version, as dkms.conf (and modinfo) give it.
ri2n_version() { sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$RI2N_ROOT/dkms.conf"; }

# in_stock_root ROOT SCRIPT: runs SCRIPT (sh) in the trixie root ROOT, with
# /proc and /dev (objtool and DKMS need them) mounted for it alone.
in_stock_root() {
	unshare -m --propagation private sh -c 'mount -t proc proc "$1/proc" && mount --rbind /dev "$1/dev" && exec chroot "$1" sh -c "$2"' -- "$1" "$2"
}

# Config fragments of a variant ("guest" or "debug"), in merge order.
kernel_fragments() {
	echo "$RI2N_ROOT/scripts/kconfig/guest.config"
	[ "$1" = guest ] || echo "$RI2N_ROOT/scripts/kconfig/$1.config"
}

# The cache key of a kernel build: everything its output depends on.
kernel_key() {
	{
		basename "$(kernel_src)"
		rustc --version --verbose
		bindgen --version
		clang --version | head -1
		local frags
		mapfile -t frags < <(kernel_fragments "$1")
		cat "${frags[@]}"
	} | sha256sum | cut -c1-12
}
kernel_dir() { echo "$RI2N_CACHE/kernel/$1-$(kernel_key "$1")"; }

# make in the kernel tree with the environment Rust needs on every call
# (without it, even `make olddefconfig` silently drops CONFIG_RUST).
kmake() {
	make -C "$(kernel_src)" LLVM=1 RUST_LIB_SRC="$(rust_lib_src)" \
		LIBCLANG_PATH=$LLVM_DIR/lib "$@"
}

# Host programs copied into the guest image, with their libraries.
GUEST_BINS=(bash ip tc ss nstat bridge ethtool iperf3 ping sha256sum socat kmod dropbear
	timeout stdbuf dd head tail awk sed grep date setpriv unshare genl)
# Debian packages the image is made from: their versions key its cache.
GUEST_PKGS=(busybox-static iproute2 iperf3 ethtool iputils-ping dropbear-bin socat kmod bash
	coreutils gawk sed grep libc6 util-linux)

# copy_with_libs ROOT SRC DST: a host program or library into the image tree
# ROOT at DST, with the shared libraries it needs that ROOT lacks.
copy_with_libs() {
	local root=$1 src=$2 dst=$3
	mkdir -p "$root$(dirname "$dst")"
	cp -L "$src" "$root$dst"
	ldd "$src" 2>/dev/null | awk '/=> \// {print $3} /^\t\/lib/ {print $1}' | while read -r lib; do
		[ -e "$root$lib" ] || { mkdir -p "$root$(dirname "$lib")"; cp -L "$lib" "$root$lib"; }
	done
}

# pack_cpio DIR OUT: DIR as a gzipped newc archive at OUT, written whole or
# not at all (a cache entry must never be half a file).
pack_cpio() {
	(cd "$1" && find . | cpio -o -H newc --quiet | gzip -1) >"$2.tmp"
	mv "$2.tmp" "$2"
}

initramfs_key() {
	{
		cat "$RI2N_ROOT/scripts/build-initramfs.sh" "$RI2N_ROOT"/scripts/guest/*
		printf '%s\n' "${GUEST_BINS[@]}"
		dpkg-query -W "${GUEST_PKGS[@]}"
	} | sha256sum | cut -c1-12
}
initramfs_dir() { echo "$RI2N_CACHE/initramfs/$(initramfs_key)"; }
