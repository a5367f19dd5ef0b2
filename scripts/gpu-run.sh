#!/usr/bin/env bash
# Runs on the GPU machine from the repository root, with gpu-bundle/ carried along
# (scripts/gpu-bundle.sh builds it): GPU tests, sanitizers, the CLI on CUDA for every
# strategy, function and precision, a batch file, and the benchmarks. Logs under $OUT;
# a short summary last.  usage: gpu-run.sh [all|tests|sanitize|cli|control|bench|peers|profile|reproduce|cec]...
# (several steps may be named; `all` is every step but `profile`, `reproduce` and `cec`). The peers need
# ../shared/peers in gpu-bundle/peers (gpu-bundle.sh copies it). The figures of
# docs/PERFORMANCE.md come from gpu-measure.sh, which fits one call to the GPU machine.
set -uo pipefail
B=gpu-bundle
OUT=${OUT:-/tmp/gpude-out}
mkdir -p "$OUT"
# gpu-bundle.sh packs the binaries with xz (older bundles: gzip): unpack them beside
# their packs.
for z in "$B"/*.xz "$B"/*.gz; do
  [[ -e $z ]] || continue
  case $z in
    *.xz) xz -dc "$z" > "${z%.xz}" ;;
    *.gz) gzip -dc "$z" > "${z%.gz}" ;;
  esac && chmod +x "${z%.*}"
done
steps=" ${*:-all} "
want() { [[ $steps == *" all "* && $1 != reproduce && $1 != cec && $1 != profile ]] || [[ $steps == *" $1 "* ]]; }
summary=()
# Each summary line also goes to $OUT/summary.txt at once, so a run cut short keeps its lines.
note() { summary+=("$1"); echo "$1" >> "$OUT/summary.txt"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$OUT/gpu.txt"

if want tests; then
  echo "== gpu tests"
  $B/gpu-tests 2>&1 | tee "$OUT/tests.log"
  note "tests: $(grep 'test result' "$OUT/tests.log")"
fi

if want sanitize; then
  echo "== compute-sanitizer"
  # SANITIZE_TESTS narrows the tests (names containing any of the words) when one call
  # cannot hold them all; the default takes every kernel family and the control tests.
  for tool in memcheck racecheck synccheck initcheck; do
    # shellcheck disable=SC2086
    compute-sanitizer --tool $tool --error-exitcode 9 $B/gpu-tests ${SANITIZE_TESTS:-history target mixed control checkpoint} > "$OUT/sanitizer-$tool.log" 2>&1
    rc=$?
    tail -3 "$OUT/sanitizer-$tool.log"
    note "sanitizer $tool: exit $rc, $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$OUT/sanitizer-$tool.log" | tail -1)"
  done
fi

if want cli; then
  echo "== CLI on CUDA: every strategy x function x precision"
  ok=0; bad=0
  for p in f32 f64; do
    for s in thesis rand1bin rand1exp best1 current-to-best1 rand2 best2; do
      for f in sphere griewank rosenbrock ackley f4 rastrigin schwefel12 weierstrass; do
        for m in batch grid; do
          if line=$($B/gpude run --backend cuda --mode $m --function $f --dim 20 --pop 96 --gens 40 --strategy $s --bounds clip --precision $p --json 2>&1); then
            ok=$((ok + 1))
          else
            bad=$((bad + 1)); echo "FAILED: $p $s $f $m: $line" | tee -a "$OUT/cli-failures.txt"
          fi
        done
      done
    done
  done
  note "cli runs on cuda: $ok ok, $bad failed"
  # Expression objectives: the same bits on cuda as on the CPU engine.
  same=0; differ=0
  for p in f32 f64; do
    for s in thesis rand1bin best2exp current-to-best1; do
      for e in 'sum(x^2 - 10*cos(2*pi*x)) + 10*D' 'sum(x^2)/4000 - prod(cos(x*(1/sqrt(j+1)))) + 1' 'sum((1 - x[j-1])^2 + 100*(x - x[j-1]^2)^2)'; do
        a=$($B/gpude run --backend cuda --expr "$e" --lower -5 --upper 5 --min 0 --dim 33 --pop 96 --gens 40 --strategy $s --precision $p --json 2>&1)
        b=$($B/gpude run --backend cpu --expr "$e" --lower -5 --upper 5 --min 0 --dim 33 --pop 96 --gens 40 --strategy $s --precision $p --json 2>&1)
        ga=$(echo "$a" | python3 -c 'import json,sys; r=json.load(sys.stdin)["results"][0]; print(r["best_f"], r["best_x"], r["backend"])' 2>&1)
        gb=$(echo "$b" | python3 -c 'import json,sys; r=json.load(sys.stdin)["results"][0]; print(r["best_f"], r["best_x"], "cuda")' 2>&1)
        if [[ "$ga" == "$gb" ]]; then
          same=$((same + 1))
        else
          differ=$((differ + 1)); echo "DIFFER: $p $s $e" | tee -a "$OUT/cli-failures.txt"
        fi
      done
    done
  done
  note "cli expression runs, cuda vs cpu: $same equal, $differ differ"
  # The example objective crate's PTX against the expression of the same function.
  if [[ -f $B/objective-example.ptx ]]; then
    same=0; differ=0
    for p in f32 f64; do
      for m in batch grid; do
        a=$($B/gpude run --backend cuda --mode $m --objective-ptx $B/objective-example.ptx --lower -5 --upper 5 --min 0 --dim 30 --pop 128 --gens 100 --precision $p --json 2>&1)
        b=$($B/gpude run --backend cuda --mode $m --expr 'sum((1 - x[j-1])^2 + 100*(x - x[j-1]^2)^2)' --lower -5 --upper 5 --min 0 --dim 30 --pop 128 --gens 100 --precision $p --json 2>&1)
        ga=$(echo "$a" | python3 -c 'import json,sys; r=json.load(sys.stdin)["results"][0]; print(r["best_f"], r["best_x"])' 2>&1)
        gb=$(echo "$b" | python3 -c 'import json,sys; r=json.load(sys.stdin)["results"][0]; print(r["best_f"], r["best_x"])' 2>&1)
        if [[ "$ga" == "$gb" ]]; then
          same=$((same + 1))
        else
          differ=$((differ + 1)); echo "DIFFER: example objective $p $m" | tee -a "$OUT/cli-failures.txt"
        fi
      done
    done
    note "cli example objective (PTX) vs its expression on cuda: $same equal, $differ differ"
  fi
  $B/gpude run --backend cuda --function griewank --dim 128 --pop 2048 --gens 1000 --strategy thesis --seed 1 | tee "$OUT/thesis-griewank.txt"
  printf '[[jobs]]\nfunction = "ackley"\ndim = 64\npop = 512\ngenerations = 300\nruns = 8\n[[jobs]]\nfunction = "rosenbrock"\ndim = 30\npop = 256\ngenerations = 500\nstrategy = "rand1bin"\nprecision = "f64"\nruns = 4\n' > "$OUT/jobs.toml"
  $B/gpude batch --backend cuda "$OUT/jobs.toml" | tee "$OUT/batch.txt" | tail -16
  note "batch file on cuda: exit ${PIPESTATUS[0]}"
  $B/gpude run --backend cuda --function sphere --dim 4096 --pop 16000000 --gens 1 > "$OUT/too-large.txt" 2>&1
  note "16e6 x 4096 job: exit $?, $(tail -1 "$OUT/too-large.txt")"
fi

if want control; then
  echo "== SIGINT on CUDA: stop, save, resume on either engine"
  run=(--function rastrigin --dim 16 --pop 64 --seed 7)
  $B/gpude run --backend cuda "${run[@]}" --gens 100000000 --checkpoint "$OUT/int.ckpt" --json \
    > "$OUT/int.json" 2> "$OUT/int.err" &
  pid=$!
  sleep 3
  kill -INT $pid
  wait $pid
  rc=$?
  cat "$OUT/int.err"
  g=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["results"][0]["generations"])' "$OUT/int.json")
  total=$((g + 500))
  cp "$OUT/int.ckpt" "$OUT/int-cpu.ckpt"
  $B/gpude resume "$OUT/int.ckpt" --backend cuda --gens $total --json > "$OUT/resumed-cuda.json"
  $B/gpude resume "$OUT/int-cpu.ckpt" --backend cpu --gens $total --json > "$OUT/resumed-cpu.json"
  $B/gpude run --backend cuda "${run[@]}" --gens $total --json > "$OUT/whole.json"
  same=$(python3 - "$OUT"/whole.json "$OUT"/resumed-cuda.json "$OUT"/resumed-cpu.json <<'PY'
import json, sys
def res(p):
    rs = json.load(open(p))["results"]
    for r in rs:
        r.pop("elapsed"); r.pop("backend")
    return rs
w, c, p = (res(a) for a in sys.argv[1:4])
print(f"resumed on cuda == whole: {c == w}; resumed on cpu == whole: {p == w}")
PY
)
  note "sigint on cuda: exit $rc at generation $g (130 expected); $same"
fi

if want bench; then
  echo "== bench"
  # BENCH_ARGS narrows the cases (e.g. "--only batch") when one call cannot hold them all.
  # shellcheck disable=SC2086
  $B/gpude bench --ceilings --json --out "$OUT/bench.json" ${BENCH_ARGS:-} > /dev/null 2> "$OUT/bench.err"
  python3 - "$OUT/bench.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print(f"device: {r['device']}")
c = r.get("ceilings")
if c:
    print(f"ceilings: HBM copy {c['hbm_gb_per_s']:.0f} GB/s, L2 copy {c['l2_gb_per_s']:.0f} GB/s, "
          f"FMA f32 {c['fma_f32_per_s']/1e12:.2f} T/s, f64 {c['fma_f64_per_s']/1e12:.2f} T/s")
print(f"{'case':30} {'us/gen':>10} {'G elem-gens/s':>14}")
for x in r["records"]:
    print(f"{x['name']:30} {x['us_per_gen']:10.2f} {x['element_gens_per_s']/1e9:14.2f}")
PY
fi

if want peers && [[ -f $B/peers/run.sh ]]; then
  echo "== peers"
  timeout 300 bash $B/peers/run.sh 2>&1 | tee "$OUT/peers.log"
  note "peers: $(grep -c '^{' "$OUT/peers.log") records"
fi

if want reproduce; then
  echo "== reproduce thesis"
  start=$(date +%s)
  # REPRODUCE_ARGS narrows the run (e.g. "--functions ackley") when one call cannot hold it all.
  # shellcheck disable=SC2086
  $B/gpude reproduce thesis --backend cuda --out "$OUT/reproduction" ${REPRODUCE_ARGS:-} > "$OUT/reproduce.log" 2>&1
  rc=$?
  tail -5 "$OUT/reproduce.log"
  note "reproduce thesis: exit $rc in $(( $(date +%s) - start )) s"
fi

if want profile; then
  echo "== ncu: where the time of the standard cases goes"
  # One kernel launch each, the full section set; the reports and their text go to $OUT.
  prof() {
    local tag=$1; shift
    ncu --set full --launch-count 1 --launch-skip 2 -k "regex:$1" -f -o "$OUT/ncu-$tag" "${@:2}" > "$OUT/ncu-$tag.log" 2>&1
    ncu --import "$OUT/ncu-$tag.ncu-rep" --page details > "$OUT/ncu-$tag.txt" 2>&1
    note "ncu $tag: $(grep -E 'Duration|Achieved Occupancy|Registers Per' "$OUT/ncu-$tag.txt" | tr -s ' ' | head -3 | tr '\n' ';')"
  }
  prof grid8192 'de_grid_f32_griewank_thesis$' $B/gpude bench --quick --repeats 1 --only "Np=8192 (grid)"
  prof batch528 'de_batch_f32_griewank_thesis$' $B/gpude bench --quick --repeats 1 --only "528 x 256"
  prof batch132 'de_batch_f32_griewank_thesis$' $B/gpude bench --quick --repeats 1 --only "batch 132 x 2048"
fi

if want cec; then
  echo "== reproduce cec2017 on cuda"
  start=$(date +%s)
  # CEC_ARGS chooses dimensions and strategies (default: D = 10 and 30, jSO and L-SHADE).
  # shellcheck disable=SC2086
  $B/gpude reproduce cec2017 --backend cuda --out "$OUT/cec2017" ${CEC_ARGS:---dims 10,30 --strategies jso,lshade} > "$OUT/cec.log" 2>&1
  rc=$?
  tail -5 "$OUT/cec.log"
  note "reproduce cec2017: exit $rc in $(( $(date +%s) - start )) s"
fi

echo "== summary"
printf '%s\n' "${summary[@]}"
