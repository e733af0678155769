#!/usr/bin/env python3
"""Per-kernel device time of the op against PyTorch, from two ncu runs (stdlib only).

Usage: scripts/ncu_compare.py OP_CSV OP_STEPS TORCH_CSV TORCH_STEPS [TITLE]
Each CSV is `ncu --csv --page raw --metrics gpu__time_duration.sum` over a program that ran
STEPS identical steps (training steps or forwards). Prints, per kernel name, calls and
microseconds per step on each side, sorted by the larger time, and the totals: what both run
and what only one side runs. ncu serializes kernels and does not list memsets or copies.
"""
import csv
import sys
from collections import defaultdict


def per_kernel(path):
    rows = list(csv.reader(l for l in open(path) if l.startswith('"')))
    head = rows[0]
    name, dur = head.index("Kernel Name"), head.index("gpu__time_duration.sum")
    unit = rows[1][dur]  # the units row
    scale = {"nsecond": 1e-3, "ns": 1e-3, "usecond": 1.0, "us": 1.0, "msecond": 1e3, "ms": 1e3}[unit]
    acc = defaultdict(lambda: [0, 0.0])
    for r in rows[2:]:
        try:
            t = float(r[dur].replace(",", "")) * scale
        except (ValueError, IndexError):
            continue
        a = acc[r[name]]
        a[0] += 1
        a[1] += t
    return acc


def main():
    op_csv, op_steps, t_csv, t_steps = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
    title = sys.argv[5] if len(sys.argv) > 5 else ""
    op, torch = per_kernel(op_csv), per_kernel(t_csv)
    names = sorted(set(op) | set(torch),
                   key=lambda k: -max(op.get(k, [0, 0])[1] / op_steps, torch.get(k, [0, 0])[1] / t_steps))
    print(f"## {title}\n")
    print("| kernel | op calls/step | op us/step | torch calls/step | torch us/step |")
    print("|---|---|---|---|---|")
    tot = {"both_op": 0.0, "both_torch": 0.0, "op_only": 0.0, "torch_only": 0.0}
    for k in names:
        oc, ot = op.get(k, [0, 0.0])
        tc, tt = torch.get(k, [0, 0.0])
        oc, ot, tc, tt = oc / op_steps, ot / op_steps, tc / t_steps, tt / t_steps
        if k in op and k in torch:
            tot["both_op"] += ot
            tot["both_torch"] += tt
        elif k in op:
            tot["op_only"] += ot
        else:
            tot["torch_only"] += tt
        if max(ot, tt) >= 1.0:
            print(f"| `{k[:80]}` | {oc:.1f} | {ot:.1f} | {tc:.1f} | {tt:.1f} |")
    print(f"\nper step: kernels both run: op {tot['both_op']:.0f} us, torch {tot['both_torch']:.0f} us; "
          f"only the op's: {tot['op_only']:.0f} us; only PyTorch's: {tot['torch_only']:.0f} us; "
          f"total op {tot['both_op'] + tot['op_only']:.0f} us, torch {tot['both_torch'] + tot['torch_only']:.0f} us\n")


if __name__ == "__main__":
    main()
