#!/usr/bin/env bash
# call 28: two experimental builds of version 15's grid barrier (not kept in this form) against version 15, in turns, three rounds:
# sleep (nanosleep 64 ns between thread 0's acquire polls) and relaxed (relaxed polls, then one acq_rel fence: one L1 invalidation per barrier)
set -uo pipefail
B=gpu-bundle
FINAL=${OUT:-/tmp/out}; export OUT=$FINAL/logs; mkdir -p $OUT
fin() { cd $OUT && tar czf $FINAL/logs.tgz . && cp summary.txt $FINAL/ 2>/dev/null; }
trap fin EXIT
bash $B/unpack.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $OUT/summary.txt
s=$(date +%s)
for r in 1 2 3; do for bin in v15 sleep relaxed; do
  timeout 100 $B/gpude-$bin bench --only "(grid)" --json --out $OUT/b-$bin-grid-$r.json > $OUT/b-$bin-grid-$r.log 2>&1 || echo "bench $bin $r: rc $?" >> $OUT/summary.txt
done; echo "round $r done at $(( $(date +%s) - s )) s" >> $OUT/summary.txt; done
python3 $B/cmp.py $OUT v15 >> $OUT/summary.txt
cat $OUT/summary.txt
