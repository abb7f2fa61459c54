#!/usr/bin/env bash
# Renders PNG pictures of one run's report for docs/reading-a-report.md (make screenshot RUN=results/<dir>):
#   report.png       the top of report.html in headless Chromium, 1280 px wide
#   throughput.png   charts/throughput.svg
#   latency.png      the percentile distribution of headers/c16 (or of the first workload charted)
#   per_second.png   charts/per_second.svg, the per-second stability small multiples
# into OUT (default docs/screenshots), and OUT/RUN naming the run they show.
# Needs chromium and rsvg-convert (scripts/setup.sh installs both).
set -euo pipefail
cd "$(dirname "$0")/.."

usage="usage: scripts/screenshot.sh RUN_DIR [OUT_DIR]"
run=${1:?$usage}
out=${2:-docs/screenshots}
if [ ! -f "$run/report.html" ] || [ ! -d "$run/charts" ]; then
  echo "screenshot: $run has no report.html and charts/: rebuild them with build/wafbench report $run" >&2
  exit 2
fi
for tool in chromium rsvg-convert; do
  command -v "$tool" >/dev/null || { echo "screenshot: $tool not found: run scripts/setup.sh (Debian packages chromium, librsvg2-bin)" >&2; exit 1; }
done

latency="$run/charts/latency_headers_c16.svg"
if [ ! -f "$latency" ]; then
  latency=$(find "$run/charts" -name 'latency_*.svg' | sort | head -n 1)
fi

mkdir -p "$out"
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
# --no-sandbox: Chromium refuses to start its sandbox as root; the page is a local file.
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$profile" \
  --window-size=1280,1800 --screenshot="$out/report.png" "file://$(realpath "$run/report.html")" 2>/dev/null
rsvg-convert --zoom 1.5 --background-color white "$run/charts/throughput.svg" -o "$out/throughput.png"
rsvg-convert --zoom 1.5 --background-color white "$run/charts/per_second.svg" -o "$out/per_second.png"
if [ -n "$latency" ]; then
  rsvg-convert --zoom 1.5 --background-color white "$latency" -o "$out/latency.png"
fi
basename "$run" >"$out/RUN"
echo "screenshot: $out/{report,throughput,latency,per_second}.png from $run" >&2
