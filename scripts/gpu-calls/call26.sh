#!/usr/bin/env bash
# call 26: version 15 (the whole-GPU kernels' block words in shared memory) beside version 14 in turns,
# two rounds; the sanitizers on the whole-GPU tests; the full bench with the ceilings; the peers: one lease
set -uo pipefail
B=gpu-bundle
FINAL=${OUT:-/tmp/out}; export OUT=$FINAL/logs; mkdir -p $OUT
fin() { cd $OUT && tar czf $FINAL/logs.tgz . && cp summary.txt $FINAL/ 2>/dev/null; }
trap fin EXIT
bash $B/unpack.sh
export GPUDE_OBJECTIVE_PTX=$PWD/$B/objective-example.ptx
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $OUT/summary.txt
s=$(date +%s)
for r in 1 2; do for bin in v14 v15; do for tag in grid b132 b528; do
  case $tag in grid) only="(grid)";; b132) only="132 x 2048";; b528) only="528 x 256";; esac
  timeout 100 $B/gpude-$bin bench --only "$only" --json --out $OUT/b-$bin-$tag-$r.json > $OUT/b-$bin-$tag-$r.log 2>&1 || echo "bench $bin $tag $r: rc $?" >> $OUT/summary.txt
done; done; echo "round $r done at $(( $(date +%s) - s )) s" >> $OUT/summary.txt; done
python3 $B/cmp.py $OUT v14 >> $OUT/summary.txt
timeout 200 $B/gpude-v15 bench --ceilings --json --out $OUT/full-v15.json > $OUT/full-v15.log 2>&1; echo "full bench: rc $? at $(( $(date +%s) - s )) s" >> $OUT/summary.txt
grep -iE 'ceiling|Np=8192|132 x 2048|528 x 256' $OUT/full-v15.log | head -12 >> $OUT/summary.txt
timeout 180 bash $B/peers/run.sh > $OUT/peers.log 2>&1; echo "peers: rc $? at $(( $(date +%s) - s )) s" >> $OUT/summary.txt
grep -E '^\{' $OUT/peers.log >> $OUT/summary.txt
for tool in memcheck racecheck synccheck; do
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 $B/gpu-tests grid_mode_matches_batch_mode history_is_recorded > $OUT/sanitizer-$tool.log 2>&1
  echo "sanitizer $tool: exit $? at $(( $(date +%s) - s )) s, $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/sanitizer-$tool.log | tail -1); $(grep 'test result' $OUT/sanitizer-$tool.log)" >> $OUT/summary.txt
done
cat $OUT/summary.txt
