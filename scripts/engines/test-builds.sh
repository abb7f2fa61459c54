#!/usr/bin/env bash
# Runs the Envoy end-to-end tests (tests/e2e: verdicts, parity, hostile
# input, fail-closed) on every finished engine build under build/engines/
# (run by `make test-builds` after `wafbench build` and `wafbench pgo`).
#
# tests/e2e loads both modules from one directory (WAFBENCH_MODULE_DIR), so
# each build is tested from a scratch directory holding its module and the
# other engine's default build (build/engines/<engine>, else build/filters);
# WAFBENCH_MODE_UNDER_TEST
# names the build. An instrumented build writes its .profraw files into the
# scratch directory, not the working tree.
#
# For builds that ship a shared libmodsecurity (shared_lib_dir in the
# manifest), it also checks that nginx's ModSecurity connector would load
# that library (ldd with LD_LIBRARY_PATH), as ref-nginx-modsecurity@<build> runs it.
#
# Usage: scripts/engines/test-builds.sh [BUILD_DIR...]   (default: every build)
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
NGINX_MODULE=/usr/lib/nginx/modules/ngx_http_modsecurity_module.so

field() { sed -n "s/^  \"$2\": \"\\(.*\\)\",\\?$/\\1/p" "$1/manifest.json" | head -1; }

dirs=("$@")
if [ ${#dirs[@]} -eq 0 ]; then
  for m in build/engines/*/manifest.json; do [ -f "$m" ] && dirs+=("$(dirname "$m")"); done
fi
[ ${#dirs[@]} -gt 0 ] || { echo "test-builds: no finished builds under build/engines (run make engines)" >&2; exit 2; }
for e in modsecurity coraza; do
  [ -f "build/filters/libwafbench_$e.so" ] || { echo "test-builds: build/filters/libwafbench_$e.so missing (run make modules)" >&2; exit 2; }
done

failed=()
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
for d in "${dirs[@]}"; do
  d=${d%/}
  [ -f "$d/manifest.json" ] || { echo "test-builds: $d: no manifest.json (not a finished build)" >&2; failed+=("$d"); continue; }
  mode=$(field "$d" build)
  engine=$(field "$d" engine)
  module=$(field "$d" module)
  t=$scratch/$(basename "$d")
  mkdir -p "$t"
  ln -sf "$ROOT/$d/$module" "$t/$module"
  for e in modsecurity coraza; do
    [ "$e" != "$engine" ] || continue
    other=$ROOT/build/engines/$e/libwafbench_$e.so # the other engine's default build
    [ -f "$(dirname "$other")/manifest.json" ] || other=$ROOT/build/filters/libwafbench_$e.so
    ln -sf "$other" "$t/libwafbench_$e.so"
  done
  echo "=== $mode ($d)" >&2
  if ! WAFBENCH_MODULE_DIR=$t WAFBENCH_MODE_UNDER_TEST=$mode LLVM_PROFILE_FILE=$t/%p-%m.profraw \
    go test -tags integration -count=1 -timeout 20m ./tests/e2e >&2; then
    failed+=("$mode")
    continue
  fi
  libdir=$(field "$d" shared_lib_dir)
  if [ -n "$libdir" ] && [ -f "$NGINX_MODULE" ]; then
    got=$(LD_LIBRARY_PATH=$ROOT/$d/$libdir ldd "$NGINX_MODULE" | awk '$1=="libmodsecurity.so.3"{print $3}')
    if [ "$got" != "$ROOT/$d/$libdir/libmodsecurity.so.3" ]; then
      echo "test-builds: $mode: nginx's connector resolves libmodsecurity.so.3 to '$got', not $d/$libdir" >&2
      failed+=("$mode (nginx lib)")
      continue
    fi
    undef=$(LD_LIBRARY_PATH=$ROOT/$d/$libdir ldd -r "$NGINX_MODULE" 2>&1 | grep 'undefined symbol: msc_' || true)
    if [ -n "$undef" ]; then
      echo "test-builds: $mode: $d/$libdir/libmodsecurity.so.3 lacks what nginx's connector calls: $undef" >&2
      failed+=("$mode (nginx lib)")
      continue
    fi
    echo "test-builds: $mode: nginx connector loads $d/$libdir/libmodsecurity.so.3, every msc_* symbol defined" >&2
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "test-builds: FAILED: ${failed[*]}" >&2
  exit 1
fi
echo "test-builds: OK: ${#dirs[@]} builds" >&2
