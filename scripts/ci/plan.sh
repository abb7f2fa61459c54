#!/usr/bin/env bash
# bench.yml, job plan: checks the dispatch inputs and fans the shards out.
# In:  SUITE, MODES, SHARDS (matrix jobs, ≥ 1), REPEATS (per shard; empty =
#      the suite's repeats, read from profiles/)
# Out: shards (JSON list of shard indexes for the matrix), count, repeats
#      (per shard, resolved).
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=scripts/ci/lib.sh
. scripts/ci/lib.sh

case ${SUITE:-} in "" | *[!A-Za-z0-9_-]*) fail 2 "suite: want a name from profiles/, got '${SUITE:-}'" ;; esac
case ${MODES:-} in "" | *[!a-z0-9,_.@-]*) fail 2 "modes: want a comma-separated list of modes, got '${MODES:-}'" ;; esac
whole shards "${SHARDS:-}"
[ "$SHARDS" -le 64 ] || fail 2 "shards: want at most 64 matrix jobs, got $SHARDS"
repeats=${REPEATS:-}
if [ -z "$repeats" ]; then
  # The suite's repeats: "  <suite>:" then its "    repeats: N" line.
  repeats=$(awk -v s="  $SUITE:" '$0 == s {in_s = 1; next} in_s && /^  [^ ]/ {in_s = 0} in_s && $1 == "repeats:" {print $2; exit}' profiles/*.yaml)
  [ -n "$repeats" ] || fail 2 "suite $SUITE: not found in profiles/*.yaml (or it has no repeats)"
fi
whole repeats "$repeats"

list=$(seq -s, 0 $((SHARDS - 1)))
output shards "[$list]"
output count "$SHARDS"
output repeats "$repeats"
