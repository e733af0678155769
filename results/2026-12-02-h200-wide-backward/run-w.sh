#!/usr/bin/env bash
# On the GPU, from the repository root, with .lab-pack/w.txz carried (lab.sh w): the
# backward through L2 at the plans of [*, 32, 1024] (2 groups of 16, 16 units a block) and of
# [*, 32, 512] (4 groups of 8, one cluster of 16 blocks each): 8 and 16 warps, the tile's
# fragments in registers or not (OUT/lab-w.txt).
set -uo pipefail
cd "$(dirname "$0")/../.."
tar -xJf .lab-pack/w.txz
for d in .lab-w1024 .lab-w512; do echo "### $d"; bash scripts/persistent-lab/variants.sh run $d 30; done > "$OUT/lab-w.txt" 2>&1
grep -E "^###|^==|^phase" "$OUT/lab-w.txt" | cut -c1-330
