#!/usr/bin/env bash
# call 2: parity subset, then the version before (v11) and this one, in turns, and the profile
set -uo pipefail
B=gpu-bundle
FINAL=${OUT:-/tmp/out}; export OUT=$FINAL/logs; mkdir -p $OUT
fin() { cd $OUT && tar czf $FINAL/logs.tgz --exclude='*.ncu-rep' . && cp summary.txt $FINAL/ 2>/dev/null; }
trap fin EXIT
bash $B/unpack.sh
mv $B/gpude $B/gpude-new 2>/dev/null
export GPUDE_CEC2017_DATA=$PWD/$B/reference/cec2017/CEC17_fast_pow-C++.zip
export GPUDE_OBJECTIVE_PTX=$PWD/$B/objective-example.ptx
s=$(date +%s)
timeout 170 $B/gpu-tests evaluate_kernel one_generation grid_mode mixed textbook thesis_variants_match shared_memory_batch_matches separable_objectives > $OUT/tests.log 2>&1
echo "tests subset: rc $? in $(( $(date +%s) - s )) s: $(grep 'test result' $OUT/tests.log)" >> $OUT/summary.txt
grep -E "^test .*(FAILED|ok)" $OUT/tests.log | head -20 >> $OUT/summary.txt
for r in 1 2; do for bin in v11 new; do for tag in grid b132 b528; do
  case $tag in grid) only="(grid)";; b132) only="132 x 2048";; b528) only="528 x 256";; esac
  timeout 100 $B/gpude-$bin bench --only "$only" --json --out $OUT/b-$bin-$tag-$r.json > $OUT/b-$bin-$tag-$r.log 2>&1 || echo "bench $bin $tag $r: rc $?" >> $OUT/summary.txt
done; done; echo "round $r done at $(( $(date +%s) - s )) s" >> $OUT/summary.txt; done
python3 $B/cmp.py $OUT >> $OUT/summary.txt
prof() {
  local tag=$1; shift
  ncu --section SourceCounters --section LaunchStats --section Occupancy --section SchedulerStats --section WarpStateStats --launch-count 1 --launch-skip 2 -k "regex:$1" -f -o "$OUT/ncu-$tag" "${@:2}" > "$OUT/ncu-$tag.log" 2>&1
  ncu --import "$OUT/ncu-$tag.ncu-rep" --page details > "$OUT/ncu-$tag.txt" 2>&1
  ncu --import "$OUT/ncu-$tag.ncu-rep" --page source --csv --print-source sass > "$OUT/ncu-$tag-sass.csv" 2>&1
  echo "$tag: $(grep -E 'Duration|Executed Ipc A|Issue Slots Busy|Registers Per' $OUT/ncu-$tag.txt | tr -s ' ' | tr '\n' ';')" >> $OUT/summary.txt
}
prof grid8192 'de_grid_f32_griewank_thesis$' $B/gpude-new bench --quick --repeats 1 --only "Np=8192 (grid)"
prof batch132 'de_batch_f32_griewank_thesis$' $B/gpude-new bench --quick --repeats 1 --only "batch 132 x 2048"
echo "end at $(( $(date +%s) - s )) s" >> $OUT/summary.txt
