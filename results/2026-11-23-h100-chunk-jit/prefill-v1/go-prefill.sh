#!/usr/bin/env bash
# Branch driver-cache-prefill: does filling the driver's compile cache from child processes
# (one per candle module, ptb-lm/src/driver_cache.rs) shorten a fresh machine's start, and
# what does it cost once the cache is warm? Whole `ptb-lm bench` commands, PTB large bf16,
# each cold case with an empty CUDA_CACHE_PATH of its own, then once more on the cache it left:
#   prefill   the default
#   off       PTB_LM_PREFILL_DRIVER_CACHE=0 (candle compiles at first use, as main does)
# Round 1 runs prefill first, round 2 (if time allows) off first, to expose order effects.
set -uo pipefail
cd "$(dirname "$0")/.."
D=.devbin-prefill
FINAL=${OUT:-/tmp}; OUT=/tmp/res; rm -rf $OUT; mkdir -p $OUT
trap 'tar czf $FINAL/run.tar.gz -C /tmp res' EXIT; trap 'exit 143' TERM
source $D/gpu-env.sh --report > $OUT/env.txt 2>&1
nvidia-smi --query-gpu=name,compute_mode,persistence_mode --format=csv >> $OUT/env.txt 2>&1
unset CUDA_CACHE_DISABLE PTB_LM_PREFILL_DRIVER_CACHE
[ -x $D/ptb-lm ] || { xz -dkf -T8 $D/ptb-lm.xz; chmod +x $D/ptb-lm; }
B=$D/ptb-lm
START=$(date +%s)
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

# Untimed: the libraries and the data into the page cache, the driver up, and the child's
# subcommand checked on its own (its smallest module, in a throwaway cache).
t0=$(date +%s.%N)
for d in $(echo "${GPU_ENV_LIBDIRS:-}" | tr : ' '); do cat "$d"/lib*.so* > /dev/null 2>&1; done
cat $B data/ptb/* > /dev/null
W=$(mktemp -d)
CUDA_CACHE_PATH=$W timeout 60 $B fill-driver-cache fill --device 0 > $OUT/child-check.log 2>&1
rc=$?
echo "warm-up: $(secs $t0 $(date +%s.%N)) s; fill-driver-cache fill --device 0: rc $rc" | tee $OUT/summary.txt
rm -rf "$W"

# One whole bench command: name, cache folder, then extra VAR=value settings.
run_case() {
  local name=$1 cache=$2 t0 t1 rc; shift 2
  t0=$(date +%s.%N)
  env CUDA_CACHE_PATH="$cache" "$@" timeout 120 $B bench --config large --precision bf16 \
    --batches 20 --warmup 5 --data data/ptb > $OUT/$name.json 2> $OUT/$name.err
  rc=$?
  t1=$(date +%s.%N)
  printf '%-16s %7s s  rc %s  cache %6s KiB  %s  stderr lines %s\n' "$name" "$(secs $t0 $t1)" $rc \
    "$(du -sk "$cache" | cut -f1)" "$(grep -o '[0-9.]* ms/batch' $OUT/$name.err | head -1)" \
    "$(wc -l < $OUT/$name.err)" | tee -a $OUT/summary.txt
}

round() {
  local first=$1 second=$2 r=$3
  declare -A cache
  cache[prefill]=$(mktemp -d); cache[off]=$(mktemp -d)
  declare -A env=([prefill]="PTB_LM_PREFILL_DRIVER_CACHE=1" [off]="PTB_LM_PREFILL_DRIVER_CACHE=0")
  for w in cold warm; do
    for c in $first $second; do
      run_case "r$r-$w-$c" "${cache[$c]}" ${env[$c]}
    done
  done
  rm -rf "${cache[prefill]}" "${cache[off]}"
}

echo "== round 1 (prefill first)" | tee -a $OUT/summary.txt
round prefill off 1
if [ $(( $(date +%s) - START )) -lt 90 ]; then
  echo "== round 2 (off first)" | tee -a $OUT/summary.txt
  round off prefill 2
fi
echo "zombies left: $(ps -e -o stat= | grep -c '^Z')" | tee -a $OUT/summary.txt
echo "total $(( $(date +%s) - START )) s" | tee -a $OUT/summary.txt
