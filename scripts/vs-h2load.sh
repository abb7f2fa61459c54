#!/usr/bin/env bash
# Compares wafbench's load engine with h2load (nghttp2's HTTP/2 benchmark) on
# the same passthrough Envoy, over HTTP/2 (or HTTP/1.1 over TLS), and records
# it as a run, as scripts/vs-wrk.sh does with wrk: alternated pairs (the first
# tool alternates too), both pinned to the client CPU, same connections,
# streams per connection and window. Each tool's window is one record of
# loadgen.jsonl (vs-wrk.sh describes the fields); the header names h2load as
# the reference tool and the protocol, and `wafbench report DIR` rebuilds the
# report's "Load engine vs h2load" section from those records. h2load gives
# no latency percentiles, so its latency columns stay empty.
#
# The run directory comes from `wafbench run` (one passthrough trial of
# headers@16, 1 s, over the same --downstream), so meta.json records the
# machine, Envoy, git state, CPUs and protocol like any run.
#
# Usage: scripts/vs-h2load.sh [pairs=5] [conns=16,1] [seconds=5] [path=/safe]
#          [downstream=h2-tls] [streams=1]
#   downstream: h2-tls (HTTP/2 over TLS), h2c (HTTP/2 with prior knowledge) or
#   h1-tls (HTTP/1.1 over TLS, h2load --h1); streams: concurrent streams per
#   connection (h2load -m, wafbench load --streams; 1 for h1-tls).
# Environment: WAFBENCH=path/to/wafbench (default build/wafbench);
#   VSWRK_NOTE="…" adds a note to the records (e.g. that the machine was shared).
# Sourced (". scripts/vs-h2load.sh"), it only defines its functions (for tests).

here=$(dirname "${BASH_SOURCE[0]}")
# shellcheck source=scripts/vs-wrk.sh
. "$here/vs-wrk.sh" # load_field, load_attempts, record (wafbench windows)

# record_h2load OUT CONNS PAIR POSITION SECONDS CPU_S STARTUP_CPU_S
# STARTUP_REQ STDOUT: appends one h2load window record to OUT from h2load's
# text output. Requests are h2load's "done" (answered, any status); errors
# those not "succeeded" (a non-2xx/3xx status, a stream error) plus timeouts.
record_h2load() {
  python3 - "$@" <<'EOF'
import json, re, sys
out, conns, pair, pos, secs, cpu, cpu0, req0, path = sys.argv[1:10]
text = open(path).read()
m = re.search(r"^requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored, (\d+) timeout", text, re.M)
if not m:
    sys.exit("vs-h2load: no 'requests:' line in h2load's output:\n" + text)
total, started, done, ok, failed, errored, timeout = map(int, m.groups())
rps = re.search(r"^finished in [\d.]+m?s, ([\d.]+) req/s", text, re.M)
rec = {"kind": "window", "tool": "h2load", "conns": int(conns), "pair": int(pair), "position": int(pos),
       "seconds": float(secs), "client_cpu_s": float(cpu), "startup_cpu_s": float(cpu0),
       "startup_requests": int(req0), "requests": done + timeout, "errors": done - ok + timeout,
       "req_per_s": float(rps.group(1)) if rps else done / float(secs),
       "p50_us": None, "p90_us": None, "p99_us": None}
with open(out, "a") as f:
    f.write(json.dumps(rec, sort_keys=True) + "\n")
EOF
}

# h2load_url URL DOWNSTREAM: the URL h2load takes for wafbench's http:// one.
h2load_url() {
  case $2 in h1-tls | h2-tls) echo "https://${1#http://}" ;; *) echo "$1" ;; esac
}

[[ "${BASH_SOURCE[0]}" == "$0" ]] || return 0

set -euo pipefail
cd "$(dirname "$0")/.."
pairs=${1:-5} conns_list=${2:-16,1} secs=${3:-5} path=${4:-/safe} ds=${5:-h2-tls} streams=${6:-1}
wb=${WAFBENCH:-build/wafbench}
case $pairs in '' | *[!0-9]* | 0)
  echo "vs-h2load: pairs: want a positive integer, got '$pairs'" >&2
  exit 2
  ;;
esac
case $secs in '' | *[!0-9]* | 0)
  echo "vs-h2load: seconds: want a positive integer, got '$secs'" >&2
  exit 2
  ;;
esac
case $conns_list in '' | *[!0-9,]* | ,* | *, | *,,*)
  echo "vs-h2load: conns: want a comma list of positive integers, got '$conns_list'" >&2
  exit 2
  ;;
esac
case $ds in h2-tls | h2c | h1-tls) ;; *)
  echo "vs-h2load: downstream: want h2-tls, h2c or h1-tls, got '$ds'" >&2
  exit 2
  ;;
esac
case $streams in '' | *[!0-9]* | 0)
  echo "vs-h2load: streams: want a positive integer, got '$streams'" >&2
  exit 2
  ;;
esac
if [ "$ds" = h1-tls ] && [ "$streams" != 1 ]; then
  echo "vs-h2load: streams: h1-tls carries one request per connection at a time, got '$streams'" >&2
  exit 2
fi
[ -x "$wb" ] || { echo "vs-h2load: $wb missing: run make build" >&2; exit 2; }
command -v h2load >/dev/null || { echo "vs-h2load: h2load missing: run ./scripts/setup.sh (Debian nghttp2-client)" >&2; exit 2; }
h1=()
wbstreams=(--streams "$streams")
if [ "$ds" = h1-tls ]; then
  h1=(--h1)
  wbstreams=()
fi

out=$(mktemp -d)
serve=
trap '[ -n "$serve" ] && kill -INT "$serve" 2>/dev/null; wait 2>/dev/null; rm -rf "$out"' EXIT

# 1. The run directory, with meta.json like any run's.
"$wb" run --suite seed --modes passthrough --workloads headers@16 --repeats 1 --duration 1s \
  --matrix none --name vs-h2load --envoy-cpus 0 --downstream "$ds" "${wbstreams[@]}" | tee "$out/run.log"
dir=$(sed -n 's/^results: //p' "$out/run.log" | tail -1)
if [ -z "$dir" ] || [ ! -d "$dir" ]; then
  echo "vs-h2load: no 'results: DIR' line from wafbench run" >&2
  exit 1
fi
recs=$dir/loadgen.jsonl

# 2. One passthrough Envoy for every window of both tools.
"$wb" serve --mode passthrough --downstream "$ds" --envoy-cpus 0 --client-cpus 1 --upstream-cpus 1 >"$out/url" 2>"$out/serve.err" &
serve=$!
for _ in $(seq 600); do [ -s "$out/url" ] && break; sleep 0.1; done
[ -n "$(head -1 "$out/url")" ] || { cat "$out/serve.err" >&2; exit 1; }
url=$(head -1 "$out/url")$path
hurl=$(h2load_url "$url" "$ds")

python3 - "$recs" "$pairs" "$conns_list" "$secs" "$path" "$ds" "$streams" "$(h2load --version 2>&1 | head -1)" "${VSWRK_NOTE:-}" <<'EOF'
import json, sys, time
out, pairs, conns, secs, path, ds, streams, version, note = sys.argv[1:10]
rec = {"kind": "header", "command": "scripts/vs-h2load.sh %s %s %s %s %s %s" % (pairs, conns, secs, path, ds, streams),
       "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
       "pairs": int(pairs), "conns": [int(c) for c in conns.split(",")], "seconds": int(secs), "path": path,
       "reference": "h2load", "reference_version": version, "downstream": ds, "streams": int(streams),
       "envoy_cpus": "0", "client_cpus": "1", "upstream_cpus": "1",
       "cpu_method": "user+sys seconds of the client process (bash time), start-up included",
       "startup_method": {"h2load": "h2load -n1 -c1 (start-up, one connection with its handshake, one request)",
                          "wafbench": "wafbench load --max-requests 1 (start-up, one connection per --conns with its handshake, one request)"},
       "notes": [note] if note else []}
open(out, "w").write(json.dumps(rec, sort_keys=True) + "\n")
EOF

# cpu_of CMD...: runs CMD and prints "user+sys seconds" of it and its children.
cpu_of() {
  local TIMEFORMAT='%U %S'
  { time "$@" >"$out/stdout" 2>/dev/null || true; } 2>"$out/time"
  awk '{print $1 + $2}' "$out/time"
}

# h2load_run ARGS...: h2load with ARGS; sets hcpu and keeps its output.
h2load_run() {
  hcpu=$(cpu_of taskset -c 1 h2load "${h1[@]}" -t1 "$@" "$hurl")
  cp "$out/stdout" "$out/h2load.out"
}

# wb_run ARGS...: wafbench load over the window; sets dcpu, dreq.
wb_run() {
  dcpu=$(cpu_of taskset -c 1 "$wb" load --target "$url" --downstream "$ds" "${wbstreams[@]}" --conns "$conns" --warmup 0 --json "$@")
  dreq=$(load_attempts "$out/stdout")
  cp "$out/stdout" "$out/wb.out"
}

for conns in ${conns_list//,/ }; do
  m=$streams
  for i in $(seq "$pairs"); do
    # Start-up: each tool's run of one request.
    h2load_run -n1 -c1
    h0cpu=$hcpu
    wb_run --duration 1s --max-requests 1
    d0cpu=$dcpu d0req=$dreq
    if ((i % 2)); then
      h2load_run -c"$conns" -m"$m" -D "$secs"
      record_h2load "$recs" "$conns" "$i" 1 "$secs" "$hcpu" "$h0cpu" 1 "$out/h2load.out"
      wb_run --duration "${secs}s"
      record "$recs" wafbench "$conns" "$i" 2 "$secs" "$dcpu" "$d0cpu" "$d0req" "$out/wb.out"
    else
      wb_run --duration "${secs}s"
      record "$recs" wafbench "$conns" "$i" 1 "$secs" "$dcpu" "$d0cpu" "$d0req" "$out/wb.out"
      h2load_run -c"$conns" -m"$m" -D "$secs"
      record_h2load "$recs" "$conns" "$i" 2 "$secs" "$hcpu" "$h0cpu" 1 "$out/h2load.out"
    fi
    echo "vs-h2load: conns $conns pair $i/$pairs recorded" >&2
  done
done

# 3. The report, rebuilt from the run's raw files (its "Load engine vs h2load" section from loadgen.jsonl).
"$wb" report "$dir"
echo "results: $dir"
