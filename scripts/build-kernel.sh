#!/usr/bin/env bash
# Build the lab's guest kernel (variant "guest", or "debug" with KASAN, lockdep
# and kmemleak) into the cache, keyed by kernel source, config fragments, rustc,
# bindgen and clang. A warm run only checks the key and exits.
# Usage: build-kernel.sh [guest|debug]   Prints the build directory.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
variant=${1:-guest}
[ -f "$RI2N_ROOT/scripts/kconfig/$variant.config" ] || die "unknown kernel variant '$variant' (guest or debug)."

"$RI2N_ROOT/scripts/fetch-sources.sh"
out=$(kernel_dir "$variant")
if [ -f "$out/.ri2n-built" ]; then
	echo "$out"
	exit 0
fi

command -v clang >/dev/null && command -v ld.lld >/dev/null || die "clang-19/lld-19 are missing: run scripts/setup-host.sh."
bindgen_ok || die "bindgen $BINDGEN_VERSION is missing: run scripts/setup-host.sh."
rm -rf "$out"
mkdir -p "$out"
if ! kmake O="$out" rustavailable >"$out/rustavailable.log" 2>&1; then
	cat "$out/rustavailable.log" >&2
	die "this rustc ($(rustc_version)) / bindgen / clang cannot build Rust for $(basename "$(kernel_src)"): see the lines above."
fi

log "configuring $variant kernel in $out"
mapfile -t frags < <(kernel_fragments "$variant")
kmake O="$out" tinyconfig >/dev/null
(cd "$out" && KCONFIG_CONFIG=.config "$(kernel_src)/scripts/kconfig/merge_config.sh" -m -O "$out" \
	.config "$(kernel_src)/kernel/configs/kvm_guest.config" "${frags[@]}" >/dev/null)
kmake O="$out" olddefconfig >/dev/null

# Every requested option must have taken; the last fragment wins.
bad=$(cat "${frags[@]}" | grep -E '^CONFIG_[A-Z0-9_]+=' | awk -F= '{want[$1]=$2} END {for (k in want) print k "=" want[k]}' |
	while IFS='=' read -r opt val; do
		got=$(grep -E "^$opt=" "$out/.config" | cut -d= -f2-)
		[ "$val" = n ] && { [ -z "$got" ] || echo "$opt wanted n, got $got"; continue; }
		[ "$got" = "$val" ] || echo "$opt wanted $val, got ${got:-unset}"
	done)
[ -z "$bad" ] || { echo "$bad" >&2; die "the $variant kernel config lost options (dependency missing?): see the list above."; }

log "building $variant kernel (10 to 20 minutes cold on two cores)"
if ! kmake O="$out" -j"$(nproc)" bzImage modules >"$out/build.log" 2>&1; then
	tail -40 "$out/build.log" >&2
	die "the kernel build failed; full log: $out/build.log"
fi
touch "$out/.ri2n-built"
log "kernel ready: $out/arch/x86/boot/bzImage"
echo "$out"
