#!/usr/bin/env bash
# On the GPU machine, binaries of `scripts/devbin.sh DIR`: Nsight Compute's full set over the
# kernels of one eager inference forward, the crate's persistent kernel (bf16) beside cuDNN's
# `PersistStatic` (f16), at LSTM [30, 32, 1024] and GRU [30, 32, 512]. Where does cuDNN's
# recurrence step save time over ours?
#   results/2026-11-26-h100-persistent-ncu/run.sh DIR OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n 1)
for c in lstm:1,32,30,1024 gru:1,32,30,512; do
  IFS=: read -r cell shape <<< "$c"
  for v in op-bf16-persistent op-f16-static; do
    f="$OUT/ncu_${cell}_${shape//,/x}_$v"
    stamp "ncu: $cell [$shape] $v"
    timeout 200 "$NCU" --kernel-name regex:. --launch-count 12 --set full --clock-control none --csv --page details \
      "$D/bench_grid" --no-loop --phase forward --reps 1 --warmup 0 --mode $cell --shape $shape \
      --variants $v > "$f.csv" 2> "$f.log"
    echo "rc=$?"
    # Each kernel's name and duration.
    python3 - "$f.csv" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
head = next((i for i, r in enumerate(rows) if r and r[0] == "ID"), None)
if head is None:
    print("  no profile"); sys.exit()
cols = rows[head]
ki, ni, vi, ui = cols.index("Kernel Name"), cols.index("Metric Name"), cols.index("Metric Value"), cols.index("Metric Unit")
seen = {}
for r in rows[head + 1:]:
    if len(r) == len(cols) and r[ni] == "Duration":
        seen.setdefault((r[0], r[ki][:70]), f"{r[vi]} {r[ui]}")
for (i, k), d in seen.items():
    print(f"  {i:>3} {d:>12}  {k}")
PY
  done
done
(cd "$OUT" && tar -czf ncu.tgz --exclude '*.tgz' ./* && find . -type f ! -name '*.tgz' -delete)
stamp done
