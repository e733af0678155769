#!/usr/bin/env bash
# The full 55-epoch PTB large bf16 run, seed 4, every default, with an empty driver cache (a
# fresh CUDA_CACHE_PATH, as on a fresh machine); the whole command timed, each line stamped;
# then test perplexity of the final checkpoint. Binaries from scripts/devbin.sh in $1.
D=$1 OUT=$2; mkdir -p $OUT
source $D/gpu-env.sh > /dev/null 2>&1
for f in $D/*.xz; do [ -x "${f%.xz}" ] || { xz -dkf -T8 $f; chmod +x ${f%.xz}; }; done
stamp() { while IFS= read -r l; do printf '%s %s\n' "$(date +%s.%N | cut -c1-14)" "$l"; done; }
export CUDA_CACHE_PATH=$(mktemp -d)
t0=$(date +%s.%N)
timeout 290 $D/ptb-lm train --config large --precision bf16 --seed 4 --data data/ptb --out /tmp/F 2>&1 | stamp > $OUT/large-bf16-s4.train.log
rc=${PIPESTATUS[0]}; echo "train rc=$rc, whole command $(awk "BEGIN{print $(date +%s.%N) - $t0}") s"
cp /tmp/F/*.jsonl $OUT/ 2>/dev/null
grep -hE " Epoch" $OUT/large-bf16-s4.train.log | head -n 2 | cut -c1-165
grep -hE " Epoch" $OUT/large-bf16-s4.train.log | tail -n 2 | cut -c1-165
grep -hE "Test Perplexity" $OUT/large-bf16-s4.train.log | tail -n 1
