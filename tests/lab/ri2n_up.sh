#!/usr/bin/env bash
# `ri2n up CONF` / `ri2n down CONF`: a device, its ports, parameters, key
# and addresses from one file (Documentation/ri2n.rst, Starting at boot).
# Every bad file is refused with a message naming what is wrong, and
# leaves nothing made: no device, the ports as they were.
set -u
. "$(dirname "$0")/lib.sh"
lab_up 2 2
ri2n_up n2 || fail "ri2n_up n2"
key=00112233445566778899aabbccddeeff
on n2 sh -c "echo $key >/tmp/k && chmod 600 /tmp/k && ri2n key ri2n0 set /tmp/k"

# conf NAME TEXT: /etc/ri2n/NAME.conf on n1.
conf() { on n1 sh -c "mkdir -p /etc/ri2n && cat >/etc/ri2n/$1.conf" <<<"$2"; }
on n1 sh -c "umask 077 && mkdir -p /etc/ri2n && echo $key >/etc/ri2n/ri2n0.key"
conf ri2n0 "# n1's side of the pair
ports = eth0 eth1
address = 10.0.0.1/24
address = fd00::1/64
key_file = /etc/ri2n/ri2n0.key
hbspan = 700
fast_tout = 9"
check "ri2n up ri2n0" on n1 ri2n up ri2n0
masters() { on n1 sh -c 'for p in eth0 eth1; do basename "$(readlink /sys/class/net/$p/master)"; done' | tr '\n' ' '; }
check "  ... both ports its" test "$(masters)" = "ri2n0 ri2n0 "
check "  ... its parameters" out_has n1 "hbspan 700 .*fast_tout 9 " ip -d link show ri2n0
check "  ... its key" out_has n1 "keys: on" ri2n show ri2n0
check "  ... its addresses: n2 reached, sealed" on n1 ping -c 3 -i 0.2 -W 2 -q 10.0.0.2
check "  ... and over IPv6" await 10 "n1's IPv6 address (DAD)" on n1 ping -c 1 -W 1 -q fd00::2
check "up again refused: it exists" out_has n1 "ri2n0 exists already" sh -c 'ri2n up ri2n0 2>&1'
check "ri2n down ri2n0" on n1 ri2n down ri2n0
check "  ... gone" not on n1 test -e /sys/class/net/ri2n0
check "  ... its ports free" not on n1 sh -c 'test -e /sys/class/net/eth0/master || test -e /sys/class/net/eth1/master'
check "down of no ri2n device refused" out_has n1 "eth0: no such ri2n device" sh -c 'ri2n down eth0 2>&1'

# refused WHAT PATTERN TEXT [OWNER]: a file for device bad0 that `ri2n up`
# refuses with PATTERN in its message, leaving no bad0, eth0 masterless and
# eth1 as the test made it: OWNER's port, or masterless.
refused() {
	conf bad0 "$3"
	local msg
	msg=$(on n1 sh -c 'ri2n up bad0 2>&1; echo "exit $?"')
	echo "$msg"
	grep -Eq -- "$2" <<<"$msg" && grep -q 'exit 2' <<<"$msg" || return 1
	not on n1 test -e /sys/class/net/bad0 || return 1
	not on n1 test -e /sys/class/net/eth0/master || return 1
	[ "$(on n1 sh -c 'basename $(readlink /sys/class/net/eth1/master 2>/dev/null) 2>/dev/null')" = "${4:-}" ]
}
good="ports = eth0 eth1"
check "a missing port refused" refused port "port eth7: no such device" "ports = eth0 eth7"
on n1 modprobe bridge
on n1 ip link add br9 type bridge
on n1 ip link set eth1 master br9
check "a port owned elsewhere refused" refused port "port eth1 is a port of br9 already" "$good" br9
on n1 ip link del br9
on n1 sh -c "echo $key >/etc/ri2n/open.key && chmod 644 /etc/ri2n/open.key"
check "a world-readable key file refused" refused key "/etc/ri2n/open.key is readable by others than its owner \\(chmod 600 it\\)" "$good
key_file = /etc/ri2n/open.key"
check "a value out of range refused" refused value "bad0.conf:2: hbspan 5 is not 10\\.\\.=3600000 ms" "$good
hbspan = 5"
check "an unknown key refused" refused key "bad0.conf:2: no such key hbspam" "$good
hbspam = 700"
check "no ports refused" refused ports "bad0.conf: no ports" "hbspan = 700"
# What only the kernel refuses, once the device exists: undone.
check "a refusal after the device was made: undone" refused kernel "ft_lthresh.*bad0 deleted again" "$good
ft_lthresh = 20"
check "  ... as after the ports were taken" refused mtu "mtu 9000.*bad0 deleted again" "$good
mtu = 9000"
on n1 rm -rf /etc/ri2n
finish
