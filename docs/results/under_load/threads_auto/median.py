# Medians over loaded_run*.txt of bench_threads_vs_mpi (columns: threads, fibers, MPI,
# threads / MPI, fibers / MPI, auto, auto / MPI) and, beside them, the idle run.
import glob, statistics
def load(path):
    rows = {}
    for line in open(path):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        # collective, bytes, then the 7 columns read here (later columns, as the copy
        # bandwidth and the physical limit, are not)
        if len(cells) >= 9 and cells[1].isdigit():
            rows[(cells[0], int(cells[1]))] = [float(c) for c in cells[2:9]]
    return rows
runs = [load(p) for p in sorted(glob.glob("loaded_run*.txt"))]
idle = load("idle.txt")
print(f"Beside two busy loops: medians over {len(runs)} runs; idle: one run. Times in us.\n")
print("| collective | bytes | threads | fibers | auto | Open MPI | auto / Open MPI | threads / Open MPI | idle: auto | idle: Open MPI | idle: auto / Open MPI |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for key in sorted(runs[0], key=lambda k: (k[1], k[0])):
    med = [statistics.median(r[key][i] for r in runs) for i in range(7)]
    ratio = statistics.median(r[key][6] for r in runs)
    tr = statistics.median(r[key][3] for r in runs)
    i = idle[key]
    print(f"| {key[0]} | {key[1]} | {med[0]:.1f} | {med[1]:.1f} | {med[5]:.1f} | {med[2]:.1f} | {ratio:.2f} | {tr:.2f} | {i[5]:.1f} | {i[2]:.1f} | {i[6]:.2f} |")
