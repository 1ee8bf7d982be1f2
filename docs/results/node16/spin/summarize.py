#!/usr/bin/env python3
# The table of docs/performance.md "Thread backend against Open MPI, p = 16": medians of the two old and two new
# runs of bench_threads_vs_mpi in this folder (Open MPI: median of all four).
import re, statistics as st, sys, os
here = os.path.dirname(os.path.abspath(__file__))
def load(f):
    d = {}
    for line in open(os.path.join(here, f)):
        m = re.match(r'\| (\w+) \| (\d+) \| ([\d.]+) \| ([\d.]+) \| ([\d.]+) \|', line)
        if m: d[(m[1], int(m[2]))] = (float(m[3]), float(m[4]), float(m[5]))
    return d
o1, o2, n1, n2 = [load(f) for f in ['tvm_old.txt', 'tvm_old2.txt', 'tvm_new.txt', 'tvm_new2.txt']]
print('| collective | bytes per rank | threads before | threads after | fibers after | Open MPI | after / before | after / Open MPI |')
print('|---|---|---|---|---|---|---|---|')
for k in o1:
    old = st.median([o1[k][0], o2[k][0]]); new = st.median([n1[k][0], n2[k][0]])
    fib = st.median([n1[k][1], n2[k][1]]); mpi = st.median([o1[k][2], o2[k][2], n1[k][2], n2[k][2]])
    print(f'| {k[0]} | {k[1]} | {old:.1f} | {new:.1f} | {fib:.1f} | {mpi:.1f} | {new/old:.2f} | {new/mpi:.2f} |')
