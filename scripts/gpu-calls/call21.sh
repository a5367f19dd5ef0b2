#!/usr/bin/env bash
# call 21: version 14 (the grid barrier with release and acquire) beside version 13 in turns, three rounds; its ceilings; the whole-GPU GPU tests
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
for r in 1 2 3; do for bin in v13 v14; do for tag in grid b132 b528; do
  case $tag in grid) only="(grid)";; b132) only="132 x 2048";; b528) only="528 x 256";; esac
  timeout 100 $B/gpude-$bin bench --only "$only" --json --out $OUT/b-$bin-$tag-$r.json > $OUT/b-$bin-$tag-$r.log 2>&1 || echo "bench $bin $tag $r: rc $?" >> $OUT/summary.txt
done; done; echo "round $r done at $(( $(date +%s) - s )) s" >> $OUT/summary.txt; done
python3 $B/cmp.py $OUT v13 >> $OUT/summary.txt
$B/gpude-v14 bench --ceilings --quick --only "one pop Np=2048 (grid)" --json --out $OUT/ceil-v14.json > /dev/null 2>&1
python3 -c "import json;c=json.load(open('$OUT/ceil-v14.json'))['ceilings'];print('v14 ceilings: barrier %.3f us (%d x %d), HBM %.0f, L2 %.0f, FMA f32 %.2f T'%(c['grid_barrier_us'],c['grid_barrier_blocks'],c['grid_barrier_threads'],c['hbm_gb_per_s'],c['l2_gb_per_s'],c['fma_f32_per_s']/1e12))" >> $OUT/summary.txt
timeout 200 $B/gpu-tests grid_mode checkpoint control target_error history_is thesis_variants adaptive_grid nan_objectives > $OUT/tests.log 2>&1
echo "grid tests: rc $? at $(( $(date +%s) - s )) s: $(grep 'test result' $OUT/tests.log)" >> $OUT/summary.txt
grep -E "^test " $OUT/tests.log >> $OUT/summary.txt
cat $OUT/summary.txt
