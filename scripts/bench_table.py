#!/usr/bin/env python3
"""Markdown tables from one benchmark run's JSON files (stdlib only).

Usage: scripts/bench_table.py DIR
DIR holds grid_op.json (bench_grid), torch.json (scripts/torch_reference.py, optional) and
ptb_<config>_<variant>.json files (ptb-lm bench --json). Prints the op grid (training step,
microseconds per example) with the ratios "this op / PyTorch" at the same precision (the
faster of the standard and Auto algorithms) and, when measured, "this op / candle-nn loop";
then PTB throughput.
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
    by, picks = {}, {}
    for r in ours + torch:
        impl = r["impl"]
        if " (" in impl:  # "op-tf32-auto (PersistStatic)": the algorithm Auto picked
            impl, pick = impl.split(" (", 1)
            picks[(key(r), impl)] = pick.rstrip(")")
        by.setdefault(key(r), {})[impl] = r
    has_loop = any("candle-nn-loop-fp32" in v for v in by.values())
    cols = ["mode", "L", "B", "T", "H", "op fp32", "torch fp32", "op/torch", "op tf32",
            "op tf32 Auto", "torch tf32", "best op/torch", "op bf16", "op bf16 Auto",
            "torch AMP bf16", "best op/torch"] + (["candle-nn fp32", "op fp32/candle-nn"] if has_loop else [])
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    for k in sorted(by, key=lambda k: (k[0], k[1], k[3], k[2], k[4])):
        r = by[k]
        g = lambda impl: r.get(impl, {}).get("train_us_per_example")
        ratio = lambda a, b: f"{a / b:.2f}" if a and b else "-"
        num = lambda v: f"{v:.1f}" if v else "-"
        auto = lambda impl: f"{num(g(impl))} ({picks.get((k, impl), '-')})" if g(impl) else "-"
        best = lambda *v: min([x for x in v if x], default=None)
        o32, t32 = g("op-fp32"), g("torch-fp32")
        o_tf, o_tfa, t_tf = g("op-tf32"), g("op-tf32-auto"), g("torch-tf32")
        o_bf, o_bfa, t_bf = g("op-bf16"), g("op-bf16-auto"), g("torch-amp-bf16")
        row = [*map(str, k), num(o32), num(t32), ratio(o32, t32), num(o_tf), auto("op-tf32-auto"),
               num(t_tf), ratio(best(o_tf, o_tfa), t_tf), num(o_bf), auto("op-bf16-auto"), num(t_bf),
               ratio(best(o_bf, o_bfa), t_bf)]
        if has_loop:
            cn = g("candle-nn-loop-fp32")
            row += [num(cn), ratio(o32, cn)]
        print("| " + " | ".join(row) + " |")


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
