#!/usr/bin/env bash
# The harness (lab.cu) for several variants of one shape, each also with -DLAB_PHASES (the
# per-phase SM clocks of every step):
#   variants.sh build DIR "SHAPE -D..." NAME:"-D..." ...   builds DIR/lab-NAME and DIR/lab-NAME-ph
#       with build.sh (nvcc: ../shared/tools/cuda-build-env.sh here, or a GPU machine's own);
#   variants.sh run DIR [REPS]   runs each DIR/lab-NAME in the order built: µs a launch (median
#       of REPS, default 30), its output compared with the first variant's of the same first word
#       of the name (fwd-push against fwd, say: the same sums in another order differ by
#       rounding only), then DIR/lab-NAME-ph's phases.
# For example, an LSTM at hidden 512, batch 8, one cluster of 16 blocks: the forward pushed, and
# the backward exchanging through L2 and pushed:
#   variants.sh build /tmp/lab "-DHID=512 -DBATCH=8 -DUNITS=32 -DNBUF=2 -DONE_CLUSTER=1" \
#     fwd:-DPUSH=1 bwd:-DLAB_BWD bwd-push:"-DLAB_BWD -DPUSH=1"
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mode=$1 dir=$2
case $mode in
build)
  shape=$3; shift 3
  mkdir -p "$dir"
  : > "$dir/order"
  for v in "$@"; do
    name=${v%%:*} defs=${v#*:}
    echo "$name" >> "$dir/order"
    for ph in "" -DLAB_PHASES; do
      tag=$name${ph:+-ph}
      # shellcheck disable=SC2086
      bash "$here/build.sh" "$dir" "$tag" $shape $defs $ph > "$dir/build-$tag.log" 2>&1 \
        || echo "build $tag failed: $(tail -3 "$dir/build-$tag.log")"
    done
  done
  ls "$dir"/lab-* 2>/dev/null | wc -l | xargs echo "harnesses built:"
  ;;
run)
  reps=${3:-30}
  declare -A first
  while read -r name; do
    [ -x "$dir/lab-$name" ] || { echo "== $name: not built"; continue; }
    word=${name%%-*}
    out=$dir/out-$name
    against=()
    [ -n "${first[$word]:-}" ] && against=("${first[$word]}") || first[$word]=$out
    echo "== $name: $(timeout 20 "$dir/lab-$name" "$reps" "$out" "${against[@]}" 2>&1 | grep -v "output mean" | tr '\n' ' ')"
    [ -x "$dir/lab-$name-ph" ] && timeout 20 "$dir/lab-$name-ph" 10 2>&1 | grep -vE "output mean|config"
  done < "$dir/order"
  ;;
*)
  echo "usage: variants.sh build DIR \"SHAPE\" NAME:\"DEFS\" ... | variants.sh run DIR [REPS]" >&2
  exit 2
  ;;
esac
