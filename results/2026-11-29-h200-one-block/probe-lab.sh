#!/usr/bin/env bash
# After the dy fix (dy.diff): where the pushed steps' time goes now, in the lab harness, on a copy
# of the tree with probe.diff (lab-only switches: -DLAB_FINE phase marks inside the step,
# forward p5 before the cell's math and p7 after it, backward p3 the product's start, p4 its
# end, p5 after the gate gradients' stores; -DLAB_SKIP_OUT no forward outputs, -DLAB_SKIP_X no
# next input projection, -DLAB_SKIP_NEXT no backward loads for the next step: timings only;
# -DPUSH_WREG=1 the backward's pushed product from registers, -DPUSH_KSPLIT=2 its K over two
# warps). `probe-lab.sh OUT`.
set -uo pipefail
out=$1
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
tree=$out/tree bin=$out/bin
mkdir -p "$tree" "$bin"
cp -r "$root/candle-cudnn-rnn" "$root/scripts" "$tree/"
(cd "$tree" && patch -s -p1 < "$here/probe.diff") || { echo "patch failed"; exit 1; }
configs=()
for hb in 128:4 128:16 256:8; do
  h=${hb%:*} b=${hb#*:} u=$((h / 8))
  c="-DHID=$h -DBATCH=$b -DUNITS=$u -DNWARPS=8 -DONE_CLUSTER=1 -DPUSH=1"
  configs+=("b-h$h-b$b $c -DLAB_BWD" "b-h$h-b$b-wreg $c -DLAB_BWD -DPUSH_WREG=1"
            "b-h$h-b$b-k2 $c -DLAB_BWD -DPUSH_WREG=1 -DPUSH_KSPLIT=2 -DNWARPS=16"
            "b-h$h-b$b-again $c -DLAB_BWD" "b-h$h-b$b-wreg-again $c -DLAB_BWD -DPUSH_WREG=1"
            "bP-h$h-b$b $c -DLAB_BWD -DLAB_PHASES -DLAB_FINE"
            "bP-h$h-b$b-wreg $c -DLAB_BWD -DLAB_PHASES -DLAB_FINE -DPUSH_WREG=1"
            "bP-h$h-b$b-skipnext $c -DLAB_BWD -DLAB_PHASES -DLAB_FINE -DLAB_SKIP_NEXT"
            "f-h$h-b$b $c" "fP-h$h-b$b $c -DLAB_PHASES -DLAB_FINE"
            "fP-h$h-b$b-skipout $c -DLAB_PHASES -DLAB_FINE -DLAB_SKIP_OUT"
            "fP-h$h-b$b-skipx $c -DLAB_PHASES -DLAB_FINE -DLAB_SKIP_X")
done
build() { set -- $1; n=$1; shift; bash "$tree/scripts/persistent-lab/build.sh" "$bin" "$n" -DCH=64 -Xptxas -v "$@" > "$bin/$n.build" 2>&1 || echo "build failed: $n"; }
export -f build; export tree bin
printf '%s\n' "${configs[@]}" | xargs -P 16 -I{} bash -c 'build "{}"'
for c in "${configs[@]}"; do
  n=${c%% *}
  regs=$(grep -o "Used [0-9]* registers" "$bin/$n.build" | head -1)
  spill=$(grep -o "[0-9]* bytes spill stores" "$bin/$n.build" | head -1)
  [ -x "$bin/lab-$n" ] || { echo "$n: no binary"; tail -3 "$bin/$n.build"; continue; }
  pass=${n%%-*}; pass=${pass%P}; b=$(echo "$n" | cut -d- -f2-3)
  ref=$out/ref-$pass-$b.bin
  if [ -f "$ref" ]; then "$bin/lab-$n" 30 "$out/$n.out" "$ref" > "$out/$n.txt" 2>&1; else "$bin/lab-$n" 30 "$ref" > "$out/$n.txt" 2>&1; fi
  echo "$n | $regs $spill | $(grep -E 'us per launch|compare|phase|step' "$out/$n.txt" | sed -e 's/phase cycles after phase 0[^:]*://' -e 's/us per launch: //' | tr '\n' ' ')"
done
rm -rf "$bin" "$tree" "$out"/*.out "$out"/*.bin
