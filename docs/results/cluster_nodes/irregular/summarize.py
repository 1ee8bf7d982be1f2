#!/usr/bin/env python3
"""gatherv/scatterv on the emulated cluster (4 hosts x 4 ranks), from interleaved rounds of
`optcoll bench` jobs (tools/cluster/interleaved_bench.sh writes CONFIG_rN.csv per job; CONFIG
is tuned (optcoll's auto beside Open MPI tuned), han (auto beside han), or a registry
algorithm forced for both gatherv and scatterv (beside tuned)). Each job's own figure is the
median of its iterations; this prints the median over rounds.

  summarize.py merge DIR > rounds.csv    one CSV of all jobs (columns config, round, bench's)
  summarize.py auto rounds.csv           auto against tuned and han (bench.table's columns)
  summarize.py regret rounds.csv         every algorithm per row: the fastest, auto's distance
"""
import csv
import glob
import os
import re
import statistics
import sys


def merge(directory):
    out = None
    for path in sorted(glob.glob(os.path.join(directory, "*_r*.csv"))):
        config, rnd = re.match(r"(.*)_r(\d+)\.csv$", os.path.basename(path)).groups()
        with open(path) as f:
            for r in csv.DictReader(f):
                if out is None:
                    out = csv.DictWriter(sys.stdout, ["config", "round"] + list(r.keys()))
                    out.writeheader()
                out.writerow({"config": config, "round": rnd, **r})


def load(path):
    runs = {}  # (config, row key) -> [(optcoll us, mpi us, plan)]
    with open(path) as f:
        for r in csv.DictReader(f):
            if "C API" in r["collective"]:
                continue
            key = (r["collective"], r["counts"], int(r["bytes_per_rank"]))
            runs.setdefault((r["config"], key), []).append(
                (float(r["optcoll_us"]), float(r["mpi_us"]), r["algorithm"]))
    return runs


def med(values):
    return statistics.median(values) if values else float("nan")


def keys_of(runs):
    return sorted({k for _, k in runs}, key=lambda k: (k[2], k[1], k[0]))


def auto_table(runs):
    print("| collective | counts | bytes/rank | optcoll plan | optcoll (tuned run) us | tuned us | "
          "optcoll (han run) us | han us | vs faster MPI | rounds |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for key in keys_of(runs):
        t, h = runs.get(("tuned", key), []), runs.get(("han", key), [])
        if not t or not h:
            continue
        ot, mt = med([x[0] for x in t]), med([x[1] for x in t])
        oh, mh = med([x[0] for x in h]), med([x[1] for x in h])
        ratio, which = (ot / mt, "tuned") if mt <= mh else (oh / mh, "han")
        mark = "**" if ratio < 1 / 1.3 else ""
        print(f"| {key[0]} | {key[1]} | {key[2]} | {t[0][2]} | {ot:.1f} | {mt:.1f} | {oh:.1f} | "
              f"{mh:.1f} | {mark}{ratio:.2f}{mark} ({which}) | {min(len(t), len(h))} |")


def regret_table(runs):
    algorithms = sorted({c for c, _ in runs} - {"tuned", "han"})
    print("| collective | counts | bytes/rank | auto's plan | auto us | " +
          " | ".join(algorithms) + " | fastest | auto / fastest |")
    print("|---|---|---|---|---|" + "---|" * len(algorithms) + "---|---|")
    for key in keys_of(runs):
        auto = runs.get(("tuned", key), [])
        if not auto:
            continue
        times = {a: med([x[0] for x in runs.get((a, key), [])]) for a in algorithms}
        fastest = min(times, key=times.get)
        a = med([x[0] for x in auto])
        print(f"| {key[0]} | {key[1]} | {key[2]} | {auto[0][2]} | {a:.0f} | " +
              " | ".join(f"{times[x]:.0f}" for x in algorithms) +
              f" | {fastest} | {a / times[fastest]:.2f} |")


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("merge", "auto", "regret"):
        sys.exit(__doc__)
    if sys.argv[1] == "merge":
        merge(sys.argv[2])
    else:
        (auto_table if sys.argv[1] == "auto" else regret_table)(load(sys.argv[2]))
