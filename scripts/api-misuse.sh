#!/usr/bin/env bash
# The net abstraction's compile_fail tests: builds the module with
# tests/api/misuse.rs mounted (--cfg ri2n_api_misuse) and checks that
# rustc refuses each line marked "refused: CODE" there with that error,
# and gives no other error, there or anywhere else. Prints one line per
# case and "N passed, N failed".
#
# Usage: api-misuse.sh [KDIR]
set -euo pipefail
. "$(dirname "$0")/lib.sh"
kdir=${1:-$("$RI2N_ROOT/scripts/build-kernel.sh" guest)}
file=tests/api/misuse.rs
cd "$RI2N_ROOT"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# The build fails by design; its objects are the module's own, remade by
# the next `make module`.
make -s -C "$kdir" M="$RI2N_ROOT" LLVM=1 KRUSTFLAGS="--cfg ri2n_api_misuse" modules >"$log" 2>&1 || true
# "CODE FILE:LINE" for each error rustc gave ("-" for one without a code),
# at its first location; rustc's closing "aborting" line is none.
got=$(awk '/^error: aborting/ {next}
	/^error(\[E[0-9]+\])?:/ {code = $1 ~ /\[/ ? substr($1, 7, 5) : "-"; next}
	code != "" && $1 == "-->" {split($2, a, ":"); print code, a[1] ":" a[2]; code = ""}' "$log" | sort -u)
want=$(grep -nE '// refused: E[0-9]{4}$' "$file" | sed -E "s|^([0-9]+):.*refused: (E[0-9]{4})$|\2 $file:\1|" | sort -u)
passed=0 failed=0
while read -r code at; do
	if grep -qx "$code $at" <<<"$got"; then
		echo "ok: $at refused ($code)"
		passed=$((passed + 1))
	else
		echo "FAILED: $at compiled, or failed otherwise than $code" >&2
		failed=$((failed + 1))
	fi
done <<<"$want"
others=$(comm -13 <(echo "$want") <(echo "$got") | sed '/^$/d')
if [ -n "$others" ]; then
	echo "FAILED: errors no line expects:" >&2
	sed 's/^/  /' <<<"$others" >&2
	failed=$((failed + 1))
fi
[ "$passed" -gt 0 ] || { echo "FAILED: no case passed; the build said:" >&2; tail -20 "$log" >&2; failed=$((failed + 1)); }
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
