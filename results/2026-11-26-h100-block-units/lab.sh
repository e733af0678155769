#!/usr/bin/env bash
# The harness runs of this folder (logs/probe-*.log, logs/lab-*.log), rebuilt: `lab.sh DIR build`
# here (nvcc from ../shared/tools/cuda-build-env.sh), then `lab.sh DIR run` on the GPU machine
# (as three commands on a lent H100: the first probe and the 512/128 phase splits, then the
# probes with clusters and the 512/1024 unit counts, then the backward's).
#   scripts/persistent-lab/exchange_probe.cu: a step's exchange alone (see its header for modes)
#   scripts/persistent-lab/build.sh: one LSTM recurrence, -DLAB_PHASES for per-phase clocks
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1
case $2 in
  build)
    for hu in 512:4 512:8 128:4 1024:8; do
      nvcc -O3 -std=c++17 -arch=sm_90a -DHID=${hu%:*} -DBATCH=32 -DUNITS=${hu#*:} \
        scripts/persistent-lab/exchange_probe.cu -o "$D/probe-${hu%:*}-u${hu#*:}"
    done
    lab() { bash scripts/persistent-lab/build.sh "$D" "$@"; }
    for u in 4 8 16; do
      lab fwd512-u$u -DHID=512 -DBATCH=32 -DUNITS=$u -DLAB_T=30
      lab fwd512-u$u-ph -DHID=512 -DBATCH=32 -DUNITS=$u -DLAB_T=30 -DLAB_PHASES
    done
    lab fwd128-u4-ph -DHID=128 -DBATCH=32 -DUNITS=4 -DLAB_T=30 -DLAB_PHASES
    lab fwd1024-u8 -DHID=1024 -DBATCH=32 -DUNITS=8 -DLAB_T=30
    lab fwd1024-u16 -DHID=1024 -DBATCH=32 -DUNITS=16 -DLAB_T=30
    lab bwd512-u4-c2-ph -DLAB_BWD -DHID=512 -DBATCH=32 -DUNITS=4 -DCL=2 -DNBUF=4 -DLAB_T=30 -DLAB_PHASES
    for uc in 4:2 8:2 8:1 4:1 16:2; do
      lab bwd512-u${uc%:*}-c${uc#*:} -DLAB_BWD -DHID=512 -DBATCH=32 -DUNITS=${uc%:*} -DCL=${uc#*:} -DNBUF=4 -DLAB_T=30
    done ;;
  run)
    cd "$D"
    for p in 512-u4 512-u8 1024-u8; do for c in 2 4 8; do ./probe-$p 3000 $c; done; done
    ./probe-128-u4 3000 2
    for r in 1 2; do
      for v in fwd512-u4 fwd512-u8 fwd512-u16 fwd1024-u8 fwd1024-u16 bwd512-u4-c2 bwd512-u8-c2 bwd512-u8-c1 \
        bwd512-u4-c1 bwd512-u16-c2; do echo "== $v"; timeout 30 ./lab-$v 20; done
    done
    for v in fwd512-u4-ph fwd512-u8-ph fwd512-u16-ph fwd128-u4-ph bwd512-u4-c2-ph; do echo "== $v"; timeout 30 ./lab-$v 20; done ;;
esac
