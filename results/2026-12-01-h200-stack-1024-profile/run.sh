#!/usr/bin/env bash
# On the GPU machine, the grid's slowest shapes against PyTorch (3 x 1024 at batch 128: ours runs
# cuDNN's `Standard` in training and its own wgmma forward, 0.98x PyTorch's fp16 module;
# results/2026-11-30-h200-wgmma-backward/logs/grid-table.md), DIR built as scripts/devbin.sh
# builds it:
#   1. (profile) every kernel's device time of ten training calls with the input's gradient, ours
#      (bf16, the default) at LSTM and GRU [30, 128, 3 x 1024] and ours with the crate's own
#      kernels asked for (CANDLE_RNN_PERSISTENT_WGMMA=1, CANDLE_RNN_PERSISTENT_WGMMA_BWD=1),
#      under nsys (ncu's replay fails on the cooperative launches: LaunchFailed), then PyTorch's
#      AMP fp16 step under torch.profiler (its --profile takes no fp16 module) (OUT/profile.tgz);
#   2. (own, not run yet) training with the input's gradient, µs an example: the default / the
#      crate's wgmma kernels / the default / PyTorch's fp16 module, at [30 and 200, 128, 3 x 1024],
#      LSTM and GRU, graphed and eager (OUT/own.log, OUT/torch-*.log).
#   results/2026-12-01-h200-stack-1024-profile/run.sh DIR OUT [profile|own]...
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
shift 2
parts=${*:-profile}
source scripts/on-gpu.sh
own="CANDLE_RNN_PERSISTENT_WGMMA=1 CANDLE_RNN_PERSISTENT_WGMMA_BWD=1"
for part in $parts; do
  case $part in
    profile)
      stamp "profile"
      # (The lent machine has no Nsight Systems of its own: the nsys inside Nsight Compute's folder,
      # which this finds there, wrote .qdstrm files it could not import; see README.md.)
      nsys_bin=$(command -v nsys || ls /opt/nvidia/nsight-systems*/*/bin/nsys /opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys 2>/dev/null | head -n 1)
      for c in lstm gru; do
        for how in default own; do
          stamp "$c $how"
          env_how=X=1
          [ $how = own ] && env_how=$own
          # Five warm-up and ten timed training calls; each kernel's total and count.
          env $env_how timeout 150 "$nsys_bin" profile -t cuda -o "$OUT/nsys-$c-$how" --force-overwrite true \
            "$D/bench_grid" --no-loop --loss sum --input-grad --mode $c --shape 3,128,30,1024 \
            --variants op-bf16-default --warmup 5 --reps 10 --phase train > "$OUT/nsys-$c-$how.log" 2>&1
          echo "rc=$?"
          "$nsys_bin" stats --report cuda_gpu_kern_sum --format csv -o "$OUT/kern-$c-$how" "$OUT/nsys-$c-$how.nsys-rep" \
            >> "$OUT/nsys-$c-$how.log" 2>&1
          rm -f "$OUT/nsys-$c-$how.nsys-rep" "$OUT/nsys-$c-$how.sqlite"
        done
        timeout 120 python3 scripts/torch_reference.py --profile $c,3,128,30,1024 --impl torch-amp-fp16 \
          > "$OUT/torch-$c.md" 2>&1
        echo "torch rc=$?"
      done
      (cd "$OUT" && tar czf profile.tgz nsys-* kern-* torch-* && rm -f nsys-* kern-* torch-*)
      ;;
    own)
      stamp "own"
      v=op-bf16-default
      for graph in --graph ""; do
        for c in lstm gru; do
          for sh in 3,128,30,1024 3,128,200,1024; do
            echo "${graph:-eager} $c $sh | default $(bench_with X=1) | own $(bench_with $own) | default $(bench_with X=1)"
          done
        done
      done 2>&1 | tee "$OUT/own.log"
      only=""
      for spec in lstm,3,128,30,1024 lstm,3,128,200,1024 gru,3,128,30,1024 gru,3,128,200,1024; do only="$only --only $spec"; done
      for graph in --graph ""; do
        timeout 300 python3 scripts/torch_reference.py --grid --impls torch-fp16 $graph --loss sum --input-grad \
          --reps 10 --warmup 5 $only > "$OUT/torch${graph:+-graph}.log" 2>>"$OUT/stderr.txt"
        grep -iE "^\| (lstm|gru) " "$OUT/torch${graph:+-graph}.log" | sed "s/^/${graph:-eager} /"
      done
      ;;
  esac
done
stamp done
