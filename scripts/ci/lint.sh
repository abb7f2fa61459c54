#!/usr/bin/env bash
# make test (lint-ci): the workflows pass actionlint, which also runs
# ShellCheck on every run: step, and the CI scripts pass ShellCheck.
# actionlint is installed into build/bin by scripts/setup.sh.
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=scripts/ci/lib.sh
. scripts/ci/lib.sh

actionlint=${ACTIONLINT:-build/bin/actionlint}
[ -x "$actionlint" ] || fail 1 "actionlint not found at $actionlint (scripts/setup.sh installs it)"
command -v shellcheck >/dev/null || fail 1 "shellcheck not found (Debian package shellcheck; scripts/setup.sh installs it)"
workflows=(.github/workflows/*.yml)
scripts=(scripts/ci/*.sh)
"$actionlint" -shellcheck "$(command -v shellcheck)" "${workflows[@]}"
shellcheck -x "${scripts[@]}"
echo "lint-ci: ${#workflows[@]} workflows pass actionlint $("$actionlint" -version | head -n 1) (shellcheck $(shellcheck --version | awk '/^version:/ {print $2}') on their run: steps); ${#scripts[@]} scripts/ci scripts pass shellcheck"
