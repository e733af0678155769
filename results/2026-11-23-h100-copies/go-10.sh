#!/usr/bin/env bash
# main 0cbab86: where a run's time goes besides the passes: PTB large bf16 for 4 epochs then the
# test pass, every output line stamped with the wall clock; then the same with --no-cuda-graph
# for the first epoch's lines only.
set -uo pipefail
cd "$(dirname "$0")/.."
D=.devbin-s11
FINAL=$OUT; OUT=/tmp/res; rm -rf $OUT; mkdir -p $OUT
trap 'tar czf $FINAL/run.tar.gz -C /tmp res' EXIT; trap 'exit 143' TERM
source $D/gpu-env.sh > $OUT/env.txt 2>&1
[ -x $D/ptb-lm ] || { xz -dkf -T8 $D/ptb-lm.xz; chmod +x $D/ptb-lm; }
stamp() { while IFS= read -r l; do printf '%s %s\n' "$(date +%s.%N | cut -c1-14)" "$l"; done; }
t0=$(date +%s.%N | cut -c1-14); echo "start $t0" > $OUT/stamped.log
timeout 200 $D/ptb-lm train --config large --precision bf16 --seed 4 --max-max-epoch 4 --data data/ptb --out /tmp/T 2>&1 | stamp >> $OUT/stamped.log
echo "end $(date +%s.%N | cut -c1-14)" >> $OUT/stamped.log
python3 - $OUT/stamped.log <<'PY'
import sys, re
lines = open(sys.argv[1]).read().splitlines()
t0 = float(lines[0].split()[1]); prev = t0
for l in lines[1:]:
    t, rest = l.split(' ', 1)
    t = float(t) if t[0].isdigit() else float(rest.split()[0])
    if re.search(r'(10%|100%)|^Epoch|Test|ptb-lm|end', rest) or l.startswith('end'):
        print(f"{t - t0:7.2f} (+{t - prev:5.2f}) {rest[:110]}")
    prev = t
PY
