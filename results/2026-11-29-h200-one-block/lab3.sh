#!/usr/bin/env bash
# Follow-up of lab2.sh (d57b739 with knobs.diff): the step inputs loaded two steps ahead
# (X_AHEAD=2), and one block again, launched as a cluster of one. `lab3.sh OUT`.
set -uo pipefail
out=$1
configs=()
for hb in 128:4 128:8 128:16 128:32 256:8; do
  h=${hb%:*} b=${hb#*:} u=$((h / 8))
  configs+=("f-h$h-b$b-u$u -DHID=$h -DBATCH=$b -DUNITS=$u -DNWARPS=8"
            "f-h$h-b$b-u$u-x2 -DHID=$h -DBATCH=$b -DUNITS=$u -DNWARPS=8 -DX_AHEAD=2"
            "b-h$h-b$b-u$u -DLAB_BWD -DHID=$h -DBATCH=$b -DUNITS=$u -DNWARPS=8"
            "b-h$h-b$b-u$u-x2 -DLAB_BWD -DHID=$h -DBATCH=$b -DUNITS=$u -DNWARPS=8 -DX_AHEAD=2")
  if [ "$b" = 4 ]; then
    configs+=("fP-h$h-b$b-u$u -DHID=$h -DBATCH=$b -DUNITS=$u -DNWARPS=8 -DLAB_PHASES"
              "fP-h$h-b$b-u$u-x2 -DHID=$h -DBATCH=$b -DUNITS=$u -DNWARPS=8 -DX_AHEAD=2 -DLAB_PHASES"
              "bP-h$h-b$b-u$u -DLAB_BWD -DHID=$h -DBATCH=$b -DUNITS=$u -DNWARPS=8 -DLAB_PHASES"
              "bP-h$h-b$b-u$u-x2 -DLAB_BWD -DHID=$h -DBATCH=$b -DUNITS=$u -DNWARPS=8 -DX_AHEAD=2 -DLAB_PHASES"
              "f-h$h-b$b-u128-mg8 -DHID=$h -DBATCH=$b -DUNITS=128 -DNWARPS=8 -DFWD_MG=8 -DPARTS=1"
              "b-h$h-b$b-u128-k2 -DLAB_BWD -DHID=$h -DBATCH=$b -DUNITS=128 -DNWARPS=16 -DPUSH_KSPLIT=2 -DPUSH_WREG=1")
  fi
done
source "$(dirname "$0")/lab-run.sh"
