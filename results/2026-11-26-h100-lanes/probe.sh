#!/usr/bin/env bash
# On the GPU machine, `scripts/persistent-lab/gemm_probe.cu` built here (nvcc -O2 -arch=sm_90a
# against the nvidia-cublas 13.0 wheel) into DIR/gemm_probe: the layer's three products at the
# sizes of a seq-30 call at batch 32 (GRU hidden 512 and 1024, LSTM 512, GRU 128) and of seq 200
# (GRU 512), each alone with cublasGemmEx and with every algorithm cuBLASLt's heuristic offers.
#   results/2026-11-26-h100-lanes/probe.sh DIR
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=${2:-/tmp}
source scripts/on-gpu.sh
for s in "960 1536 512 512" "960 3072 1024 1024" "960 2048 512 512" "960 384 128 128" "6400 1536 512 512"; do
  echo "== $s"
  timeout 100 "$D/gemm_probe" $s 2>&1 | grep -v "1500-wide\|rows of 1500\|1500 wide"
done
