#!/usr/bin/env bash
# On the GPU machine, the wgmma probe's 16-unit steps at batch 32 and 64 with and without the
# group's barrier before a step's copies (-DCHUNK_FLAGS=1: a count per chunk of h), built here by
# `scripts/persistent-lab/wgmma_probe.sh build DIR '(lstm|gru)-b32-regs-full(-flags)?|lstm-b64-regs-full(-flags)?|lstm-b32-regs-full-kc64-flags'`,
# through ../2026-11-30-h200-wgmma-hybrid/run.sh:
#   probe:     each variant's whole step (checked against the f64 reference), products alone and
#              exchange alone into OUT/probe.log;
#   sanitize:  compute-sanitizer memcheck, racecheck and synccheck on the -flags variants' whole
#              step, 4 steps (OUT/sanitize.log, the logs in OUT/sanitize.tgz).
#   results/2026-12-01-h200-wgmma-chunk-flags/run.sh DIR OUT probe|sanitize
here=$(cd "$(dirname "$0")" && pwd)
# With GREEDY=1 the -greedy variants (README §2) in place of the -flags ones.
k=${GREEDY:+greedy}
k=${k:-flags}
VARIANTS="(lstm|gru)-b32-regs-full(-$k)?|lstm-b64-regs-full(-$k)?|lstm-b32-regs-full-kc64-$k" \
  SAN_VARIANTS="lstm-b32-regs-full-$k gru-b32-regs-full-$k lstm-b64-regs-full-$k" \
  exec bash "$here/../2026-11-30-h200-wgmma-hybrid/run.sh" "$@"
