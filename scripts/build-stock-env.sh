#!/usr/bin/env bash
# Debian's own Rust-enabled kernel, and a trixie root in the cache to build
# for it with what it was built by: gcc-14, trixie's rustc, bindgen and
# rust-src, dkms, and the kernel's image, headers and source from
# trixie-backports. The host (bookworm) cannot run trixie's rustc, so
# modules for the stock kernel are built in this root, never on the host.
#
# Debian's headers package lacks the Rust build outputs an out-of-tree
# module needs (rust/*.rmeta, the proc-macro libraries, scripts/target.json).
# They are built here from Debian's linux-source of the same version with
# Debian's config and rustc, and added to the root's headers; the symbols
# they export are checked to be the stock Module.symvers' Rust symbols.
# Usage: build-stock-env.sh   Prints the root's directory.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

STOCK_PKGS=(gcc-14 make bc bison flex libelf-dev libssl-dev python3 kmod cpio dwarves
	rustc rust-src bindgen libclang-dev dkms openssl xz-utils zstd
	"linux-image-$STOCK_ABI/trixie-backports" "linux-headers-$STOCK_ABI/trixie-backports"
	linux-source-7.3/trixie-backports linux-base/trixie-backports)
MIRROR=http://deb.debian.org/debian

key=$({ printf '%s\n' "${STOCK_PKGS[@]}"; echo "$MIRROR"; sed -n '/^# RUST-OUTPUTS/,$p' "$0"; } | sha256sum | cut -c1-12)
root=$RI2N_CACHE/stock/root-$key
if [ -f "$root/.ri2n-built" ]; then
	echo "$root"
	exit 0
fi
command -v mmdebstrap >/dev/null || die "mmdebstrap is missing: run scripts/setup-host.sh."
rm -rf "$root"
mkdir -p "$(dirname "$root")"
log "making a trixie root for the stock kernel in $root (2 to 3 minutes)"
# Backports rank below the suite (NotAutomatic): the stock kernel's packages
# are asked for from there by name, and the rest stays trixie's.
mmdebstrap --variant=apt --mode=root --include="$(IFS=,; echo "${STOCK_PKGS[*]}")" \
	trixie "$root" "deb $MIRROR trixie main" "deb $MIRROR trixie-backports main" >&2

# RUST-OUTPUTS (what follows is part of the cache key)
log "building the stock kernel's Rust outputs (3 to 5 minutes)"
# shellcheck disable=SC2016 # expanded in the root
in_stock_root "$root" '
	set -e
	mkdir -p /build/out
	tar -C /build -xJf /usr/src/linux-source-7.3.tar.xz
	cp /boot/config-'"$STOCK_ABI"' /build/out/.config
	cd /build/linux-source-7.3
	m="make -s O=/build/out CC=x86_64-linux-gnu-gcc-14 HOSTCC=gcc-14"
	$m olddefconfig
	$m -j'"$(nproc)"' modules_prepare
	$m -j'"$(nproc)"' rust/
	h=/usr/src/linux-headers-'"$STOCK_ABI"'
	mkdir -p $h/rust
	cp /build/out/rust/*.rmeta /build/out/rust/*.so $h/rust/
	cp /build/out/scripts/target.json $h/scripts/
	cat /build/out/rust/exports_*_generated.h | sed -n "s/^EXPORT_SYMBOL_RUST_GPL(\(_R.*\));$/\1/p" | sort -u >/build/ours
	awk "\$2 ~ /^_R/ {print \$2}" $h/Module.symvers | sort -u >/build/stock
	if ! cmp -s /build/ours /build/stock; then
		diff /build/ours /build/stock | head -20 >&2
		echo "error: the Rust symbols built here are not the stock kernel'"'"'s (above)" >&2
		exit 1
	fi
	echo "$(wc -l </build/stock) Rust symbols, as the stock Module.symvers exports them" >&2
	rm -rf /build
' >&2
touch "$root/.ri2n-built"
log "stock root ready: $root"
echo "$root"
