#!/usr/bin/env bash
# On the GPU machine, binaries of `scripts/devbin.sh DIR`: TF32 stacks past batch 32 on the
# crate's kernels (layer by layer, in batch groups) against cuDNN's TF32 `Standard` and PyTorch's
# TF32 module; the f16 `PersistStatic` rule's calls eagerly; the rule's GPU test.
#   tests:  the op's GPU tests named with TESTS (default: the_default_serves, the test of the
#           default's rules).
#   tf32:   graphed then eager (TF32_LAUNCHES: "--graph", "eager" or both) training | forward (µs
#           an example) of TF32 stacks (TF32_SHAPES) at batches 20-128,
#           ours (op-tf32-persistent) and cuDNN (op-tf32-standard) in one bench_grid call, in both
#           orders; rows into OUT/tf32.log.
#   torch:  PyTorch's TF32 module on the grid's TF32 stacks at batch 128, graphed and eager, as
#           torch_reference.py --grid times them (OUT/torch.log).
#   eager:  an f16 LSTM's training | forward eagerly, ours (op-f16-persistent) against cuDNN's
#           PersistStatic (op-f16-static), in both orders (choose.rs's ours_lead_persist_static).
#   pair:   the grid's TF32 stacks at batch 128 on the default (op-tf32-default), PyTorch's TF32
#           module between two passes of ours, graphed then eager (OUT/pair.log).
#   ab:     folded forwards (GRU and LSTM at hidden 128) graphed, DIR/old/bench_grid against DIR's,
#           alternated twice (OUT/ab.log): DIR's built with half-projection.diff (kernel.rs's half
#           projection no longer asked of a forward that reads none), DIR/old's without.
#   check:  the op's GPU tests, then gpu_check --persistent.
#   wide:   bf16 GRU and LSTM [30, 128, 1024] graphed on ours (op-bf16-persistent) with the rule's
#           knobs and some of tuning.rs's others, beside cuDNN's bf16 `Standard` (OUT/wide.log).
#   results/2026-11-29-h200-tf32-stacks/run.sh DIR OUT tests|tf32|torch|eager|pair|ab|check|wide
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2 PART=$3
source scripts/on-gpu.sh
py=/opt/torch/.venv/bin/python3
how="--loss sum --input-grad --reps 10 --warmup 5"
# One bench_grid call of VARIANTS (comma-joined) at CELL SHAPE, graphed where $1 is --graph:
# "variant (kernel) train forward |" per variant.
rows() {
  timeout 150 "$D/bench_grid" --no-loop $1 $how --api direct --mode "$2" --shape "$3" --variants "$4" \
    2>>"$OUT/stderr.txt" | grep -E '^\| (Lstm|Gru) ' \
    | awk -F'|' '{n=$7; t=$8; f=$9; gsub(/^ +| +$/,"",n); gsub(/ /,"",t); gsub(/ /,"",f); printf "%s %s %s | ", n, t, f}'
}
case $PART in
tests)
  gpu_tests ${TESTS:-the_default_serves}
  ;;
tf32)
  for g in ${TF32_LAUNCHES:---graph eager}; do
    [ $g = eager ] && g=""
    for c in gru lstm; do
      for s in ${TF32_SHAPES:-3,128,30,512 3,128,200,512 2,128,30,512 3,128,30,256 3,64,30,512 2,32,30,512 3,32,30,512 2,20,35,650}; do
        echo "${g:-eager} $c $s | ours, cuDNN: $(rows "$g" $c $s op-tf32-persistent,op-tf32-standard)cuDNN, ours: $(rows "$g" $c $s op-tf32-standard,op-tf32-persistent)"
      done
    done
  done | tee -a "$OUT/tf32.log"
  ;;
torch)
  for g in --graph ""; do
    PYTHONUNBUFFERED=1 timeout 300 $py scripts/torch_reference.py --grid $g $how --impls torch-tf32 \
      --only gru,3,128,30,512 --only lstm,3,128,30,512 --only gru,3,128,200,512 --only lstm,3,128,200,512 \
      2>&1 | grep -E '^grid ' | sed "s/^/torch ${g:-eager} /"
  done | tee "$OUT/torch.log"
  ;;
eager)
  for s in 1,32,30,256 1,32,30,512 1,16,30,512 1,8,30,512 1,32,30,1024; do
    echo "eager lstm $s | ours, static: $(rows "" lstm $s op-f16-persistent,op-f16-static)static, ours: $(rows "" lstm $s op-f16-static,op-f16-persistent)"
  done | tee "$OUT/eager.log"
  ;;
pair)
  # The grid's TF32 stacks on the default (after choose.rs's TF32 stack rule) against PyTorch's TF32
  # module: ours, PyTorch, ours; graphed, then eager.
  for g in --graph eager; do
    [ $g = eager ] && g=""
    for c in gru lstm; do
      for s in 3,128,30,512 3,128,200,512; do
        echo "ours ${g:-eager} $c $s | $(rows "$g" $c $s op-tf32-default)"
      done
    done
    PYTHONUNBUFFERED=1 timeout 300 $py scripts/torch_reference.py --grid $g $how --impls torch-tf32 \
      --only gru,3,128,30,512 --only gru,3,128,200,512 --only lstm,3,128,30,512 --only lstm,3,128,200,512 \
      2>&1 | grep -E '^grid ' | sed "s/^/torch ${g:-eager} /"
    for c in gru lstm; do
      for s in 3,128,30,512 3,128,200,512; do
        echo "ours ${g:-eager} $c $s | $(rows "$g" $c $s op-tf32-default)"
      done
    done
  done | tee "$OUT/pair.log"
  ;;
ab)
  # Folded forwards (the one-cluster kernels that make their input projection themselves), graphed
  # training | forward, the old build's bench_grid (DIR/old: its inference modules compiled with
  # XG_HALF=1) and this one's, alternated twice.
  for spec in gru:1,32,30,128:op-bf16-default gru:1,32,30,128:op-f16-default gru:1,8,30,128:op-bf16-default \
    gru:1,32,200,128:op-bf16-default lstm:1,32,30,128:op-bf16-default lstm:1,8,30,128:op-f16-default; do
    IFS=: read -r c s v <<< "$spec"
    row="$c $s $v"
    for round in 1 2; do
      for b in old new; do
        bg=$D/bench_grid; [ $b = old ] && bg=$D/old/bench_grid
        [ -x "$bg" ] || xz -dkf "$bg.xz"
        row="$row | $b $(BENCH_GRID=$bg bench_us "" $c $s $v)"
      done
    done
    echo "$row"
  done | tee "$OUT/ab.log"
  ;;
check)
  stamp "GPU tests"; gpu_tests
  stamp "gpu_check --persistent"; gpu_check_persistent
  ;;
wide)
  for c in gru lstm; do
    echo "graphed $c 1,128,30,1024 | cuDNN: $(rows --graph $c 1,128,30,1024 op-bf16-standard)"
    for knob in "" CANDLE_RNN_PERSISTENT_GROUPS=2 CANDLE_RNN_PERSISTENT_GROUPS=4 CANDLE_RNN_PERSISTENT_MULTICAST=1 \
      CANDLE_RNN_PERSISTENT_MULTICAST=4 CANDLE_RNN_PERSISTENT_UNITS=16; do
      echo "graphed $c 1,128,30,1024 ${knob:-rule} | $([ -n "$knob" ] && export "$knob"; rows --graph $c 1,128,30,1024 op-bf16-persistent)"
    done
  done | tee "$OUT/wide.log"
  ;;
esac
stamp done
