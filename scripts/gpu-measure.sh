#!/usr/bin/env bash
# The GPU measurement behind docs/PERFORMANCE.md, in one call to the GPU machine (600 s at
# most). Build the bundle here with `bash scripts/gpu-bundle.sh`, carry gpu-bundle/ along,
# and run from the repository root there:
#
#   bash gpu-bundle/gpu-measure.sh [TEST_WORD...]
#
# Steps, in this order: unpack the bundle's binaries (xz or gzip); `gpude bench --json`
# on the report's cases (the GPU's ceilings with the first); the peers of the same lease
# (gpu-bundle/peers/run.sh, which scripts/gpu-bundle.sh copies from ../shared/peers); with
# GPUDE_BASELINE, an A/B of the same cases; every GPU test (gpu-tests) under a time limit;
# compute-sanitizer's memcheck, racecheck and synccheck on the GPU tests whose names contain
# a TEST_WORD (default: pipelined shared_memory; `none` skips the sanitizers). A summary
# table comes last. Every log goes into $OUT/logs.tgz ($OUT: the GPU machine's output
# folder, /tmp/out where unset); the summary also into $OUT/summary.txt. The exit status
# is 1 when a GPU test failed or was cut off, or a sanitizer reported (or was cut off).
#
# Time shares, in seconds (0 skips a step); no step starts past TOTAL_S, and each is cut
# at what is left of it:
#   TOTAL_S=570   the whole run
#   BENCH_S=60    each `gpude bench` call (one per case, and per binary and round in the A/B)
#   PEERS_S=100   the peers
#   TESTS_S=320   every GPU test (all 39 took about 295 s on an H200)
#   the sanitizers share what is left, in turns (each takes what the ones before left).
# Other settings:
#   CASES="Np=8192 (grid);batch 132 x 2048;528 x 256"   the cases: `gpude bench --only`
#                 texts, separated by ';' (each text selects every case whose name holds it)
#   BENCH_ARGS    more arguments for every `gpude bench` (e.g. "--repeats 5")
#   GPUDE_BASELINE=PATH   a second gpude binary (packed with xz or gzip, or not): the cases
#                 run AB_ROUNDS times (default 3), baseline and bundle in turns (the first
#                 of each round alternates); the summary gives each binary's medians and
#                 the bundle's over the baseline's
#   PEERS=PATH    the peers' run.sh, where not in the bundle (also looked for: ../shared/peers)
#   BUNDLE=gpu-bundle   where the bundle is
set -uo pipefail
B=$(cd "${BUNDLE:-gpu-bundle}" 2> /dev/null && pwd) || { echo "no ${BUNDLE:-gpu-bundle}/ here: build it with scripts/gpu-bundle.sh" >&2; exit 2; }
FINAL=${OUT:-/tmp/out}
TOTAL_S=${TOTAL_S:-570}
BENCH_S=${BENCH_S:-60}
PEERS_S=${PEERS_S:-100}
TESTS_S=${TESTS_S:-320}
AB_ROUNDS=${AB_ROUNDS:-3}
CASES=${CASES:-Np=8192 (grid);batch 132 x 2048;528 x 256}
read -r -a bench_args <<< "${BENCH_ARGS:-}"
words=("$@")
[[ ${#words[@]} -gt 0 ]] || words=(pipelined shared_memory)
here=$(cd "$(dirname "$0")" && pwd)
helper=$here/bench-compare.py
[[ -f $helper ]] || helper=scripts/bench-compare.py

mkdir -p "$FINAL"
W=$(mktemp -d "${TMPDIR:-/tmp}/gpude-measure.XXXXXX")
S=$W/summary.txt
start=$(date +%s)
status=0
BW=
el() { echo "$(($(date +%s) - start)) s"; }
note() { echo "$1" | tee -a "$S"; }
# The seconds a step may take: its share, cut at what is left of TOTAL_S.
limit() {
  local left=$((TOTAL_S - ($(date +%s) - start)))
  if ((left < $1)); then echo "$left"; else echo "$1"; fi
}
# shellcheck disable=SC2317  # called by the traps
fin() {
  trap - EXIT INT TERM
  cp "$S" "$FINAL/summary.txt" 2>/dev/null
  tar -C "$W" -czf "$FINAL/logs.tgz" . && rm -rf "$W"
  [[ -n $BW ]] && rm -rf "$BW"
}
trap fin EXIT
trap 'note "interrupted at $(el)"; exit 130' INT TERM

# Unpacks a packed file (.xz or .gz) beside itself, keeping the pack; xz, gzip or Python.
unpack() {
  local z=$1 f=${1%.*}
  [[ -f $f && $f -nt $z ]] && return 0
  case $z in
    *.xz)
      if command -v xz > /dev/null; then
        xz -dc "$z" > "$f"
      else
        python3 -c 'import lzma,shutil,sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' "$z" "$f"
      fi ;;
    *.gz)
      if command -v gzip > /dev/null; then
        gzip -dc "$z" > "$f"
      else
        python3 -c 'import gzip,shutil,sys; shutil.copyfileobj(gzip.open(sys.argv[1]), open(sys.argv[2], "wb"))' "$z" "$f"
      fi ;;
  esac && chmod +x "$f"
}
for z in "$B"/*.xz "$B"/*.gz; do
  [[ -e $z ]] || continue
  unpack "$z" || note "could not unpack $z"
done
[[ -x $B/gpude ]] || note "no $B/gpude: the benches will fail"

# What the GPU tests and the bench cases look for.
ref=$B/reference/cec2017/CEC17_fast_pow-C++.zip
[[ -f $ref ]] && export GPUDE_CEC2017_DATA=${GPUDE_CEC2017_DATA:-$ref}
[[ -f $B/objective-example.ptx ]] && export GPUDE_OBJECTIVE_PTX=${GPUDE_OBJECTIVE_PTX:-$B/objective-example.ptx}

gpu=$(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader 2> /dev/null | head -1)
note "gpu: ${gpu:-none found (nvidia-smi)}"
note "bundle: $(cat "$B/commit.txt" 2>/dev/null || echo 'no commit.txt (an older bundle)')"
"$B/gpude" info > "$W/info.txt" 2>&1
nvidia-smi > "$W/nvidia-smi.txt" 2>&1

IFS=';' read -r -a cases <<< "$CASES"

# The report's cases, one `gpude bench` call each; the first also measures the ceilings.
if ((BENCH_S > 0)); then
  for i in "${!cases[@]}"; do
    extra=()
    ((i == 0)) && extra=(--ceilings)
    t=$(limit "$BENCH_S")
    ((t > 2)) || { note "bench '${cases[i]}': no time left"; continue; }
    timeout "$t" "$B/gpude" bench "${extra[@]}" --only "${cases[i]}" "${bench_args[@]}" \
      --json --out "$W/bench-$i.json" > "$W/bench-$i.log" 2>&1
    note "bench '${cases[i]}': exit $? at $(el)"
  done
fi

# The peers, in the same lease.
peers=
for p in "${PEERS:-}" "$B/peers/run.sh" ../shared/peers/run.sh shared/peers/run.sh; do
  [[ -n $p && -f $p ]] && { peers=$p; break; }
done
if ((PEERS_S > 0)); then
  if [[ -z $peers ]]; then
    note "peers: not found (scripts/gpu-bundle.sh copies ../shared/peers into the bundle)"
  else
    t=$(limit "$PEERS_S")
    if ((t > 2)); then
      timeout "$t" bash "$peers" > "$W/peers.log" 2>&1
      note "peers ($peers): exit $? at $(el), $(grep -c '^{' "$W/peers.log") records"
    else
      note "peers: no time left"
    fi
  fi
fi

# The A/B: a baseline binary and the bundle's, the same cases in turns.
if [[ -n ${GPUDE_BASELINE:-} ]]; then
  base=$GPUDE_BASELINE
  case $base in
    *.xz | *.gz)
      # Unpacked out of $W, so that the logs do not carry it.
      BW=$(mktemp -d "${TMPDIR:-/tmp}/gpude-baseline.XXXXXX")
      cp "$base" "$BW/" && unpack "$BW/$(basename "$base")" && base=$BW/$(basename "${base%.*}") ;;
  esac
  mkdir -p "$W/ab"
  for r in $(seq 1 "$AB_ROUNDS"); do
    order=(base new)
    ((r % 2 == 0)) && order=(new base)
    for i in "${!cases[@]}"; do
      for bin in "${order[@]}"; do
        exe=$B/gpude
        [[ $bin == base ]] && exe=$base
        t=$(limit "$BENCH_S")
        ((t > 2)) || continue
        timeout "$t" "$exe" bench --only "${cases[i]}" "${bench_args[@]}" --json \
          --out "$W/ab/b-$bin-g$i-$r.json" > "$W/ab/b-$bin-g$i-$r.log" 2>&1 ||
          note "a/b: $bin '${cases[i]}' round $r: exit $?"
      done
    done
  done
  note "a/b ($GPUDE_BASELINE against $B/gpude, $AB_ROUNDS rounds): done at $(el)"
fi

# Every GPU test, under its limit.
if ((TESTS_S > 0)); then
  t=$(limit "$TESTS_S")
  if ((t > 2)); then
    timeout "$t" "$B/gpu-tests" > "$W/tests.log" 2>&1
    rc=$?
    result=$(grep '^test result' "$W/tests.log" || echo "cut off by the limit of $t s")
    note "gpu tests: exit $rc at $(el): $result; $(grep -c ' \.\.\. ok' "$W/tests.log") ok"
    grep ' \.\.\. FAILED' "$W/tests.log" | head -10 | tee -a "$S"
    ((rc == 0)) || status=1
  else
    note "gpu tests: no time left"
  fi
fi

# compute-sanitizer on the chosen tests; each tool takes its share of what is left.
if [[ ${words[0]} != none ]]; then
  cs=$(command -v compute-sanitizer)
  for c in /usr/local/cuda*/bin/compute-sanitizer; do
    [[ -z $cs && -x $c ]] && cs=$c
  done
  if [[ -z $cs ]]; then
    note "compute-sanitizer: not found"
  else
    n=3
    for tool in memcheck racecheck synccheck; do
      t=$(limit $(((TOTAL_S - ($(date +%s) - start)) / n)))
      n=$((n - 1))
      ((t > 2)) || { note "sanitizer $tool: no time left"; continue; }
      timeout "$t" "$cs" --tool "$tool" --error-exitcode 9 "$B/gpu-tests" "${words[@]}" \
        > "$W/sanitizer-$tool.log" 2>&1
      rc=$?
      ((rc == 0)) || status=1
      note "sanitizer $tool on '${words[*]}': exit $rc at $(el), $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$W/sanitizer-$tool.log" | tail -1 | sed 's/^=* *//'); $(grep '^test result' "$W/sanitizer-$tool.log" || echo 'cut off')"
    done
  fi
fi

# The summary: the cases beside the ceilings and the peers; the A/B; every step's line.
{
  echo
  python3 "$helper" summary "$W" 2>&1
  [[ -d $W/ab ]] && { echo; python3 "$helper" ab "$W/ab" base 2>&1; }
} >> "$S"
echo "== summary (logs: $FINAL/logs.tgz)"
cat "$S"
exit "$status"
