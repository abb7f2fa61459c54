#!/usr/bin/env bash
# Builds one ModSecurity recipe of filters/builds.yaml into an Envoy dynamic
# module. Run by `wafbench build` (driver/builds), never by hand.
#
# ---------------------------------------------------------------------------
# The engine-script contract (scripts/engines/<engine>.sh; coraza.sh too)
# ---------------------------------------------------------------------------
# `wafbench build` runs the script from the repository root with these
# variables set (every one is set; empty means "not used by this recipe"):
#
#   WB_ROOT            repository root (absolute)
#   WB_BUILD           mode name of the build, e.g. modsecurity@3.0.14-pgo;
#                      compile it in (C++ -DWAFBENCH_BUILD_NAME, Go -X main.buildName)
#   WB_ENGINE          modsecurity | coraza
#   WB_VERSION         engine version the recipe declares (3.0.14, v3.8.1)
#   WB_OUT             an empty temporary directory (absolute). Put the module
#                      (libwafbench_<engine>.so) and facts.json there. The
#                      driver renames it into build/engines/<dir> only after
#                      the script exited 0 and the module is there.
#   WB_CACHE           build/src (absolute): git-ignored cache for sources,
#                      downloads and configured/compiled engines
#   WB_JOBS            parallel jobs for make (2)
#   WB_SOURCE_KIND     debian-package | debian-source | go-module
#   WB_SOURCE_PACKAGE, WB_SOURCE_SUITE, WB_SOURCE_ARCHIVE, WB_SOURCE_SHA256
#                      the recipe's source fields
#   WB_MODFILE         go.mod to build with (absolute; coraza), else empty
#   WB_COMPILER        compiler of the recipe: g++, clang-14, go
#   WB_FLAGS           optimisation flags of the recipe (e.g. -O2)
#   WB_LTO             "" | thin
#   WB_LINK            shared | static
#   WB_TAGS            Go build tags, space separated (coraza)
#   WB_INSTRUMENT      1: build an instrumented (profile-generating) module, else 0
#   WB_PROFILE         profile file to optimise with (absolute), else empty
#   WB_ALLOC_PACKAGE, WB_ALLOC_SUITE, WB_ALLOC_ARCHIVE, WB_ALLOC_SHA256
#                      the recipe's allocator fields (a Debian source package:
#                      mimalloc), else empty; modsecurity only
#   WB_CTYPE           inline: link the module's own ctype functions
#                      (filters/modsecurity/ctype_inline.cc), else empty
#
# The script writes $WB_OUT/facts.json, one JSON object:
#   {"engine_version": "...",        version of the engine actually built
#    "compiler_version": "...",      first line of `<compiler> --version`
#    "flags": {"CFLAGS": "...", ...} the exact flags used, by name
#    "steps": {"configure": 14.2, ...}  wall seconds per step
#    "shared_lib_dir": "lib",        optional: dir (in WB_OUT) with the engine's
#                                    shared library for the nginx reference host
#    "notes": {"...": "..."}}        optional evidence (e.g. profile applied)
#
# Go profiles (coraza; `wafbench pgo` for a pgo build without pgo.from): the
# driver runs the script with the same variables plus
#   WB_ACTION=profile  write a Go CPU profile instead of a module
#   WB_PROFILE_OUT     where to write it (absolute; a temporary path)
#   WB_TRAINING        the training suite named by the recipe's pgo.training
# and WB_OUT a scratch directory; the driver then moves the profile to
# build/pgo/coraza-<name>.pgo and writes build/pgo/coraza-<name>.json beside
# it (builds.ProfileInfo). Without WB_ACTION (or WB_ACTION=build) the script
# builds. WB_PROFILE of a pgo build is that .pgo file.
#
# Progress: one line per step on stderr ("<build>: <step> … done in Ns").
# Failure: exit non-zero; the last stderr line says what is missing or wrong
# (for a missing tool: the Debian package and `./scripts/setup.sh`).
# ---------------------------------------------------------------------------
#
# Recipes:
#   debian-package  today's module: g++ against pkg-config modsecurity (Debian
#                   12's libmodsecurity 3.0.9), linked shared.
#   debian-source   the Debian source package's upstream tarball, fetched with a
#                   project-local apt configuration (build/src/apt/<suite>; /etc/apt is
#                   only read, for the mirror), verified by SHA-256, configured
#                   without optional features and built static with PIC by the
#                   recipe's compiler and flags; the module links it statically
#                   (LTO and PGO then cover engine and module alike), and a
#                   shared libmodsecurity.so.3 of the same objects goes to
#                   $WB_OUT/lib for nginx. The compiled engine is cached per
#                   (archive, compiler, flags, profile) under build/src/modsecurity.
set -euo pipefail

: "${WB_ROOT:?run through wafbench build}" "${WB_OUT:?}" "${WB_BUILD:?}"
cd "$WB_ROOT"
[ "${WB_ACTION:-build}" = build ] || { echo "$WB_BUILD: WB_ACTION=$WB_ACTION: modsecurity profiles come from its instrumented build" >&2; exit 2; }

log() { printf '%s: %s\n' "$WB_BUILD" "$*" >&2; }
die() { printf '%s: %s\n' "$WB_BUILD" "$*" >&2; exit 1; }

declare -A STEPS=()
# step NAME LOG CMD... runs CMD with its output appended to the file LOG
# ("-": stderr), timing it and logging start and end; a failure names LOG.
step() {
  local name=$1 out=$2 t0 t1 rc=0
  shift 2
  log "$name …"
  t0=$(date +%s.%N)
  if [ "$out" = - ]; then "$@" >&2 || rc=$?; else "$@" >>"$out" 2>&1 || rc=$?; fi
  t1=$(date +%s.%N)
  STEPS[$name]=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b-a}')
  if [ "$rc" -ne 0 ]; then
    [ "$out" = - ] || { tail -n 20 "$out" >&2; die "$name failed (exit $rc): see $out"; }
    die "$name failed (exit $rc)"
  fi
  log "$name done in ${STEPS[$name]}s"
}

need() { # need TOOL DEBIAN-PACKAGE
  command -v "$1" >/dev/null 2>&1 || die "$1 not found: install the Debian package $2 (./scripts/setup.sh installs those of the recipes in filters/builds.yaml)"
}

json_str() { python3 -c 'import json,sys; print(json.dumps(sys.argv[1]))' "$1"; }

# Compiler names: g++ → gcc/g++; clang[-NN] → clang[-NN]/clang++[-NN] with
# llvm tools of the same suffix.
case "$WB_COMPILER" in
  g++) CC=gcc CXX=g++ SUFFIX="" ;;
  clang | clang-*) SUFFIX=${WB_COMPILER#clang} CC=clang$SUFFIX CXX=clang++$SUFFIX ;;
  *) die "compiler: $WB_COMPILER is not supported for modsecurity (g++, clang, clang-NN)" ;;
esac
pkgver=${SUFFIX#-}
need "$CXX" "$WB_COMPILER"
need make make
COMPILER_VERSION=$("$CXX" --version | head -1)

MODULE=$WB_OUT/libwafbench_modsecurity.so
MAKE_MODULE=(make -s -C filters/modsecurity OUT_DIR="$WB_OUT" OBJ_DIR="$WB_OUT/.obj" CXX="$CXX" BUILD_NAME="$WB_BUILD")

write_facts() { # write_facts ENGINE_VERSION FLAGS_JSON SHARED_LIB_DIR NOTES_JSON
  local steps="" k
  for k in "${!STEPS[@]}"; do steps+="${steps:+, }\"$k\": ${STEPS[$k]}"; done
  cat >"$WB_OUT/facts.json" <<EOF
{"engine_version": $(json_str "$1"),
 "compiler_version": $(json_str "$COMPILER_VERSION"),
 "flags": $2,
 "steps": {$steps},
 "shared_lib_dir": $(json_str "$3"),
 "notes": $4}
EOF
}

check_exports() { # every export a hook, every import defined by Envoy
  step check-exports - "${MAKE_MODULE[@]}" check-exports "$@"
}

# ---------------------------------------------------------------------------
if [ "$WB_SOURCE_KIND" = debian-package ]; then
  need pkg-config pkg-config
  pkg-config --exists modsecurity || die "pkg-config modsecurity: install the Debian package libmodsecurity-dev (./scripts/setup.sh)"
  step module - "${MAKE_MODULE[@]}" module OPTFLAGS="$WB_FLAGS -g"
  check_exports OPTFLAGS="$WB_FLAGS -g"
  rm -rf "$WB_OUT/.obj"
  write_facts "$(pkg-config --modversion modsecurity)" \
    "{\"CXXFLAGS\": $(json_str "-std=c++17 $WB_FLAGS -g -fPIC (filters/modsecurity/Makefile)"), \"MSC_CFLAGS\": $(json_str "$(pkg-config --cflags modsecurity)"), \"MSC_LIBS\": $(json_str "$(pkg-config --libs modsecurity)")}" "" "{}"
  exit 0
fi

[ "$WB_SOURCE_KIND" = debian-source ] || die "source.kind: $WB_SOURCE_KIND is not a modsecurity source"
[ "$WB_LINK" = static ] || die "link: debian-source builds link the engine static (got $WB_LINK)"

for t in autoreconf:autoconf automake:automake libtoolize:libtool pkg-config:pkg-config; do need "${t%%:*}" "${t#*:}"; done
for p in libpcre2-8:libpcre2-dev yajl:libyajl-dev libxml-2.0:libxml2-dev; do
  pkg-config --exists "${p%%:*}" || die "pkg-config ${p%%:*}: install the Debian package ${p#*:} (./scripts/setup.sh)"
done
AR=ar RANLIB=ranlib NM=nm
if [ -n "$SUFFIX" ] || [ "$CC" = clang ]; then
  need "llvm-ar$SUFFIX" "llvm$SUFFIX"
  need "llvm-profdata$SUFFIX" "llvm$SUFFIX"
  AR=llvm-ar$SUFFIX RANLIB=llvm-ranlib$SUFFIX NM=llvm-nm$SUFFIX
fi

# --- source: project-local apt, SHA-256 checked ----------------------------
DL=$WB_CACHE/dl
# fetch_source PACKAGE SUITE ARCHIVE SHA256: the upstream tarball of a Debian
# source package into $DL, through a project-local apt configuration per suite
# (build/src/apt/<suite>; /etc/apt is only read, for the mirror), checked by
# SHA-256.
fetch_source() {
  local pkg=$1 suite=$2 archive=$3 sha=$4 apt=$WB_CACHE/apt/$2 mirror got
  if [ ! -f "$DL/$archive" ]; then
    # The Debian mirror this machine already uses (deb822 URIs: or one-line deb).
    mirror=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '/^URIs:/{for(i=2;i<=NF;i++) print $i}' |
      grep -v -e security -e '^$' | grep '/debian/\?$' | head -1 || true)
    if [ -z "$mirror" ]; then
      mirror=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
        awk '$1=="deb"{for(i=2;i<=NF;i++) if($i ~ /^(https?|file):/){print $i; break}}' |
        grep -v security | grep '/debian/\?$' | head -1 || true)
    fi
    [ -n "$mirror" ] || die "no Debian mirror in /etc/apt/sources.list(.d) to fetch $archive from"
    mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$DL"
    echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror $suite main" >"$apt/sources.list"
    local opts=(-o "Dir::Etc::SourceList=$apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
      -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache" -o APT::Sandbox::User=root -qq)
    if [ ! -s "$apt/lists/.updated" ]; then
      apt-get "${opts[@]}" update >&2 || die "apt-get update ($mirror $suite, deb-src) failed"
      echo "$mirror" >"$apt/lists/.updated"
    fi
    (cd "$DL" && apt-get "${opts[@]}" source --download-only --tar-only "$pkg/$suite" >&2) ||
      die "apt-get source --tar-only $pkg/$suite failed"
    [ -f "$DL/$archive" ] || die "apt-get source did not produce $archive (the suite serves: $(ls "$DL" | tr '\n' ' '))"
  fi
  got=$(sha256sum "$DL/$archive" | cut -d' ' -f1)
  [ "$got" = "$sha" ] || die "$DL/$archive: SHA-256 $got, builds.yaml says $sha; refusing (delete the file to fetch again)"
}
ARCHIVE=$DL/$WB_SOURCE_ARCHIVE
step fetch - fetch_source "$WB_SOURCE_PACKAGE" "$WB_SOURCE_SUITE" "$WB_SOURCE_ARCHIVE" "$WB_SOURCE_SHA256"

# --- flags ------------------------------------------------------------------
OPT="$WB_FLAGS"
LINKF=""
if [ "$WB_LTO" = thin ]; then
  need "ld.lld$SUFFIX" "lld$SUFFIX"
  OPT+=" -flto=thin"
  LINKF+=" -flto=thin -fuse-ld=lld$SUFFIX"
fi
if [ "$WB_INSTRUMENT" = 1 ]; then
  clang_rt=$("$CC" -print-file-name=libclang_rt.profile-x86_64.a 2>/dev/null || true)
  [ -f "$clang_rt" ] || die "libclang_rt.profile-x86_64.a not found: install the Debian package libclang-rt-$pkgver-dev (./scripts/setup.sh)"
  OPT+=" -fprofile-generate"
  LINKF+=" -fprofile-generate"
fi
if [ -n "$WB_PROFILE" ]; then
  [ -f "$WB_PROFILE" ] || die "profile $WB_PROFILE missing: train it with make pgo"
  OPT+=" -fprofile-use=$WB_PROFILE -Wno-profile-instr-unprofiled -Wno-profile-instr-out-of-date"
  LINKF+=" -fprofile-use=$WB_PROFILE"
fi
OPT=${OPT# }
LINKF=${LINKF# }

# --- engine: configure + make, cached per recipe -----------------------------
RECIPE_REV=1 # bump when the configure line or steps below change
profile_sha=""
[ -z "$WB_PROFILE" ] || profile_sha=$(sha256sum "$WB_PROFILE" | cut -d' ' -f1)
CONFIGURE=(--disable-shared --enable-static --with-pic --with-pcre2 --without-pcre --with-curl=no --with-geoip=no
  --with-maxmind=no --with-lmdb=no --with-lua=no --with-ssdeep=no --disable-examples --disable-doxygen-doc)
key=$(printf '%s\n' "$RECIPE_REV" "$WB_SOURCE_SHA256" "$COMPILER_VERSION" "$OPT" "$LINKF" "${CONFIGURE[*]}" "$profile_sha" |
  sha256sum | cut -c1-16)
ENG=$WB_CACHE/modsecurity/$WB_VERSION-$key
PREFIX=$ENG/prefix
SRC=$ENG/src
# ThinLTO compiles the engine's bitcode again at every link (module and
# shared library): a cache beside the engine makes the second link and a
# module-only rebuild cheap.
LTOCACHE=""
[ "$WB_LTO" != thin ] || LTOCACHE="-Wl,--thinlto-cache-dir=$ENG/thinlto-cache"

build_engine() {
  rm -rf "$ENG"
  mkdir -p "$SRC" "$ENG/logs"
  step extract - tar -xzf "$ARCHIVE" -C "$SRC" --strip-components=1
  cd "$SRC"
  step autoreconf "$ENG/logs/autoreconf.log" nice autoreconf -fi
  step configure "$ENG/logs/configure.log" env LLVM_PROFILE_FILE=/dev/null nice ./configure --prefix="$PREFIX" "${CONFIGURE[@]}" CC="$CC" CXX="$CXX" \
    AR="$AR" RANLIB="$RANLIB" NM="$NM" CFLAGS="$OPT" CXXFLAGS="$OPT" LDFLAGS="$LINKF"
  # LLVM_PROFILE_FILE: instrumented helper programs must not drop profiles
  # into the source tree.
  step make "$ENG/logs/make.log" env LLVM_PROFILE_FILE=/dev/null nice make -j"$WB_JOBS" V=1 -C others
  step make-src "$ENG/logs/make.log" env LLVM_PROFILE_FILE=/dev/null nice make -j"$WB_JOBS" V=1 -C src
  step install "$ENG/logs/install.log" make -C src install
  cd "$WB_ROOT"
  # Dependencies of the static library, as libtool recorded them.
  sed -n "s/^dependency_libs='\(.*\)'/\1/p" "$SRC/src/libmodsecurity.la" | tr ' ' '\n' | grep -e '^-l' -e '^-L' |
    tr '\n' ' ' >"$ENG/deps" || true
  # The exact compile line of one engine file, for the manifest.
  grep -m1 -e '^libtool: compile: .* -c transaction\.cc' "$ENG/logs/make.log" | sed 's/^libtool: compile: *//' >"$ENG/compile-line" || true
  for k in autoreconf configure make make-src install; do printf '%s %ss, ' "$k" "${STEPS[$k]}"; done >"$ENG/steps"
  date -u +%FT%TZ >"$ENG/.done"
}
NOTES=()
if [ -f "$ENG/.done" ]; then
  log "engine cached: $ENG"
  NOTES+=("\"engine_cache\": $(json_str "engine reused from $ENG (built $(cat "$ENG/.done"): $(cat "$ENG/steps" 2>/dev/null))")")
else
  build_engine
fi
DEPS=$(cat "$ENG/deps")
ENGINE_VERSION=$(sed -n 's/^Version: *//p' "$PREFIX/lib/pkgconfig/modsecurity.pc" 2>/dev/null || true)
[ -n "$ENGINE_VERSION" ] || ENGINE_VERSION=$(sed -n 's/^#define MODSECURITY_\(MAJOR\|MINOR\|PATCHLEVEL\) "\?\([0-9]*\)"\?/\2/p' \
  "$PREFIX/include/modsecurity/modsecurity.h" | paste -sd.)

# --- module: engine linked in statically ------------------------------------
# With a profile, a module function edited since the training gets a
# "function control flow change detected (hash mismatch)" warning
# (-Wbackend-plugin): kept visible, not an error under the module's -Werror,
# and counted in the manifest (the engine, the bulk of the code, is unaffected;
# 'make pgo' retrains).
MODOPT=$OPT
[ -z "$WB_PROFILE" ] || MODOPT+=" -Wno-error=backend-plugin"
MODFLAGS=(OPTFLAGS="$MODOPT" MSC_CFLAGS="-isystem $PREFIX/include" MSC_LIBS="$PREFIX/lib/libmodsecurity.a $DEPS"
  EXTRA_LDFLAGS="$WB_FLAGS $LINKF $LTOCACHE")
# --- private allocator (recipe field allocator:) -----------------------------
# mimalloc's own sources (src/static.c, include/mimalloc-new-delete.h) built
# into the module by filters/modsecurity/Makefile (MIMALLOC_SRC): operator
# new/delete of module, engine and a static libstdc++ go to it; malloc/free
# stay Envoy's tcmalloc.
if [ -n "$WB_ALLOC_PACKAGE" ]; then
  [ "$WB_ALLOC_PACKAGE" = mimalloc ] || die "allocator: $WB_ALLOC_PACKAGE is not supported (mimalloc)"
  step fetch-allocator - fetch_source "$WB_ALLOC_PACKAGE" "$WB_ALLOC_SUITE" "$WB_ALLOC_ARCHIVE" "$WB_ALLOC_SHA256"
  MI=$WB_CACHE/mimalloc/${WB_ALLOC_SHA256:0:16}
  if [ ! -f "$MI/.done" ]; then
    rm -rf "$MI" && mkdir -p "$MI"
    step extract-allocator - tar -xf "$DL/$WB_ALLOC_ARCHIVE" -C "$MI" --strip-components=1
    date -u +%FT%TZ >"$MI/.done"
  fi
  [ -f "$MI/src/static.c" ] && [ -f "$MI/include/mimalloc-new-delete.h" ] || die "$WB_ALLOC_ARCHIVE: no src/static.c or include/mimalloc-new-delete.h"
  MODFLAGS+=(MIMALLOC_SRC="$MI")
  NOTES+=("\"allocator\": $(json_str "operator new/delete: $WB_ALLOC_ARCHIVE (src/static.c, $OPT), with a static libstdc++; malloc/free: Envoy's")")
fi
case "$WB_CTYPE" in
  "") ;;
  inline)
    MODFLAGS+=(CTYPE_INLINE=1)
    NOTES+=("\"ctype\": $(json_str "tolower, toupper, isspace, isalnum, isxdigit: the module's own (filters/modsecurity/ctype_inline.cc), not glibc's")")
    ;;
  *) die "ctype: $WB_CTYPE is not supported (inline)" ;;
esac
mkdir -p "$WB_OUT/.obj"
step module "$WB_OUT/.obj/module.log" env LLVM_PROFILE_FILE=/dev/null nice "${MAKE_MODULE[@]}" module "${MODFLAGS[@]}"
if [ -n "$WB_PROFILE" ]; then
  stale=$(grep -c 'hash mismatch' "$WB_OUT/.obj/module.log" || true)
  grep 'hash mismatch' "$WB_OUT/.obj/module.log" >&2 || true
  NOTES+=("\"profile_stale_module_functions\": $(json_str "${stale:-0} module function(s) changed since the profile was trained (hash mismatch; 'make pgo' retrains)")")
fi
check_exports "${MODFLAGS[@]}"

# --- shared library of the same objects, for nginx --------------------------
mkdir -p "$WB_OUT/lib"
soname=libmodsecurity.so.3
step shared-lib - nice "$CXX" -shared $OPT $LINKF $LTOCACHE -o "$WB_OUT/lib/$soname" -Wl,-soname,$soname \
  -Wl,--whole-archive "$PREFIX/lib/libmodsecurity.a" -Wl,--no-whole-archive $DEPS -Wl,-z,now
rm -rf "$WB_OUT/.obj"

# --- proof that a profile was applied ----------------------------------------
if [ -n "$WB_PROFILE" ] && [ -s "$ENG/compile-line" ]; then
  ir=$(mktemp --suffix=.ll)
  line=$(sed -e 's/ -o [^ ]*//g' -e 's/ -M[TF] [^ ]*//g' -e 's/ -M[DP]//g' -e 's/ -c / /' "$ENG/compile-line")
  (cd "$SRC/src" && eval "$line -S -emit-llvm -o $ir") 2>/dev/null || true
  defs=$(grep -c '^define ' "$ir" || true)
  counted=$(grep -c '!{!"function_entry_count", i64 [1-9]' "$ir" || true)
  rm -f "$ir"
  [ "${counted:-0}" -gt 0 ] || die "profile $WB_PROFILE was not applied: src/transaction.cc compiled with it carries no function entry counts"
  NOTES+=("\"profile_applied\": $(json_str "src/transaction.cc compiled with -fprofile-use: $counted of $defs defined functions carry non-zero profile entry counts")")
fi

FLAGS=$(printf '{"CC": %s, "CXX": %s, "CFLAGS": %s, "CXXFLAGS": %s, "LDFLAGS": %s, "module_CXXFLAGS": %s, "configure": %s, "engine_compile_line": %s, "module_link_libs": %s}' \
  "$(json_str "$CC")" "$(json_str "$CXX")" "$(json_str "$OPT")" "$(json_str "$OPT")" "$(json_str "$LINKF")" \
  "$(json_str "-std=c++17 $OPT -fPIC -fvisibility=hidden -DWAFBENCH_BUILD_NAME=\"$WB_BUILD\" (filters/modsecurity/Makefile); link: $WB_FLAGS $LINKF")" \
  "$(json_str "${CONFIGURE[*]}")" "$(json_str "$(cat "$ENG/compile-line" 2>/dev/null)")" \
  "$(json_str "libmodsecurity.a $DEPS")")
write_facts "$ENGINE_VERSION" "$FLAGS" lib "{$(IFS=,; echo "${NOTES[*]}")}"
