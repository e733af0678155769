#!/usr/bin/env bash
# On the GPU machine, binaries of `scripts/devbin.sh DIR`: where a forward's time goes at the
# shapes whose forward is short of issue 33's 2x (GRU [30, 32, 128] and [30, 32, 1024], f16),
# LSTM beside them.
#   profile: each shape's graphed training | forward (bench_grid, µs an example), then Nsight
#            Compute's gpu__time_duration of every kernel of 1 warm-up and 2 timed eager
#            forwards, ours (f16 default) and PyTorch's fp16 module (cuDNN).
#   speed:   graphed training | forward, µs an example, f16 through the direct API, BINS's
#            bench_grids in turn, twice (default: OLD's, a folder of an older build's, then
#            DIR's).
#   gemm:    gemm.py, cuBLAS's heuristic and PyTorch's TunableOp (cuBLASLt's algorithms timed).
#   results/2026-11-29-h200-gru-forward/run.sh DIR OUT profile|speed|gemm
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2 PART=$3
source scripts/on-gpu.sh
ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n 1)
py=/opt/torch/.venv/bin/python3
# The kernels' durations of a CSV of ncu: "name duration_us" lines.
kernels() { $py - "$1" <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
head, body = rows[0], rows[1:]
k, v, u = head.index("Kernel Name"), head.index("Metric Value"), head.index("Metric Unit")
for r in body:
    if r[k] == "Kernel Name": continue
    scale = {"ns": 1e-3, "nsecond": 1e-3, "us": 1.0, "usecond": 1.0, "ms": 1e3, "msecond": 1e3}.get(r[u], float("nan"))
    print(f"{float(r[v].replace(',', '')) * scale:9.2f}  {r[k][:110]}")
PY
}
case $PART in
profile)
  for spec in gru,1,32,30,128 lstm,1,32,30,128 gru,1,32,30,1024 lstm,1,32,30,1024; do
    IFS=, read -r mode l b t h <<< "$spec"
    name=${mode}_${l}x${b}x${t}x${h}
    stamp "$name"
    echo "graphed training | forward: $(bench_us "" $mode $l,$b,$t,$h op-f16-default)"
    timeout 150 "$ncu" --clock-control none --metrics gpu__time_duration.sum --csv \
      "$bin/bench_grid" --no-loop --phase forward --warmup 1 --reps 2 --api direct \
      --mode $mode --shape $l,$b,$t,$h --variants op-f16-default > "$OUT/$name.csv" 2> "$OUT/$name.log"
    echo "ours:"; kernels "$OUT/$name.csv" | tail -n 12
    timeout 150 "$ncu" --clock-control none --metrics gpu__time_duration.sum --csv \
      $py -c "
import torch
m = getattr(torch.nn, '${mode^^}')($h, $h, $l).cuda().half()
x = torch.randn($t, $b, $h, device='cuda', dtype=torch.half)
with torch.no_grad():
    for _ in range(3): m(x)
torch.cuda.synchronize()" > "$OUT/${name}_torch.csv" 2>> "$OUT/$name.log"
    echo "torch fp16:"; kernels "$OUT/${name}_torch.csv" | tail -n 6
  done
  cd "$OUT" && tar czf ncu.tgz *.csv *.log && rm -f *.csv *.log
  ;;
speed)
  # BINS: the bench_grid binaries to alternate (default: OLD's, then DIR's), each unpacked here.
  bins=${BINS:-$OLD/bench_grid $D/bench_grid}
  for b in $bins; do [ -x "$b" ] || xz -dkf "$b.xz"; done
  stamp "$(echo $bins | tr ' ' '|') (twice)"
  for s in ${SHAPES:-1,32,30,128 1,32,200,128 1,8,30,128 1,16,30,128 1,32,30,512 1,32,30,1024}; do
    for c in gru lstm; do
      row="$c $s"
      for round in 1 2; do
        for b in $bins; do row="$row | $(BENCH_GRID=$b bench_us "" $c $s op-f16-default)"; done
      done
      echo "$row"
    done
  done
  ;;
gemm)
  $py "$here/gemm.py"
  PYTORCH_TUNABLEOP_ENABLED=1 PYTORCH_TUNABLEOP_TUNING=1 PYTORCH_TUNABLEOP_VERBOSE=0 \
    PYTORCH_TUNABLEOP_FILENAME="$OUT/tunableop.csv" TAG=tuned $py "$here/gemm.py"
  ;;
esac
stamp done
