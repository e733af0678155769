#!/usr/bin/env bash
# Follow-up of lab.sh: the pushed forward with its K steps in one part (PARTS=1: no copies to
# overlap, so one barrier of the row groups a step), phase clocks (-DLAB_PHASES), and each
# run's whole output. `lab2.sh OUT`.
set -uo pipefail
out=$1
here=$(cd "$(dirname "$0")" && pwd)
lab=$here/../../scripts/persistent-lab/build.sh
bin=$out/bin
mkdir -p "$bin"
configs=()
for b in 4 8; do
  configs+=("f-b$b-u16 -DBATCH=$b -DUNITS=16 -DNWARPS=8"
            "f-b$b-u16-p1 -DBATCH=$b -DUNITS=16 -DNWARPS=8 -DPARTS=1"
            "f-b$b-u128-w8-mg8-p1 -DBATCH=$b -DUNITS=128 -DNWARPS=8 -DFWD_MG=8 -DPARTS=1"
            "f-b$b-u128-w16-mg16-p1 -DBATCH=$b -DUNITS=128 -DNWARPS=16 -DFWD_MG=16 -DPARTS=1"
            "f-b$b-u64-w8-mg8-p1 -DBATCH=$b -DUNITS=64 -DNWARPS=8 -DFWD_MG=8 -DPARTS=1"
            "f-b$b-u64-w8-mg1-p1 -DBATCH=$b -DUNITS=64 -DNWARPS=8 -DPARTS=1"
            "f-b$b-u32-w8-mg8-p1 -DBATCH=$b -DUNITS=32 -DNWARPS=8 -DFWD_MG=8 -DPARTS=1"
            "f-b$b-u32-w8-mg2-p1 -DBATCH=$b -DUNITS=32 -DNWARPS=8 -DFWD_MG=2 -DPARTS=1"
            "fP-b$b-u16 -DBATCH=$b -DUNITS=16 -DNWARPS=8 -DLAB_PHASES"
            "fP-b$b-u64-w8-mg8-p1 -DBATCH=$b -DUNITS=64 -DNWARPS=8 -DFWD_MG=8 -DPARTS=1 -DLAB_PHASES"
            "fP-b$b-u128-w8-mg8-p1 -DBATCH=$b -DUNITS=128 -DNWARPS=8 -DFWD_MG=8 -DPARTS=1 -DLAB_PHASES"
            "b-b$b-u16 -DLAB_BWD -DBATCH=$b -DUNITS=16 -DNWARPS=8"
            "b-b$b-u128-w16-k2-reg -DLAB_BWD -DBATCH=$b -DUNITS=128 -DNWARPS=16 -DPUSH_KSPLIT=2 -DPUSH_WREG=1"
            "b-b$b-u128-w8-reg -DLAB_BWD -DBATCH=$b -DUNITS=128 -DNWARPS=8 -DPUSH_WREG=1"
            "b-b$b-u16-reg -DLAB_BWD -DBATCH=$b -DUNITS=16 -DNWARPS=8 -DPUSH_WREG=1"
            "b-b$b-u16-w16-k2-reg -DLAB_BWD -DBATCH=$b -DUNITS=16 -DNWARPS=16 -DPUSH_KSPLIT=2 -DPUSH_WREG=1")
done
build() { set -- $1; n=$1; shift; bash "$lab" "$bin" "$n" -DHID=128 -DONE_CLUSTER=1 -DPUSH=1 -DCH=64 -Xptxas -v "$@" > "$bin/$n.build" 2>&1 || echo "build failed: $n"; }
export -f build; export lab bin
printf '%s\n' "${configs[@]}" | xargs -P 16 -I{} bash -c 'build "{}"'
for c in "${configs[@]}"; do
  n=${c%% *}
  regs=$(grep -o "Used [0-9]* registers" "$bin/$n.build" | head -1)
  spill=$(grep -o "[0-9]* bytes spill stores" "$bin/$n.build" | head -1)
  [ -x "$bin/lab-$n" ] || { echo "$n: no binary"; tail -3 "$bin/$n.build"; continue; }
  pass=${n%%-*}; pass=${pass%P}; b=$(echo "$n" | cut -d- -f2)
  ref=$out/ref-$pass-$b.bin
  if [ -f "$ref" ]; then "$bin/lab-$n" 30 "$out/$n.out" "$ref" > "$out/$n.txt" 2>&1; else "$bin/lab-$n" 30 "$ref" > "$out/$n.txt" 2>&1; fi
  echo "$n | $regs $spill | rc $? | $(grep -E 'us per launch|compare' "$out/$n.txt" | tr '\n' ' ')"
done
for f in "$out"/fP-*.txt; do echo "== $f"; grep -v "^config\|us per\|output mean\|compare" "$f" | head -20; done
for c in "${configs[@]}"; do n=${c%% *}; grep -q "us per launch" "$out/$n.txt" 2>/dev/null || { echo "== $n"; tail -5 "$out/$n.txt"; }; done
rm -rf "$bin"/lab-* "$out"/*.out "$out"/*.bin
