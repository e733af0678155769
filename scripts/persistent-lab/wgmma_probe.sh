#!/usr/bin/env bash
# wgmma_probe.cu's variants: `wgmma_probe.sh build DIR` compiles them here (nvcc, the sm_90a
# target) into DIR/wp-NAME; `wgmma_probe.sh run DIR` on the GPU machine runs each: mode 1 (the
# whole step, checked against the f64 reference) in clusters of 1, 2 and 4, then mode 0 (products
# and gate math alone) and mode 2 (the exchange alone) in clusters of 1, 2 and 4. The -g2
# variants run the batch in two groups of 64 samples on 64 blocks each (-DGROUPS=2); the -g4-hybrid
# ones in four groups of 32 samples on 32 blocks each, half of each block's rows in registers
# (-DHYBRID=1, clusters of 1 only); the -b32-hybrid ones the same at batch 32 (one group); the
# -full ones with a layer's input projection read and its outputs written each step (-DFULL=1);
# the -regs ones 16 units a block (64 blocks a group of 32 samples), every gate row in registers,
# none in shared memory; the -flags ones without the group's barrier before a step's copies, each
# chunk copied once the blocks that fill it have arrived (-DCHUNK_FLAGS=1); the -greedy ones
# with every chunk whose count is full issued whenever the copying thread looks (-DCHUNK_GREEDY=1).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
what=$1 dir=$2
variants=(
  "lstm:"
  "lstm-kc128:-DKC=128 -DNSLOT=3"
  "lstm-u8:-DUNITS=8"
  "lstm-wreg:-DWREG=1 -DNSLOT=8"
  "lstm-f1:-DFENCE_ONCE=1"
  "lstm-whole:-DFENCE_ONCE=1 -DWHOLE_CHUNKS=1"
  "lstm-kc128-whole:-DKC=128 -DNSLOT=3 -DFENCE_ONCE=1 -DWHOLE_CHUNKS=1"
  "lstm-wreg-whole:-DWREG=1 -DNSLOT=8 -DFENCE_ONCE=1 -DWHOLE_CHUNKS=1"
  "gru:-DCELL_GRU"
  "gru-u8:-DCELL_GRU -DUNITS=8"
  "lstm-g2:-DGROUPS=2"
  "lstm-g2-kc128:-DGROUPS=2 -DKC=128 -DNSLOT=4"
  "lstm-g2-kc128-s6:-DGROUPS=2 -DKC=128 -DNSLOT=6"
  "lstm-g2-kc128-whole:-DGROUPS=2 -DKC=128 -DNSLOT=6 -DFENCE_ONCE=1 -DWHOLE_CHUNKS=1"
  "gru-g2:-DCELL_GRU -DGROUPS=2"
  "gru-g2-kc128-s6:-DCELL_GRU -DGROUPS=2 -DKC=128 -DNSLOT=6"
  "lstm-g4-hybrid:-DGROUPS=4 -DUNITS=32 -DHYBRID=1 -DNSLOT=16"
  "lstm-g4-hybrid-kc128:-DGROUPS=4 -DUNITS=32 -DHYBRID=1 -DKC=128 -DNSLOT=8"
  "gru-g4-hybrid:-DCELL_GRU -DGROUPS=4 -DUNITS=32 -DHYBRID=1 -DNSLOT=16"
  "gru-g4-hybrid-kc128:-DCELL_GRU -DGROUPS=4 -DUNITS=32 -DHYBRID=1 -DKC=128 -DNSLOT=8"
  "lstm-b32-hybrid:-DBATCH=32 -DGROUPS=1 -DUNITS=32 -DHYBRID=1 -DNSLOT=16"
  "gru-b32-hybrid:-DCELL_GRU -DBATCH=32 -DGROUPS=1 -DUNITS=32 -DHYBRID=1 -DNSLOT=16"
  "lstm-g4-hybrid-full:-DGROUPS=4 -DUNITS=32 -DHYBRID=1 -DNSLOT=16 -DFULL=1"
  "gru-g4-hybrid-full:-DCELL_GRU -DGROUPS=4 -DUNITS=32 -DHYBRID=1 -DNSLOT=16 -DFULL=1"
  "lstm-b32-hybrid-full:-DBATCH=32 -DGROUPS=1 -DUNITS=32 -DHYBRID=1 -DNSLOT=16 -DFULL=1"
  "gru-b32-hybrid-full:-DCELL_GRU -DBATCH=32 -DGROUPS=1 -DUNITS=32 -DHYBRID=1 -DNSLOT=16 -DFULL=1"
  "lstm-b32-hybrid-kc128-full:-DBATCH=32 -DGROUPS=1 -DUNITS=32 -DHYBRID=1 -DKC=128 -DNSLOT=8 -DFULL=1"
  "lstm-b32-regs-full:-DBATCH=32 -DGROUPS=1 -DUNITS=16 -DHYBRID=1 -DKC=128 -DNSLOT=8 -DFULL=1"
  "gru-b32-regs-full:-DCELL_GRU -DBATCH=32 -DGROUPS=1 -DUNITS=16 -DHYBRID=1 -DKC=128 -DNSLOT=8 -DFULL=1"
  "lstm-b64-regs-full:-DBATCH=64 -DGROUPS=2 -DUNITS=16 -DHYBRID=1 -DKC=128 -DNSLOT=8 -DFULL=1"
  "lstm-g4-hybrid-kc128-full:-DGROUPS=4 -DUNITS=32 -DHYBRID=1 -DKC=128 -DNSLOT=8 -DFULL=1"
  "lstm-b32-regs-full-flags:-DBATCH=32 -DGROUPS=1 -DUNITS=16 -DHYBRID=1 -DKC=128 -DNSLOT=8 -DFULL=1 -DCHUNK_FLAGS=1"
  "gru-b32-regs-full-flags:-DCELL_GRU -DBATCH=32 -DGROUPS=1 -DUNITS=16 -DHYBRID=1 -DKC=128 -DNSLOT=8 -DFULL=1 -DCHUNK_FLAGS=1"
  "lstm-b64-regs-full-flags:-DBATCH=64 -DGROUPS=2 -DUNITS=16 -DHYBRID=1 -DKC=128 -DNSLOT=8 -DFULL=1 -DCHUNK_FLAGS=1"
  "lstm-b32-regs-full-kc64-flags:-DBATCH=32 -DGROUPS=1 -DUNITS=16 -DHYBRID=1 -DKC=64 -DNSLOT=16 -DFULL=1 -DCHUNK_FLAGS=1"
  "lstm-b32-regs-full-greedy:-DBATCH=32 -DGROUPS=1 -DUNITS=16 -DHYBRID=1 -DKC=128 -DNSLOT=8 -DFULL=1 -DCHUNK_FLAGS=1 -DCHUNK_GREEDY=1"
  "gru-b32-regs-full-greedy:-DCELL_GRU -DBATCH=32 -DGROUPS=1 -DUNITS=16 -DHYBRID=1 -DKC=128 -DNSLOT=8 -DFULL=1 -DCHUNK_FLAGS=1 -DCHUNK_GREEDY=1"
  "lstm-b64-regs-full-greedy:-DBATCH=64 -DGROUPS=2 -DUNITS=16 -DHYBRID=1 -DKC=128 -DNSLOT=8 -DFULL=1 -DCHUNK_FLAGS=1 -DCHUNK_GREEDY=1"
  "lstm-b32-regs-full-kc64-greedy:-DBATCH=32 -DGROUPS=1 -DUNITS=16 -DHYBRID=1 -DKC=64 -DNSLOT=16 -DFULL=1 -DCHUNK_FLAGS=1 -DCHUNK_GREEDY=1"
)
case $what in
build)
  # Optional third argument: the variants to build (a regular expression on their names).
  set -e
  mkdir -p "$dir"
  for v in "${variants[@]}"; do
    name=${v%%:*} flags=${v#*:}
    [[ $name =~ ^(${3:-.*})$ ]] || continue
    # shellcheck disable=SC2086
    nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a $flags "$here/wgmma_probe.cu" -o "$dir/wp-$name"
  done
  ;;
run)
  # Optional third argument: the variants to run (a regular expression on their names).
  for v in "${variants[@]}"; do
    name=${v%%:*}
    [[ $name =~ ^(${3:-.*})$ ]] || continue
    echo "== $name"
    clusters="1 2 4"
    [[ $name == *hybrid* || $name == *regs* ]] && clusters=1
    for cs in $clusters; do timeout 20 "$dir/wp-$name" 300 1 $cs 3; done
    timeout 20 "$dir/wp-$name" 300 0 1 0
    for cs in $clusters; do timeout 20 "$dir/wp-$name" 300 2 $cs 0; done
  done
  ;;
*)
  echo "usage: wgmma_probe.sh build|run DIR [variants: a regular expression]" >&2
  exit 2
  ;;
esac
