#!/usr/bin/env bash
# call 30: version 15 (t: the experimental build of call 29, whose kernels and default block size are version 15's) and the
# sleep build of call 28 (64 ns between thread 0's polls), in turns, five rounds: Np = 8192 and Np = 2048 in the whole-GPU layout
set -uo pipefail
B=gpu-bundle
FINAL=${OUT:-/tmp/out}; export OUT=$FINAL/logs; mkdir -p $OUT
fin() { cd $OUT && tar czf $FINAL/logs.tgz . && cp summary.txt $FINAL/ 2>/dev/null; }
trap fin EXIT
bash $B/unpack.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $OUT/summary.txt
s=$(date +%s)
for r in 1 2 3 4 5; do for bin in t sleep; do
  timeout 60 $B/gpude-$bin bench --only "one pop Np=8192 (grid)" --json --out $OUT/b-$bin-g8192-$r.json > $OUT/b-$bin-g8192-$r.log 2>&1 || echo "bench $bin $r: rc $?" >> $OUT/summary.txt
  timeout 60 $B/gpude-$bin bench --only "one pop Np=2048 (grid)" --json --out $OUT/b-$bin-g2048-$r.json > $OUT/b-$bin-g2048-$r.log 2>&1 || echo "bench $bin 2048 $r: rc $?" >> $OUT/summary.txt
done; done
echo "done at $(( $(date +%s) - s )) s" >> $OUT/summary.txt
python3 $B/cmp.py $OUT t >> $OUT/summary.txt
cat $OUT/summary.txt
