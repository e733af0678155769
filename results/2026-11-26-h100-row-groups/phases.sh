#!/usr/bin/env bash
# The timing harness (scripts/persistent-lab/lab.cu) for main's forward at LSTM [30, 32, 1024]
# bf16, 8 and 16 units a block, built here with nvcc at 9dd6fb8:
#   scripts/persistent-lab/build.sh DIR u8n  -DHID=1024 -DBATCH=32 -DUNITS=8  -DLAB_T=30
#   scripts/persistent-lab/build.sh DIR u16n -DHID=1024 -DBATCH=32 -DUNITS=16 -DLAB_T=30
#   (u8, u16: the same with -DLAB_PHASES, which records each step's phases)
# and run on the GPU machine, 50 launches each (`phases.txt`):
#   results/2026-11-26-h100-row-groups/phases.sh DIR OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh > /dev/null 2>&1
for v in u8n u16n u8 u16; do
  echo "== $v"
  timeout 60 "$D/lab-$v" 50 "$OUT/out_$v.bin" 2>&1 | grep -v "^compare\|mean |x|"
done
