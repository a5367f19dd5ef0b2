#!/usr/bin/env bash
# call 37: the shared-memory and pipelined tests after their plans query and allow a kernel's dynamic shared memory
# in one step (host only); their plans' lines (kernel and shared-memory bytes) against call 35's
# gpu-bundle/plans-call35.txt: call 35's lines (docs/bench/2026-11-28-h200-v17.json, call35.plans)
bash gpu-bundle/unpack.sh
timeout 200 gpu-bundle/gpu-tests shared_memory pipelined 2>&1 | tee $OUT/tests-plans.log | grep -E "^test |test result|gpu tests on|FAIL|panic"
grep -E "bytes of shared memory|^test (shared|pipelined)" $OUT/tests-plans.log | sed "s/ ([0-9.]* s)//" | diff <(sed "s/ ([0-9.]* s)//" gpu-bundle/plans-call35.txt) - && echo "plans: the same lines as call 35"
