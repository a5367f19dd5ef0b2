#!/usr/bin/env bash
# call 32: the pipelined batch kernels (de_batch_*_pipelined, version 17): their parity tests, pipelined against the
# global-memory kernel on the batch cases in turns (three rounds), register caps 64-96 for the pipelined kernels,
# ncu of both kernels at 132 x 2048, the sanitizers on the pipelined parity test, the peers
set -uo pipefail
B=gpu-bundle
FINAL=${OUT:-/tmp/out}; export OUT=$FINAL/logs; mkdir -p $OUT
fin() { cd $OUT && tar czf $FINAL/logs.tgz --exclude='*.ncu-rep' . && cp summary.txt $FINAL/ 2>/dev/null; }
trap fin EXIT
bash $B/unpack.sh
export GPUDE_CEC2017_DATA=$PWD/$B/reference/cec2017/CEC17_fast_pow-C++.zip
export GPUDE_OBJECTIVE_PTX=$PWD/$B/objective-example.ptx
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > $OUT/summary.txt
s=$(date +%s)
el() { echo "$(( $(date +%s) - s )) s"; }
timeout 150 $B/gpu-tests pipelined shared_memory > $OUT/tests-pipe.log 2>&1
echo "tests rc $? at $(el): $(grep 'test result' $OUT/tests-pipe.log)" >> $OUT/summary.txt
grep -E "FAILED|panicked|SKIPPED" $OUT/tests-pipe.log | head -5 >> $OUT/summary.txt
for r in 1 2 3; do
  timeout 60 $B/gpude-v17 bench --only "batch 132 x 2048" --json --out $OUT/b-v17-b132-$r.json > $OUT/b-v17-b132-$r.log 2>&1 || echo "bench 132 r$r: rc $?" >> $OUT/summary.txt
  timeout 60 $B/gpude-v17 bench --only "batch 528 x 256" --json --out $OUT/b-v17-b528-$r.json > $OUT/b-v17-b528-$r.log 2>&1 || echo "bench 528 r$r: rc $?" >> $OUT/summary.txt
done
for cap in 64 80 96 128; do
  GPUDE_MAXNREG=$cap timeout 60 $B/gpude-v17 bench --only "pipelined" --json --out $OUT/b-cap$cap-pipe-1.json > $OUT/b-cap$cap.log 2>&1 || echo "bench cap $cap: rc $?" >> $OUT/summary.txt
done
echo "benches done at $(el)" >> $OUT/summary.txt
python3 - $OUT >> $OUT/summary.txt <<'PY'
import json, sys, glob, os, statistics, collections
d = sys.argv[1]
t = collections.defaultdict(list)
for f in sorted(glob.glob(os.path.join(d, 'b-v17-*.json'))):
    try: recs = json.load(open(f))['records']
    except Exception as e: print('unreadable', f, e); continue
    for r in recs: t[r['name']].append(r['us_per_gen'])
print('%-40s %-26s %8s %8s' % ('case (3 rounds, us/gen)', 'rounds', 'median', 'G el/s'))
for n, v in t.items():
    print('%-40s %-26s %8.2f' % (n, '/'.join('%.2f' % x for x in v), statistics.median(v)))
print('pipelined / global (medians):')
for n, v in t.items():
    if 'pipelined' in n:
        b = n.replace(' pipelined', '')
        if t.get(b): print('  %-38s %.3f' % (n, statistics.median(v) / statistics.median(t[b])))
print('register caps (pipelined cases, one round; default 72 above):')
for f in sorted(glob.glob(os.path.join(d, 'b-cap*.json'))):
    try: recs = json.load(open(f))['records']
    except Exception: continue
    print('  %-8s %s' % (os.path.basename(f).split('-')[1], '  '.join('%s %.2f' % (r['name'].replace('batch ', '').replace(' pipelined', ''), r['us_per_gen']) for r in recs)))
PY
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
for tag in global pipelined; do
  if [[ $tag == global ]]; then k='de_batch_f32_griewank_thesis$'; only='batch 132 x 2048'; else k='de_batch_f32_griewank_thesis_pipelined$'; only='batch 132 x 2048 pipelined'; fi
  timeout 100 $NCU --section LaunchStats --section Occupancy --section SpeedOfLight --section MemoryWorkloadAnalysis --section SchedulerStats --section WarpStateStats -k regex:"$k" --launch-skip 1 --launch-count 1 -o $OUT/ncu-$tag $B/gpude-v17 bench --quick --repeats 1 --only "$only" > $OUT/ncu-$tag.log 2>&1
  $NCU --import $OUT/ncu-$tag.ncu-rep --page details > $OUT/ncu-$tag.txt 2>&1
  echo "ncu $tag at $(el): $(grep -E '^\s+(Duration|Registers Per Thread|Block Size|Dynamic Shared Memory Per Block|Theoretical Occupancy|Achieved Occupancy|DRAM Throughput|Memory Throughput|L2 Hit Rate|L1/TEX Hit Rate|Issue Slots Busy|Warp Cycles Per Issued Instruction|Local Memory Spilling Requests)\b' $OUT/ncu-$tag.txt | tr -s ' ' | sort -u | tr '\n' ';')" >> $OUT/summary.txt
done
for tool in memcheck racecheck synccheck; do
  timeout 100 compute-sanitizer --tool $tool --error-exitcode 9 $B/gpu-tests pipelined_batch_matches > $OUT/sanitizer-$tool.log 2>&1
  echo "sanitizer $tool: exit $? at $(el), $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/sanitizer-$tool.log | tail -1); $(grep 'test result' $OUT/sanitizer-$tool.log)" >> $OUT/summary.txt
done
timeout 120 bash $B/peers/run.sh > $OUT/peers.log 2>&1; echo "peers: rc $? at $(el)" >> $OUT/summary.txt
grep -E '^\{' $OUT/peers.log | grep -v evox | cut -c1-160 >> $OUT/summary.txt
cat $OUT/summary.txt
