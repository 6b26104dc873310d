#!/usr/bin/env bash
# ri2n_qdisc.sh's third case: a multiqueue virtio slave (4 queues, 2
# vCPUs: XPS and flow hash).
QDISC_MQ=1 exec bash "$(dirname "$0")/ri2n_qdisc.sh"
