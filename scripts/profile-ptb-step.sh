#!/usr/bin/env bash
# Device time per kernel of ptb-lm's training step, summed over the kernels of each name and
# divided by the steps run: `ptb-lm bench` eagerly (a graph replays the same kernels) under
# Nsight Compute with one metric. Run on a GPU machine:
#   scripts/profile-ptb-step.sh PTB_LM OUT_DIR CONFIG PRECISION
set -euo pipefail
bin=$1 out=$2 config=$3 precision=$4
mkdir -p "$out"
ncu_bin=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n 1)
csv="$out/ncu_${config}_$precision.csv"
# Under ncu the persistent backward's cluster launch fails (LaunchFailed; compute-sanitizer finds
# nothing wrong with it): profile it without clusters unless asked otherwise. The backward then
# takes longer than in a real step (on the H100, ~0.25 ms per PTB large step).
export CANDLE_RNN_PERSISTENT_CLUSTER=${CANDLE_RNN_PERSISTENT_CLUSTER:-1}
# bench --warmup 1 --batches 2: 3 synchronized steps, then 2 back to back: 5 steps.
"$ncu_bin" --clock-control none --cache-control none --metrics gpu__time_duration.sum \
  --print-summary per-kernel --csv \
  "$bin" bench --config "$config" --precision "$precision" --warmup 1 --batches 2 \
  --no-cuda-graph --data data/ptb > "$csv" 2> "$out/ncu_${config}_$precision.log"
python3 - "$csv" 5 <<'PY' | tee "$out/kernels_${config}_${precision}.md"
import csv, sys, collections
rows = list(csv.reader(open(sys.argv[1])))
start = next(i for i, r in enumerate(rows) if "Kernel Name" in r)  # the app's output comes first
rows = [r for r in rows[start:] if len(r) == len(rows[start])]
head = rows[0]; steps = int(sys.argv[2])
ix = {k: i for i, k in enumerate(head)}
tot = collections.defaultdict(float); cnt = collections.defaultdict(int)
for r in rows[1:]:
    if r[ix["Metric Name"]] != "gpu__time_duration.sum":
        continue
    name = r[ix["Kernel Name"]][:90]
    n = int(r[ix["Invocations"]]) if "Invocations" in ix else 1
    avg = float(r[ix["Average"]].replace(",", "")) if "Average" in ix else float(r[ix["Metric Value"]].replace(",", ""))
    unit = r[ix["Metric Unit"]]
    scale = {"ns": 1e-3, "nsecond": 1e-3, "us": 1.0, "usecond": 1.0, "ms": 1e3, "msecond": 1e3}[unit]
    tot[name] += avg * n * scale; cnt[name] += n
all_us = sum(tot.values())
print(f"| kernel | calls/step | us/step | share |\n|---|---|---|---|")
for k, v in sorted(tot.items(), key=lambda kv: -kv[1]):
    print(f"| `{k}` | {cnt[k]/steps:.1f} | {v/steps:.1f} | {100*v/all_us:.1f}% |")
print(f"| all kernels | {sum(cnt.values())/steps:.0f} | {all_us/steps:.0f} | |")
PY
