#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Whether two optcoll binaries simulate alike: `optcoll simulate --json --csv` (the result
with its critical path, and every op's ready, start and end) for every registry algorithm over
a grid of rank counts, sizes and cost models, by both binaries; prints the runs whose outputs
differ and exits 1 if any does. For changes to the simulator's engine that must not change
its results (docs/design.md, "A transfer that waits stands in both of its ends' port lists").

    tools/sim_diff.py [--times-only] OLD_OPTCOLL NEW_OPTCOLL [WORKDIR]

Runs that differ are reported as differing in their times (the CSV: any op's ready, start or
end) or in their critical path only (which of two releases at one instant it credits).
--times-only: exit 1 only for the first kind.

The grid: p 5, 13, 16, 33 (and 64 for four models), counts from 3 to 100,000 elements
(v-collectives: skewed blocks of that size); the thread backend's default with 16 and 4
cores, the MPI backend's one-node default with 64 and 8, the reference cluster, the unit model
with 2 half-duplex ports, shared sends with send and receive gaps and overlap, and three
placements (each at its own p): 4x4 with one NIC port per node, 33 ranks round robin over 4
nodes with two NIC ports and overlap, 8x8 with shared sends and gaps. About 5,700 runs per
binary, 20-30 minutes for both on 2 cores.
"""
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile

MODEL_FILES = {
    "thr16": {"base": "threads", "cores": 16},
    "thr4": {"base": "threads", "cores": 4},
    "mpi": {"base": "mpi", "cores": 64},
    "mpi8": {"base": "mpi", "cores": 8},
    "ref": {"base": "reference"},
}
MODEL_FLAGS = {
    "half2": ["--abstract", "--ports", "2", "--duplex", "half"],
    "shared_gap": ["--abstract", "--send-mode", "shared", "--send-gap", "0.5", "--receive-gap",
                   "0.3", "--overlap"],
    "place": ["--placement", "4x4", "--inter-alpha", "5e-6", "--inter-beta", "1e-9",
              "--nic-ports", "1"],
    "place_rr": ["--placement", ",".join(str(r % 4) for r in range(33)), "--inter-alpha", "5e-6",
                 "--inter-beta", "1e-9", "--nic-ports", "2", "--overlap"],
    "place_shared": ["--placement", "8x8", "--inter-alpha", "5e-6", "--inter-beta", "1e-9",
                     "--nic-ports", "1", "--send-mode", "shared", "--send-gap", "1e-6",
                     "--receive-gap", "5e-7"],
}
SHAPES = [(5, 3), (16, 1024), (16, 100000), (13, 40000), (33, 777), (64, 4096)]
AT_64 = ("thr16", "mpi", "shared_gap", "place_shared")
PLACED_AT = {"place": 16, "place_rr": 33, "place_shared": 64}  # the placements' rank counts


def grid(optcoll, models_dir):
    listing = subprocess.run([optcoll, "list", "--json"], capture_output=True, text=True,
                             check=True).stdout
    for algorithm in json.loads(listing):
        collective = algorithm["collective"]
        for p, count in SHAPES:
            for model in list(MODEL_FILES) + list(MODEL_FLAGS):
                if PLACED_AT.get(model, p) != p or (p == 64 and model not in AT_64):
                    continue
                args = ["simulate", collective, "-p", str(p), "-a", algorithm["name"]]
                if collective.endswith("v") or collective == "reduce_scatter":
                    args += ["--dist", "skewed", "--block-size", str(count)]
                else:
                    args += ["--count", str(count)]
                if model in MODEL_FILES:
                    args += ["--model", os.path.join(models_dir, model + ".json")]
                else:
                    args += MODEL_FLAGS[model]
                yield f"{algorithm['name'].replace('/', '_')}_{p}_{count}_{model}", args


def run_all(optcoll, jobs, out_dir):
    def run(job):
        tag, args = job
        csv = os.path.join(out_dir, tag + ".csv")
        done = subprocess.run([optcoll, *args, "--json", "--csv", csv], capture_output=True,
                              text=True)
        csv_text = open(csv).read() if os.path.exists(csv) else ""
        return tag, (done.returncode, done.stdout, done.stderr, csv_text)

    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 2) as pool:
        return dict(pool.map(run, jobs))


def main():
    args = sys.argv[1:]
    times_only = "--times-only" in args
    args = [a for a in args if a != "--times-only"]
    if len(args) < 2:
        sys.exit(__doc__)
    old, new = args[0], args[1]
    work = args[2] if len(args) > 2 else tempfile.mkdtemp(prefix="sim_diff.")
    models_dir = os.path.join(work, "models")
    os.makedirs(models_dir, exist_ok=True)
    for name, fields in MODEL_FILES.items():
        with open(os.path.join(models_dir, name + ".json"), "w") as f:
            json.dump(fields, f)
    jobs = list(grid(new, models_dir))
    results = {}
    for label, binary in (("old", old), ("new", new)):
        out_dir = os.path.join(work, label)
        os.makedirs(out_dir, exist_ok=True)
        results[label] = run_all(binary, jobs, out_dir)
    differ = [tag for tag, _ in jobs if results["old"][tag] != results["new"][tag]]
    # The CSV holds every op's ready, start and end: runs that differ elsewhere only (the
    # critical path's choice between releases at one instant) keep every time.
    times_differ = [tag for tag in differ if results["old"][tag][3] != results["new"][tag][3]]
    for tag in differ[:20]:
        print("differs:", tag, "(times)" if tag in times_differ else "(critical path only)")
    print(f"{len(jobs)} runs, {len(differ)} differ, {len(times_differ)} in their times "
          f"(outputs in {work})")
    sys.exit(1 if (times_differ if times_only else differ) else 0)


if __name__ == "__main__":
    main()
