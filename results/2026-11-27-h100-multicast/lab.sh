#!/usr/bin/env bash
# The harness runs of this folder (logs/probe.log, logs/lab-forward.log, logs/lab-backward.log),
# rebuilt: `lab.sh DIR build` here (nvcc from ../shared/tools/cuda-build-env.sh), then
# `lab.sh DIR run` on the GPU machine (three commands on a lent H100: the probe, the forwards,
# the backwards). The backward's builds need backward-multicast.patch applied first
# (`git apply results/2026-11-27-h100-multicast/backward-multicast.patch`; revert it after).
#   scripts/persistent-lab/exchange_probe.cu: a step's exchange alone (modes 11-12: multicast)
#   scripts/persistent-lab/build.sh: one LSTM recurrence, -DMCAST=N its multicast clusters
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1
case $2 in
  build)
    for hu in 512:8 1024:8 128:4 256:8; do
      nvcc -O3 -std=c++17 -arch=sm_90a -DHID=${hu%:*} -DBATCH=32 -DUNITS=${hu#*:} \
        scripts/persistent-lab/exchange_probe.cu -o "$D/probe-${hu%:*}-u${hu#*:}"
    done
    lab() { bash scripts/persistent-lab/build.sh "$D" "$@"; }
    for m in 1 2 4 8; do
      for h in 512 1024 256; do lab f$h-m$m -DHID=$h -DUNITS=8 -DBATCH=32 -DLAB_T=30 -DMCAST=$m; done
      if grep -q MCAST candle-cudnn-rnn/src/persistent/recurrence_bwd.cu; then
        for h in 512 256; do lab b$h-m$m -DHID=$h -DUNITS=8 -DLAB_BWD -DNBUF=4 -DBATCH=32 -DLAB_T=30 -DMCAST=$m; done
      fi
    done ;;
  run)
    cd "$D"
    for p in 512-u8 1024-u8 256-u8 128-u4; do
      ./probe-$p 3000 1 0 3; ./probe-$p 3000 1 12 12
      for c in 2 4 8; do ./probe-$p 3000 $c 11 11; done
      ./probe-$p 3000 1 2 2
    done
    # Each multicast build against the same kernel without (outputs compared bit for bit).
    for r in 1 2; do
      for n in f512 f1024 f256 b512 b256; do
        [ -x lab-$n-m1 ] || continue
        ./lab-$n-m1 50 /tmp/$n.bin
        for m in 2 4 8; do ./lab-$n-m$m 50 /tmp/$n-m$m.bin /tmp/$n.bin || true; done
      done
    done
    CS=$(ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
    for tool in memcheck racecheck synccheck; do
      for v in f256-m4 b256-m4; do [ -x lab-$v ] && $CS --tool $tool ./lab-$v 2 | tail -3; done
    done ;;
esac
