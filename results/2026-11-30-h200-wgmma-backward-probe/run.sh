#!/usr/bin/env bash
# On the GPU machine: the lab's wgmma backward step (scripts/persistent-lab/wgmma_bwd_probe.cu,
# built here into DIR/wbp.xz (LSTM), DIR/wbp-gru.xz (-DCELL_GRU), both with -DPARTIAL_BF16=1
# (wbp-bf.xz, wbp-gru-bf.xz) and with -DDG_ROWS=2 (wbp-dg2.xz, wbp-gru-dg2.xz) by
# `run.sh DIR - build`; the probe's options at that commit):
#   probe:    each one's check against the f64 reference after 3 steps, then ns a step over 300
#             steps and the phases (OUT/probe.log);
#   sanitize: compute-sanitizer memcheck, racecheck and synccheck on 4 steps of each
#             (OUT/sanitize.log).
# The builds to run are NAMES (wbp and wbp-gru unless given).
#   results/2026-11-30-h200-wgmma-backward-probe/run.sh DIR OUT probe|sanitize|build [NAMES...]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2 PART=$3
shift 3
names=${*:-wbp wbp-gru}
if [ "$PART" = build ]; then
  mkdir -p "$D"
  for name in wbp wbp-gru wbp-bf wbp-gru-bf wbp-dg2 wbp-gru-dg2; do
    flags=
    case $name in *gru*) flags=-DCELL_GRU ;; esac
    case $name in *bf) flags="$flags -DPARTIAL_BF16=1" ;; esac
    case $name in *dg2) flags="$flags -DDG_ROWS=2" ;; esac
    nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a $flags scripts/persistent-lab/wgmma_bwd_probe.cu -o "$D/$name"
    xz -f "$D/$name"
  done
  exit
fi
mkdir -p "$OUT"
for f in "$D"/wbp*.xz; do [ -x "${f%.xz}" ] || { xz -dkf "$f"; chmod +x "${f%.xz}"; }; done
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/gpu.txt"
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n 1)
case $PART in
probe) for b in $names; do echo "== $b"; timeout 120 "$D/$b" 300 3; done 2>&1 | tee "$OUT/probe.log" ;;
sanitize)
  for b in $names; do
    for tool in memcheck racecheck synccheck; do
      timeout 120 "$CS" --tool $tool --print-limit 20 "$D/$b" 4 0 > "$OUT/cs-$tool-$b.log" 2>&1
      echo "$b $tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/cs-$tool-$b.log" | tail -1)"
    done
  done 2>&1 | tee "$OUT/sanitize.log"
  ;;
*) echo "unknown part $PART" >&2; exit 2 ;;
esac
