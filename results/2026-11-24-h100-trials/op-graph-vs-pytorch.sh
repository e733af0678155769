#!/usr/bin/env bash
# ad-hoc: the op [35, 20, 2 x 1500] bf16 (forward + backward from the outputs' sum, the input's
# gradient, the weight's over a sink) captured as a CUDA graph, and PyTorch's cuDNN LSTM the same
# way in the same command; then eager, both.
D=.devbin-graph; source $D/gpu-env.sh > /dev/null 2>&1
for f in $D/*.xz; do [ -x "${f%.xz}" ] || { xz -dkf -T8 $f; chmod +x ${f%.xz}; }; done
S="--no-loop --mode lstm --shape 2,20,35,1500 --loss sum --input-grad --sink-overwrite --phase train"
for r in 1 2 3; do
  echo -n "ours graph.$r: "; $D/bench_grid $S --variants op-bf16-persistent --reps 50 --warmup 5 --graph --json $1/ours_graph_$r.json 2>&1 | tail -n1 | cut -d'|' -f7-
  echo -n "ours cuDNN bf16 graph.$r: "; $D/bench_grid $S --variants op-bf16 --reps 30 --warmup 5 --graph 2>&1 | tail -n1 | cut -d'|' -f7-
  timeout 200 python3 scripts/torch_reference.py --grid --only lstm,2,20,35,1500 --impls torch-amp-fp16,torch-fp16,torch-tf32 \
    --loss sum --input-grad --graph --reps 30 --warmup 5 --json $1/torch_graph_$r.json > $1/torch_graph_$r.log 2>&1
  echo "torch graph.$r rc=$?"; grep -E "^\| lstm" $1/torch_graph_$r.log | cut -d'|' -f7-9,11
done
echo -n "ours eager: "; $D/bench_grid $S --variants op-bf16-persistent --reps 50 --warmup 20 2>&1 | tail -n1 | cut -d'|' -f7-
timeout 200 python3 scripts/torch_reference.py --grid --only lstm,2,20,35,1500 --impls torch-amp-fp16,torch-fp16,torch-tf32 \
  --loss sum --input-grad --reps 30 --warmup 5 > $1/torch_eager.log 2>&1
echo "torch eager rc=$?"; grep -E "^\| lstm" $1/torch_eager.log | cut -d'|' -f7-9,11
