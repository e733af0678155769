#!/usr/bin/env bash
# Where a launch's time goes besides its steps: the lab harness (scripts/persistent-lab/lab.cu)
# with -DLAB_MARKS, at the library's plans of the short shapes, 10, 30 and 90 steps each.
#   lab.sh build DIR     builds DIR/lab-NAME-T (nvcc, here) from LAB_SRC's sources (a checkout's
#                        root; this one's unless set)
#   lab.sh run DIR       runs each: µs a launch (median of 30) and the marks of the last launch
#   lab.sh ab NEW OLD    NEW's and OLD's builds in turn, NEW / OLD / NEW, each with the marks,
#                        NEW's output compared with OLD's (the same bits where the change moves
#                        no arithmetic)
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
lab=${LAB_SRC:-$here/../..}/scripts/persistent-lab
# NAME:DEFINES, the plans that CANDLE_RNN_PERSISTENT_SHOW_PLANS printed for the shapes:
# LSTM [*, 128, 128] (16 groups of 8, one cluster of 8 blocks a group, pushed both ways),
# LSTM [*, 32, 512] (4 groups of 8, one cluster of 16, the forward pushed) and
# LSTM [*, 32, 1024] (2 groups of 16, the forward's multicast in pairs).
plans=(
  "fwd128:-DHID=128 -DBATCH=8 -DGROUPS=16 -DUNITS=16 -DONE_CLUSTER=1 -DPUSH=1 -DXIN=128"
  "bwd128:-DHID=128 -DBATCH=8 -DGROUPS=16 -DUNITS=16 -DNBUF=8 -DONE_CLUSTER=1 -DPUSH=1 -DLAB_BWD"
  "fwd512:-DHID=512 -DBATCH=8 -DGROUPS=4 -DUNITS=32 -DONE_CLUSTER=1 -DPUSH=1"
  "bwd512:-DHID=512 -DBATCH=8 -DGROUPS=4 -DUNITS=32 -DNBUF=8 -DONE_CLUSTER=1 -DLAB_BWD"
  "fwd1024:-DHID=1024 -DBATCH=16 -DGROUPS=2 -DUNITS=16 -DMCAST=2"
  "bwd1024:-DHID=1024 -DBATCH=16 -DGROUPS=2 -DUNITS=16 -DNBUF=5 -DLAB_BWD"
)
case $1 in
build)
  dir=$2
  mkdir -p "$dir"
  for p in "${plans[@]}"; do
    name=${p%%:*} defs=${p#*:}
    for t in 10 30 90; do
      # shellcheck disable=SC2086
      bash "$lab/build.sh" "$dir" "$name-$t" $defs -DCL=1 -DLAB_T=$t -DLAB_MARKS > "$dir/build-$name-$t.log" 2>&1 \
        || echo "build $name-$t failed: $(tail -3 "$dir/build-$name-$t.log")"
    done
  done
  ls "$dir"/lab-* | wc -l | xargs echo "built:"
  ;;
run)
  dir=$2
  for p in "${plans[@]}"; do
    name=${p%%:*}
    for t in 10 30 90; do
      echo "== $name T=$t"
      timeout 30 "$dir/lab-$name-$t" 30 2>&1 | grep -v "output mean"
    done
  done
  ;;
ab)
  new=$2 old=$3
  for p in "${plans[@]}"; do
    name=${p%%:*}
    for t in 10 30 90; do
      [ -x "$new/lab-$name-$t" ] && [ -x "$old/lab-$name-$t" ] || continue
      run() { timeout 30 "$1/lab-$name-$t" 30 "$1/out-$name-$t" "${@:2}" 2>&1 | grep -vE "output mean|config"; }
      echo "== $name T=$t"
      echo "old: $(run "$old" | tr '\n' ' ')"
      echo "new: $(run "$new" "$old/out-$name-$t" | tr '\n' ' ')"
      echo "old: $(run "$old" | tr '\n' ' ')"
      echo "new: $(run "$new" "$old/out-$name-$t" | tr '\n' ' ')"
    done
  done
  ;;
esac
