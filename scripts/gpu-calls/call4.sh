#!/usr/bin/env bash
# call 4: the bench cases of the objectives beside their built-ins (version 11 with the tagged maths inlining)
set -uo pipefail
B=gpu-bundle
FINAL=${OUT:-/tmp/out}; export OUT=$FINAL/logs; mkdir -p $OUT
for z in $B/*.gz; do gunzip -kf "$z" && chmod +x "${z%.gz}"; done
export GPUDE_CEC2017_DATA=$PWD/$B/reference/cec2017/CEC17_fast_pow-C++.zip
export GPUDE_OBJECTIVE_PTX=$PWD/$B/objective-example.ptx
fin() { cd $OUT && tar czf $FINAL/logs.tgz . && cp summary.txt $FINAL/; }
trap fin EXIT
s=$(date +%s)
k=0; for q in "132 x 2048" "(grid)" "(block)" "jso"; do k=$((k+1))
timeout 150 $B/gpude bench --only "$q" --json --out $OUT/bench-$k.json > $OUT/bench-$k.log 2>&1; echo "bench '$q': rc $? $(( $(date +%s) - s )) s" >> $OUT/summary.txt
python3 -c "
import json; r=json.load(open('$OUT/bench-$k.json'))
for c in r['records']: print('%-40s %10.2f us/gen %9.3e' % (c['name'], c['us_per_gen'], c['element_gens_per_s']))
" >> $OUT/summary.txt 2>&1; done
