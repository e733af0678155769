#!/usr/bin/env bash
# Phase clocks within the pushed steps (d57b739 with knobs.diff; -DLAB_FINE: forward p5 before
# the cell's math, p7 after it; backward p3 the product's start, p4 its end, p5 after the gate
# gradients' stores). `lab4.sh OUT`.
set -uo pipefail
out=$1
configs=()
for hb in 128:4 128:32 256:8; do
  h=${hb%:*} b=${hb#*:} u=$((h / 8))
  configs+=("f-h$h-b$b-u$u -DHID=$h -DBATCH=$b -DUNITS=$u -DNWARPS=8"
            "fP-h$h-b$b-u$u -DHID=$h -DBATCH=$b -DUNITS=$u -DNWARPS=8 -DLAB_PHASES -DLAB_FINE"
            "b-h$h-b$b-u$u -DLAB_BWD -DHID=$h -DBATCH=$b -DUNITS=$u -DNWARPS=8"
            "bP-h$h-b$b-u$u -DLAB_BWD -DHID=$h -DBATCH=$b -DUNITS=$u -DNWARPS=8 -DLAB_PHASES -DLAB_FINE")
done
source "$(dirname "$0")/lab-run.sh"
