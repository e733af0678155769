#!/usr/bin/env bash
# On the GPU machine (parts 1-4 ran on 2fcb72a's build, 5 on the rules they moved; logs/, and
# docs/RESULTS.md's entry): the op as a candle user trains it, and TF32's rule
# launched eagerly. Every grid so far timed the op's training through
# `candle_cudnn_rnn::backward` (bench_grid `--api direct`); a model built on candle calls
# `loss.backward()` and candle's autograd adds the weight's gradient into a fresh tensor
# (`--api plain`), which PyTorch's side does too. The TF32 rule (`choose.rs`'s `ours_lead_tf32`)
# does not tell eager launches from graphed ones and was set on graphed runs; the half rules'
# eager sweep (`results/2026-12-01-h200-half-rule-sweep/` `eager`) moved two of them. DIR built
# as `scripts/devbin.sh DIR` builds it:
#   1. (half) the half grid through `loss.backward()` (`COMPARE_API=plain`), the op's bf16 and
#      f16 defaults against PyTorch's fp16 module, graphed and eager (OUT/half/: grid.log,
#      table.md, grid.tgz). About 7 minutes.
#   2. (tf32) the TF32 grid through `loss.backward()` against PyTorch's TF32 module (OUT/tf32/).
#   3. (tf32-eager) eagerly, ours (`op-tf32-persistent`) beside the default at the TF32 wide
#      rules' shapes: one layer of 768-1024 at batch 64-256, stacks at batch 32-128, batches
#      past 128 up to hidden 512 (OUT/tf32-eager.log).
#   4. (half-left) what the half sweep left alone, graphed, f16, the default beside ours and the
#      cuDNN kernel: a GRU layer's forward at hidden 128 past batch 128 by seq (ours took
#      0.84-0.96x `PersistStaticSmallH`'s time at seq 30, which led at seq 200 on 2026-11-29), GRU
#      stacks' forwards at hidden 512 at batch 160-224 (ours 0.76-0.85x `Standard`'s at 192,
#      1.04x at 256) (OUT/half-left.log).
# With KEEP_KERNEL_CACHE=1 the kernels' PTX comes back in OUT/kernel-cache.txz (scripts/on-gpu.sh);
# saved as .kernel-cache/kernel-cache.txz, the next `scripts/devbin.sh` carries it, and the next
# machine loads it on 16 cores before anything runs.
#   5. (confirm) the rules moved by parts 3 and 4, beside ours and cuDNN, and gpu_check's new rows.
#   6. (api) `loss.backward()` against `candle_cudnn_rnn::backward` in one command.
#   results/2026-12-01-h200-plain-api-grid/run.sh DIR OUT [half|tf32|tf32-eager|half-left|confirm|api]...
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
shift 2
parts=${*:-half}
source scripts/on-gpu.sh
eager_specs=$(for c in lstm gru; do for sh in 1,64,30,1024 1,128,30,1024 1,256,30,1024 \
  1,128,30,768 1,256,30,768 3,32,30,1024 3,64,30,1024 3,128,30,1024 3,64,30,768 3,128,30,768 \
  1,256,30,128 1,256,30,512 3,256,30,512 1,192,200,512; do echo "$c:$sh"; done; done)
root=$OUT
for part in $parts; do
  case $part in
    half)
      stamp "half, plain API"
      OUT=$root/half && mkdir -p "$OUT"
      COMPARE_API=plain half_grid
      ;;
    tf32)
      stamp "tf32, plain API"
      OUT=$root/tf32 && mkdir -p "$OUT"
      COMPARE_API=plain compare_grid torch-tf32 op-tf32-default 450
      ;;
    tf32-eager)
      stamp "tf32 eager"
      OUT=$root
      beside_default tf32 "$eager_specs" "" | tee "$OUT/tf32-eager.log"
      ;;
    half-left)
      stamp "half-left"
      OUT=$root
      {
        small_h=op-f16-default,op-f16-persistent,op-f16-static-small-h
        for sh in 1,160,30,128 1,256,30,128 1,160,100,128 1,256,100,128 1,200,200,128 \
          1,256,200,128; do
          echo "gru $sh | $(bench_rows --graph gru $sh $small_h)"
        done
        for sh in 2,160,30,512 2,224,30,512 3,160,30,512 3,224,30,512 3,192,200,512; do
          echo "gru $sh | $(bench_rows --graph gru $sh ${small_h%-static-small-h}-standard)"
        done
      } | tee "$OUT/half-left.log"
      ;;
    confirm)
      # (the build with the rules these parts moved) the default beside ours where the rules
      # changed: TF32 eagerly at hidden 640-768 up to batch 128 (and 256, which stays on
      # `Standard`), f16 and bf16 GRU stacks' graphed forwards at hidden 512 past batch 128
      # (224 stays on `Standard`) beside cuDNN's `Standard` (OUT/confirm.log); then
      # `gpu_check --persistent` in TF32 and for f16 GRUs (OUT/gpu_check-tf32.log,
      # OUT/gpu_check-f16-gru.log).
      stamp "confirm"
      OUT=$root
      {
        beside_default tf32 "lstm:3,128,30,768 gru:3,128,30,768 lstm:1,128,30,768 gru:1,128,30,768 \
          lstm:2,96,30,640 gru:3,256,30,768" ""
        for sh in 2,160,30,512 2,192,30,512 3,160,30,512 3,192,30,512 3,192,200,512 3,224,30,512; do
          echo "gru $sh | $(bench_rows --graph gru $sh op-f16-default,op-f16-standard,op-bf16-default)"
        done
      } | tee "$OUT/confirm.log"
      stamp "gpu_check tf32"
      timeout 280 "$D/gpu_check" --persistent --seed 2711 --dtype tf32 > "$OUT/gpu_check-tf32.log" 2>&1
      echo "rc=$? ok $(grep -c '| ok |' "$OUT/gpu_check-tf32.log")"; grep -E '\| FAIL \||768|x 512' "$OUT/gpu_check-tf32.log" | head -20
      stamp "gpu_check f16 gru"
      timeout 150 "$D/gpu_check" --persistent --seed 2711 --dtype f16 --mode gru > "$OUT/gpu_check-f16-gru.log" 2>&1
      echo "rc=$? ok $(grep -c '| ok |' "$OUT/gpu_check-f16-gru.log")"; grep -E '\| FAIL \||192' "$OUT/gpu_check-f16-gru.log" | head -20
      ;;
    api)
      # candle's zero fill and add of a custom op's gradients in one command: graphed training
      # with the input's gradient through `candle_cudnn_rnn::backward` (direct) and
      # `loss.backward()` (plain), direct / plain / direct, at the plain grids' slowest rows
      # (OUT/api.log: "train forward; " per run, µs an example).
      stamp "api"
      OUT=$root
      graph=--graph
      for spec in op-bf16-default:lstm:1,32,30,1024 op-tf32-default:gru:2,20,35,1500 \
        op-bf16-default:lstm:3,128,30,1024 op-bf16-default:lstm:1,128,30,128; do
        split_spec "$spec"
        echo "$spec | direct $(API=direct bench_with X=1) plain $(API=plain bench_with X=1)" \
          "direct $(API=direct bench_with X=1)"
      done | tee "$OUT/api.log"
      ;;
  esac
done
