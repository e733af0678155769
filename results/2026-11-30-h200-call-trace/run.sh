#!/usr/bin/env bash
# On the GPU machine, binaries of scripts/devbin.sh (or its bench_grid, gpu_check and
# op-gpu-tests alone) in DIR:
#   plans:  the plan each of the half grid's shapes short of 2x takes, and [30, 32, 128] under
#           CANDLE_RNN_PERSISTENT_GROUPS=8 (the small groups' rule before 8da4253): bf16 and f16
#           defaults, graphed, with CANDLE_RNN_PERSISTENT_SHOW_PLANS=1; each row's training |
#           forward (µs an example) and the distinct plans it printed (OUT/plans.log).
#   lab:    ../2026-11-30-h200-phases/run.sh's lab part on LAB (OUT/lab.log).
#   trace:  every node of replayed graphed calls (training with the input's gradient, then the
#           forward), ours (bf16 default) then PyTorch's fp16 module, on the half grid's shapes
#           short of 2x (TRACE_SPECS, CELL:L,B,T,H ...), through DIR/cupti (the CUPTI injection
#           library of ../2026-11-26-h200-graph-kernels/ with CUPTI's own): each graph's span,
#           time in nodes and every node with its median duration and the gap before it
#           (OUT/trace.log; the raw records in OUT/trace.tgz, not kept here).
#   sanitize: compute-sanitizer memcheck, synccheck and racecheck over each harness (one launch)
#           of the LAB folders (OUT/sanitize.log; the tools' logs in OUT/sanitize.tgz).
#   block:  (binaries built with one-block.patch applied to 75de3f0; the library has no such
#           forward) the forward on one block per batch group (Plan::one_block) against
#           CANDLE_RNN_PERSISTENT_ONE_BLOCK=0 (the plans before it), the default first and last:
#           bf16 and f16 defaults, graphed then eager, training | forward (µs an example), LSTM and
#           GRU at hidden 64-128, batches 8-128 (BLOCK_SHAPES, BLOCK_PASSES narrow them; API:
#           bench_grid's --api, direct unless set; OUT/block.log); then (unless BLOCK_SANITIZE is
#           set empty) compute-sanitizer memcheck, racecheck and synccheck over LSTM and
#           GRU training and forwards at [6, 16, 128] (4 groups of 4) on `Persistent`
#           (OUT/sanitize-block.log; the tools' logs in OUT/sanitize-block.tgz).
#   ncu:    (with one-block.patch, as `block`) Nsight Compute's speed of light, warp states, compute workload and instruction
#           statistics of the one-block forward (the first `persistent_fwd` launch of a bf16
#           `Persistent` forward, eager) at LSTM and GRU [30, 128, 128] and LSTM [30, 32, 128]
#           (NCU_SHAPES, CELL:L,B,T,H ..., overrides), with the warps' stall reasons a issued
#           instruction (OUT/ncu.log).
#   revert: graphed bf16 `Persistent` training | forward (µs an example) of DIR's bench_grid
#           against OLD's (OLD: a folder of an older build's binaries), DIR / OLD / DIR, at the
#           shapes whose pushed backward's control flow the revert of -DPUSH_STAGGER changed
#           (REVERT_SHAPES overrides; OUT/revert.log).
#   wide:   graphed bf16 and f16 defaults, training | forward (µs an example), at [30, 128, 512]
#           and [30, 128, 3 x 512] (LSTM, GRU): the rule's plans, then 4 batch groups of 32 each
#           in one cluster of 16 blocks (CANDLE_RNN_PERSISTENT_GROUPS=4
#           CANDLE_RNN_PERSISTENT_ONE_CLUSTER=1), then the rule's again (OUT/wide.log, with the
#           plans the second took).
#   tests:  the op's GPU tests whose names hold FILTER (all unless set; OUT/tests.log).
#   results/2026-11-30-h200-call-trace/run.sh DIR OUT plans|lab|trace|sanitize|block|tests
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2 PART=$3
source scripts/on-gpu.sh
case $PART in
plans)
  # cell shape [GROUPS]
  rows=(
    "lstm 1,32,30,128" "lstm 1,32,30,128 8" "gru 1,32,30,128" "gru 1,32,30,128 8"
    "lstm 1,32,30,512" "lstm 1,32,30,1024" "lstm 1,128,30,128" "gru 1,128,30,128"
    "gru 1,128,30,512" "lstm 3,128,30,512" "gru 3,128,30,512"
  )
  for row in "${rows[@]}"; do
    set -- $row
    err=$(mktemp)
    line=$(CANDLE_RNN_PERSISTENT_SHOW_PLANS=1 CANDLE_RNN_PERSISTENT_GROUPS=${3:-} timeout 150 \
      "$D/bench_grid" --no-loop --graph --loss sum --input-grad --reps 10 --warmup 5 --api direct \
      --mode "$1" --shape "$2" --variants op-bf16-default,op-f16-default 2>"$err" \
      | grep -E '^\| (Lstm|Gru) ' \
      | awk -F'|' '{n=$7; t=$8; f=$9; gsub(/^ +| +$/,"",n); gsub(/ /,"",t); gsub(/ /,"",f); printf "%s %s %s | ", n, t, f}')
    echo "$1 $2 g${3:-rule} | $line"
    grep 'candle-cudnn-rnn:' "$err" | sort -u | sed 's/^/    /'
    rm -f "$err"
  done 2>&1 | tee "$OUT/plans.log"
  ;;
lab)
  bash "$here/../2026-11-30-h200-phases/run.sh" "$D" "$OUT" lab
  ;;
block)
  v=op-bf16-default,op-f16-default
  for g in ${BLOCK_PASSES:---graph eager}; do
    [ $g = eager ] && g=""
    for c in lstm gru; do
      for sh in ${BLOCK_SHAPES:-1,8,30,128 1,32,30,128 1,128,30,128 1,16,30,64 1,128,30,64}; do
        echo "${g:-eager} $c $sh | $(bench_rows "$g" $c $sh $v) b0" \
          "$(CANDLE_RNN_PERSISTENT_ONE_BLOCK=0 bench_rows "$g" $c $sh $v) $(bench_rows "$g" $c $sh $v)"
      done
    done
  done 2>&1 | tee "$OUT/block.log"
  [ -n "${BLOCK_SANITIZE-1}" ] || exit 0
  for c in lstm gru; do
    for phase in train forward; do
      for tool in memcheck racecheck synccheck; do
        log="$OUT/cs-$tool-$c-$phase-1x16x6x128.log"
        timeout 120 "$CS" --tool $tool --print-limit 20 "$D/bench_grid" --no-loop --loss sum \
          --input-grad --api direct --reps 1 --warmup 0 --phase $phase --mode $c --shape 1,16,6,128 \
          --variants op-bf16-persistent > "$log" 2>&1
        echo "$tool $c $phase 1,16,6,128 rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1 | sed 's/^=* *//');" \
          "served by ours: $(grep -c '(Persistent)' "$log")"
      done
    done
  done 2>&1 | tee "$OUT/sanitize-block.log"
  (cd "$OUT" && tar czf sanitize-block.tgz cs-*.log && rm -f cs-*.log)
  ;;
ncu)
  ncu_bin=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n 1)
  for cs in ${NCU_SHAPES:-lstm:1,128,30,128 gru:1,128,30,128 lstm:1,32,30,128}; do
    echo "### ${cs}"
    timeout 150 "$ncu_bin" --clock-control none --section SpeedOfLight --section WarpStateStats \
      --section ComputeWorkloadAnalysis --section InstructionStats --section LaunchStats \
      --metrics regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio \
      -k regex:persistent_fwd --launch-count 1 "$D/bench_grid" --no-loop --phase forward \
      --reps 1 --warmup 0 --api direct --mode ${cs%%:*} --shape ${cs#*:} --variants op-bf16-persistent 2>&1 \
      | grep -vE '^\| (Lstm|Gru)|^==PROF==' | sed -n '/persistent_fwd/,$p'
  done 2>&1 | tee "$OUT/ncu.log"
  ;;
wide)
  v=op-bf16-default,op-f16-default
  for c in lstm gru; do
    for sh in 1,128,30,512 3,128,30,512; do
      echo "$c $sh | $(bench_rows --graph $c $sh $v) g4c" \
        "$(CANDLE_RNN_PERSISTENT_SHOW_PLANS=1 CANDLE_RNN_PERSISTENT_GROUPS=4 CANDLE_RNN_PERSISTENT_ONE_CLUSTER=1 \
          bench_rows --graph $c $sh $v) $(bench_rows --graph $c $sh $v)"
    done
  done 2>&1 | tee "$OUT/wide.log"
  grep 'candle-cudnn-rnn:' "$OUT/stderr.txt" | sort -u | sed 's/^/    /' | tee -a "$OUT/wide.log"
  ;;
revert)
  [ -x "$OLD/bench_grid" ] || xz -dkf "$OLD/bench_grid.xz"
  for c in lstm gru; do
    for sh in ${REVERT_SHAPES:-1,32,30,128 1,128,30,128 1,32,30,256 1,32,30,64}; do
      row() { "$1" --no-loop --graph --loss sum --input-grad --reps 10 --warmup 5 --api direct \
        --mode $c --shape $sh --variants op-bf16-persistent 2>>"$OUT/stderr.txt" | grep -E '^\| (Lstm|Gru) ' \
        | awk -F'|' '{t=$8; f=$9; gsub(/ /,"",t); gsub(/ /,"",f); printf "%s %s", t, f}'; }
      echo "$c $sh | new $(row "$D/bench_grid") | old $(row "$OLD/bench_grid") | new $(row "$D/bench_grid")"
    done
  done 2>&1 | tee "$OUT/revert.log"
  ;;
tests)
  stamp "GPU tests ${FILTER:-}"; gpu_tests ${FILTER:-}
  ;;
sanitize)
  for dir in $LAB; do
    for f in "$dir"/lab-*.xz; do xz -dkf "$f"; chmod +x "${f%.xz}"; done
    for f in "$dir"/lab-*; do
      [ "${f%.xz}" = "$f" ] || continue
      for tool in memcheck synccheck racecheck; do
        log=$OUT/cs-$tool-$(basename "$dir")-$(basename "$f").log
        timeout ${SANITIZE_TIMEOUT:-100} "$CS" --tool $tool --print-limit 20 "$f" 1 > "$log" 2>&1
        echo "$tool $f rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1 | sed 's/^=* *//')"
      done
    done
  done 2>&1 | tee "$OUT/sanitize.log"
  (cd "$OUT" && tar czf sanitize.tgz cs-*.log && rm -f cs-*.log)
  ;;
trace)
  [ -f "$D/cupti/libcupti.so.13" ] || xz -dk "$D/cupti/libcupti.so.13.xz"
  how="--loss sum --input-grad --reps 20 --warmup 5"
  analyze=$here/../2026-11-26-h200-graph-kernels/analyze.py
  run_traced() {  # name, command...
    local name=$1; shift
    CUDA_INJECTION64_PATH=$bin/cupti/libtrace_kernels.so TRACE_OUT=$OUT/$name.csv timeout 120 "$@" \
      > "$OUT/$name.out" 2>&1
    echo "### $name rc=$? $(grep -E '^\| (lstm|gru|Lstm|Gru) ' "$OUT/$name.out" | cut -d'|' -f7,8,9 | tr '\n' ' ')"
    python3 "$analyze" "$OUT/$name.csv" 10
  }
  for spec in ${TRACE_SPECS:-lstm:1,32,30,512 lstm:1,128,30,128 gru:1,128,30,128 gru:1,128,30,512 lstm:3,128,30,512}; do
    cell=${spec%%:*} shape=${spec#*:}
    run_traced "op_${cell}_${shape//,/x}" "$D/bench_grid" --no-loop --graph $how --api direct \
      --mode $cell --shape $shape --variants op-bf16-default
    run_traced "torch_${cell}_${shape//,/x}" python3 scripts/torch_reference.py --grid --graph $how \
      --only $cell,$shape --impls torch-fp16
  done > "$OUT/trace.log" 2>&1
  (cd "$OUT" && tar czf trace.tgz ./*.csv ./*.out && rm -f ./*.csv ./*.out)
  grep -E "^(###|graph)" "$OUT/trace.log"
  ;;
esac
