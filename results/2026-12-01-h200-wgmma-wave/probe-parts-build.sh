#!/usr/bin/env bash
# Lab builds (the library never has these): bench_grid of the wgmma wavefront with one part of
# its projection blocks' work left out, from a worktree of the branch at /tmp/probe/wt
# (`git worktree add --detach /tmp/probe/wt HEAD`): p7 without their loads of the input (the
# products read stale shared memory), p8 without their stores of xg, p9 without their products,
# p10 and p11 loading only the first 1 and 2 of each step's 4 chunks of input (a quarter and a
# half of the reads: what multicast over clusters of 4 and 2 would leave) (wrong results by
# design; every wait kept). Into /work/main/.devbin-probe3/bench_grid-pN.xz,
# beside that revision's bench_grid.xz (for run.sh's `projection-parts`, PROBE=that folder).
set -euo pipefail
cd /tmp/probe/wt
eval "$(bash /work/shared/tools/cuda-build-env.sh)"
dest=/work/main/.devbin-probe3
mkdir -p "$dest"
build() {  # $1: the name to copy the build to
  CARGO_TARGET_DIR=/work/main/target cargo build --release -p candle-cudnn-rnn --features cuda --example bench_grid 2>&1 | tail -1
  cp /work/main/target/release/examples/bench_grid "$dest/$1"
  strip "$dest/$1"
  xz -6 -T2 -f "$dest/$1"
}
git checkout -q -- candle-cudnn-rnn
build bench_grid
for n in 7 8 9 10 11; do
  git checkout -q -- candle-cudnn-rnn
  python3 - "$n" <<'PY'
import sys
n = int(sys.argv[1])
p = 'candle-cudnn-rnn/src/persistent/recurrence_wgmma_wave.cu'
s = open(p).read()
load = 'cp_async16((u16*)(slot + h_offset(m, kk)), (const u16*)(in_t + (size_t)m * HID + KC * c + kk));'
cut = {
    7: load,
    8: ['out[o] = from_f(v);', 'out[o] = v;'],
    9: 'wgmma_ss_n64(acc[tile], ws, hb, (c | kk) != 0);',
}.get(n)
for c in (cut if isinstance(cut, list) else [cut] if cut else []):
    assert c in s, c
    s = s.replace(c, '(void)0;  // (probe: left out)')
if n in (10, 11):
    assert load in s
    s = s.replace(load, 'if (c < %d) %s  // (probe: the first chunks only)' % (n - 9, load))
open(p, 'w').write(s)
PY
  git diff --stat
  build bench_grid-p$n
done
git checkout -q -- candle-cudnn-rnn
cp /work/shared/tools/gpu-env.sh "$dest/"
ls -la "$dest"
