#!/usr/bin/env bash
# What the pushed backward's loads for the next step cost (timings only: -DLAB_SKIP_NEXT makes
# none, -DLAB_SKIP_DY leaves dy unconverted; both give wrong results). `lab7.sh OUT`.
set -uo pipefail
out=$1
here=$(cd "$(dirname "$0")" && pwd)
lab=$here/../../scripts/persistent-lab/build.sh
bin=$out/bin
mkdir -p "$bin"
configs=()
for hb in 128:4 128:16; do
  h=${hb%:*} b=${hb#*:} u=$((h / 8))
  c="-DLAB_BWD -DHID=$h -DBATCH=$b -DUNITS=$u -DNWARPS=8 -DLAB_PHASES -DLAB_FINE"
  configs+=("bP-h$h-b$b $c" "bP-h$h-b$b-skipnext $c -DLAB_SKIP_NEXT" "bP-h$h-b$b-skipdy $c -DLAB_SKIP_DY"
            "bP-h$h-b$b-x2 $c -DX_AHEAD=2" "bP-h$h-b$b-x2-skipdy $c -DX_AHEAD=2 -DLAB_SKIP_DY")
done
build() { set -- $1; n=$1; shift; bash "$lab" "$bin" "$n" -DCH=64 -Xptxas -v $( [[ "$*" == *ONE_CLUSTER=0* ]] || echo -DONE_CLUSTER=1 -DPUSH=1 ) "$@" > "$bin/$n.build" 2>&1 || echo "build failed: $n"; }
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
for f in "$out"/bP-*.txt; do echo "== $f"; grep -E "us per|phase|timer" "$f"; done
rm -rf "$bin"/lab-* "$out"/*.out "$out"/*.bin
