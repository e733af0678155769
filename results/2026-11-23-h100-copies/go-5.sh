#!/usr/bin/env bash
# Where the persistent kernels of main fbe5a38 stall: Nsight Compute's full set on one forward
# and one backward launch of PTB large's LSTM [35, 20, 2 x 1500] bf16 (warp states, source
# counters: barrier spin, cp.async waits, L2 loads), as a report and as text.
set -uo pipefail
cd "$(dirname "$0")/.."
D=.devbin-next3
FINAL=$OUT; OUT=/tmp/res; rm -rf $OUT; mkdir -p $OUT
trap 'tar czf $FINAL/run.tar.gz -C /tmp res' EXIT; trap 'exit 143' TERM
source $D/gpu-env.sh > $OUT/env.txt 2>&1
xz -dkf -T8 $D/bench_grid.xz; chmod +x $D/bench_grid
ncu_bin=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n 1)
S="--no-loop --mode lstm --shape 2,20,35,1500 --reps 1 --warmup 1 --variants op-bf16-persistent"
for k in fwd bwd; do
  timeout 240 "$ncu_bin" --set full --import-source yes -k "regex:lstm_persistent_$k" -s 2 -c 1 \
    -o $OUT/lstm_$k $D/bench_grid $S > $OUT/ncu_$k.log 2>&1; echo "$k rc=$?"
  "$ncu_bin" --import $OUT/lstm_$k.ncu-rep --page details > $OUT/lstm_$k.details.txt 2>&1
  grep -E "Duration|Stall|Warp Cycles|L2 Hit|Achieved Occupancy|Registers" $OUT/lstm_$k.details.txt | head -20
done
ls -la $OUT
