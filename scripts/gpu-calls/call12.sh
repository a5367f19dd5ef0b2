#!/usr/bin/env bash
# call 12: v13g (keyed grid best) and v13h (+ acq_rel fences) beside v12; grid cap sweep on v13h; grid profile of v13h
set -uo pipefail
bash gpu-bundle/callx.sh "v12 v13g v13h" v13h "g8192" 2
OUTL=${OUT:-/tmp/out}/logs
for cap in 80 96 104 128; do for r in 1 2; do
  GPUDE_MAXNREG=$cap timeout 60 gpu-bundle/gpude-v13h bench --only "(grid)" --json --out $OUTL/cap-$cap-$r.json > $OUTL/cap-$cap-$r.log 2>&1
done; done
python3 - $OUTL >> $OUTL/summary.txt <<'PY'
import json,sys,glob,os,collections,statistics
d=sys.argv[1]; t=collections.defaultdict(lambda: collections.defaultdict(list))
for f in glob.glob(os.path.join(d,'cap-*.json')):
    cap=os.path.basename(f).split('-')[1]
    for r in json.load(open(f))['records']: t[r['name']][int(cap)].append(r['us_per_gen'])
caps=sorted({c for v in t.values() for c in v})
print('cap sweep (v13h)', caps)
for n,v in t.items(): print('%-40s'%n[:40], ' '.join('%8.2f'%statistics.median(v[c]) if v.get(c) else '       -' for c in caps))
PY
cp $OUTL/summary.txt ${OUT:-/tmp/out}/summary.txt
cd $OUTL && tar czf ${OUT:-/tmp/out}/logs.tgz --exclude='*.ncu-rep' .
