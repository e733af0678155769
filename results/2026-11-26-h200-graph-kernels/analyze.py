"""Per graph in a trace of trace_kernels.c: its replays' span (first node's start to last node's
end), the nodes' summed durations and the rest (between nodes), medians over the replays, and
every node in order with its median duration and the gap before it (with --by-name instead: the
nodes summed by name, count and median total a replay, largest first).
    python3 analyze.py TRACE.csv [MIN_REPLAYS] [--by-name]"""
import collections, statistics, sys

rows = []
for line in open(sys.argv[1]):
    kind, start, end, gid, nid, name = line.rstrip("\n").split(",", 5)
    rows.append((kind, int(start), int(end), int(gid), int(nid), name))
min_replays = int(sys.argv[2]) if len(sys.argv) > 2 else 5
by_name = "--by-name" in sys.argv
by_graph = collections.defaultdict(list)
for r in rows:
    if r[3]:
        by_graph[r[3]].append(r)
for gid, rs in sorted(by_graph.items()):
    rs.sort(key=lambda r: r[1])
    n = len({r[4] for r in rs})
    replays = [rs[i:i + n] for i in range(0, len(rs) - n + 1, n)]
    if len(replays) < min_replays:
        continue
    spans = [(p[-1][2] - p[0][1]) / 1e3 for p in replays]
    busy = [sum(r[2] - r[1] for r in p) / 1e3 for p in replays]
    kinds = collections.Counter(r[0] for r in replays[0])
    print(f"graph {gid}: {len(replays)} replays, {n} nodes {dict(kinds)}; span {statistics.median(spans):.1f} us "
          f"[{min(spans):.1f}, {max(spans):.1f}], in nodes {statistics.median(busy):.1f}, between {statistics.median(s - b for s, b in zip(spans, busy)):.1f}")
    if by_name:
        totals = collections.defaultdict(list)
        for p in replays:
            t = collections.Counter()
            for r in p:
                t[(r[0], r[5][:90])] += (r[2] - r[1]) / 1e3
            for k, v in t.items():
                totals[k].append(v)
        count = collections.Counter((r[0], r[5][:90]) for r in replays[0])
        for k, v in sorted(totals.items(), key=lambda kv: -statistics.median(kv[1])):
            print(f"  {count[k]:5d} x {statistics.median(v):10.1f}  {k[0]:6s} {k[1]}")
        continue
    for i in range(n):
        d = statistics.median((p[i][2] - p[i][1]) / 1e3 for p in replays)
        gap = statistics.median((p[i][1] - p[i - 1][2]) / 1e3 for p in replays) if i else 0.0
        print(f"  {i:3d} gap {gap:6.2f}  {d:8.2f}  {replays[0][i][0]:6s} {replays[0][i][5][:90]}")
