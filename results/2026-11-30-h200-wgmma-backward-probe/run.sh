#!/usr/bin/env bash
# On the GPU machine: the lab's wgmma backward step (scripts/persistent-lab/wgmma_bwd_probe.cu,
# built here into DIR/wbp.xz by `run.sh DIR - build`):
#   probe:    its check against the f64 reference after 3 steps, then ns a step over 300 steps
#             (OUT/probe.log);
#   sanitize: compute-sanitizer memcheck, racecheck and synccheck on 4 steps (OUT/sanitize.log).
#   results/2026-11-30-h200-wgmma-backward-probe/run.sh DIR OUT probe|sanitize|build
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2 PART=$3
if [ "$PART" = build ]; then
  mkdir -p "$D"
  nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a scripts/persistent-lab/wgmma_bwd_probe.cu -o "$D/wbp"
  xz -f "$D/wbp"
  exit
fi
mkdir -p "$OUT"
[ -x "$D/wbp" ] || { xz -dkf "$D/wbp.xz"; chmod +x "$D/wbp"; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/gpu.txt"
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n 1)
case $PART in
probe) timeout 120 "$D/wbp" 300 3 2>&1 | tee "$OUT/probe.log" ;;
sanitize)
  for tool in memcheck racecheck synccheck; do
    timeout 120 "$CS" --tool $tool --print-limit 20 "$D/wbp" 4 0 > "$OUT/cs-$tool.log" 2>&1
    echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/cs-$tool.log" | tail -1)"
  done 2>&1 | tee "$OUT/sanitize.log"
  ;;
*) echo "unknown part $PART" >&2; exit 2 ;;
esac
