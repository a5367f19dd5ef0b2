#!/usr/bin/env bash
# call 36: the five GPU tests that call 35's 280 s limit cut off (adaptive user objectives, host callbacks), in the
# same lease as call 35 (the bundle of call 35)
bash gpu-bundle/unpack.sh
export GPUDE_CEC2017_DATA=$PWD/gpu-bundle/reference/cec2017/CEC17_fast_pow-C++.zip GPUDE_OBJECTIVE_PTX=$PWD/gpu-bundle/objective-example.ptx
timeout 420 gpu-bundle/gpu-tests adaptive_user_objectives adaptive_host_callbacks host_callbacks_run host_callback_errors host_callback_control 2>&1 | tee $OUT/tests-rest.log | grep -E "^test |test result|gpu tests on|FAIL|panic"
