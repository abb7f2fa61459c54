#!/usr/bin/env bash
# bench.yml, job pgo-train (debian:12 container): the training run of the
# instrumented Envoy downloaded to build/pgo (bazel/pgo.sh train).
set -euo pipefail
cd "$(dirname "$0")/../.."
chmod +x build/pgo/envoy-instrumented
bazel/pgo.sh train
