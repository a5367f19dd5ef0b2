#!/usr/bin/env bash
# call 31: version 16 (a 64 ns sleep between thread 0's polls of the grid barrier): the full bench with the ceilings and the
# peers in one lease, then every GPU test and the sanitizers on the whole-GPU tests
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
timeout 120 $B/gpude-v16 bench --ceilings --json --out $OUT/full-v16.json > $OUT/full-v16.log 2>&1; echo "full bench: rc $? at $(( $(date +%s) - s )) s" >> $OUT/summary.txt
python3 - $OUT/full-v16.json >> $OUT/summary.txt <<'PY'
import json,sys
d=json.load(open(sys.argv[1])); c=d['ceilings']
print('ceilings: barrier %.3f us, HBM %.0f GB/s, L2 %.0f GB/s, FMA f32 %.2f T/s'%(c['grid_barrier_us'],c['hbm_gb_per_s'],c['l2_gb_per_s'],c['fma_f32_per_s']/1e12))
for r in d['records']:
    if r['name'] in ('one pop Np=8192 (grid)','one pop Np=2048 (grid)','batch 132 x 2048','batch 528 x 256 shared','one pop Np=65536 (grid)','one pop Np=8192 (grid) f64'):
        print('%-32s %9.2f us/gen %7.1f G'%(r['name'],r['us_per_gen'],r['element_gens_per_s']/1e9))
PY
timeout 120 bash $B/peers/run.sh > $OUT/peers.log 2>&1; echo "peers: rc $? at $(( $(date +%s) - s )) s" >> $OUT/summary.txt
grep -E '^\{' $OUT/peers.log | grep -v evox | cut -c1-160 >> $OUT/summary.txt
timeout 330 $B/gpu-tests > $OUT/tests.log 2>&1; echo "all tests: rc $? at $(( $(date +%s) - s )) s: $(grep 'test result' $OUT/tests.log)" >> $OUT/summary.txt
grep -E "^test .*FAILED" $OUT/tests.log | head -20 >> $OUT/summary.txt
for tool in memcheck racecheck synccheck; do
  timeout 25 compute-sanitizer --tool $tool --error-exitcode 9 $B/gpu-tests grid_mode_matches_batch_mode > $OUT/sanitizer-$tool.log 2>&1
  echo "sanitizer $tool: exit $? at $(( $(date +%s) - s )) s, $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/sanitizer-$tool.log | tail -1); $(grep 'test result' $OUT/sanitizer-$tool.log)" >> $OUT/summary.txt
done
cat $OUT/summary.txt
