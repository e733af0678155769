#!/usr/bin/env bash
# Row groups (FWD_MG) in the grid barrier's forwards at hidden 512 and 1024 (the library's blocks
# of 16 units, batch groups of 8-32), and lab5.sh's pushed ones again. `lab6.sh OUT`.
set -uo pipefail
out=$1
here=$(cd "$(dirname "$0")" && pwd)
lab=$here/../../scripts/persistent-lab/build.sh
bin=$out/bin
mkdir -p "$bin"
configs=()
for hb in 512:8 512:32 1024:16 1024:32; do
  h=${hb%:*} b=${hb#*:}
  c="-DHID=$h -DBATCH=$b -DUNITS=16 -DNWARPS=8 -DONE_CLUSTER=0 -DPUSH=0"
  configs+=("f-h$h-b$b $c" "f-h$h-b$b-mg2 $c -DFWD_MG=2" "f-h$h-b$b-mg4 $c -DFWD_MG=4" "f-h$h-b$b-again $c")
done
for hb in 128:4 128:8 128:16 128:32; do
  h=${hb%:*} b=${hb#*:} u=$((h / 8))
  c="-DHID=$h -DBATCH=$b -DUNITS=$u -DNWARPS=8"
  configs+=("f-h$h-b$b $c" "f-h$h-b$b-spread $c -DPUSH_SPREAD" "f-h$h-b$b-mg2 $c -DFWD_MG=2"
            "f-h$h-b$b-spread-mg2 $c -DPUSH_SPREAD -DFWD_MG=2" "f-h$h-b$b-again $c" "f-h$h-b$b-spread-again $c -DPUSH_SPREAD")
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
for f in "$out"/?P-*.txt; do echo "== $f"; grep -v "^config\|us per\|output mean\|compare" "$f" | head -20; done
for c in "${configs[@]}"; do n=${c%% *}; grep -q "us per launch" "$out/$n.txt" 2>/dev/null || { echo "== $n"; tail -5 "$out/$n.txt"; }; done
rm -rf "$bin"/lab-* "$out"/*.out "$out"/*.bin
