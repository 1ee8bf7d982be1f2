#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The table of run.sh: per load, collective and size, the median optcoll time under each
model, Open MPI's median over all of that load's runs, and the ratios to it.

    median.py DIR
"""
import collections
import statistics
import sys
from pathlib import Path

times = collections.defaultdict(list)  # (load, collective, bytes, model) -> [(optcoll, mpi)]
algorithms = collections.defaultdict(collections.Counter)
for path in Path(sys.argv[1]).glob("*-*-*.md"):
    load, model, _ = path.stem.split("-")
    for line in path.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 9 or not cells[2].isdigit():
            continue
        key = (load, cells[0], int(cells[2]))
        times[key + (model,)].append((float(cells[4]), float(cells[6])))
        algorithms[key + (model,)][cells[3]] += 1

print("| load | collective | bytes per rank | default: algorithm | us | reference: algorithm | us "
      "| Open MPI (us) | default / Open MPI | reference / Open MPI |")
print("|---|---|---|---|---|---|---|---|---|---|")
for load in ("busy", "idle"):
    keys = sorted({k[1:3] for k in times if k[0] == load})
    for collective, size in keys:
        row = {}
        mpi = []
        for model in ("default", "reference"):
            runs = times[(load, collective, size, model)]
            row[model] = statistics.median(t for t, _ in runs)
            mpi += [m for _, m in runs]
        theirs = statistics.median(mpi)
        pick = {m: algorithms[(load, collective, size, m)].most_common(1)[0][0]
                for m in ("default", "reference")}
        print(f"| {load} | {collective} | {size} | {pick['default']} | {row['default']:.1f} "
              f"| {pick['reference']} | {row['reference']:.1f} | {theirs:.1f} "
              f"| {row['default'] / theirs:.2f} | {row['reference'] / theirs:.2f} |")
