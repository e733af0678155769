#!/usr/bin/env bash
# The backward with dy converted where a step uses it (this folder's dy.diff) against the kernel
# before it (dy.diff reversed, in a copy of the tree), in the lab harness: the pushed one-cluster
# backward and the grid barrier's. `dy-lab.sh OUT`.
set -uo pipefail
out=$1
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
base=$out/base-tree
mkdir -p "$base" "$out/bin"
cp -r "$root/candle-cudnn-rnn" "$root/scripts" "$base/"
(cd "$base" && patch -s -R -p1 < "$here/dy.diff") || { echo "patch failed"; exit 1; }
configs=("h128-b4 -DHID=128 -DBATCH=4 -DUNITS=16 -DONE_CLUSTER=1 -DPUSH=1"
         "h128-b16 -DHID=128 -DBATCH=16 -DUNITS=16 -DONE_CLUSTER=1 -DPUSH=1"
         "h64-b32 -DHID=64 -DBATCH=32 -DUNITS=8 -DONE_CLUSTER=1 -DPUSH=1"
         "h256-b8 -DHID=256 -DBATCH=8 -DUNITS=32 -DONE_CLUSTER=1 -DPUSH=1"
         "h128-b4-grid -DHID=128 -DBATCH=4 -DUNITS=8"
         "h512-b8-grid -DHID=512 -DBATCH=8 -DUNITS=16"
         "h512-b32-grid -DHID=512 -DBATCH=32 -DUNITS=16"
         "h1024-b32-grid -DHID=1024 -DBATCH=32 -DUNITS=16"
         "ptb-large -DCL=4 -DUNITS=13 -DNBUF=2")
build() { set -- $1; n=$1; shift
  bash "$base/scripts/persistent-lab/build.sh" "$bin" "$n-base" -DLAB_BWD -DCH=64 "$@" > "$bin/$n-base.build" 2>&1 || echo "build failed: $n-base"
  bash "$root/scripts/persistent-lab/build.sh" "$bin" "$n-new" -DLAB_BWD -DCH=64 "$@" > "$bin/$n-new.build" 2>&1 || echo "build failed: $n-new"; }
bin=$out/bin
export -f build; export base root bin
printf '%s\n' "${configs[@]}" | xargs -P 16 -I{} bash -c 'build "{}"'
for c in "${configs[@]}"; do
  n=${c%% *}
  for v in base new again-base again-new; do
    b=$bin/lab-$n-${v#again-}
    if [ "$v" = base ]; then r=$("$b" 30 "$out/$n.ref" 2>&1); else r=$("$b" 30 "$out/$n.out" "$out/$n.ref" 2>&1); fi
    echo "$n $v | $(echo "$r" | grep -E 'us per launch|compare|error' | tr '\n' ' ')"
  done
done
rm -rf "$bin" "$base" "$out"/*.out "$out"/*.ref
