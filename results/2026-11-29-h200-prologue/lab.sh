#!/usr/bin/env bash
# The lab harness (scripts/persistent-lab/) on the folded, pushed one-cluster GRU forward of
# [30, 32, 128]'s batch groups (hidden 128, 4 samples a group, 16 units a block, input folded
# in), bf16 (the harness's only element): µs a launch in 8 groups (g8), and the phase clocks and
# prologue of one group (gP), for each variant of a SET: `old` is BASE_TREE (a checkout of
# 5f0f78f, main before this folder), the others BASE_TREE with the SET's diff (tree.sh) and the
# -D switches of its pieces (README.md section 1):
#   pieces:   lab-pieces.diff: PRO_SKIP (no products at the first step without h_0 in every
#             kernel), PRO_XFIRST (the folded input's first copies before the tiles' fill),
#             PRO_JOINT (both tiles in one round of 16-byte loads), PRO_BIAS (biases and state
#             loaded before the fill), SOFT_BF16 (the rounding in integer instructions).
#   switches: lab-switches.diff: main's kernels with PRO_XFIRST, PRO_ASYNC_FOLD (the folded GRU's
#             tiles by cp.async) and SOFT_BF16; its kernel.rs also takes CANDLE_RNN_LAB_DEFINES
#             (extra -D options of every persistent kernel, for run.sh's `ab`).
#   build: here (nvcc of the CUDA build kit) into DIR/lab.
#   run:   on the GPU machine, every variant built, two rounds, each config 30 launches.
#   results/2026-11-29-h200-prologue/lab.sh DIR build BASE_TREE SET | DIR run OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
D=$1 PART=$2
c="-DHID=128 -DBATCH=4 -DUNITS=16 -DNWARPS=8 -DXIN=128 -DLAB_GRU -DONE_CLUSTER=1 -DPUSH=1 -DCH=64"
case $PART in
build)
  base=$3 set=$4
  case $set in
  pieces)
    off="-DPRO_SKIP=0 -DPRO_XFIRST=0 -DPRO_JOINT=0 -DPRO_BIAS=0"
    variants=("old:" "v0:$off -DSOFT_BF16"
      "s:-DPRO_SKIP=1 -DPRO_XFIRST=0 -DPRO_JOINT=0 -DPRO_BIAS=0 -DSOFT_BF16"
      "sx:-DPRO_SKIP=1 -DPRO_XFIRST=1 -DPRO_JOINT=0 -DPRO_BIAS=0 -DSOFT_BF16"
      "sxj:-DPRO_SKIP=1 -DPRO_XFIRST=1 -DPRO_JOINT=1 -DPRO_BIAS=0 -DSOFT_BF16"
      "sxjb:-DPRO_SKIP=1 -DPRO_XFIRST=1 -DPRO_JOINT=1 -DPRO_BIAS=1 -DSOFT_BF16"
      "sc:-DPRO_SKIP=1 -DPRO_XFIRST=0 -DPRO_JOINT=0 -DPRO_BIAS=0"
      "sxc:-DPRO_SKIP=1 -DPRO_XFIRST=1 -DPRO_JOINT=0 -DPRO_BIAS=0"
      "sxbc:-DPRO_SKIP=1 -DPRO_XFIRST=1 -DPRO_JOINT=0 -DPRO_BIAS=1"
      "sxac:-DPRO_SKIP=1 -DPRO_XFIRST=1 -DPRO_JOINT=0 -DPRO_BIAS=0 -DPRO_ASYNC_FOLD=1") ;;
  switches)
    variants=("old:" "s0:-DSOFT_BF16" "c:" "a:-DPRO_ASYNC_FOLD=1 -DSOFT_BF16" "ca:-DPRO_ASYNC_FOLD=1"
      "cx:-DPRO_XFIRST=1" "cax:-DPRO_ASYNC_FOLD=1 -DPRO_XFIRST=1") ;;
  *) echo "SET: pieces or switches" >&2; exit 2 ;;
  esac
  eval "$(bash "$here/../../../shared/tools/cuda-build-env.sh")"
  mkdir -p "$D/lab"
  tree=$(mktemp -d)/tree
  bash "$base/scripts/persistent-lab/tree.sh" "$tree" "$here/lab-$set.diff" || exit 1
  for v in "${variants[@]}"; do
    name=${v%%:*} flags=${v#*:}
    dir=$tree; [ "$name" = old ] && dir=$base
    for kind in "g8:-DGROUPS=8" "gP:-DLAB_PHASES"; do
      n=$name-${kind%%:*}
      bash "$dir/scripts/persistent-lab/build.sh" "$D/lab" "$n" -Xptxas -v $c ${kind#*:} $flags > "$D/lab/$n.build" 2>&1 \
        || { echo "build failed: $n"; tail -3 "$D/lab/$n.build"; }
      echo "$n: $(grep -o "Used [0-9]* registers" "$D/lab/$n.build" | head -1)"
    done
  done
  rm -rf "$tree" "$D"/lab/*.build
  ;;
run)
  OUT=$3; mkdir -p "$OUT"
  for round in 1 2; do
    for b in "$D"/lab/lab-*-g8; do
      name=${b##*/lab-}; name=${name%-g8}
      for kind in g8 gP; do
        "$D/lab/lab-$name-$kind" 30 > "$OUT/lab.txt" 2>&1
        echo "$round $name-$kind | $(grep -E 'us per launch|phase|prologue|global' "$OUT/lab.txt" \
          | sed -e 's/phase cycles after phase 0[^:]*://' -e 's/us per launch: //' -e 's/(mean over blocks).*//' \
            -e 's/global timer: //' -e 's/, blocks start within.*//' -e 's/ (30 reps)//' | tr '\n' ' ')"
      done
    done
  done
  rm -f "$OUT/lab.txt"
  ;;
esac
