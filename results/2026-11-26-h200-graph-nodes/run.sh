#!/usr/bin/env bash
# On the GPU machine, bench_grid of `scripts/devbin.sh DIR` at main: the nodes of the op's
# captured training call by type (bench_grid --graph prints them), beside the graphed time, on
# the shapes where the op's cuDNN calls trail PyTorch's by 1-6% with the same kernels
# (results/2026-11-26-h200-cudnn-call-kernels/); then PyTorch's fp16 LSTM training step captured
# the same way, its graph dumped (CUDAGraph.debug_dump) and its nodes counted by type.
#   results/2026-11-26-h200-graph-nodes/run.sh DIR OUT
set -uo pipefail
cd "$(dirname "$0")/../.."
D=$1 OUT=$2
source scripts/on-gpu.sh
stamp "the op's graphs (µs an example: training)"
for c in lstm:1,32,30,1024:op-f16-default:direct lstm:1,32,30,1024:op-bf16-default:direct \
  lstm:1,32,30,1024:op-f16-default:plain gru:1,128,30,1024:op-tf32-default:direct \
  gru:1,128,30,1024:op-bf16-default:direct lstm:2,20,35,1500:op-bf16-default:sink-overwrite; do
  IFS=: read -r cell shape variant api <<< "$c"
  timeout 60 "$D/bench_grid" --no-loop --graph --loss sum --input-grad --api $api --reps 10 --warmup 3 \
    --mode $cell --shape $shape --variants $variant > "$OUT/op_${cell}_${shape}_${variant}_$api.log" 2>&1
  echo "$cell $shape $variant $api: $(grep -E '^\| (Lstm|Gru)' "$OUT/op_${cell}_${shape}_${variant}_$api.log" | cut -d'|' -f7,8)"
  echo "   $(grep 'graph nodes' "$OUT/op_${cell}_${shape}_${variant}_$api.log" | tail -1)"
done
stamp "PyTorch's fp16 LSTM [30, 32, 1024] training step, captured"
timeout 120 python3 - "$OUT" <<'PY' 2>&1 | tail -20
import collections, re, sys, torch
out = sys.argv[1]
torch.manual_seed(0)
lstm = torch.nn.LSTM(1024, 1024).cuda().half()
x = torch.randn(30, 32, 1024, device="cuda", dtype=torch.half, requires_grad=True)
def step():
    lstm.zero_grad(set_to_none=False)
    y, _ = lstm(x)
    y.sum().backward()
s = torch.cuda.Stream()
s.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(s):
    for _ in range(3):
        step()
torch.cuda.current_stream().wait_stream(s)
g = torch.cuda.CUDAGraph()
g.enable_debug_mode()
with torch.cuda.graph(g):
    step()
g.debug_dump(f"{out}/torch_graph.dot")
dot = open(f"{out}/torch_graph.dot").read()
kinds = collections.Counter(m.group(1) for m in re.finditer(r'label="\{?([A-Z_]+)', dot))
print("torch graph nodes by label:", dict(kinds))
start = torch.cuda.Event(enable_timing=True); end = torch.cuda.Event(enable_timing=True)
for _ in range(20): g.replay()
torch.cuda.synchronize(); start.record()
for _ in range(100): g.replay()
end.record(); torch.cuda.synchronize()
print(f"torch graphed step: {start.elapsed_time(end) * 1000 / 100 / 32:.2f} us an example")
PY
(cd "$OUT" && tar -czf all.tgz --exclude all.tgz --exclude console.txt ./* && find . -type f ! -name all.tgz ! -name console.txt -delete)
stamp "done"
