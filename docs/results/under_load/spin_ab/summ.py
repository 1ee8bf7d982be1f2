import glob, statistics as st, collections
d=collections.defaultdict(list)
for line in open(__import__('os').path.join(__import__('os').path.dirname(__import__('os').path.abspath(__file__)),'res.txt')):
    f=line.split()
    if len(f)==6 and f[5]: d[(f[0],'threads',f[3],int(f[4]),f[2])].append(float(f[5]))
for fn in glob.glob(__import__('os').path.join(__import__('os').path.dirname(__import__('os').path.abspath(__file__)),'*.csv')):
    load,bin,rep=fn.split('/')[-1][:-4].split('-')
    for line in open(fn):
        if line.startswith('collective'): continue
        f=line.strip().split(',')
        d[(load,'mpi',f[0],int(f[2]),bin)].append(float(f[4]))
        d[(load,'mpi',f[0],int(f[2]),'openmpi')].append(float(f[6]))
keys=sorted(set(k[:4] for k in d))
print('| load | backend | collective | bytes | old | new | new/old | Open MPI |')
print('|---|---|---|---|---|---|---|---|')
for k in keys:
    o=st.median(d[k+('old',)]); n=st.median(d[k+('new',)])
    om=d.get(k+('openmpi',))
    print(f"| {k[0]} | {k[1]} | {k[2]} | {k[3]} | {o:.1f} | {n:.1f} | {n/o:.2f} | {st.median(om):.1f} |" if om else f"| {k[0]} | {k[1]} | {k[2]} | {k[3]} | {o:.1f} | {n:.1f} | {n/o:.2f} | |")
