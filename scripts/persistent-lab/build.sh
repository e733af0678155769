#!/usr/bin/env bash
# Builds the harness for PTB large's shape (hidden 1500, batch 20, 12 units per block, bf16) as
# `lab-NAME` in DIR: `build.sh DIR NAME [nvcc -D options that replace the defaults]`.
# Needs nvcc (a CUDA 12.8+ kit: the clusters and sm_90a). The library's plans for PTB large on
# an H100: the forward is the defaults; the backward is -DLAB_BWD -DCL=4 -DUNITS=13 -DNBUF=2.
set -euo pipefail
dir=$1 name=$2; shift 2
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$dir"
defaults=(-DHID=1500 -DBATCH=20 -DUNITS=12 -DNWARPS=8 -DELEM_BF16=1 -DCL=1 -DNBUF=3 -DCH=64)
# A later -D of the same name wins in nvcc's preprocessor only with a warning; drop defaults
# that the caller sets.
args=()
for d in "${defaults[@]}"; do
  key=${d%%=*}
  skip=0
  for a in "$@"; do [[ $a == "$key="* ]] && skip=1; done
  [ $skip = 1 ] || args+=("$d")
done
nvcc -O3 -std=c++17 -arch=sm_90a -lineinfo "${args[@]}" "$@" "$here/lab.cu" -o "$dir/lab-$name"
