#!/usr/bin/env bash
# Every lab source through nvcc's front end as far as PTX, at a few of the builds the scripts
# here make, so that they keep compiling as the library's sources they include change (they
# broke once unseen: NWARPS, when common.cuh took THREADS). CI calls it (.ci/run); nvcc from a
# CUDA 12.8+ kit (../shared/tools/cuda-build-env.sh). Prints one line a build; exits 1 if any
# failed.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
builds=(
  "lab.cu:"
  "lab.cu:-DLAB_BWD -DCL=4 -DUNITS=13 -DNBUF=2"
  "lab.cu:-DHID=512 -DBATCH=8 -DGROUPS=4 -DUNITS=32 -DONE_CLUSTER=1 -DPUSH=1 -DLAB_T=30 -DLAB_MARKS -DLAB_WT_PROLOGUE"
  "lab.cu:-DHID=512 -DBATCH=8 -DGROUPS=4 -DUNITS=32 -DNBUF=8 -DONE_CLUSTER=1 -DLAB_BWD -DWT_ROWS=1"
  "exchange_probe.cu:-DHID=1024 -DBATCH=128 -DUNITS=8"
  "overlap_probe.cu:-DHID=1024 -DBATCH=32 -DUNITS=8"
  "wgmma_probe.cu:"
  "wgmma_probe.cu:-DWREG=1 -DNSLOT=8"
  "wgmma_probe.cu:-DCELL_GRU -DGROUPS=2 -DKC=128 -DNSLOT=6"
  "wgmma_probe.cu:-DCELL_GRU -DGROUPS=4 -DUNITS=32 -DHYBRID=1 -DNSLOT=16 -DFULL=1"
  "wgmma_probe.cu:-DBATCH=32 -DGROUPS=1 -DUNITS=32 -DHYBRID=1 -DNSLOT=16"
  "wgmma_probe.cu:-DCELL_GRU -DBATCH=64 -DGROUPS=2 -DUNITS=16 -DHYBRID=1 -DKC=128 -DNSLOT=8 -DFULL=1"
  "wgmma_probe.cu:-DBATCH=32 -DGROUPS=1 -DUNITS=16 -DHYBRID=1 -DKC=64 -DNSLOT=16 -DFULL=1 -DCHUNK_FLAGS=1"
  "wgmma_probe.cu:-DBATCH=32 -DGROUPS=1 -DUNITS=16 -DHYBRID=1 -DKC=128 -DNSLOT=8 -DFULL=1 -DCHUNK_FLAGS=1 -DCHUNK_GREEDY=1"
  "wgmma_bwd_probe.cu:"
  "wgmma_bwd_probe.cu:-DCELL_GRU -DPARTIAL_BF16=1"
  "wgmma_bwd_probe.cu:-DDG_ROWS=2"
  "wgmma_bwd_probe.cu:-DCELL_GRU -DDG_ROWS=0"
  "wait_value_probe.cu:"
  "push_probe.cu:"
)
# lab.cu's defaults, as build.sh gives them (a later -D of the same name replaces one).
lab=(-DHID=1500 -DBATCH=20 -DUNITS=12 -DNWARPS=8 -DELEM_BF16=1 -DCL=1 -DNBUF=3 -DCH=64)
failed=0 n=0
for b in "${builds[@]}"; do
  src=${b%%:*} flags=${b#*:}
  n=$((n + 1))
  args=()
  if [ "$src" = lab.cu ]; then
    for d in "${lab[@]}"; do [[ " $flags " == *" ${d%%=*}="* ]] || args+=("$d"); done
  fi
  # shellcheck disable=SC2086
  if log=$(nvcc -std=c++17 -arch=sm_90a -ptx "${args[@]}" $flags "$here/$src" -o "$out/$n.ptx" 2>&1); then
    echo "ok   $src $flags"
  else
    failed=$((failed + 1))
    echo "FAIL $src $flags"
    echo "$log" | grep -E "error" | head -5
  fi
done
[ $failed = 0 ] && echo "every lab build compiled" || echo "$failed of the lab builds failed"
[ $failed = 0 ]
