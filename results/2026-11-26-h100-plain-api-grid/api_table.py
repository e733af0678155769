"""The plain API's cost and Auto's stability from checks.sh's JSON (api_*.json, auto_*.json):
candle_cudnn_rnn::backward (direct) against the weight-gradient sink, the mean of two passes'
medians each; the default against Auto in two runs, and whether Auto kept the same kernel.
  python3 api_table.py DIR"""
import json, math, sys
from collections import defaultdict

d = sys.argv[1]
def rows(name):
    return json.load(open(f"{d}/{name}.json"))["grid"]
def key(r):
    return (r["mode"], r["layers"], r["batch"], r["seq"], r["hidden"])

times = defaultdict(list)
for name, api in [("api_direct_a", "direct"), ("api_direct_b", "direct"), ("api_sink_a", "sink"), ("api_sink_b", "sink")]:
    for r in rows(f"api/{name}"):
        times[(key(r), r["variant"], api)].append(r["train_us_per_example"])
print("## candle_cudnn_rnn::backward against the sink (graphed training, µs an example)\n")
print("| mode | L | B | T | H | variant | direct | sink | direct / sink |")
print("|---|---|---|---|---|---|---|---|---|")
ratios = []
for (k, v, api) in sorted(times):
    if api != "direct": continue
    a = sum(times[(k, v, "direct")]) / 2; b = sum(times[(k, v, "sink")]) / 2
    ratios.append(a / b)
    print(f"| {' | '.join(map(str, k))} | {v} | {a:.2f} | {b:.2f} | {a / b:.3f} |")
print(f"\n{len(ratios)} rows: direct / sink from {min(ratios):.3f} to {max(ratios):.3f}, "
      f"geo-mean {math.exp(sum(map(math.log, ratios)) / len(ratios)):.3f}, above 1.03 on {sum(r > 1.03 for r in ratios)}\n")

print("## The default beside Auto, two runs (graphed training, µs an example; kernel)\n")
print("| mode | L | B | T | H | precision | default a | Auto a | default b | Auto b | default / Auto | Auto's kernel a, b |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|")
runs = {run: {(key(r), r["variant"]): r for r in rows(f"al/auto_{run}")} for run in "ab"}
worst, differ = 0, 0
for (k, v) in sorted(runs["a"]):
    if not v.endswith("-default"): continue
    p = v.split("-")[1]
    da, aa = runs["a"][(k, v)], runs["a"][(k, f"op-{p}-auto")]
    db, ab = runs["b"][(k, v)], runs["b"][(k, f"op-{p}-auto")]
    r = (da["train_us_per_example"] + db["train_us_per_example"]) / (aa["train_us_per_example"] + ab["train_us_per_example"])
    worst = max(worst, r); differ += aa["train_kernel"] != ab["train_kernel"]
    print(f"| {' | '.join(map(str, k))} | {p} | {da['train_us_per_example']:.2f} ({da['train_kernel']}) | {aa['train_us_per_example']:.2f} | "
          f"{db['train_us_per_example']:.2f} | {ab['train_us_per_example']:.2f} | {r:.3f} | {aa['train_kernel']}, {ab['train_kernel']} |")
print(f"\nThe default at most {worst:.3f}x Auto's time; Auto's kernel differs between the runs on {differ} rows")
