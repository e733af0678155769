#!/usr/bin/env bash
# On the GPU machine, bench_grid of `scripts/devbin.sh DIR` at main (the forward graphed under
# --graph, as the training call) beside scripts/torch_reference.py --graph, on four grid shapes,
# as compare-grid.sh runs them (ours / PyTorch / PyTorch / ours graphed, then both eager); then
# scripts/compare_table.py's four tables from the files.
#   results/2026-11-26-h200-forward-graphed/run.sh DIR OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
how="--loss sum --input-grad --reps 10 --warmup 3"
g=$OUT/grid; mkdir -p "$g"
shapes=(lstm:1,32,30,1024 gru:1,128,30,512 lstm:1,128,30,512 lstm:2,20,35,1500)
op() {  # pass, extra
  local p=$1; shift
  for c in "${shapes[@]}"; do IFS=: read -r cell shape <<< "$c"
    "$D/bench_grid" --no-loop $how --api direct --mode $cell --shape $shape "$@" --json "$g/op_${p}_${cell}_$shape.json" >> "$g/op_$p.log" 2>&1
  done
  python3 - "$g" "$p" <<'PY'
import glob, json, sys
g, p = sys.argv[1:]
rows = []
for f in sorted(glob.glob(f"{g}/op_{p}_*.json")):
    d = json.load(open(f)); rows += d["grid"]; meta = d
meta["grid"] = rows
json.dump(meta, open(f"{g}/op_{p}.json", "w"))
PY
  rm -f "$g"/op_${p}_*.json
}
torch() {  # pass, extra
  local p=$1; shift
  only=(); for c in "${shapes[@]}"; do only+=(--only "${c/:/,}"); done
  python3 scripts/torch_reference.py --grid $how --impls torch-fp32,torch-tf32,torch-fp16 "${only[@]}" "$@" --json "$g/torch_$p.json" > "$g/torch_$p.log" 2>&1
}
stamp "passes"
op a --graph; torch a --graph; torch b --graph; op b --graph; op eager; torch eager
python3 scripts/compare_table.py "$g" | tee "$g/table.md" | grep -E "^####|^\| (fp32|tf32|half) "
(cd "$OUT" && tar -czf all.tgz --exclude all.tgz --exclude console.txt ./* && rm -rf grid env.txt)
stamp "done"
