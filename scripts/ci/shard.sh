#!/usr/bin/env bash
# bench.yml, matrix job bench: runs shard SHARD of SHARDS of the design
# (REPEATS per shard, SHARDS × REPEATS in all) and leaves its run directory
# under RESULTS.
# In:  SUITE, MODES, SHARD (0-based), SHARDS, REPEATS (per shard), RESULTS
#      (parent directory of the run), ENVOY_BIN (optional Envoy binary),
#      RUN_FLAGS (optional extra 'wafbench run' flags, e.g. shorter windows),
#      WAFBENCH (optional wafbench binary: skips the make build, for tests)
# Out: dir (the run directory), name (its base name). Exit status: the run's
#      (1 when some trials failed: the directory is still uploaded).
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=scripts/ci/lib.sh
. scripts/ci/lib.sh

case ${SUITE:-} in "" | *[!A-Za-z0-9_-]*) fail 2 "suite: want a name from profiles/, got '${SUITE:-}'" ;; esac
case ${MODES:-} in "" | *[!a-z0-9,_.@-]*) fail 2 "modes: want a comma-separated list of modes, got '${MODES:-}'" ;; esac
case ${SHARD:-} in "" | *[!0-9]*) fail 2 "shard: want a shard index, got '${SHARD:-}'" ;; esac
whole shards "${SHARDS:-}"
whole repeats "${REPEATS:-}"
[ "$SHARD" -lt "$SHARDS" ] || fail 2 "shard: want 0 ≤ shard < $SHARDS, got $SHARD"
[ -n "${RESULTS:-}" ] || fail 2 "RESULTS: want the parent directory for the run"

if [ -z "${WAFBENCH:-}" ]; then
  make build modules crs
fi
bin=$(wafbench_bin)
name="$SUITE-shard$SHARD-of-$SHARDS"
args=(run --suite "$SUITE" --modes "$MODES" --repeats $((REPEATS * SHARDS)) --shard "$SHARD/$SHARDS"
  --results "$RESULTS" --name "$name" --progress never)
if [ -n "${ENVOY_BIN:-}" ]; then
  [ -f "$ENVOY_BIN" ] || fail 2 "ENVOY_BIN: no file $ENVOY_BIN"
  chmod +x "$ENVOY_BIN"
  args+=(--envoy "$(realpath "$ENVOY_BIN")")
fi
# RUN_FLAGS is split on spaces on purpose: a list of flags.
# shellcheck disable=SC2206
args+=(${RUN_FLAGS:-})

mkdir -p "$RESULTS"
status=0
"$bin" "${args[@]}" || status=$?
dir=$(find "$RESULTS" -mindepth 1 -maxdepth 1 -type d -name "*-$name" | sort | tail -n 1)
if [ -n "$dir" ]; then
  output dir "$dir"
  output name "$(basename "$dir")"
fi
exit "$status"
