#!/usr/bin/env bash
# The next session's H200 commands for the wgmma backward, from this branch's tree with the builds
# carried (WBWD: this branch's scripts/devbin.sh build, .devbin-wbwd; PROBE: the lab probe's builds,
# .devbin-bwdp4, `../2026-11-30-h200-wgmma-backward-probe/run.sh DIR - build`):
#   1 (about 4 minutes cold): run.sh check (OUT/1/);
#   2 (about 5 minutes): run.sh sanitize (OUT/2/);
#   3 (about 6 minutes): run.sh ab, then the probe's dg in the library's layout (DG_ROWS=2)
#     beside dg by gate row (OUT/3/).
#   results/2026-11-30-h200-wgmma-backward/next.sh WBWD PROBE OUT 1|2|3
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
WBWD=$1 PROBE=$2 OUT=$3 PART=$4
case $PART in
1) bash "$here/run.sh" "$WBWD" "$OUT/1" check ;;
2) bash "$here/run.sh" "$WBWD" "$OUT/2" sanitize ;;
3)
  bash "$here/run.sh" "$WBWD" "$OUT/3" ab
  bash "$here/../2026-11-30-h200-wgmma-backward-probe/run.sh" "$PROBE" "$OUT/3/probe" probe \
    wbp wbp-dg2 wbp-gru wbp-gru-dg2 | grep -E "^==|check|step:"
  ;;
*) echo "unknown part $PART" >&2; exit 2 ;;
esac
