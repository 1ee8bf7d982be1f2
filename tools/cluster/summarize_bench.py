#!/usr/bin/env python3
"""Summarizes the CSV of `optcoll bench --format csv`: optcoll / MPI per case and size, and
how well the model predicted optcoll's times (median relative error, all sizes and >= 32 KiB)."""
import argparse
import csv
import statistics
import sys


def fmt_bytes(n):
    for unit, size in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= size and n % size == 0:
            return f"{n // size} {unit}"
    return f"{n} B"


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("csv_file")
    parser.add_argument("--title", default="")
    parser.add_argument("--large", type=int, default=32768,
                        help="bytes per rank from which a row counts as large")
    args = parser.parse_args()
    try:
        with open(args.csv_file, newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        sys.exit(f"summarize_bench.py: cannot read {args.csv_file}: {e}")
    # Lines that are not table rows (a launcher's messages appended to the file) are skipped.
    rows = [r for r in rows if (r.get("bytes_per_rank") or "").isdigit()]
    needed = {"collective", "counts", "bytes_per_rank", "algorithm", "optcoll_us",
              "predicted_us", "mpi_us", "ratio", "same_result"}
    if not rows or not needed <= set(rows[0]):
        sys.exit(f"summarize_bench.py: {args.csv_file} is not the CSV of optcoll bench")
    sizes = sorted({int(r["bytes_per_rank"]) for r in rows})
    cases = []
    for r in rows:
        key = (r["collective"], r["counts"])
        if key not in cases:
            cases.append(key)
    table = {(r["collective"], r["counts"], int(r["bytes_per_rank"])): r for r in rows}
    print(f"### optcoll / MPI ({args.title})\n" if args.title else "### optcoll / MPI\n")
    print("| collective | counts | " + " | ".join(fmt_bytes(s) for s in sizes) + " |")
    print("|---|---|" + "---|" * len(sizes))
    for coll, counts in cases:
        cells = []
        for s in sizes:
            r = table.get((coll, counts, s))
            cells.append("" if r is None else f"{float(r['ratio']):.2f}")
        print(f"| {coll} | {counts} | " + " | ".join(cells) + " |")
    wrong = [r for r in rows if r["same_result"] != "yes"]
    print(f"\nrows: {len(rows)}; optcoll faster: {sum(float(r['ratio']) < 1 for r in rows)}; "
          f"results differing from MPI's: {len(wrong)}")
    large = [r for r in rows if int(r["bytes_per_rank"]) >= args.large]
    print(f"large rows (>= {fmt_bytes(args.large)} per rank): {len(large)}; optcoll faster: "
          f"{sum(float(r['ratio']) < 1 for r in large)}; median optcoll / MPI: "
          f"{statistics.median(float(r['ratio']) for r in large):.2f}" if large else "")

    def errors(subset):
        return [abs(float(r["predicted_us"]) - float(r["optcoll_us"])) / float(r["optcoll_us"])
                for r in subset if r["predicted_us"] not in ("", "-") and float(r["optcoll_us"]) > 0]

    print("\n### Model prediction vs measurement (optcoll's plan, |predicted - measured| / measured)\n")
    print("| rows | count | median error | 90th percentile |")
    print("|---|---|---|---|")
    for name, subset in (("all sizes", rows), (f">= {fmt_bytes(args.large)}", large)):
        e = sorted(errors(subset))
        if e:
            p90 = e[min(len(e) - 1, int(0.9 * len(e)))]
            print(f"| {name} | {len(e)} | {100 * statistics.median(e):.0f}% | {100 * p90:.0f}% |")
    print("\n| collective | median error (>= "
          f"{fmt_bytes(args.large)}) |\n|---|---|")
    for coll, counts in cases:
        e = errors([r for r in large if (r["collective"], r["counts"]) == (coll, counts)])
        if e:
            print(f"| {coll} ({counts}) | {100 * statistics.median(e):.0f}% |")


if __name__ == "__main__":
    main()
