"""The rows of run.sh's sweep logs where ours took under 0.95x the default's time in a phase
the default gave cuDNN: `python3 summary.py LOG...` (missing logs are skipped)."""
import os
import re
import sys

# "op-f16-persistent (Persistent) 7.60 2.36 " and "op-f16-default (train Standard, forward
# Persistent) 9.93 3.97 "; a single kernel name serves both phases.
COLUMN = re.compile(r"(op-\S+) \(([^)]*)\) (\S+) (\S+)")


def kernels(named):
    """The (training, forward) kernels of a column's parenthesis."""
    parts = dict(p.split(" ", 1) for p in named.split(", ") if " " in p)
    if parts:
        return parts.get("train", "?"), parts.get("forward", "?")
    return named, named


for path in sys.argv[1:]:
    if not os.path.exists(path):
        continue
    print(f"## {os.path.basename(path)}")
    for line in open(path):
        cols = COLUMN.findall(line)
        if len(cols) != 2:
            continue
        shape = line.split(" | ")[0]
        (_, _, ours_t, ours_f), (_, named, dflt_t, dflt_f) = cols
        for phase, mine, theirs, kernel in (
            ("training", ours_t, dflt_t, kernels(named)[0]),
            ("forward", ours_f, dflt_f, kernels(named)[1]),
        ):
            try:
                ratio = float(mine) / float(theirs)
            except (ValueError, ZeroDivisionError):
                continue
            if kernel != "Persistent" and ratio < 0.95:
                print(f"{shape} {phase}: ours {mine} against {kernel} {theirs} ({ratio:.2f}x)")
