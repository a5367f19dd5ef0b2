#!/usr/bin/env python3
"""The SciPy peer of the CPU engine: differential_evolution on Griewank, D = 128,
Np = 8192 (popsize 64 × D), vectorised, deferred updating, no polishing. Prints the
median seconds per generation over a few generations (JSON).

usage: scipy_peer.py [GENERATIONS]
"""
import json
import sys
import time

import numpy as np
from scipy.optimize import differential_evolution

D, NP = 128, 8192
gens = int(sys.argv[1]) if len(sys.argv) > 1 else 4
idx = np.sqrt(np.arange(1, D + 1))[:, None]


def griewank(x):  # x: (D, S) when vectorised
    return (x * x).sum(axis=0) / 4000.0 - np.prod(np.cos(x / idx), axis=0) + 1.0


stamps = []


def cb(*_a, **_k):
    stamps.append(time.perf_counter())


t0 = time.perf_counter()
differential_evolution(
    griewank, [(-600, 600)] * D, popsize=NP // D, maxiter=gens, tol=0, polish=False,
    vectorized=True, updating="deferred", strategy="rand1bin", mutation=0.3,
    recombination=0.5, seed=1, callback=cb, init="random")
steps = np.diff([t0] + stamps)[1:]  # drop the first (includes the initial population)
print(json.dumps({"peer": "scipy.optimize.differential_evolution", "scipy": __import__("scipy").__version__,
                  "D": D, "Np": NP, "generations_timed": len(steps),
                  "s_per_generation_median": float(np.median(steps))}))
