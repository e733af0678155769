#!/usr/bin/env bash
# On the GPU, from the repository root, with .lab-pack/wr.txz carried (lab.sh wr): the
# backward through L2 at a batch group of 16 samples of hidden 512 with its tile's fragments in
# registers (BWD_WREG), 8 and 16 warps, beside the tile in shared memory (OUT/lab-wr.txt).
set -uo pipefail
cd "$(dirname "$0")/../.."
tar -xJf .lab-pack/wr.txz
bash scripts/persistent-lab/variants.sh run .lab-wr 30 > "$OUT/lab-wr.txt" 2>&1
cut -c1-400 "$OUT/lab-wr.txt"
