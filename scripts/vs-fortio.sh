#!/usr/bin/env bash
# Compares wafbench's load engine with fortio (fortio.org/fortio, built by
# exact version into build/bin) on one passthrough Envoy, closed loop and
# open loop at half of the closed-loop capacity, and records it as a run, as
# scripts/vs-wrk.sh does with wrk: alternated pairs (the tool that goes first
# alternates), both pinned to the client CPU, same connections and window.
# Each tool's window is one record of loadgen.jsonl: req/s, requests, client
# CPU (user+sys of the client process, as `time` sees it) and the same net of
# the tool's start-up (a one-request run in the same pair), p50/p90/p99 as
# each tool reports them, and the load model and rate. Open loop, fortio runs
# with -uniform (its requests spread evenly) and reports latency from the
# actual send; wafbench reports both: from the intended send time (corrected
# for coordinated omission) and from the actual write, with its own send
# delay. fortio keeps its histogram at 10 µs resolution (-r 0.00001; its
# default is 1 ms). `wafbench report DIR` rebuilds the report's "Load engine
# vs fortio" section from those records.
#
# The open-loop rate is half of wafbench's closed-loop req/s in a
# calibration window run first (recorded in the header). Open loop, each
# pair has two more windows: wafbench paced by Go timers as fortio is
# (`load --pacer go-timer`: sends bunch at millisecond ticks), to compare
# the two measurements on the same kind of schedule, and a wake-up probe
# (wafbench on one connection at 1000 req/s), whose own send delay is the
# client's timer wake-up with little else on its CPU.
#
# Usage: scripts/vs-fortio.sh [pairs=5] [conns=16] [seconds=5] [path=/safe]
# Environment: WAFBENCH=path/to/wafbench (default build/wafbench);
#   FORTIO=path/to/fortio (default build/bin/fortio, built with `go install
#   fortio.org/fortio@v1.68.2` when missing); VSFORTIO_NOTE="…" adds a note
#   to the records (e.g. that the machine was shared).
# Smoke run (≈ 50 s): scripts/vs-fortio.sh 1 16 2
# Sourced (". scripts/vs-fortio.sh"), it only defines its functions (for tests).

fortio_version=v1.68.2

# record_window OUT TOOL LOAD RATE CONNS PAIR POSITION SECONDS CPU_S
# STARTUP_CPU_S STARTUP_REQ STDOUT: appends one window record to OUT from
# the tool's output (fortio's -json file, or wafbench load --json).
record_window() {
  python3 - "$@" <<'EOF'
import json, sys
out, tool, load, rate, conns, pair, pos, secs, cpu, cpu0, req0, path = sys.argv[1:13]
d = json.load(open(path))
rec = {"kind": "window", "tool": tool, "load": load, "rate_per_s": float(rate), "conns": int(conns),
       "pair": int(pair), "position": int(pos), "seconds": float(secs), "client_cpu_s": float(cpu),
       "startup_cpu_s": float(cpu0), "startup_requests": int(req0)}
if tool == "fortio":
    h = d["DurationHistogram"]
    codes = d.get("RetCodes") or {}
    ok = int(codes.get("200", 0))
    rec["requests"] = int(h["Count"])
    rec["errors"] = rec["requests"] - ok
    rec["req_per_s"] = ok / (d["ActualDuration"] / 1e9) if d.get("ActualDuration") else float(d["ActualQPS"])
    pct = {p["Percentile"]: p["Value"] * 1e6 for p in h.get("Percentiles") or []}
    for q, key in ((50, "p50_us"), (90, "p90_us"), (99, "p99_us")):
        rec[key] = pct.get(q)
else:
    rec["errors"] = sum((d.get("errors") or {}).values())
    rec["requests"] = d["requests"] + rec["errors"]
    rec["req_per_s"] = d["req_per_s"]
    for key in ("p50_us", "p90_us", "p99_us"):
        rec[key] = d.get(key)
    rec["window_cpu_us_per_req"] = d.get("client_cpu_us_per_request")
    if d.get("pacer"):
        rec["pacer"] = d["pacer"]
    s = d.get("send")
    if s:
        for q in ("50", "90", "99"):
            rec["from_send_p%s_us" % q] = s["from_send_p%s_us" % q]
            rec["own_p%s_us" % q] = s["own_p%s_us" % q]
with open(out, "a") as f:
    f.write(json.dumps(rec, sort_keys=True) + "\n")
EOF
}

# half_rate FILE: half of the req/s in wafbench load --json output FILE.
half_rate() {
  python3 -c 'import json,sys; print(round(json.load(open(sys.argv[1]))["req_per_s"] / 2))' "$1"
}

[[ "${BASH_SOURCE[0]}" == "$0" ]] || return 0

set -euo pipefail
cd "$(dirname "$0")/.."
pairs=${1:-5} conns=${2:-16} secs=${3:-5} path=${4:-/safe}
wb=${WAFBENCH:-build/wafbench}
fortio=${FORTIO:-build/bin/fortio}
case $pairs in '' | *[!0-9]* | 0)
  echo "vs-fortio: pairs: want a positive integer, got '$pairs'" >&2
  exit 2
  ;;
esac
case $conns in '' | *[!0-9]* | 0)
  echo "vs-fortio: conns: want a positive integer, got '$conns'" >&2
  exit 2
  ;;
esac
case $secs in '' | *[!0-9]* | 0)
  echo "vs-fortio: seconds: want a positive integer, got '$secs'" >&2
  exit 2
  ;;
esac
[ -x "$wb" ] || { echo "vs-fortio: $wb missing: run make build" >&2; exit 2; }
if [ ! -x "$fortio" ]; then
  command -v go >/dev/null || { echo "vs-fortio: $fortio missing and no go to build it: run ./scripts/setup.sh" >&2; exit 2; }
  echo "vs-fortio: building fortio $fortio_version into build/bin" >&2
  GOBIN=$PWD/build/bin go install "fortio.org/fortio@$fortio_version"
  fortio=build/bin/fortio
fi

out=$(mktemp -d)
serve=
trap '[ -n "$serve" ] && kill -INT "$serve" 2>/dev/null; wait 2>/dev/null; rm -rf "$out"' EXIT

# 1. The run directory, with meta.json like any run's.
"$wb" run --suite seed --modes passthrough --workloads headers@16 --repeats 1 --duration 1s \
  --matrix none --name vs-fortio --envoy-cpus 0 --client-cpus 1 --upstream-cpus 1 | tee "$out/run.log"
dir=$(sed -n 's/^results: //p' "$out/run.log" | tail -1)
if [ -z "$dir" ] || [ ! -d "$dir" ]; then
  echo "vs-fortio: no 'results: DIR' line from wafbench run" >&2
  exit 1
fi
recs=$dir/loadgen.jsonl

# 2. One passthrough Envoy for every window of both tools.
"$wb" serve --mode passthrough --envoy-cpus 0 --client-cpus 1 --upstream-cpus 1 >"$out/url" 2>"$out/serve.err" &
serve=$!
for _ in $(seq 600); do [ -s "$out/url" ] && break; sleep 0.1; done
[ -n "$(head -1 "$out/url")" ] || { cat "$out/serve.err" >&2; exit 1; }
url=$(head -1 "$out/url")$path

# cpu_of CMD...: runs CMD and prints "user+sys seconds" of it and its children.
cpu_of() {
  local TIMEFORMAT='%U %S'
  { time "$@" >"$out/stdout" 2>"$out/stderr" || true; } 2>"$out/time"
  awk '{print $1 + $2}' "$out/time"
}

# 3. Calibration: wafbench's closed-loop req/s; the open loop runs at half.
taskset -c 1 "$wb" load --target "$url" --conns "$conns" --warmup 500ms --duration "${secs}s" --json >"$out/cal.json"
rate=$(half_rate "$out/cal.json")
[ "$rate" -gt 0 ] || { echo "vs-fortio: calibration window gave no req/s" >&2; exit 1; }
probe_rate=1000

python3 - "$recs" "$pairs" "$conns" "$secs" "$path" "$("$fortio" version | head -1)" "$rate" "${VSFORTIO_NOTE:-}" <<'EOF'
import json, sys, time
out, pairs, conns, secs, path, fv, rate, note = sys.argv[1:9]
rec = {"kind": "header", "command": "scripts/vs-fortio.sh %s %s %s %s" % (pairs, conns, secs, path),
       "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
       "pairs": int(pairs), "conns": [int(conns)], "seconds": int(secs), "path": path,
       "reference": "fortio", "reference_version": fv, "open_rate_per_s": float(rate),
       "envoy_cpus": "0", "client_cpus": "1", "upstream_cpus": "1",
       "cpu_method": "user+sys seconds of the client process (bash time), start-up included",
       "startup_method": {"fortio": "fortio load -n 1 -c 1 (start-up, one connection, one request)",
                          "wafbench": "wafbench load --max-requests 1 (start-up, one connection per --conns, one request)"},
       "notes": ([note] if note else []) + ["open loop at %s req/s, half of wafbench's closed-loop req/s in a calibration window; fortio -uniform, histogram resolution 10 µs (-r 0.00001)" % rate]}
open(out, "w").write(json.dumps(rec, sort_keys=True) + "\n")
EOF

# fortio_run LOAD: fortio over the window; sets fcpu and keeps its JSON.
fortio_run() {
  local qps=0
  [ "$1" = open ] && qps=$rate
  fcpu=$(cpu_of taskset -c 1 "$fortio" load -quiet -qps "$qps" -uniform -c "$conns" -t "${secs}s" -r 0.00001 -p 50,90,99 -json "$out/fortio.json" "$url")
}

# wb_run LOAD [PACER]: wafbench load over the window (open loop with the
# pacer PACER, default timerfd); sets dcpu and keeps its JSON.
wb_run() {
  local extra=()
  [ "$1" = open ] && extra=(--rate "$rate" --pacer "${2:-timerfd}")
  dcpu=$(cpu_of taskset -c 1 "$wb" load --target "$url" --conns "$conns" --warmup 0 --duration "${secs}s" --json "${extra[@]}")
  cp "$out/stdout" "$out/wb.json"
}

# wake_probe PAIR: wafbench open loop on one connection at $probe_rate
# req/s: its own send delay is then the client's timer wake-up alone, on a
# CPU that only the upstream's light work shares (a floor for the send
# delay at half capacity). Recorded as load "wake-probe".
wake_probe() {
  local cpu
  cpu=$(cpu_of taskset -c 1 "$wb" load --target "$url" --conns 1 --warmup 0 --duration "${secs}s" --json --rate "$probe_rate")
  cp "$out/stdout" "$out/wb.json"
  record_window "$recs" wafbench wake-probe "$probe_rate" 1 "$1" 4 "$secs" "$cpu" 0 0 "$out/wb.json"
}

for load in closed open; do
  for i in $(seq "$pairs"); do
    # Start-up: one request each.
    f0cpu=$(cpu_of taskset -c 1 "$fortio" load -quiet -qps 0 -c 1 -n 1 "$url")
    d0cpu=$(cpu_of taskset -c 1 "$wb" load --target "$url" --conns "$conns" --warmup 0 --duration 1s --max-requests 1 --json)
    # Open loop, wafbench runs twice: with its own pacer and with Go
    # timers as fortio paces (the third window, after both).
    if ((i % 2)); then
      fortio_run "$load"
      record_window "$recs" fortio "$load" "$rate" "$conns" "$i" 1 "$secs" "$fcpu" "$f0cpu" 1 "$out/fortio.json"
      wb_run "$load"
      record_window "$recs" wafbench "$load" "$rate" "$conns" "$i" 2 "$secs" "$dcpu" "$d0cpu" 1 "$out/wb.json"
    else
      wb_run "$load"
      record_window "$recs" wafbench "$load" "$rate" "$conns" "$i" 1 "$secs" "$dcpu" "$d0cpu" 1 "$out/wb.json"
      fortio_run "$load"
      record_window "$recs" fortio "$load" "$rate" "$conns" "$i" 2 "$secs" "$fcpu" "$f0cpu" 1 "$out/fortio.json"
    fi
    if [ "$load" = open ]; then
      wb_run open go-timer
      record_window "$recs" wafbench "$load" "$rate" "$conns" "$i" 3 "$secs" "$dcpu" "$d0cpu" 1 "$out/wb.json"
      wake_probe "$i"
    fi
    echo "vs-fortio: $load loop pair $i/$pairs recorded" >&2
  done
done

# 4. The report, rebuilt from the run's raw files (its "Load engine vs fortio" section from loadgen.jsonl).
"$wb" report "$dir"
echo "results: $dir"
