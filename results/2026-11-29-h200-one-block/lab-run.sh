# Sourced by this folder's lab scripts once they have set `configs` (each "NAME -D..." with NAME
# "PASS-hH-bB[-...]": PASS f or b, P appended for a build with phase clocks) and `out`: builds
# every config with scripts/persistent-lab/build.sh from `tree` (default: this checkout), each
# with `-DONE_CLUSTER=1 -DPUSH=1` unless it says ONE_CLUSTER=0, 16 at once; runs each 30 times,
# the first of each PASS-hH-bB writing the reference output the others are compared with; prints
# per config its registers, spills, µs a launch, comparison and phase clocks.
tree=${tree:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
bin=$out/bin
mkdir -p "$bin"
build() {
  set -- $1; local n=$1; shift
  local one="-DONE_CLUSTER=1 -DPUSH=1"
  [[ "$*" == *ONE_CLUSTER=0* ]] && one=""
  bash "$tree/scripts/persistent-lab/build.sh" "$bin" "$n" -DCH=64 -Xptxas -v $one "$@" > "$bin/$n.build" 2>&1 \
    || echo "build failed: $n"
}
export -f build; export tree bin
printf '%s\n' "${configs[@]}" | xargs -P 16 -I{} bash -c 'build "{}"'
for c in "${configs[@]}"; do
  n=${c%% *}
  regs=$(grep -o "Used [0-9]* registers" "$bin/$n.build" | head -1)
  spill=$(grep -o "[0-9]* bytes spill stores" "$bin/$n.build" | head -1)
  [ -x "$bin/lab-$n" ] || { echo "$n: no binary"; tail -3 "$bin/$n.build"; continue; }
  pass=${n%%-*}; pass=${pass%P}; shape=$(echo "$n" | cut -d- -f2-3)
  ref=$out/ref-$pass-$shape.bin
  if [ -f "$ref" ]; then "$bin/lab-$n" 30 "$out/$n.out" "$ref" > "$out/$n.txt" 2>&1
  else "$bin/lab-$n" 30 "$ref" > "$out/$n.txt" 2>&1; fi
  echo "$n | $regs $spill | rc $? | $(grep -E 'us per launch|compare|phase|step|error' "$out/$n.txt" \
    | sed -e 's/phase cycles after phase 0[^:]*://' -e 's/us per launch: //' | tr '\n' ' ')"
done
rm -rf "$bin" "$out"/*.out "$out"/*.bin
