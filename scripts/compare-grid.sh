#!/usr/bin/env bash
# The op against PyTorch on the whole grid, in one command on one GPU, as a model trains it (the
# outputs' gradient given, the input's computed, the weight's into candle's store through
# candle_cudnn_rnn::backward) and inference forwards: both captured as CUDA graphs in passes of
# alternating order (op, PyTorch, PyTorch, op) with the same warm-up and repetitions, then both
# eager in the same order (the eager passes are host-bound: a jittery spell of the host then
# falls on both sides); then the tables of ratios against PyTorch's fastest in each precision
# class, with the kernel that served, and a summary of their geo-means (scripts/compare_table.py).
# Arguments after the fourth go to bench_grid (e.g. --variants ...; its default: the op's default
# algorithm in every precision, and cuDNN's standard in fp32 and bf16); COMPARE_IMPLS narrows
# PyTorch's side (default torch-fp32,torch-tf32,torch-fp16). COMPARE_API names how the op's
# training takes its gradients (bench_grid's --api: direct, the default, or plain, a candle user's
# `loss.backward()`, or sink). COMPARE_ARGS adds options that both sides take, such as
# `--bidirectional`. COMPARE_PASSES runs only some of
# the passes (space-separated, of op_a torch_a torch_b op_b op_eager torch_eager torch_eager_b
# op_eager_b; default all), so that a run too long for one command (every precision class on an
# H100 took over 10 minutes) can go in several into the same OUT_DIR; the tables follow once all
# eight passes are there. Run
# on a GPU machine:
#   scripts/compare-grid.sh BENCH_GRID OUT_DIR [REPS] [WARMUP] [BENCH_GRID ARGS...]
set -euo pipefail
grid=$1 out=$2 reps=${3:-10} warmup=${4:-10}
shift $(( $# < 4 ? $# : 4 ))
mkdir -p "$out"
how="--loss sum --input-grad --reps $reps --warmup $warmup ${COMPARE_ARGS:-}"
op() { "$grid" --no-loop $how --api "${COMPARE_API:-direct}" "${@:2}" --json "$out/op_$1.json" > "$out/op_$1.log"; }
torch() { python3 scripts/torch_reference.py --grid $how --impls "${COMPARE_IMPLS:-torch-fp32,torch-tf32,torch-fp16}" "${@:2}" --json "$out/torch_$1.json" > "$out/torch_$1.log" 2>&1; }
all_passes="op_a torch_a torch_b op_b op_eager torch_eager torch_eager_b op_eager_b"
passes=${COMPARE_PASSES:-$all_passes}
for pass in $passes; do
  case $pass in
    op_a | op_b) op "${pass#op_}" --graph "$@" ;;
    torch_a | torch_b) torch "${pass#torch_}" --graph ;;
    op_eager | op_eager_b) op "${pass#op_}" "$@" ;;
    torch_eager | torch_eager_b) torch "${pass#torch_}" ;;
    *) echo "compare-grid.sh: no pass $pass (COMPARE_PASSES takes $all_passes)" >&2; exit 2 ;;
  esac
done
for pass in $all_passes; do
  [ -f "$out/$pass.json" ] || { echo "compare-grid.sh: $pass not run yet in $out: no tables" >&2; exit 0; }
done
python3 scripts/compare_table.py "$out" | tee "$out/table.md"
