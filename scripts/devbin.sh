#!/usr/bin/env bash
# Builds, on a machine without a GPU, what a GPU machine without Rust runs: ptb-lm, its CUDA
# unit tests (ptb-lm-tests), the op's GPU tests (op-gpu-tests: candle-cudnn-rnn/tests/gpu),
# gpu_check and bench_grid, stripped and xz-compressed into DIR with ../shared/tools/gpu-env.sh;
# with --old REV also old-ptb-lm and old-bench_grid built from REV (a git worktree on the same
# target directory, so only the workspace's crates build twice); with CUBLAS_DIR (cuBLAS's
# include/ and lib/, e.g. the nvidia-cublas wheel unpacked) also the GEMM probe
# (scripts/persistent-lab/gemm_probe.cu); with .kernel-cache/kernel-cache.txz (a GPU run's
# OUT/kernel-cache.txz, saved) also that, for scripts/on-gpu.sh. On the GPU machine:
# `source DIR/gpu-env.sh` and `xz -dk DIR/*.xz`; the op's GPU tests then run with
# `RNN_TEST_REQUIRE_GPU=1 DIR/op-gpu-tests --nocapture --test-threads=1`. Needs the CUDA build
# kit (../shared/tools/cuda-build-env.sh, run by this script).
#   scripts/devbin.sh DIR [--old REV]
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$1; shift
old=""
while [ $# -gt 0 ]; do
  case $1 in
    --old) old=$2; shift 2 ;;
    *) echo "usage: $0 DIR [--old REV]" >&2; exit 2 ;;
  esac
done
eval "$(bash ../shared/tools/cuda-build-env.sh)"
mkdir -p "$dir"
target=$PWD/target
build() {  # $1: the workspace's Cargo.toml
  cargo build --release --manifest-path "$1" -p candle-cudnn-rnn -p ptb-lm \
    --features candle-cudnn-rnn/cuda,ptb-lm/cuda --bins --examples
}
if [ -n "$old" ]; then
  tree=$(mktemp -d)/old
  git worktree add --detach "$tree" "$old" >/dev/null
  CARGO_TARGET_DIR=$target build "$tree/Cargo.toml"
  cp target/release/ptb-lm "$dir/old-ptb-lm"
  cp target/release/examples/bench_grid "$dir/old-bench_grid"
  git worktree remove --force "$tree"
fi
# Cargo copies a binary to target/release only when it builds it: after the old revision's
# build there, a fresh (unchanged) workspace would leave the old binaries in place. Touching the
# crates' roots rebuilds them (half a minute), and with them the binaries.
touch candle-cudnn-rnn/src/lib.rs ptb-lm/src/main.rs
build Cargo.toml
cp target/release/ptb-lm "$dir/ptb-lm"
cp target/release/examples/bench_grid target/release/examples/gpu_check "$dir/"
# A test binary: the last line of cargo's JSON messages naming the test executable of target $2
# of package $1 (further arguments select the targets cargo builds).
test_binary() {
  local package=$1 name=$2; shift 2
  cargo test --release -p "$package" --features cuda "$@" --no-run --message-format json 2>/dev/null |
    python3 -c 'import json, sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == sys.argv[1] and m["profile"]["test"] and m.get("executable"):
        print(m["executable"])' "$name" | tail -n 1
}
tests=$(test_binary ptb-lm ptb-lm)
cp "$tests" "$dir/ptb-lm-tests"
op_tests=$(test_binary candle-cudnn-rnn gpu --test gpu)
cp "$op_tests" "$dir/op-gpu-tests"
if [ -n "${CUBLAS_DIR:-}" ]; then
  nvcc -O2 -arch=sm_90a -I"$CUBLAS_DIR/include" scripts/persistent-lab/gemm_probe.cu \
    -L"$CUBLAS_DIR/lib" -l:libcublas.so.13 -l:libcublasLt.so.13 -o "$dir/gemm_probe"
fi
cp ../shared/tools/gpu-env.sh "$dir/"
# An earlier GPU run's kernel cache, which scripts/on-gpu.sh loads before anything runs.
if [ -f .kernel-cache/kernel-cache.txz ]; then
  cp .kernel-cache/kernel-cache.txz "$dir/"
fi
for f in ptb-lm ptb-lm-tests op-gpu-tests gpu_check bench_grid old-ptb-lm old-bench_grid; do
  [ -f "$dir/$f" ] || continue
  strip "$dir/$f"
  xz -6 -T2 -f "$dir/$f" &
done
wait
ls -la "$dir"
