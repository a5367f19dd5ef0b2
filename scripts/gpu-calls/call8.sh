#!/usr/bin/env bash
# call 8: the register cap swept (GPUDE_MAXNREG) on version 12's standard cases
set -uo pipefail
B=gpu-bundle
FINAL=${OUT:-/tmp/out}; export OUT=$FINAL/logs; mkdir -p $OUT
fin() { cd $OUT && tar czf $FINAL/logs.tgz . && cp summary.txt $FINAL/ 2>/dev/null; }
trap fin EXIT
bash $B/unpack.sh
: > $OUT/summary.txt
for r in 1 2; do for cap in 64 72 80 96 128; do for tag in grid b132 b528; do
  case $tag in grid) only="(grid)";; b132) only="132 x 2048";; b528) only="528 x 256";; esac
  GPUDE_MAXNREG=$cap timeout 60 $B/gpude-v12 bench --only "$only" --json --out $OUT/b-r$cap-$tag-$r.json > $OUT/b-r$cap-$tag-$r.log 2>&1 || echo "bench $cap $tag: rc $?" >> $OUT/summary.txt
done; done; done
python3 $B/cmp.py $OUT r64 >> $OUT/summary.txt
