#!/usr/bin/env python3
"""optcoll against the faster of Open MPI tuned and han on the emulated cluster (4 hosts x 4
ranks): reads bench_tuned.csv and bench_han.csv (optcoll bench --format csv, one run each)
and prints a markdown table. Each ratio is optcoll's time over MPI's from the same run; the
last column compares with whichever library was faster for that row."""
import csv
import sys

def load(path):
    with open(path) as f:
        return {(r["collective"], r["counts"], r["bytes_per_rank"]): r for r in csv.DictReader(f)}

tuned, han = load("bench_tuned.csv"), load("bench_han.csv")
print("| collective | counts | bytes/rank | optcoll plan | optcoll (tuned run) us | tuned us | "
      "optcoll (han run) us | han us | vs faster MPI |")
print("|---|---|---|---|---|---|---|---|---|")
for key, t in tuned.items():
    if "C API" in key[0] or key not in han:
        continue
    h = han[key]
    faster = t if float(t["mpi_us"]) <= float(h["mpi_us"]) else h
    ratio = float(faster["optcoll_us"]) / float(faster["mpi_us"])
    mark = "**" if ratio < 1 / 1.3 else ""
    print(f"| {key[0]} | {key[1]} | {key[2]} | {t['algorithm']} | {t['optcoll_us']} | "
          f"{t['mpi_us']} | {h['optcoll_us']} | {h['mpi_us']} | {mark}{ratio:.2f}{mark} "
          f"({'tuned' if faster is t else 'han'}) |")
