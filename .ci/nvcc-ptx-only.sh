#!/usr/bin/env bash
# nvcc for CI's CUDA compile check (.ci/run sets it as NVCC, and the real one as
# CI_REAL_NVCC): the same sources and flags, but device code goes only as far as unoptimized
# PTX: cicc at -O0, and `code=compute_XX` in place of `code=sm_XX`, so that ptxas makes no
# machine code. CI runs none of the dependencies' kernels, and candle-kernels' build script
# (about 20 files through nvcc, its quantized and MoE kernels among them) was the longest step
# of the CUDA build; the crates' own CUDA sources go through NVRTC and ptxas in
# scripts/check-kernels.py.
set -euo pipefail
nvcc=${CI_REAL_NVCC:?the real nvcc}
args=()
compiles=0
for a in "$@"; do
  case $a in
    -gencode=arch=compute_*,code=sm_*) args+=("${a/code=sm_/code=compute_}") ;;
    -c | --ptx | -ptx) compiles=1; args+=("$a") ;;
    *) args+=("$a") ;;
  esac
done
# Anything else (a version query) goes to nvcc as it is.
[ $compiles = 1 ] || exec "$nvcc" "$@"
exec "$nvcc" "${args[@]}" -Xcicc -O0
