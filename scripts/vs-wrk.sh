#!/usr/bin/env bash
# Compares wafbench's load engine with wrk on the same passthrough Envoy:
# alternated pairs, both pinned to the client CPU, same connections and window.
# Prints req/s and client CPU µs per request (user+sys of the client process).
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

printf '| pair | wrk req/s | wafbench req/s | req/s ratio | wrk CPU µs/req | wafbench CPU µs/req | CPU ratio |\n|---|---|---|---|---|---|---|\n'
for i in $(seq "$pairs"); do
  wcpu=$(cpu_of taskset -c 1 wrk -t1 -c"$conns" -d"${secs}s" "$url")
  wrps=$(awk '/Requests\/sec/ {print $2}' "$out/stdout")
  wreq=$(awk '/requests in/ {print $1}' "$out/stdout")
  dcpu=$(cpu_of taskset -c 1 "$wb" load --target "$url" --conns "$conns" --duration "${secs}s" --warmup 0 --json)
  drps=$(load_field "$out/stdout" req_per_s)
  dreq=$(load_attempts "$out/stdout")
  awk -v i="$i" -v wr="$wrps" -v dr="$drps" -v wc="$wcpu" -v dc="$dcpu" -v wn="$wreq" -v dn="$dreq" 'BEGIN {
    wu = wc * 1e6 / wn; du = dc * 1e6 / dn
    printf "| %d | %.0f | %.0f | %.3f | %.2f | %.2f | %.3f |\n", i, wr, dr, dr / wr, wu, du, du / wu }'
done
