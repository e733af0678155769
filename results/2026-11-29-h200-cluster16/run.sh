#!/usr/bin/env bash
# On the GPU machine, binaries of scripts/devbin.sh (or its bench_grid, gpu_check and
# op-gpu-tests alone) in DIR:
#   launch:  what a one-cluster plan of up to 16 blocks launches (ONE16 below, batch groups 8 and
#            4): ncu's LaunchStats (grid and cluster size) and device time of one bf16 training
#            call of LSTM [30, 32, 512] and [30, 128, 512] (OUT/launch.log).
#   speed:   bf16 training | forward (µs an example), graphed (--graph) or eager: the
#            default tuning's `Persistent` and the default, then `Persistent` under ONE16 with
#            batch groups 8 and 4, then the default tuning's again (OUT/speed-graphed.log,
#            OUT/speed-eager.log); LSTM and GRU at [30, 32, 512], [200, 32, 512], [30, 64, 512],
#            [30, 128, 512] and [30, 128, 3 x 512].
#   wider:   as `speed` (graphed, then eager) for bf16 and f16 `Persistent`, the default tuning's
#            against ONE16's with the rule's batch groups, default first and last, on LSTM and GRU
#            at [30, 8, 512], [30, 16, 512], [30, 32, 512], [200, 32, 512], [30, 32, 384],
#            [30, 32, 256] and [30, 64, 256] (OUT/wider.log).
#   small:   where the rule already runs one cluster: its 8 blocks (the default tuning's) against
#            16 (CANDLE_RNN_PERSISTENT_ONE_CLUSTER_BLOCKS=16 alone), bf16 and f16 `Persistent`,
#            graphed then eager, 8 first and last, LSTM and GRU at [30, 1, 256], [30, 8, 256],
#            [30, 4, 128], [30, 16, 128], [200, 16, 128], [30, 16, 200] (OUT/small.log).
#   check:   gpu_check --persistent under ONE16 (OUT/gpu_check.log).
#   rule:    after the rule (kernel.rs's shape_one_cluster): all of the op's GPU tests
#            (OUT/tests.log); the bf16 and f16 defaults through `loss.backward()` (--api plain),
#            graphed then eager, against the same with CANDLE_RNN_PERSISTENT_ONE_CLUSTER_BLOCKS=8
#            (the rule's clusters before it), default first and last, on the shapes it moves
#            (OUT/rule.log); compute-sanitizer over [6, 4, 128] (16 blocks of 8 units) as in
#            `sanitize`, on the default tuning (OUT/sanitize-rule.log).
#   versus:  after the rule, the grid's shapes it moves (one layer at batch 32 and hidden 512, seq
#            30 and 200, LSTM and GRU) against PyTorch's fp16 module, as compare-grid.sh measures
#            them (training with the input's gradient | forward, µs an example): graphed, the op's
#            bf16 and f16 defaults (--api direct), PyTorch, the op again; then eager, the op and
#            PyTorch (OUT/versus.log).
#   push-split: one-cluster plans with the backward's exchange unpushed (CANDLE_RNN_PERSISTENT_PUSH
#            =1,0) or the forward's (0,1) against both pushed and the default tuning's plan,
#            graphed bf16 `Persistent`: LSTM [30, 32, 512], [200, 32, 512], [30, 16, 512] under
#            CANDLE_RNN_PERSISTENT_ONE_CLUSTER=1; then PUSH=1,0 alone on GRU [30, 32, 512],
#            [200, 32, 512], LSTM and GRU [30, 32, 384], LSTM [30, 8, 256] (OUT/push-split.log).
#   rule2:   after the backward's push rule (kernel.rs's shape_one_cluster_pushes): the GPU test
#            of clusters of 16, then the bf16 default through `loss.backward()`, graphed, against
#            CANDLE_RNN_PERSISTENT_ONE_CLUSTER_BLOCKS=8, default first and last (OUT/rule2.log).
#   sanitize: compute-sanitizer memcheck, racecheck and synccheck over LSTM and GRU training
#            under ONE16 at [6, 8, 256] and [6, 8, 512] (16 blocks of 16 and 32 units).
# ONE16: CANDLE_RNN_PERSISTENT_ONE_CLUSTER=1 CANDLE_RNN_PERSISTENT_ONE_CLUSTER_BLOCKS=16
# CANDLE_RNN_PERSISTENT_PUSH=1.
#   results/2026-11-29-h200-cluster16/run.sh DIR OUT launch|speed [--graph]|wider|small|check|rule|versus|push-split|rule2|sanitize
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2 PART=$3
source scripts/on-gpu.sh
one16() {
  CANDLE_RNN_PERSISTENT_ONE_CLUSTER=1 CANDLE_RNN_PERSISTENT_ONE_CLUSTER_BLOCKS=16 \
    CANDLE_RNN_PERSISTENT_PUSH=1 "$@"
}
case $PART in
launch)
  ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n 1)
  for shape in 1,32,30,512 1,128,30,512; do
    for g in default 8 4; do
      env=(); [ $g = default ] || env=(CANDLE_RNN_PERSISTENT_GROUPS=$g CANDLE_RNN_PERSISTENT_ONE_CLUSTER=1
        CANDLE_RNN_PERSISTENT_ONE_CLUSTER_BLOCKS=16 CANDLE_RNN_PERSISTENT_PUSH=1)
      csv=$OUT/launch_${shape//,/x}_$g.csv
      env "${env[@]}" timeout 100 "$ncu" --replay-mode application --clock-control none \
        --section LaunchStats --metrics gpu__time_duration.sum --csv "$bin/bench_grid" --no-loop \
        --loss sum --input-grad --warmup 0 --reps 1 --api direct --phase train --mode lstm \
        --shape $shape --variants op-bf16-persistent > "$csv" 2> "${csv%.csv}.err"
      echo "== $shape groups $g rc=$?"
      python3 - "$csv" <<'PY'
import csv, sys
rows = [r for r in csv.reader(l for l in open(sys.argv[1]) if l.startswith('"'))]
if not rows: sys.exit(print("  no rows"))
head = rows[0]; ix = {k: head.index(k) for k in ("ID", "Kernel Name", "Metric Name", "Metric Value")}
seen = {}
for r in rows[1:]:
    k = (r[ix["ID"]], r[ix["Kernel Name"]][:40])
    seen.setdefault(k, {})[r[ix["Metric Name"]]] = r[ix["Metric Value"]]
for (i, name), m in seen.items():
    if "recurrence" in name or "forward" in name or "backward" in name or "wave" in name:
        print(f"  {i} {name:40} grid {m.get('Grid Size')} cluster {m.get('Cluster Size')} "
              f"regs {m.get('Registers Per Thread')} smem {m.get('Dynamic Shared Memory Per Block')} "
              f"time {m.get('Duration', m.get('gpu__time_duration.sum'))}")
PY
    done
  done 2>&1 | tee "$OUT/launch.log"
  (cd "$OUT" && tar czf launch.tgz launch_* && rm -f launch_*)
  ;;
speed)
  g=${4:-}
  log=$OUT/speed-eager.log; [ -n "$g" ] && log=$OUT/speed-graphed.log
  for c in lstm gru; do
    for s in 1,32,30,512 1,32,200,512 1,64,30,512 1,128,30,512 3,128,30,512; do
      echo "${g:-eager} $c $s | $(bench_rows "$g" $c $s op-bf16-persistent,op-bf16-default)" \
        "g8 $(CANDLE_RNN_PERSISTENT_GROUPS=8 one16 bench_rows "$g" $c $s op-bf16-persistent)" \
        "g4 $(CANDLE_RNN_PERSISTENT_GROUPS=4 one16 bench_rows "$g" $c $s op-bf16-persistent)" \
        "$(bench_rows "$g" $c $s op-bf16-persistent)"
    done
  done 2>&1 | tee "$log"
  ;;
wider)
  for g in --graph eager; do
    [ $g = eager ] && g=""
    for c in lstm gru; do
      for s in 1,8,30,512 1,16,30,512 1,32,30,512 1,32,200,512 1,32,30,384 1,32,30,256 1,64,30,256; do
        v=op-bf16-persistent,op-f16-persistent
        echo "${g:-eager} $c $s | $(bench_rows "$g" $c $s $v) one16 $(one16 bench_rows "$g" $c $s $v)" \
          "$(bench_rows "$g" $c $s $v)"
      done
    done
  done 2>&1 | tee "$OUT/wider.log"
  ;;
small)
  for g in --graph eager; do
    [ $g = eager ] && g=""
    for c in lstm gru; do
      for s in 1,1,30,256 1,8,30,256 1,4,30,128 1,16,30,128 1,16,200,128 1,16,30,200; do
        v=op-bf16-persistent,op-f16-persistent
        echo "${g:-eager} $c $s | $(bench_rows "$g" $c $s $v) b16" \
          "$(CANDLE_RNN_PERSISTENT_ONE_CLUSTER_BLOCKS=16 bench_rows "$g" $c $s $v) $(bench_rows "$g" $c $s $v)"
      done
    done
  done 2>&1 | tee "$OUT/small.log"
  ;;
check)
  stamp "gpu_check --persistent under ONE16"
  one16 timeout ${CHECK_TIMEOUT:-400} "$D/gpu_check" --persistent --seed 2711 > "$OUT/gpu_check.log" 2>&1
  echo "rc=$?"; tail -2 "$OUT/gpu_check.log"; grep -c '| ok |' "$OUT/gpu_check.log"
  grep -E '\| FAIL \|' "$OUT/gpu_check.log" | head
  ;;
rule)
  stamp "GPU tests"; gpu_tests
  for g in --graph eager; do
    [ $g = eager ] && g=""
    for c in lstm gru; do
      for s in 1,8,30,256 1,16,30,128 1,32,30,384 1,16,30,512 1,32,30,512 1,32,200,512; do
        v=op-bf16-default,op-f16-default
        echo "${g:-eager} $c $s | $(API=plain bench_rows "$g" $c $s $v) b8" \
          "$(CANDLE_RNN_PERSISTENT_ONE_CLUSTER_BLOCKS=8 API=plain bench_rows "$g" $c $s $v)" \
          "$(API=plain bench_rows "$g" $c $s $v)"
      done
    done
  done 2>&1 | tee "$OUT/rule.log"
  for c in lstm gru; do
    for tool in memcheck racecheck synccheck; do
      log="$OUT/cs-$tool-$c-1x4x6x128.log"
      timeout 90 "$CS" --tool $tool --print-limit 20 "$D/bench_grid" --no-loop --loss sum \
        --input-grad --api direct --reps 1 --warmup 0 --phase train --mode $c --shape 1,4,6,128 \
        --variants op-bf16-persistent > "$log" 2>&1
      echo "$tool $c 1,4,6,128 rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1 | sed 's/^=* *//');" \
        "served by ours: $(grep -c '(Persistent)' "$log")"
    done
  done 2>&1 | tee "$OUT/sanitize-rule.log"
  (cd "$OUT" && tar czf cs-rule.tgz cs-*.log && rm -f cs-*.log)
  ;;
versus)
  only=(); for c in lstm gru; do for t in 30 200; do only+=(--only $c,1,32,$t,512); done; done
  torch() {
    timeout 150 python3 scripts/torch_reference.py --grid --loss sum --input-grad --reps 10 --warmup 5 \
      --impls torch-fp16 "${only[@]}" "$@" 2>/dev/null | grep -E '^\| (lstm|gru) '
  }
  ours() {
    for c in lstm gru; do for t in 30 200; do
      echo "$1 $c 1,32,$t,512 | $(bench_rows "${2:-}" $c 1,32,$t,512 op-bf16-default,op-f16-default)"
    done; done
  }
  { ours graphed --graph; torch --graph; ours graphed --graph; ours eager; torch; } 2>&1 | tee "$OUT/versus.log"
  ;;
push-split)
  p() { bench_rows --graph $1 $2 op-bf16-persistent; }
  for s in 1,32,30,512 1,32,200,512 1,16,30,512; do
    echo "lstm $s | $(p lstm $s) one-p11 $(CANDLE_RNN_PERSISTENT_ONE_CLUSTER=1 p lstm $s)" \
      "one-p10 $(CANDLE_RNN_PERSISTENT_ONE_CLUSTER=1 CANDLE_RNN_PERSISTENT_PUSH=1,0 p lstm $s)" \
      "one-p01 $(CANDLE_RNN_PERSISTENT_ONE_CLUSTER=1 CANDLE_RNN_PERSISTENT_PUSH=0,1 p lstm $s) $(p lstm $s)"
  done 2>&1 | tee "$OUT/push-split.log"
  for cs in gru:1,32,30,512 gru:1,32,200,512 lstm:1,32,30,384 gru:1,32,30,384 lstm:1,8,30,256; do
    c=${cs%%:*} s=${cs#*:}
    echo "$c $s | $(p $c $s) p10 $(CANDLE_RNN_PERSISTENT_PUSH=1,0 p $c $s) $(p $c $s)"
  done 2>&1 | tee -a "$OUT/push-split.log"
  ;;
rule2)
  stamp tests; gpu_tests persistent_clusters_of_16; grep -E "^test " "$OUT/tests.log"
  for cs in lstm:1,32,30,512 lstm:1,32,200,512 lstm:1,16,30,512 gru:1,32,30,512 gru:1,32,200,512; do
    c=${cs%%:*} s=${cs#*:}
    echo "$c $s | $(API=plain bench_rows --graph $c $s op-bf16-default) b8" \
      "$(CANDLE_RNN_PERSISTENT_ONE_CLUSTER_BLOCKS=8 API=plain bench_rows --graph $c $s op-bf16-default)" \
      "$(API=plain bench_rows --graph $c $s op-bf16-default)"
  done 2>&1 | tee "$OUT/rule2.log"
  ;;
sanitize)
  for c in lstm gru; do
    for s in 1,8,6,256 1,8,6,512; do
      for tool in memcheck racecheck synccheck; do
        log="$OUT/cs-$tool-$c-${s//,/x}.log"
        one16 timeout 90 "$CS" --tool $tool --print-limit 20 "$D/bench_grid" --no-loop --loss sum \
          --input-grad --api direct --reps 1 --warmup 0 --phase train --mode $c --shape $s \
          --variants op-bf16-persistent > "$log" 2>&1
        echo "$tool $c $s rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1 | sed 's/^=* *//');" \
          "served by ours: $(grep -c '(Persistent)' "$log")"
      done
    done
  done 2>&1 | tee "$OUT/sanitize.log"
  (cd "$OUT" && tar czf cs.tgz cs-*.log && rm -f cs-*.log)
  ;;
*)
  echo "usage: run.sh DIR OUT launch|speed [--graph]|wider|small|check|rule|versus|push-split|rule2|sanitize" >&2
  exit 2
  ;;
esac
