#!/usr/bin/env bash
# call 13: grid variants: v13g (HEAD), v13j (best slots on lines of their own), v13k (v13j + blocks of 512 threads)
set -uo pipefail
B=gpu-bundle
FINAL=${OUT:-/tmp/out}; export OUT=$FINAL/logs; mkdir -p $OUT
bash $B/unpack.sh
: > $OUT/summary.txt
for r in 1 2 3; do for bin in v13g v13j v13k; do
  timeout 60 $B/gpude-$bin bench --only "(grid)" --json --out $OUT/b-$bin-grid-$r.json > $OUT/b-$bin-grid-$r.log 2>&1 || echo "bench $bin: rc $?" >> $OUT/summary.txt
done; done
python3 $B/cmp.py $OUT v13g >> $OUT/summary.txt
cp $OUT/summary.txt $FINAL/
