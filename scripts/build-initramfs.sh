#!/usr/bin/env bash
# Build the lab guests' base initramfs into the cache: busybox for the basics,
# real host programs (iproute2, iperf3, ethtool, ping, socat, kmod, bash) with
# their libraries, dropbear for `on NODE CMD`, and scripts/guest/* as /init's
# configuration. Keyed by this script, scripts/guest/ and the packages'
# versions. Prints the directory holding base.cpio.gz and the ssh key.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

out=$(initramfs_dir)
if [ -f "$out/base.cpio.gz" ]; then
	echo "$out"
	exit 0
fi
need_pkgs "" "${GUEST_PKGS[@]}"

log "building guest initramfs in $out"
rm -rf "$out"
mkdir -p "$out"
root=$out/root
mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,lib,lib64,etc,proc,sys,dev,tmp,run,root/.ssh,var/log,mnt}

cp /bin/busybox "$root/bin/busybox"
for a in $(/bin/busybox --list); do
	[ -e "$root/bin/$a" ] || ln -s busybox "$root/bin/$a"
done

# Host programs go to /usr/{s,}bin, ahead of busybox's applets in PATH; with
# bash as /bin/sh no applet shadows them (busybox ash prefers its applets).
for b in "${GUEST_BINS[@]}"; do
	src=$(command -v "$b") || die "host program $b not found: run scripts/setup-host.sh."
	case "$src" in */sbin/*) d=/usr/sbin ;; *) d=/usr/bin ;; esac
	copy_with_libs "$root" "$src" "$d/$b"
done
for m in modprobe insmod rmmod lsmod modinfo depmod; do ln -sf /usr/bin/kmod "$root/usr/sbin/$m"; done
# The kernel runs /sbin/modprobe for request_module() (`ip link add ... type ri2n`).
rm -f "$root/sbin/modprobe"; ln -s /usr/bin/kmod "$root/sbin/modprobe"
ln -sf /usr/bin/bash "$root/bin/sh.real"
rm -f "$root/bin/sh" "$root/bin/bash"
ln -s /usr/bin/bash "$root/bin/sh"
ln -s /usr/bin/bash "$root/bin/bash"
rm -f "$root/bin/sh.real"
mkdir -p "$root/lib64"
[ -e "$root/lib64/ld-linux-x86-64.so.2" ] || cp -L /lib64/ld-linux-x86-64.so.2 "$root/lib64/"
# netem's delay distributions and iproute2's tables.
cp -r /usr/lib/x86_64-linux-gnu/tc "$root/usr/lib/x86_64-linux-gnu/" 2>/dev/null || true
[ -d /usr/share/iproute2 ] && mkdir -p "$root/usr/share" && cp -r /usr/share/iproute2 "$root/usr/share/"

cp "$RI2N_ROOT/scripts/guest/rc" "$root/etc/rc.lab"
chmod +x "$root/etc/rc.lab"
cp "$RI2N_ROOT/scripts/guest/reset" "$root/usr/sbin/lab-reset"
chmod +x "$root/usr/sbin/lab-reset"
printf '::sysinit:/etc/rc.lab\n' >"$root/etc/inittab"
ln -s /bin/busybox "$root/init"
printf 'root:x:0:0:root:/root:/bin/bash\n' >"$root/etc/passwd"
printf 'root:x:0:\n' >"$root/etc/group"
printf '/bin/sh\n/bin/bash\n' >"$root/etc/shells"
printf '127.0.0.1 localhost\n' >"$root/etc/hosts"

# Lab-only keys, made once per image.
mkdir -p "$root/etc/dropbear"
dropbearkey -t ed25519 -f "$root/etc/dropbear/dropbear_ed25519_host_key" >/dev/null 2>&1
ssh-keygen -q -t ed25519 -N '' -C ri2n-lab -f "$out/id_ed25519"
cp "$out/id_ed25519.pub" "$root/root/.ssh/authorized_keys"
chmod 700 "$root/root/.ssh"

pack_cpio "$root" "$out/base.cpio.gz"
rm -rf "$root"
log "initramfs ready: $(du -h "$out/base.cpio.gz" | cut -f1)"
echo "$out"
