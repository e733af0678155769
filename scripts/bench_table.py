#!/usr/bin/env python3
"""Markdown tables from one benchmark run's JSON files (stdlib only).

Usage: scripts/bench_table.py DIR
DIR holds grid_op.json (bench_grid), torch.json (scripts/torch_reference.py, optional) and
ptb_<config>_<variant>.json files (ptb-lm bench --json). Prints the op grid with the ratios
"this op / PyTorch" (same precision) and "this op / candle-nn loop", then PTB throughput.
"""
import glob
import json
import os
import sys


def load(path):
    with open(path) as f:
        return json.load(f)


def grid_table(d):
    ours = load(os.path.join(d, "grid_op.json"))["grid"]
    torch_path = os.path.join(d, "torch.json")
    torch = load(torch_path)["grid"] if os.path.exists(torch_path) else []
    key = lambda r: (r["mode"], r["layers"], r["batch"], r["seq"], r["hidden"])
    by = {}
    for r in ours + torch:
        by.setdefault(key(r), {})[r["impl"]] = r
    print("| mode | L | B | T | H | op fp32 train | torch fp32 train | op/torch | op tf32 train "
          "| torch tf32 train | op/torch | candle-nn train | op fp32/candle-nn "
          "| op tf32 fwd | torch tf32 fwd | op/torch |")
    print("|" + "---|" * 16)
    for k in sorted(by, key=lambda k: (k[0], k[1], k[3], k[2], k[4])):
        r = by[k]
        g = lambda impl, f: r.get(impl, {}).get(f)
        ratio = lambda a, b: f"{a / b:.2f}" if a and b else "-"
        num = lambda v: f"{v:.1f}" if v else "-"
        o32, t32 = g("op-fp32", "train_us_per_example"), g("torch-fp32", "train_us_per_example")
        o_tf, t_tf = g("op-tf32", "train_us_per_example"), g("torch-tf32", "train_us_per_example")
        cn = g("candle-nn-loop-fp32", "train_us_per_example")
        of, tf = g("op-tf32", "forward_us_per_example"), g("torch-tf32", "forward_us_per_example")
        print(f"| {k[0]} | {k[1]} | {k[2]} | {k[3]} | {k[4]} | {num(o32)} | {num(t32)} | {ratio(o32, t32)} "
              f"| {num(o_tf)} | {num(t_tf)} | {ratio(o_tf, t_tf)} | {num(cn)} | {ratio(o32, cn)} "
              f"| {num(of)} | {num(tf)} | {ratio(of, tf)} |")


def ptb_table(d):
    rows = []
    for p in sorted(glob.glob(os.path.join(d, "ptb_*.json"))):
        r = load(p)
        impl = f"ptb-lm {r['rnn']} {r['precision']}"
        rows.append((r["config"], impl, r["ms_per_batch"], r["words_per_second"]))
    torch_path = os.path.join(d, "torch.json")
    if os.path.exists(torch_path):
        for r in load(torch_path).get("ptb", []):
            if "error" not in r:
                rows.append((r["config"], r["impl"], r["ms_per_batch"], r["words_per_second"]))
    print("| config | implementation | ms/batch | words/s |")
    print("|---|---|---|---|")
    for c, impl, ms, wps in sorted(rows, key=lambda r: (r[0], -r[3])):
        print(f"| {c} | {impl} | {ms:.2f} | {wps:,.0f} |")


if __name__ == "__main__":
    d = sys.argv[1] if len(sys.argv) > 1 else "."
    if os.path.exists(os.path.join(d, "grid_op.json")):
        print("### Op grid (microseconds per example)\n")
        grid_table(d)
        print()
    print("### PTB training throughput\n")
    ptb_table(d)
