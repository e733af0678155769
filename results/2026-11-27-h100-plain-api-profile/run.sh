#!/usr/bin/env bash
# On the GPU machine, binaries of scripts/devbin.sh DIR, after the one-cluster backward's push
# (results/2026-11-27-h100-pushed-backward/):
#   plain:   the op as a candle user trains it: graphed, then eager training calls, µs an example,
#            through `loss.backward()` with candle-nn's SGD step (--api plain --sgd), through
#            `loss.backward()` alone (--api plain) and through candle_cudnn_rnn::backward (--api
#            direct, what the grid times), ours in bf16 and TF32 (the defaults), then PyTorch's
#            fp16 and TF32 modules on the same shapes (torch_reference.py --only);
#   profile: where a graphed-size training call's time goes now, kernel by kernel (Nsight
#            Compute's gpu__time_duration of the kernels of 1 warm-up and 2 eager training calls,
#            application replay; the machine has no Nsight Systems), bf16 default, as
#            results/2026-11-27-h100-small-profile/.
#   results/2026-11-27-h100-plain-api-profile/run.sh DIR OUT plain|profile
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
D=$1 OUT=$2 PART=$3
source scripts/on-gpu.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
shapes="gru,1,32,30,128 lstm,1,32,30,128 gru,1,32,30,512 lstm,1,128,30,512 lstm,2,20,35,1500 gru,3,128,30,512"
how="--no-loop --loss sum --input-grad --reps 10 --warmup 5"
case $PART in
plain)
  for launch in --graph ""; do
    stamp "ours ${launch:-eager}: plain + SGD | plain | direct | plain + SGD (training, forward)"
    for spec in $shapes; do
      IFS=, read -r mode l b t h <<< "$spec"
      row() {
        timeout 90 "$D/bench_grid" $how $launch "$@" --mode $mode --shape $l,$b,$t,$h \
          --variants op-bf16-default,op-tf32-default 2>>"$OUT/stderr.txt" | grep -E '^\| (Lstm|Gru) ' \
          | awk -F'|' '{gsub(/ /,"",$8); gsub(/ /,"",$9); printf "%s %s ", $8, $9}'
      }
      echo "$spec [bf16 tf32] | $(row --api plain --sgd) | $(row --api plain) | $(row --api direct) | $(row --api plain --sgd)"
    done
    stamp "PyTorch ${launch:-eager} (fp16, TF32)"
    only=(); for spec in $shapes; do only+=(--only "$spec"); done
    timeout 200 python3 scripts/torch_reference.py --grid $launch --loss sum --input-grad --reps 10 --warmup 5 \
      --impls torch-fp16,torch-tf32 "${only[@]}" --json "$OUT/torch${launch:-_eager}.json" \
      > "$OUT/torch${launch:-_eager}.log" 2>&1
    echo "rc=$?"; grep -E "^\| (lstm|gru) " "$OUT/torch${launch:-_eager}.log"
  done 2>&1 | tee "$OUT/plain.txt"
  ;;
profile)
  ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n 1)
  for spec in gru,1,32,30,128 lstm,1,32,30,128 gru,1,32,30,512 lstm,1,128,30,128; do
    IFS=, read -r mode l b t h <<< "$spec"
    name=${mode}_${l}x${b}x${t}x${h}
    echo "$name | $(bench_us "" $mode $l,$b,$t,$h op-bf16-default)"
    timeout 150 "$ncu" --replay-mode application --clock-control none --metrics gpu__time_duration.sum --csv \
      "$bin/bench_grid" --no-loop --loss sum --input-grad --warmup 1 --reps 2 --api direct \
      --mode $mode --shape $l,$b,$t,$h --variants op-bf16-default > "$OUT/$name.csv" 2> "$OUT/$name.log"
  done | tee "$OUT/graphed.txt"
  cd "$OUT" && tar czf ncu.tgz *.csv *.log && rm -f *.csv *.log
  ;;
esac
stamp done
