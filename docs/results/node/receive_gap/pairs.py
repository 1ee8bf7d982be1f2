# python3 pairs.py OUT: for each row whose algorithm changed, in how many of the rounds the
# second model's run was faster than the first's (runs paired by round).
import csv,sys,glob,collections
d=sys.argv[1]
val=collections.defaultdict(dict); alg={}
for v in ['nogap','gap']:
  for f in glob.glob(f'{d}/{v}_*.csv'):
    i=int(f.rsplit('_',1)[1].split('.')[0])
    for r in csv.DictReader(open(f)):
      k=(r['collective'],r['counts'],int(r['bytes_per_rank']))
      val[k][(v,i)]=float(r['optcoll_us']); alg[(k,v)]=r['algorithm']
for k in sorted(val):
  if alg[(k,'nogap')]==alg[(k,'gap')]: continue
  rounds=sorted({i for (_,i) in val[k]})
  wins=sum(1 for i in rounds if val[k][('gap',i)]<val[k][('nogap',i)])
  print(f"{k[0]:20} {k[1]:8} {k[2]:>6}: receive gap faster in {wins}/{len(rounds)} rounds")
