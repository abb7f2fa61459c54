#!/usr/bin/env bash
# Compares wafbench's load engine with wrk on the same passthrough Envoy and
# records it as a run: alternated pairs (the first tool alternates too), both
# pinned to the client CPU, same connections and window. Each tool's window is
# one record of loadgen.jsonl in the run directory: req/s, requests, client
# CPU (user+sys of the client process, start-up included, as `time` sees it)
# and CPU µs per request, the same net of the tool's start-up (the CPU of a
# run of one request — wafbench: a 43 MB binary's package init; wrk: a few
# ms — measured in the same pair and subtracted before dividing by the
# window's requests; wrk's start-up is `wrk -v`, see wrk_startup), latency percentiles as each tool reports them, which
# tool, pair index and position in the pair. `wafbench report DIR` rebuilds
# the report's "Load engine vs wrk" section from those records.
#
# The run directory itself comes from `wafbench run` (one passthrough trial of
# headers@16, 1 s), so meta.json records the machine, Envoy, git state and
# CPUs like any run; the comparison is appended as loadgen.jsonl.
#
# Usage: scripts/vs-wrk.sh [pairs=5] [conns=16,1] [seconds=5] [path=/safe]
#   conns is a comma list: one table per connection count, in one run.
# Environment: WAFBENCH=path/to/wafbench (default build/wafbench);
#   VSWRK_NOTE="…" adds a note to the records (e.g. that the machine was shared).
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

# record OUT TOOL CONNS PAIR POSITION SECONDS CPU_S STARTUP_CPU_S STARTUP_REQ
# STDOUT: appends one window record to OUT from the tool's output (wrk's text
# with --latency, or wafbench load --json).
record() {
  python3 - "$@" <<'EOF'
import json, re, sys
out, tool, conns, pair, pos, secs, cpu, cpu0, req0, path = sys.argv[1:11]
text = open(path).read()
rec = {"kind": "window", "tool": tool, "conns": int(conns), "pair": int(pair), "position": int(pos),
       "seconds": float(secs), "client_cpu_s": float(cpu), "startup_cpu_s": float(cpu0),
       "startup_requests": int(req0)}
if tool == "wrk":
    rec["requests"] = int(re.search(r"^\s*(\d+) requests in", text, re.M).group(1))
    rec["req_per_s"] = float(re.search(r"^Requests/sec:\s*([\d.]+)", text, re.M).group(1))
    unit = {"us": 1, "ms": 1e3, "s": 1e6}
    for q, key in (("50", "p50_us"), ("90", "p90_us"), ("99", "p99_us")):
        m = re.search(r"^\s*" + q + r"%\s+([\d.]+)(us|ms|s)\s*$", text, re.M)
        rec[key] = float(m.group(1)) * unit[m.group(2)] if m else None
    errs = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    sock = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
    rec["errors"] = (int(errs.group(1)) if errs else 0) + (sum(map(int, sock.groups())) if sock else 0)
else:
    d = json.loads(text)
    rec["errors"] = sum((d.get("errors") or {}).values())
    rec["requests"] = d["requests"] + rec["errors"]
    rec["req_per_s"] = d["req_per_s"]
    for key in ("p50_us", "p90_us", "p99_us"):
        rec[key] = d.get(key)
with open(out, "a") as f:
    f.write(json.dumps(rec, sort_keys=True) + "\n")
EOF
}

[[ "${BASH_SOURCE[0]}" == "$0" ]] || return 0

set -euo pipefail
cd "$(dirname "$0")/.."
pairs=${1:-5} conns_list=${2:-16,1} secs=${3:-5} path=${4:-/safe}
wb=${WAFBENCH:-build/wafbench}
case $pairs in '' | *[!0-9]* | 0)
  echo "vs-wrk: pairs: want a positive integer, got '$pairs'" >&2
  exit 2
  ;;
esac
case $secs in '' | *[!0-9]* | 0)
  echo "vs-wrk: seconds: want a positive integer, got '$secs'" >&2
  exit 2
  ;;
esac
case $conns_list in '' | *[!0-9,]* | ,* | *, | *,,*)
  echo "vs-wrk: conns: want a comma list of positive integers, got '$conns_list'" >&2
  exit 2
  ;;
esac
[ -x "$wb" ] || { echo "vs-wrk: $wb missing: run make build" >&2; exit 2; }
command -v wrk >/dev/null || { echo "vs-wrk: wrk missing: run ./scripts/setup.sh" >&2; exit 2; }

out=$(mktemp -d)
serve=
trap '[ -n "$serve" ] && kill -INT "$serve" 2>/dev/null; wait 2>/dev/null; rm -rf "$out"' EXIT

# 1. The run directory, with meta.json like any run's.
"$wb" run --suite seed --modes passthrough --workloads headers@16 --repeats 1 --duration 1s \
  --matrix none --name vs-wrk --envoy-cpus 0 | tee "$out/run.log"
dir=$(sed -n 's/^results: //p' "$out/run.log" | tail -1)
if [ -z "$dir" ] || [ ! -d "$dir" ]; then
  echo "vs-wrk: no 'results: DIR' line from wafbench run" >&2
  exit 1
fi
recs=$dir/loadgen.jsonl

# 2. One passthrough Envoy for every window of both tools.
"$wb" serve --mode passthrough --envoy-cpus 0 --client-cpus 1 --upstream-cpus 1 >"$out/url" 2>"$out/serve.err" &
serve=$!
for _ in $(seq 600); do [ -s "$out/url" ] && break; sleep 0.1; done
url=$(head -1 "$out/url")$path
[ -n "$(head -1 "$out/url")" ] || { cat "$out/serve.err" >&2; exit 1; }

python3 - "$recs" "$pairs" "$conns_list" "$secs" "$path" "$(wrk -v 2>&1 | head -1 | sed 's/ Copyright.*//')" "${VSWRK_NOTE:-}" <<'EOF'
import json, sys, time
out, pairs, conns, secs, path, wrkv, note = sys.argv[1:8]
rec = {"kind": "header", "command": "scripts/vs-wrk.sh %s %s %s %s" % (pairs, conns, secs, path),
       "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
       "pairs": int(pairs), "conns": [int(c) for c in conns.split(",")], "seconds": int(secs), "path": path,
       "wrk": wrkv, "envoy_cpus": "0", "client_cpus": "1", "upstream_cpus": "1",
       "cpu_method": "user+sys seconds of the client process (bash time), start-up included",
       "startup_method": {"wrk": "wrk -v (exec, dynamic linking, exit; no threads or connections: a lower bound, since wrk runs no window under 1 s)",
                          "wafbench": "wafbench load --max-requests 1 (start-up, one connection per --conns, one request)"},
       "notes": [note] if note else []}
open(out, "w").write(json.dumps(rec, sort_keys=True) + "\n")
EOF

# cpu_of CMD...: runs CMD and prints "user+sys seconds" of it and its children.
cpu_of() {
  local TIMEFORMAT='%U %S'
  { time "$@" >"$out/stdout" 2>/dev/null || true; } 2>"$out/time"
  awk '{print $1 + $2}' "$out/time"
}

# wrk_startup: wrk cannot run a window under 1 s (it rejects -d1ms and prints
# its usage), so its start-up is the CPU of `wrk -v`: exec, dynamic linking
# and exit, no threads or connections — a lower bound. Sets wcpu, wreq=0.
wrk_startup() {
  wcpu=$(cpu_of wrk -v)
  wreq=0
}

# wrk_run SECONDS: wrk over the window; sets wcpu, wreq and keeps its output.
wrk_run() {
  wcpu=$(cpu_of taskset -c 1 wrk -t1 -c"$conns" -d"$1" --latency "$url")
  wreq=$(awk '/requests in/ {print $1}' "$out/stdout")
  cp "$out/stdout" "$out/wrk.out"
}

# wb_run ARGS...: wafbench load over the window; sets dcpu, dreq.
wb_run() {
  dcpu=$(cpu_of taskset -c 1 "$wb" load --target "$url" --conns "$conns" --warmup 0 --json "$@")
  dreq=$(load_attempts "$out/stdout")
  cp "$out/stdout" "$out/wb.out"
}

for conns in ${conns_list//,/ }; do
  for i in $(seq "$pairs"); do
    # Start-up: wrk -v (see wrk_startup), wafbench's run of one request.
    wrk_startup
    w0cpu=$wcpu w0req=$wreq
    wb_run --duration 1s --max-requests 1
    d0cpu=$dcpu d0req=$dreq
    if ((i % 2)); then
      wrk_run "${secs}s"
      record "$recs" wrk "$conns" "$i" 1 "$secs" "$wcpu" "$w0cpu" "$w0req" "$out/wrk.out"
      wb_run --duration "${secs}s"
      record "$recs" wafbench "$conns" "$i" 2 "$secs" "$dcpu" "$d0cpu" "$d0req" "$out/wb.out"
    else
      wb_run --duration "${secs}s"
      record "$recs" wafbench "$conns" "$i" 1 "$secs" "$dcpu" "$d0cpu" "$d0req" "$out/wb.out"
      wrk_run "${secs}s"
      record "$recs" wrk "$conns" "$i" 2 "$secs" "$wcpu" "$w0cpu" "$w0req" "$out/wrk.out"
    fi
    echo "vs-wrk: conns $conns pair $i/$pairs recorded" >&2
  done
done

# 3. The report, rebuilt from the run's raw files (its "Load engine vs wrk" section from loadgen.jsonl).
"$wb" report "$dir"
echo "results: $dir"
