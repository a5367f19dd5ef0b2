#!/usr/bin/env bash
# call 29: the whole-GPU kernels at 256 and at 512 threads per block (GPUDE_EXP_GRID_THREADS, a switch only this experimental build
# of version 15 has) for populations that fill at most one pass: gpude run --mode grid, marginal µs per generation between 400 and
# 2000 generations, three runs each, the two block sizes in turns
set -uo pipefail
B=gpu-bundle
FINAL=${OUT:-/tmp/out}; mkdir -p $FINAL
bash $B/unpack.sh
G=$B/gpude-t
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
cases=("griewank 128 2048 f32" "griewank 128 2048 f64" "rosenbrock 128 2048 f32" "griewank 128 1024 f32" "griewank 30 4096 f32" "griewank 30 8192 f32" "griewank 128 4096 f32")
for r in 1 2 3; do for c in "${cases[@]}"; do set -- $c; for t in 256 512; do for g in 400 2000; do
  GPUDE_EXP_GRID_THREADS=$t $G run --backend cuda --mode grid --strategy thesis --function $1 --dim $2 --pop $3 --precision $4 --gens $g --target 0 --json > $FINAL/run-$1-$2-$3-$4-$t-$g-$r.json 2> $FINAL/run-$1-$2-$3-$4-$t-$g-$r.log || echo "$c $t $g: rc $?"
done; done; done; done
python3 - $FINAL "${cases[@]}" <<'PY'
import json,sys,statistics
d=sys.argv[1]
for c in sys.argv[2:]:
    f,dim,np,p=c.split()
    row=[]
    for t in (256,512):
        m=[]
        for r in (1,2,3):
            x={g: json.load(open(f'{d}/run-{f}-{dim}-{np}-{p}-{t}-{g}-{r}.json'))['results'][0] for g in (400,2000)}
            m.append((x[2000]['elapsed']-x[400]['elapsed'])/(x[2000]['generations']-x[400]['generations'])*1e6)
        row.append(m)
    a,b=statistics.median(row[0]),statistics.median(row[1])
    print('%-26s 256: %s  512: %s  512/256 %.3f'%(c,' '.join('%.2f'%v for v in row[0]),' '.join('%.2f'%v for v in row[1]),b/a))
PY
