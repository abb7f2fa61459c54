#!/usr/bin/env bash
# bench.yml, job merge (last step): writes the merged report's headline and
# verdicts to the job summary ($GITHUB_STEP_SUMMARY; stdout when unset):
# the In brief (without its chart), Headline, Shard(s) and Machines as
# blocks sections of report.md, or its Paired ratios when it has no block
# analysis.
# In:  REPORT (report.md)
set -euo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=scripts/ci/lib.sh
. scripts/ci/lib.sh

[ -f "${REPORT:-}" ] || fail 2 "REPORT: no report.md at '${REPORT:-}' (the merge did not finish; see its log)"
summary=${GITHUB_STEP_SUMMARY:-/dev/stdout}

# section TITLE: the "## TITLE" section of the report, up to the next "## ".
section() {
  awk -v h="## $1" '$0 == h {on = 1; print; next} on && /^## / {exit} on {print}' "$REPORT"
}
{
  head -n 3 "$REPORT"
  echo
  section "In brief" | sed '/^!\[/d' # its chart is a file of the run, not of the summary
  section Headline
  section Shard
  section Shards
  if grep -qx '## Machines as blocks' "$REPORT"; then
    section "Machines as blocks"
  else
    section "Paired ratios"
  fi
  echo "The full report (method, environment, every table and chart) is in the merged run's artifact."
} >>"$summary"
