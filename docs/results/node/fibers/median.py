# Medians over runs of bench_threads_vs_mpi tables (tvm_p{P}_run{R}.txt): per row, the
# median of each time column and of each ratio.
import glob, statistics, sys
for p in sys.argv[1:]:
    rows = {}
    for path in sorted(glob.glob(f"tvm_p{p}_run*.txt")):
        for line in open(path):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) != 7 or not cells[1].isdigit():
                continue
            rows.setdefault((cells[0], int(cells[1])), []).append([float(c) for c in cells[2:]])
    print(f"p = {p}: medians over {len(next(iter(rows.values())))} runs")
    print("| collective | bytes | threads (us) | fibers (us) | MPI (us) | threads / MPI | fibers / MPI | fibers / threads |")
    print("|---|---|---|---|---|---|---|---|")
    for (name, size), runs in sorted(rows.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        med = [statistics.median(col) for col in zip(*runs)]
        ratio = statistics.median(r[1] / r[0] for r in runs)
        print(f"| {name} | {size} | {med[0]:.1f} | {med[1]:.1f} | {med[2]:.1f} | {med[3]:.2f} | {med[4]:.2f} | {ratio:.2f} |")
    print()
