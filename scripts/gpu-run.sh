#!/usr/bin/env bash
# Runs on the GPU machine from the repository root, with gpu-bundle/ carried along:
# GPU tests, sanitizers, benchmarks; logs under $OUT; a short table last.
set -uo pipefail
B=gpu-bundle
OUT=${OUT:-/tmp/gpude-out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv | tee "$OUT/gpu.txt"
step=${1:-all}
if [[ $step == all || $step == tests ]]; then
  echo "== gpu tests"
  $B/gpu-tests 2>&1 | tee "$OUT/tests.log"
fi
if [[ $step == all || $step == sanitize ]]; then
  echo "== compute-sanitizer"
  for tool in memcheck racecheck; do
    compute-sanitizer --tool $tool --error-exitcode 9 $B/gpu-tests history target 2>&1 | tail -4 | tee -a "$OUT/sanitizer.log"
    echo "$tool exit: ${PIPESTATUS[0]}" | tee -a "$OUT/sanitizer.log"
  done
fi
if [[ $step == all || $step == bench ]]; then
  echo "== bench"
  $B/gpucheck ${QUICK:-} 2>&1 | tee "$OUT/bench.log"
fi
