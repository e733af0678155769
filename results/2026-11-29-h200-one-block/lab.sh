#!/usr/bin/env bash
# One LSTM layer at hidden 128 in the lab harness (bf16, 35 steps): a batch group's recurrence in
# 8 blocks of 16 units (the library's one-cluster plan) against fewer, larger blocks, down to one
# block holding every unit (FWD_MG: the forward's warps split the rows; PUSH_WREG / PUSH_KSPLIT:
# the backward's pushed product from registers, K split over warps). Ran on d57b739 with
# knobs.diff applied. `lab.sh OUT`.
set -uo pipefail
out=$1
configs=()
for b in 4 8 16 32; do
  c="-DHID=128 -DBATCH=$b"
  configs+=("f-h128-b$b-u16 $c -DUNITS=16 -DNWARPS=8"
            "f-h128-b$b-u128-w8-mg1 $c -DUNITS=128 -DNWARPS=8"
            "f-h128-b$b-u128-w8-mg8 $c -DUNITS=128 -DNWARPS=8 -DFWD_MG=8"
            "f-h128-b$b-u128-w16-mg16 $c -DUNITS=128 -DNWARPS=16 -DFWD_MG=16"
            "f-h128-b$b-u128-w16-mg8 $c -DUNITS=128 -DNWARPS=16 -DFWD_MG=8"
            "f-h128-b$b-u64-w8-mg8 $c -DUNITS=64 -DNWARPS=8 -DFWD_MG=8"
            "f-h128-b$b-u32-w8-mg8 $c -DUNITS=32 -DNWARPS=8 -DFWD_MG=8"
            "f-h128-b$b-u32-w8-mg1 $c -DUNITS=32 -DNWARPS=8"
            "b-h128-b$b-u16 $c -DLAB_BWD -DUNITS=16 -DNWARPS=8"
            "b-h128-b$b-u128-w8 $c -DLAB_BWD -DUNITS=128 -DNWARPS=8"
            "b-h128-b$b-u128-w8-reg $c -DLAB_BWD -DUNITS=128 -DNWARPS=8 -DPUSH_WREG=1"
            "b-h128-b$b-u128-w16-k2-reg $c -DLAB_BWD -DUNITS=128 -DNWARPS=16 -DPUSH_KSPLIT=2 -DPUSH_WREG=1"
            "b-h128-b$b-u128-w16-k2 $c -DLAB_BWD -DUNITS=128 -DNWARPS=16 -DPUSH_KSPLIT=2"
            "b-h128-b$b-u64-w8-reg $c -DLAB_BWD -DUNITS=64 -DNWARPS=8 -DPUSH_WREG=1"
            "b-h128-b$b-u64-w16-k2-reg $c -DLAB_BWD -DUNITS=64 -DNWARPS=16 -DPUSH_KSPLIT=2 -DPUSH_WREG=1"
            "b-h128-b$b-u32-w8-reg $c -DLAB_BWD -DUNITS=32 -DNWARPS=8 -DPUSH_WREG=1"
            "b-h128-b$b-u32-w8 $c -DLAB_BWD -DUNITS=32 -DNWARPS=8")
done
source "$(dirname "$0")/lab-run.sh"
