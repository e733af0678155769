#!/usr/bin/env bash
# ad-hoc: main's binaries with the dropout inside the recurrences: checks, PTB large bf16
# epoch lines (must equal the earlier builds'), steps and the op graphed against .devbin-swz's
D=.devbin-drop; O=$1; mkdir -p $O
bash scripts/persistent-gpu.sh check $D $O/check 2>&1 | tail -9
bash scripts/persistent-gpu.sh lab $D $O/lab 2>&1 | tail -7
B="bench --config large --precision bf16 --batches 200 --warmup 30 --data data/ptb"
for r in 1 2 3; do for n in old new; do P=$D/ptb-lm; [ $n = old ] && P=$D/old-ptb-lm
  echo -n "step $n.$r: "; timeout 60 $P $B 2>&1 | grep -v '^{' | tail -n1; done; done
S="--no-loop --mode lstm --shape 2,20,35,1500 --variants op-bf16-persistent --loss sum --input-grad --sink-overwrite --phase train --reps 50 --warmup 5 --graph"
for r in 1 2 3; do echo -n "op graphed.$r: "; $D/bench_grid $S 2>&1 | tail -n1 | cut -d'|' -f8-; done
