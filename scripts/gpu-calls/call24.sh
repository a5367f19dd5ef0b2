#!/usr/bin/env bash
# call 24: the whole-GPU generation's cost against whole passes per warp (Np = 2112·p, 264 blocks of 8 warps at D = 128):
# gpude run --mode grid, marginal µs per generation between 400 and 2000 generations, median of 3
set -uo pipefail
B=gpu-bundle
FINAL=${OUT:-/tmp/out}; mkdir -p $FINAL
bash $B/unpack.sh
G=$B/gpude-r
for np in 2112 4224 6336 8448 8192; do
  for r in 1 2 3; do for g in 400 2000; do
    $G run --backend cuda --mode grid --strategy thesis --function griewank --dim 128 --pop $np --gens $g --target 0 --json > $FINAL/run-$np-$g-$r.json 2> $FINAL/run-$np-$g-$r.log || echo "np $np g $g: rc $?"
  done; done
done
python3 - $FINAL <<'PY'
import json,sys,statistics
d=sys.argv[1]
for np in [2112,4224,6336,8448,8192]:
    m=[]
    for r in (1,2,3):
        t={g: json.load(open(f'{d}/run-{np}-{g}-{r}.json'))['results'][0] for g in (400,2000)}
        m.append((t[2000]['elapsed']-t[400]['elapsed'])/(t[2000]['generations']-t[400]['generations'])*1e6)
    print('Np %5d: %s us/gen, median %.2f (generations %d)'%(np,' '.join('%.2f'%x for x in m),statistics.median(m),t[2000]['generations']))
PY
