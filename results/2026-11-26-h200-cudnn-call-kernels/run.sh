#!/usr/bin/env bash
# On the GPU machine, bench_grid of `scripts/devbin.sh DIR` at main: every kernel of one eager
# training call of LSTM [30, 32, 1024] in f16 on cuDNN's PersistStatic (the op's f16 default)
# and of PyTorch's fp16 module on the same shape, as the grid times them (`--loss sum
# --input-grad`), with Nsight Compute's device time per kernel: what does the op launch that
# PyTorch does not (the op is 6% slower there, results/2026-11-26-h200-grid/)?
#   results/2026-11-26-h200-cudnn-call-kernels/run.sh DIR OUT
set -uo pipefail
cd "$(dirname "$0")/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n 1)
stamp "ncu: the op, f16 default"
timeout 200 "$NCU" --clock-control none --metrics gpu__time_duration.sum --csv "$D/bench_grid" --no-loop \
  --loss sum --input-grad --api direct --phase train --reps 2 --warmup 1 --mode lstm --shape 1,32,30,1024 \
  --variants op-f16-default > "$OUT/op.csv" 2> "$OUT/op.log"
echo "rc=$?"
stamp "ncu: PyTorch fp16"
timeout 200 "$NCU" --clock-control none --metrics gpu__time_duration.sum --csv python3 scripts/torch_reference.py \
  --grid --only lstm,1,32,30,1024 --impls torch-fp16 --loss sum --input-grad --reps 2 --warmup 1 \
  > "$OUT/torch.csv" 2> "$OUT/torch.log"
echo "rc=$?"
for f in op torch; do
  echo "== $f: kernels (name, count, total µs)"
  python3 - "$OUT/$f.csv" <<'PY'
import csv, sys, collections
lines = open(sys.argv[1]).read().splitlines()
i = next(k for k, l in enumerate(lines) if l.startswith('"ID"'))
rows = list(csv.reader(lines[i:]))
h = rows[0]; ki = h.index("Kernel Name"); vi = h.index("Metric Value")
c = collections.OrderedDict()
for r in rows[1:]:
    if len(r) > vi:
        n = r[ki][:70]; v = float(r[vi].replace(",", "")) / 1000
        a = c.setdefault(n, [0, 0.0]); a[0] += 1; a[1] += v
for n, (k, v) in c.items():
    print(f"{k:4d} {v:9.1f}  {n}")
PY
done
(cd "$OUT" && tar -czf all.tgz --exclude all.tgz --exclude console.txt ./* && find . -type f ! -name all.tgz ! -name console.txt -delete)
stamp "done"
