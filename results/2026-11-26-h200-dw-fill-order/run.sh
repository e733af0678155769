#!/usr/bin/env bash
# On the GPU machine, bench_grid (DIR/bench_grid: the weight gradient zeroed between cuDNN's
# BackwardData and BackwardWeights) against DIR/old-bench_grid (zeroed before the backward,
# main before the change) and PyTorch, graphed training calls as the grid times them, on the
# shapes where the op's cuDNN calls trailed PyTorch's (results/2026-11-26-h200-grid/); then the
# nodes of one replayed call of each binary (results/2026-11-26-h200-graph-kernels/'s tracer); then the
# op's GPU tests.
#   results/2026-11-26-h200-dw-fill-order/run.sh DIR OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
how="--loss sum --input-grad --reps 10 --warmup 10"
row() { grep -E '^\| (lstm|gru|Lstm|Gru) ' "$1" | cut -d'|' -f7,8 | tr '\n' ' '; }
for c in lstm:1,32,30,1024:op-f16-default:torch-fp16:direct gru:1,128,30,1024:op-tf32-default:torch-tf32:direct \
  gru:1,128,30,1024:op-bf16-default:torch-fp16:direct gru:3,128,200,1024:op-fp32-default:torch-fp32:direct \
  lstm:3,128,200,1024:op-tf32-default:torch-tf32:direct lstm:1,32,30,1024:op-f16-default:torch-fp16:plain \
  gru:1,128,30,1024:op-tf32-default:torch-tf32:plain; do
  IFS=: read -r cell shape ours theirs api <<< "$c"
  stamp "$cell $shape $ours $api: old / new / torch / torch / new / old (train µs an example)"
  line=""
  for who in old new torch torch new old; do
    f="$OUT/${cell}_${shape}_${ours}_${api}_$who.log"
    case $who in
      old) "$D/old-bench_grid" --no-loop --graph $how --api $api --mode $cell --shape $shape --variants $ours > "$f" 2>&1 ;;
      new) "$D/bench_grid" --no-loop --graph $how --api $api --mode $cell --shape $shape --variants $ours > "$f" 2>&1 ;;
      torch) python3 scripts/torch_reference.py --grid --graph $how --only $cell,$shape --impls $theirs > "$f" 2>&1 ;;
    esac
    line="$line $who $(row "$f" | grep -oE '\| *[0-9.]+' | head -1 | tr -d '| ')"
  done
  echo "  $line"
done
for who in old new; do
  bin=$D/bench_grid; [ $who = old ] && bin=$D/old-bench_grid
  for c in lstm:1,32,30,1024:op-f16-default gru:1,128,30,1024:op-tf32-default; do
    IFS=: read -r cell shape ours <<< "$c"
    name=trace_${who}_${cell}
    CUDA_INJECTION64_PATH=$PWD/$D/cupti/libtrace_kernels.so TRACE_OUT=$OUT/$name.csv \
      "$bin" --no-loop --graph $how --api direct --mode $cell --shape $shape --variants $ours > "$OUT/$name.log" 2>&1
    python3 results/2026-11-26-h200-graph-kernels/analyze.py "$OUT/$name.csv" 5 > "$OUT/$name.txt"
    echo "$name: $(grep '^graph' "$OUT/$name.txt")"
    grep -E "bp_largeB|memset 1679|memset 2519|GRU_elementWise_bp2" "$OUT/$name.txt" | cut -c1-100
  done
done
stamp "the op's GPU tests (new binary)"
RNN_TEST_REQUIRE_GPU=1 timeout 300 "$D/op-gpu-tests" --test-threads=1 > "$OUT/gpu-tests.log" 2>&1
echo "rc=$? $(grep -E '^test result' "$OUT/gpu-tests.log")"
(cd "$OUT" && tar -czf all.tgz --exclude all.tgz --exclude console.txt ./*.csv ./*.log ./*.txt && rm -f ./*.csv ./*.log ./trace_*.txt)
stamp "done"
