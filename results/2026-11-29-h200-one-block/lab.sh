#!/usr/bin/env bash
# One LSTM layer at hidden 128 in the lab harness (bf16, 35 steps): a batch group's recurrence in
# 8 blocks of 16 units (the library's one-cluster plan) against fewer, larger blocks, down to one
# block holding every unit (FWD_MG: the forward's warps split the rows; PUSH_WREG / PUSH_KSPLIT:
# the backward's pushed product from registers, K split over warps). `lab.sh OUT`.
set -uo pipefail
out=$1
here=$(cd "$(dirname "$0")" && pwd)
lab=$here/../../scripts/persistent-lab/build.sh
bin=$out/bin
mkdir -p "$bin"
configs=()
for b in 4 8 16 32; do
  configs+=("f-b$b-u16 -DBATCH=$b -DUNITS=16 -DNWARPS=8"
            "f-b$b-u128-w8-mg1 -DBATCH=$b -DUNITS=128 -DNWARPS=8"
            "f-b$b-u128-w8-mg8 -DBATCH=$b -DUNITS=128 -DNWARPS=8 -DFWD_MG=8"
            "f-b$b-u128-w16-mg16 -DBATCH=$b -DUNITS=128 -DNWARPS=16 -DFWD_MG=16"
            "f-b$b-u128-w16-mg8 -DBATCH=$b -DUNITS=128 -DNWARPS=16 -DFWD_MG=8"
            "f-b$b-u64-w8-mg8 -DBATCH=$b -DUNITS=64 -DNWARPS=8 -DFWD_MG=8"
            "f-b$b-u32-w8-mg8 -DBATCH=$b -DUNITS=32 -DNWARPS=8 -DFWD_MG=8"
            "f-b$b-u32-w8-mg1 -DBATCH=$b -DUNITS=32 -DNWARPS=8"
            "b-b$b-u16 -DLAB_BWD -DBATCH=$b -DUNITS=16 -DNWARPS=8"
            "b-b$b-u128-w8 -DLAB_BWD -DBATCH=$b -DUNITS=128 -DNWARPS=8"
            "b-b$b-u128-w8-reg -DLAB_BWD -DBATCH=$b -DUNITS=128 -DNWARPS=8 -DPUSH_WREG=1"
            "b-b$b-u128-w16-k2-reg -DLAB_BWD -DBATCH=$b -DUNITS=128 -DNWARPS=16 -DPUSH_KSPLIT=2 -DPUSH_WREG=1"
            "b-b$b-u128-w16-k2 -DLAB_BWD -DBATCH=$b -DUNITS=128 -DNWARPS=16 -DPUSH_KSPLIT=2"
            "b-b$b-u64-w8-reg -DLAB_BWD -DBATCH=$b -DUNITS=64 -DNWARPS=8 -DPUSH_WREG=1"
            "b-b$b-u64-w16-k2-reg -DLAB_BWD -DBATCH=$b -DUNITS=64 -DNWARPS=16 -DPUSH_KSPLIT=2 -DPUSH_WREG=1"
            "b-b$b-u32-w8-reg -DLAB_BWD -DBATCH=$b -DUNITS=32 -DNWARPS=8 -DPUSH_WREG=1"
            "b-b$b-u32-w8 -DLAB_BWD -DBATCH=$b -DUNITS=32 -DNWARPS=8")
done
build() { set -- $1; n=$1; shift; bash "$lab" "$bin" "$n" -DHID=128 -DONE_CLUSTER=1 -DPUSH=1 -DCH=64 -Xptxas -v "$@" > "$bin/$n.build" 2>&1 || echo "build failed: $n"; }
export -f build; export lab bin
printf '%s\n' "${configs[@]}" | xargs -P 16 -I{} bash -c 'build "{}"'
for c in "${configs[@]}"; do
  n=${c%% *}
  regs=$(grep -o "Used [0-9]* registers" "$bin/$n.build" | head -1)
  spill=$(grep -o "[0-9]* bytes spill stores" "$bin/$n.build" | head -1)
  [ -x "$bin/lab-$n" ] || { echo "$n: no binary"; continue; }
  pass=${n%%-*}; b=$(echo "$n" | cut -d- -f2)
  ref=$out/ref-$pass-$b.bin
  if [ -f "$ref" ]; then r=$("$bin/lab-$n" 30 "$out/$n.out" "$ref" 2>&1); else r=$("$bin/lab-$n" 30 "$ref" 2>&1); fi
  echo "$n | $regs $spill | $(echo "$r" | grep -E 'us per launch|compare|error|fail' | tr '\n' ' ')"
done
rm -rf "$bin"/lab-* "$out"/*.out
