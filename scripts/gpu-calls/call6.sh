#!/usr/bin/env bash
# call 6: version 11 and version 12 (E) in turns on the standard cases, version 12's full
# bench with the ceilings, then the peers: one lease
set -uo pipefail
B=gpu-bundle
FINAL=${OUT:-/tmp/out}; export OUT=$FINAL/logs; mkdir -p $OUT
fin() { cd $OUT && tar czf $FINAL/logs.tgz . && cp summary.txt $FINAL/ 2>/dev/null; }
trap fin EXIT
bash $B/unpack.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $OUT/summary.txt
s=$(date +%s)
for r in 1 2; do for bin in v11 E; do for tag in grid b132 b528; do
  case $tag in grid) only="(grid)";; b132) only="132 x 2048";; b528) only="528 x 256";; esac
  timeout 100 $B/gpude-$bin bench --only "$only" --json --out $OUT/b-$bin-$tag-$r.json > $OUT/b-$bin-$tag-$r.log 2>&1 || echo "bench $bin $tag $r: rc $?" >> $OUT/summary.txt
done; done; echo "round $r done at $(( $(date +%s) - s )) s" >> $OUT/summary.txt; done
python3 $B/cmp.py $OUT v11 >> $OUT/summary.txt
timeout 230 $B/gpude-E bench --ceilings --json --out $OUT/full-E.json > $OUT/full-E.log 2>&1; echo "full bench: rc $? at $(( $(date +%s) - s )) s" >> $OUT/summary.txt
timeout 200 bash $B/peers/run.sh > $OUT/peers.log 2>&1; echo "peers: rc $? at $(( $(date +%s) - s )) s" >> $OUT/summary.txt
grep -E '^\{' $OUT/peers.log >> $OUT/summary.txt
