#!/usr/bin/env bash
# Phase clocks within the pushed steps (-DLAB_FINE: forward p5 before the cell's math, p7 after
# it; backward p3 the product's start, p4 its end, p5 after the gate gradients' stores). `lab4.sh OUT`.
set -uo pipefail
out=$1
here=$(cd "$(dirname "$0")" && pwd)
lab=$here/../../scripts/persistent-lab/build.sh
bin=$out/bin
mkdir -p "$bin"
configs=()
for hb in 128:4 128:32 256:8; do
  h=${hb%:*} b=${hb#*:} u=$((h / 8))
  configs+=("f-h$h-b$b-u$u -DHID=$h -DBATCH=$b -DUNITS=$u -DNWARPS=8"
            "fP-h$h-b$b-u$u -DHID=$h -DBATCH=$b -DUNITS=$u -DNWARPS=8 -DLAB_PHASES -DLAB_FINE"
            "b-h$h-b$b-u$u -DLAB_BWD -DHID=$h -DBATCH=$b -DUNITS=$u -DNWARPS=8"
            "bP-h$h-b$b-u$u -DLAB_BWD -DHID=$h -DBATCH=$b -DUNITS=$u -DNWARPS=8 -DLAB_PHASES -DLAB_FINE")
done
build() { set -- $1; n=$1; shift; bash "$lab" "$bin" "$n" -DONE_CLUSTER=1 -DPUSH=1 -DCH=64 -Xptxas -v "$@" > "$bin/$n.build" 2>&1 || echo "build failed: $n"; }
export -f build; export lab bin
printf '%s\n' "${configs[@]}" | xargs -P 16 -I{} bash -c 'build "{}"'
for c in "${configs[@]}"; do
  n=${c%% *}
  regs=$(grep -o "Used [0-9]* registers" "$bin/$n.build" | head -1)
  spill=$(grep -o "[0-9]* bytes spill stores" "$bin/$n.build" | head -1)
  [ -x "$bin/lab-$n" ] || { echo "$n: no binary"; tail -3 "$bin/$n.build"; continue; }
  pass=${n%%-*}; pass=${pass%P}; b=$(echo "$n" | cut -d- -f2-3)
  ref=$out/ref-$pass-$b.bin
  if [ -f "$ref" ]; then "$bin/lab-$n" 30 "$out/$n.out" "$ref" > "$out/$n.txt" 2>&1; else "$bin/lab-$n" 30 "$ref" > "$out/$n.txt" 2>&1; fi
  echo "$n | $regs $spill | rc $? | $(grep -E 'us per launch|compare' "$out/$n.txt" | tr '\n' ' ')"
done
for f in "$out"/?P-*.txt; do echo "== $f"; grep -v "^config\|us per\|output mean\|compare" "$f" | head -20; done
for c in "${configs[@]}"; do n=${c%% *}; grep -q "us per launch" "$out/$n.txt" 2>/dev/null || { echo "== $n"; tail -5 "$out/$n.txt"; }; done
rm -rf "$bin"/lab-* "$out"/*.out "$out"/*.bin
