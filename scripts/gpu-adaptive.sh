#!/usr/bin/env bash
# The adaptive kernels' measurement, in one call to the GPU machine: build the bundle here
# with `bash scripts/gpu-bundle.sh` (it carries EvoX's wheel when ../shared or pip gave
# one: gpu-bundle/wheels/), carry gpu-bundle/ along and run from the repository root:
#
#   bash gpu-bundle/gpu-adaptive.sh
#
# Steps: the adaptive GPU tests (GPU = CPU bit for bit, every strategy, both layouts);
# compute-sanitizer memcheck and racecheck on the batch-layout parity test; `gpude bench`
# on the adaptive cases (Rastrigin, D = 30, Np = 100 / 1 000 / 10 000, both layouts,
# rand/1/bin beside them); EvoX's DE, JaDE and SHADE (scripts/evox_peer.py) on the same
# GPU; `gpude reproduce cec2017 --dims 30 --strategies jso --backend cuda`, timed. A
# summary comes last; logs and JSON in $OUT/adaptive.tgz.
# Time shares (seconds): TESTS_S=150 SAN_S=120 BENCH_S=200 EVOX_S=200 REPRO_S=120; the
# reproduction's REPRO_DIMS (30) and REPRO_STRATEGIES (jso).
set -uo pipefail
B=$(cd "${BUNDLE:-gpu-bundle}" && pwd)
FINAL=${OUT:-/tmp/out}
mkdir -p "$FINAL"
W=$(mktemp -d)
S=$W/summary.txt
note() { echo "$1" | tee -a "$S"; }
for f in gpude gpu-tests; do
  [[ -x $B/$f ]] || xz -dkf "$B/$f.xz"
done
export GPUDE_CEC2017_DATA=${GPUDE_CEC2017_DATA:-$B/reference/cec2017/CEC17_fast_pow-C++.zip}
note "bundle: $(cat "$B/commit.txt" 2> /dev/null)"
note "gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2> /dev/null | head -1)"

t0=$(date +%s)
# MORE_TESTS: further test names (filters) to run in the same step.
# shellcheck disable=SC2086
timeout "${TESTS_S:-150}" "$B/gpu-tests" adaptive classic_cec ${MORE_TESTS:-} --test-threads 1 > "$W/tests.log" 2>&1
note "adaptive GPU tests: rc=$? in $(($(date +%s) - t0)) s; $(grep -E '^test result' "$W/tests.log" | tail -1)"
grep -E '^test .*(ok|FAILED)$|panicked|SKIPPED|bits' "$W/tests.log" | head -30 | tee -a "$S"

if [[ ${SAN_S:-120} -gt 0 ]] && command -v compute-sanitizer > /dev/null; then
  for tool in memcheck racecheck; do
    t0=$(date +%s)
    timeout "$((${SAN_S:-120} / 2))" compute-sanitizer --tool $tool --error-exitcode 9 \
      "$B/gpu-tests" adaptive_runs_match_cpu_bit_for_bit --test-threads 1 > "$W/san-$tool.log" 2>&1
    note "compute-sanitizer $tool: rc=$? in $(($(date +%s) - t0)) s; $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$W/san-$tool.log" | tail -1)"
  done
fi

t0=$(date +%s)
# One bench call per population size (a timeout loses one size only), the repeats
# from REPEATS (default 3); their records merged into bench.json.
for np_ in 100 1000 10000; do
  left=$((${BENCH_S:-200} - ($(date +%s) - t0)))
  [[ $left -gt 5 ]] || break
  timeout "$left" "$B/gpude" bench --json --repeats "${REPEATS:-3}" --only "Np=$np_ D=30 rastrigin" \
    --out "$W/bench-$np_.json" > "$W/bench-$np_.log" 2>&1
  note "bench Np=$np_: rc=$? at $(($(date +%s) - t0)) s"
done
python3 - "$W" << 'PY'
import glob, json, sys
recs = []
for f in sorted(glob.glob(sys.argv[1] + "/bench-*.json")):
    recs += json.load(open(f))["records"]
json.dump({"records": recs}, open(sys.argv[1] + "/bench.json", "w"), indent=1)
PY

# The same-lease A/B on the one adaptive case both binaries have, where a baseline is given.
if [[ -n ${GPUDE_BASELINE:-} && -f ${GPUDE_BASELINE} ]]; then
  base=$(mktemp -d)/gpude-base
  xz -dc "$GPUDE_BASELINE" > "$base" 2> /dev/null || cp "$GPUDE_BASELINE" "$base"
  chmod +x "$base"
  for bin in "$base" "$B/gpude" "$base" "$B/gpude"; do
    timeout 60 "$bin" bench --json --only "jso batch 132 x 256 D=30" 2> /dev/null |
      python3 -c 'import json,sys
for x in json.load(sys.stdin)["records"]: print(x["name"] + ":", round(x["us_per_gen"], 1), "us/gen")' |
      sed "s|^|$(basename "$bin"): |" | tee -a "$S"
  done
fi

if [[ ${EVOX_S:-200} -gt 0 ]]; then
  t0=$(date +%s)
  whl=$(ls "$B"/wheels/evox-*.whl 2> /dev/null | head -1)
  if [[ -n $whl ]]; then
    python3 -m pip install --quiet --no-deps --target "$W/py" "$whl" > "$W/pip.log" 2>&1
    PYTHONPATH=$W/py BUDGET_S=$((${EVOX_S:-200} - 30)) timeout "${EVOX_S:-200}" \
      python3 "$B/evox_peer.py" > "$W/evox.jsonl" 2> "$W/evox.log"
    note "evox: rc=$? in $(($(date +%s) - t0)) s"
  else
    note "evox: no wheel in the bundle"
  fi
fi

if [[ ${REPRO_S:-120} -gt 0 ]]; then
  t0=$(date +%s)
  timeout "${REPRO_S:-120}" "$B/gpude" reproduce cec2017 --dims "${REPRO_DIMS:-30}" \
    --strategies "${REPRO_STRATEGIES:-jso}" --backend cuda \
    --reference "$B/reference" --out "$W/repro" > "$W/repro.log" 2>&1
  note "reproduce cec2017 --dims ${REPRO_DIMS:-30} --strategies ${REPRO_STRATEGIES:-jso} --backend cuda: rc=$? in $(($(date +%s) - t0)) s"
  grep -E "^D = [0-9]+:|GPU time at" "$W/repro/REPORT.md" 2> /dev/null | head -12 | tee -a "$S"
fi

python3 - "$W/bench.json" "$W/evox.jsonl" << 'PY' | tee -a "$S"
import json, sys
try:
    recs = json.load(open(sys.argv[1]))["records"]
except Exception as e:
    print("no bench records:", e); recs = []
ev = {}
try:
    for l in open(sys.argv[2]):
        r = json.loads(l)
        if "us_per_gen" in r:
            ev[(r["algorithm"], r["np"])] = r["us_per_gen"]
except Exception:
    pass
by = {(r["strategy"], r["pop"], r["mode"]): r["us_per_gen"] for r in recs}
print(f"{'strategy':8} {'Np':>6} {'grid us':>9} {'block us':>9} {'grid/rand1':>10} {'block/rand1':>11} {'EvoX JaDE/grid':>14}")
for np_ in (100, 1000, 10000):
    for s in ("rand1", "jde", "jade", "shade", "lshade", "jso"):
        g, b = by.get((s, np_, "grid")), by.get((s, np_, "batch"))
        rg, rb = by.get(("rand1", np_, "grid")), by.get(("rand1", np_, "batch"))
        e = ev.get(("JaDE", np_))
        f = lambda v: f"{v:9.1f}" if v else "        -"
        best = min(v for v in (g, b) if v) if (g or b) else None
        print(f"{s:8} {np_:6} {f(g)} {f(b)} {(g/rg if g and rg else 0):10.2f} {(b/rb if b and rb else 0):11.2f} {(e/best if e and best else 0):14.2f}")
for k, v in sorted(ev.items()):
    print(f"EvoX {k[0]} Np={k[1]}: {v:.1f} us/gen")
PY
tar -czf "$FINAL/adaptive.tgz" -C "$W" . 2> /dev/null
cp "$S" "$FINAL/summary.txt"
