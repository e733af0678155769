#!/usr/bin/env bash
# On the GPU machine, the wgmma wavefront forward (recurrence_wgmma_wave.cu; taken where the
# plan's forward is on wgmma and it all fits: at [*, 128, 3 x 512] with
# CANDLE_RNN_PERSISTENT_WGMMA_SUB=2), DIR built as scripts/devbin.sh builds it, in one command:
#   0. (smoke) a training call and a forward with the knob under a minute's limit, LSTM and GRU;
#   1. with the knob, the wgmma GPU test (its [3, 128, 3 x 512] cases, inference and training,
#      every output and gradient against f64) and the persistent dropout test (its
#      [3, 128, 3 x 512] LSTM case against finite differences) (OUT/tests-wave.log);
#   2. compute-sanitizer memcheck, racecheck and synccheck on a training call and an inference
#      forward at [4, 128, 3 x 512] with the knob, LSTM and GRU (OUT/{train,forward}/sanitize.log);
#   3. graphed training (with the input's gradient) and the forward, µs an example: the default
#      (layer by layer, one subgroup) / the wavefront / two subgroups layer by layer
#      (CANDLE_RNN_PERSISTENT_WAVE=0) / the default / the wavefront, at [30, 128, 3 x 512] and
#      [200, 128, 3 x 512], LSTM and GRU (OUT/ab.log).
#   4. (suite) the whole GPU suite (OUT/tests.log);
#   5. (rule, rule-api) with the rule (the wavefront in forwards at [*, 128, 3 x 512]; before 9db989d
#      in training forwards only):
#      the rule / layer by layer (CANDLE_RNN_PERSISTENT_WAVE=0) / the rule at those shapes,
#      graphed and eager through the direct call, graphed through loss.backward() and the sink
#      (OUT/rule.log, OUT/rule-api.log);
#   6. (torch) the rule and layer by layer / PyTorch's fp16 module / ours again at those shapes
#      (OUT/torch.log).
#   7. (probe, with PROBE=DIR of probe-build.sh's builds) the wavefront's pace without its waits
#      (OUT/probe.log).
#   8. (pace) the wavefront's step at 2 and 3 layers, and the SM clock meanwhile (OUT/pace.log).
#   9. (one-layer, with PROBE) one layer in the wavefront's kernel against the wgmma forward.
#   10. (no-projection, with PROBE) the layers side by side without the projections' work.
#   11. (projection-parts, with PROBE) which part of the projections' work slows the layers.
#   12. (multicast) the launch in clusters of 1, 2 and 4 blocks, the projections' input copied
#       once a cluster, and the rule's choice (OUT/multicast.log).
#   13. (cluster-probe, with PROBE) the clusters' placement alone, without the multicast.
#   (Parts 12-13 ran on the branch wgmma-wave-multicast's builds, whose knob
#   CANDLE_RNN_PERSISTENT_WAVE_MULTICAST main names CANDLE_RNN_PERSISTENT_WAVE_CLUSTER, without
#   the multicast.)
#   14. (clusters) the launch in clusters of 2 (the rule), none and 4 (OUT/clusters.log).
#   (Parts 0-3 ran on builds before the rule, with the knob.)
#   [PROBE=DIR] results/2026-12-01-h200-wgmma-wave/run.sh DIR OUT [smoke|tests|sanitize|ab|suite|rule|rule-api|torch|probe|pace|one-layer|no-projection|projection-parts|multicast|cluster-probe|clusters]...
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2
shift 2
parts=${*:-smoke tests sanitize ab}
source scripts/on-gpu.sh
wave="CANDLE_RNN_PERSISTENT_WGMMA_SUB=2"
# One line a spec of SPECS ($1): the build's run ($2 names it) with two subgroups, then each lab
# build $PROBE/bench_grid-pN of the numbers N... ($3), then the build's run as $4 (with the
# environment $5 too); each bench_with, with PHASE, graphed.
probe_lines() {
  local spec n line
  graph=--graph
  for spec in $1; do
    split_spec "$spec"
    line="$v $c $sh | $2 $(bench_with $wave)"
    for n in $3; do
      [ -x "$PROBE/bench_grid-p$n" ] || { xz -dkf "$PROBE/bench_grid-p$n.xz"; chmod +x "$PROBE/bench_grid-p$n"; }
      line="$line | p$n $(BENCH_GRID=$PROBE/bench_grid-p$n bench_with $wave CANDLE_RNN_PERSISTENT_SHOW_PLANS=1)"
    done
    echo "$line | $4 $(bench_with $wave $5)"
  done
}
# One line a shape of the four, graphed, training | forward, µs an example: the build with the
# knob $1 at each value of $2 ("-": unset, the rule), then layer by layer
# (CANDLE_RNN_PERSISTENT_WAVE=0), into OUT/$3.log, then how many launches took each cluster size.
knob_lines() {
  local knob=$1 values=$2 log=$OUT/$3.log spec val line
  graph=--graph
  for spec in op-f16-default:lstm:3,128,30,512 op-bf16-default:gru:3,128,30,512 \
    op-bf16-default:lstm:3,128,200,512 op-bf16-default:gru:3,128,200,512; do
    split_spec "$spec"
    line="$v $c $sh"
    for val in $values; do
      case $val in
        -) line="$line | rule $(bench_with CANDLE_RNN_PERSISTENT_SHOW_PLANS=1)" ;;
        *) line="$line | $val $(bench_with CANDLE_RNN_PERSISTENT_SHOW_PLANS=1 "$knob=$val")" ;;
      esac
    done
    echo "$line | layer by layer $(bench_with CANDLE_RNN_PERSISTENT_WAVE=0)"
  done 2>&1 | tee "$log"
  grep -o "wgmma wavefront of [0-9] layers in clusters of [0-9]" "$OUT/stderr.txt" | sort | uniq -c | tee -a "$log"
}
for part in $parts; do
  case $part in
    smoke)
      # A launch that hangs (a counter never reached) ends here, within a minute.
      stamp "smoke"
      for c in lstm gru; do
        echo "$c $(CANDLE_RNN_PERSISTENT_WGMMA_SUB=2 CANDLE_RNN_PERSISTENT_SHOW_PLANS=1 timeout 60 "$D/bench_grid" \
          --no-loop --loss sum --input-grad --reps 2 --warmup 1 --api direct --mode $c --shape 3,128,4,512 \
          --variants op-bf16-default 2>"$OUT/smoke-$c.err" | grep -E '^\| (Lstm|Gru) ') rc=${PIPESTATUS[0]}"
        grep -o "wgmma wavefront: [A-Za-z]*" "$OUT/smoke-$c.err" | sort | uniq -c
      done
      ;;
    tests)
      stamp "tests with the wavefront"
      CANDLE_RNN_PERSISTENT_WGMMA_SUB=2 CANDLE_RNN_PERSISTENT_SHOW_PLANS=1 gpu_tests_as wave persistent_wgmma \
        dropout_gradients_use_the_forward_masks_on_the_persistent --nocapture
      echo "plans with a wgmma wavefront: $(grep -c 'wgmma wavefront: Some' "$OUT/tests-wave.log")"
      ;;
    sanitize)
      stamp "sanitize"
      for phase in train forward; do
        (OUT=$OUT/$phase; mkdir -p "$OUT"
         CANDLE_RNN_PERSISTENT_WGMMA_SUB=2 sanitize_bench "lstm:3,128,4,512 gru:3,128,4,512" op-bf16-default \
           --phase $phase --input-grad)
      done
      ;;
    ab)
      stamp "ab"
      graph=--graph
      for spec in op-f16-default:lstm:3,128,30,512 op-bf16-default:gru:3,128,30,512 \
        op-bf16-default:lstm:3,128,200,512 op-bf16-default:gru:3,128,200,512; do
        split_spec "$spec"
        echo "$v $c $sh | default $(bench_with X=1) | wave $(bench_with $wave) | two, layer by layer $(bench_with $wave CANDLE_RNN_PERSISTENT_WAVE=0) | default $(bench_with X=1) | wave $(bench_with $wave)"
      done 2>&1 | tee "$OUT/ab.log"
      ;;
    multicast)
      # The wavefront's launch in clusters whose projection blocks copy each chunk of their input
      # once a cluster (CANDLE_RNN_PERSISTENT_WAVE_MULTICAST=1: no clusters, 2, 4) and the rule's
      # choice (OUT/multicast.log).
      stamp "multicast"
      knob_lines CANDLE_RNN_PERSISTENT_WAVE_MULTICAST "1 2 4 - 1" multicast
      ;;
    cluster-probe)
      # The clusters' placement alone (with PROBE: its bench_grid-p12, launched in clusters but
      # every projection block copying its own chunks, logs/multicast/probe-clusters-alone.patch)
      # against the build's multicast, clusters of 1, 2 and 4, graphed, training | forward, µs an
      # example (OUT/cluster-probe.log).
      stamp "cluster probe"
      graph=--graph
      [ -x "$PROBE/bench_grid-p12" ] || { xz -dkf "$PROBE/bench_grid-p12.xz"; chmod +x "$PROBE/bench_grid-p12"; }
      for spec in op-f16-default:lstm:3,128,30,512 op-bf16-default:gru:3,128,30,512 op-bf16-default:lstm:3,128,200,512; do
        split_spec "$spec"
        m() { bench_with CANDLE_RNN_PERSISTENT_WAVE_MULTICAST=$1; }
        p() { BENCH_GRID=$PROBE/bench_grid-p12 bench_with CANDLE_RNN_PERSISTENT_WAVE_MULTICAST=$1; }
        echo "$v $c $sh | multicast 1 $(m 1) | 2 $(m 2) | 4 $(m 4) | clusters alone 2 $(p 2) | 4 $(p 4) | multicast 1 $(m 1)"
      done 2>&1 | tee "$OUT/cluster-probe.log"
      ;;
    clusters)
      # The wavefront launched in clusters of 2 (the rule), none (CANDLE_RNN_PERSISTENT_WAVE_CLUSTER=1)
      # and 4 (OUT/clusters.log).
      stamp "clusters"
      knob_lines CANDLE_RNN_PERSISTENT_WAVE_CLUSTER "- 1 4 - 1" clusters
      ;;
    suite)
      stamp "the whole GPU suite"
      gpu_tests
      ;;
    rule | rule-api)
      # The rule (the wavefront in training) / layer by layer (CANDLE_RNN_PERSISTENT_WAVE=0) /
      # the rule: graphed and eager through the direct call (rule), graphed through
      # loss.backward() and the weight-gradient sink (rule-api).
      stamp "$part"
      case $part in
        rule) runs="direct:--graph direct:" ;;
        *) runs="plain:--graph sink:--graph" ;;
      esac
      for run in $runs; do
        api=${run%%:*} graph=${run#*:}
        for spec in op-f16-default:lstm:3,128,30,512 op-bf16-default:gru:3,128,30,512 \
          op-bf16-default:lstm:3,128,200,512 op-bf16-default:gru:3,128,200,512; do
          split_spec "$spec"
          echo "$api ${graph:-eager} $v $c $sh | rule $(API=$api bench_with X=1) | layer by layer $(API=$api bench_with CANDLE_RNN_PERSISTENT_WAVE=0) | rule $(API=$api bench_with X=1)"
        done
      done 2>&1 | tee "$OUT/$part.log"
      ;;
    probe)
      # The wavefront's probes (probe-build.sh's bench_grid-pN in $PROBE: 1 the upper layers do
      # not wait for their projections, 2 the projections do not wait for the layer below, 3
      # neither; wrong results, their pace) beside the build's wavefront, two subgroups (so
      # inference forwards run as the wavefront too), µs an example (OUT/probe.log).
      stamp "probe"
      probe_lines "op-f16-default:lstm:3,128,30,512 op-bf16-default:gru:3,128,30,512 op-bf16-default:lstm:3,128,200,512" \
        wave "1 2 3" "two, layer by layer" CANDLE_RNN_PERSISTENT_WAVE=0 2>&1 | tee "$OUT/probe.log"
      ;;
    pace)
      # A wave step's pace against the layers' count, and the SM clock meanwhile: inference
      # forwards with two subgroups (the wavefront) at [200, 128, L x 512], L = 2 and 3, and layer
      # by layer, nvidia-smi sampling the SM clock every 50 ms (OUT/pace.log, OUT/clocks-*.csv).
      stamp "pace"
      graph=--graph
      for spec in op-bf16-default:lstm:2,128,200,512 op-bf16-default:lstm:3,128,200,512; do
        split_spec "$spec"
        for how in wave layers; do
          extra=X=1; [ $how = layers ] && extra=CANDLE_RNN_PERSISTENT_WAVE=0
          nvidia-smi --query-gpu=clocks.sm,power.draw --format=csv,noheader -lms 50 > "$OUT/clocks-${sh//,/x}-$how.csv" &
          smi=$!
          r=$(PHASE=forward bench_with $wave $extra)
          kill $smi
          echo "$v $c $sh $how | $r | SM MHz $(sort -n "$OUT/clocks-${sh//,/x}-$how.csv" | awk -F, '{a[NR]=$1} END {print a[1], a[int(NR/2)+1], a[NR]}') (min, median, max)"
        done
      done 2>&1 | tee "$OUT/pace.log"
      ;;
    one-layer)
      # One layer (a lab build of the wavefront kernel that takes one, `logs/rule/probe-one-layer.patch`:
      # bench_grid-p4 with the wavefront's shared memory, p5 with the recurrence's alone, in
      # $PROBE) against the wgmma forward in two subgroups, inference forwards at [200, 128, 512]
      # and [30, 128, 512], µs an example (OUT/one-layer.log).
      stamp "one layer"
      PHASE=forward probe_lines "op-bf16-default:lstm:1,128,200,512 op-bf16-default:lstm:1,128,30,512" \
        "wgmma forward" "4 5" "wgmma forward" X=1 2>&1 | tee "$OUT/one-layer.log"
      grep -c "wgmma wavefront: Some" "$OUT/stderr.txt"
      ;;
    no-projection)
      # The layers' recurrences side by side and nothing else: a lab build whose upper layers do
      # not wait for their projections and whose projection blocks do nothing
      # (`logs/rule/probe-no-projection.patch`, bench_grid-p6 in $PROBE), beside the wavefront, p3
      # (no waits, the projection blocks at work) and layer by layer, inference forwards in two
      # subgroups, µs an example (OUT/no-projection.log).
      stamp "no projection"
      PHASE=forward probe_lines "op-bf16-default:lstm:3,128,200,512 op-bf16-default:lstm:2,128,200,512" \
        wave "3 6" "layer by layer" CANDLE_RNN_PERSISTENT_WAVE=0 2>&1 | tee "$OUT/no-projection.log"
      ;;
    projection-parts)
      # Which part of the projection blocks' work slows the recurrences: probe-parts-build.sh's
      # lab builds in $PROBE (p7 without their loads, p8 without their stores, p9 without their
      # products, p10 and p11 with a quarter and a half of their loads), beside that folder's own
      # build, two subgroups, training | forward, µs an example (OUT/projection-parts.log).
      stamp "projection parts"
      # (PROBES names the builds there, by default all five.)
      D=$PROBE probe_lines "op-f16-default:lstm:3,128,30,512 op-bf16-default:lstm:3,128,200,512" \
        wave "${PROBES:-7 8 9 10 11}" "layer by layer" CANDLE_RNN_PERSISTENT_WAVE=0 2>&1 \
        | tee -a "$OUT/projection-parts.log"
      ;;
    torch)
      # Ours (the rule, layer by layer) / PyTorch's fp16 module / ours, graphed, µs an example.
      stamp "torch"
      graph=--graph
      only=""
      for spec in lstm,3,128,30,512 gru,3,128,30,512 lstm,3,128,200,512 gru,3,128,200,512; do only="$only --only $spec"; done
      torch_fp16() {
        timeout 200 python3 scripts/torch_reference.py --grid --impls torch-fp16 --graph \
          --loss sum --input-grad --reps 10 --warmup 5 $only > "$OUT/torch-$1.log" 2>>"$OUT/stderr.txt"
        grep -iE "^\| (lstm|gru) " "$OUT/torch-$1.log"
      }
      ours() {
        for spec in op-f16-default:lstm:3,128,30,512 op-bf16-default:gru:3,128,30,512 \
          op-bf16-default:lstm:3,128,200,512 op-bf16-default:gru:3,128,200,512; do
          split_spec "$spec"
          echo "$v $c $sh | rule $(bench_with X=1) | layer by layer $(bench_with CANDLE_RNN_PERSISTENT_WAVE=0)"
        done
      }
      { ours; torch_fp16 a; ours; } 2>&1 | tee "$OUT/torch.log"
      ;;
  esac
done
stamp done
