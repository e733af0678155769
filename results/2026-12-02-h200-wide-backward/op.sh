#!/usr/bin/env bash
# On the GPU, from the repository root, with D (scripts/devbin.sh's binaries of the wide backward)
# and OUT set. Parts:
# - `ab`: graphed training (with dx, µs an example) wide / not wide
#   (CANDLE_RNN_PERSISTENT_WIDE_BACKWARD=0) / main's build before the change / wide, at the shapes
#   the rule takes and beside them, f16 (AB_VARIANTS: others) (OUT/ab.txt);
# - `tests`: the new GPU test with the plans shown, and the one-cluster and multicast tests whose
#   hidden-512 cases run wide (OUT/tests-*.log);
# - `sanitize`: compute-sanitizer (memcheck, racecheck, synccheck) on f16 training at small wide
#   shapes (OUT/sanitize.log), with CHECK_BESIDE=1 `check` beside it;
# - `check`: gpu_check --persistent in f16 and bf16 at once (OUT/gpu_check-*.log);
# - `grid`: the half grid through the sink and through `loss.backward()` (OUT/grid-direct/,
#   OUT/grid-plain/).
#   D=.devbin-e OUT=... results/2026-12-02-h200-wide-backward/op.sh tests ab
set -uo pipefail
cd "$(dirname "$0")/../.."
source scripts/on-gpu.sh
# main's bench_grid before the change (.devbin-old-c, carried), for the shapes that do not run wide.
OLD=$PWD/.devbin-old-c/bench_grid
[ -x "$OLD" ] || { xz -dk .devbin-old-c/bench_grid.xz && chmod +x "$OLD"; }
for part in "$@"; do
  case $part in
    ab)
      stamp ab
      graph=--graph
      for v in ${AB_VARIANTS:-op-f16-default}; do
        for spec in lstm:1,32,30,512 gru:1,32,30,512 lstm:1,32,200,512 lstm:1,32,30,1024 gru:1,32,30,1024 \
          lstm:3,128,30,512 gru:3,128,30,512 lstm:3,128,200,512 lstm:1,128,30,512 gru:1,128,30,512 \
          lstm:1,64,30,1024 lstm:2,20,35,1500; do
          split_spec "$v:$spec"
          echo "$v $c $sh | wide $(PHASE=train bench_with X=1)| off $(PHASE=train bench_with CANDLE_RNN_PERSISTENT_WIDE_BACKWARD=0)|" \
            "main $(PHASE=train BENCH_GRID=$OLD bench_with X=1)| wide $(PHASE=train bench_with X=1)"
        done
      done 2>&1 | tee "$OUT/ab.txt"
      ;;
    tests)
      stamp tests
      CANDLE_RNN_PERSISTENT_SHOW_PLANS=1 gpu_tests_as wide persistent_wide_backward
      grep -h "train true" "$OUT/tests-wide.log" | sed 's/.*: Ok(Plan { cell: \([A-Za-z]*\), hidden: \([0-9]*\), batch: \([0-9]*\).*units: \(\[[0-9, ]*\]\), elem: \([A-Za-z0-9]*\).*groups: \([0-9]*\).*wide_backward: \([a-z]*\).*/\1 \2 \3 units \4 \5 groups \6 wide \7/' | sort | uniq | head -20
      gpu_tests_as c16 persistent_clusters_of_16
      gpu_tests_as mcast persistent_multicast_forward
      ;;
    sanitize)
      stamp sanitize
      # (gpu_check beside it, `check`, where CHECK_BESIDE=1: the sanitizers' verdicts do not
      # depend on the GPU's other work.)
      [ "${CHECK_BESIDE:-0}" = 1 ] && { bash "$0" check > "$OUT/check-beside.txt" 2>&1 & }
      SAN_TIMEOUT=200 sanitize_bench "lstm:1,16,3,512 gru:1,32,3,1024 lstm:2,128,3,512" op-f16-default --input-grad
      wait
      ;;
    grid)
      # (GRID_TIMEOUT was 240 when it ran.)
      GRID_TIMEOUT=${GRID_TIMEOUT:-240} half_grid_apis
      ;;
    check)
      stamp check
      gpu_check_half
      ;;
  esac
done
