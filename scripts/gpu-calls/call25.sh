#!/usr/bin/env bash
# call 25: an experimental build of version 15 (sm: the whole-GPU kernels' block words in shared memory) against version 14 (r),
# and at 512 threads per block (132 blocks) through GPUDE_EXP_GRID_THREADS, a switch only that build had; the barrier alone at
# 128, 256, 512 and 1024 threads per block (GPUDE_EXP_BAR_THREADS, the same); the whole-GPU tests of the sm build; its profile at Np = 8192
set -uo pipefail
B=gpu-bundle
FINAL=${OUT:-/tmp/out}; export OUT=$FINAL/logs; mkdir -p $OUT
fin() { cd $OUT && tar czf $FINAL/logs.tgz . && cp summary.txt $FINAL/ 2>/dev/null; }
trap fin EXIT
bash $B/unpack.sh
export GPUDE_OBJECTIVE_PTX=$PWD/$B/objective-example.ptx
: > $OUT/summary.txt
s=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader >> $OUT/summary.txt
run() { # name bin env...
  local n=$1 b=$2; shift 2
  env "$@" timeout 90 $B/gpude-$b bench --only "Np=8192 (grid)" --json --out $OUT/b-$n-grid-$r.json > $OUT/b-$n-grid-$r.log 2>&1 || echo "bench $n: rc $?" >> $OUT/summary.txt
  env "$@" timeout 60 $B/gpude-$b bench --only "one pop Np=2048 (grid)" --json --out $OUT/b-$n-g2048-$r.json > $OUT/b-$n-g2048-$r.log 2>&1 || echo "bench $n 2048: rc $?" >> $OUT/summary.txt
}
for r in 1 2 3; do
  run r r
  run sm sm
  run sm512 sm GPUDE_EXP_GRID_THREADS=512
done
python3 $B/cmp.py $OUT r >> $OUT/summary.txt
echo "benches done at $(( $(date +%s) - s )) s" >> $OUT/summary.txt
for t in 128 256 512 1024; do
  GPUDE_EXP_BAR_THREADS=$t timeout 60 $B/gpude-sm bench --ceilings --quick --only "one pop Np=2048 (grid)" > $OUT/ceil-$t.log 2>&1
  echo "barrier $t threads: $(grep -i 'grid barrier' $OUT/ceil-$t.log | head -1)" >> $OUT/summary.txt
done
timeout 240 $B/gpu-tests grid_mode checkpoint control target_error history_is thesis_variants adaptive_grid nan_objectives > $OUT/tests-grid.log 2>&1; echo "grid tests rc $?: $(grep 'test result' $OUT/tests-grid.log)" >> $OUT/summary.txt
GPUDE_EXP_GRID_THREADS=512 timeout 240 $B/gpu-tests grid_mode checkpoint control target_error history_is thesis_variants adaptive_grid nan_objectives > $OUT/tests-grid512.log 2>&1; echo "grid tests 512 rc $?: $(grep 'test result' $OUT/tests-grid512.log)" >> $OUT/summary.txt
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
timeout 120 $NCU --section SourceCounters --section LaunchStats --section Occupancy --section SchedulerStats -k regex:'de_grid_f32_griewank_thesis$' --launch-skip 2 --launch-count 1 -o $OUT/ncu-g8192 $B/gpude-sm bench --quick --repeats 1 --only "one pop Np=8192 (grid)" > $OUT/ncu-g8192.log 2>&1
$NCU --import $OUT/ncu-g8192.ncu-rep --page source --csv --print-source sass > $OUT/ncu-g8192-sass.csv 2>/dev/null
$NCU --import $OUT/ncu-g8192.ncu-rep > $OUT/ncu-g8192.txt 2>/dev/null
echo "done at $(( $(date +%s) - s )) s" >> $OUT/summary.txt
cat $OUT/summary.txt
