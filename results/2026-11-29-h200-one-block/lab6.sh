#!/usr/bin/env bash
# Row groups (FWD_MG) in the grid barrier's forwards at hidden 512 and 1024 (the library's blocks
# of 16 units, batch groups of 8-32), and lab5.sh's pushed ones again (d57b739 with knobs.diff).
# `lab6.sh OUT`.
set -uo pipefail
out=$1
configs=()
for hb in 512:8 512:32 1024:16 1024:32; do
  h=${hb%:*} b=${hb#*:}
  c="-DHID=$h -DBATCH=$b -DUNITS=16 -DNWARPS=8 -DONE_CLUSTER=0 -DPUSH=0"
  configs+=("f-h$h-b$b $c" "f-h$h-b$b-mg2 $c -DFWD_MG=2" "f-h$h-b$b-mg4 $c -DFWD_MG=4" "f-h$h-b$b-again $c")
done
for hb in 128:4 128:8 128:16 128:32; do
  h=${hb%:*} b=${hb#*:} u=$((h / 8))
  c="-DHID=$h -DBATCH=$b -DUNITS=$u -DNWARPS=8"
  configs+=("f-h$h-b$b $c" "f-h$h-b$b-spread $c -DPUSH_SPREAD" "f-h$h-b$b-mg2 $c -DFWD_MG=2"
            "f-h$h-b$b-spread-mg2 $c -DPUSH_SPREAD -DFWD_MG=2" "f-h$h-b$b-again $c" "f-h$h-b$b-spread-again $c -DPUSH_SPREAD")
done
source "$(dirname "$0")/lab-run.sh"
