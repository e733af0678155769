#!/usr/bin/env bash
# ad-hoc: op timing of trial combinations, alternating, plus PTB large steps
D=.devbin-next; source $D/gpu-env.sh >/dev/null 2>&1
for f in $D/*.xz; do [ -x "${f%.xz}" ] || { xz -dkf -T8 $f; chmod +x ${f%.xz}; }; done
O=$1; mkdir -p $O
S="--no-loop --mode lstm --shape 2,20,35,1500 --reps 50 --warmup 20 --variants op-bf16-persistent --loss sum --input-grad --sink-overwrite"
runs="new: bias:bias fg:fast-gates py:padded-y bpy:bias,padded-y bfg:bias,fast-gates three:bias,padded-y,fast-gates"
for r in 1 2 3; do for v in $runs; do IFS=: read -r n t <<< "$v"
  echo -n "op $n.$r "; CANDLE_RNN_PERSISTENT_TRY=$t $D/bench_grid $S 2>&1 | tail -n1; done; done > $O/op.txt
cat $O/op.txt
B="bench --config large --precision bf16 --batches 200 --warmup 30 --data data/ptb"
for r in 1 2 3; do for v in new: bias:bias three:bias,padded-y,fast-gates bfg:bias,fast-gates; do IFS=: read -r n t <<< "$v"
  echo -n "step $n.$r "; CANDLE_RNN_PERSISTENT_TRY=$t timeout 60 $D/ptb-lm $B 2>&1 | grep -v '^{' | tail -n1; done; done > $O/step.txt
cat $O/step.txt
