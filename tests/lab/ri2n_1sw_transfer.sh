#!/usr/bin/env bash
# ri2n_transfer.sh in one-switch mode, every link through one switch.
LAB_TOPO=one-switch RI2N_PARAMS="one_switch=1 ${RI2N_PARAMS:-}" exec bash "$(dirname "$0")/ri2n_transfer.sh"
