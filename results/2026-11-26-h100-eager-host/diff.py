"""Per-call API work from run.sh's traces: (the 30-repetition run - the 10-repetition run) / 20,
per function, the 12 largest by host time, for each variant and launch.
  python3 diff.py OUT"""
import csv, glob, os, sys
out = sys.argv[1]
def load(p):
    d = {}
    for dom, name, n, us in csv.reader(open(p)):
        d[(dom, name)] = (int(n), float(us))
    return d
for p10 in sorted(glob.glob(f"{out}/*_10.csv")):
    p30 = p10[:-len("_10.csv")] + "_30.csv"
    if not os.path.exists(p30): continue
    a, b = load(p10), load(p30)
    rows = []
    for k in set(a) | set(b):
        n = (b.get(k, (0, 0))[0] - a.get(k, (0, 0))[0]) / 20
        us = (b.get(k, (0, 0))[1] - a.get(k, (0, 0))[1]) / 20
        rows.append((us, n, k))
    rows.sort(reverse=True)
    tot = sum(r[0] for r in rows); calls = sum(r[1] for r in rows)
    print(f"== {os.path.basename(p10)[:-7]}: {calls:.0f} API calls, {tot:.0f} µs a repetition (train + forward)")
    for us, n, (dom, name) in rows[:12]:
        print(f"   {us:9.1f} µs {n:8.1f} x {dom} {name}")
