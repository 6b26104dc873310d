#!/usr/bin/env bash
# Checks that the ip(8) link_ri2n.so will load into (IP, default: the one on
# PATH) is one whose internals link_ri2n.c copies: struct link_util, enum
# color_attr and enum output_type are the same in iproute2 5.0 to 7.1 (read
# from its sources), and ip must export the helpers the plugin calls.
set -euo pipefail
ip_bin=${IP:-$(command -v ip)}
ver=$("$ip_bin" -V | sed -nE 's/.*iproute2-v?([0-9]+)\.([0-9]+).*/\1 \2/p')
[ -n "$ver" ] || { echo "check-ip: cannot read the version of $ip_bin" >&2; exit 1; }
read -r major minor <<<"$ver"
if ((major < 5 || major > 7 || (major == 7 && minor > 1))); then
	echo "check-ip: $ip_bin is iproute2 $major.$minor; link_ri2n.c copies iproute2 5.0-7.1's struct link_util (ip/ip_common.h): compare it before use" >&2
	exit 1
fi
syms=$("${NM:-nm}" -D --defined-only "$ip_bin")
for sym in addattr32 get_u32 print_color_uint; do
	grep -qw "$sym" <<<"$syms" ||
		{ echo "check-ip: $ip_bin does not export $sym: it cannot load link_ri2n.so" >&2; exit 1; }
done
