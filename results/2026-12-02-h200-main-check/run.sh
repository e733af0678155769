#!/usr/bin/env bash
# main at 8c897ae (the wide backward's 3-buffer rule, e3e42be) on the GPU, from the repository
# root, with D (its scripts/devbin.sh binaries, ptb-lm among them) and OUT set; one command a part:
# - `suite K`: part K of 2 of the op's GPU tests (OUT/tests-K.log);
# - `check`: gpu_check --persistent in f16 and bf16 (OUT/gpu_check-*.log);
# - `grid`: the half grid through the sink and through `loss.backward()` (OUT/grid-*/);
# - `ptb`: ptb-lm bench, large and medium in bf16, ours / PyTorch (torch_reference.py --ptb) /
#   ours (OUT/ptb_*.json, OUT/torch-ptb.json);
# - `bidir`: the grid with every layer bidirectional (COMPARE_ARGS=--bidirectional; bench_grid of a
#   build of c342942, which has the flag), half precision then TF32, through the sink
#   (OUT/grid-bidir-half/, OUT/grid-bidir-tf32/).
#   D=... OUT=... results/2026-12-02-h200-main-check/run.sh suite 1
set -uo pipefail
cd "$(dirname "$0")/../.."
source scripts/on-gpu.sh
ptb_ours() {  # $1: a label
  local c
  for c in large medium; do
    timeout 90 "$D/ptb-lm" bench --config $c --precision bf16 --batches 100 --warmup 20 --data data/ptb \
      --json "$OUT/ptb_${c}_$1.json" 2>&1 | grep -v '^{' | tail -n 1 | sed "s/^/$c $1: /"
  done
}
case $1 in
  suite) stamp "suite $2"; gpu_tests_part "$2" 2 ;;
  check) stamp check; gpu_check_half ;;
  grid) half_grid_apis ;;
  ptb)
    stamp ptb
    ptb_ours first
    timeout 240 python3 scripts/torch_reference.py --ptb large --ptb medium \
      --data data/ptb --batches 100 --json "$OUT/torch-ptb.json" > "$OUT/torch-ptb.log" 2>&1
    echo "torch rc=$?"; grep -E "^ptb" "$OUT/torch-ptb.log" | cut -c1-300
    ptb_ours again
    ;;
  bidir)
    root=$OUT
    export COMPARE_ARGS=--bidirectional
    stamp "bidir half"; OUT=$root/grid-bidir-half && mkdir -p "$OUT" && half_grid 300
    stamp "bidir tf32"; OUT=$root/grid-bidir-tf32 && mkdir -p "$OUT" && compare_grid torch-tf32 op-tf32-default 200
    ;;
esac
