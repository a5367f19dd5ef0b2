#!/usr/bin/env bash
# call 19: the grid-barrier ceiling (gpude bench --ceilings), twice, beside the whole-GPU cases
set -uo pipefail
B=gpu-bundle
FINAL=${OUT:-/tmp/out}; mkdir -p $FINAL
bash $B/unpack.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
for r in 1 2; do
  $B/gpude-bar bench --ceilings --only "one pop Np=" --json --out $FINAL/ceil-grid-$r.json > /dev/null 2> $FINAL/ceil-grid-$r.log || echo "round $r: rc $?"
done
$B/gpude-bar bench --ceilings --quick --only "one pop Np=2048 (grid)" 2>&1 | tail -4
python3 - $FINAL <<'PY'
import json,sys,glob
for f in sorted(glob.glob(sys.argv[1]+'/ceil-grid-*.json')):
    d=json.load(open(f)); c=d['ceilings']
    print(f.split('/')[-1], 'barrier %.3f us (%d x %d)'%(c['grid_barrier_us'],c['grid_barrier_blocks'],c['grid_barrier_threads']), 'HBM %.0f'%c['hbm_gb_per_s'], 'L2 %.0f'%c['l2_gb_per_s'], 'FMA %.2f T'%(c['fma_f32_per_s']/1e12))
    for r in d['records']: print('   %-40s %8.2f us/gen'%(r['name'], r['us_per_gen']))
PY
