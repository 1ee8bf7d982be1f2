#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""What a decision costs under a backend's default model, beside the reference cluster: the
rows of thread_default.table and mpi_default.table.

For each grid point, `optcoll plan COLLECTIVE -p P --count N --model M.json` (gatherv:
--dist skewed --block-size N) under /usr/bin/time, 3 runs of each model interleaved; prints
the Markdown rows (medians of the times, the largest peak memory, each model's choice).
M is {"base": "threads", "cores": 16} (a Communicator on a 16-core node) for `threads`,
{"base": "mpi", "cores": P} (a node of P processors) for `mpi`, and {"base": "reference"}.

    default_models.py build/release/cli/optcoll threads > rows.md
"""
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

KIB8, MIB1 = 1024, 131072  # doubles: 8 KiB and 1 MiB per rank or block
FIVE = ["allgather", "allreduce", "alltoall", "bcast", "reduce_scatter_block"]
GRIDS = {
    "threads": [(c, p, n) for p in (16, 64, 128) for n in (KIB8, MIB1) for c in FIVE]
    + [(c, 256, KIB8) for c in FIVE] + [("allreduce", 256, MIB1), ("bcast", 256, MIB1)]
    + [(c, 512, KIB8) for c in ("allgather", "allreduce", "alltoall", "reduce_scatter_block")]
    + [("allreduce", 512, MIB1)],
    "mpi": [(c, p, n) for p in (16, 64, 128)
            for c in FIVE + ["reduce", "gatherv"] for n in (KIB8, MIB1)
            if not (p == 128 and n == MIB1 and c in ("allgather", "alltoall"))],
}


def run(optcoll, collective, p, n, model):
    shape = ["--dist", "skewed", "--block-size", str(n)] if collective == "gatherv" else ["--count", str(n)]
    with tempfile.NamedTemporaryFile("r") as timing:
        out = subprocess.run(["/usr/bin/time", "-f", "%e %M", "-o", timing.name, optcoll, "plan",
                              collective, "-p", str(p), *shape, "--dtype", "double", "--model", model],
                             check=True, capture_output=True, text=True).stdout
        seconds, kilobytes = timing.read().split()
    choice = next(line.split(None, 1)[1].strip() for line in out.splitlines()
                  if line.startswith("algorithm"))
    return float(seconds), int(kilobytes), choice


def main():
    optcoll, backend = sys.argv[1], sys.argv[2]
    models = Path(tempfile.mkdtemp())
    (models / "reference.json").write_text(json.dumps({"base": "reference"}))
    for collective, p, n in GRIDS[backend]:
        default = models / f"default{p}.json"
        default.write_text(json.dumps({"base": backend, "cores": 16 if backend == "threads" else p}))
        runs = {"default": [], "reference": []}
        for _ in range(3):
            for name, path in (("default", default), ("reference", models / "reference.json")):
                runs[name].append(run(optcoll, collective, p, n, str(path)))
        cells = []
        for name in ("default", "reference"):
            seconds = statistics.median(r[0] for r in runs[name])
            memory = max(r[1] for r in runs[name]) // 1024
            cells.append((seconds, memory, runs[name][0][2]))
        label = f"{collective} (skewed)" if collective == "gatherv" else collective
        size = f"{'block ' if collective == 'gatherv' else ''}{n * 8 // 1024} KiB"
        (d_s, d_m, d_c), (r_s, _, r_c) = cells
        print(f"| {label} | {p} | {size} | {d_s:.2f} s, {d_m} MB | {d_c} | {r_s:.2f} s | {r_c} |",
              flush=True)


if __name__ == "__main__":
    main()
