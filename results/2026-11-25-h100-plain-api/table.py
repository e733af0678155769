#!/usr/bin/env python3
"""The default algorithm against PyTorch, from final.sh's files (stdlib only).

Usage: table.py DIR. For every grid shape: the op's default (`RnnAlgo::Heuristic`, the mean of
the two passes' medians, and the kernel that served) against PyTorch's in the same precision
class: fp32 against torch-fp32, TF32 against torch-tf32, the faster of bf16 and f16 against
PyTorch's fp16 module; ratios < 1 mean the op is faster. Then per class the geometric mean, the
shapes the op loses and the worst. Training (graphed) and forward (eager) alike.
"""
import glob, json, math, sys

d = sys.argv[1]
load = lambda pat: [r for p in sorted(glob.glob(f"{d}/{pat}")) for r in json.load(open(p))["grid"]]
ours, torch = load("op_[ab].json"), load("torch_[ab].json")
key = lambda r: (r["mode"], r["layers"], r["batch"], r["seq"], r["hidden"])


def mean(rows, impl, phase):
    out = {}
    for r in rows:
        if r.get("variant", r["impl"]) == impl and r.get(f"{phase}_us_per_example") is not None:
            out.setdefault(key(r), []).append((r[f"{phase}_us_per_example"], r.get(f"{phase}_kernel") or r.get("train_kernel")))
    return {k: (sum(t for t, _ in v) / len(v), v[0][1]) for k, v in out.items()}


CLASSES = [("fp32", ["op-fp32-default"], "torch-fp32"), ("tf32", ["op-tf32-default"], "torch-tf32"),
           ("half", ["op-bf16-default", "op-f16-default"], "torch-fp16")]
for phase, what in [("train", "training, graphed"), ("forward", "forward, eager")]:
    print(f"\n#### {what}: µs per example, ours / PyTorch\n")
    print("| mode | L | B | T | H | " + " | ".join(f"ours {c} (kernel) | torch | ratio" for c, _, _ in CLASSES) + " |")
    print("|" + "---|" * (5 + 3 * len(CLASSES)))
    ratios = {c: [] for c, _, _ in CLASSES}
    shapes = sorted({key(r) for r in torch}, key=lambda k: (k[0] != "lstm", k[1:]))
    for k in shapes:
        cells = []
        for c, impls, t in CLASSES:
            cands = [(mean(ours, i, phase).get(k), i) for i in impls]
            cands = [(v, i) for v, i in cands if v]
            theirs = mean(torch, t, phase).get(k)
            if not cands or not theirs:
                cells.append("| | ")
                continue
            (o, kern), impl = min(cands)
            r = o / theirs[0]
            ratios[c].append((r, k))
            tag = impl.split("-")[1] + " " if len(impls) > 1 else ""
            cells.append(f"{o:.2f} ({tag}{kern}) | {theirs[0]:.2f} | {r:.2f}")
        print("| " + " | ".join(map(str, k)) + " | " + " | ".join(cells) + " |")
    print()
    for c, v in ratios.items():
        if v:
            g = math.exp(sum(math.log(r) for r, _ in v) / len(v))
            lost = [k for r, k in v if r > 1.0]
            worst = max(v)
            print(f"- {c}: geo-mean {g:.2f}, slower on {len(lost)} of {len(v)}, worst {worst[0]:.2f} {worst[1]}")
