#!/usr/bin/env bash
# ad-hoc: the backward's chunk buffers swizzled instead of padded, so a third buffer per warp
# fits; against HEAD's kernel (padded rows), outputs compared bit for bit.
O=$1; mkdir -p $O; L=/tmp/labsw; mkdir -p $L
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc); export PATH=$(dirname $nvcc):$PATH
H=/tmp/labhead; mkdir -p $H/scripts $H/candle-cudnn-rnn/src
cp -r scripts/persistent-lab $H/scripts/; cp -r candle-cudnn-rnn/src/persistent $H/candle-cudnn-rnn/src/
cp .devbin-land/head/lstm_bwd.cu $H/candle-cudnn-rnn/src/persistent/lstm_bwd.cu
b="-DLAB_BWD -DCL=4 -DUNITS=13"
bash $H/scripts/persistent-lab/build.sh $L head $b -DNBUF=2 > $O/build-head.log 2>&1 &
builds=("n2:-DNBUF=2" "n3:-DNBUF=3" "c32n4:-DNBUF=4 -DCH=32" "c32n6:-DNBUF=6 -DCH=32" "n3ph:-DNBUF=3 -DLAB_PHASES" "c32n6ph:-DNBUF=6 -DCH=32 -DLAB_PHASES")
for x in "${builds[@]}"; do IFS=: read -r n d <<< "$x"; bash scripts/persistent-lab/build.sh $L $n $b $d > $O/build-$n.log 2>&1 & done
wait
grep -il error $O/build-*.log && grep -i -A3 error $O/build-*.log | head -20
$L/lab-head 30 $L/head.out > /dev/null 2>&1
timeout 30 $L/lab-c32n4 30 $L/c32.out > /dev/null 2>&1
for r in 1 2 3; do for n in head n2 n3 c32n4 c32n6; do
  ref=$L/head.out; [ ${n:0:3} = c32 ] && ref=$L/c32.out
  echo -n "$n.$r: "; timeout 30 $L/lab-$n 30 $L/$n.out $ref 2>&1 | grep -vE "output mean" | sed 's/compare with [^:]*: //; s/config HID=1500 BATCH=20 UNITS=13 NWARPS=8 CL=4 blocks=116//' | tr '\n' ' '; echo
done; done
for n in n3ph c32n6ph; do echo "== $n"; timeout 30 $L/lab-$n 10 2>&1 | grep -vE "output mean"; done
