#!/usr/bin/env bash
# The net abstraction's compile_fail tests: builds the module with
# tests/api/misuse.rs mounted (--cfg ri2n_api_misuse) and checks that
# rustc refuses each line marked "refused: CODE" there with that error,
# and reports no error anywhere else. Prints one line per case and
# "N passed, N failed".
#
# Usage: api-misuse.sh [KDIR]
set -euo pipefail
. "$(dirname "$0")/lib.sh"
kdir=${1:-$(scripts/build-kernel.sh guest)}
file=tests/api/misuse.rs
cd "$RI2N_ROOT"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# The build fails by design; its objects are the module's own, remade by
# the next `make module`.
make -s -C "$kdir" M="$RI2N_ROOT" LLVM=1 KRUSTFLAGS="--cfg ri2n_api_misuse" modules >"$log" 2>&1 || true
# "CODE FILE:LINE" for each error rustc gave.
got=$(awk '/^error\[E[0-9]+\]/ {code = substr($1, 7, 5); next}
	code != "" && $1 == "-->" {split($2, a, ":"); print code, a[1] ":" a[2]; code = ""}' "$log" | sort -u)
passed=0 failed=0
while IFS=: read -r line code; do
	code=${code##*refused: }
	if grep -qx "$code $file:$line" <<<"$got"; then
		echo "ok: $file:$line refused ($code)"
		passed=$((passed + 1))
	else
		echo "FAILED: $file:$line compiled, or failed otherwise than $code" >&2
		failed=$((failed + 1))
	fi
done < <(grep -n 'refused: E[0-9]*' "$file")
others=$(grep -v " $file:" <<<"$got" || true)
if [ -n "$others" ]; then
	echo "FAILED: errors outside $file:" >&2
	sed 's/^/  /' <<<"$others" >&2
	failed=$((failed + 1))
fi
[ "$passed" -gt 0 ] || { echo "FAILED: no case ran; the build said:" >&2; tail -20 "$log" >&2; failed=$((failed + 1)); }
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
