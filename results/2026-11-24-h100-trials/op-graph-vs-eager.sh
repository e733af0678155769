#!/usr/bin/env bash
# ad-hoc: the op [35, 20, 2 x 1500] bf16 as ptb-lm uses it, eager and captured as a CUDA graph
D=.devbin-graph; source $D/gpu-env.sh > /dev/null 2>&1
for f in $D/*.xz; do [ -x "${f%.xz}" ] || { xz -dkf -T8 $f; chmod +x ${f%.xz}; }; done
S="--no-loop --mode lstm --shape 2,20,35,1500 --variants op-bf16-persistent --loss sum --input-grad --sink-overwrite --phase train"
for r in 1 2 3 4 5; do
  echo -n "eager.$r: "; $D/bench_grid $S --reps 50 --warmup 20 2>&1 | tail -n1 | cut -d'|' -f8-
  echo -n "graph.$r: "; $D/bench_grid $S --reps 50 --warmup 5 --graph --json $1/graph_$r.json 2>&1 | tail -n1 | cut -d'|' -f8-
done
echo -n "graph, grid's MSE: "; $D/bench_grid --no-loop --mode lstm --shape 2,20,35,1500 --variants op-bf16-persistent --phase train --reps 50 --warmup 5 --graph 2>&1 | tail -n1 | cut -d'|' -f8-
echo -n "graph, cuDNN bf16 standard (as ptb-lm uses it): "; $D/bench_grid --no-loop --mode lstm --shape 2,20,35,1500 --variants op-bf16 --loss sum --input-grad --sink-overwrite --phase train --reps 30 --warmup 5 --graph 2>&1 | tail -n1 | cut -d'|' -f7-
