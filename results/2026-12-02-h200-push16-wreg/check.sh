#!/usr/bin/env bash
# On the GPU, from the repository root, with D=.devbin-c (scripts/devbin.sh of the change as it
# landed): compute-sanitizer (memcheck, racecheck, synccheck) on f16 training through the op at
# small shapes of the paths it changes (PART=san), or gpu_check --persistent in f16 and the GPU
# tests of those paths (PART=check).
#   D=.devbin-c OUT=... PART=san|check results/2026-12-02-h200-push16-wreg/check.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
source scripts/on-gpu.sh
case ${PART:-san} in
san)
  # LSTM [4, 32, 128]: 4 groups of 8, blocks of 8 units, the forward's gates in registers pushing
  # 16 bytes a store; GRU [5, 8, 256]: 16-unit blocks, so; LSTM [4, 8, 384]: the pushed backward's
  # tile in registers (72 a thread).
  SAN_TIMEOUT=150 sanitize_bench "lstm:1,32,4,128 gru:1,8,5,256 lstm:1,8,4,384" op-f16-default --input-grad
  ;;
check)
  stamp gpu_check; gpu_check_persistent --dtype f16
  stamp tests
  TESTS_TIMEOUT=200 gpu_tests_as c16 persistent_clusters_of_16
  TESTS_TIMEOUT=200 gpu_tests_as rg persistent_register_gates
  stamp done
  ;;
esac
