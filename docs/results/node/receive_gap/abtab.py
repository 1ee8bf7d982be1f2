import csv,sys,statistics as st,glob,collections
d=sys.argv[1]
rows=collections.defaultdict(lambda: collections.defaultdict(list))
alg={}
for v in ['nogap','gap']:
  for f in sorted(glob.glob(f'{d}/{v}_*.csv')):
    for r in csv.DictReader(open(f)):
      if r['same_result']!='yes': print('WRONG',f,r)
      k=(r['collective'],r['counts'],int(r['bytes_per_rank']))
      rows[k][v].append(float(r['optcoll_us'])); rows[k]['mpi_'+v].append(float(r['mpi_us']))
      alg[(k,v)]=r['algorithm']; rows[k]['pred_'+v].append(r['predicted_us'])
print(f"{'collective':18} {'counts':8} {'bytes':>6} | {'alg no gap':28} {'us':>6} | {'alg gap':28} {'us':>6} | {'MPI':>6} | gap/nogap")
for k in sorted(rows):
  r=rows[k]
  a,b=st.median(r['nogap']),st.median(r['gap']); mpi=st.median(r['mpi_nogap']+r['mpi_gap'])
  an,ag=alg[(k,'nogap')],alg[(k,'gap')]
  if 'C API' in k[0]: continue
  mark='*' if an!=ag else ' '
  print(f"{k[0]:18} {k[1]:8} {k[2]:>6} | {an:28} {a:6.1f} | {ag:28} {b:6.1f} | {mpi:6.1f} | {b/a:5.2f} {mark}")
