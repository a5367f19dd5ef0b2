#!/usr/bin/env bash
# call 34: version 17 as committed (auto takes the pipelined kernel for single-precision populations that do not fit in
# shared memory): #11's cases with the ceilings, the peers, the sanitizers on the pipelined parity test, every GPU test
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
timeout 60 $B/gpude-v17 bench --ceilings --only "Np=8192 (grid)" --json --out $OUT/v17-grid.json > $OUT/v17-grid.log 2>&1; echo "bench grid: rc $? at $(el)" >> $OUT/summary.txt
timeout 60 $B/gpude-v17 bench --only "batch 132 x 2048" --json --out $OUT/v17-b132.json > $OUT/v17-b132.log 2>&1; echo "bench 132: rc $? at $(el)" >> $OUT/summary.txt
timeout 60 $B/gpude-v17 bench --only "528 x 256" --json --out $OUT/v17-b528.json > $OUT/v17-b528.log 2>&1; echo "bench 528: rc $? at $(el)" >> $OUT/summary.txt
python3 - $OUT >> $OUT/summary.txt <<'PY'
import json,sys,os
d=sys.argv[1]
c=json.load(open(os.path.join(d,'v17-grid.json')))['ceilings']
print('ceilings: barrier %.3f us, HBM %.0f GB/s, L2 %.0f GB/s, FMA f32 %.2f T/s'%(c['grid_barrier_us'],c['hbm_gb_per_s'],c['l2_gb_per_s'],c['fma_f32_per_s']/1e12))
for f in ('v17-grid.json','v17-b132.json','v17-b528.json'):
    for r in json.load(open(os.path.join(d,f)))['records']:
        print('%-40s %9.2f us/gen %7.1f G  err %.3g verified %.3g'%(r['name'],r['us_per_gen'],r['element_gens_per_s']/1e9,r['final_error'],r['final_verified_error']))
PY
timeout 100 bash $B/peers/run.sh > $OUT/peers.log 2>&1; echo "peers: rc $? at $(el)" >> $OUT/summary.txt
grep -E '^\{' $OUT/peers.log | grep -v evox | grep -E 'block-per-pop|jax' | cut -c1-150 >> $OUT/summary.txt
for tool in memcheck racecheck synccheck; do
  timeout 80 compute-sanitizer --tool $tool --error-exitcode 9 $B/gpu-tests pipelined > $OUT/sanitizer-$tool.log 2>&1
  echo "sanitizer $tool: exit $? at $(el), $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/sanitizer-$tool.log | tail -1); $(grep 'test result' $OUT/sanitizer-$tool.log)" >> $OUT/summary.txt
done
timeout $(( 585 - $(date +%s) + s )) $B/gpu-tests > $OUT/tests.log 2>&1; echo "all tests: rc $? at $(el): $(grep 'test result' $OUT/tests.log); $(grep -c '\.\.\. ok' $OUT/tests.log) ok" >> $OUT/summary.txt
grep -E "^test .*FAILED" $OUT/tests.log | head -10 >> $OUT/summary.txt
cat $OUT/summary.txt
