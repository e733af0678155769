#!/usr/bin/env bash
# What the pushed backward's loads for the next step cost (d57b739 with knobs.diff; timings only:
# -DLAB_SKIP_NEXT makes none, -DLAB_SKIP_DY leaves dy unconverted; both give wrong results).
# `lab7.sh OUT`.
set -uo pipefail
out=$1
configs=()
for hb in 128:4 128:16; do
  h=${hb%:*} b=${hb#*:} u=$((h / 8))
  c="-DLAB_BWD -DHID=$h -DBATCH=$b -DUNITS=$u -DNWARPS=8 -DLAB_PHASES -DLAB_FINE"
  configs+=("bP-h$h-b$b $c" "bP-h$h-b$b-skipnext $c -DLAB_SKIP_NEXT" "bP-h$h-b$b-skipdy $c -DLAB_SKIP_DY"
            "bP-h$h-b$b-x2 $c -DX_AHEAD=2" "bP-h$h-b$b-x2-skipdy $c -DX_AHEAD=2 -DLAB_SKIP_DY")
done
source "$(dirname "$0")/lab-run.sh"
