#!/usr/bin/env bash
# ri2n, as an administrator installs it on Debian's own kernel: this tree's
# module sources into the stock root's /usr/src/ri2n-VERSION, then
# `dkms install` against the stock headers, which builds it with the
# kernel's gcc and rustc and signs it with DKMS's machine owner key.
# Usage: stock-dkms.sh ROOT   Prints the installed module's path in ROOT.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
root=${1:?usage: stock-dkms.sh ROOT}
ver=$(ri2n_version)
src=$root/usr/src/ri2n-$ver
rm -rf "$src"
mkdir -p "$src"
# What the module's build reads, as a release tarball would carry it.
(cd "$RI2N_ROOT" && git ls-files -co --exclude-standard -- Kbuild Makefile dkms.conf ':(glob)*.rs' \
	core net include ri2n_state tests/api CHANGELOG.md README.md | tar cf - -T -) | tar xf - -C "$src"
log "dkms install ri2n/$ver for $STOCK_ABI"
in_stock_root "$root" "
	set -e
	dkms remove ri2n/$ver --all >/dev/null 2>&1 || true
	dkms add ri2n/$ver >/dev/null
	dkms install ri2n/$ver -k $STOCK_ABI
" >&2 || {
	cat "$root/var/lib/dkms/ri2n/$ver/build/make.log" >&2 2>/dev/null || true
	die "dkms could not build ri2n for $STOCK_ABI (its make.log above)"
}
ko=$(cd "$root" && ls lib/modules/"$STOCK_ABI"/updates/dkms/ri2n.ko*)
echo "$root/$ko"
