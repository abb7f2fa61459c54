#!/bin/sh
# check.sh: verify that wafbench_abi.h compiles as C and C++ and that every
# callback it declares is exported by the Envoy binary (ENVOY_BIN or argv[1]).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
envoy=${1:-${ENVOY_BIN:-$here/../../.venv/lib/python3.11/site-packages/envoy/_bin/envoy}}
[ -x "$envoy" ] || { echo "check.sh: envoy binary not found at $envoy (set ENVOY_BIN)" >&2; exit 2; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
printf '#include "wafbench_abi.h"\nint main(void){return 0;}\n' > "$tmp/t.c"
cc -std=c99 -Wall -Wextra -Werror -pedantic -I"$here" -c "$tmp/t.c" -o "$tmp/c.o"
c++ -std=c++17 -Wall -Wextra -Werror -pedantic -I"$here" -x c++ -c "$tmp/t.c" -o "$tmp/cc.o"
grep -o 'envoy_dynamic_module_callback_[a-z_0-9]*(' "$here/wafbench_abi.h" | tr -d '(' | sort -u > "$tmp/declared"
nm -D --defined-only "$envoy" | awk '{print $3}' | sort -u > "$tmp/exported"
missing=$(comm -23 "$tmp/declared" "$tmp/exported")
if [ -n "$missing" ]; then echo "check.sh: declared but not exported by $envoy:"; echo "$missing"; exit 1; fi
echo "check.sh: OK: C and C++ compile; $(wc -l < "$tmp/declared") callbacks declared, all exported by Envoy"
