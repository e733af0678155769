#!/usr/bin/env bash
# On the GPU machine, binaries of `scripts/devbin.sh DIR` (plus DIR/probe-*, exchange_probe built
# by nvcc, see README.md): batch 128's exchange at hidden 1024 alone, and the checks the last
# session's TF32 rules had not had on the GPU.
#   probe:    exchange_probe at hidden 1024, batch 128 (modes 0, 1, 13, 14; clusters 2, 4, 8) and
#             batch 32 (modes 1, 2, 11, 12 for comparison) into OUT/probe.log.
#   tests:    the op's GPU tests of the default's rules and of TF32 (OUT/tests.log).
#   ptb:      ptb-lm's unit tests with CUDA (PTB small and medium in TF32 now run on ours).
#   smallgru: TF32 GRU at hidden 64 and 128, batch 1-32: the default (op-tf32-default), ours
#             (op-tf32-persistent) and cuDNN's PersistStaticSmallH in one bench_grid call,
#             training | forward (µs an example), graphed then eager (OUT/smallgru.log).
#   plain:    TF32 shapes that moved to ours last session, through `loss.backward()` (--api plain),
#             graphed then eager, ours / PyTorch's TF32 module / ours (OUT/plain.log).
#   wide:     bf16 GRU and LSTM [30, 128, 1024] graphed on ours (op-bf16-persistent) with the
#             forward's K split over clusters of 2 and 4 (CANDLE_RNN_PERSISTENT_CLUSTER=F,2; the
#             rule's forward takes none), beside cuDNN's bf16 `Standard` (OUT/wide.log).
#   lab:      the lab harness's GRU forward at [30, 128, 1024] bf16 (DIR/lab-gru-cl1, -cl2, -cl4:
#             scripts/persistent-lab/build.sh with -DHID=1024 -DBATCH=128 -DUNITS=8 -DNWARPS=8
#             -DLAB_GRU -DLAB_PHASES -DLAB_T=30 -DCL=1, 2, 4): its phases' clocks a step
#             (OUT/lab.log).
#   groups:   TF32 GRU and LSTM at hidden 64-128, batches 8-24, graphed then eager: ours in 1, 2 and
#             4 batch groups (eagerly three of the shapes) (CANDLE_RNN_PERSISTENT_GROUPS; the rule's TF32 groups start at batch
#             32) beside cuDNN's PersistStaticSmallH (GRU) or the default (OUT/groups.log).
#   ring:     the lab harness's forwards at hidden 1024 (DIR/lab-*, README.md says how built):
#             the multicast ring (MRING) against the forward without clusters, each ring build's
#             output compared with its reference's; then compute-sanitizer over DIR/lab-san-ring
#             (hidden 256, batch 96, 4 steps) (OUT/ring.log).
#   default:  after the TF32 groups rule: TF32 at hidden 64-128, batches 16-24, graphed, the
#             default beside cuDNN's PersistStaticSmallH (OUT/default.log).
#   grid:     scripts/compare-grid.sh in TF32 only (the op's default, PyTorch's TF32 module; all six
#             passes, 10 repetitions after 3 of warm-up), its JSON and table in OUT/grid.tgz and
#             the table in OUT/table.md.
#   libring:  the ring in the library (kernel.rs's Plan::ring): the GPU test of the multicast
#             forwards (a ring case at hidden 1024, batch 100); graphed training | forward on ours
#             at hidden 1024, batches 96-128, with the rule's multicast (the ring) and without
#             (CANDLE_RNN_PERSISTENT_MULTICAST=1), alternated twice (OUT/libring.log);
#             compute-sanitizer memcheck on a ring forward ([3, 100, 1024]); gpu_check --persistent.
#   groups16: batch groups past 8 (launch.rs's MAX_GROUPS 16; the rule's still at most 8): half
#             precision at hidden 64-128, batches 64-128, graphed training | forward in the rule's
#             groups and in 16 (CANDLE_RNN_PERSISTENT_GROUPS=16), alternated twice
#             (OUT/groups16.log); the LSTM one-layer and GRU GPU tests in 16 groups where they
#             divide the batch (batch 32: 16 of 2).
#   default16: after the rule of 16 groups: half precision at batch 128, hidden 64-128, on the
#             default, graphed (OUT/default16.log); the GPU tests of one LSTM layer (a case at
#             batch 128, hidden 128) and of the default's rules.
#   chunks:   the lab's forwards at [30, 128, 1024] with chunk-phases.diff (each chunk's products'
#             start a phase of its own: p1..p4) without clusters and with the ring, and with
#             early-refill.diff on top (the ring's next chunk issued before the gate math instead
#             of after), outputs compared (OUT/chunks.log; README.md says how they were built).
#   early:    the library with early-refill.diff's change applied to recurrence_fwd.cu (not run:
#             no device time was left): the GPU test of the multicast forwards; bf16
#             [30, 128, 1024] on ours with the ring and without multicast (OUT/early.log).
#   results/2026-11-29-h200-batch128-exchange/run.sh DIR OUT probe|tests|ptb|smallgru|plain|wide|lab|groups|ring|default|grid|libring|groups16|default16|chunks|early
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2 PART=$3
source scripts/on-gpu.sh
py=/opt/torch/.venv/bin/python3
how="--loss sum --input-grad --reps 10 --warmup 5"
# on-gpu.sh's bench_rows.
rows() { bench_rows "$@"; }
case $PART in
probe)
  {
    for c in 2 4 8; do timeout 60 "$D/probe-1024-128" 2000 $c 13 14; done
    timeout 60 "$D/probe-1024-128" 2000 2 0 1
    timeout 60 "$D/probe-1024-32" 2000 2 1 2
    timeout 60 "$D/probe-1024-32" 2000 2 11 12
  } 2>&1 | tee "$OUT/probe.log"
  ;;
tests)
  gpu_tests the_default_serves tf32
  ;;
ptb)
  timeout 200 "$D/ptb-lm-tests" > "$OUT/ptb-unit.log" 2>&1; echo "ptb-lm unit rc=$?: $(grep -E '^test result' "$OUT/ptb-unit.log")"
  ;;
smallgru)
  for g in --graph eager; do
    [ $g = eager ] && g=""
    for s in 1,1,30,128 1,8,30,128 1,16,30,128 1,32,30,128 1,8,64,128 1,16,100,128 1,32,64,128 1,32,100,128 \
      1,8,30,64 1,32,30,64; do
      echo "${g:-eager} gru $s | $(rows "$g" gru $s op-tf32-default,op-tf32-persistent,op-tf32-static-small-h)"
    done
  done | tee "$OUT/smallgru.log"
  ;;
plain)
  shapes="gru:1,32,30,128 lstm:1,32,30,128 gru:3,128,30,512 lstm:3,128,30,512 gru:2,20,35,650 lstm:2,20,35,650"
  only=""; for sp in $shapes; do only="$only --only ${sp/:/,}"; done
  for g in --graph eager; do
    [ $g = eager ] && g=""
    for sp in $shapes; do IFS=: read -r c s <<< "$sp"; echo "ours ${g:-eager} $c $s | $(API=plain rows "$g" $c $s op-tf32-default)"; done
    PYTHONUNBUFFERED=1 timeout 300 $py scripts/torch_reference.py --grid $g $how --impls torch-tf32 $only \
      2>&1 | grep -E '^grid ' | sed "s/^/torch ${g:-eager} /"
    for sp in $shapes; do IFS=: read -r c s <<< "$sp"; echo "ours ${g:-eager} $c $s | $(API=plain rows "$g" $c $s op-tf32-default)"; done
  done | tee "$OUT/plain.log"
  ;;
groups)
  for g in --graph eager; do
    [ $g = eager ] && g=""
    for c in gru lstm; do
      other=op-tf32-static-small-h; [ $c = lstm ] && other=op-tf32-standard
      shapes="1,16,30,128 1,8,30,128 1,20,30,128 1,24,30,128 1,16,100,128 1,16,30,64 1,8,30,64"
      [ -z "$g" ] && shapes="1,16,30,128 1,8,30,128 1,24,30,128"
      for s in $shapes; do
        row="${g:-eager} $c $s | $(rows "$g" $c $s op-tf32-default,$other)"
        for n in 1 2 4; do row="$row G$n $(CANDLE_RNN_PERSISTENT_GROUPS=$n rows "$g" $c $s op-tf32-persistent)"; done
        echo "$row"
      done
    done
  done | tee "$OUT/groups.log"
  ;;
default)
  for sp in gru:1,16,30,128 gru:1,20,30,128 gru:1,24,30,128 gru:1,16,100,128 gru:1,16,30,64 gru:1,8,30,64 \
    lstm:1,16,30,128 lstm:1,24,30,128; do
    IFS=: read -r c s <<< "$sp"
    echo "graphed $c $s | $(rows --graph $c $s op-tf32-default,op-tf32-static-small-h)"
  done | tee "$OUT/default.log"
  ;;
grid)
  compare_grid torch-tf32 op-tf32-default 590
  ;;
early)
  for c in gru lstm; do
    echo "$c 1,128,30,1024 bf16 | ring $(bench_us "" $c 1,128,30,1024 op-bf16-persistent) | none $(CANDLE_RNN_PERSISTENT_MULTICAST=1 bench_us "" $c 1,128,30,1024 op-bf16-persistent)"
  done | tee "$OUT/early.log"
  gpu_tests persistent_multicast
  ;;
chunks)
  {
    for pair in lstm-cl1-chunks:lstm-ring2-chunks lstm-cl1-chunks:lstm-ring2-early gru-ring2-chunks:gru-ring2-early \
      lstm-ring2-chunks:lstm-cl1-chunks; do
      ref=${pair%%:*} new=${pair#*:}
      [ -f "$OUT/$ref.out" ] || { echo "== $ref"; timeout 60 "$D/lab-$ref" 20 "$OUT/$ref.out"; }
      echo "== $new"; timeout 60 "$D/lab-$new" 20 "$OUT/$new.out" "$OUT/$ref.out"
    done
  } 2>&1 | grep -v '^config' | tee "$OUT/chunks.log"
  rm -f "$OUT"/*.out
  ;;
default16)
  for spec in lstm:1,128,30,128:bf16 gru:1,128,30,128:bf16 lstm:1,128,30,128:f16 gru:1,128,30,128:f16 \
    gru:1,128,30,64:bf16 lstm:1,64,30,128:f16; do
    IFS=: read -r c s e <<< "$spec"
    echo "$c $s $e | $(rows --graph $c $s op-$e-default)"
  done | tee "$OUT/default16.log"
  gpu_tests persistent_lstm_one_layer the_default_serves
  ;;
groups16)
  for spec in lstm:1,128,30,128:bf16 gru:1,128,30,128:bf16 gru:1,128,30,128:f16 lstm:1,64,30,128:f16 \
    gru:1,128,30,64:bf16; do
    IFS=: read -r c s e <<< "$spec"
    row="$c $s $e"
    for round in 1 2; do
      row="$row | rule $(bench_us "" $c $s op-$e-default)"
      row="$row | 16 $(bench_us 16 $c $s op-$e-default)"
    done
    echo "$row"
  done | tee "$OUT/groups16.log"
  CANDLE_RNN_PERSISTENT_GROUPS=16 gpu_tests persistent_lstm_one_layer persistent_gru_matches
  ;;
libring)
  stamp "GPU test"; gpu_tests persistent_multicast
  for spec in gru:1,128,30,1024:bf16 lstm:1,128,30,1024:bf16 gru:1,96,30,1024:bf16 lstm:1,100,30,1024:f16; do
    IFS=: read -r c s e <<< "$spec"
    row="$c $s $e"
    for round in 1 2; do
      row="$row | ring $(bench_us "" $c $s op-$e-persistent)"
      row="$row | none $(CANDLE_RNN_PERSISTENT_MULTICAST=1 bench_us "" $c $s op-$e-persistent)"
    done
    echo "$row"
  done | tee "$OUT/libring.log"
  timeout 300 "$CS" --tool memcheck --print-limit 20 "$D/bench_grid" --no-loop $how --reps 1 --warmup 0 \
    --api direct --phase forward --mode gru --shape 1,100,3,1024 --variants op-bf16-persistent > "$OUT/cs-memcheck-lib.log" 2>&1
  echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY' "$OUT/cs-memcheck-lib.log" | tail -1)"
  stamp "gpu_check --persistent"; gpu_check_persistent
  ;;
ring)
  {
    for pair in gru-cl1:gru-ring2 gru-cl1:gru-ring2-u12 gru-cl1:gru-ring4-u12 lstm-cl1:lstm-ring2 \
      gru-cl1-b100:gru-ring2-b100 lstm-cl1-b96:lstm-ring2-b96 san-cl1:san-ring; do
      ref=${pair%%:*} new=${pair#*:}
      echo "== $ref"; timeout 60 "$D/lab-$ref" 20 "$OUT/$ref.out"
      echo "== $new"; timeout 60 "$D/lab-$new" 20 "$OUT/$new.out" "$OUT/$ref.out"
    done
    for tool in memcheck racecheck synccheck; do
      timeout 120 "$CS" --tool $tool --print-limit 20 "$D/lab-san-ring" 1 > "$OUT/cs-$tool.log" 2>&1
      echo "$tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/cs-$tool.log" | tail -1)"
    done
  } 2>&1 | tee "$OUT/ring.log"
  rm -f "$OUT"/*.out
  ;;
lab)
  for cl in 1 2 4; do echo "== CL $cl"; timeout 60 "$D/lab-gru-cl$cl" 20; done 2>&1 | tee "$OUT/lab.log"
  ;;
wide)
  for c in gru lstm; do
    echo "graphed $c 1,128,30,1024 | cuDNN: $(rows --graph $c 1,128,30,1024 op-bf16-standard)"
    for knob in "" CANDLE_RNN_PERSISTENT_CLUSTER=2,2 CANDLE_RNN_PERSISTENT_CLUSTER=4,2; do
      echo "graphed $c 1,128,30,1024 ${knob:-rule} | $([ -n "$knob" ] && export "$knob"; rows --graph $c 1,128,30,1024 op-bf16-persistent)"
    done
  done | tee "$OUT/wide.log"
  ;;
esac
stamp done
