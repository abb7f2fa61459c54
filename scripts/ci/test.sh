#!/usr/bin/env bash
# test.yml, job test: the README's test command.
set -euo pipefail
cd "$(dirname "$0")/../.."
make test
