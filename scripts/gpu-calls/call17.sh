#!/usr/bin/env bash
# call 17: grid tests on the look-ahead build, then v13 vs pf benches in turns and the grid profile
set -uo pipefail
B=gpu-bundle
FINAL=${OUT:-/tmp/out}; mkdir -p $FINAL/logs
bash $B/unpack.sh
export GPUDE_CEC2017_DATA=$PWD/$B/reference/cec2017/CEC17_fast_pow-C++.zip
export GPUDE_OBJECTIVE_PTX=$PWD/$B/objective-example.ptx
s=$(date +%s)
timeout 200 $B/gpu-tests grid_mode checkpoint_resume controlled_runs control_observer target_error history_is thesis_variants_match > $FINAL/logs/tests.log 2>&1
echo "tests: rc $? at $(( $(date +%s) - s )) s: $(grep 'test result' $FINAL/logs/tests.log)" > $FINAL/tests-summary.txt
grep -E "^test " $FINAL/logs/tests.log >> $FINAL/tests-summary.txt
bash $B/callx.sh "v13 pf" pf "g8192" 2
cat $FINAL/tests-summary.txt
cat $FINAL/summary.txt
