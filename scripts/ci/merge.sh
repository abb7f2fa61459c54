#!/usr/bin/env bash
# bench.yml, job merge: pools the shards' run directories (the downloaded
# artifacts under IN, one directory each) into OUT with every machine as a
# block ('wafbench merge --blocks'); a shard that left no run directory is
# named in the report ("3 of 4 shards").
# In:  IN, OUT (must not exist), FORCE (optional: "true" pools despite
#      different Envoy/module/CRS hashes, listed as limitations), WAFBENCH
#      (optional binary; else built)
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
flags=(--blocks)
case ${FORCE:-false} in
  true) flags+=(--force) ;;
  false | "") ;;
  *) fail 2 "FORCE: want true or false, got '$FORCE'" ;;
esac
# One shard alone merges too: the report says "1 of N shards".
"$bin" merge "${flags[@]}" --out "$OUT" "${runs[@]}"
output dir "$OUT"
output report "$OUT/report.md"
