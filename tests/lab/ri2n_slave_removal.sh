#!/usr/bin/env bash
# A slave disappears under ri2n (its driver unbound: the NIC unregisters):
# ri2n releases it at once (a kept reference would hang the unregistration),
# traffic goes on over the other link, rmmod still works.
set -u
. "$(dirname "$0")/lib.sh"
lab_up 2 2
ri2n_up n1 n2 || fail "ri2n_up"
on n1 ping -c 2 -q 10.0.0.2 >/dev/null
# eth1's virtio device.
dev=$(on n1 sh -c 'basename $(readlink /sys/class/net/eth1/device)')
check "unbind n1's eth1 (virtio $dev) within 10 s" on n1 timeout 10 sh -c "echo $dev > /sys/bus/virtio/drivers/virtio_net/unbind"
check "eth1 is gone" not on n1 ip link show eth1
check "procfs no longer lists it" not out_has n1 '^Slave 1: eth1' cat /proc/net/ri2n/ri2n0
check "logged" out_has n1 'ri2n0: link eth1: slave released \(it went away\)' dmesg
check "traffic continues over eth0" on n1 ping -c 5 -i 0.2 -W 2 -q 10.0.0.2
on n2 iperf3 -s -D
check "TCP continues over eth0" on n1 iperf3 -c 10.0.0.2 -t 2
check "rmmod with a removed slave" on n1 rmmod ri2n
check "the NIC comes back" on n1 sh -c "echo $dev > /sys/bus/virtio/drivers/virtio_net/bind"
finish
