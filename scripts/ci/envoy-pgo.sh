#!/usr/bin/env bash
# bench.yml, Bazel job envoy-pgo: merges the training profiles and builds
# the ThinLTO + PGO Envoy (bazel/pgo.sh), and writes what it printed to the
# job summary.
set -euo pipefail
cd "$(dirname "$0")/../.."
log="$RUNNER_TEMP/envoy-pgo.txt"
bazel/pgo.sh merge optimize | tee "$log"
{
  echo "### Envoy 1.40.0, ThinLTO + PGO"
  echo '```'
  cat "$log"
  echo '```'
} >>"$GITHUB_STEP_SUMMARY"
