#!/usr/bin/env python3
"""Combines the CSVs of several runs of `optcoll bench --format csv` (the same options): per
case and size, the median optcoll and MPI times over the runs, the median of the per-run
ratios and their range. Used for docs/performance.md on a noisy machine, where one run's
ratio can swing by a third."""
import argparse
import csv
import statistics
import sys


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("csv_files", nargs="+")
    parser.add_argument("--min-bytes", type=int, default=0, help="skip smaller rows")
    args = parser.parse_args()
    table = {}
    order = []
    for path in args.csv_files:
        try:
            with open(path, newline="") as f:
                rows = [r for r in csv.DictReader(f) if (r.get("bytes_per_rank") or "").isdigit()]
        except OSError as e:
            sys.exit(f"median_bench.py: cannot read {path}: {e}")
        for r in rows:
            if int(r["bytes_per_rank"]) < args.min_bytes:
                continue
            key = (r["collective"], r["counts"], int(r["bytes_per_rank"]))
            if key not in table:
                table[key] = []
                order.append(key)
            table[key].append(r)
    print(f"{len(args.csv_files)} runs; medians over the runs\n")
    print("| collective | counts | bytes per rank | optcoll algorithm | optcoll (us) | MPI (us) "
          "| optcoll / MPI (median) | range | same result |")
    print("|---|---|---|---|---|---|---|---|---|")
    for key in order:
        rows = table[key]
        ours = statistics.median(float(r["optcoll_us"]) for r in rows)
        theirs = statistics.median(float(r["mpi_us"]) for r in rows)
        ratios = [float(r["ratio"]) for r in rows]
        algorithms = sorted({r["algorithm"] for r in rows})
        same = all(r["same_result"] == "yes" for r in rows)
        print(f"| {key[0]} | {key[1]} | {key[2]} | {' / '.join(algorithms)} | {ours:.1f} | "
              f"{theirs:.1f} | {statistics.median(ratios):.2f} | {min(ratios):.2f}-{max(ratios):.2f} "
              f"| {'yes' if same else 'NO'} |")


if __name__ == "__main__":
    main()
