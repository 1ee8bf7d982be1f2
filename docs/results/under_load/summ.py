import glob,statistics,collections,re,sys
d=collections.defaultdict(list)
for f in glob.glob('/tmp/ab/*.md'):
    load,binv,rep=f.split('/')[-1][:-3].split('-')
    for line in open(f):
        c=[x.strip() for x in line.split('|')]
        if len(c)<10 or not c[3].isdigit(): continue
        coll,size,alg,opt,mpi=c[1],int(c[3]),c[4],float(c[5]),float(c[7])
        d[(load,coll,size,binv)].append((opt,mpi))
for load in ['busy','idle']:
    print(f"## {load}: median us (old, new, MPI beside new), new/old, new/MPI")
    keys=sorted({(k[1],k[2]) for k in d if k[0]==load})
    for coll,size in keys:
        o=d.get((load,coll,size,'old'),[]); n=d.get((load,coll,size,'new'),[])
        if not o or not n: continue
        mo=statistics.median(x[0] for x in o); mn=statistics.median(x[0] for x in n)
        mm=statistics.median([x[1] for x in n]+[x[1] for x in o])
        print(f"| {coll} | {size} | {mo:.1f} | {mn:.1f} | {mm:.1f} | {mn/mo:.2f} | {mn/mm:.2f} |")
