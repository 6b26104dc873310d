#!/usr/bin/env bash
# Install everything the build and the lab need on a Debian 12 (bookworm) host,
# from Debian's archive and crates.io only. Idempotent: a second run installs
# nothing and takes a few seconds.
#
# Extra suites (bookworm-backports for QEMU 10, trixie-backports for the kernel
# source and rust-src) are added with pins so that nothing else is upgraded:
# trixie* at priority 1 (never chosen unless named), bookworm-backports at 100.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || die "setup-host.sh installs packages and must run as root."
[ -r /etc/debian_version ] || die "this is not a Debian host; the lab scripts need Debian 12 (bookworm)."

APT_PKGS=(
	# kernel build
	clang-19 lld-19 llvm-19 libclang-19-dev flex bison bc libelf-dev libssl-dev
	cpio dwarves kmod make xz-utils zstd gawk
	# guest userland (copied into the initramfs with their libraries)
	busybox-static iperf3 iproute2 ethtool iputils-ping dropbear-bin
	# host side of the lab
	openssh-client socat
	# the style gate (scripts/style.sh)
	shellcheck
	# the trixie root for Debian's own kernel (scripts/build-stock-env.sh)
	mmdebstrap
)
QEMU_PKG=qemu-system-x86
# --bench: what make bench needs besides (plots, the MPI ping-pong);
# --apps: that and make bench-apps's applications (LAMMPS, netperf,
# sockperf); --demo: the demo's timeline plot.
BENCH_PKGS=(gnuplot-nox openmpi-bin libopenmpi-dev linux-perf)
case "${1:-}" in
--bench) APT_PKGS+=("${BENCH_PKGS[@]}") ;;
--apps) APT_PKGS+=("${BENCH_PKGS[@]}" lammps liblammps0 netperf sockperf) ;;
--demo) APT_PKGS+=(gnuplot-nox) ;;
esac

sources=/etc/apt/sources.list.d/ri2n-extra.sources
prefs=/etc/apt/preferences.d/ri2n-extra
want_sources='Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm-backports trixie trixie-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg'
# The blank lines between stanzas matter: without them apt ignores the pins.
want_prefs='Package: *
Pin: release n=bookworm-backports
Pin-Priority: 100

Package: *
Pin: release n=trixie
Pin-Priority: 1

Package: *
Pin: release n=trixie-backports
Pin-Priority: 1'

updated=0
apt_update() { [ $updated = 1 ] || { log "apt-get update"; apt-get update -qq; updated=1; }; }

if [ "$(cat $sources 2>/dev/null)" != "$want_sources" ] || [ "$(cat $prefs 2>/dev/null)" != "$want_prefs" ]; then
	printf '%s\n' "$want_sources" >$sources
	printf '%s\n' "$want_prefs" >$prefs
	updated=0
	apt_update
fi
# netperf is in bookworm's non-free section only (trixie's needs a newer
# libc): --apps adds that section, pinned at 100 so that it only ever
# provides packages named for installation.
if [ "${1:-}" = --apps ]; then
	nf_sources=/etc/apt/sources.list.d/ri2n-nonfree.sources
	nf_prefs=/etc/apt/preferences.d/ri2n-nonfree
	want_nf_sources='Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm
Components: non-free
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg'
	want_nf_prefs='Package: *
Pin: release n=bookworm,c=non-free
Pin-Priority: 100'
	if [ "$(cat $nf_sources 2>/dev/null)" != "$want_nf_sources" ] || [ "$(cat $nf_prefs 2>/dev/null)" != "$want_nf_prefs" ]; then
		printf '%s\n' "$want_nf_sources" >$nf_sources
		printf '%s\n' "$want_nf_prefs" >$nf_prefs
		updated=0
		apt_update
	fi
fi

missing=()
for p in "${APT_PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	apt_update
	log "installing: ${missing[*]}"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

qemu_ver=$(dpkg-query -W -f='${Version}' $QEMU_PKG 2>/dev/null || true)
case "$qemu_ver" in
1:1[0-9].*) ;;
*)
	apt_update
	log "installing $QEMU_PKG from bookworm-backports"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		-t bookworm-backports $QEMU_PKG >/dev/null
	;;
esac

# bindgen: the kernel needs >= 0.71.1; Debian 12 has none that new.
if ! bindgen_ok; then
	log "cargo install bindgen-cli $BINDGEN_VERSION (1 to 3 minutes)"
	cargo install --locked --quiet bindgen-cli --version "$BINDGEN_VERSION" --root "$TOOLS_DIR"
fi
bindgen_ok || die "bindgen $BINDGEN_VERSION did not install into $TOOLS_DIR."

# The style gate's Rust tools come with the toolchain (rustup's default
# profile), not from a package.
for t in rustfmt cargo-clippy clippy-driver; do
	command -v $t >/dev/null || die "$t is missing: install the rustup components rustfmt and clippy for $(rustc --version)."
done

[ -c /dev/net/tun ] || die "/dev/net/tun is missing: the lab needs TUN/TAP (modprobe tun on the host, or run in a container with /dev/net/tun)."
log "host ready"
