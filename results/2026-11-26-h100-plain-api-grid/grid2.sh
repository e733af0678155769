#!/usr/bin/env bash
# The second half of grid.sh's compare-grid.sh, which ran past a command's 10 minutes on the
# H100: PyTorch's two graphed passes again, then the op's eager pass (PART=torch-graphed,
# op-eager), or PyTorch's eager pass (PART=torch-eager); everything in OUT/grid.tgz.
#   PART=... results/2026-11-26-h100-plain-api-grid/grid2.sh DIR OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
out=$OUT/grid; mkdir -p "$out"
how="--loss sum --input-grad --reps 10 --warmup 3"
torch() { timeout 280 python3 scripts/torch_reference.py --grid $how --impls torch-fp32,torch-tf32,torch-fp16 "${@:2}" --json "$out/torch_$1.json" > "$out/torch_$1.log" 2>&1; echo "torch $1 rc=$?"; }
for p in ${PART//,/ }; do
  stamp "$p"
  case $p in
    torch-graphed) torch a --graph; torch b --graph ;;
    op-eager) timeout 280 "$D/bench_grid" --no-loop $how --api direct --json "$out/op_eager.json" > "$out/op_eager.log"; echo "op eager rc=$?" ;;
    torch-eager) torch eager ;;
  esac
done
(cd "$OUT" && tar -czf grid.tgz grid && rm -rf grid)
stamp "done"
