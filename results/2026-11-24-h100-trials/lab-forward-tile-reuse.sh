#!/usr/bin/env bash
# ad-hoc: the forward with its stages over the dead weight tile (WREG), and the backward with
# swizzled chunk buffers, against HEAD's kernels (e923455 + nothing), bit for bit.
O=$1; mkdir -p $O; L=/tmp/labfw; mkdir -p $L
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc); export PATH=$(dirname $nvcc):$PATH
H=/tmp/labhead2; mkdir -p $H/scripts $H/candle-cudnn-rnn/src
cp -r scripts/persistent-lab $H/scripts/; cp -r candle-cudnn-rnn/src/persistent $H/candle-cudnn-rnn/src/
cp .devbin-land/head/lstm_fwd.cu .devbin-land/head/lstm_bwd.cu $H/candle-cudnn-rnn/src/persistent/
cp .devbin-land/head/lab.cu $H/scripts/persistent-lab/lab.cu
bw="-DLAB_BWD -DCL=4 -DUNITS=13 -DNBUF=2"
bash $H/scripts/persistent-lab/build.sh $L fhead > $O/b1.log 2>&1 &
bash $H/scripts/persistent-lab/build.sh $L bhead $bw > $O/b2.log 2>&1 &
bash scripts/persistent-lab/build.sh $L fnew > $O/b3.log 2>&1 &
bash scripts/persistent-lab/build.sh $L bnew $bw > $O/b4.log 2>&1 &
bash scripts/persistent-lab/build.sh $L fnewph -DLAB_PHASES > $O/b5.log 2>&1 &
bash scripts/persistent-lab/build.sh $L fc4 -DCL=4 > $O/b6.log 2>&1 &
bash $H/scripts/persistent-lab/build.sh $L fc4head -DCL=4 > $O/b7.log 2>&1 &
wait; grep -il "error" $O/b*.log && grep -i -A3 error $O/b*.log | head
for n in fhead bhead fc4head; do $L/lab-$n 30 $L/$n.out > /dev/null 2>&1; done
for r in 1 2 3; do for n in fhead fnew bhead bnew fc4head fc4; do
  case $n in fc4*) ref=$L/fc4head.out ;; f*) ref=$L/fhead.out ;; *) ref=$L/bhead.out ;; esac
  echo -n "$n.$r: "; timeout 30 $L/lab-$n 30 $L/$n.out $ref 2>&1 | grep -vE "output mean" | sed 's/compare with [^:]*: //; s/config HID=1500 BATCH=20//' | tr '\n' ' '; echo
done; done
echo "== fnewph"; timeout 30 $L/lab-fnewph 10 2>&1 | grep -vE "output mean"
