#!/usr/bin/env bash
# On the GPU machine, DIR holding scripts/persistent-lab/wgmma_probe.sh's build (built here with
# `scripts/persistent-lab/wgmma_probe.sh build DIR`): the one-group variants that
# ../2026-11-29-h200-wgmma-eager1024/ ran, then the batch in two groups (-DGROUPS=2), each
# variant's whole step, products alone and exchange alone (OUT/probe.log).
#   results/2026-11-30-h200-wgmma-groups/run.sh DIR OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
bash scripts/persistent-lab/wgmma_probe.sh run "$D" 'lstm|lstm-kc128|lstm-kc128-whole|lstm-g2.*|gru|gru-g2.*' \
  > "$OUT/probe.log" 2>&1
grep -E "^==|check after|ns a step|not all resident" "$OUT/probe.log"
