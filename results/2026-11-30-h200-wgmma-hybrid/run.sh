#!/usr/bin/env bash
# On the GPU machine, the wgmma probe's variants built here by
# `scripts/persistent-lab/wgmma_probe.sh build DIR '.*-hybrid.*|lstm-g2-kc128|gru-g2-kc128-s6'`:
#   probe:     each variant's whole step (checked against the f64 reference), products alone and
#              exchange alone (wgmma_probe.sh run) into OUT/probe.log;
#   sanitize:  compute-sanitizer memcheck, racecheck and synccheck on the hybrids' whole step
#              (LSTM and GRU with the input projection and y, and LSTM at batch 32), 4 steps
#              (OUT/sanitize.log, the logs in OUT/sanitize.tgz).
# VARIANTS (a regular expression) and SAN_VARIANTS (names) choose others (../2026-11-30-h200-wgmma-batch32/).
#   results/2026-11-30-h200-wgmma-hybrid/run.sh DIR OUT probe|sanitize
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2 PART=$3
mkdir -p "$OUT"
for f in "$D"/*.xz; do [ -e "$f" ] || continue; [ -x "${f%.xz}" ] || { xz -dkf -T8 "$f"; chmod +x "${f%.xz}"; }; done
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/gpu.txt"
case $PART in
probe)
  bash scripts/persistent-lab/wgmma_probe.sh run "$D" "${VARIANTS:-.*-hybrid.*|lstm-g2-kc128|gru-g2-kc128-s6}" 2>&1 | tee "$OUT/probe.log"
  ;;
sanitize)
  CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n 1)
  for v in ${SAN_VARIANTS:-lstm-g4-hybrid-full gru-g4-hybrid-full lstm-b32-hybrid}; do
    for tool in memcheck racecheck synccheck; do
      log="$OUT/cs-$tool-$v.log"
      timeout 150 "$CS" --tool $tool --print-limit 20 "$D/wp-$v" 4 1 1 3 > "$log" 2>&1
      echo "$tool $v rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1 | sed 's/^=* *//') | $(grep -E '^check' "$log")"
    done
  done 2>&1 | tee "$OUT/sanitize.log"
  (cd "$OUT" && tar czf sanitize.tgz cs-*.log && rm -f cs-*.log)
  ;;
*) echo "unknown part $PART" >&2; exit 2 ;;
esac
