#!/usr/bin/env bash
# make module refuses a kernel build directory it cannot build a loadable
# module for, before it builds anything, and says why: one not Rust-enabled,
# and one built by another rustc (Debian's stock headers, from the stock
# root, against the host's rustc). Ends "N passed, N failed".
set -uo pipefail
. "$(dirname "$0")/../../scripts/lib.sh"
root=$("$RI2N_ROOT/scripts/build-stock-env.sh") || die "no stock root"
passed=0 failed=0
# expect NAME PATTERN CMD...: CMD fails, and its stderr matches PATTERN.
expect() {
	local name=$1 pat=$2 out rc
	shift 2
	out=$("$@" 2>&1 >/dev/null) && rc=0 || rc=$?
	if [ "$rc" != 0 ] && grep -qE -- "$pat" <<<"$out"; then
		echo "[OK] $name"
		passed=$((passed + 1))
	else
		echo "[FAIL] $name (exit $rc): $out"
		failed=$((failed + 1))
	fi
}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/norust"
touch "$work/norust/Module.symvers"
echo 'CONFIG_MODULES=y' >"$work/norust/.config"
expect "a kernel without CONFIG_RUST is refused" "is not a built Rust-enabled kernel" \
	make -s -C "$RI2N_ROOT" KDIR="$work/norust" module
h=$root/usr/src/linux-headers-$STOCK_ABI
expect "Debian's headers with the host's rustc are refused, naming both" \
	"was built by rustc 1\.85\.1 .*, but rustc is $(rustc --version | sed 's/[().]/\\&/g')" \
	make -s -C "$RI2N_ROOT" KDIR="$h" module
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
