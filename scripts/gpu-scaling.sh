#!/usr/bin/env bash
# The multi-GPU measurement behind docs/SCALING.md ("Several GPUs of one host"), in one
# call to a machine with two or more GPUs. Build the bundle here with
# `bash scripts/gpu-bundle.sh`, carry gpu-bundle/ along, and run from the repository
# root there:
#
#   bash gpu-bundle/gpu-scaling.sh [GPUS]      (GPUS: `all` unless given, or e.g. 0,1)
#
# Steps: unpack the binaries; `gpude info` (the GPUs and their links); the multi-GPU GPU
# tests (`gpu-tests several_gpus`: every list on all GPUs equals the list on one, bit for
# bit); `gpude bench --gpus GPUS` (the same lists on the first GPU and on all, medians
# of REPEATS, default 3). Logs and the bench's JSON go to $OUT (/tmp/out where unset).
set -uo pipefail
B=$(cd "${BUNDLE:-gpu-bundle}" 2> /dev/null && pwd) || { echo "no ${BUNDLE:-gpu-bundle}/ here: build it with scripts/gpu-bundle.sh" >&2; exit 2; }
OUTDIR=${OUT:-/tmp/out}
mkdir -p "$OUTDIR"
GPUS=${1:-all}
for f in gpude gpu-tests; do
  if [[ -f $B/$f.xz && ! -x $B/$f ]]; then xz -dkf "$B/$f.xz" && chmod +x "$B/$f"; fi
done
export GPUDE_OBJECTIVE_PTX=$B/objective-example.ptx
echo "== commit: $(cat "$B/commit.txt" 2> /dev/null || echo unknown)"
nvidia-smi -L
"$B/gpude" info
echo "== multi-GPU tests"
"$B/gpu-tests" several_gpus 2>&1 | tee "$OUTDIR/gpus-tests.log" | grep -E "^test "
echo "== gpude bench --gpus $GPUS"
"$B/gpude" bench --gpus "$GPUS" --repeats "${REPEATS:-3}" --out "$OUTDIR/scaling.json"
