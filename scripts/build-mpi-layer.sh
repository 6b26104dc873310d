#!/usr/bin/env bash
# Build the initramfs layer that gives lab guests Debian's OpenMPI (for the
# benchmark's MPI ping-pong, Fig. 14): orterun/orted with their plugins and
# help files, tools/mpi-pingpong built with mpicc, and `ri2n-rsh`, the
# launcher mpirun uses to start orted on the other node (dropbear's client,
# with a lab-only key). Appended after the base image, so its authorized_keys
# replaces the base one with both keys. Keyed by the OpenMPI packages, this
# script and the program. Prints the layer's path.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

MPI_PKGS=(openmpi-bin libopenmpi3 libpmix2 dropbear-bin)
need_pkgs --bench "${MPI_PKGS[@]}" libopenmpi-dev
key=$({
	cat "$0" "$RI2N_ROOT/tools/mpi-pingpong.c" "$(initramfs_dir)/id_ed25519.pub"
	dpkg-query -W "${MPI_PKGS[@]}"
} | sha256sum | cut -c1-12)
out=$RI2N_CACHE/mpi/$key
if [ -f "$out/mpi.cpio.gz" ]; then
	echo "$out/mpi.cpio.gz"
	exit 0
fi

log "building the OpenMPI guest layer in $out"
rm -rf "$out"
mkdir -p "$out"
root=$out/root
mkdir -p "$root/usr/bin" "$root/root/.ssh"
mpicc -O2 -Wall -o "$out/mpi-pingpong" "$RI2N_ROOT/tools/mpi-pingpong.c"
copy_with_libs "$root" "$out/mpi-pingpong" /usr/bin/mpi-pingpong
for b in orterun orted dbclient; do
	copy_with_libs "$root" "$(command -v $b)" /usr/bin/$b
done
ln -s orterun "$root/usr/bin/mpirun"
lib=/usr/lib/x86_64-linux-gnu
for d in $lib/openmpi $lib/pmix2 /usr/share/openmpi /usr/share/pmix /etc/openmpi; do
	[ -d "$d" ] || continue
	mkdir -p "$root$(dirname "$d")"
	cp -a "$d" "$root$d"
done
# The plugins are dlopen()ed: their libraries too.
find "$lib/openmpi" "$lib/pmix2" -name '*.so' | while read -r so; do
	ldd "$so" 2>/dev/null | awk '/=> \// {print $3}' | while read -r l; do
		[ -e "$root$l" ] || copy_with_libs "$root" "$l" "$l"
	done
done

dropbearkey -t ed25519 -f "$root/root/.ssh/id_dropbear" 2>/dev/null |
	grep '^ssh-ed25519' >"$out/id_dropbear.pub"
cat "$(initramfs_dir)/id_ed25519.pub" "$out/id_dropbear.pub" >"$root/root/.ssh/authorized_keys"
cat >"$root/usr/bin/ri2n-rsh" <<'EOF'
#!/bin/sh
# mpirun's remote launcher in the lab: dropbear's client, lab-only key,
# host keys accepted (every guest's is made anew with its image).
exec dbclient -y -y -i /root/.ssh/id_dropbear "$@"
EOF
chmod 755 "$root/usr/bin/ri2n-rsh"

pack_cpio "$root" "$out/mpi.cpio.gz"
rm -rf "$root"
log "OpenMPI layer ready: $(du -h "$out/mpi.cpio.gz" | cut -f1)"
echo "$out/mpi.cpio.gz"
