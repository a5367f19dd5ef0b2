#!/usr/bin/env bash
# call 27: every GPU test on version 15, then the sanitizers on the controlled and checkpointed whole-GPU tests
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
timeout 430 $B/gpu-tests > $OUT/tests.log 2>&1; echo "all tests: rc $? at $(( $(date +%s) - s )) s: $(grep 'test result' $OUT/tests.log)" >> $OUT/summary.txt
grep -E "^test .*FAILED" $OUT/tests.log | head -20 >> $OUT/summary.txt
echo "ok: $(grep -cE '^test .* ok' $OUT/tests.log)" >> $OUT/summary.txt
for tool in memcheck racecheck synccheck; do
  timeout 50 compute-sanitizer --tool $tool --error-exitcode 9 $B/gpu-tests control_observer_stops_exactly checkpoint_resume_bit_identity > $OUT/sanitizer-$tool.log 2>&1
  echo "sanitizer $tool: exit $? at $(( $(date +%s) - s )) s, $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/sanitizer-$tool.log | tail -1); $(grep 'test result' $OUT/sanitizer-$tool.log)" >> $OUT/summary.txt
done
cat $OUT/summary.txt
