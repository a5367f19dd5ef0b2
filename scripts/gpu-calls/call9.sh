#!/usr/bin/env bash
# call 9: version 12 with the register caps per layout (v12c) beside the cap of 64 (v12), then every GPU test on v12c
set -uo pipefail
B=gpu-bundle
FINAL=${OUT:-/tmp/out}; export OUT=$FINAL/logs; mkdir -p $OUT
fin() { cd $OUT && tar czf $FINAL/logs.tgz . && cp summary.txt $FINAL/ 2>/dev/null; }
trap fin EXIT
bash $B/unpack.sh
export GPUDE_CEC2017_DATA=$PWD/$B/reference/cec2017/CEC17_fast_pow-C++.zip
export GPUDE_OBJECTIVE_PTX=$PWD/$B/objective-example.ptx
: > $OUT/summary.txt
s=$(date +%s)
for r in 1 2; do for bin in v12 v12c; do for tag in grid b132 b528; do
  case $tag in grid) only="(grid)";; b132) only="132 x 2048";; b528) only="528 x 256";; esac
  timeout 60 $B/gpude-$bin bench --only "$only" --json --out $OUT/b-$bin-$tag-$r.json > $OUT/b-$bin-$tag-$r.log 2>&1 || echo "bench $bin $tag: rc $?" >> $OUT/summary.txt
done; done; done
python3 $B/cmp.py $OUT v12 >> $OUT/summary.txt
echo "benches done at $(( $(date +%s) - s )) s" >> $OUT/summary.txt
timeout 470 $B/gpu-tests > $OUT/tests.log 2>&1; echo "all tests: rc $? at $(( $(date +%s) - s )) s: $(grep 'test result' $OUT/tests.log)" >> $OUT/summary.txt
grep -E "^test .*FAILED" $OUT/tests.log | head -20 >> $OUT/summary.txt
grep -cE "^test .* ok" $OUT/tests.log >> $OUT/summary.txt
