#!/usr/bin/env bash
# On the GPU machine, binaries of `scripts/devbin.sh DIR`: what issue 33 is checked by, for the
# GRU on the crate's kernels.
#   pair:     issue 33's shapes (GRU, batch <= 32, and [35, 20, 2 x 1500]), graphed training and
#             forward as the grid times them (bench_grid | torch_reference.py --graph --loss sum
#             --input-grad), ours (bf16 and f16, the default algorithm; cuDNN's Standard in bf16)
#             / PyTorch's fp16 module / ours, into OUT/pair; the table (scripts/compare_table.py)
#             follows, then the bf16 and the f16 default's alone (OUT/pair/table-VARIANT.md). BENCH_GRID names another bench_grid than DIR's.
#   trace:    every node of replayed graphed calls of ours (f16 default) at GRU [30, 32, 128] and
#             [30, 32, 1024], with its device start and end (DIR/cupti: the CUPTI injection
#             library of results/2026-11-26-h200-graph-kernels/ with CUPTI's own), into OUT/trace_*.txt.
#   multicast: f16 graphed training | forward (µs an example) with the forward's multicast
#             clusters of the rule's (8), 4, 2 and none, in rounds: MULTICAST_SPECS (CELL:L,B,T,H
#             ..., default GRU [30, 32, 512], whose forward took 2.50 or 2.67 from one variant's
#             run to the next); MULTICAST_ROUND3= leaves out the third round, MULTICAST_MODES
#             narrows the sizes (rule 4 2 1).
#   lead:     an f16 LSTM's forward and training on the default (cuDNN's PersistStatic for one
#             layer's forward from hidden 256, choose.rs's ours_lead_persist_static) against
#             ours (op-f16-persistent), alternated twice, at hidden 256-1024 and batches 8-32
#             (not run yet: the session's device time ran out).
#   groups:   f16 graphed training | forward with batch groups of the rule's, 1 and 2
#             (CANDLE_RNN_PERSISTENT_GROUPS) at GRU and LSTM [30, 32, 1024] and [30, 32, 512],
#             alternated twice (not run yet).
#   check:    the op's GPU tests, then gpu_check --persistent.
#   sanitize: compute-sanitizer memcheck, synccheck and racecheck over GRU training and inference
#             calls at small shapes that take each of the crate's GRU kernels (SANITIZE_TOOLS,
#             SANITIZE_CELLS narrow it).
#   results/2026-11-29-h200-gru-close/run.sh DIR OUT pair|trace|multicast|lead|groups|check|sanitize
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2 PART=$3
source scripts/on-gpu.sh
py=/opt/torch/.venv/bin/python3
SHAPES="1,32,30,128 1,32,30,512 1,32,30,1024 2,20,35,1500"
how="--loss sum --input-grad --reps 10 --warmup 5"
case $PART in
pair)
  dir=$OUT/pair; mkdir -p "$dir"
  op() {  # one pass of ours over the shapes, into dir/op_$1.json
    for s in $SHAPES; do
      timeout 90 "${BENCH_GRID:-$D/bench_grid}" --no-loop --graph $how --api direct --mode gru --shape $s \
        --variants op-bf16-default,op-f16-default,op-bf16-standard --json "$dir/op_$1-$s.json" >> "$dir/op.log" 2>&1 \
        || echo "ours $1 $s failed"
    done
    $py -c "import json,sys; fs=sys.argv[2:]; d=json.load(open(fs[0])); d['grid']=[r for f in fs for r in json.load(open(f))['grid']]; json.dump(d, open(sys.argv[1],'w'))" \
      "$dir/op_$1.json" "$dir"/op_$1-*.json && rm -f "$dir"/op_$1-*.json
  }
  torch() {
    PYTHONUNBUFFERED=1 timeout 200 $py scripts/torch_reference.py --grid --graph $how --impls torch-fp16 \
      $(for s in $SHAPES; do echo --only gru,$s; done) --json "$dir/torch_$1.json" >> "$dir/torch.log" 2>&1 \
      || echo "torch $1 failed"
  }
  stamp "ours, PyTorch, PyTorch, ours (graphed)"
  op a; torch a; torch b; op b
  $py scripts/compare_table.py "$dir" | tee "$dir/table.md" | grep -E "^\| (gru|half|precision)"
  # Each half type's default alone (the issue's targets are bf16's).
  for v in op-bf16-default op-f16-default; do
    echo "$v:"
    $py scripts/compare_table.py --op $v "$dir" | tee "$dir/table-$v.md" | grep -E "^\| (gru|half)" | cut -d'|' -f2-6,13-16
  done
  ;;
trace)
  [ -f "$D/cupti/libcupti.so.13" ] || xz -dk "$D/cupti/libcupti.so.13.xz"
  for s in 1,32,30,128 1,32,30,1024; do
    name=trace_gru_${s//,/x}
    stamp "$name"
    CUDA_INJECTION64_PATH=$bin/cupti/libtrace_kernels.so TRACE_OUT=$OUT/$name.csv timeout 100 \
      "$D/bench_grid" --no-loop --graph $how --reps 20 --api direct --mode gru --shape $s \
      --variants op-f16-default > "$OUT/$name.log" 2>&1
    echo "rc=$? $(grep -E '^\| Gru ' "$OUT/$name.log" | cut -d'|' -f7,8,9 | tr '\n' ' ')"
    $py results/2026-11-26-h200-graph-kernels/analyze.py "$OUT/$name.csv" 10 > "$OUT/$name.txt"
    rm -f "$OUT/$name.csv" "$OUT/$name.log"
    grep -A12 "^graph" "$OUT/$name.txt" | cut -c1-120
  done
  ;;
multicast)
  for spec in ${MULTICAST_SPECS:-gru:1,32,30,512}; do
    cell=${spec%%:*} shape=${spec#*:}
    for round in 1 2 ${MULTICAST_ROUND3-3}; do
      row="$cell $shape round $round"
      for m in ${MULTICAST_MODES:-rule 4 2 1}; do
        [ $m = rule ] && unset CANDLE_RNN_PERSISTENT_MULTICAST || export CANDLE_RNN_PERSISTENT_MULTICAST=$m
        row="$row | $m: $(bench_us "" $cell $shape op-f16-default)"
      done
      echo "$row"
    done
  done
  unset CANDLE_RNN_PERSISTENT_MULTICAST
  ;;
lead)
  for s in 1,32,30,256 1,32,30,384 1,32,30,512 1,16,30,512 1,8,30,512 1,32,30,1024 1,32,200,512; do
    row="lstm $s"
    for v in op-f16-default op-f16-persistent op-f16-default op-f16-persistent; do
      row="$row | ${v#op-f16-} $(bench_us "" lstm $s $v)"
    done
    echo "$row"
  done
  ;;
groups)
  for c in gru lstm; do
    for s in 1,32,30,1024 1,32,30,512; do
      row="$c $s"
      for round in 1 2; do
        for g in "" 1 2; do row="$row | ${g:-rule}: $(bench_us "$g" $c $s op-f16-default)"; done
      done
      echo "$row"
    done
  done
  ;;
check)
  stamp "GPU tests"; gpu_tests
  stamp "gpu_check --persistent"; gpu_check_persistent
  ;;
sanitize)
  # Calls (phase:L,B,T,H) and what each takes on an H200 (kernel.rs's rules): 4 samples of
  # hidden 128, one cluster with the input folded in; 8 of 256, one cluster, pushed; 40 of 128,
  # batch groups; two layers of 256 at 8, a wavefront; 512 at 8, a grid barrier with the
  # forward's multicast; 77 samples of 200, chunks of the batch; two layers of 1500, the largest
  # hidden size. The inference forwards of the first two (the exchange buffer unfilled) and of
  # the multicast one besides training.
  for cell in ${SANITIZE_CELLS:-gru}; do
    for call in train:1,4,5,128 train:1,8,6,256 train:1,40,5,128 train:2,8,6,256 train:1,8,5,512 \
      train:1,77,4,200 train:2,20,4,1500 forward:1,4,5,128 forward:1,8,6,256 forward:1,8,5,512; do
      phase=${call%%:*} shape=${call#*:}
      for tool in ${SANITIZE_TOOLS:-memcheck synccheck racecheck}; do
        log="$OUT/cs-$tool-$cell-$phase-${shape//,/x}.log"
        timeout 120 "$CS" --tool $tool --print-limit 20 "$D/bench_grid" --no-loop $how --reps 1 --warmup 0 \
          --api direct --phase $phase --mode $cell --shape $shape --variants op-bf16-persistent > "$log" 2>&1
        echo "$tool $cell $phase $shape rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1 | sed 's/^=* *//'); ours: $(grep -c '(Persistent)' "$log")"
      done
    done
  done
  (cd "$OUT" && tar -czf sanitize-$(echo ${SANITIZE_TOOLS:-all} | tr " " -).tgz cs-*.log && rm -f cs-*.log)
  ;;
esac
stamp done
