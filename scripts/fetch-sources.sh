#!/usr/bin/env bash
# Unpack Debian's kernel source and the rust-src that matches `rustc --version`
# into the cache. Both are arch-all packages that need no install: they are
# downloaded and unpacked with dpkg-deb, so nothing on the host changes.
# Prints nothing; the paths are known to lib.sh (KSRC, RUST_LIB_SRC).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

rv=$(rustc_version)
mkdir -p "$RI2N_CACHE/src" "$RI2N_CACHE/deb"
cd "$RI2N_CACHE/deb"

if [ ! -d "$RI2N_CACHE/src/rust-src-$rv/library/core" ]; then
	ver=$(apt-cache madison rust-src | awk -v v="$rv+" 'index($3, v) == 1 && !f {print $3; f = 1}')
	[ -n "$ver" ] || die "Debian has no rust-src $rv to match rustc $rv: install a rustc that has one (apt-cache madison rust-src lists them)."
	log "fetching rust-src $ver"
	apt-get download -qq -o APT::Sandbox::User=root "rust-src=$ver"
	rm -rf "$RI2N_CACHE/src/rust-src-$rv.tmp"
	dpkg-deb -x rust-src_"${ver//:/%3a}"_all.deb "$RI2N_CACHE/src/rust-src-$rv.tmp"
	mv "$RI2N_CACHE/src/rust-src-$rv.tmp/usr/src/rustc-$rv" "$RI2N_CACHE/src/rust-src-$rv"
	rm -rf "$RI2N_CACHE/src/rust-src-$rv.tmp" rust-src_*.deb
fi

kver=$(apt-cache madison $KERNEL_PKG | awk 'NR == 1 {print $3}')
[ -n "$kver" ] || die "apt knows no $KERNEL_PKG: run scripts/setup-host.sh (it adds trixie-backports)."
if [ ! -f "$RI2N_CACHE/src/linux-$kver/Makefile" ]; then
	log "fetching $KERNEL_PKG $kver and unpacking it (about a minute)"
	apt-get download -qq -o APT::Sandbox::User=root "$KERNEL_PKG=$kver"
	rm -rf "$RI2N_CACHE/src/pkg.tmp" "$RI2N_CACHE/src/linux-$kver.tmp"
	dpkg-deb -x ${KERNEL_PKG}_"${kver//:/%3a}"_all.deb "$RI2N_CACHE/src/pkg.tmp"
	mkdir "$RI2N_CACHE/src/linux-$kver.tmp"
	tar -C "$RI2N_CACHE/src/linux-$kver.tmp" --strip-components=1 -xf "$RI2N_CACHE"/src/pkg.tmp/usr/src/$KERNEL_PKG.tar.*
	mv "$RI2N_CACHE/src/linux-$kver.tmp" "$RI2N_CACHE/src/linux-$kver"
	rm -rf "$RI2N_CACHE/src/pkg.tmp" ${KERNEL_PKG}_*.deb
fi
