#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Times Open MPI's own coll/tuned algorithms on this machine, each forced in turn, and
writes them as library timings for `optcoll export --library-timings` (rules_export.h,
"LibraryTimings"): the export then names, per collective and size, the algorithm that ran
fastest here, not the one the model predicts.

For each collective of osu_collectives.c (allreduce, bcast, reduce, allgather, alltoall,
reduce_scatter_block) and each of its Open MPI algorithms (`optcoll export --list`), one
`mpirun -np P --mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_<collective>_algorithm
ID osu_collectives MAX_BYTES <collective>` per round, and one with nothing forced (Open MPI's
own decision: "default", id 0, which the export keeps unless an algorithm beats it by its
margin); the algorithms of a collective alternate within each round; a size's time is the
median over the rounds. Segment sizes
are Open MPI's defaults (the rules written from these times name none). An algorithm Open
MPI does not run as named at P (recursive doubling where P is not a power of two) is timed
all the same and left out by the export, which knows the restrictions.

    measure_library.py OPTCOLL P MAX_BYTES OUT.json [--rounds R] [--collectives a,b]
                       [--osu PATH] [--mpirun PATH] [--timeout S] [--mpirun-arg ARG ...]

OSU: osu_collectives built from bench/export/osu_collectives.c (built with mpicc into a
temporary folder when not given). Prints one line per mpirun. A run that fails or outlasts
--timeout (120 s) is reported on stderr and its times are left out (the export never names
an algorithm it has no time for); the file's "source" lists such runs, and the exit status
is 1 if any failed (the file is written all the same).
"""
import argparse
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile

OSU_COLLECTIVES = ["allreduce", "bcast", "reduce", "allgather", "alltoall",
                   "reduce_scatter_block"]


def open_mpi_algorithms(optcoll):
    """{collective: [(id, name), ...]} from `optcoll export --list` (its Open MPI table)."""
    listing = subprocess.run([optcoll, "export", "--list"], check=True, capture_output=True,
                             text=True).stdout
    section = listing.split("## Open MPI", 1)[1].split("\n## ", 1)[0]
    out = {}
    for line in section.splitlines():
        m = re.match(r"\| (\w+) \(\d+\) \| (\w+) \((\d+)\) \|", line)
        entry = m and (int(m.group(3)), m.group(2))
        if entry and entry not in out.get(m.group(1), []):  # one row per registry relative
            out.setdefault(m.group(1), []).append(entry)
    return out


def build_osu(work):
    here = os.path.dirname(os.path.abspath(__file__))
    osu = os.path.join(work, "osu_collectives")
    subprocess.run(["mpicc", "-O2", "-o", osu, os.path.join(here, "osu_collectives.c")],
                   check=True)
    return osu


def run_forced(mpirun, osu, p, max_bytes, collective, algorithm_id, mpirun_args, timeout):
    """Times per size of `collective` with algorithm `algorithm_id` forced (0: Open MPI's
    own decision, nothing forced), and "", or None and why the run gave none."""
    forced = ["--mca", "coll_tuned_use_dynamic_rules", "1", "--mca",
              f"coll_tuned_{collective}_algorithm", str(algorithm_id)] if algorithm_id else []
    cmd = [mpirun, "-np", str(p), *mpirun_args, *forced, osu, str(max_bytes), collective]
    # Its own process group, so that a run past the timeout is killed with every process
    # mpirun started.
    run = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           start_new_session=True)
    try:
        out, err = run.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(run.pid, signal.SIGKILL)
        run.communicate()
        return None, f"no result within {timeout} s"
    if run.returncode != 0:
        return None, f"exit status {run.returncode}: {err.strip()[-300:]}"
    times = {}
    for line in out.splitlines():
        name, size, us = line.split()
        if name == collective:
            times[int(size)] = float(us) * 1e-6
    if not times:
        return None, "printed no times"
    return times, ""


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("optcoll")
    ap.add_argument("p", type=int)
    ap.add_argument("max_bytes", type=int)
    ap.add_argument("out")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--collectives", default=",".join(OSU_COLLECTIVES))
    ap.add_argument("--osu")
    ap.add_argument("--mpirun", default="mpirun")
    ap.add_argument("--timeout", type=float, default=120,
                    help="seconds per mpirun; a run that fails or takes longer is left out")
    ap.add_argument("--mpirun-arg", action="append", default=[])
    a = ap.parse_args()
    collectives = a.collectives.split(",")
    unknown = [c for c in collectives if c not in OSU_COLLECTIVES]
    if unknown or a.p < 2 or a.rounds < 1 or a.max_bytes < 8:
        sys.exit(f"measure_library.py: bad arguments (collectives {unknown} not timed by "
                 f"osu_collectives, or p < 2, rounds < 1, max_bytes < 8)")
    algorithms = open_mpi_algorithms(a.optcoll)
    work = tempfile.mkdtemp(prefix="measure_library.")
    try:
        osu = a.osu or build_osu(work)
        samples = {}  # (collective, bytes, id, name) -> [seconds]
        failed = []
        for r in range(a.rounds):
            for collective in collectives:
                for algorithm_id, name in [(0, "default")] + algorithms[collective]:
                    times, why = run_forced(a.mpirun, osu, a.p, a.max_bytes, collective,
                                            algorithm_id, a.mpirun_arg, a.timeout)
                    if times is None:  # left out of the timings: the export never names it
                        failed.append(f"{collective} {name} ({algorithm_id}), round {r + 1}: "
                                      f"{why}")
                        print(f"round {r + 1}: {collective} {name} ({algorithm_id}): FAILED, "
                              f"{why}", file=sys.stderr, flush=True)
                        continue
                    print(f"round {r + 1}: {collective} {name} ({algorithm_id}): "
                          f"{len(times)} sizes", flush=True)
                    for size, seconds in times.items():
                        samples.setdefault((collective, size, algorithm_id, name),
                                           []).append(seconds)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    # An algorithm with a failed round is left out where it failed; the others' medians
    # stand. The file's source says what was left out.
    points = {}
    for (collective, size, algorithm_id, name), values in sorted(samples.items()):
        points.setdefault((collective, size), []).append(
            {"algorithm": name, "id": algorithm_id, "seconds": statistics.median(values)})
    doc = {"format": "optcoll-library-timings-1", "library": "openmpi", "nranks": a.p,
           "source": (f"bench/export/measure_library.py, {a.rounds} rounds, medians, "
                      f"mpirun {' '.join(a.mpirun_arg)}".rstrip()
                      + (f"; failed runs left out: {'; '.join(failed)}" if failed else "")),
           "points": [{"collective": c, "bytes": b, "runs": runs}
                      for (c, b), runs in points.items()]}
    with open(a.out, "w") as f:
        json.dump(doc, f, indent=1)
    if failed:
        sys.exit(f"measure_library.py: {len(failed)} run(s) failed and were left out")


if __name__ == "__main__":
    main()
