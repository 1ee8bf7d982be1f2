#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Two models' regret from runs of `optcoll tune` alternating between them.

Reads DIR/A.runN.md and DIR/B.runN.md (tune's Markdown reports) and prints the Markdown
table of docs/results: per grid point where the two models' picks differ (in any run), the
best measured algorithm (most often), each model's pick (most often) and median regret over
its runs, and their ratio; then over all grid points the median of the per-point medians,
the mean and the largest. Also prints each model's error (median and 90th percentile of
|predicted / measured - 1|) per run as a note line.

    compare_models.py DIR reference default
"""
import collections
import re
import statistics
import sys
from pathlib import Path


def read_report(path):
    """{(collective, bytes): (best, pick, regret)} and the error line of one report."""
    points = {}
    in_regret = False
    error = ""
    for line in path.read_text().splitlines():
        if line.startswith("## "):
            in_regret = line.strip() == "## Regret"
        match = re.match(r"\d+ runs: median \|predicted / measured - 1\| = (\S+), 90th percentile (\S+)\.", line)
        if match:
            error = f"{match[1]}/{match[2]}"
        if not in_regret or not line.startswith("| ") or line.startswith("| collective"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 7:
            continue
        points[(cells[0], int(cells[1]))] = (cells[2], cells[4], float(cells[6]))
    return points, error


def most_common(values):
    return collections.Counter(values).most_common(1)[0][0]


def main():
    directory, first, second = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    runs = {}
    errors = {}
    for name in (first, second):
        reports = sorted(directory.glob(f"{name}.run*.md"))
        if not reports:
            sys.exit(f"no {name}.run*.md in {directory}")
        read = [read_report(r) for r in reports]
        runs[name] = [points for points, _ in read]
        errors[name] = [error for _, error in read]
    keys = list(runs[first][0].keys())
    print(f"note: Model error (median/90th percentile of |predicted / measured - 1| per run): "
          f"{first} {', '.join(errors[first])}; {second} {', '.join(errors[second])}.")
    print()
    print(f"| collective | bytes per rank | best measured (most often) | auto, {first} | regret "
          f"| auto, {second} | regret | {second} / {first} |")
    print("|---|---|---|---|---|---|---|---|")
    medians = {first: [], second: []}
    for key in keys:
        picks = {n: [r[key][1] for r in runs[n] if key in r] for n in (first, second)}
        regrets = {n: statistics.median(r[key][2] for r in runs[n] if key in r) for n in (first, second)}
        for n in (first, second):
            medians[n].append(regrets[n])
        if set(picks[first]) == set(picks[second]) and len(set(picks[first])) == 1:
            continue
        best = most_common([r[key][0] for n in (first, second) for r in runs[n] if key in r])
        print(f"| {key[0]} | {key[1]} | {best} | {most_common(picks[first])} | {regrets[first]:.2f} "
              f"| {most_common(picks[second])} | {regrets[second]:.2f} "
              f"| {regrets[second] / regrets[first]:.2f} |")
    n = len(keys)
    print(f"| all {n} grid points: median of the medians | | | | {statistics.median(medians[first]):.2f} "
          f"| | {statistics.median(medians[second]):.2f} | |")
    print(f"| all {n} grid points: mean | | | | {statistics.mean(medians[first]):.3f} "
          f"| | {statistics.mean(medians[second]):.3f} | |")
    print(f"| all {n} grid points: largest | | | | {max(medians[first]):.2f} "
          f"| | {max(medians[second]):.2f} | |")


if __name__ == "__main__":
    main()
