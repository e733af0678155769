#!/usr/bin/env bash
# On the GPU machine, the wgmma probe's variants built here by
# `scripts/persistent-lab/wgmma_probe.sh build DIR '.*-regs-full|lstm-b32-hybrid-kc128-full|lstm-g4-hybrid-kc128-full'`,
# through ../2026-11-30-h200-wgmma-hybrid/run.sh:
#   probe:     each variant's whole step (checked against the f64 reference), products alone and
#              exchange alone into OUT/probe.log;
#   sanitize:  compute-sanitizer memcheck, racecheck and synccheck on the -regs variants' whole
#              step, 4 steps (OUT/sanitize.log, the logs in OUT/sanitize.tgz).
#   results/2026-11-30-h200-wgmma-batch32/run.sh DIR OUT probe|sanitize
here=$(cd "$(dirname "$0")" && pwd)
VARIANTS='.*-regs-full|lstm-b32-hybrid-kc128-full|lstm-g4-hybrid-kc128-full' \
  SAN_VARIANTS='lstm-b32-regs-full gru-b32-regs-full lstm-b64-regs-full' \
  exec bash "$here/../2026-11-30-h200-wgmma-hybrid/run.sh" "$@"
