#!/usr/bin/env bash
# Where the folded input's products go wrong (see fold-lab.sh): x's stages (-DXSTAGES: copies that
# many steps ahead), the products by every warp (-DFOLD_ALL_WARPS) against only those without
# gate math (the default), and, timing only, no wait for x's copies (-DFOLD_NOWAIT, a copy of
# the tree with that switch). Training, phase clocks for some. `fold-lab2.sh OUT`.
set -uo pipefail
out=$1
here=$(cd "$(dirname "$0")" && pwd)
tree=$out/tree
bash "$here/../../scripts/persistent-lab/tree.sh" "$tree" || exit 1
sed -i 's|^        cp_async_wait_pending(XST - 1);|#ifndef FOLD_NOWAIT\n        cp_async_wait_pending(XST - 1);\n#endif|' \
  "$tree/candle-cudnn-rnn/src/persistent/recurrence_fwd.cu"
grep -q FOLD_NOWAIT "$tree/candle-cudnn-rnn/src/persistent/recurrence_fwd.cu" || { echo "no FOLD_NOWAIT"; exit 1; }
configs=()
for hb in ${SHAPES:-128:4 128:16 256:8}; do
  h=${hb%:*} b=${hb#*:} u=$((h / 8))
  c="-DHID=$h -DBATCH=$b -DUNITS=$u -DNWARPS=8"
  configs+=("f-h$h-b$b $c" "fx-h$h-b$b $c -DXIN=$h" "fx-h$h-b$b-all $c -DXIN=$h -DFOLD_ALL_WARPS"
            "fx-h$h-b$b-s3 $c -DXIN=$h -DXSTAGES=3" "fx-h$h-b$b-s4 $c -DXIN=$h -DXSTAGES=4"
            "fx-h$h-b$b-nowait $c -DXIN=$h -DFOLD_NOWAIT" "f-h$h-b$b-again $c" "fx-h$h-b$b-again $c -DXIN=$h"
            "fP-h$h-b$b $c -DLAB_PHASES" "fxP-h$h-b$b $c -DLAB_PHASES -DXIN=$h"
            "fxP-h$h-b$b-s3 $c -DLAB_PHASES -DXIN=$h -DXSTAGES=3"
            "fxP-h$h-b$b-nowait $c -DLAB_PHASES -DXIN=$h -DFOLD_NOWAIT")
done
source "$here/../2026-11-29-h200-one-block/lab-run.sh"
rm -rf "$tree"
