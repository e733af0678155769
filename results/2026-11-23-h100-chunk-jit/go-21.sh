#!/usr/bin/env bash
# The LSTM op [35, 20, 2 x 1500] bf16 alone: timed with and without the gradient sink, then its
# kernels under Nsight Compute (clusters off: ncu cannot launch the cluster backward).
set -uo pipefail
cd "$(dirname "$0")/.."
D=.devbin-s20
FINAL=$OUT; OUT=/tmp/res; rm -rf $OUT; mkdir -p $OUT
trap 'tar czf $FINAL/run.tar.gz -C /tmp res' EXIT; trap 'exit 143' TERM
source $D/gpu-env.sh > $OUT/env.txt 2>&1
for f in bench_grid; do [ -x $D/$f ] || { xz -dkf -T8 $D/$f.xz; chmod +x $D/$f; }; done
S="--no-loop --mode lstm --shape 2,20,35,1500 --variants op-bf16-persistent"
for r in 1 2; do
  echo -n "op autograd.$r: "; $D/bench_grid $S --reps 20 --warmup 5 2>&1 | tail -n 1
  echo -n "op sink.$r: "; $D/bench_grid $S --reps 20 --warmup 5 --sink 2>&1 | tail -n 1
done
ncu_bin=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n 1)
for m in sink autograd; do
  X=""; [ $m = sink ] && X="--sink"
  CANDLE_RNN_PERSISTENT_CLUSTER=1 timeout 120 "$ncu_bin" --clock-control none --cache-control none --metrics gpu__time_duration.sum \
    --print-summary per-kernel --csv $D/bench_grid $S --reps 3 --warmup 1 --phase train $X > $OUT/ncu_$m.csv 2> $OUT/ncu_$m.log
  python3 - $OUT/ncu_$m.csv <<'PY' | tee $OUT/kernels_$m.md
import csv, sys, collections
rows = list(csv.reader(open(sys.argv[1])))
start = next(i for i, r in enumerate(rows) if "Kernel Name" in r)
rows = [r for r in rows[start:] if len(r) == len(rows[start])]
head = rows[0]; ix = {k: i for i, k in enumerate(head)}
tot = collections.defaultdict(float); cnt = collections.defaultdict(int)
for r in rows[1:]:
    if r[ix["Metric Name"]] != "gpu__time_duration.sum": continue
    name = r[ix["Kernel Name"]][:80]
    n = int(r[ix["Invocations"]]) if "Invocations" in ix else 1
    avg = float(r[ix["Average"]].replace(",", ""))
    scale = {"ns": 1e-3, "nsecond": 1e-3, "us": 1.0, "usecond": 1.0, "ms": 1e3, "msecond": 1e3}[r[ix["Metric Unit"]]]
    tot[name] += avg * n * scale; cnt[name] += n
calls = cnt.get("lstm_persistent_bwd", 2) / 2 or 1
print(f"{calls:.0f} calls of the op; per call:\n| kernel | launches | us | share |\n|---|---|---|---|")
s = sum(tot.values())
for k, v in sorted(tot.items(), key=lambda kv: -kv[1]):
    print(f"| `{k}` | {cnt[k]/calls:.1f} | {v/calls:.1f} | {100*v/s:.1f}% |")
print(f"| all | | {s/calls:.1f} | |")
PY
done
