#!/usr/bin/env bash
# call 35: version 17 as committed, with the shared- and pipelined-plan refactor of host/src/cuda/resident.rs
# (no PTX change), on an H200: every GPU test, #11's three cases with the ceilings, the peers and the ratios, the sanitizers on the
# shared-memory and pipelined tests (the time left shared out); a short table last
set -uo pipefail
B=gpu-bundle
FINAL=${OUT:-/tmp/out}; export OUT=$FINAL/logs; mkdir -p $OUT
fin() { cd $OUT && tar czf $FINAL/logs.tgz . && cp summary.txt $FINAL/ 2>/dev/null; }
trap fin EXIT
bash $B/unpack.sh
export GPUDE_CEC2017_DATA=$PWD/$B/reference/cec2017/CEC17_fast_pow-C++.zip
export GPUDE_OBJECTIVE_PTX=$PWD/$B/objective-example.ptx
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $OUT/summary.txt
s=$(date +%s)
el() { echo "$(( $(date +%s) - s )) s"; }
timeout 280 $B/gpu-tests > $OUT/tests.log 2>&1; echo "all tests: rc $? at $(el): $(grep 'test result' $OUT/tests.log); $(grep -c '\.\.\. ok' $OUT/tests.log) ok" >> $OUT/summary.txt
grep -E "^test .*FAILED" $OUT/tests.log | head -10 >> $OUT/summary.txt
timeout 60 $B/gpude bench --ceilings --only "Np=8192 (grid)" --json --out $OUT/grid.json > $OUT/grid.log 2>&1; echo "bench grid: rc $? at $(el)" >> $OUT/summary.txt
timeout 60 $B/gpude bench --only "batch 132 x 2048" --json --out $OUT/b132.json > $OUT/b132.log 2>&1; echo "bench 132: rc $? at $(el)" >> $OUT/summary.txt
timeout 60 $B/gpude bench --only "528 x 256" --json --out $OUT/b528.json > $OUT/b528.log 2>&1; echo "bench 528: rc $? at $(el)" >> $OUT/summary.txt
timeout 100 bash $B/peers/run.sh > $OUT/peers.log 2>&1; echo "peers: rc $? at $(el)" >> $OUT/summary.txt
n=3
for tool in memcheck racecheck synccheck; do
  timeout $(( (575 - $(date +%s) + s) / n-- )) compute-sanitizer --tool $tool --error-exitcode 9 $B/gpu-tests pipelined shared_memory > $OUT/sanitizer-$tool.log 2>&1
  echo "sanitizer $tool: exit $? at $(el), $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/sanitizer-$tool.log | tail -1); $(grep 'test result' $OUT/sanitizer-$tool.log)" >> $OUT/summary.txt
done
python3 - $OUT >> $OUT/summary.txt <<'PY'
import json, sys, os
d = sys.argv[1]
def load(f):
    try: return json.load(open(os.path.join(d, f)))
    except Exception as e: print('missing', f, e); return {}
g = load('grid.json')
c = g.get('ceilings')
if c: print('ceilings: barrier %.3f us, HBM %.0f GB/s, L2 %.0f GB/s, FMA f32 %.2f T/s' % (c['grid_barrier_us'], c['hbm_gb_per_s'], c['l2_gb_per_s'], c['fma_f32_per_s'] / 1e12))
peers = {}
for l in open(os.path.join(d, 'peers.log')):
    if l.startswith('{'):
        p = json.loads(l)
        if 'us_per_gen' in p: peers[(p['peer'].split('-')[0] + ('-bpp' if 'block-per-pop' in p['peer'] else ''), p.get('pops', 1), p['Np'])] = p['us_per_gen']
print('peers:', peers)
for f in ('grid.json', 'b132.json', 'b528.json'):
    for r in load(f).get('records', []):
        n = r['name']; us = r['us_per_gen']
        ref = None
        if 'Np=8192 (grid)' in n: ref = next((v for k, v in peers.items() if k[0] == 'jax' and k[2] == 8192), None)
        elif '132 x 2048' in n: ref = peers.get(('cuda-bpp', 132, 2048))
        elif '528 x 256' in n: ref = peers.get(('cuda-bpp', 528, 256))
        print('%-44s %9.2f us/gen %7.1f G  err %.3g verified %.3g  %s' % (n, us, r['element_gens_per_s'] / 1e9, r['final_error'], r['final_verified_error'], ('peer %.1f us: %.2fx' % (ref, ref / us)) if ref else ''))
PY
cat $OUT/summary.txt
