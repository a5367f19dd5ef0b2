#!/usr/bin/env bash
# call 10: v13a (Philox words multiplied in 32-bit halves) beside v12; source-counter profiles of v13a
set -uo pipefail
B=gpu-bundle
FINAL=${OUT:-/tmp/out}; export OUT=$FINAL/logs; mkdir -p $OUT
fin() { cd $OUT && tar czf $FINAL/logs.tgz --exclude='*.ncu-rep' . && cp summary.txt $FINAL/ 2>/dev/null; }
trap fin EXIT
bash $B/unpack.sh
: > $OUT/summary.txt
s=$(date +%s)
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
prof() { # tag kernel only
  timeout 90 $NCU --section SourceCounters --section LaunchStats --section Occupancy --section SpeedOfLight -k regex:"$2\$" --launch-skip 2 --launch-count 1 -o $OUT/ncu-$1 $B/gpude-v13a bench --quick --repeats 1 --only "$3" > $OUT/ncu-$1.log 2>&1
  $NCU --import $OUT/ncu-$1.ncu-rep --page source --csv --print-source sass > $OUT/ncu-$1-sass.csv 2>/dev/null
  $NCU --import $OUT/ncu-$1.ncu-rep > $OUT/ncu-$1.txt 2>/dev/null
  echo "$1: $(( $(date +%s) - s )) s; $(grep -E 'Issue Slots Busy|Registers Per Thread|Executed Ipc Active' $OUT/ncu-$1.txt | tr -s ' ' | tr '\n' ';')" >> $OUT/summary.txt
}
for r in 1 2; do for bin in v12 v13a; do for tag in grid b132 b528; do
  case $tag in grid) only="Np=8192 (grid)";; b132) only="132 x 2048";; b528) only="528 x 256";; esac
  timeout 60 $B/gpude-$bin bench --only "$only" --json --out $OUT/b-$bin-$tag-$r.json > $OUT/b-$bin-$tag-$r.log 2>&1 || echo "bench $bin $tag: rc $?" >> $OUT/summary.txt
done; done; done
python3 $B/cmp.py $OUT v12 >> $OUT/summary.txt
echo "benches done at $(( $(date +%s) - s )) s" >> $OUT/summary.txt
prof b132 de_batch_f32_griewank_thesis "batch 132 x 2048"
prof r528 de_batch_f32_griewank_thesis_shared "batch 528 x 256 shared"
prof g8192 de_grid_f32_griewank_thesis "one pop Np=8192 (grid)"
