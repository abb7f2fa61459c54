#!/usr/bin/env bash
# Builds Envoy 1.40.0 from source with ThinLTO + instrumentation PGO, trained on
# wafbench's own workload. Needs network (Bazel modules, Envoy source, LLVM
# toolchain), Bazel 8.8.0 through bazelisk, and the wafbench prerequisites
# (make setup). A cold build takes hours and tens of GB of disk.
#
#   bazel/pgo.sh [STEP...]     steps, in order (default: all of them)
#     pins        compare MODULE.bazel/.bazelrc/.bazelversion with Envoy v1.40.0's own
#     instrument  bazel build --config=pgo-instrument //:envoy  -> build/pgo/envoy-instrumented
#     train       wafbench run --suite $PGO_SUITE on that binary -> build/pgo/raw/*.profraw
#     merge       llvm-profdata merge -> build/pgo/envoy-<sha256:12>.profdata (+ profile.bazelrc)
#     optimize    bazel build --config=pgo-use //:envoy -> build/pgo/envoy-pgo; prints path, SHA-256
#
# Environment:
#   BAZEL            bazel command (default: bazel; use bazelisk so .bazelversion is honoured)
#   BAZEL_FLAGS      extra flags for every bazel build (e.g. --config=ci --disk_cache=...)
#   PGO_SUITE        training suite (default: quick)
#   PGO_TRAIN_FLAGS  extra flags for wafbench run (e.g. "--modes modsecurity,coraza")
#   LLVM_ROOT        an LLVM >= 22 install (bin/llvm-profdata, lib/clang/*/lib/*/libclang_rt.profile*.a)
#   LLVM_PROFDATA    llvm-profdata to use (default: LLVM_ROOT's, the Bazel toolchain's, then PATH)
#   PGO_SKIP_PINS=1  continue when the pins step finds differences
#
# Stdout carries only the result (the binary's path, then "sha256 HEX");
# progress goes to stderr.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)

ENVOY_TAG=v1.40.0
# The LLVM major Envoy 1.40's toolchain uses (llvm.toolchain(llvm_version = "22.1.8")
# in Envoy's MODULE.bazel). llvm-profdata must be at least this new to read the
# raw profiles the instrumented binary writes.
LLVM_MAJOR=22
BAZEL=${BAZEL:-bazel}
read -r -a BAZEL_EXTRA <<<"${BAZEL_FLAGS:-}"
read -r -a TRAIN_EXTRA <<<"${PGO_TRAIN_FLAGS:-}"
PGO_SUITE=${PGO_SUITE:-quick}
PGO_DIR=$ROOT/build/pgo # fixed: .bazelrc imports build/pgo/profile.bazelrc

log() { printf 'pgo: %s\n' "$*" >&2; }
die() {
  printf 'pgo: error: %s\n' "$*" >&2
  exit 1
}
need() { command -v "$1" >/dev/null 2>&1 || die "'$1' not found. $2"; }

need_bazel() {
  need "$BAZEL" "Install bazelisk (it downloads the Bazel in .bazelversion) and put it on PATH as 'bazel', or set BAZEL. Debian's bazel package (4.2.x) is too old for Envoy 1.40."
  local v
  v=$("$BAZEL" --version 2>/dev/null | awk '{print $2}') || true
  [ -n "$v" ] || die "'$BAZEL --version' printed nothing; is it bazelisk with network access?"
  [ "${v%%.*}" -ge 8 ] 2>/dev/null || die "$BAZEL is Bazel $v; Envoy 1.40 needs Bazel $(cat .bazelversion) (use bazelisk)."
}

# binary_path BAZEL_BUILD_FLAGS...: the absolute path of //:envoy's output when
# built with those flags.
binary_path() {
  local rel execroot
  rel=$("$BAZEL" cquery "$@" --output=files //:envoy 2>/dev/null | tail -n 1)
  execroot=$("$BAZEL" info "$@" execution_root 2>/dev/null)
  if [ -z "$rel" ] || [ ! -f "$execroot/$rel" ]; then
    die "cannot find the output of //:envoy built with $* (cquery said '$rel')"
  fi
  printf '%s/%s\n' "$execroot" "$rel"
}

# check_binary PATH: runs --version and checks the dynamic-module callbacks the
# wafbench modules link against are exported (they are dlopened with RTLD_NOW).
check_binary() {
  local bin=$1 n
  "$bin" --version >&2 || die "$bin --version failed"
  if command -v nm >/dev/null 2>&1; then
    n=$(nm -D --defined-only "$bin" | grep -c envoy_dynamic_module_callback_http || true)
    [ "$n" -gt 0 ] || die "$bin exports no envoy_dynamic_module_callback_http* symbols; the WAF modules cannot load into it"
    log "$bin exports $n envoy_dynamic_module_callback_http* symbols"
  else
    log "nm not found (Debian: binutils); skipped the exported-callback check"
  fi
}

llvm_major_of() { "$1" merge --version 2>/dev/null | sed -n 's/.*LLVM version \([0-9][0-9]*\).*/\1/p' | head -n 1; }

# find_profdata: prints an llvm-profdata whose major version is >= LLVM_MAJOR.
find_profdata() {
  local c m ob
  local candidates=()
  [ -n "${LLVM_PROFDATA:-}" ] && candidates+=("$LLVM_PROFDATA")
  [ -n "${LLVM_ROOT:-}" ] && candidates+=("$LLVM_ROOT/bin/llvm-profdata")
  if ob=$("$BAZEL" info output_base 2>/dev/null); then
    while IFS= read -r c; do candidates+=("$c"); done < <(find "$ob/external" -maxdepth 3 -path '*llvm*/bin/llvm-profdata' 2>/dev/null)
  fi
  for c in llvm-profdata-$((LLVM_MAJOR + 2)) llvm-profdata-$((LLVM_MAJOR + 1)) "llvm-profdata-$LLVM_MAJOR" llvm-profdata; do
    command -v "$c" >/dev/null 2>&1 && candidates+=("$(command -v "$c")")
  done
  for c in "${candidates[@]}"; do
    [ -x "$c" ] || continue
    m=$(llvm_major_of "$c")
    if [ -n "$m" ] && [ "$m" -ge "$LLVM_MAJOR" ]; then
      printf '%s\n' "$c"
      return 0
    fi
    log "skipping $c (LLVM ${m:-unknown}; need >= $LLVM_MAJOR)"
  done
  return 1
}

step_pins() {
  need curl "Install curl (Debian: curl)."
  local base=https://raw.githubusercontent.com/envoyproxy/envoy/$ENVOY_TAG tmp=$PGO_DIR/pins bad=0 name ver ours reg
  mkdir -p "$tmp"
  for f in VERSION.txt .bazelversion .bazelrc bazel/tests/external/MODULE.bazel; do
    curl -fsSL "$base/$f" -o "$tmp/$(basename "$f")" || die "cannot download $base/$f"
  done
  [ "$(cat "$tmp/VERSION.txt")" = "${ENVOY_TAG#v}" ] || die "Envoy $ENVOY_TAG's VERSION.txt says $(cat "$tmp/VERSION.txt")"
  if [ "$(cat "$tmp/.bazelversion")" != "$(cat .bazelversion)" ]; then
    log "differs: .bazelversion is $(cat .bazelversion), Envoy $ENVOY_TAG uses $(cat "$tmp/.bazelversion")"
    bad=1
  fi
  while IFS= read -r reg; do
    grep -qxF -- "common $reg" .bazelrc || {
      log "differs: Envoy $ENVOY_TAG's .bazelrc has 'common $reg'; .bazelrc does not"
      bad=1
    }
  done < <(grep -o -- '--registry=[^ ]*' "$tmp/.bazelrc" | sort -u)
  while read -r name ver; do
    ours=$(sed -n "s/^bazel_dep(name = \"$name\", version = \"\([^\"]*\)\".*/\1/p" MODULE.bazel)
    if [ -n "$ours" ] && [ "$ours" != "$ver" ]; then
      log "differs: MODULE.bazel has $name $ours, Envoy $ENVOY_TAG's external build uses $ver"
      bad=1
    fi
  done < <(sed -n 's/^bazel_dep(name = "\([^"]*\)", version = "\([^"]*\)".*/\1 \2/p' "$tmp/MODULE.bazel")
  if [ "$bad" -ne 0 ]; then
    [ "${PGO_SKIP_PINS:-0}" = 1 ] || die "pins differ from Envoy $ENVOY_TAG (above); update MODULE.bazel/.bazelrc/.bazelversion, or set PGO_SKIP_PINS=1 to try anyway"
    log "PGO_SKIP_PINS=1: continuing with differing pins"
  else
    log "pins match Envoy $ENVOY_TAG (.bazelversion, registries, bazel_dep versions)"
  fi
}

step_instrument() {
  need_bazel
  local extra=() rt bin
  if [ -n "${LLVM_ROOT:-}" ]; then
    # The hermetic toolchain may lack the profile runtime; link LLVM_ROOT's explicitly.
    rt=$(find "$LLVM_ROOT/lib/clang" -path '*x86_64*' -name 'libclang_rt.profile*.a' 2>/dev/null | head -n 1)
    [ -n "$rt" ] || die "LLVM_ROOT=$LLVM_ROOT has no lib/clang/*/lib/*/libclang_rt.profile*.a (x86_64)"
    extra+=("--linkopt=$rt")
  fi
  log "building the instrumented Envoy (--config=pgo-instrument)"
  local flags=(--config=pgo-instrument "${BAZEL_EXTRA[@]}" "${extra[@]}")
  "$BAZEL" build "${flags[@]}" //:envoy >&2 ||
    die "instrumented build failed. If the link cannot find libclang_rt.profile.a, set LLVM_ROOT to an LLVM $LLVM_MAJOR install (see README.md)."
  bin=$(binary_path "${flags[@]}")
  mkdir -p "$PGO_DIR"
  install -m 0755 "$bin" "$PGO_DIR/envoy-instrumented"
  check_binary "$PGO_DIR/envoy-instrumented"
  log "instrumented Envoy: $PGO_DIR/envoy-instrumented"
}

step_train() {
  local bin=$PGO_DIR/envoy-instrumented n
  [ -x "$bin" ] || die "$bin missing; run 'bazel/pgo.sh instrument' first"
  if [ ! -x build/wafbench ] || [ ! -f build/filters/libwafbench_coraza.so ] || [ ! -f build/filters/libwafbench_modsecurity.so ]; then
    need make "Install make (Debian: make)."
    need go "Install Go (the version go.mod names)."
    log "building wafbench, the WAF modules and the CRS export (make build modules crs)"
    make build modules crs >&2 || die "'make build modules crs' failed"
  fi
  rm -rf "$PGO_DIR/raw" "$PGO_DIR/train-results"
  mkdir -p "$PGO_DIR/raw" "$PGO_DIR/train-results"
  log "training: wafbench run --suite $PGO_SUITE on the instrumented Envoy"
  # %p: one file per Envoy process (every trial starts a fresh one).
  LLVM_PROFILE_FILE="$PGO_DIR/raw/envoy-%p.profraw" build/wafbench run \
    --suite "$PGO_SUITE" --envoy "$bin" --results "$PGO_DIR/train-results" \
    --name pgo-train --no-report --progress never "${TRAIN_EXTRA[@]}" >&2 ||
    die "training run failed (its run directory is under $PGO_DIR/train-results)"
  n=$(find "$PGO_DIR/raw" -name '*.profraw' | wc -l)
  [ "$n" -gt 0 ] || die "the instrumented Envoy wrote no .profraw into $PGO_DIR/raw; it writes only on a normal exit (SIGTERM), not when killed"
  log "training wrote $n .profraw files"
}

step_merge() {
  local pd raw=() sha out
  pd=$(find_profdata) || die "no llvm-profdata >= $LLVM_MAJOR found. Set LLVM_PROFDATA, or LLVM_ROOT to an LLVM $LLVM_MAJOR install (e.g. the LLVM-22.1.8-Linux-X64.tar.xz release asset), or install llvm-$LLVM_MAJOR from apt.llvm.org."
  mapfile -t raw < <(find "$PGO_DIR/raw" -name '*.profraw' 2>/dev/null | sort)
  [ "${#raw[@]}" -gt 0 ] || die "no .profraw files in $PGO_DIR/raw; run 'bazel/pgo.sh train' first"
  log "merging ${#raw[@]} profiles with $pd"
  "$pd" merge -o "$PGO_DIR/envoy.profdata" "${raw[@]}" >&2 || die "llvm-profdata merge failed"
  sha=$(sha256sum "$PGO_DIR/envoy.profdata" | cut -c1-12)
  out=$PGO_DIR/envoy-$sha.profdata
  mv "$PGO_DIR/envoy.profdata" "$out"
  printf '# Written by bazel/pgo.sh merge; read by --config=pgo-use (.bazelrc).\nbuild:pgo-use --copt=-fprofile-instr-use=%s\n' "$out" >"$PGO_DIR/profile.bazelrc"
  "$pd" show "$out" 2>/dev/null | grep -E '^(Total functions|Maximum function count):' >&2 || true
  log "profile: $out"
}

step_optimize() {
  need_bazel
  need sha256sum "Install coreutils."
  local prof bin
  prof=$(sed -n 's/^build:pgo-use --copt=-fprofile-instr-use=//p' "$PGO_DIR/profile.bazelrc" 2>/dev/null)
  if [ -z "$prof" ] || [ ! -f "$prof" ]; then
    die "no merged profile (build/pgo/profile.bazelrc); run 'bazel/pgo.sh merge' first"
  fi
  log "building the ThinLTO + PGO Envoy (--config=pgo-use, profile $prof)"
  local flags=(--config=pgo-use "${BAZEL_EXTRA[@]}" "--copt=-fprofile-instr-use=$prof")
  "$BAZEL" build "${flags[@]}" //:envoy >&2 || die "optimized build failed"
  bin=$(binary_path "${flags[@]}")
  install -m 0755 "$bin" "$PGO_DIR/envoy-pgo"
  check_binary "$PGO_DIR/envoy-pgo"
  printf '%s\n' "$PGO_DIR/envoy-pgo"
  printf 'sha256 %s\n' "$(sha256sum "$PGO_DIR/envoy-pgo" | cut -d' ' -f1)"
}

steps=("$@")
[ "${#steps[@]}" -gt 0 ] || steps=(pins instrument train merge optimize)
for s in "${steps[@]}"; do
  case $s in
  pins | instrument | train | merge | optimize) "step_$s" ;;
  -h | --help | help)
    sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
    exit 0
    ;;
  *) die "unknown step '$s' (want: pins instrument train merge optimize)" ;;
  esac
done
