#!/usr/bin/env bash
# Build the initramfs layer that gives lab guests the applications of
# `make bench-apps`: Debian's LAMMPS (lmp, built with OpenMPI) and the LJ
# melt input (tools/apps/in.lj), netperf and netserver, sockperf, and
# tools/mpi-coll (OSU-style all-to-all and allreduce latency). Appended
# after the OpenMPI layer (scripts/build-mpi-layer.sh), which brings
# mpirun and its launcher. Keyed by the packages, this script and the
# sources. Prints the layer's path.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

APPS_PKGS=(lammps liblammps0 netperf sockperf libopenmpi-dev)
need_pkgs --apps "${APPS_PKGS[@]}"
key=$({
	cat "$0" "$RI2N_ROOT/tools/mpi-coll.c" "$RI2N_ROOT/tools/apps/in.lj"
	dpkg-query -W "${APPS_PKGS[@]}"
} | sha256sum | cut -c1-12)
out=$RI2N_CACHE/apps/$key
if [ -f "$out/apps.cpio.gz" ]; then
	echo "$out/apps.cpio.gz"
	exit 0
fi

log "building the applications guest layer in $out"
rm -rf "$out"
mkdir -p "$out"
root=$out/root
mpicc -O2 -Wall -o "$out/mpi-coll" "$RI2N_ROOT/tools/mpi-coll.c"
copy_with_libs "$root" "$out/mpi-coll" /usr/bin/mpi-coll
for b in lmp netperf netserver sockperf; do
	copy_with_libs "$root" "$(command -v $b)" /usr/bin/$b
done
mkdir -p "$root/usr/share/ri2n"
cp "$RI2N_ROOT/tools/apps/in.lj" "$root/usr/share/ri2n/in.lj"

pack_cpio "$root" "$out/apps.cpio.gz"
rm -rf "$root"
log "applications layer ready: $(du -h "$out/apps.cpio.gz" | cut -f1)"
echo "$out/apps.cpio.gz"
