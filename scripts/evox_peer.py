#!/usr/bin/env python3
"""EvoX's differential evolution on the GPU, timed as `gpude bench` times its adaptive
cases: Rastrigin, D = 30, f32, one population, the marginal wall time per generation
(t(G) - t(G/5)) / (0.8 G), median of REPEATS pairs, after a warm-up.

Each algorithm's step is compiled with `torch.compile(workflow.step)`, the fastest way
EvoX's documentation gives; where compiling fails the eager step is timed and the record
says so. One JSON object per line on stdout (algorithm, np, us_per_gen, compiled, ...).

Settings (environment): ALGS (default "JaDE,DE,SHADE"), SIZES ("100,1000,10000"),
GENS (generations at Np = 100 / 1 000 / 10 000: "1000,500,200"), REPEATS (3), BUDGET_S
(the whole script; a case that would start past it is skipped, 300).
Requires `evox` (PyPI) and PyTorch with CUDA.
"""

import json
import os
import statistics
import sys
import time

import torch


def evox_version():
    """EvoX's version from its package metadata (the module has no __version__)."""
    from importlib import metadata

    try:
        return metadata.version("evox")
    except metadata.PackageNotFoundError:
        return "unknown"


def main():
    from evox.algorithms import DE, SHADE, JaDE
    from evox.problems.numerical import Rastrigin
    from evox.workflows import StdWorkflow

    algs = os.environ.get("ALGS", "JaDE,DE,SHADE").split(",")
    sizes = [int(s) for s in os.environ.get("SIZES", "100,1000,10000").split(",")]
    gens = [int(s) for s in os.environ.get("GENS", "1000,500,200").split(",")]
    repeats = int(os.environ.get("REPEATS", "3"))
    budget = float(os.environ.get("BUDGET_S", "300"))
    start = time.time()
    torch.set_default_device("cuda")
    torch.set_default_dtype(torch.float32)
    dim = 30
    lb = torch.full((dim,), -5.12)
    ub = torch.full((dim,), 5.12)
    made = {"DE": DE, "JaDE": JaDE, "SHADE": SHADE}
    for alg in algs:
        for np_, g in zip(sizes, gens):
            if time.time() - start > budget:
                print(json.dumps({"algorithm": alg, "np": np_, "skipped": "time budget"}), flush=True)
                continue
            rec = {"algorithm": alg, "np": np_, "dim": dim, "function": "rastrigin",
                   "precision": "f32", "generations": g, "repeats": repeats,
                   "evox": evox_version(), "torch": torch.__version__,
                   "device": torch.cuda.get_device_name()}
            try:
                algorithm = made[alg](np_, lb, ub)
                wf = StdWorkflow(algorithm, Rastrigin())
                wf.init_step()
                step = wf.step
                compiled = True
                t0 = time.time()
                try:
                    cstep = torch.compile(wf.step)
                    for _ in range(3):
                        cstep()
                    torch.cuda.synchronize()
                    step = cstep
                except Exception as e:  # noqa: BLE001 (the record says why)
                    compiled = False
                    rec["compile_error"] = str(e).splitlines()[0][:200] if str(e) else type(e).__name__
                rec["compile_s"] = round(time.time() - t0, 2)
                rec["compiled"] = compiled

                def timed(n):
                    torch.cuda.synchronize()
                    t = time.perf_counter()
                    for _ in range(n):
                        step()
                    torch.cuda.synchronize()
                    return time.perf_counter() - t

                timed(max(g // 5, 1))  # warm-up
                short, long_ = [], []
                for _ in range(repeats):
                    short.append(timed(max(g // 5, 1)))
                    long_.append(timed(g))
                ts, tl = statistics.median(short), statistics.median(long_)
                rec["us_per_gen"] = (tl - ts) / (g - max(g // 5, 1)) * 1e6
                rec["t_short_ms"] = ts * 1e3
                rec["t_long_ms"] = tl * 1e3
                fit = getattr(algorithm, "fit", None)
                if fit is not None:
                    rec["best"] = float(torch.min(fit))
            except Exception as e:  # noqa: BLE001 (the record says why)
                rec["error"] = (str(e).splitlines() or [type(e).__name__])[0][:300]
            print(json.dumps(rec), flush=True)
            torch.cuda.empty_cache()


if __name__ == "__main__":
    sys.exit(main())
