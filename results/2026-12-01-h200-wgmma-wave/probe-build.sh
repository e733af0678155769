#!/usr/bin/env bash
# Lab builds (the library never has these): bench_grid of the wgmma wavefront's probes, from a
# worktree of the branch at /tmp/probe/wt (`git worktree add --detach /tmp/probe/wt HEAD`), its
# sources patched: p1, the upper layers' recurrence does not wait for its projection; p2, the
# projection blocks do not wait for the layer below; p3, neither. Into
# /work/main/.devbin-probe/bench_grid-pN.xz (for run.sh's `probe`, PROBE=that folder).
set -euo pipefail
cd /tmp/probe/wt
eval "$(bash /work/shared/tools/cuda-build-env.sh)"
mkdir -p /work/main/.devbin-probe
for n in 1 2 3; do
  git checkout -q -- candle-cudnn-rnn
  python3 - "$n" <<'PY'
import sys
n = int(sys.argv[1])
p = 'candle-cudnn-rnn/src/persistent/recurrence_wgmma_fwd.cu'
s = open(p).read()
if n & 1:
    s = s.replace('if (xg_ready) wait_acquire(xg_ready, xg_blocks * (u32)(t + 1));', '// (probe: no wait for the projection)')
open(p, 'w').write(s)
p = 'candle-cudnn-rnn/src/persistent/recurrence_wgmma_wave.cu'
s = open(p).read()
if n & 2:
    s = s.replace('wait_acquire(below + SLOT_WORDS * gr, (u32)(REC_BLOCKS * (t + 2)));', '{}  // (probe: no wait for the layer below)')
open(p, 'w').write(s)
PY
  git diff --stat
  CARGO_TARGET_DIR=/work/main/target cargo build --release -p candle-cudnn-rnn --features cuda --example bench_grid 2>&1 | tail -1
  cp /work/main/target/release/examples/bench_grid /work/main/.devbin-probe/bench_grid-p$n
  strip /work/main/.devbin-probe/bench_grid-p$n
  xz -6 -T2 -f /work/main/.devbin-probe/bench_grid-p$n
done
git checkout -q -- candle-cudnn-rnn
ls -la /work/main/.devbin-probe
