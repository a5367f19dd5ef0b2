# usage: cmp.py DIR: the bench JSON files DIR/b-<bin>-<tag>-<round>.json: µs per generation
# per case and binary (every round), and each binary's median over the first's (v11 first).
import json, sys, glob, os, statistics, collections
d = sys.argv[1]
t = collections.defaultdict(lambda: collections.defaultdict(list))
bins = set()
for f in sorted(glob.glob(os.path.join(d, 'b-*.json'))):
    b = os.path.basename(f).split('-')[1]
    bins.add(b)
    try: recs = json.load(open(f))['records']
    except Exception as e: print('unreadable', f, e); continue
    for r in recs: t[r['name']][b].append(r['us_per_gen'])
base = sys.argv[2] if len(sys.argv) > 2 else 'v11'
bins = sorted(bins, key=lambda b: (b != base, b))
print('%-38s' % 'case', ' '.join('%17s' % b for b in bins), ' ratios to', bins[0])
for name, v in t.items():
    cells = ['%17s' % '/'.join('%.2f' % x for x in v.get(b, [])) for b in bins]
    base = statistics.median(v[bins[0]]) if v.get(bins[0]) else None
    rat = ' '.join('%.3f' % (statistics.median(v[b]) / base) if base and v.get(b) else '-' for b in bins[1:])
    print('%-38s' % name[:38], ' '.join(cells), ' ', rat)
