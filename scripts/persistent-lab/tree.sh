#!/usr/bin/env bash
# Copies what the lab harness builds from (the op crate and scripts/) into DIR, for a lab script
# that changes it (switches of its own, an older kernel) without touching the checkout, then
# applies PATCH there with patch's OPTIONS (default -p1; `-R -p1` takes it back), if given.
#   scripts/persistent-lab/tree.sh DIR [PATCH [OPTIONS...]]
set -euo pipefail
dir=$1; shift
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$dir"
cp -r "$root/candle-cudnn-rnn" "$root/scripts" "$dir/"
if [ $# -gt 0 ]; then
  diff=$1; shift
  [ $# -gt 0 ] || set -- -p1
  (cd "$dir" && patch -s "$@" < "$diff") || { echo "tree.sh: $diff does not apply ($*)" >&2; exit 1; }
fi
