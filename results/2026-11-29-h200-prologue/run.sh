#!/usr/bin/env bash
# On the GPU machine, binaries of `scripts/devbin.sh DIR`: the forward's prologue and bf16
# rounding against main's (README.md), and what compute-sanitizer's initcheck sees.
#   ab:        graphed training | forward (µs an example, bench_us) of AB_SPECS
#              (CELL:L,B,T,H[:VARIANT], VARIANT op-f16-default unless given) in two rounds of each
#              of AB_RUNS (NAME:SUBDIR:DEFINES, default old:old: new::): the bench_grid of DIR/SUBDIR
#              (DIR's where empty: DIR/old is main before this folder's changes) with the kernels'
#              extra -D options DEFINES, `,`-joined (CANDLE_RNN_LAB_DEFINES, a lab build's; see
#              README.md)).
#   initcheck: whether compute-sanitizer's initcheck sees what cuBLAS's Hopper GEMMs write: a
#              PyTorch half GEMM whose output an elementwise kernel reads, under initcheck (the
#              finding of ../2026-11-29-h200-forward-2x/ section 5: our recurrence's reads of the
#              input projection that a cuBLAS GEMM wrote); then our GRU [5, 8, 512] bf16 forward
#              with the first reports' addresses.
#   plain:     issue 33's GRU shapes as a candle user trains them: ours (bf16 on the default, the
#              plain API: loss.backward()) graphed and eager, beside PyTorch's fp16 module graphed
#              and eager (torch_reference.py), ours / PyTorch / ours; rows into OUT/plain.log.
#   results/2026-11-29-h200-prologue/run.sh DIR OUT ab|initcheck|plain
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2 PART=$3
source scripts/on-gpu.sh
py=/opt/torch/.venv/bin/python3
case $PART in
ab)
  for spec in ${AB_SPECS:-gru:1,32,30,128 gru:1,32,30,128:op-bf16-default lstm:1,32,30,128 gru:1,32,200,128 \
    gru:1,8,30,128 gru:1,32,30,512 lstm:1,32,30,512 gru:1,32,30,1024 lstm:1,32,30,1024 gru:2,20,35,1500 \
    lstm:2,20,35,1500 gru:1,128,30,512:op-tf32-default}; do
    IFS=: read -r cell shape variant <<< "$spec"
    variant=${variant:-op-f16-default}
    row="$cell $shape $variant"
    for round in 1 2; do
      for run in ${AB_RUNS:-old:old: new::}; do
        IFS=: read -r name sub defines <<< "$run"
        b=$D/${sub:+$sub/}bench_grid
        [ -x "$b" ] || xz -dkf "$b.xz"
        row="$row | $name $(CANDLE_RNN_LAB_DEFINES="${defines//,/ }" BENCH_GRID=$b bench_us "" $cell $shape $variant)"
      done
    done
    echo "$row"
  done
  ;;
plain)
  shapes="1,32,30,128 1,32,30,512 1,32,30,1024 2,20,35,1500"
  how="--loss sum --input-grad --reps 10 --warmup 5"
  ours() {
    for g in --graph ""; do
      for s in $shapes; do
        timeout 60 "$D/bench_grid" --no-loop $g $how --api plain --mode gru --shape $s --variants op-bf16-default \
          2>>"$OUT/stderr.txt" | grep -E '^\| Gru ' | sed "s/^/ours ${g:-eager} /"
      done
    done
  }
  torch() {
    for g in --graph ""; do
      PYTHONUNBUFFERED=1 timeout 120 $py scripts/torch_reference.py --grid $g $how --impls torch-fp16 \
        $(for s in $shapes; do echo --only gru,$s; done) 2>&1 | grep -E '^grid ' | sed "s/^/torch ${g:-eager} /"
    done
  }
  { ours; torch; ours; } | tee "$OUT/plain.log"
  ;;
initcheck)
  cat > "$OUT/gemm_read.py" <<'PY'
import torch
a = torch.randn(960, 512, device="cuda", dtype=torch.float16)
b = torch.randn(512, 1536, device="cuda", dtype=torch.float16)
c = a @ b            # cuBLAS (on Hopper, an nvjet kernel)
d = c * 2.0          # an elementwise kernel reads every element of c
torch.cuda.synchronize()
print("sum", float(d.float().sum()))
PY
  timeout 200 "$CS" --tool initcheck --print-limit 3 $py "$OUT/gemm_read.py" > "$OUT/initcheck-torch.log" 2>&1
  echo "torch gemm then read: rc=$? $(grep -E 'ERROR SUMMARY' "$OUT/initcheck-torch.log" | head -1)"
  grep -E "Uninitialized|^=========     at " "$OUT/initcheck-torch.log" | sort | uniq -c | head
  timeout 120 "$CS" --tool initcheck --print-limit 3 "$D/bench_grid" --no-loop --loss sum --input-grad --reps 1 \
    --warmup 0 --api direct --phase forward --mode gru --shape 1,8,5,512 --variants op-bf16-persistent \
    > "$OUT/initcheck-ours.log" 2>&1
  echo "ours gru [5, 8, 512] bf16 forward: rc=$? $(grep -E 'ERROR SUMMARY' "$OUT/initcheck-ours.log" | head -1)"
  grep -E "Uninitialized|^=========     at |Address" "$OUT/initcheck-ours.log" | sort | uniq -c | head
  ;;
esac
stamp done
