# Sourced by the scripts a GPU machine runs on binaries of scripts/devbin.sh: with D (the
# binaries' folder) and OUT (where results go) set, makes OUT absolute, sources D/gpu-env.sh
# (its output in OUT/env.txt), unpacks the binaries that are not unpacked yet and defines
# `stamp` (a timestamped progress line) and CS (compute-sanitizer's path, empty without one).
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
source "$D/gpu-env.sh" > "$OUT/env.txt" 2>&1
for f in "$D"/*.xz; do [ -e "$f" ] || continue; [ -x "${f%.xz}" ] || { xz -dkf -T8 "$f"; chmod +x "${f%.xz}"; }; done
stamp() { echo "[$(date +%T)] $*"; }
CS=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -n 1)
