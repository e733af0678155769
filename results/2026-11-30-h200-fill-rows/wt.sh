#!/usr/bin/env bash
# What writing W_hh transposed from inside the forward costs its launch (the library makes it on
# a side stream beside the forward, which costs more than it saves at hidden 1024 and 1500:
# results/2026-11-30-h200-fill-rows/). lab.cu's LAB_WT_PROLOGUE (each block's share after its
# tile's copies are issued) and LAB_WT_STEPS=N (spread over the first N steps, before each step's
# barrier), against none, at the library's forward plans of LSTM [*, 32, 1024] (2 groups of 16,
# multicast in pairs), [*, 32, 512] (4 groups of 8, one pushed cluster of 16 blocks each) and
# [*, 128, 512] (8 groups of 16), 30 steps, with the launch marks; the harness checks the
# transposed W_hh. Then the backward's fill (-DWT_ROWS=1: whole rows of W_hh transposed, the
# library's; the harness passes W_hh itself, so only the times count) against the fill from W_hh,
# at the library's backward plans of [*, 32, 512] and [*, 128, 512].
#   wt.sh build DIR | wt.sh run DIR
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=$2
plans="f1024:-DHID=1024 -DBATCH=16 -DGROUPS=2 -DUNITS=16 -DMCAST=2
f512:-DHID=512 -DBATCH=8 -DGROUPS=4 -DUNITS=32 -DONE_CLUSTER=1 -DPUSH=1
f512b128:-DHID=512 -DBATCH=16 -DGROUPS=8 -DUNITS=32"
backward="b512:-DHID=512 -DBATCH=8 -DGROUPS=4 -DUNITS=32 -DNBUF=8 -DONE_CLUSTER=1
b512b128:-DHID=512 -DBATCH=16 -DGROUPS=8 -DUNITS=32 -DNBUF=5"
sides="none pro s1 s4 s10 s10f16"
# The -D options of side `$1`.
side() {
  case $1 in
    none) ;;
    pro) echo -DLAB_WT_PROLOGUE ;;
    s10f16) echo -DLAB_WT_STEPS=10 -DLAB_WT_FILL=16 ;;
    s*) echo "-DLAB_WT_STEPS=${1#s}" ;;
  esac
}
case $1 in
build)
  mkdir -p "$dir"
  while IFS= read -r p; do
    for s in $sides; do
      # shellcheck disable=SC2046,SC2086
      bash "$here/build.sh" "$dir" "${p%%:*}-$s" ${p#*:} -DCL=1 -DLAB_T=30 -DLAB_MARKS $(side $s)
    done
  done <<< "$plans"
  while IFS= read -r p; do
    for wt in "" -DWT_ROWS=1; do
      # shellcheck disable=SC2086
      bash "$here/build.sh" "$dir" "${p%%:*}${wt:+-wt}" ${p#*:} -DCL=1 -DLAB_T=30 -DLAB_MARKS -DLAB_BWD $wt
    done
  done <<< "$backward"
  ls "$dir"/lab-* | wc -l | xargs echo "built:"
  ;;
run)
  for p in f1024 f512 f512b128; do
    for s in $sides none; do
      echo "== $p-$s"
      timeout 30 "$dir/lab-$p-$s" 30 2>&1 | grep -vE 'output mean'
    done
  done
  for p in b512 b512-wt b512b128 b512b128-wt b512 b512-wt b512b128 b512b128-wt; do
    echo "== $p"
    timeout 30 "$dir/lab-$p" 30 2>&1 | grep -vE 'output mean'
  done
  ;;
esac
