#!/usr/bin/env bash
# On the GPU, from the repository root, after lab.sh's §8-11 builds (carry the .lab-p16-*, .lab-sl*, .lab-wr* and
# .lab-bm* folders, stripped: about 40 MB, over what the device takes beside the tracked tree, so
# in two calls, the script skipping the folders not carried): each folder's
# variants (variants.sh run, their outputs against the first variant's), then compute-sanitizer
# on the new variants at small shapes, into $OUT; with .lab-p (lab.sh §2's build) the probe's
# modes, mode 4 (plain remote stores and one arrival a block) for the first time.
#   results/2026-12-02-h200-push-bandwidth/run-next.sh
set -u
for d in .lab-p16-128-4 .lab-p16-128-16 .lab-p16-256-4 .lab-p16-64-4 .lab-bm512 .lab-bm384 .lab-bm256 \
  .lab-sl512 .lab-sl384 .lab-sl256 .lab-wr512 .lab-wr384; do
  [ -d "$d" ] || continue
  echo "### $d"
  bash scripts/persistent-lab/variants.sh run "$d" 30 2>&1 | grep -v "^prologue"
done > "$OUT/lab.txt" 2>&1
cat "$OUT/lab.txt"
[ -x .lab-p/push_probe ] && { .lab-p/push_probe 16 512 0 1000 2000; .lab-p/push_probe 16 1024 0 2000; } 2>&1 | tee "$OUT/probe.txt"
CSAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer | head -n 1)
for tool in memcheck racecheck synccheck; do
  for run in .lab-p16-128-4/lab-fwd-16 .lab-bm256/lab-bwd-bm .lab-sl256/lab-fwd-sl; do
    [ -x "$run" ] || continue
    echo "== $tool $run: $(cd "$(dirname "$run")" && timeout 90 "$CSAN" --tool $tool "./$(basename "$run")" 1 2>&1 \
      | grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' | head -2 | tr '\n' ' ')"
  done
done 2>&1 | tee "$OUT/sanitize.txt"
