#!/usr/bin/env bash
# call 33: version 17 (pipelined batch kernels, register cap 96, 32-bit shared reads) and an experimental build of it
# whose copies allocate in L1 (cp.async.ca; v17ca): every GPU test; the batch cases in turns, three rounds (pipelined
# against global, cg against ca); ncu of the pipelined kernel at 132 x 2048
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
for r in 1 2 3; do
  for o in "batch 132 x 2048" "Np=2048 (block)" "528 x 300" "528 x 256"; do
    t=$(echo "$o" | tr -cd 'a-zA-Z0-9')
    timeout 60 $B/gpude-v17 bench --only "$o" --json --out $OUT/b-v17-$t-$r.json > $OUT/b-v17-$t-$r.log 2>&1 || echo "bench v17 $o r$r: rc $?" >> $OUT/summary.txt
  done
  timeout 60 $B/gpude-v17ca bench --only "pipelined" --json --out $OUT/b-v17ca-pipe-$r.json > $OUT/b-v17ca-pipe-$r.log 2>&1 || echo "bench v17ca r$r: rc $?" >> $OUT/summary.txt
done
echo "benches done at $(el)" >> $OUT/summary.txt
python3 - $OUT >> $OUT/summary.txt <<'PY'
import json, sys, glob, os, statistics, collections
d = sys.argv[1]
t = collections.defaultdict(lambda: collections.defaultdict(list))
for f in sorted(glob.glob(os.path.join(d, 'b-*.json'))):
    b = os.path.basename(f).split('-')[1]
    try: recs = json.load(open(f))['records']
    except Exception as e: print('unreadable', f, e); continue
    for r in recs: t[r['name']][b].append(r['us_per_gen'])
med = lambda v: statistics.median(v)
print('%-40s %-24s %-24s' % ('case (us/gen, 3 rounds)', 'v17', 'v17ca'))
for n, v in t.items():
    print('%-40s %-24s %-24s' % (n, '/'.join('%.2f' % x for x in v.get('v17', [])), '/'.join('%.2f' % x for x in v.get('v17ca', []))))
print('pipelined / global, medians (v17 cg, v17ca ca):')
for n, v in t.items():
    if 'pipelined' in n:
        g = t.get(n.replace(' pipelined', ''), {}).get('v17')
        if g: print('  %-38s %.3f %s' % (n, med(v['v17']) / med(g), ('%.3f' % (med(v['v17ca']) / med(g))) if v.get('v17ca') else '-'))
PY
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
tag=pipelined96
timeout 100 $NCU --section LaunchStats --section Occupancy --section SpeedOfLight --section MemoryWorkloadAnalysis --section SchedulerStats --section WarpStateStats -k regex:'de_batch_f32_griewank_thesis_pipelined$' --launch-skip 1 --launch-count 1 -o $OUT/ncu-$tag $B/gpude-v17 bench --quick --repeats 1 --only "batch 132 x 2048 pipelined" > $OUT/ncu-$tag.log 2>&1
$NCU --import $OUT/ncu-$tag.ncu-rep --page details > $OUT/ncu-$tag.txt 2>&1
echo "ncu $tag at $(el): $(grep -E '^\s+(Duration|Registers Per Thread|Block Size|Dynamic Shared Memory Per Block|Theoretical Occupancy|Achieved Occupancy|DRAM Throughput|Memory Throughput|L2 Hit Rate|L1/TEX Hit Rate|Issue Slots Busy|Warp Cycles Per Issued Instruction|Local Memory Spilling Requests)\b' $OUT/ncu-$tag.txt | tr -s ' ' | sort -u | tr '\n' ';')" >> $OUT/summary.txt
timeout 360 $B/gpu-tests > $OUT/tests.log 2>&1; echo "all tests: rc $? at $(el): $(grep 'test result' $OUT/tests.log)" >> $OUT/summary.txt
grep -E "^test .*FAILED|panicked|SKIPPED" $OUT/tests.log | head -10 >> $OUT/summary.txt
cat $OUT/summary.txt
