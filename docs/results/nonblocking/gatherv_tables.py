#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The rows of persistent_gatherv.table and pmpi_persistent.table from the raw output of
bench_nonblocking (part 2) and bench_pmpi_persistent: several runs of each p (and policy)
in one file, each run under a '## <command> ...' header line.

Each time cell is the median over the runs of the run's median; each ratio cell is the
median over the runs of the ratio the run printed (MPI_Gatherv / persistent, blocking /
persistent), with its range over the runs in brackets.

    gatherv_tables.py nonblocking bench_nonblocking_mpi_default.txt > rows.md
    gatherv_tables.py pmpi bench_pmpi_persistent_mpi_default.txt > rows.md
"""
import re
import statistics
import sys
from collections import defaultdict

SHAPES = ["last rank 128K, others 16", "rank r: 2^r x 64", "last rank 4K, others 1"]
# Time columns of each bench's gatherv rows, in its order.
TIMES = {
    "nonblocking": ["persistent", "blocking", "C_init", "C_blocking", "MPI_Gatherv", "MPIX_init"],
    "pmpi": ["persistent", "blocking", "MPI_Gatherv", "MPIX_init"],
}
# The ratios each bench prints after its times (from unrounded times) that the table shows.
RATIOS = ["mpi/pers", "blk/pers"]
# Where OPTCOLL_PMPI=auto sends each shape (the PMPI library's call log, OPTCOLL_PMPI_LOG).
AUTO_ROUTE = {(2, SHAPES[1]): "MPI", (4, SHAPES[1]): "MPI"}


def runs(path):
    """{(p, policy): [{shape: {column: us}}]} from the raw file."""
    found = defaultdict(list)
    key = None
    for line in open(path):
        if line.startswith("## "):
            p = int(re.search(r"-np (\d+)", line).group(1))
            policy = re.search(r"OPTCOLL_PMPI=(\w+)", line)
            key = (p, policy.group(1) if policy else "")
            found[key].append({})
            continue
        for shape in SHAPES:
            if key is not None and line.startswith(shape):
                cells = line[len(shape):].split()
                found[key][-1][shape] = cells
    return found


def rows(kind, path):
    columns = TIMES[kind]
    out = []
    for (p, policy), measured in sorted(runs(path).items(), key=lambda kv: (kv[0][1], kv[0][0])):
        for shape in SHAPES:
            cells = columns + RATIOS
            per_run = [dict(zip(cells, map(float, run[shape][:len(cells)])))
                       for run in measured if shape in run]
            times = [f"{statistics.median(r[c] for r in per_run):.1f}" for c in columns]
            ratios = []
            for ratio in RATIOS:
                values = [r[ratio] for r in per_run]
                ratios.append(f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})")
            name = shape
            if policy == "auto":
                name += f" (to {AUTO_ROUTE.get((p, shape), 'optcoll')})"
            lead = [str(p), policy] if policy else [str(p)]
            out.append("| " + " | ".join(lead + [name] + times + ratios) + " |")
    return out


def main():
    kind, path = sys.argv[1], sys.argv[2]
    print("\n".join(rows(kind, path)))


if __name__ == "__main__":
    main()
