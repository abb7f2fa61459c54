#!/usr/bin/env bash
# bench.yml, Bazel jobs envoy-instrumented and envoy-pgo (bare ubuntu-24.04
# host): frees disk for a cold Envoy build and installs LLVM 22 from
# apt.llvm.org. ACTION=instrument also installs the profile runtime
# (libclang-rt-22-dev) and exports LLVM_ROOT; ACTION=optimize exports
# LLVM_PROFDATA. Both go to $GITHUB_ENV for bazel/pgo.sh.
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=scripts/ci/lib.sh
. scripts/ci/lib.sh

case ${ACTION:-} in instrument | optimize) ;; *) fail 2 "ACTION: want instrument or optimize, got '${ACTION:-}'" ;; esac
sudo rm -rf /usr/share/dotnet /usr/local/lib/android /opt/ghc /opt/hostedtoolcache/CodeQL
df -h /
curl -fsSL https://apt.llvm.org/llvm.sh -o "$RUNNER_TEMP/llvm.sh"
sudo bash "$RUNNER_TEMP/llvm.sh" 22
if [ "$ACTION" = instrument ]; then
  sudo apt-get install -y -qq llvm-22 libclang-rt-22-dev
  echo "LLVM_ROOT=/usr/lib/llvm-22" >>"$GITHUB_ENV"
else
  sudo apt-get install -y -qq llvm-22
  echo "LLVM_PROFDATA=/usr/lib/llvm-22/bin/llvm-profdata" >>"$GITHUB_ENV"
fi
