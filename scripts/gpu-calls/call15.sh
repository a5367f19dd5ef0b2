#!/usr/bin/env bash
# call 15: sanitizers on the grid and resident kernels; version 13 (final) beside version 12; the full bench with the ceilings; the peers: one lease
set -uo pipefail
B=gpu-bundle
FINAL=${OUT:-/tmp/out}; export OUT=$FINAL/logs; mkdir -p $OUT
fin() { cd $OUT && tar czf $FINAL/logs.tgz . && cp summary.txt $FINAL/ 2>/dev/null; }
trap fin EXIT
bash $B/unpack.sh
export GPUDE_OBJECTIVE_PTX=$PWD/$B/objective-example.ptx
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $OUT/summary.txt
s=$(date +%s)
for tool in memcheck racecheck synccheck; do
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 9 $B/gpu-tests grid_mode_matches_batch_mode shared_memory_batch_matches_cpu_bit_for_bit history_is_recorded checkpoint_resume_bit_identity > $OUT/sanitizer-$tool.log 2>&1
  echo "sanitizer $tool: exit $? at $(( $(date +%s) - s )) s, $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/sanitizer-$tool.log | tail -1); $(grep 'test result' $OUT/sanitizer-$tool.log)" >> $OUT/summary.txt
done
for r in 1 2; do for bin in v12 v13; do for tag in grid b132 b528; do
  case $tag in grid) only="(grid)";; b132) only="132 x 2048";; b528) only="528 x 256";; esac
  timeout 100 $B/gpude-$bin bench --only "$only" --json --out $OUT/b-$bin-$tag-$r.json > $OUT/b-$bin-$tag-$r.log 2>&1 || echo "bench $bin $tag $r: rc $?" >> $OUT/summary.txt
done; done; echo "round $r done at $(( $(date +%s) - s )) s" >> $OUT/summary.txt; done
python3 $B/cmp.py $OUT v12 >> $OUT/summary.txt
timeout 200 $B/gpude-v13 bench --ceilings --json --out $OUT/full-v13.json > $OUT/full-v13.log 2>&1; echo "full bench: rc $? at $(( $(date +%s) - s )) s" >> $OUT/summary.txt
grep -iE 'ceiling|HBM|L2|FMA' $OUT/full-v13.log | head -8 >> $OUT/summary.txt
timeout 180 bash $B/peers/run.sh > $OUT/peers.log 2>&1; echo "peers: rc $? at $(( $(date +%s) - s )) s" >> $OUT/summary.txt
grep -E '^\{' $OUT/peers.log >> $OUT/summary.txt
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
prof() { # tag kernel only
  timeout 90 $NCU --section SourceCounters --section LaunchStats --section Occupancy --section SpeedOfLight -k regex:"$2\$" --launch-skip 2 --launch-count 1 -o $OUT/ncu-$1 $B/gpude-v13 bench --quick --repeats 1 --only "$3" > $OUT/ncu-$1.log 2>&1
  $NCU --import $OUT/ncu-$1.ncu-rep --page source --csv --print-source sass > $OUT/ncu-$1-sass.csv 2>/dev/null
  $NCU --import $OUT/ncu-$1.ncu-rep > $OUT/ncu-$1.txt 2>/dev/null
  rm -f $OUT/ncu-$1.ncu-rep
  echo "profile $1: $(( $(date +%s) - s )) s" >> $OUT/summary.txt
}
prof b132 de_batch_f32_griewank_thesis "batch 132 x 2048"
prof r528 de_batch_f32_griewank_thesis_shared "batch 528 x 256 shared"
prof g8192 de_grid_f32_griewank_thesis "one pop Np=8192 (grid)"
