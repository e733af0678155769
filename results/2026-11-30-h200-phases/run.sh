#!/usr/bin/env bash
# On the GPU machine, binaries of scripts/devbin.sh (or its bench_grid, gpu_check and
# op-gpu-tests alone) in DIR:
#   lab:     the persistent-lab harnesses prebuilt by scripts/persistent-lab/variants.sh in
#            LAB (space-separated folders, each with its `order`): µs a launch and the phases
#            of every step (OUT/lab.log).
#   groups:  bf16 and f16 `Persistent`, graphed then eager, training | forward (µs an example),
#            the rule's batch groups first and last, CANDLE_RNN_PERSISTENT_GROUPS=G between, on
#            LSTM and GRU at [30, 32, 128] (G 4, 2) and [30, 128, 128] (G 8, 32); then the
#            default against CANDLE_RNN_PERSISTENT_ONE_CLUSTER_BLOCKS=8 (the grid barrier at
#            hidden 512) through `loss.backward()`, GRU and LSTM at [30, 8, 512] and
#            [30, 16, 512] (OUT/groups.log).
#   sweep:   batch groups at hidden 64 and 128 (half precision's small groups): bf16
#            `Persistent`, graphed then eager, training | forward (µs an example), the rule's
#            groups first and last, CANDLE_RNN_PERSISTENT_GROUPS=G between for each G listed, LSTM
#            and GRU at batches 16 (G 2), 24 (3), 32 (4), 48 (4, 6), 64 (4) and 128 (4, 8)
#            (OUT/sweep.log).
#   tests:   all of the op's GPU tests (OUT/tests.log).
#   rule:    after the small groups' rule (kernel.rs's HALF_FEWER_SMALL_GROUPS_FROM_BATCH): the
#            bf16 and f16 defaults through
#            `loss.backward()` (--api plain), graphed then eager, against the rule's groups before
#            it (CANDLE_RNN_PERSISTENT_GROUPS=G), default first and last, LSTM and GRU at
#            [30, 32, 128] (G 8), [30, 48, 128] (8), [30, 16, 64] (4), [30, 32, 64] (8)
#            (OUT/rule.log); compute-sanitizer memcheck, racecheck and synccheck over LSTM and
#            GRU training at [6, 32, 128] (4 groups, each 16 blocks of 8 units) on `Persistent`
#            (OUT/sanitize-rule.log).
#   grid:    the half grid (on-gpu.sh's half_grid: OUT/grid.log, OUT/table.md, OUT/grid.tgz).
#   check:   gpu_check --persistent --mode MODE (lstm unless set) under CHECK_TIMEOUT seconds
#            (400 unless set; OUT/gpu_check.log).
#   knobs:   tuning.rs's knobs on the grid's shapes short of 2x, graphed bf16 `Persistent`,
#            training | forward (µs an example), the default tuning first and last and each
#            knob (CANDLE_RNN_PERSISTENT_<NAME>=<VALUE>) between: see `knob_rows` below
#            (OUT/knobs.log).
#   arrive:  `lab` on LAB, then compute-sanitizer memcheck, racecheck and synccheck over each
#            LAB folder's harnesses named *-arrive (one launch each; OUT/sanitize-arrive.log).
#   results/2026-11-30-h200-phases/run.sh DIR OUT lab|groups|sweep|knobs|rule|tests|grid|check|arrive
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2 PART=$3
source scripts/on-gpu.sh
case $PART in
lab)
  for dir in ${LAB:-.devbin-lab512 .devbin-lab128}; do
    for f in "$dir"/lab-*.xz; do xz -dkf "$f"; chmod +x "${f%.xz}"; done
    echo "### $dir"
    bash scripts/persistent-lab/variants.sh run "$dir" 30
  done 2>&1 | tee "$OUT/lab.log"
  ;;
groups)
  v=op-bf16-persistent,op-f16-persistent
  for g in --graph eager; do
    [ $g = eager ] && g=""
    for c in lstm gru; do
      for sg in 1,32,30,128:4 1,32,30,128:2 1,128,30,128:8 1,128,30,128:32; do
        s=${sg%%:*} n=${sg#*:}
        echo "${g:-eager} $c $s | $(bench_rows "$g" $c $s $v) g$n" \
          "$(CANDLE_RNN_PERSISTENT_GROUPS=$n bench_rows "$g" $c $s $v) $(bench_rows "$g" $c $s $v)"
      done
    done
  done 2>&1 | tee "$OUT/groups.log"
  for g in --graph eager; do
    [ $g = eager ] && g=""
    for c in gru lstm; do
      for s in 1,8,30,512 1,16,30,512; do
        v=op-bf16-default,op-f16-default
        echo "${g:-eager} $c $s | $(API=plain bench_rows "$g" $c $s $v) b8" \
          "$(CANDLE_RNN_PERSISTENT_ONE_CLUSTER_BLOCKS=8 API=plain bench_rows "$g" $c $s $v)" \
          "$(API=plain bench_rows "$g" $c $s $v)"
      done
    done
  done 2>&1 | tee -a "$OUT/groups.log"
  ;;
sweep)
  for g in --graph eager; do
    [ $g = eager ] && g=""
    for c in lstm gru; do
      for h in 128 64; do
        for bg in 16:2 24:3 32:4 48:4,6 64:4 128:4,8; do
          b=${bg%%:*} s=1,${bg%%:*},30,$h line="${g:-eager} $c $s | $(bench_rows "$g" $c $s op-bf16-persistent)"
          for n in ${bg#*:}; do  # (as run: one word, "4,6", which the tuning ignores)
            line+=" g$n $(CANDLE_RNN_PERSISTENT_GROUPS=$n bench_rows "$g" $c $s op-bf16-persistent)"
          done
          echo "$line $(bench_rows "$g" $c $s op-bf16-persistent)"
        done
      done
    done
  done 2>&1 | tee "$OUT/sweep.log"
  ;;
tests)
  stamp "GPU tests"; gpu_tests
  ;;
rule)
  for g in --graph eager; do
    [ $g = eager ] && g=""
    for c in lstm gru; do
      for sg in 1,32,30,128:8 1,48,30,128:8 1,16,30,64:4 1,32,30,64:8; do
        s=${sg%%:*} n=${sg#*:} v=op-bf16-default,op-f16-default
        echo "${g:-eager} $c $s | $(API=plain bench_rows "$g" $c $s $v) g$n" \
          "$(CANDLE_RNN_PERSISTENT_GROUPS=$n API=plain bench_rows "$g" $c $s $v)" \
          "$(API=plain bench_rows "$g" $c $s $v)"
      done
    done
  done 2>&1 | tee "$OUT/rule.log"
  for c in lstm gru; do
    for tool in memcheck racecheck synccheck; do
      log="$OUT/cs-$tool-$c-1x32x6x128.log"
      timeout 90 "$CS" --tool $tool --print-limit 20 "$D/bench_grid" --no-loop --loss sum \
        --input-grad --api direct --reps 1 --warmup 0 --phase train --mode $c --shape 1,32,6,128 \
        --variants op-bf16-persistent > "$log" 2>&1
      echo "$tool $c 1,32,6,128 rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1 | sed 's/^=* *//');" \
        "served by ours: $(grep -c '(Persistent)' "$log")"
    done
  done 2>&1 | tee "$OUT/sanitize-rule.log"
  (cd "$OUT" && tar czf sanitize.tgz cs-*.log && rm -f cs-*.log)
  ;;
grid)
  stamp "half grid"; half_grid
  ;;
check)
  stamp "gpu_check --persistent --mode ${MODE:-lstm}"
  timeout ${CHECK_TIMEOUT:-400} "$D/gpu_check" --persistent --mode "${MODE:-lstm}" --seed 2711 \
    > "$OUT/gpu_check.log" 2>&1
  echo "rc=$?"; tail -2 "$OUT/gpu_check.log"; grep -c '| ok |' "$OUT/gpu_check.log"
  grep -E '\| FAIL \|' "$OUT/gpu_check.log" | head
  ;;
arrive)
  bash "$here/run.sh" "$D" "$OUT" lab
  for dir in $LAB; do
    for f in "$dir"/lab-*-arrive; do
      for tool in memcheck racecheck synccheck; do
        log=$OUT/cs-$tool-$(basename "$dir")-$(basename "$f").log
        timeout 120 "$CS" --tool $tool --print-limit 20 "$f" 1 > "$log" 2>&1
        echo "$tool $f rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1 | sed 's/^=* *//')"
      done
    done
  done 2>&1 | tee "$OUT/sanitize-arrive.log"
  (cd "$OUT" && tar czf sanitize-arrive.tgz cs-*.log && rm -f cs-*.log)
  ;;
knobs)
  # cell shape knob... (NAME=VALUE, each a run of its own)
  knob_rows=(
    "lstm 1,32,30,512 PUSH=1 PUSH=0 FOLD=0 FOLD=1 GROUPS=2 UNITS=16 HALF_PROJECTION=1"
    "gru 1,32,30,512 PUSH=1 PUSH=0 FOLD=0 FOLD=1 GROUPS=2 UNITS=16"
    "lstm 1,32,30,1024 GROUPS=1 GROUPS=4 MULTICAST=1 MULTICAST=2 MULTICAST=4 MULTICAST=8 UNITS=8 UNITS=32 CLUSTER=2"
    "gru 1,32,30,1024 GROUPS=1 GROUPS=4 MULTICAST=1 MULTICAST=4 UNITS=8 UNITS=32"
    "lstm 1,128,30,128 UNITS=8 UNITS=32 PUSH=0 PUSH=1,0 FOLD=0 FOLD=1"
    "gru 1,128,30,128 UNITS=8 UNITS=32 PUSH=0 FOLD=0 FOLD=1"
    "lstm 3,128,30,512 GROUPS=4 GROUPS=16 UNITS=16 UNITS=32 MULTICAST=1 MULTICAST=4 CHUNK=32"
    "gru 3,128,30,512 GROUPS=4 GROUPS=16 UNITS=16 MULTICAST=1 MULTICAST=4"
    "lstm 1,128,30,512 GROUPS=4 GROUPS=16 UNITS=16 MULTICAST=1 MULTICAST=4"
  )
  for row in "${knob_rows[@]}"; do
    set -- $row
    c=$1 s=$2; shift 2
    line="$c $s | $(bench_rows --graph $c $s op-bf16-persistent)"
    for k in "$@"; do
      line+=" $k $(export "CANDLE_RNN_PERSISTENT_$k"; bench_rows --graph $c $s op-bf16-persistent)"
    done
    echo "$line $(bench_rows --graph $c $s op-bf16-persistent)"
  done 2>&1 | tee "$OUT/knobs.log"
  ;;
*)
  echo "usage: run.sh DIR OUT lab|groups|sweep|knobs|rule|tests|grid|check|arrive" >&2
  exit 2
  ;;
esac
