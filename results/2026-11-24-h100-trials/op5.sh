#!/usr/bin/env bash
# ad-hoc: the op as ptb-lm uses it, old (e923455) and new, 5 alternating rounds of 100 reps
D=.devbin-swz; source $D/gpu-env.sh > /dev/null 2>&1
for f in $D/*.xz; do [ -x "${f%.xz}" ] || { xz -dkf -T8 $f; chmod +x ${f%.xz}; }; done
S="--no-loop --mode lstm --shape 2,20,35,1500 --reps 100 --warmup 20 --variants op-bf16-persistent --loss sum --input-grad --sink-overwrite"
for r in 1 2 3 4 5; do for n in old new; do B=$D/bench_grid; [ $n = old ] && B=$D/old-bench_grid
  echo -n "$n.$r: "; $B $S 2>&1 | tail -n1 | cut -d'|' -f8-; done; done
