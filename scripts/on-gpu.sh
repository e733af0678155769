# Sourced by the scripts a GPU machine runs on binaries of scripts/devbin.sh: with D (the binaries'
# folder) and OUT (where results go) set, makes OUT absolute, sets `bin` to D's absolute path (for
# commands run from elsewhere), sources D/gpu-env.sh (its output in OUT/env.txt), writes the GPU's
# name and driver into OUT/gpu.txt, unpacks the binaries that are not unpacked yet and defines
# `stamp` (a timestamped progress line), CS (compute-sanitizer's path, empty without one), the
# kernel cache (CANDLE_RNN_KERNEL_CACHE, warmed from D/kernel-cache.txz; with KEEP_KERNEL_CACHE=1
# handed back in OUT/kernel-cache.txz) and the helpers below (`run_gpu_tests`, `gpu_tests`,
# `gpu_tests_part`, `gpu_tests_as`, `gpu_check_persistent`, `sanitize_bench`, `bench_us`,
# `gpu_check_half`, `split_spec`, `bench_with`, `bench_rows`, `beside_default`, `forward_rows`,
# `torch_rows`, `compare_grid`, `half_grid`, `half_grid_apis`).
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
bin=$(cd "$D" && pwd)
source "$D/gpu-env.sh" > "$OUT/env.txt" 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/gpu.txt"
for f in "$D"/*.xz; do [ -e "$f" ] || continue; [ -x "${f%.xz}" ] || { xz -dkf -T8 "$f"; chmod +x "${f%.xz}"; }; done
stamp() { echo "[$(date +%T)] $*"; }

# The op's kernel cache (the PTX of every kernel variant, `kernels/ptx_cache.rs`), one folder for
# every process of the command. A fresh machine compiles each variant at its first use, one at a
# time (over 420 s of the GPU suite's 528 s; results/2026-11-30-h200-wgmma-train-forward/ §5):
# where DIR brings an earlier run's cache (kernel-cache.txz, which `scripts/devbin.sh` copies from
# .kernel-cache/), its files are loaded first, 16 processes at once (scripts/warm-kernels.py, up to
# 120 s), so that the driver's own cache holds their machine code before anything asks for it. With
# KEEP_KERNEL_CACHE=1 the files this command used go back on exit in OUT/kernel-cache.txz (one of
# the 8 files a command hands back; save it as .kernel-cache/kernel-cache.txz for the next build).
# CANDLE_RNN_KERNEL_CACHE=0 turns all of it off.
export CANDLE_RNN_KERNEL_CACHE=${CANDLE_RNN_KERNEL_CACHE:-${HOME:-/tmp}/.cache/candle-cudnn-rnn/ptx}
export CUDA_CACHE_MAXSIZE=${CUDA_CACHE_MAXSIZE:-4294967296}
kernel_cache_on=$([ "${CANDLE_RNN_KERNEL_CACHE:-0}" != 0 ] && echo 1)
[ -n "$kernel_cache_on" ] && mkdir -p "$CANDLE_RNN_KERNEL_CACHE"
if [ -n "$kernel_cache_on" ] && [ -f "$D/kernel-cache.txz" ]; then
  # Once a machine for each archive (a warm machine's driver cache has them already).
  archive_sum=$(cksum < "$D/kernel-cache.txz")
  if [ "$(cat "$CANDLE_RNN_KERNEL_CACHE/.warmed" 2>/dev/null)" != "$archive_sum" ]; then
    tar -xJf "$D/kernel-cache.txz" -C "$CANDLE_RNN_KERNEL_CACHE" \
      && stamp "$(timeout 120 python3 scripts/warm-kernels.py "$CANDLE_RNN_KERNEL_CACHE" 16)" \
      && echo "$archive_sum" > "$CANDLE_RNN_KERNEL_CACHE/.warmed"
  fi
fi
# Packs the kernel cache's files that this command read or wrote into OUT/kernel-cache.txz
# (none: no archive).
keep_kernel_cache() {
  local used
  used=$(cd "$CANDLE_RNN_KERNEL_CACHE" \
    && find . -maxdepth 1 -name '*.ptx' -newer "$kernel_cache_since")
  [ -n "$used" ] && (cd "$CANDLE_RNN_KERNEL_CACHE" && echo "$used" | tar -T - -cf - \
    | xz -6 -T0 > "$OUT/kernel-cache.txz")
  rm -f "$kernel_cache_since"
}
if [ -n "$kernel_cache_on" ] && [ "${KEEP_KERNEL_CACHE:-0}" = 1 ]; then
  kernel_cache_since=$(mktemp)
  trap keep_kernel_cache EXIT
fi
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n 1)

# The op's GPU tests (arguments: a name filter, if any) into the log $1, within TESTS_TIMEOUT
# seconds (560 unless set: a fresh machine compiles every kernel variant at its first use, over
# 420 s of the suite's time; results/2026-11-30-h200-wgmma-train-forward/ §5); returns their
# exit status.
run_gpu_tests() {
  local log=$1; shift
  RNN_TEST_REQUIRE_GPU=1 timeout "${TESTS_TIMEOUT:-560}" "$D/op-gpu-tests" --test-threads=1 "$@" > "$log" 2>&1
}

# The op's GPU tests (a name filter, if any) into OUT/tests.log; prints the verdicts.
gpu_tests() {
  run_gpu_tests "$OUT/tests.log" "$@"
  echo "rc=$?"; grep -E "^test result|FAILED|panicked" "$OUT/tests.log" | head
}

# Part K of N ($1, $2) of the op's GPU tests, every N-th by name from the K-th (1-based), into
# OUT/tests-K.log; prints the verdict and the failures. The whole suite took 528 s on a fresh
# machine (results/2026-12-01-h200-tf32-scaled-rules/logs/last/), near the device's 600 s a
# command: run its parts as commands of their own.
gpu_tests_part() {
  local k=$1 n=$2 names
  names=$(RNN_TEST_REQUIRE_GPU=1 "$D/op-gpu-tests" --list 2>/dev/null | sed -n 's/: test$//p' \
    | awk -v k="$k" -v n="$n" '(NR - k) % n == 0 && NR >= k')
  # shellcheck disable=SC2086
  gpu_tests_as "$k" --exact $names
}

# The op's GPU tests matching FILTER... (with the environment given before the call) into
# OUT/tests-NAME.log: prints NAME, the exit status, the verdict and the failures.
gpu_tests_as() {
  local name=$1; shift
  run_gpu_tests "$OUT/tests-$name.log" "$@"
  echo "$name rc=$? $(grep -E '^test result' "$OUT/tests-$name.log")"
  grep -E "FAILED|panicked|failed:|exceeds" "$OUT/tests-$name.log" | head -8
}

# `gpu_check --persistent` (with gpu_check's further options $@: `--dtype tf32`, say) into
# OUT/gpu_check.log; prints the verdicts and the rows ok.
gpu_check_persistent() {
  timeout 560 "$D/gpu_check" --persistent --seed 2711 "$@" > "$OUT/gpu_check.log" 2>&1
  echo "rc=$?"; tail -2 "$OUT/gpu_check.log"; grep -c '| ok |' "$OUT/gpu_check.log"
  grep -E '\| FAIL \|' "$OUT/gpu_check.log" | head
}

# `gpu_check --persistent` in f16 and bf16 at once into OUT/gpu_check-f16.log and
# OUT/gpu_check-bf16.log; prints each one's verdict and rows ok, then any failed row.
gpu_check_half() {
  local dt
  for dt in f16 bf16; do
    (timeout 560 "$D/gpu_check" --persistent --seed 2711 --dtype $dt > "$OUT/gpu_check-$dt.log" 2>&1; \
      echo "$dt rc=$? ok rows $(grep -c '| ok |' "$OUT/gpu_check-$dt.log") $(tail -1 "$OUT/gpu_check-$dt.log")") &
  done
  wait
  grep -hE '\| FAIL \|' "$OUT"/gpu_check-*.log | head
}

# compute-sanitizer memcheck, racecheck and synccheck (or the tools SAN_TOOLS names: initcheck,
# say) on one repetition of bench_grid (no warm-up) at each CELL:L,B,T,H of SPECS ($1), VARIANT
# ($2), with bench_grid's further options $3.. (the phase, --input-grad), each under SAN_TIMEOUT
# seconds (150 unless set): a line a run (the tool's summary, where its first report is, and
# bench_grid's row) added to OUT/sanitize.log, the logs in OUT/sanitize.tgz (sanitize-2.tgz and on
# where a call before in the same OUT left one).
sanitize_bench() {
  local specs=$1 variant=$2 spec c sh tool log n=1 tgz=sanitize.tgz
  shift 2
  while [ -e "$OUT/$tgz" ]; do n=$((n + 1)) && tgz=sanitize-$n.tgz; done
  for spec in $specs; do
    c=${spec%%:*} sh=${spec#*:}
    for tool in ${SAN_TOOLS:-memcheck racecheck synccheck}; do
      log="$OUT/cs-$tool-$c-${sh//,/x}.log"
      timeout "${SAN_TIMEOUT:-150}" "$CS" --tool $tool --print-limit 20 "$D/bench_grid" --no-loop --loss sum \
        --api direct --reps 1 --warmup 0 "$@" --mode $c --shape $sh --variants $variant > "$log" 2>&1
      echo "$tool $c $sh rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$log" | tail -1 | sed 's/^=* *//')" \
        "$(grep -m1 -E '^=+ +at |Race reported' "$log" | sed 's/^=* */(first /; s/$/)/')" \
        "| $(grep -E '^\| (Lstm|Gru) ' "$log" | cut -d'|' -f7-9)"
    done
  done 2>&1 | tee -a "$OUT/sanitize.log"
  (cd "$OUT" && tar czf "$tgz" cs-*.log && rm -f cs-*.log)
}

# One bench_grid row as "train forward" (graphed training with the input's gradient, then the
# forward, µs an example): GROUPS (CANDLE_RNN_PERSISTENT_GROUPS, empty for the rule's), CELL,
# SHAPE (L,B,T,H), VARIANT; BENCH_GRID names another binary than D's (an old build's, say).
bench_us() {
  CANDLE_RNN_PERSISTENT_GROUPS=$1 timeout 90 "${BENCH_GRID:-$D/bench_grid}" --no-loop --graph --loss sum \
    --input-grad --reps 10 --warmup 5 --api direct --mode "$2" --shape "$3" --variants "$4" \
    2>>"$OUT/stderr.txt" | grep -E '^\| (Lstm|Gru) ' \
    | awk -F'|' '{gsub(/ /,"",$8); gsub(/ /,"",$9); printf "%s %s", $8, $9}'
}

# Sets `v`, `c` and `sh` (bench_with's variant, cell and shape) from a spec VARIANT:CELL:L,B,T,H.
split_spec() {
  v=${1%%:*}
  local rest=${1#*:}
  c=${rest%%:*} sh=${rest#*:}
}

# One bench_grid row as "train forward; " (µs an example; NaN for a phase not timed) with the
# settings VAR=VALUE given (X=1 for none), graphed where `graph` is --graph (empty: eager), of
# variant `v` (op-bf16-default unless set) at CELL `c` and SHAPE `sh`, through API (bench_grid's
# --api, direct unless set), both phases or PHASE's alone; BENCH_GRID names another binary,
# BENCH_ARGS adds bench_grid options (`--bidirectional`).
bench_with() {
  env "$@" timeout 120 "${BENCH_GRID:-$D/bench_grid}" --no-loop $graph ${BENCH_ARGS:-} --loss sum --input-grad --reps 10 \
    --warmup 5 --api "${API:-direct}" ${PHASE:+--phase $PHASE} --mode $c --shape $sh \
    --variants "${v:-op-bf16-default}" 2>>"$OUT/stderr.txt" | grep -E '^\| (Lstm|Gru) ' \
    | awk -F'|' '{t=$8; f=$9; gsub(/ /,"",t); gsub(/ /,"",f); printf "%s %s; ", t, f}'
}

# One bench_grid call of several variants: "variant (kernel) train forward |" per variant
# (training with the input's gradient, then the forward, µs an example), graphed where $1 is
# --graph (empty: eager), at CELL $2, SHAPE $3 (L,B,T,H), VARIANTS $4 (comma-joined), through
# API (bench_grid's --api; direct unless set).
bench_rows() {
  timeout 150 "$D/bench_grid" --no-loop $1 --loss sum --input-grad --reps 10 --warmup 5 --api "${API:-direct}" \
    --mode "$2" --shape "$3" --variants "$4" 2>>"$OUT/stderr.txt" | grep -E '^\| (Lstm|Gru) ' \
    | awk -F'|' '{n=$7; t=$8; f=$9; gsub(/^ +| +$/,"",n); gsub(/ /,"",t); gsub(/ /,"",f); printf "%s %s %s | ", n, t, f}'
}

# Ours (op-P-persistent) beside the default (op-P-default) in precision P ($1: bf16, f16, tf32)
# at each CELL:L,B,T,H of SPECS ($2: whitespace-separated), launched as $3 (--graph, or empty
# for eager): a line a shape, "training CELL SHAPE | " and bench_rows's columns.
beside_default() {
  local p=$1 specs=$2 graph=${3:-} spec c sh
  for spec in $specs; do
    c=${spec%%:*} sh=${spec#*:}
    echo "training $c $sh | $(bench_rows "$graph" $c $sh op-$p-persistent,op-$p-default)"
  done
}

# bench_rows for the inference forward alone: "variant (kernel) forward |" per variant (µs an
# example), graphed where $1 is --graph (empty: eager), at CELL $2, SHAPE $3 (L,B,T,H), VARIANTS $4
# (comma-joined), with the environment given before the call; BENCH_GRID names another binary
# than D's (an old build's, say).
forward_rows() {
  timeout 150 "${BENCH_GRID:-$D/bench_grid}" --no-loop $1 --loss sum --reps 10 --warmup 5 --api direct --phase forward \
    --mode "$2" --shape "$3" --variants "$4" 2>>"$OUT/stderr.txt" | grep -E '^\| (Lstm|Gru) ' \
    | awk -F'|' '{n=$7; f=$9; gsub(/^ +| +$/,"",n); gsub(/ /,"",f); printf "%s %s | ", n, f}'
}

# PyTorch's fp16 module (or TORCH_IMPL's: torch-tf32, say) at each MODE,L,B,T,H of SPECS ($2:
# space-separated; MODE lstm or gru), training with the input's gradient and the forward, graphed
# and eager (10 repetitions after 5 of warm-up), each under TIMEOUT seconds ($3, 200 unless
# given): OUT/NAME-graph.log and OUT/NAME.log ($1: NAME); prints their rows, each led by --graph
# or eager.
torch_rows() {
  local name=$1 only="" spec graph
  for spec in $2; do only="$only --only $spec"; done
  for graph in --graph ""; do
    timeout "${3:-200}" python3 scripts/torch_reference.py --grid --impls "${TORCH_IMPL:-torch-fp16}" $graph --loss sum --input-grad \
      --reps 10 --warmup 5 $only > "$OUT/$name${graph:+-graph}.log" 2>>"$OUT/stderr.txt"
    grep -iE "^\| (lstm|gru) " "$OUT/$name${graph:+-graph}.log" | sed "s/^/${graph:-eager} /"
  done
}

# scripts/compare-grid.sh against PyTorch's module IMPL ($1: torch-fp16, torch-tf32) for the op's
# VARIANTS ($2, comma-joined), all eight passes, 10 repetitions after 3 of warm-up, under a
# TIMEOUT ($3, seconds): OUT/grid.log, its table in OUT/table.md, its JSON and table in
# OUT/grid.tgz; prints the geo-mean rows.
compare_grid() {
  COMPARE_IMPLS=$1 timeout "$3" scripts/compare-grid.sh "$D/bench_grid" "$OUT/grid" 10 3 \
    --variants "$2" > "$OUT/grid.log" 2>&1
  echo "compare-grid rc=$?"
  cp "$OUT/grid/table.md" "$OUT/table.md" 2>/dev/null
  (cd "$OUT" && tar czf grid.tgz grid && rm -rf grid)
  grep -E "^\| (tf32|half) " "$OUT/table.md"
}

# compare_grid in half precision: the op's bf16 and f16 defaults against PyTorch's fp16 module,
# within $1 seconds (420 unless given).
half_grid() { compare_grid torch-fp16 op-bf16-default,op-f16-default "${1:-420}"; }

# half_grid through the sink (--api direct) and through `loss.backward()` (plain), into
# OUT/grid-direct/ and OUT/grid-plain/, each within GRID_TIMEOUT seconds (270 unless set).
half_grid_apis() {
  local root=$OUT api
  for api in direct plain; do
    stamp "grid $api"
    OUT=$root/grid-$api && mkdir -p "$OUT"
    COMPARE_API=$api half_grid "${GRID_TIMEOUT:-270}"
  done
  OUT=$root
}
