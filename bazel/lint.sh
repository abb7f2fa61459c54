#!/usr/bin/env bash
# Lints the Bazel files with buildifier, the same way CI and reviewers do:
#   bazel/lint.sh        buildifier -lint=warn -mode=check (fails on any finding)
#   bazel/lint.sh fix    buildifier -lint=fix -mode=fix (rewrites the files)
# buildifier is installed once into the git-ignored build/tools/ (from npm
# @bazel/buildifier, else from the Go module), pinned to BUILDIFIER_VERSION.
set -euo pipefail
cd "$(dirname "$0")/.."

BUILDIFIER_VERSION=8.2.1
# The Go module version of the same tool, for machines without npm.
BUILDTOOLS_GO_VERSION=v0.0.0-20260904073137-eaa4d125b423
TOOLS=build/tools

die() {
  printf 'lint: error: %s\n' "$*" >&2
  exit 1
}

buildifier_bin() {
  local npm_bin=$TOOLS/buildifier-npm/node_modules/.bin/buildifier go_bin=$TOOLS/bin/buildifier
  if [ -x "$npm_bin" ] && "$npm_bin" --version 2>/dev/null | grep -q "version: $BUILDIFIER_VERSION"; then
    echo "$npm_bin"
  elif [ -x "$go_bin" ]; then
    echo "$go_bin"
  elif command -v npm >/dev/null 2>&1; then
    echo "lint: installing @bazel/buildifier@$BUILDIFIER_VERSION into $TOOLS/buildifier-npm" >&2
    npm install --silent --no-audit --no-fund --prefix "$TOOLS/buildifier-npm" "@bazel/buildifier@$BUILDIFIER_VERSION" >&2 ||
      die "npm install @bazel/buildifier@$BUILDIFIER_VERSION failed"
    echo "$npm_bin"
  elif command -v go >/dev/null 2>&1; then
    echo "lint: installing buildifier $BUILDTOOLS_GO_VERSION into $TOOLS/bin" >&2
    GOBIN=$(pwd)/$TOOLS/bin go install "github.com/bazelbuild/buildtools/buildifier@$BUILDTOOLS_GO_VERSION" >&2 ||
      die "go install buildifier failed"
    echo "$go_bin"
  else
    die "need npm or go to install buildifier"
  fi
}

files=(MODULE.bazel WORKSPACE BUILD.bazel)
while IFS= read -r f; do files+=("$f"); done < <(find bazel -type f \( -name '*.bzl' -o -name 'BUILD' -o -name 'BUILD.bazel' \) | sort)

bf=$(buildifier_bin)
case ${1:-check} in
check) "$bf" -lint=warn -mode=check -v "${files[@]}" ;;
fix) "$bf" -lint=fix -mode=fix -v "${files[@]}" ;;
*) die "unknown mode '$1' (want: check, fix)" ;;
esac
echo "lint: buildifier clean: ${files[*]}" >&2
