#!/usr/bin/env bash
# call 14: every GPU test on the final kernels (commit a0b16f4)
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
timeout 500 $B/gpu-tests > $OUT/tests.log 2>&1; echo "all tests: rc $? at $(( $(date +%s) - s )) s: $(grep 'test result' $OUT/tests.log)" >> $OUT/summary.txt
grep -E "^test .*FAILED|panicked" $OUT/tests.log | head -20 >> $OUT/summary.txt
echo "ok: $(grep -cE '^test .* ok' $OUT/tests.log)" >> $OUT/summary.txt
