#!/usr/bin/env bash
# Follow-up of lab.sh (d57b739 with knobs.diff): the pushed forward with its K steps in one part
# (PARTS=1: no copies to overlap, so one barrier of the row groups a step), phase clocks
# (-DLAB_PHASES). `lab2.sh OUT`.
set -uo pipefail
out=$1
configs=()
for b in 4 8; do
  c="-DHID=128 -DBATCH=$b"
  configs+=("f-h128-b$b-u16 $c -DUNITS=16 -DNWARPS=8"
            "f-h128-b$b-u16-p1 $c -DUNITS=16 -DNWARPS=8 -DPARTS=1"
            "f-h128-b$b-u128-w8-mg8-p1 $c -DUNITS=128 -DNWARPS=8 -DFWD_MG=8 -DPARTS=1"
            "f-h128-b$b-u128-w16-mg16-p1 $c -DUNITS=128 -DNWARPS=16 -DFWD_MG=16 -DPARTS=1"
            "f-h128-b$b-u64-w8-mg8-p1 $c -DUNITS=64 -DNWARPS=8 -DFWD_MG=8 -DPARTS=1"
            "f-h128-b$b-u64-w8-mg1-p1 $c -DUNITS=64 -DNWARPS=8 -DPARTS=1"
            "f-h128-b$b-u32-w8-mg8-p1 $c -DUNITS=32 -DNWARPS=8 -DFWD_MG=8 -DPARTS=1"
            "f-h128-b$b-u32-w8-mg2-p1 $c -DUNITS=32 -DNWARPS=8 -DFWD_MG=2 -DPARTS=1"
            "fP-h128-b$b-u16 $c -DUNITS=16 -DNWARPS=8 -DLAB_PHASES"
            "fP-h128-b$b-u64-w8-mg8-p1 $c -DUNITS=64 -DNWARPS=8 -DFWD_MG=8 -DPARTS=1 -DLAB_PHASES"
            "fP-h128-b$b-u128-w8-mg8-p1 $c -DUNITS=128 -DNWARPS=8 -DFWD_MG=8 -DPARTS=1 -DLAB_PHASES"
            "b-h128-b$b-u16 $c -DLAB_BWD -DUNITS=16 -DNWARPS=8"
            "b-h128-b$b-u128-w16-k2-reg $c -DLAB_BWD -DUNITS=128 -DNWARPS=16 -DPUSH_KSPLIT=2 -DPUSH_WREG=1"
            "b-h128-b$b-u128-w8-reg $c -DLAB_BWD -DUNITS=128 -DNWARPS=8 -DPUSH_WREG=1"
            "b-h128-b$b-u16-reg $c -DLAB_BWD -DUNITS=16 -DNWARPS=8 -DPUSH_WREG=1"
            "b-h128-b$b-u16-w16-k2-reg $c -DLAB_BWD -DUNITS=16 -DNWARPS=16 -DPUSH_KSPLIT=2 -DPUSH_WREG=1")
done
source "$(dirname "$0")/lab-run.sh"
