#!/usr/bin/env bash
# Builds one Coraza recipe of filters/builds.yaml into an Envoy dynamic module,
# or writes the Go CPU profile a pgo recipe is optimised with. Run by
# `wafbench build` / `wafbench pgo` (driver/builds) with the engine-script
# contract described at the top of scripts/engines/modsecurity.sh.
#
# By hand:
#   scripts/engines/coraza.sh pgo <build>    train and build coraza@<build>
#                                            (runs `wafbench pgo coraza@<build>`)
#
# Build (WB_ACTION empty or "build"):
#   go build -buildmode=c-shared -trimpath -ldflags '-s=false -X main.buildName=$WB_BUILD'
#     [-modfile=$WB_MODFILE] [-tags $WB_TAGS] -pgo=$WB_PROFILE|off ./filters/coraza
#   into $WB_OUT/libwafbench_coraza.so, then checks with `go version -m` that the
#   module carries the coraza version the recipe declares, -pgo= when a profile
#   was given, and (tag wafbench_re2) github.com/wasilibs/go-re2 v1.13.0, and
#   writes $WB_OUT/facts.json (go version, exact flags, tags, modfile and its
#   SHA-256, what `go version -m` shows).
#
# Profile (WB_ACTION=profile): compiles the engine package's tests with the
#   recipe's module file and tags (no PGO) and runs BenchmarkTrain, which sends
#   every workload of the training suite $WB_TRAINING (profiles/*.yaml) through
#   the in-process engine, with -cpuprofile $WB_PROFILE_OUT. The in-process
#   engine is the clean source (a profile taken inside the
#   c-shared library in Envoy has artifacts). A training workload with the
#   wrong verdict fails the run and no profile is written. The training facts
#   (coraza version, module file and its hash, suite, git SHA, time) go to
#   build/pgo/<profile name>.train.json. WB_PGO_BENCHTIME (default 20s) is the
#   training time.
set -euo pipefail

if [ "${1:-}" = pgo ]; then
  [ $# -eq 2 ] || { echo "usage: scripts/engines/coraza.sh pgo <build> (e.g. pgo, re2-pgo)" >&2; exit 2; }
  root=$(cd "$(dirname "$0")/../.." && pwd)
  cd "$root"
  if [ -x build/wafbench ]; then exec build/wafbench pgo "coraza@$2"; fi
  exec go run ./driver/cmd/wafbench pgo "coraza@$2"
fi

: "${WB_ROOT:?run through wafbench build (or: scripts/engines/coraza.sh pgo <build>)}" "${WB_OUT:?}" "${WB_BUILD:?}"
cd "$WB_ROOT"
WB_MODFILE=${WB_MODFILE:-} WB_TAGS=${WB_TAGS:-} WB_PROFILE=${WB_PROFILE:-}

log() { printf '%s: %s\n' "$WB_BUILD" "$*" >&2; }
die() { printf '%s: %s\n' "$WB_BUILD" "$*" >&2; exit 1; }
json_str() { python3 -c 'import json,sys; print(json.dumps(sys.argv[1]))' "$1"; }
secs() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}'; }

command -v go >/dev/null 2>&1 || die "go not found: install Go 1.26 (./scripts/setup.sh)"
[ "${WB_COMPILER:-go}" = go ] || die "compiler: coraza builds with go, got $WB_COMPILER"

# Module file and tags shared by both actions.
GOARGS=()
MODFILE_SHA=""
if [ -n "${WB_MODFILE:-}" ]; then
  [ -f "$WB_MODFILE" ] || die "module file $WB_MODFILE missing"
  sum=${WB_MODFILE%.mod}.sum
  [ -f "$sum" ] || die "module file $WB_MODFILE has no $sum beside it"
  GOARGS+=("-modfile=$WB_MODFILE")
  MODFILE_SHA=$(sha256sum "$WB_MODFILE" | cut -d' ' -f1)
fi
TAGS=$(echo "${WB_TAGS:-}" | tr ' ' ',' | sed 's/^,*//; s/,*$//')
[ -z "$TAGS" ] || GOARGS+=(-tags "$TAGS")
ABI_SHA=$(sha256sum filters/abi/wafbench_abi.h | cut -c1-16)
export CGO_CFLAGS="-O2 -g -DWAFBENCH_ABI_HEADER=$ABI_SHA"
GO_VERSION=$(go version)
MODFILE_REL=${WB_MODFILE#"$WB_ROOT/"}

# ---------------------------------------------------------------------------
if [ "${WB_ACTION:-build}" = profile ]; then
  : "${WB_PROFILE_OUT:?profile action needs WB_PROFILE_OUT}" "${WB_TRAINING:?profile action needs WB_TRAINING}"
  [ -f build/crs/main.conf ] || die "build/crs/main.conf missing: run 'make crs' first"
  benchtime=${WB_PGO_BENCHTIME:-20s}
  bin=$WB_OUT/engine.test
  t0=$(date +%s.%N)
  log "compile the engine benchmarks (${GOARGS[*]:-root go.mod}) …"
  nice go test "${GOARGS[@]}" -c -o "$bin" ./filters/coraza/engine >&2 || die "compiling filters/coraza/engine tests failed"
  log "train: BenchmarkTrain, suite $WB_TRAINING, $benchtime …"
  out=$WB_OUT/train.txt
  if ! (cd filters/coraza/engine && WAFBENCH_TRAIN_SUITE="$WB_TRAINING" WAFBENCH_RULES="$WB_ROOT/build/crs/main.conf" \
    "$bin" -test.run '^$' -test.bench '^BenchmarkTrain$' -test.benchtime "$benchtime" -test.count 1 \
    -test.cpuprofile "$WB_PROFILE_OUT" >"$out" 2>&1); then
    cat "$out" >&2
    rm -f "$WB_PROFILE_OUT"
    die "training failed: no profile written"
  fi
  grep -E '^BenchmarkTrain' "$out" >&2 || { cat "$out" >&2; rm -f "$WB_PROFILE_OUT"; die "training printed no benchmark line: no profile written"; }
  [ -s "$WB_PROFILE_OUT" ] || die "training wrote an empty profile"
  # Test binaries carry no dependency list: ask the module graph.
  version=$(go list ${WB_MODFILE:+"-modfile=$WB_MODFILE"} -m -f '{{.Version}}' github.com/corazawaf/coraza/v3)
  ops=$(awk '/^BenchmarkTrain/ {print $2}' "$out")
  nsop=$(awk '/^BenchmarkTrain/ {print $3}' "$out")
  facts=$WB_ROOT/build/pgo/$(basename "${WB_PROFILE_OUT%.pgo}").train.json
  mkdir -p "$(dirname "$facts")"
  cat >"$facts" <<EOF
{"build": $(json_str "$WB_BUILD"),
 "coraza_version": $(json_str "$version"),
 "modfile": $(json_str "${MODFILE_REL:-go.mod}"),
 "modfile_sha256": $(json_str "${MODFILE_SHA:-$(sha256sum go.mod | cut -d' ' -f1)}"),
 "tags": $(json_str "$TAGS"),
 "training": $(json_str "$WB_TRAINING"),
 "source": "go test -bench '^BenchmarkTrain\$' -cpuprofile (in-process engine, ./filters/coraza/engine)",
 "benchtime": $(json_str "$benchtime"),
 "ops": ${ops:-0},
 "ns_per_op": ${nsop:-0},
 "profile_sha256": $(json_str "$(sha256sum "$WB_PROFILE_OUT" | cut -d' ' -f1)"),
 "go_version": $(json_str "$GO_VERSION"),
 "git_sha": $(json_str "$(git rev-parse HEAD 2>/dev/null || echo unknown)"),
 "created_utc": $(json_str "$(date -u +%Y-%m-%dT%H:%M:%SZ)"),
 "seconds": $(secs "$t0")}
EOF
  log "profile written ($(stat -c %s "$WB_PROFILE_OUT") bytes, $ops ops of the $WB_TRAINING suite); facts in ${facts#"$WB_ROOT/"}"
  exit 0
fi

# ---------------------------------------------------------------------------
[ "${WB_ACTION:-build}" = build ] || die "WB_ACTION: want build or profile, got $WB_ACTION"
[ "${WB_INSTRUMENT:-0}" = 0 ] || die "instrument: not supported for coraza (Go PGO trains on a CPU profile: WB_ACTION=profile)"
PGO=off
if [ -n "${WB_PROFILE:-}" ]; then
  [ -s "$WB_PROFILE" ] || die "profile $WB_PROFILE missing: train it with 'make pgo' (or scripts/engines/coraza.sh pgo ${WB_BUILD#coraza@})"
  PGO=$WB_PROFILE
fi
MODULE=$WB_OUT/libwafbench_coraza.so
LDFLAGS="-s=false -X main.buildName=$WB_BUILD"
BUILD=(go build -buildmode=c-shared -trimpath -ldflags "$LDFLAGS" "${GOARGS[@]}" "-pgo=$PGO" -o "$MODULE" ./filters/coraza)
t0=$(date +%s.%N)
log "go build … (${BUILD[*]:2})"
nice "${BUILD[@]}" >&2 || die "go build failed"
BUILD_SECS=$(secs "$t0")
rm -f "${MODULE%.so}.h"
log "go build done in ${BUILD_SECS}s"

VM=$(go version -m "$MODULE")
dep() { awk -v p="$1" '$1 == "dep" && $2 == p {print $3}' <<<"$VM"; }
VERSION=$(dep github.com/corazawaf/coraza/v3)
[ -n "$VERSION" ] || die "go version -m: no github.com/corazawaf/coraza/v3 in the module"
[ -z "${WB_VERSION:-}" ] || [ "$VERSION" = "$WB_VERSION" ] || die "module links coraza $VERSION, the recipe declares $WB_VERSION (module file ${MODFILE_REL:-go.mod})"
NOTES=()
if [ "$PGO" != off ]; then
  applied=$(awk '$1 == "build" && $2 ~ /^-pgo=/ {print $2}' <<<"$VM")
  [ -n "$applied" ] || die "go version -m shows no -pgo= setting: the profile was not applied"
  NOTES+=("\"profile_applied\": $(json_str "go version -m: build $applied")")
fi
case ",$TAGS," in
  *,wafbench_re2,*)
    re2=$(dep github.com/wasilibs/go-re2)
    [ "$re2" = v1.13.0 ] || die "tag wafbench_re2: want github.com/wasilibs/go-re2 v1.13.0 linked, go version -m shows '${re2:-none}'"
    NOTES+=("\"go_re2\": $(json_str "$re2")" "\"coraza_wasilibs\": $(json_str "$(dep github.com/corazawaf/coraza-wasilibs)")")
    ;;
esac
wz=$(dep github.com/tetratelabs/wazero)
NOTES+=("\"wazero\": $(json_str "${wz:-not linked}")")
NOTES+=("\"go_version_m\": $(json_str "$VM")")
[ -z "$MODFILE_SHA" ] || NOTES+=("\"modfile\": $(json_str "$MODFILE_REL")" "\"modfile_sha256\": $(json_str "$MODFILE_SHA")")
notes=$(IFS=,; echo "${NOTES[*]}")
cat >"$WB_OUT/facts.json" <<EOF
{"engine_version": $(json_str "$VERSION"),
 "compiler_version": $(json_str "$GO_VERSION"),
 "flags": {"go_build": $(json_str "${BUILD[*]}"), "CGO_CFLAGS": $(json_str "$CGO_CFLAGS"), "GOAMD64": $(json_str "$(go env GOAMD64)"), "tags": $(json_str "$TAGS"), "modfile": $(json_str "${MODFILE_REL:-}"), "pgo": $(json_str "$PGO")},
 "steps": {"go-build": $BUILD_SECS},
 "notes": {$notes}}
EOF
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$WB_OUT/facts.json" || die "facts.json is not valid JSON"
log "built $(basename "$MODULE") (coraza $VERSION${TAGS:+, tags $TAGS}, -pgo=$([ "$PGO" = off ] && echo off || basename "$PGO"))"
