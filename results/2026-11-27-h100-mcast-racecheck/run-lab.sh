#!/usr/bin/env bash
# On the GPU machine: the forward's multicast in the harness under compute-sanitizer. LAB holds
# builds of scripts/persistent-lab/build.sh (hidden 512, 8 units a block, 5 steps, bf16):
#   build.sh LAB b20m8 -DHID=512 -DUNITS=8 -DLAB_T=5 -DBATCH=20 -DMCAST=8
#   build.sh LAB b40m2 -DHID=512 -DUNITS=8 -DLAB_T=5 -DBATCH=40 -DMCAST=2
#   build.sh LAB b40m8 -DHID=512 -DUNITS=8 -DLAB_T=5 -DBATCH=40 -DMCAST=8
#   results/2026-11-27-h100-mcast-racecheck/run-lab.sh LAB OUT
set -uo pipefail
LAB=$1 OUT=$2
mkdir -p "$OUT"
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n 1)
for lab in b20m8 b40m2 b40m8; do
  for tool in racecheck memcheck; do
    echo "[$(date +%T)] $lab $tool"
    timeout 90 "$CS" --tool $tool "$LAB/lab-$lab" 1 > "$OUT/lab-$lab-$tool.log" 2>&1
    echo "rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|output mean" "$OUT/lab-$lab-$tool.log"
  done
done
# Every hazard's address and threads (the first 40).
timeout 90 "$CS" --tool racecheck --racecheck-report hazard --print-limit 40 "$LAB/lab-b40m2" 1 \
  > "$OUT/lab-b40m2-racecheck-hazards.log" 2>&1
