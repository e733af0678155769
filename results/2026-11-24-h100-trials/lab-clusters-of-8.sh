#!/usr/bin/env bash
# ad-hoc: the backward recurrence in clusters of 8 (and chunk/buffer variants) in the harness,
# against clusters of 4 as main runs it; outputs compared with HEAD's kernel.
O=$1; mkdir -p $O; L=/tmp/lab8; mkdir -p $L
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc); export PATH=$(dirname $nvcc):$PATH
# HEAD's kernel in a tree of its own
H=/tmp/labhead; mkdir -p $H/scripts $H/candle-cudnn-rnn/src
cp -r scripts/persistent-lab $H/scripts/; cp -r candle-cudnn-rnn/src/persistent $H/candle-cudnn-rnn/src/
cp .devbin-land/head/lstm_bwd.cu $H/candle-cudnn-rnn/src/persistent/lstm_bwd.cu
b="-DLAB_BWD"
bash $H/scripts/persistent-lab/build.sh $L head $b -DCL=4 -DUNITS=13 -DNBUF=2 > $O/build-head.log 2>&1 &
builds=("c4:-DCL=4 -DUNITS=13 -DNBUF=2" "c4ch32:-DCL=4 -DUNITS=13 -DNBUF=4 -DCH=32"
  "c8n2:-DCL=8 -DUNITS=12 -DNBUF=2" "c8n3:-DCL=8 -DUNITS=12 -DNBUF=3" "c8ch32:-DCL=8 -DUNITS=12 -DNBUF=4 -DCH=32"
  "c8n3ph:-DCL=8 -DUNITS=12 -DNBUF=3 -DLAB_PHASES" "c4ph:-DCL=4 -DUNITS=13 -DNBUF=2 -DLAB_PHASES")
for x in "${builds[@]}"; do IFS=: read -r n d <<< "$x"; bash scripts/persistent-lab/build.sh $L $n $b $d > $O/build-$n.log 2>&1 & done
wait
grep -l -i error $O/build-*.log && grep -i -A3 error $O/build-*.log | head -20
$L/lab-head 30 $L/head.out > /dev/null 2>&1
for r in 1 2; do for n in head c4 c4ch32 c8n2 c8n3 c8ch32; do
  echo -n "$n.$r: "; timeout 30 $L/lab-$n 30 $L/$n.out $L/head.out 2>&1 | grep -vE "output mean" | sed 's/compare with [^:]*: //' | tr '\n' ' '; echo
done; done
for n in c4ph c8n3ph; do echo "== $n"; timeout 30 $L/lab-$n 10 2>&1 | grep -vE "output mean"; done
