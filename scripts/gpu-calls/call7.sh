#!/usr/bin/env bash
# call 7: every GPU test on the committed version 12, and its standard cases beside version 11
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
for bin in v11 v12; do for tag in grid b132 b528; do
  case $tag in grid) only="(grid)";; b132) only="132 x 2048";; b528) only="528 x 256";; esac
  timeout 60 $B/gpude-$bin bench --only "$only" --json --out $OUT/b-$bin-$tag-1.json > $OUT/b-$bin-$tag-1.log 2>&1 || echo "bench $bin $tag: rc $?" >> $OUT/summary.txt
done; done
python3 $B/cmp.py $OUT v11 >> $OUT/summary.txt
