#!/usr/bin/env bash
# call 1: per-instruction profile of the standard Griewank kernels (ncu source counters)
set -uo pipefail
B=gpu-bundle
FINAL=${OUT:-/tmp/out}; export OUT=$FINAL/logs; mkdir -p $OUT
gunzip -kf $B/gpude.gz && chmod +x $B/gpude
fin() { cd $OUT && tar czf $FINAL/logs.tgz . && cp summary.txt $FINAL/ 2>/dev/null; }
trap fin EXIT
ncu --version | tail -1 > $OUT/summary.txt
prof() {
  local tag=$1; shift
  s=$(date +%s)
  ncu --section SourceCounters --section LaunchStats --section Occupancy --section SchedulerStats --section WarpStateStats --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --launch-count 1 --launch-skip 2 -k "regex:$1" -f -o "$OUT/ncu-$tag" "${@:2}" > "$OUT/ncu-$tag.log" 2>&1
  ncu --import "$OUT/ncu-$tag.ncu-rep" --page details > "$OUT/ncu-$tag.txt" 2>&1
  ncu --import "$OUT/ncu-$tag.ncu-rep" --page source --csv --print-source sass > "$OUT/ncu-$tag-sass.csv" 2>&1
  echo "$tag: $(( $(date +%s) - s )) s, $(wc -l < $OUT/ncu-$tag-sass.csv) sass lines; $(grep -E 'Duration|Executed Ipc A|Issue Slots Busy|Registers Per' $OUT/ncu-$tag.txt | tr -s ' ' | tr '\n' ';')" >> $OUT/summary.txt
}
prof grid8192 'de_grid_f32_griewank_thesis$' $B/gpude bench --quick --repeats 1 --only "Np=8192 (grid)"
prof batch132 'de_batch_f32_griewank_thesis$' $B/gpude bench --quick --repeats 1 --only "batch 132 x 2048"
prof sphere132 'de_batch_f32_sphere_thesis$' $B/gpude bench --quick --repeats 1 --only "batch 132 x 2048 sphere"
ls -la $OUT >> $OUT/summary.txt
