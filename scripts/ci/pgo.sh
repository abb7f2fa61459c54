#!/usr/bin/env bash
# pgo.yml, job pgo: runs the engine-build PGO loop ('wafbench pgo': train
# the instrumented builds in Envoy, merge the profiles, build the pgo
# builds) and gathers what a user needs to reuse a profile trained on this
# runner into OUT: pgo/ (the .profdata and Go .pgo profiles with their JSON
# info files, as build/pgo/ holds them), engines/<build>/manifest.json of
# every pgo build, and runner.txt (CPU, kernel, commit). 'make engines
# PGO_PROFILE_DIR=OUT/pgo' consumes them (docs/engine-builds-and-pgo.md: profiles trained on GitHub Actions).
# In:  BUILDS (optional comma-separated pgo builds; empty = all), OUT,
#      WAFBENCH (optional binary: skips the make build)
# Out: dir (OUT). Exit status: the PGO loop's (what it made is gathered
#      either way).
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=scripts/ci/lib.sh
. scripts/ci/lib.sh

[ -n "${OUT:-}" ] || fail 2 "OUT: want the artifact directory"
case ${BUILDS:-} in *[!a-z0-9,_.@-]*) fail 2 "builds: want a comma-separated list of pgo builds, got '$BUILDS'" ;; esac

if [ -z "${WAFBENCH:-}" ]; then
  make build crs
fi
bin=$(wafbench_bin)
status=0
# Word splitting of the list into names is intended.
# shellcheck disable=SC2046
"$bin" pgo $(echo "${BUILDS:-}" | tr ',' ' ') || status=$?

mkdir -p "$OUT/pgo" "$OUT/engines"
shopt -s nullglob
for f in build/pgo/*.profdata build/pgo/*.pgo build/pgo/*.json; do
  cp "$f" "$OUT/pgo/"
done
for m in build/engines/*/manifest.json; do
  if grep -q '"profile"' "$m"; then
    d=$(basename "$(dirname "$m")")
    mkdir -p "$OUT/engines/$d"
    cp "$m" "$OUT/engines/$d/"
  fi
done
{
  echo "cpu_model: $(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)"
  echo "kernel: $(uname -srm)"
  echo "git: $(git rev-parse HEAD 2>/dev/null || echo unknown)"
  echo "pgo exit status: $status"
} >"$OUT/runner.txt"
output dir "$OUT"
if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
  {
    echo "### PGO profiles"
    echo '```'
    cat "$OUT/runner.txt"
    (cd "$OUT" && ls -l pgo engines/*)
    echo '```'
  } >>"$GITHUB_STEP_SUMMARY"
fi
exit "$status"
