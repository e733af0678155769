#!/usr/bin/env bash
# The pushed forward making its input projection itself (-DXIN, the input as wide as h) against
# reading the GEMM's (`xg`), in the lab harness: per config µs a launch, and with phase clocks
# (fxP: the folded build) where a step's time goes. Training (saved activations) and inference
# (-DLAB_INFER). `fold-lab.sh OUT`.
set -uo pipefail
out=$1
here=$(cd "$(dirname "$0")" && pwd)
configs=()
for hb in 128:4 128:16 256:8; do
  h=${hb%:*} b=${hb#*:} u=$((h / 8))
  for mode in "" "-DLAB_INFER"; do
    m=t; [ -n "$mode" ] && m=i
    c="-DHID=$h -DBATCH=$b -DUNITS=$u -DNWARPS=8 $mode"
    configs+=("f$m-h$h-b$b $c" "fx$m-h$h-b$b $c -DXIN=$h" "f$m-h$h-b$b-again $c" "fx$m-h$h-b$b-again $c -DXIN=$h"
              "f${m}P-h$h-b$b $c -DLAB_PHASES" "fx${m}P-h$h-b$b $c -DLAB_PHASES -DXIN=$h")
  done
done
source "$here/../2026-11-29-h200-one-block/lab-run.sh"
