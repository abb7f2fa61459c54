#!/usr/bin/env bash
# The Go runtime per request in a host, counted, not timed: starts the host
# of a mode with `wafbench serve` (pinned as a trial pins it), sends
# MODCOST_REQUESTS requests of one kind on one connection with curl, and
# prints, for that window, what the Go runtime did per request and where its
# threads are allowed to run:
#   coraza (our Envoy module; WAFBENCH_GO_STATS=1 is set): the module's
#     go_* counters (GC cycles, GC CPU ns as the runtime estimates it, Go→C
#     calls, goroutines created) and its wafbench-go-runtime line
#     (GOMAXPROCS, threads, GC settings);
#   ref-caddy-coraza (Caddy + the same engine package): GC cycles and
#     gctrace's CPU per collection, from GODEBUG=gctrace=1 on its stderr.
#   modsecurity-extproc, coraza-extproc, coraza-extauthz: the
#     wafbench-extproc server beside Envoy is the process measured (its
#     GOMAXPROCS follows its CPUs unless GOMAXPROCS is in the environment).
#   All: the process's tasks (/proc/PID/task) before and after, each
#   task's name and Cpus_allowed_list; the context switches of every task
#   per request (voluntary and involuntary, summed: each is a thread put to
#   sleep or taken off the CPU) and the host's CPU per request from
#   /proc/PID/stat (clock ticks: coarse over few requests).
# GOGC and GOMEMLIMIT in the environment reach the host's Go runtime (for
# the module, as the filter_config keys go_gc_percent and
# go_memory_limit_bytes do).
#
# Usage: scripts/modcost.sh MODE KIND [MODULE_DIR]
#   MODE  coraza or ref-caddy-coraza (any coraza@<build> too), or an
#         external mode
#   KIND  benign (GET with Host, User-Agent, Accept: 200) or sqli (GET whose
#         query is a SQL injection: 403 in phase 2)
#   MODULE_DIR  --module-dir for serve (coraza modes only)
# Environment: MODCOST_REQUESTS (default 200), MODCOST_OUT (default
#   runs/modcost-<UTC>: serve's log directory and this script's summary.txt).
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] && [ $# -le 3 ] || { echo "usage: scripts/modcost.sh MODE benign|sqli [MODULE_DIR]" >&2; exit 2; }
mode=$1
kind=$2
moddir=${3:-}
n=${MODCOST_REQUESTS:-200}
out=${MODCOST_OUT:-runs/modcost-$(date -u +%Y%m%dT%H%M%SZ)}
case $kind in
  benign) path='/index.html?q=hello'; want=200 ;;
  sqli) path='/index.html?id=1%27%20OR%201%3D1--'; want=403 ;;
  *) echo "modcost: KIND: want benign or sqli, got \"$kind\"" >&2; exit 2 ;;
esac
[[ $n =~ ^[1-9][0-9]*$ ]] || { echo "modcost: MODCOST_REQUESTS: want a count > 0, got \"$n\"" >&2; exit 2; }
for tool in curl awk; do
  command -v $tool >/dev/null || { echo "modcost: $tool not found (apt-get install $tool)" >&2; exit 2; }
done
[ -x build/wafbench ] || { echo "modcost: build/wafbench missing (make build)" >&2; exit 2; }
mkdir -p "$out"
out=$(cd "$out" && pwd) # serve hands the path to the host, which runs elsewhere
serve=(build/wafbench serve --mode "$mode" --log-dir "$out")
[ -n "$moddir" ] && serve+=(--module-dir "$moddir")
export WAFBENCH_GO_STATS=1
export GODEBUG=${GODEBUG:+$GODEBUG,}gctrace=1 # one line per collection on the host's stderr (Envoy's: its log)
"${serve[@]}" > "$out/serve.out" 2> "$out/serve.err" &
spid=$!
trap 'kill -INT $spid 2>/dev/null; wait $spid 2>/dev/null || true' EXIT
for _ in $(seq 600); do # serve prints the URL when the host is ready (≤ 10 min)
  grep -q '^http://' "$out/serve.out" 2>/dev/null && break
  kill -0 $spid 2>/dev/null || { echo "modcost: serve exited:" >&2; cat "$out/serve.err" >&2; exit 1; }
  sleep 1
done
url=$(grep -m1 '^http://' "$out/serve.out") || { echo "modcost: host not ready in 10 min" >&2; exit 1; }
info=$(cat "$out/serve.out" "$out/serve.err")
hpid=$(sed -n 's/.* \(envoy\|caddy\|nginx\) pid \([0-9]*\).*/\2/p' <<< "$info" | head -1)
measured=host
xpid=$(sed -n 's/.*wafbench-extproc pid \([0-9]*\).*/\1/p' <<< "$info" | head -1)
if [ -n "$xpid" ]; then hpid=$xpid; measured="wafbench-extproc server"; fi
admin=$(sed -n 's/.*envoy pid.*admin \(http:[^ ,]*\).*/\1/p' <<< "$info" | head -1)
[ -n "$hpid" ] || { echo "modcost: no host pid in serve's output" >&2; exit 1; }

tasks() { # name and allowed CPUs of every task of the host
  for t in /proc/$hpid/task/*; do
    printf '%s\t%s\n' "$(cat "$t/comm")" "$(awk '/^Cpus_allowed_list/ {print $2}' "$t/status")"
  done | sort | uniq -c
}
stats() { # the module's counters (Envoy modes only)
  if [ -n "$admin" ]; then curl -s "$admin/stats?filter=wafbench_coraza"; fi
}
gclines() { cat "$out"/*.log 2>/dev/null | grep '^gc [0-9]' || true; }
gcs() { gclines | wc -l; }

# switches: every task's voluntary and involuntary context switches, summed;
# cpu_us: the host's CPU time (utime+stime of every task, /proc/PID/stat).
switches() { cat /proc/$hpid/task/*/status | awk '/^(non)?voluntary_ctxt_switches/ {s += $2} END {print s}'; }
task_switches() { # per task: id, name, context switches so far
  for t in /proc/$hpid/task/*; do
    printf '%s\t%s\t%s\n' "${t##*/}" "$(tr ' ' _ < "$t/comm")" "$(awk '/^(non)?voluntary_ctxt_switches/ {s += $2} END {print s}' "$t/status")"
  done
}
cpu_us() { awk -v hz="$(getconf CLK_TCK)" '{print ($14 + $15) * 1e6 / hz}' /proc/$hpid/stat; }

curl -s -o /dev/null "$url$path" # one request before the window: connections and lazy set-up
before_n=$(ls /proc/$hpid/task | wc -l); before_stats=$(stats); before_gc=$(gcs)
before_sw=$(switches); before_cpu=$(cpu_us); task_switches > "$out/switches.before"
cfg=$out/curl.cfg
for _ in $(seq "$n"); do printf 'url = "%s%s"\noutput = /dev/null\n' "$url" "$path"; done > "$cfg"
codes=$(curl -s -K "$cfg" -w '%{http_code}\n' | sort | uniq -c)
after_sw=$(switches); after_cpu=$(cpu_us); task_switches > "$out/switches.after"
after_n=$(ls /proc/$hpid/task | wc -l); after_tasks=$(tasks); after_stats=$(stats); after_gc=$(gcs)

{
  echo "mode $mode kind $kind requests $n module_dir ${moddir:-default} GOGC=${GOGC:-} GOMEMLIMIT=${GOMEMLIMIT:-} GOMAXPROCS=${GOMAXPROCS:-} measured: $measured (pid $hpid)"
  echo "statuses: $(echo $codes) (want $n × $want)"
  echo "tasks before: $before_n after: $after_n; RSS after: $(awk '/^VmRSS/ {print $2, $3}' /proc/$hpid/status)"
  awk -v n="$n" -v s0="$before_sw" -v s1="$after_sw" -v c0="$before_cpu" -v c1="$after_cpu" \
    'BEGIN {printf "context switches (every task, voluntary + involuntary): %.2f/request; host CPU (utime+stime, clock ticks): %.0f µs/request\n", (s1-s0)/n, (c1-c0)/n}'
  # by task name: a task that started in the window counts from 0
  awk -v n="$n" 'NR == FNR {b[$1] = $3; next} {d[$2] += $3 - b[$1]} END {for (k in d) if (d[k] > 0) printf "  switches of %-20s %8.2f/request\n", k, d[k]/n}' \
    "$out/switches.before" "$out/switches.after" | sort -k4 -rn
  echo "$after_tasks" | sed 's/^/  task /'
  grep -ho 'wafbench-go-runtime .*' "$out"/*.log 2>/dev/null | tail -1 || true
  if [ -n "$after_stats" ]; then
    join <(sort <<< "$before_stats") <(sort <<< "$after_stats") 2>/dev/null | tr -d ':' |
      awk -v n="$n" '{d=$3-$2; printf "  %-60s %12d  %12.3f/request\n", $1, d, d/n}'
  fi
  # gctrace's "A+B/C/D+E ms cpu": stop-the-world A and E, mark assist B,
  # background (dedicated and fractional) C, idle D.
  gclines | tail -n +$((before_gc + 1)) | head -n $((after_gc - before_gc)) |
    awk -v n="$n" '{for (i = 1; i <= NF; i++) if ($i == "cpu," && $(i-1) == "ms") {split($(i-2), a, "[+/]"); stw += a[1] + a[5]; as += a[2]; bg += a[3]; idle += a[4]}
      if (match($0, /[0-9]+ P$/)) p = substr($0, RSTART)} END {
      printf "gctrace collections in the window: %d (%.4f/request); cpu ms stw %.2f assist %.2f background %.2f idle %.2f: %.1f µs/request (%.1f without idle); last line: %s\n", NR, NR/n, stw, as, bg, idle, (stw+as+bg+idle)*1000/n, (stw+as+bg)*1000/n, p}'

} | tee "$out/summary.txt"
grep -q "$n $want" <<< "$(echo $codes)" || { echo "modcost: not every status was $want" >&2; exit 1; }
