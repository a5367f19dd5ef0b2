#!/usr/bin/env bash
# call 20: grid-barrier variants timed alone (GPUDE_BARRIER_KIND 0..4), three rounds each, in turns
set -uo pipefail
B=gpu-bundle
FINAL=${OUT:-/tmp/out}; mkdir -p $FINAL
bash $B/unpack.sh
for r in 1 2 3; do for k in 0 1 2 3 4; do
  GPUDE_BARRIER_KIND=$k $B/gpude-exp bench --ceilings --quick --only "one pop Np=2048 (grid)" --json --out $FINAL/bar-$k-$r.json > /dev/null 2> $FINAL/bar-$k-$r.log
  python3 -c "import json;c=json.load(open('$FINAL/bar-$k-$r.json'))['ceilings'];print('kind $k round $r: %.3f us'%c['grid_barrier_us'])" 2>&1 | tail -1
done; done
