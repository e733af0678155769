#!/usr/bin/env bash
# Next session's first H200 command (about 6 minutes), from main's tree with the builds carried:
#   1. main's GPU tests (MAIN: .devbin-s55m, built from b293450; the wgmma forward from batch 64
#      and its module with wgmma.cuh had not run on a GPU);
#   2. the register-gates branch (NEW: .devbin-regs): its wgmma test and sanitizers, then the
#      forwards new / old (MAIN) / new (./run.sh check, ab);
#   3. the lab's batch-32 step with every row in registers (LAB: .devbin-regs-lab,
#      ../2026-11-30-h200-wgmma-batch32/run.sh probe).
# Everything goes into OUT/next.tgz, the verdicts into OUT/summary.txt.
#   results/2026-11-30-h200-wgmma-register-gates/next.sh MAIN NEW LAB OUT
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
MAIN=$1 NEW=$2 LAB=$3 OUT=$4
mkdir -p "$OUT/main" "$OUT/regs" "$OUT/lab"
{
  bash -c "D=$MAIN OUT=$OUT/main; source scripts/on-gpu.sh; stamp 'main: GPU tests'; gpu_tests"
  bash "$here/run.sh" "$NEW" "$MAIN" "$OUT/regs" check
  bash "$here/run.sh" "$NEW" "$MAIN" "$OUT/regs" ab
  bash results/2026-11-30-h200-wgmma-batch32/run.sh "$LAB" "$OUT/lab" probe | grep -E "^==|^WREG|check"
} > "$OUT/summary.txt" 2>&1
(cd "$OUT" && tar czf next.tgz main regs lab && rm -rf main regs lab)
cat "$OUT/summary.txt"
