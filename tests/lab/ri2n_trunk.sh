#!/usr/bin/env bash
# ri2n_one_switch.sh on a fabric of two bridges joined by a trunk, each
# node on both (LAB_TOPO=trunk): the same checks, up to those that depend
# on no topology (a replaced NIC, a peer in the other mode, bad origins).
LAB_TOPO=trunk exec bash "$(dirname "$0")/ri2n_one_switch.sh"
