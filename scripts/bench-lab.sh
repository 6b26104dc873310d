#!/usr/bin/env bash
# make bench: bulk TCP over one link, Linux bonding balance-rr and ri2n, with
# 2 and 4 links shaped to RATE each, and once unshaped (CPU-bound); TCP
# health from the sender's nstat counters. Each configuration runs on a
# fresh lab. Writes bench/results/bulk-<date>.md and prints it.
#
# Shaping: tbf on each tap's egress on the host side (into the guest), the
# way a switch port's line rate limits a NIC; the guests pay nothing for it.
set -u
. "$RI2N_ROOT/tests/lab/lib.sh"
RATE=${BENCH_RATE:-100mbit}
SECS=${BENCH_SECS:-10}
OUT=$RI2N_ROOT/bench/results/bulk-$(date +%Y-%m-%d).md
ROWS=$LAB_DIR/rows
: >"$ROWS"

addr() { echo "10.$1.0.${2#n}"; }

setup() { # CONFIG LINKS: the data path under test; prints the peer address
	local cfg=$1 links=$2 n l slaves
	slaves=$(seq -s, -f 'eth%g' 0 $((links - 1)))
	for n in n1 n2; do
		case $cfg in
		single) on $n ip addr add "$(addr 1 $n)/24" dev eth0 ;;
		bond)
			on $n modprobe bonding max_bonds=0
			on $n ip link add bond0 type bond mode balance-rr miimon 100
			for ((l = 0; l < links; l++)); do
				on $n ip link set eth$l down
				on $n ip link set eth$l master bond0
			done
			on $n ip link set bond0 up
			on $n ip addr add "$(addr 3 $n)/24" dev bond0
			;;
		ri2n)
			on $n modprobe ri2n slaves="$slaves"
			on $n ip link set ri2n0 up
			on $n ip addr add "$(addr 0 $n)/24" dev ri2n0
			;;
		esac
	done
	case $cfg in single) addr 1 n2 ;; bond) addr 3 n2 ;; ri2n) addr 0 n2 ;; esac
}

nstat_snap() { on "$1" nstat -az TcpInSegs TcpOutSegs TcpRetransSegs TcpExtTCPDSACKRecv TcpExtTCPSACKReorder TcpExtTCPTSReorder TcpExtTCPRenoReorder TcpExtTCPSpuriousRTOs TcpExtTCPDSACKIgnoredOld | awk 'NR > 1 {print $1, $2}'; }
delta() { awk -v k="$3" '$1 == k {v[FILENAME] = $2} END {print v[ARGV[2]] - v[ARGV[1]]}' "$1" "$2"; }

run() { # CONFIG LINKS RATE STREAMS
	local cfg=$1 links=$2 rate=$3 streams=$4 dst mbit mb
	lab_up 2 "$links"
	if [ "$rate" != none ]; then
		for n in n1 n2; do for ((l = 0; l < links; l++)); do link_shape $n $l "$rate"; done; done
	fi
	dst=$(setup "$cfg" "$links" | tail -1)
	on n1 ping -c 3 -q -W 2 "$dst" >/dev/null
	on n2 iperf3 -s -D
	sleep 0.5
	nstat_snap n1 >"$LAB_DIR/s0"
	on n1 iperf3 -c "$dst" -t "$SECS" -P "$streams" -J >"$LAB_DIR/iperf.json"
	nstat_snap n1 >"$LAB_DIR/s1"
	mbit=$(awk -F'[:,]' '/"sum_received"/ {r = 1} r && /"bits_per_second"/ {printf "%.1f", $2 / 1e6; exit}' "$LAB_DIR/iperf.json")
	mb=$(awk -F'[:,]' '/"sum_received"/ {r = 1} r && /"bytes"/ {printf "%.1f", $2 / 1048576; exit}' "$LAB_DIR/iperf.json")
	local acks retr dsack reord
	acks=$(delta "$LAB_DIR/s0" "$LAB_DIR/s1" TcpInSegs)
	retr=$(delta "$LAB_DIR/s0" "$LAB_DIR/s1" TcpRetransSegs)
	dsack=$(delta "$LAB_DIR/s0" "$LAB_DIR/s1" TcpExtTCPDSACKRecv)
	reord=$(($(delta "$LAB_DIR/s0" "$LAB_DIR/s1" TcpExtTCPSACKReorder) + $(delta "$LAB_DIR/s0" "$LAB_DIR/s1" TcpExtTCPTSReorder) + $(delta "$LAB_DIR/s0" "$LAB_DIR/s1" TcpExtTCPRenoReorder)))
	printf '| %-6s | %d | %-7s | %d | %8s | %6s | %8s | %5s | %6s | %7s |\n' "$cfg" "$links" "$rate" "$streams" "$mbit" \
		"$(awk -v a="$acks" -v m="$mb" 'BEGIN {printf "%.0f", m > 0 ? a / m : 0}')" "$retr" "$dsack" "$reord" "$mb" | tee -a "$ROWS"
	lab_check_kernel || pretty WARN "kernel splat in $cfg run"
	lab_down
	LAB_DIR=$(mktemp -d /tmp/ri2n-lab.XXXXXX)
	ROWS_KEEP=1
}

keep=$ROWS
for links in 2 4; do
	for cfg in single bond ri2n; do
		for streams in 1 4; do
			run $cfg $links "$RATE" $streams
			ROWS=$keep
		done
	done
done
for cfg in single bond ri2n; do
	run $cfg 2 none 1
	ROWS=$keep
done

{
	echo "# Bulk TCP: one link, bonding balance-rr, ri2n"
	echo
	echo "- date: $(date -u +%Y-%m-%dT%H:%MZ), commit $(git -C "$RI2N_ROOT" rev-parse --short HEAD), kernel $(basename "$(dirname "$(dirname "$(dirname "$LAB_KERNEL")")")")"
	echo "- two TCG guests (1 vCPU each); iperf3 ${SECS} s n1 -> n2; receiver goodput"
	echo "- shaping: tbf $RATE (burst 128kb) on every tap's egress on the host (into each guest), as a switch port's line rate; 'none' = unshaped, CPU-bound"
	echo "- TCP health from the sender's nstat: ACK segments received per MiB, retransmitted segments, DSACKs received, reorder events (SACK+TS+Reno)"
	echo
	echo "| config | links | rate | streams | Mbit/s | ACKs/MiB | retrans | DSACK | reorder | MiB |"
	echo "|--------|-------|------|---------|-------:|---------:|--------:|------:|--------:|----:|"
	cat "$keep"
} >"$OUT"
cat "$OUT"
