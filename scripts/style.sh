#!/usr/bin/env bash
# The style gate, run first by `make check`: rustfmt with the kernel's
# .rustfmt.toml, clippy on the module (the kernel's lint set, CLIPPY=1) and
# on the userspace crates, both with warnings denied, the net
# abstraction's compile_fail tests, and shellcheck on the scripts and lab
# tests. Usage: style.sh [KDIR] (default: the lab's kernel, built if
# missing).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
cd "$RI2N_ROOT"
failed=()

log "style: rustfmt --check"
rustfmt --edition 2021 --check ri2n_drv.rs >/dev/null || failed+=("rustfmt (driver, net/, core/): run rustfmt --edition 2021 ri2n_drv.rs")
(cd tools && cargo fmt --all --check >/dev/null) || failed+=("rustfmt (tools/): run cargo fmt --all in tools/")

log "style: cargo clippy (userspace crates)"
(cd tools && cargo clippy --release --quiet --all-targets -- -D warnings) || failed+=("cargo clippy in tools/")

log "style: clippy on the module (CLIPPY=1)"
kdir=${1:-$("$RI2N_ROOT/scripts/build-kernel.sh" guest)}
# The objects are the module's own: the next `make module` relinks them.
if ! PATH="$LLVM_DIR/bin:$RI2N_CACHE/tools/bin:$PATH" \
	make -s -C "$kdir" M="$RI2N_ROOT" LLVM=1 CLIPPY=1 KRUSTFLAGS=-Dwarnings modules >"$RI2N_ROOT/.style-clippy.log" 2>&1; then
	grep -E -A12 '^(error|warning)' "$RI2N_ROOT/.style-clippy.log" | head -60 >&2
	failed+=("clippy on the module (full log: .style-clippy.log)")
else
	rm -f "$RI2N_ROOT/.style-clippy.log"
fi

log "style: the net abstraction's compile_fail tests (scripts/api-misuse.sh)"
if ! PATH="$LLVM_DIR/bin:$RI2N_CACHE/tools/bin:$PATH" scripts/api-misuse.sh "$kdir" >"$RI2N_ROOT/.style-misuse.log" 2>&1; then
	cat "$RI2N_ROOT/.style-misuse.log" >&2
	failed+=("the net abstraction's compile_fail tests (scripts/api-misuse.sh)")
else
	rm -f "$RI2N_ROOT/.style-misuse.log"
fi

log "style: shellcheck"
shellcheck -x --severity=warning scripts/*.sh scripts/lab scripts/guest/* tests/lab/*.sh tests/build/*.sh tools/iproute2/*.sh || failed+=(shellcheck)

if [ ${#failed[@]} -gt 0 ]; then
	printf 'style: FAILED: %s\n' "${failed[@]}" >&2
	exit 1
fi
log "style: clean"
