#!/usr/bin/env bash
# Compares wafbench's load engine with wrk on the same passthrough Envoy:
# alternated pairs (the first tool alternates too), both pinned to the client
# CPU, same connections and window. Prints req/s and client CPU µs per request
# (user+sys of the client process, start-up included, as `time` sees it), and
# the same net of each tool's start-up: the CPU of a run of one request
# (wafbench: a 43 MB binary's package init, ~10 ms; wrk: ~3 ms), measured in
# the same pair, subtracted before dividing by the window's requests. The last
# row gives the median of each ratio over the pairs.
# Usage: scripts/vs-wrk.sh [pairs=5] [conns=16] [seconds=5] [path=/safe]
# WAFBENCH=path/to/wafbench compares another build of the driver (default build/wafbench).
# Sourced (". scripts/vs-wrk.sh"), it only defines its functions (for tests).

# load_field FILE KEY: a number from the JSON `wafbench load --json` printed.
load_field() {
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"
}

# load_attempts FILE: requests the driver sent in its window, valid or not:
# valid responses plus every error (bad statuses, timeouts, resets).
load_attempts() {
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d["requests"] + sum((d.get("errors") or {}).values()))' "$1"
}

[[ "${BASH_SOURCE[0]}" == "$0" ]] || return 0

set -euo pipefail
cd "$(dirname "$0")/.."
pairs=${1:-5} conns=${2:-16} secs=${3:-5} path=${4:-/safe}
wb=${WAFBENCH:-build/wafbench}
[ -x "$wb" ] || { echo "vs-wrk: $wb missing: run make build" >&2; exit 2; }
command -v wrk >/dev/null || { echo "vs-wrk: wrk missing: run ./scripts/setup.sh" >&2; exit 2; }

out=$(mktemp -d)
trap 'kill -INT "$serve" 2>/dev/null; wait "$serve" 2>/dev/null; rm -rf "$out"' EXIT
"$wb" serve --mode passthrough --envoy-cpus 0 --client-cpus 1 --upstream-cpus 1 >"$out/url" 2>"$out/serve.err" &
serve=$!
for _ in $(seq 100); do [ -s "$out/url" ] && break; sleep 0.1; done
url=$(head -1 "$out/url")$path
[ -n "$url" ] || { cat "$out/serve.err" >&2; exit 1; }

# cpu_of CMD...: runs CMD and prints "user+sys seconds" of it and its children.
cpu_of() {
  local TIMEFORMAT='%U %S'
  { time "$@" >"$out/stdout" 2>/dev/null; } 2>"$out/time"
  awk '{print $1 + $2}' "$out/time"
}

# wrk_run SECONDS: wrk over the window; sets wcpu, wreq, wrps.
wrk_run() {
  wcpu=$(cpu_of taskset -c 1 wrk -t1 -c"$conns" -d"$1" "$url")
  wrps=$(awk '/Requests\/sec/ {print $2}' "$out/stdout")
  wreq=$(awk '/requests in/ {print $1}' "$out/stdout")
}

# wb_run ARGS...: wafbench load over the window; sets dcpu, dreq, drps.
wb_run() {
  dcpu=$(cpu_of taskset -c 1 "$wb" load --target "$url" --conns "$conns" --warmup 0 --json "$@")
  drps=$(load_field "$out/stdout" req_per_s)
  dreq=$(load_attempts "$out/stdout")
}

printf '| pair | wrk req/s | wafbench req/s | req/s ratio | wrk CPU µs/req | wafbench CPU µs/req | CPU ratio | wrk start-up ms | wafbench start-up ms | CPU ratio net of start-up |\n|---|---|---|---|---|---|---|---|---|---|\n'
for i in $(seq "$pairs"); do
  # Start-up: one tiny run each (wrk's shortest window, wafbench's one request).
  wrk_run 1ms; w0cpu=$wcpu w0req=$wreq
  wb_run --duration 1s --max-requests 1; d0cpu=$dcpu d0req=$dreq
  if ((i % 2)); then
    wrk_run "${secs}s"; wb_run --duration "${secs}s"
  else
    wb_run --duration "${secs}s"; wrk_run "${secs}s"
  fi
  awk -v i="$i" -v wr="$wrps" -v dr="$drps" -v wc="$wcpu" -v dc="$dcpu" -v wn="$wreq" -v dn="$dreq" \
    -v w0c="$w0cpu" -v w0n="$w0req" -v d0c="$d0cpu" -v d0n="$d0req" 'BEGIN {
    wu = wc * 1e6 / wn; du = dc * 1e6 / dn
    wnet = (wc - w0c) * 1e6 / (wn - w0n); dnet = (dc - d0c) * 1e6 / (dn - d0n)
    printf "| %d | %.0f | %.0f | %.3f | %.2f | %.2f | %.3f | %.1f | %.1f | %.3f |\n", i, wr, dr, dr / wr, wu, du, du / wu, w0c * 1e3, d0c * 1e3, dnet / wnet }'
done | tee "$out/rows"
# Medians of the ratios (columns 5, 8 and 11 of the rows, split on "|").
awk -F'|' '{ r[NR] = $5; c[NR] = $8; n[NR] = $11 }
  function med(a, k,   i, j, t) {
    for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
    return k % 2 ? a[(k + 1) / 2] + 0 : (a[k / 2] + a[k / 2 + 1]) / 2 }
  END { printf "| median | | | %.3f | | | %.3f | | | %.3f |\n", med(r, NR), med(c, NR), med(n, NR) }' "$out/rows"
