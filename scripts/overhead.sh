#!/usr/bin/env bash
# Integration overhead: what each WAF module costs inside Envoy beyond its
# engine alone. Runs the modes on headers@16 and json_4k@1, then the
# in-process engine benchmarks (BenchmarkEngine/<engine>/<workload>) pinned to
# the Envoy CPU into the run directory as engine-bench.txt, then rebuilds the
# report, whose "Integration overhead" section gives
#   (mode CPU/req − passthrough CPU/req) ÷ engine-only CPU/req   (goal ≤ 1.10).
#
# Allocator: inside Envoy, libmodsecurity's malloc/free are Envoy's exported
# tcmalloc. The ModSecurity engine benchmark therefore runs twice, under
# glibc malloc and with Debian's tcmalloc_minimal preloaded; each block of
# engine-bench.txt starts with an "allocator: …" line and the report gives
# one row per allocator. Coraza's Go heap does not use malloc ("go").
#
# Caches: a benchmark loop finds the engine's data cached from the previous
# request; inside Envoy, Envoy's own request work runs in between. Each
# engine's benchmark with Envoy's allocator runs again with its caches cold:
# a buffer of OVERHEAD_THRASH bytes written between requests, untimed
# (tests/enginebench.ThrashEnv), one block per size, labelled "caches: cold
# N" ("caches: hot" otherwise).
#
# The run records Envoy with perf (OVERHEAD_PERF Hz), so the report's cost
# account splits what each mode adds into Envoy's extra work, our glue, the
# kernel and the engine's own work inside the hooks, and its section "Where
# the overhead goes" sets that work against the engine alone, hot and cold.
#
# Usage: scripts/overhead.sh [repeats=3]
# Environment: OVERHEAD_WORKLOADS (default headers@16,json_4k@1),
#   OVERHEAD_ENVOY_CPU (default 0; Envoy and the benchmarks run on it),
#   OVERHEAD_BENCHTIME (default 2s), OVERHEAD_COUNT (default 5),
#   OVERHEAD_THRASH (default "262144 2097152": bytes, space-separated; ""
#   = no cold blocks), OVERHEAD_PERF (default 999 Hz; 0 = no perf),
#   WAFBENCH_RULES (default build/crs/main.conf), RUN_FLAGS (extra run flags),
#   OVERHEAD_TCMALLOC (default Debian's libtcmalloc_minimal.so.4).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
repeats=${1:-3}
workloads=${OVERHEAD_WORKLOADS:-headers@16,json_4k@1}
cpu=${OVERHEAD_ENVOY_CPU:-0}
benchtime=${OVERHEAD_BENCHTIME:-2s}
count=${OVERHEAD_COUNT:-5}
rules=${WAFBENCH_RULES:-$root/build/crs/main.conf}
go=${GO:-go}
tcmalloc=${OVERHEAD_TCMALLOC:-/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4}
thrash=${OVERHEAD_THRASH-262144 2097152}
perfhz=${OVERHEAD_PERF:-999}
case $repeats in '' | *[!0-9]* | 0)
  echo "overhead: repeats: want a positive integer, got '$repeats'" >&2
  exit 2
  ;;
esac
for n in $thrash; do
  case $n in *[!0-9]* | 0)
    echo "overhead: OVERHEAD_THRASH: want byte counts > 0, got '$n'" >&2
    exit 2
    ;;
  esac
done
case $perfhz in '' | *[!0-9]*)
  echo "overhead: OVERHEAD_PERF: want Hz (0 = off), got '$perfhz'" >&2
  exit 2
  ;;
esac
perf=()
[ "$perfhz" != 0 ] && perf=(--perf "$perfhz")

# Everything the run and the benchmarks need: driver, both modules, the
# static ModSecurity engine library (make -C filters/modsecurity, part of
# modules) and the CRS export.
make build modules crs
[ -f "$rules" ] || { echo "overhead: rules $rules missing: run make crs or set WAFBENCH_RULES" >&2; exit 2; }
[ -f "$tcmalloc" ] || { echo "overhead: $tcmalloc missing: apt-get install libtcmalloc-minimal4 (scripts/setup.sh)" >&2; exit 2; }
mkdir -p build/bench
"$go" test -c -o build/bench/coraza-engine.test ./filters/coraza/engine
"$go" test -c -tags integration,modsecurity_engine -o build/bench/modsecurity-engine.test ./filters/modsecurity/bench

# 1. The run; it creates the run directory and names it on stdout.
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# shellcheck disable=SC2086 # RUN_FLAGS is a list of flags
build/wafbench run --suite seed --workloads "$workloads" --repeats "$repeats" --name overhead \
  --envoy-cpus "$cpu" "${perf[@]}" ${RUN_FLAGS:-} | tee "$log"
dir=$(sed -n 's/^results: //p' "$log" | tail -1)
if [ -z "$dir" ] || [ ! -d "$dir" ]; then
  echo "overhead: no 'results: DIR' line from wafbench run" >&2
  exit 1
fi

# 2. Engine-only benchmarks of the same workloads, pinned to the Envoy CPU;
# GOMAXPROCS=1 keeps Go's GC workers on that CPU too, as inside Envoy.
names=$(tr ',' '\n' <<<"$workloads" | sed 's/@.*//' | sort -u | paste -sd'|')
out=$dir/engine-bench.txt
{
  # The rules' path as the run records paths: relative to the repository
  # root when inside it (results/README.md, "Paths").
  echo "wafbench-rules: ${rules#"$root"/}"
  echo "pinned-cpu: $cpu"
  echo "gomaxprocs: 1"
  echo "benchtime: $benchtime"
  echo "git: $(git rev-parse HEAD 2>/dev/null || echo unknown)"
} >"$out"
# engine:allocator:caches triples; the allocator and caches lines precede
# each block.
runs="modsecurity:glibc:hot modsecurity:tcmalloc:hot coraza:go:hot"
for n in $thrash; do runs="$runs modsecurity:tcmalloc:$n coraza:go:$n"; done
for run in $runs; do
  engine=${run%%:*} rest=${run#*:}
  allocator=${rest%%:*} caches=${rest#*:}
  case $engine in
    modsecurity) pkg=filters/modsecurity/bench ;;
    coraza) pkg=filters/coraza/engine ;;
  esac
  preload=()
  [ "$allocator" = tcmalloc ] && preload=(env "LD_PRELOAD=$tcmalloc")
  echo "allocator: $allocator" >>"$out"
  cold=0
  if [ "$caches" = hot ]; then
    echo "caches: hot" >>"$out"
  else
    cold=$caches
    echo "caches: cold $caches" >>"$out"
  fi
  # With perf, each workload's benchmark runs alone and perf attaches to
  # it once its first result is out (CRS loading and the first round's
  # calibration are not what the rounds time), sampling as Envoy's windows
  # are; its folded stacks go to
  # perf/engine-<engine>-<workload>-<allocator>-<hot|coldN>.folded for the
  # report's part-by-part comparison.
  tag=hot
  [ "$caches" = hot ] || tag=cold$caches
  for name in $(tr '|' ' ' <<<"$names"); do
    part=$(mktemp)
    # go test runs a test binary in its package directory; so do we.
    (cd "$pkg" && exec env WAFBENCH_RULES="$rules" WAFBENCH_THRASH_BYTES="$cold" GOMAXPROCS=1 "${preload[@]}" taskset -c "$cpu" \
      "$root/build/bench/$engine-engine.test" \
      -test.run '^$' -test.bench "^BenchmarkEngine\$/^$engine\$/^($name)\$" \
      -test.benchtime "$benchtime" -test.count "$count" -test.benchmem) >"$part" &
    pid=$!
    if [ ${#perf[@]} -gt 0 ]; then
      mkdir -p "$dir/perf"
      data=$dir/perf/engine-$engine-$name-$allocator-$tag.data
      while kill -0 "$pid" 2>/dev/null && ! grep -q '^BenchmarkEngine/' "$part"; do sleep 0.1; done
      # perf ends when the benchmark does.
      perf record -q -e cpu-clock -F "$perfhz" -g -p "$pid" -o "$data" 2>/dev/null || true
      perf script -i "$data" 2>/dev/null | build/bin/inferno-collapse-perf >"${data%.data}.folded"
      rm -f "$data"
    fi
    wait "$pid" || { cat "$part" >&2; echo "overhead: BenchmarkEngine/$engine/$name failed" >&2; exit 1; }
    tee -a "$out" <"$part"
    rm -f "$part"
  done
done
grep -q "^BenchmarkEngine/" "$out" || { echo "overhead: no BenchmarkEngine results in $out" >&2; exit 1; }

# 3. The report, now with the Integration overhead section.
build/wafbench report "$dir"
awk '/^## Integration overhead/ {p=1; print; next} p && /^## / {exit} p' "$dir/report.md"
echo "report: $dir/report.md"
