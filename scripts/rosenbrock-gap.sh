#!/usr/bin/env bash
# The Rosenbrock Np = 2048 gap: the thesis's case (D = 128, g_max = 18000, 35 runs,
# seed 1) on the GPU in exact f32 and f64, once with gpude's thesis strategy and once
# with each thesis variant, then one table of what each did.
#
# usage: scripts/rosenbrock-gap.sh GPUDE OUT
#   GPUDE  the gpude binary (built with the thesis variants)
#   OUT    a folder for the reports: OUT/<variant>/{REPORT.md,runs.json,…} and OUT/summary.txt
# Needs a CUDA GPU and python3. About 10 s per variant on an H100.
set -uo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: $0 GPUDE OUT" >&2
  exit 2
fi
bin=$1
out=$2
if [[ ! -x $bin ]]; then
  echo "error: $bin is not an executable file" >&2
  exit 2
fi
command -v python3 >/dev/null || { echo "error: python3 is needed for the table" >&2; exit 2; }
mkdir -p "$out" || exit 2

# Folder name, then the variant as --thesis-variant takes it.
variants=(
  "default default"
  "rejection indices=rejection"
  "lambda-closed-open lambda=closed-open"
  "mutation-fma mutation=fma"
  "mutation-fma-inner mutation=fma-inner"
  "mutation-from-best mutation=from-best"
  "generations-plus-one generations=plus-one"
  "lambda-per-individual lambda-draw=per-individual"
)

failed=0
start=$SECONDS
for entry in "${variants[@]}"; do
  read -r name variant <<< "$entry"
  echo "== $variant" >&2
  if ! "$bin" reproduce thesis --backend cuda \
      --functions rosenbrock --sizes 2048 --arithmetic exact-f32,f64 --no-table56 \
      --runs 35 --seed 1 --thesis-variant "$variant" --out "$out/$name" \
      > "$out/$name.log" 2>&1; then
    echo "FAILED: $variant (see $out/$name.log)" >&2
    tail -3 "$out/$name.log" >&2
    failed=$((failed + 1))
  fi
done
echo "ran ${#variants[@]} variants in $((SECONDS - start)) s" >&2

python3 - "$out" "${variants[@]}" <<'PY' | tee "$out/summary.txt"
import json, os, sys

out, entries = sys.argv[1], [e.split(" ", 1) for e in sys.argv[2:]]
rows = []
device = None
setting = "Rosenbrock"
for name, variant in entries:
    path = os.path.join(out, name, "runs.json")
    if not os.path.exists(path):
        rows.append([variant, "-", "failed", "", "", "", "", ""])
        continue
    r = json.load(open(path))
    c = r["context"]
    device = device or f'{c.get("device") or c["backend"]}, gpude {c["gpude"]}'
    for case in r["cases"]:
        setting = (f'Rosenbrock D = {case["dim"]}, Np = {case["np"]}, g_max = {case["g_max"]}, '
                   f'{case["runs"]} runs, seed {r["seed"]}')
        s, f = case["stats"], case["failures"]
        trapped = sum(t["runs"] for t in f["trapped"])
        rows.append([
            variant,
            case["arithmetic"],
            f'{s["successes"]}/{s["runs"]}',
            str(trapped),
            str(f["descending"]),
            str(f["stalled"]),
            f'{s["median_error"]:.3g}',
            f'{f["descending_median_error"]:.3g}' if f["descending"] else "-",
        ])
head = ["variant", "arithmetic", "verified success", "trapped", "descending", "stalled",
        "median verified error", "median (descending)"]
width = [max(len(x[k]) for x in rows + [head]) for k in range(len(head))]
print(f"{setting} ({device}); the thesis (D = 128, Np = 2048): 29/35, "
      "every failure trapped at 3.98662")
for x in [head, ["-" * w for w in width]] + rows:
    print("  ".join(v.ljust(w) for v, w in zip(x, width)).rstrip())
print("lambda-draw=per-individual deviates from the thesis (one λ per trial): a contrast, "
      "not a candidate")
PY
exit $((failed > 0))
