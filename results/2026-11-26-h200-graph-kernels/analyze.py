"""Per graph in a trace of trace_kernels.c: its replays' span (first node's start to last node's
end), the nodes' summed durations and the rest (between nodes), medians over the replays, and
every node in order with its median duration and the gap before it.
    python3 analyze.py TRACE.csv [MIN_REPLAYS]"""
import collections, statistics, sys

rows = []
for line in open(sys.argv[1]):
    kind, start, end, gid, nid, name = line.rstrip("\n").split(",", 5)
    rows.append((kind, int(start), int(end), int(gid), int(nid), name))
min_replays = int(sys.argv[2]) if len(sys.argv) > 2 else 5
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
    for i in range(n):
        d = statistics.median((p[i][2] - p[i][1]) / 1e3 for p in replays)
        gap = statistics.median((p[i][1] - p[i - 1][2]) / 1e3 for p in replays) if i else 0.0
        print(f"  {i:3d} gap {gap:6.2f}  {d:8.2f}  {replays[0][i][0]:6s} {replays[0][i][5][:90]}")
