#!/usr/bin/env bash
# call 5: every GPU test on version 12 (E), then compute-sanitizer on the kernels whose reductions changed
set -uo pipefail
B=gpu-bundle
FINAL=${OUT:-/tmp/out}; export OUT=$FINAL/logs; mkdir -p $OUT
fin() { cd $OUT && tar czf $FINAL/logs.tgz . && cp summary.txt $FINAL/ 2>/dev/null; }
trap fin EXIT
bash $B/unpack.sh
export GPUDE_CEC2017_DATA=$PWD/$B/reference/cec2017/CEC17_fast_pow-C++.zip
export GPUDE_OBJECTIVE_PTX=$PWD/$B/objective-example.ptx
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/summary.txt
s=$(date +%s)
timeout 390 $B/gpu-tests > $OUT/tests.log 2>&1; echo "all tests: rc $? in $(( $(date +%s) - s )) s: $(grep 'test result' $OUT/tests.log)" >> $OUT/summary.txt
grep -E "^test .*FAILED" $OUT/tests.log | head -20 >> $OUT/summary.txt
for tool in memcheck racecheck synccheck; do
  s=$(date +%s)
  timeout 60 compute-sanitizer --tool $tool --error-exitcode 9 $B/gpu-tests shared_memory_batch_matches grid_mode > $OUT/sanitizer-$tool.log 2>&1
  echo "sanitizer $tool: rc $? in $(( $(date +%s) - s )) s: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|test result' $OUT/sanitizer-$tool.log | tr '\n' ' ')" >> $OUT/summary.txt
done
