#!/usr/bin/env bash
# Bazel workspace status for the Envoy build (--workspace_status_command).
# Envoy stamps BUILD_SCM_REVISION and BUILD_SCM_STATUS into its version string
# (envoy --version: REVISION/1.40.0/STATUS/RELEASE/BoringSSL). Envoy is a module
# dependency here, so the revision is wafbench's commit, not Envoy's; the
# Envoy source is the v1.40.0 tag pinned in MODULE.bazel.
set -euo pipefail
cd "$(dirname "$0")/.."
rev=$(git rev-parse HEAD 2>/dev/null || echo 0000000000000000000000000000000000000000)
if [ -z "$(git status --porcelain 2>/dev/null)" ]; then status=Clean; else status=Modified; fi
echo "BUILD_SCM_REVISION ${rev}"
echo "BUILD_SCM_STATUS ${status}"
