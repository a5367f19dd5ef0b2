#!/usr/bin/env python3
"""Tables from the JSON of `gpude bench --json` (scripts/gpu-measure.sh runs it).

usage:
  bench-compare.py summary DIR   DIR/bench-*.json (the cases) and DIR/peers.log (the peers'
                                 JSON lines): the ceilings, then each case's µs per
                                 generation, element-generations per second, errors, and
                                 the peer that runs the same work with its ratio
  bench-compare.py ab DIR [BASE] DIR/b-<binary>-<tag>-<round>.json: each case's µs per
                                 generation for every binary and round, the medians, and
                                 each binary's median over BASE's (default: base)

A ratio "× the peer" is the peer's µs per generation over gpude's: above 1, gpude is faster.
Peers run the thesis variant on Griewank, D = 128, f32 (../shared/peers): a case gets a
peer only when it runs that work. One population takes the JAX peer (else the CUDA C one
with one thread per individual) of the same Np; many populations the CUDA C peer with one
block per population of the same count and Np.
"""
import collections
import glob
import json
import os
import statistics
import sys


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except Exception as e:  # a step cut short leaves no file, or half of one
        print(f"unreadable: {path} ({e})")
        return {}


def peers_of(path):
    """The peers' lines as {(kind, populations, Np): µs per generation}."""
    found = {}
    if not os.path.exists(path):
        return found
    with open(path) as f:
        for line in f:
            if not line.startswith("{"):
                continue
            try:
                p = json.loads(line)
            except ValueError:
                continue
            if "us_per_gen" not in p:
                continue
            name = p["peer"]
            kind = name.split("-")[0] + ("-bpp" if "block-per-pop" in name else "")
            found[(kind, p.get("pops", 1), p["Np"])] = (p["us_per_gen"], name)
    return found


def peer_for(record, peers):
    if not (record.get("function") == "griewank" and record.get("dim") == 128
            and record.get("precision") == "f32" and record.get("strategy") == "thesis"
            and record.get("backend") == "cuda"):
        return None
    pops, np_ = record.get("populations", 1), record.get("pop")
    if pops > 1:
        return peers.get(("cuda-bpp", pops, np_))
    if record.get("mode") in ("grid", "steps"):
        return peers.get(("jax", 1, np_)) or peers.get(("cuda", 1, np_))
    return peers.get(("cuda-bpp", 1, np_))


def summary(d):
    files = sorted(glob.glob(os.path.join(d, "bench-*.json")),
                   key=lambda f: int(os.path.basename(f)[6:-5] or 0))
    peers = peers_of(os.path.join(d, "peers.log"))
    runs = [load(f) for f in files]
    for r in runs:
        c = r.get("ceilings")
        if c:
            print(f"ceilings ({r.get('device')}): grid barrier {c['grid_barrier_us']:.3f} µs "
                  f"({c['grid_barrier_blocks']} × {c['grid_barrier_threads']}), "
                  f"HBM {c['hbm_gb_per_s']:.0f} GB/s, L2 {c['l2_gb_per_s']:.0f} GB/s, "
                  f"FMA f32 {c['fma_f32_per_s'] / 1e12:.2f} T/s "
                  f"({c['warp_fma_f32_per_s'] / 1e12:.3f} T warp instructions/s), "
                  f"f64 {c['fma_f64_per_s'] / 1e12:.2f} T/s")
    if peers:
        print("peers: " + "; ".join(
            f"{name} {pops} × {np_} {us:.1f} µs" for (_, pops, np_), (us, name) in sorted(peers.items())))
    print(f"{'case':44} {'µs/gen':>9} {'G/s':>7} {'error':>9} {'verified':>9}  peer, same lease")
    for r in runs:
        for x in r.get("records", []):
            p = peer_for(x, peers)
            ratio = f"{p[1]} {p[0]:.1f} µs: {p[0] / x['us_per_gen']:.2f}×" if p else ""
            print(f"{x['name'][:44]:44} {x['us_per_gen']:9.2f} {x['element_gens_per_s'] / 1e9:7.1f} "
                  f"{x['final_error']:9.3g} {x['final_verified_error']:9.3g}  {ratio}")


def ab(d, base):
    t = collections.defaultdict(lambda: collections.defaultdict(list))
    bins = set()
    for f in sorted(glob.glob(os.path.join(d, "b-*.json"))):
        b = os.path.basename(f).split("-")[1]
        bins.add(b)
        for r in load(f).get("records", []):
            t[r["name"]][b].append(r["us_per_gen"])
    if not bins:
        print("a/b: no results")
        return
    bins = sorted(bins, key=lambda b: (b != base, b))
    print(f"a/b, µs per generation (every round; median), over {bins[0]}:")
    print(f"{'case':40} " + " ".join(f"{b:>26}" for b in bins) + "  ratio")
    for name, v in t.items():
        cells = []
        for b in bins:
            xs = v.get(b, [])
            med = f"{statistics.median(xs):.2f}" if xs else "-"
            cells.append(f"{'/'.join(f'{x:.2f}' for x in xs) + ' (' + med + ')':>26}")
        ref = statistics.median(v[bins[0]]) if v.get(bins[0]) else None
        rat = " ".join(f"{statistics.median(v[b]) / ref:.3f}" if ref and v.get(b) else "-"
                       for b in bins[1:])
        print(f"{name[:40]:40} " + " ".join(cells) + "  " + rat)


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "summary":
        summary(sys.argv[2])
    elif len(sys.argv) >= 3 and sys.argv[1] == "ab":
        ab(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else "base")
    else:
        sys.exit(__doc__)
