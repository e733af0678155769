#!/usr/bin/env bash
# main a89f216. Why ncu's launches of the backward failed (clusters?), a memcheck of the
# persistent kernels, stall reasons per instruction, and the step's kernels with ncu
# (backward without clusters, which ncu can profile if the cluster was the cause).
set -uo pipefail
cd "$(dirname "$0")/.."
D=.devbin-s9
FINAL=$OUT; OUT=/tmp/res; rm -rf $OUT; mkdir -p $OUT
trap 'tar czf $FINAL/run.tar.gz -C /tmp res' EXIT; trap 'exit 143' TERM
source $D/gpu-env.sh > $OUT/env.txt 2>&1
for f in ptb-lm bench_grid gpu_check; do [ -x $D/$f ] || { xz -dkf -T8 $D/$f.xz; chmod +x $D/$f; }; done
ncu_bin=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n 1)
cs_bin=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer /opt/nvidia/*/compute-sanitizer 2>/dev/null | head -n 1)
S="--no-loop --mode lstm --shape 2,20,35,1500 --reps 1 --warmup 1 --variants op-bf16-persistent"
date +%T
$D/bench_grid --no-loop --mode lstm --shape 2,20,35,1500 --reps 20 --warmup 5 --variants op-bf16-persistent 2>&1 | tail -n 1
CANDLE_RNN_PERSISTENT_CLUSTER=1 $D/bench_grid --no-loop --mode lstm --shape 2,20,35,1500 --reps 20 --warmup 5 --variants op-bf16-persistent 2>&1 | tail -n 1
for c in 2 1; do for k in bwd fwd; do
  [ $c = 2 ] && [ $k = fwd ] && continue
  CANDLE_RNN_PERSISTENT_CLUSTER=1,$c timeout 150 "$ncu_bin" --set full -k "regex:lstm_persistent_$k" -s 2 -c 1 \
    -o $OUT/lstm_${k}_c$c $D/bench_grid $S > $OUT/ncu_${k}_c$c.log 2>&1; echo "$k cluster $c rc=$?"
  grep -E "ERROR|Profiling" $OUT/ncu_${k}_c$c.log | head -3
  [ -f $OUT/lstm_${k}_c$c.ncu-rep ] || continue
  "$ncu_bin" --import $OUT/lstm_${k}_c$c.ncu-rep --page details --print-details all > $OUT/lstm_${k}_c$c.details.txt 2>&1
  "$ncu_bin" --import $OUT/lstm_${k}_c$c.ncu-rep --page raw --csv > $OUT/lstm_${k}_c$c.raw.csv 2>&1
  "$ncu_bin" --import $OUT/lstm_${k}_c$c.ncu-rep --page source --csv --print-source sass > $OUT/lstm_${k}_c$c.sass.csv 2>&1
  grep -E " Duration|Warp Cycles Per Issued|Elapsed Cycles|SM Frequency" $OUT/lstm_${k}_c$c.details.txt | head -4
done; done
date +%T
if [ -n "$cs_bin" ]; then
  for c in 1 2; do
    CANDLE_RNN_PERSISTENT_CLUSTER=1,$c timeout 150 "$cs_bin" --tool memcheck $D/bench_grid $S > $OUT/memcheck_c$c.log 2>&1
    echo "memcheck cluster $c rc=$?"; grep -E "ERROR SUMMARY|Invalid|Program hit" $OUT/memcheck_c$c.log | head -5
  done
else echo "no compute-sanitizer"; fi
date +%T
mkdir -p $OUT/profile
CANDLE_RNN_PERSISTENT_CLUSTER=1 timeout 200 bash scripts/profile-ptb-step.sh $D/ptb-lm $OUT/profile large bf16 | head -40
date +%T
