#!/usr/bin/env bash
# After the dy fix (3fc9756, where probe.diff applies): where the pushed steps' time goes now, in the lab harness, on a copy
# of the tree with probe.diff (lab-only switches: -DLAB_FINE phase marks inside the step,
# forward p5 before the cell's math and p7 after it, backward p3 the product's start, p4 its
# end, p5 after the gate gradients' stores; -DLAB_SKIP_OUT no forward outputs, -DLAB_SKIP_X no
# next input projection, -DLAB_SKIP_NEXT no backward loads for the next step: timings only;
# -DPUSH_WREG=1 the backward's pushed product from registers, -DPUSH_KSPLIT=2 its K over two
# warps). `probe-lab.sh OUT`.
set -uo pipefail
out=$1
here=$(cd "$(dirname "$0")" && pwd)
tree=$out/tree
bash "$here/../../scripts/persistent-lab/tree.sh" "$tree" "$here/probe.diff" || exit 1
configs=()
for hb in 128:4 128:16 256:8; do
  h=${hb%:*} b=${hb#*:} u=$((h / 8))
  c="-DHID=$h -DBATCH=$b -DUNITS=$u -DNWARPS=8 -DONE_CLUSTER=1 -DPUSH=1"
  configs+=("b-h$h-b$b $c -DLAB_BWD" "b-h$h-b$b-wreg $c -DLAB_BWD -DPUSH_WREG=1"
            "b-h$h-b$b-k2 $c -DLAB_BWD -DPUSH_WREG=1 -DPUSH_KSPLIT=2 -DNWARPS=16"
            "b-h$h-b$b-again $c -DLAB_BWD" "b-h$h-b$b-wreg-again $c -DLAB_BWD -DPUSH_WREG=1"
            "bP-h$h-b$b $c -DLAB_BWD -DLAB_PHASES -DLAB_FINE"
            "bP-h$h-b$b-wreg $c -DLAB_BWD -DLAB_PHASES -DLAB_FINE -DPUSH_WREG=1"
            "bP-h$h-b$b-skipnext $c -DLAB_BWD -DLAB_PHASES -DLAB_FINE -DLAB_SKIP_NEXT"
            "f-h$h-b$b $c" "fP-h$h-b$b $c -DLAB_PHASES -DLAB_FINE"
            "fP-h$h-b$b-skipout $c -DLAB_PHASES -DLAB_FINE -DLAB_SKIP_OUT"
            "fP-h$h-b$b-skipx $c -DLAB_PHASES -DLAB_FINE -DLAB_SKIP_X")
done
source "$here/lab-run.sh"
rm -rf "$tree"
