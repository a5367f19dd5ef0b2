#!/usr/bin/env bash
# call 16: every GPU test on commit fe15874, and its standard cases (one round)
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
for tag in grid b132 b528; do
  case $tag in grid) only="Np=8192 (grid)";; b132) only="batch 132 x 2048";; b528) only="528 x 256 shared";; esac
  timeout 60 $B/gpude-v13 bench --only "$only" --json --out $OUT/b-v13-$tag-1.json > $OUT/b-v13-$tag-1.log 2>&1
  grep -E '^(one pop|batch)' $OUT/b-v13-$tag-1.log | head -3 >> $OUT/summary.txt
done
timeout 480 $B/gpu-tests > $OUT/tests.log 2>&1; echo "all tests: rc $? at $(( $(date +%s) - s )) s: $(grep 'test result' $OUT/tests.log)" >> $OUT/summary.txt
grep -E "^test .*FAILED" $OUT/tests.log | head -20 >> $OUT/summary.txt
