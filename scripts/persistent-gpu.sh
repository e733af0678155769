#!/usr/bin/env bash
# On a GPU machine: checks or times the persistent path of binaries from scripts/devbin.sh
# (built with --old REV for the timings' baseline: a revision whose bench_grid has --loss,
# --input-grad and --sink-overwrite, 7d19677 or later). Each mode fits a 10-minute command:
#   same:  after a change that must not alter what the kernels compute: the op's GPU tests, and
#          PTB large and medium bf16's first epoch from the new binaries and (with --old) the
#          old ones, which must print the same lines.
#   sanitize: compute-sanitizer's memcheck, racecheck and synccheck over an LSTM's and a GRU's
#          training call on the persistent kernels at small shapes (hidden 256, 2 layers; and
#          batch 77, three chunks of the batch, at hidden 200), the
#          backward in clusters of 1, 2 and 4 (CANDLE_RNN_PERSISTENT_CLUSTER=1,N).
#   check: ptb-lm's CUDA unit tests; gpu_check --persistent with the defaults, with no
#          clusters, layer by layer (no wavefront), and with small layers on the grid barrier
#          instead of one cluster (CANDLE_RNN_PERSISTENT_ONE_CLUSTER=0).
#   lab:   the standalone harness (scripts/persistent-lab, built here with the machine's nvcc):
#          both recurrences timed and with per-phase clocks; PTB large bf16: graph = eager and
#          resume = straight.
#   time:  the LSTM [35, 20, 2 x 1500] bf16 as ptb-lm uses it (bench_grid --loss sum
#          --input-grad --sink-overwrite) and as the grid measures it (MSE, autograd), old and
#          new, alternating; PyTorch's cuDNN LSTM the same way; PTB large bf16 steps old / new;
#          the GEMM probe (DIR's, or built here against the cuBLAS wheel beside PyTorch).
#   wave:  the wavefronts over stacked layers (CANDLE_RNN_PERSISTENT_WAVE=0 turns them off): the op
#          [35, 20, 2 x H] graphed and PTB medium and small bf16 steps without and with it,
#          alternating; PTB medium bf16 epochs with it: graph = eager, and beside those without.
#   one:   small layers in one thread-block cluster (CANDLE_RNN_PERSISTENT_ONE_CLUSTER=1; the
#          default where batch x hidden <= 2048) against the grid barrier (=0): compute-sanitizer
#          over it, then LSTM and GRU training calls graphed on both sides of the rule,
#          alternating.
#   chunks: the forward of inference batches past 32 (chunks of 32) in clusters of 2 and 4
#          (CANDLE_RNN_PERSISTENT_CLUSTER=F,B): compute-sanitizer over it, the GPU test of
#          chunked inference with each, and eager forwards at batches 128 and 256 for F = 1, 2, 4.
#   scripts/persistent-gpu.sh same|sanitize|one|chunks|check|lab|time|wave DIR OUT
set -uo pipefail
cd "$(dirname "$0")/.."
mode=$1 D=$2 OUT=$3
source scripts/on-gpu.sh
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu --format=csv > "$OUT/smi.txt" 2>&1

same() {
  stamp "op GPU tests"
  RNN_TEST_REQUIRE_GPU=1 timeout 200 "$D/op-gpu-tests" --nocapture --test-threads=1 > "$OUT/op-gpu-tests.log" 2>&1
  echo "op-gpu-tests rc=$? $(grep -E 'test result' "$OUT/op-gpu-tests.log" | tail -1)"
  grep -E "FAILED|panicked" "$OUT/op-gpu-tests.log" | head -5
  for c in large medium; do
    for b in ptb-lm old-ptb-lm; do
      [ -x "$D/$b" ] || continue
      stamp "PTB $c bf16 epoch 1 ($b)"
      timeout 100 "$D/$b" train --config $c --precision bf16 --epochs 1 --out "/tmp/$c-$b" > "$OUT/$c-epoch1-$b.log" 2>&1
      echo "rc=$? $(grep -E '^Epoch' "$OUT/$c-epoch1-$b.log" | sed 's/ wps: [0-9]*//')"
    done
  done
  stamp "done"
}

sanitize() {
  [ -n "$CS" ] || { echo "no compute-sanitizer"; return; }
  # Two layers at batch 8, and one layer at batch 77 (three chunks of the batch).
  for shape in 2,8,6,256 1,77,4,200; do
  for cell in lstm gru; do
    for cl in 1 2 4; do
      for tool in memcheck racecheck synccheck; do
        local log="$OUT/cs-$tool-$cell-cl$cl-${shape//,/x}.log"
        CANDLE_RNN_PERSISTENT_CLUSTER=1,$cl timeout 100 "$CS" --tool $tool --print-limit 20 "$D/bench_grid" \
          --no-loop --loss sum --input-grad --api direct --reps 1 --warmup 0 --phase train --mode $cell \
          --shape $shape --variants op-bf16-persistent > "$log" 2>&1
        echo "$tool $cell cl$cl $shape rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1 | sed 's/^=* *//');" \
          "served by ours: $(grep -c '(Persistent)' "$log")"
      done
    done
  done
  done
  stamp "done"
}

check() {
  stamp "unit tests"
  timeout 150 "$D/ptb-lm-tests" > "$OUT/unit.log" 2>&1; echo "unit rc=$?"
  grep -E "test result|FAILED|panicked" "$OUT/unit.log" | head -5
  for run in "default:" "cl1:CANDLE_RNN_PERSISTENT_CLUSTER=1" "layers:CANDLE_RNN_PERSISTENT_WAVE=0" \
    "grid:CANDLE_RNN_PERSISTENT_ONE_CLUSTER=0"; do
    IFS=: read -r name setting <<< "$run"
    stamp "gpu_check --persistent, $name"
    L=$OUT/persistent_$name.log
    local env=()
    [ -n "$setting" ] && env+=("$setting")
    env "${env[@]}" timeout 200 "$D/gpu_check" --persistent > "$L" 2>&1
    echo "$name rc=$? ok $(grep -c '| ok |' "$L") failed $(grep -c '| FAIL' "$L")"
    grep -E "\| FAIL|panick|^Error" "$L" | head -5 | cut -c1-300
    grep -E "H1500 bf16 training \(|H1500 bf16 training, x" "$L" | cut -c1-220
  done
  stamp "done"
}

lab() {
  stamp "harness"
  nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
  local lab=/tmp/lab bwd="-DLAB_BWD -DCL=4 -DUNITS=13 -DNBUF=2"
  mkdir -p $lab
  local builds=("fwd:" "fwd-ph:-DLAB_PHASES" "bwd:$bwd" "bwd-ph:$bwd -DLAB_PHASES")
  for b in "${builds[@]}"; do
    IFS=: read -r name defs <<< "$b"
    # shellcheck disable=SC2086
    PATH=$(dirname "$nvcc"):$PATH bash scripts/persistent-lab/build.sh $lab "$name" $defs > "$OUT/build-$name.log" 2>&1 &
  done
  wait
  for r in 1 2; do
    for v in fwd bwd; do echo -n "$v.$r: "; timeout 30 $lab/lab-$v 30 2>&1 | grep -vE "config|output mean" | tr '\n' ' '; echo; done
  done
  for v in fwd-ph bwd-ph; do echo "== $v"; timeout 30 $lab/lab-$v 10 2>&1 | grep -vE "output mean|config"; done
  stamp "PTB large bf16: graph = eager, resume = straight"
  local P=$D/ptb-lm A="--config large --precision bf16 --max-batches 60 --data data/ptb"
  line() { grep -h "^Epoch" "$@" | sed 's/ wps: [0-9]*//'; }
  timeout 90 $P train $A --out /tmp/G --epochs 2 --max-epoch 1 > "$OUT/bf16-g.log" 2>&1
  timeout 90 $P train $A --out /tmp/E --epochs 2 --max-epoch 1 --no-cuda-graph > "$OUT/bf16-e.log" 2>&1
  timeout 90 $P train $A --out /tmp/R --epochs 1 --max-epoch 1 > "$OUT/bf16-r1.log" 2>&1
  timeout 90 $P train $A --out /tmp/R --epochs 2 --max-epoch 1 --resume > "$OUT/bf16-r2.log" 2>&1
  line "$OUT/bf16-g.log" > /tmp/g; line "$OUT/bf16-e.log" > /tmp/e; line "$OUT/bf16-r1.log" "$OUT/bf16-r2.log" > /tmp/r; cat /tmp/g
  [ -s /tmp/g ] || echo "NO EPOCH LINES"
  cmp -s /tmp/g /tmp/e && echo "graph = eager" || { echo "graph/eager DIFFER"; cat /tmp/e; }
  cmp -s /tmp/g /tmp/r && echo "resumed = straight" || { echo "resume DIFFER"; cat /tmp/r; }
  stamp "done"
}

timing() {
  local S="--no-loop --mode lstm --shape 2,20,35,1500 --reps 30 --warmup 10 --variants op-bf16-persistent"
  local U="--loss sum --input-grad --sink-overwrite"
  stamp "the op: old and new, alternating (train us/example, fwd us/example, train host us/example)"
  for r in 1 2 3; do
    for name in old new; do
      local B=$D/bench_grid; [ "$name" = old ] && B=$D/old-bench_grid
      echo -n "op as ptb-lm uses it, $name.$r: "
      $B $S $U --json "$OUT/op_use_${name}_$r.json" 2>&1 | tail -n 1 | cut -d'|' -f8-
      echo -n "op, grid's MSE, $name.$r: "
      $B $S --json "$OUT/op_mse_${name}_$r.json" 2>&1 | tail -n 1 | cut -d'|' -f8-
    done
  done
  stamp "PyTorch's cuDNN LSTM, the same ways"
  timeout 200 python3 scripts/torch_reference.py --grid --only lstm,2,20,35,1500 --impls torch-bf16,torch-amp-fp16,torch-tf32 \
    --loss sum --input-grad --reps 30 --warmup 10 --json "$OUT/torch_use.json" > "$OUT/torch_use.log" 2>&1
  echo "torch (sum, input grad) rc=$?"; grep -E "^\| lstm" "$OUT/torch_use.log"
  timeout 200 python3 scripts/torch_reference.py --grid --only lstm,2,20,35,1500 --impls torch-amp-fp16 \
    --reps 30 --warmup 10 --json "$OUT/torch_mse.json" > "$OUT/torch_mse.log" 2>&1
  echo "torch (MSE) rc=$?"; grep -E "^\| lstm" "$OUT/torch_mse.log"
  stamp "PTB large bf16 steps"
  local B="bench --config large --precision bf16 --batches 100 --warmup 20 --data data/ptb"
  for r in 1 2 3; do
    for name in old new; do
      local P=$D/ptb-lm; [ "$name" = old ] && P=$D/old-ptb-lm
      echo -n "step $name.$r: "
      timeout 60 $P $B --json "$OUT/step_${name}_$r.json" 2>&1 | grep -v '^{' | tail -n 1
    done
  done
  local probe=$D/gemm_probe
  if [ ! -x "$probe" ]; then
    # Built here from the headers and libraries of the nvidia-cublas wheel beside PyTorch.
    local cublas
    cublas=$(python3 -c 'import glob, os, nvidia; print(next(d for p in nvidia.__path__ for d in glob.glob(os.path.join(p, "*")) if os.path.exists(os.path.join(d, "include", "cublasLt.h"))))' 2>/dev/null)
    probe=/tmp/gemm_probe
    [ -n "$cublas" ] && "$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)" -O2 -arch=sm_90a -I"$cublas/include" \
      scripts/persistent-lab/gemm_probe.cu -L"$cublas/lib" -l:libcublas.so.13 -l:libcublasLt.so.13 -o $probe \
      > "$OUT/gemm_probe_build.log" 2>&1
  fi
  if [ -x "$probe" ]; then
    stamp "GEMM probe"
    timeout 120 "$probe" > "$OUT/gemm_probe.md" 2>&1; echo "probe rc=$?"; cat "$OUT/gemm_probe.md"
  else
    echo "no GEMM probe: no cuBLAS headers found ($OUT/gemm_probe_build.log)"
  fi
  # One archive of the JSON reports: the device tool brings back only so many files.
  (cd "$OUT" && tar -czf timings-json.tgz ./*.json && rm ./*.json)
  stamp "done"
}

wave() {
  stamp "the op without and with the wavefront (train us/example, fwd us/example, host)"
  local U="--loss sum --input-grad --sink-overwrite --graph"
  for h in 650 200; do
    for r in 1 2; do
      for w in 0 1; do
        echo -n "op H$h wave=$w.$r: "
        CANDLE_RNN_PERSISTENT_WAVE=$w "$D/bench_grid" --no-loop --mode lstm --shape 2,20,35,$h --reps 30 \
          --warmup 10 --variants op-bf16-persistent $U --json "$OUT/op_h${h}_w${w}_$r.json" 2>&1 | tail -n 1 | cut -d'|' -f8-
      done
    done
  done
  stamp "PTB bf16 steps without and with the wavefront"
  for cfg in medium small; do
    for r in 1 2; do
      for w in 0 1; do
        echo -n "$cfg wave=$w.$r: "
        CANDLE_RNN_PERSISTENT_WAVE=$w timeout 60 "$D/ptb-lm" bench --config $cfg --precision bf16 --batches 100 \
          --warmup 20 --data data/ptb --json "$OUT/step_${cfg}_w${w}_$r.json" 2>&1 | grep -v '^{' | tail -n 1
      done
    done
  done
  stamp "PTB medium bf16 epochs: wavefront graph = eager; without it"
  local P=$D/ptb-lm A="--config medium --precision bf16 --max-batches 100 --data data/ptb --epochs 2 --max-epoch 1"
  line() { grep -h "^Epoch" "$@" | sed 's/ wps: [0-9]*//'; }
  CANDLE_RNN_PERSISTENT_WAVE=1 timeout 90 $P train $A --out /tmp/WG > "$OUT/medium-wave-g.log" 2>&1
  CANDLE_RNN_PERSISTENT_WAVE=1 timeout 90 $P train $A --out /tmp/WE --no-cuda-graph > "$OUT/medium-wave-e.log" 2>&1
  CANDLE_RNN_PERSISTENT_WAVE=0 timeout 90 $P train $A --out /tmp/NG > "$OUT/medium-g.log" 2>&1
  line "$OUT/medium-wave-g.log" > /tmp/g; line "$OUT/medium-wave-e.log" > /tmp/e; cat /tmp/g
  [ -s /tmp/g ] || echo "NO EPOCH LINES"
  cmp -s /tmp/g /tmp/e && echo "graph = eager" || { echo "graph/eager DIFFER"; cat /tmp/e; }
  echo "without the wavefront:"; line "$OUT/medium-g.log"
  (cd "$OUT" && tar -czf timings-json.tgz ./*.json && rm ./*.json)
  stamp "done"
}

one() {
  if [ -n "$CS" ]; then
    for cell in lstm gru; do
      for tool in memcheck racecheck synccheck; do
        local log="$OUT/one-$tool-$cell.log"
        CANDLE_RNN_PERSISTENT_ONE_CLUSTER=1 timeout 100 "$CS" --tool $tool --print-limit 20 "$D/bench_grid" \
          --no-loop --loss sum --input-grad --api direct --reps 1 --warmup 0 --phase train --mode $cell \
          --shape 1,8,6,256 --variants op-bf16-persistent > "$log" 2>&1
        echo "$tool $cell rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1 | sed 's/^=* *//')"
      done
    done
  fi
  stamp "graphed training, grid barrier (0) and one cluster (1), alternating"
  for cell in lstm gru; do
    for shape in 1,8,30,128 1,16,30,128 1,32,30,128 1,8,30,256 1,16,30,256; do
      for r in 1 2; do
        for o in 0 1; do
          echo -n "$cell $shape one=$o.$r: "
          CANDLE_RNN_PERSISTENT_ONE_CLUSTER=$o timeout 60 "$D/bench_grid" --no-loop --graph --loss sum --input-grad \
            --api direct --reps 10 --warmup 5 --mode $cell --shape $shape --variants op-bf16-persistent \
            --json "$OUT/one_${cell}_${shape}_${o}_$r.json" 2>&1 | tail -n 1 | cut -d'|' -f7-9
        done
      done
    done
  done
  (cd "$OUT" && tar -czf timings-json.tgz ./*.json && rm ./*.json)
  stamp "done"
}

chunks() {
  for cl in 2 4; do
    if [ -n "$CS" ]; then
      for cell in lstm gru; do
        for tool in memcheck racecheck synccheck; do
          local log="$OUT/chunks-$tool-$cell-cl$cl.log"
          CANDLE_RNN_PERSISTENT_CLUSTER=$cl,1 timeout 100 "$CS" --tool $tool --print-limit 20 "$D/bench_grid" \
            --no-loop --reps 1 --warmup 0 --phase forward --mode $cell --shape 1,77,4,200 \
            --variants op-bf16-persistent > "$log" 2>&1
          echo "$tool $cell cl$cl rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1 | sed 's/^=* *//')"
        done
      done
    fi
    stamp "GPU test of chunked inference, forward clusters of $cl"
    CANDLE_RNN_PERSISTENT_CLUSTER=$cl,2 RNN_TEST_REQUIRE_GPU=1 timeout 150 "$D/op-gpu-tests" --nocapture \
      --test-threads=1 inference_in_chunks > "$OUT/chunks-tests-cl$cl.log" 2>&1
    echo "cl$cl rc=$? $(grep -E 'test result' "$OUT/chunks-tests-cl$cl.log" | tail -1)"
  done
  stamp "eager forwards, forward clusters 1, 2, 4, alternating"
  for r in 1 2; do
    for cell in lstm gru; do
      for shape in 1,128,30,512 1,128,30,1024 1,256,30,1024; do
        for cl in 1 2 4; do
          echo -n "$cell $shape cl=$cl.$r: "
          CANDLE_RNN_PERSISTENT_CLUSTER=$cl,2 timeout 60 "$D/bench_grid" --no-loop --phase forward --reps 20 \
            --warmup 5 --mode $cell --shape $shape --variants op-bf16-persistent,op-bf16-default \
            --json "$OUT/chunks_${cell}_${shape}_${cl}_$r.json" 2>&1 | grep -E "^\| (Lstm|Gru)" | cut -d'|' -f7,9 | tr '\n' ' '
          echo
        done
      done
    done
  done
  (cd "$OUT" && tar -czf timings-json.tgz ./*.json && rm ./*.json)
  stamp "done"
}

case $mode in
  same) same ;;
  chunks) chunks ;;
  one) one ;;
  sanitize) sanitize ;;
  check) check ;;
  lab) lab ;;
  time) timing ;;
  wave) wave ;;
  *) echo "usage: $0 same|sanitize|one|chunks|check|lab|time|wave DIR OUT" >&2; exit 2 ;;
esac
