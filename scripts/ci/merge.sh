#!/usr/bin/env bash
# bench.yml, job merge: pools the shards' run directories (the downloaded
# artifacts under IN, one directory each) into OUT with every machine as a
# block ('wafbench merge --blocks'); a shard that left no run directory is
# named in the report ("3 of 4 shards").
# In:  IN, OUT (must not exist), WAFBENCH (optional binary; else built)
# Out: dir (OUT), report (OUT/report.md)
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=scripts/ci/lib.sh
. scripts/ci/lib.sh

[ -d "${IN:-}" ] || fail 2 "IN: want the directory of downloaded shard runs, got '${IN:-}'"
[ -n "${OUT:-}" ] || fail 2 "OUT: want the merged run directory"
[ ! -e "$OUT" ] || fail 2 "OUT: $OUT already exists"

runs=()
while IFS= read -r meta; do
  runs+=("$(dirname "$meta")")
done < <(find "$IN" -name meta.json -type f | sort)
((${#runs[@]})) || fail 1 "no run directory (meta.json) under $IN: every shard failed before writing one"

if [ -z "${WAFBENCH:-}" ]; then
  # merge needs only the driver, not the engines, Envoy or CRS.
  mkdir -p build
  go build -o build/wafbench ./driver/cmd/wafbench
fi
bin=$(wafbench_bin)
# One shard alone merges too: the report says "1 of N shards".
"$bin" merge --blocks --out "$OUT" "${runs[@]}"
output dir "$OUT"
output report "$OUT/report.md"
