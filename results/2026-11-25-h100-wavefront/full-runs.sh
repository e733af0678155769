#!/usr/bin/env bash
# Full PTB medium (39 epochs) and small (13 epochs) bf16 runs, every default, with the
# wavefronts (the default) and without them (CANDLE_RNN_PERSISTENT_WAVE=0); each whole command
# timed; test perplexity of the final model. Binaries from scripts/devbin.sh in $1; seeds $3
# (default 0), wave settings $4 (default "1 0").
D=$1 OUT=$2 SEEDS=${3:-0} WAVES=${4:-"1 0"}; mkdir -p $OUT
source $D/gpu-env.sh > /dev/null 2>&1
for f in $D/*.xz; do [ -x "${f%.xz}" ] || { xz -dkf -T8 $f; chmod +x ${f%.xz}; }; done
for seed in $SEEDS; do
for cfg in small medium; do
  for w in $WAVES; do
    t0=$(date +%s.%N)
    CANDLE_RNN_PERSISTENT_WAVE=$w timeout 280 $D/ptb-lm train --config $cfg --precision bf16 --seed $seed \
      --data data/ptb --out /tmp/F-$cfg-$w-$seed > $OUT/$cfg-bf16-s$seed-wave$w.log 2>&1
    rc=$?
    echo "$cfg seed $seed wave=$w rc=$rc, whole command $(awk "BEGIN{print $(date +%s.%N) - $t0}") s"
    grep -hE "^Epoch" $OUT/$cfg-bf16-s$seed-wave$w.log | tail -n 1 | cut -c1-165
    grep -hE "Test Perplexity" $OUT/$cfg-bf16-s$seed-wave$w.log | tail -n 1
  done
done
done
