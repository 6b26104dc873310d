#!/usr/bin/env bash
# Build the initramfs layer that gives lab guests `perf` (Debian's
# linux-perf), for `make profile`: where the guests' CPU time goes, by
# kernel symbol. Under TCG there is no PMU, so profiles sample cpu-clock.
# Keyed by the package and this script. Prints the layer's path.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

need_pkgs --bench linux-perf
key=$({
	cat "$0"
	dpkg-query -W linux-perf
} | sha256sum | cut -c1-12)
out=$RI2N_CACHE/perf/$key
if [ -f "$out/perf.cpio.gz" ]; then
	echo "$out/perf.cpio.gz"
	exit 0
fi
log "building the perf guest layer in $out"
rm -rf "$out"
mkdir -p "$out/root"
copy_with_libs "$out/root" "$(command -v perf)" /usr/bin/perf
pack_cpio "$out/root" "$out/perf.cpio.gz"
rm -rf "$out/root"
echo "$out/perf.cpio.gz"
