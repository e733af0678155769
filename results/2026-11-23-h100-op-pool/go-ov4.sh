#!/usr/bin/env bash
# issue 14: per-kernel device time (ncu) of the op and PyTorch on the shapes the op still loses
set -uo pipefail
cd "$(dirname "$0")/.."
FINAL=$OUT; OUT=/tmp/res; rm -rf $OUT; mkdir -p $OUT
trap 'tar czf $FINAL/run.tar.gz -C /tmp res' EXIT; trap 'exit 143' TERM
source .devbin/gpu-env.sh > $OUT/env.txt 2>&1
xz -dkf -T8 .devbin/bench_grid.xz; chmod +x .devbin/bench_grid
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu | head -n 1)
N="$NCU --clock-control none --cache-control none --metrics gpu__time_duration.sum --csv --page raw"
prof() { # name mode shape phase precision(op variant) torch-impl
  name=$1 m=$2 sh=$3 ph=$4 v=$5 ti=$6
  # op: 1 warm-up + 1 timed step of the phase; PyTorch: 2 steps (training only)
  timeout 170 $N .devbin/bench_grid --mode $m --shape $sh --variants $v --no-loop --warmup 1 --reps 1 --phase $ph > $OUT/ncu_op_$name.csv 2> $OUT/ncu_op_$name.log
  echo "op $name rc=$? $(date +%T)"
  if [ "$ph" = train ]; then
    timeout 170 $N python3 scripts/torch_reference.py --steps-only $m,$sh --impl $ti --reps 2 > $OUT/ncu_torch_$name.csv 2> $OUT/ncu_torch_$name.log
    echo "torch $name rc=$? $(date +%T)"
    python3 scripts/ncu_compare.py $OUT/ncu_op_$name.csv 2 $OUT/ncu_torch_$name.csv 2 "$name" >> $OUT/profile.md
  fi
}
date +%T
prof lstm_1x128x30x1024_fp32 lstm 1,128,30,1024 train op-fp32 torch-fp32
prof gru_1x128x30x1024_fp32 gru 1,128,30,1024 train op-fp32 torch-fp32
prof lstm_3x128x200x1024_fp32 lstm 3,128,200,1024 train op-fp32 torch-fp32
prof gru_3x128x200x1024_fp32 gru 3,128,200,1024 train op-fp32 torch-fp32
grep -h "^per step" $OUT/profile.md
