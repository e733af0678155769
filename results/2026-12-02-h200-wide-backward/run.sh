#!/usr/bin/env bash
# On the GPU, from the repository root, with D=.devbin-c and .lab-pack/b128.txz carried (lab.sh's
# builds): the layer-by-layer backward through L2 at a batch group of 16 samples of hidden 512 (the
# plan of [*, 128, 3 x 512]'s training, 8 groups of 16 blocks) in the lab, its variants and their
# phases (OUT/lab.txt); then next-512.sh (../2026-12-02-h200-push16-wreg/).
#   D=.devbin-c OUT=... results/2026-12-02-h200-wide-backward/run.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
tar -xJf .lab-pack/b128.txz
bash scripts/persistent-lab/variants.sh run .lab-b128 30 > "$OUT/lab.txt" 2>&1
cat "$OUT/lab.txt" | cut -c1-300
bash results/2026-12-02-h200-push16-wreg/next-512.sh
