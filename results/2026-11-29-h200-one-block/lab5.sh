#!/usr/bin/env bash
# The forward's push spread over the lanes of each store's group (-DPUSH_SPREAD: each lane stores
# to every VEC-th block, instead of the group's lead to every block), its K groups fewer
# (FWD_MG=2, 4: row groups), and lab4.sh's phases of both (d57b739 with knobs.diff). `lab5.sh OUT`.
set -uo pipefail
out=$1
configs=()
for hb in 128:4 128:8 128:16 128:32 256:8; do
  h=${hb%:*} b=${hb#*:} u=$((h / 8))
  c="-DHID=$h -DBATCH=$b -DUNITS=$u -DNWARPS=8"
  configs+=("f-h$h-b$b $c" "f-h$h-b$b-spread $c -DPUSH_SPREAD" "f-h$h-b$b-mg2 $c -DFWD_MG=2"
            "f-h$h-b$b-mg4 $c -DFWD_MG=4" "f-h$h-b$b-spread-mg2 $c -DPUSH_SPREAD -DFWD_MG=2"
            "f-h$h-b$b-spread2 $c -DPUSH_SPREAD")
  if [ "$b" = 4 ] || [ "$b" = 32 ]; then
    configs+=("fP-h$h-b$b-spread $c -DPUSH_SPREAD -DLAB_PHASES -DLAB_FINE"
              "bP-h$h-b$b-x2 $c -DLAB_BWD -DX_AHEAD=2 -DLAB_PHASES -DLAB_FINE")
  fi
done
source "$(dirname "$0")/lab-run.sh"
