#!/usr/bin/env python3
"""The op against PyTorch on the grid, from one comparison run (stdlib only).

Usage: scripts/compare_table.py [--op VARIANT,...] DIR
DIR holds op_?.json (bench_grid --json) and torch_?.json (scripts/torch_reference.py --grid
--json) from passes run in alternating order in one command (scripts/compare-grid.sh), and
optionally op_eager*.json and torch_eager*.json (training not captured as a graph: one pass each
before 2026-11-30, then two in the same alternating order, op_eager_b and torch_eager_b the
second). For every shape
and precision class it prints the op's time (the fastest of its variants that ran: default,
standard, Auto, ...; the kernel that served in brackets), PyTorch's fastest in the same class,
both as the mean of the passes' medians with the min and max over all repetitions, and their
ratio; then per class the geometric mean of the ratios, how many shapes the op loses, and the
worst (with --op, only those of the op's variants count: `--op op-bf16-default` gives the bf16
default's ratios). Classes: fp32 (strict), TF32, and half precision (the op's bf16 and f16 against
PyTorch's fp16 module, AMP fp16 and AMP bf16, whose RNN runs in fp16). Tables: training and
forward as the passes ran them (graphed with compare-grid.sh; its forwards were eager before
2026-11-26), then both eager, then one summary of every table's geo-means.
"""
import glob
import json
import math
import os
import sys

# The op's variants per class: bench_grid's names (op-PRECISION-KERNEL) and the older
# op-PRECISION for the standard algorithm, so that earlier runs' files still read; PyTorch's
# implementations of the class (its fastest counts).
KERNELS = ["", "-standard", "-auto", "-default", "-persistent", "-static", "-static-small-h",
           "-dynamic"]
PRECISIONS = [
    ("fp32", [f"op-fp32{k}" for k in KERNELS], ["torch-fp32"]),
    ("tf32", [f"op-tf32{k}" for k in KERNELS], ["torch-tf32"]),
    ("half", [f"op-{p}{k}" for p in ("bf16", "f16") for k in KERNELS],
     ["torch-fp16", "torch-amp-fp16", "torch-amp-bf16"]),
]


# The op's variants that count (`--op`; None: all).
ONLY_OP = None


def load_rows(pattern):
    rows = []
    for p in sorted(glob.glob(pattern)):
        with open(p) as f:
            rows += json.load(f)["grid"]
    return rows


def collect(rows, phase):
    """{(shape, impl): (mean of pass medians, min, max, picked algorithm)}"""
    acc = {}
    for r in rows:
        if "error" in r or r.get("refused") or r.get(f"{phase}_us_per_example") is None:
            continue
        impl, pick = r["impl"], ""
        if " (" in impl:
            impl, pick = impl.split(" (", 1)
            pick = pick.rstrip(")")
        # A bidirectional row (`--bidirectional` on both sides) is a mode of its own.
        mode = r["mode"] + ("-bi" if r.get("bidirectional") else "")
        key = ((mode, r["layers"], r["batch"], r["seq"], r["hidden"]), impl)
        a = acc.setdefault(key, {"med": [], "min": [], "max": [], "pick": set()})
        a["med"].append(r[f"{phase}_us_per_example"])
        a["min"].append(r.get(f"{phase}_min_us_per_example", r[f"{phase}_us_per_example"]))
        a["max"].append(r.get(f"{phase}_max_us_per_example", r[f"{phase}_us_per_example"]))
        if pick:
            a["pick"].add(pick)
    return {k: (sum(v["med"]) / len(v["med"]), min(v["min"]), max(v["max"]), "/".join(sorted(v["pick"])))
            for k, v in acc.items()}


def us(v):
    """Microseconds to three significant digits (0.912, 3.45, 17.6, 136), so that a ratio near
    a target can be read from the times beside it."""
    return f"{v:.3g}" if v < 100 else f"{v:.0f}"


def geo_mean(rs):
    return math.exp(sum(math.log(r) for r, _ in rs) / len(rs))


def table(d, phase, passes, title):
    """Prints the shape-by-shape table of `phase` in the passes `passes` and its per-class
    summary; returns {class: [(ratio, shape)]} (empty where the passes have no such rows)."""
    ours, theirs = collect(load_rows(os.path.join(d, f"op_{passes}.json")), phase), \
        collect(load_rows(os.path.join(d, f"torch_{passes}.json")), phase)
    shapes = sorted({k[0] for k in ours}, key=lambda s: (s[0], s[1], s[3], s[2], s[4]))
    if not shapes:
        return {}
    print(f"#### {title}: microseconds per example, mean of the passes' medians [min, max]\n")
    cols = ["mode", "L", "B", "T", "H"]
    for name, _, _ in PRECISIONS:
        cols += [f"op {name} (kernel)", f"torch {name}", "op/torch"]
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    ratios = {name: [] for name, _, _ in PRECISIONS}
    for s in shapes:
        row = [str(v) for v in s]
        for name, impls, timpls in PRECISIONS:
            impls = [i for i in impls if ONLY_OP is None or i in ONLY_OP]
            cands = [(ours[(s, i)], i) for i in impls if (s, i) in ours and ours[(s, i)][0] == ours[(s, i)][0]]
            ts = [(theirs[(s, t)], t) for t in timpls if (s, t) in theirs]
            if not cands or not ts:
                row += ["-", "-", "-"]
                continue
            (v, lo, hi, pick), impl = min(cands)
            t, timpl = min(ts)
            label = impl[len("op-"):] + (f" ({pick})" if pick else "")
            r = v / t[0]
            ratios[name].append((r, s))
            row += [f"{us(v)} [{us(lo)}, {us(hi)}] {label}",
                    f"{us(t[0])} [{us(t[1])}, {us(t[2])}] {timpl[len('torch-'):]}",
                    f"**{r:.3f}**" if r > 1 else f"{r:.3f}"]
        print("| " + " | ".join(row) + " |")
    print()
    print("| precision | shapes | geo-mean op/torch | op slower on | worst |")
    print("|---|---|---|---|---|")
    for name, _, _ in PRECISIONS:
        rs = ratios[name]
        if not rs:
            continue
        worst = max(rs)
        slower = sum(r > 1 for r, _ in rs)
        print(f"| {name} | {len(rs)} | {geo_mean(rs):.3f} | {slower} | {worst[0]:.3f} ({worst[1]}) |")
    print()
    return ratios


def summary(columns):
    """One table of every phase's geo-mean per class (the shapes the op ran slower on in
    brackets): `columns` is [(title, {class: [(ratio, shape)]})]."""
    columns = [(t, r) for t, r in columns if r]
    if not columns:
        return
    print("#### summary: geo-mean of op / torch (shapes slower); training and forward as the "
          "passes ran them (graphed with compare-grid.sh)\n")
    print("| precision | " + " | ".join(t for t, _ in columns) + " |")
    print("|---|" + "---|" * len(columns))
    for name, _, _ in PRECISIONS:
        cells = []
        for _, ratios in columns:
            rs = ratios.get(name, [])
            cells.append(f"{geo_mean(rs):.3f} ({sum(r > 1 for r, _ in rs)} of {len(rs)})" if rs else "-")
        print(f"| {name} | " + " | ".join(cells) + " |")
    print()


if __name__ == "__main__":
    args = sys.argv[1:]
    if args[:1] == ["--op"] and len(args) > 1:
        ONLY_OP = args[1].split(",")
        args = args[2:]
    d = args[0] if args else "."
    summary([
        ("training", table(d, "train", "?", "training (graphed where the passes ran with --graph)")),
        ("training, eager", table(d, "train", "eager*", "training, eager")),
        ("forward", table(d, "forward", "?", "inference forward (graphed where the passes ran with --graph)")),
        ("forward, eager", table(d, "forward", "eager*", "inference forward, eager")),
    ])
