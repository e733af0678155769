#!/usr/bin/env bash
# On the GPU machine: the wgmma forward wherever it fits (CANDLE_RNN_PERSISTENT_WGMMA=1) against the rule, graphed forwards (OUT/knob.log); then the persistent stacks, GRU and batch-group GPU tests with it on (OUT/tests-knob.log). knob.sh DIR OUT
D=$1 OUT=$2
source scripts/on-gpu.sh
graph=--graph
for spec in op-bf16-default:lstm:3,128,30,512 op-f16-default:gru:3,128,30,512 op-bf16-default:lstm:1,128,30,512 op-f16-default:gru:1,128,30,512 op-bf16-default:lstm:1,32,30,1024 op-bf16-default:lstm:1,64,30,1024 op-bf16-default:lstm:1,128,30,256; do
  split_spec "$spec"
  t() { PHASE=forward bench_with "$@"; }
  echo "$v $c $sh | on $(t CANDLE_RNN_PERSISTENT_WGMMA=1) | rule $(t X=1) | on $(t CANDLE_RNN_PERSISTENT_WGMMA=1)"
done 2>&1 | tee $OUT/knob.log
stamp tests
CANDLE_RNN_PERSISTENT_WGMMA=1 RNN_TEST_REQUIRE_GPU=1 timeout 150 "$D/op-gpu-tests" --test-threads=1 persistent_lstm_stacks persistent_gru persistent_batch_groups > $OUT/tests-knob.log 2>&1
echo rc=$?; grep -E "^test |test result|FAIL" $OUT/tests-knob.log | head; stamp done
