#!/usr/bin/env bash
# call 18: v13, a (draws before the barrier), ab (+ the best's flag in its key): benches in turns,
# the grid profile of ab, then every GPU test on ab
set -uo pipefail
B=gpu-bundle
FINAL=${OUT:-/tmp/out}; mkdir -p $FINAL/logs
export GPUDE_CEC2017_DATA=$PWD/$B/reference/cec2017/CEC17_fast_pow-C++.zip
export GPUDE_OBJECTIVE_PTX=$PWD/$B/objective-example.ptx
bash $B/callx.sh "v13 a ab" ab "g8192" 2
s=$(date +%s)
timeout 330 $B/gpu-tests > $FINAL/tests.log 2>&1
echo "tests: rc $? at $(( $(date +%s) - s )) s: $(grep 'test result' $FINAL/tests.log)" > $FINAL/tests-summary.txt
grep -E "FAILED|panicked" $FINAL/tests.log | head >> $FINAL/tests-summary.txt
echo "ok: $(grep -cE '^test .* ok' $FINAL/tests.log)" >> $FINAL/tests-summary.txt
cat $FINAL/summary.txt $FINAL/tests-summary.txt
