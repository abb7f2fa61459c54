# Shared by the scripts/ci/*.sh job scripts (sourced, not run). Each job of
# .github/workflows/*.yml calls one script; the scripts also run here, so the
# CI path is tested on this machine (driver/cmd/wafbench ci_test.go).
# shellcheck shell=bash

# fail prints a one-line error (a GitHub annotation under Actions) and exits
# with status $1: 2 for bad input, 1 for a failure while running.
fail() {
  local status=$1
  shift
  if [ -n "${GITHUB_ACTIONS:-}" ]; then
    echo "::error::$*" >&2
  else
    echo "$(basename "$0"): $*" >&2
  fi
  exit "$status"
}

# output NAME VALUE: a step output under Actions, a line on stdout here.
output() {
  if [ -n "${GITHUB_OUTPUT:-}" ]; then
    echo "$1=$2" >>"$GITHUB_OUTPUT"
  fi
  echo "$1=$2"
}

# whole NAME VALUE: VALUE must be a whole number ≥ 1.
whole() {
  case $2 in
    "" | *[!0-9]* | 0*) fail 2 "$1: want a whole number ≥ 1, got '$2'" ;;
  esac
}

# wafbench_bin: $WAFBENCH if set (tests), else build/wafbench after
# building what the job needs with make (make's own targets set it up).
wafbench_bin() {
  if [ -n "${WAFBENCH:-}" ]; then
    echo "$WAFBENCH"
    return
  fi
  echo "$PWD/build/wafbench"
}
