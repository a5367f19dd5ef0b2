"""gpude for Python: Differential Evolution on NVIDIA GPUs, and on every CPU core.

Two ways in:

* ``differential_evolution(func, bounds, ...)``: SciPy's call and result
  (``scipy.optimize.differential_evolution``), so that a script written for SciPy
  runs with ``from gpude import differential_evolution``. Arguments gpude cannot honour
  are refused with a ``ValueError`` that says so; the ones left at their defaults take
  gpude's nearest behaviour (see the function's documentation).
* ``minimize(objective, bounds, ...)``: gpude's own settings (jSO, L-SHADE, the thesis
  variant, …); the objective a Python function of many points, a built-in or CEC 2017
  function's name, or an expression (``gpude.expr("sum(x^2)")``).

The runs go to the GPU when one is there (``backend="auto"``), else to the CPU engine;
one seed gives the same bits on both. A Python objective is evaluated on the host, all
points of a generation in one call.
"""

import math
import os

import numpy as np

from . import _gpude

__all__ = ["OptimizeResult", "differential_evolution", "minimize", "expr", "functions"]

#: How many GPU kernels this build carries (0: built without them, the CPU engine only).
KERNELS = _gpude.KERNELS


class OptimizeResult(dict):
    """A result, as SciPy's: a dict whose keys are also attributes (``r.x``, ``r.fun``)."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError as e:
            raise AttributeError(name) from e

    __setattr__ = dict.__setitem__
    __delattr__ = dict.__delitem__

    def __repr__(self):
        if not self:
            return "OptimizeResult()"
        width = max(map(len, self.keys())) + 1
        return "\n".join(f"{k.rjust(width)}: {v!r}" for k, v in self.items())

    def __dir__(self):
        return list(self.keys())


class Expr:
    """An objective written as an expression (gpude's syntax: ``sum(x^2)``, with x,
    x[j], j, D, pi; see the README), with its known minimum if any."""

    def __init__(self, text, min=None):
        self.text = str(text)
        self.min = min

    def __repr__(self):
        return f"gpude.expr({self.text!r})"


def expr(text, min=None):
    """The objective of expression ``text`` (evaluated by gpude on the GPU or the CPU)."""
    return Expr(text, min)


def functions():
    """The built-in functions: ``(name, lower, upper, minimum)`` each."""
    return _gpude.functions()


def _bounds(bounds):
    """Lower and upper bounds from SciPy's forms: ``[(lo, hi), ...]`` or an object with
    ``lb`` and ``ub`` (``scipy.optimize.Bounds``)."""
    if hasattr(bounds, "lb") and hasattr(bounds, "ub"):
        lo = np.atleast_1d(np.asarray(bounds.lb, dtype=float))
        hi = np.atleast_1d(np.asarray(bounds.ub, dtype=float))
        if lo.shape != hi.shape:
            raise ValueError("bounds: lb and ub have different lengths")
    else:
        pairs = np.asarray(bounds, dtype=float)
        if pairs.ndim != 2 or pairs.shape[1] != 2:
            raise ValueError(
                "bounds must be a sequence of (min, max) pairs, one per variable, "
                "or an object with lb and ub"
            )
        lo, hi = pairs[:, 0], pairs[:, 1]
    return [float(v) for v in lo], [float(v) for v in hi]


def _points(points, n, dim):
    """The n points gpude passes (native-endian f64, row after row) as a writable
    (n, dim) array."""
    return np.frombuffer(points, dtype=np.float64).reshape(n, dim).copy()


def _trampoline(func, args, vectorized):
    """The objective as gpude calls it: ``f(points: bytes, n, dim)`` → n values. SciPy's
    ``func(x, *args)`` gets one point at a time, or with ``vectorized`` all of them as
    an array of shape (dim, n)."""

    def evaluate(points, n, dim):
        xs = _points(points, n, dim)
        if vectorized:
            values = np.asarray(func(xs.T, *args), dtype=np.float64)
            if values.shape not in ((n,), (1, n)):
                raise ValueError(
                    f"the vectorized objective returned shape {values.shape}: one value "
                    f"per point, shape ({n},)"
                )
            return values.reshape(n).tolist()
        out = []
        for x in xs:
            v = np.asarray(func(x, *args), dtype=np.float64)
            if v.size != 1:
                raise ValueError(
                    f"the objective returned {v.size} values for one point: a scalar"
                )
            out.append(float(v.reshape(())))
        return out

    return evaluate


def _batch_trampoline(func):
    """gpude's vectorised objective: ``func(X)`` with X of shape (n, dim) → n values."""

    def evaluate(points, n, dim):
        xs = _points(points, n, dim)
        values = np.asarray(func(xs), dtype=np.float64)
        if values.shape != (n,):
            raise ValueError(
                f"the objective returned shape {values.shape}: one value per row, "
                f"shape ({n},)"
            )
        return values.tolist()

    return evaluate


def _result(d):
    r = OptimizeResult(d)
    r["x"] = np.asarray(d["x"], dtype=np.float64)
    r["fun"] = np.float64(d["fun"])
    if d.get("history") is None:
        del r["history"]
    else:
        r["history"] = np.asarray(d["history"], dtype=np.float64)
    return r


# SciPy's strategy names and gpude's.
_SCIPY_STRATEGIES = {
    "best1bin": "best1bin",
    "best1exp": "best1exp",
    "rand1bin": "rand1bin",
    "rand1exp": "rand1exp",
    "best2bin": "best2bin",
    "best2exp": "best2exp",
    "rand2bin": "rand2bin",
    "rand2exp": "rand2exp",
    "currenttobest1bin": "current-to-best1bin",
    "currenttobest1exp": "current-to-best1exp",
}

_DEFAULT = object()


def differential_evolution(
    func,
    bounds,
    args=(),
    strategy="best1bin",
    maxiter=1000,
    popsize=15,
    tol=0.01,
    mutation=_DEFAULT,
    recombination=0.7,
    seed=None,
    callback=None,
    disp=False,
    polish=True,
    init=_DEFAULT,
    atol=0,
    updating=_DEFAULT,
    workers=1,
    constraints=(),
    x0=None,
    *,
    integrality=None,
    vectorized=False,
    rng=None,
    backend="auto",
):
    """SciPy's ``differential_evolution``, run by gpude.

    Same meaning as SciPy: ``func(x, *args)`` (with ``vectorized``, x of shape
    (D, S)), ``bounds``, ``strategy`` (best1bin, rand1bin, currenttobest1bin, best2bin,
    rand2bin and their ``exp`` forms), ``maxiter`` (generations), ``popsize`` (Np =
    popsize · D), ``tol`` and ``atol`` (stop when the population's values have a
    standard deviation ≤ atol + tol·|mean|), ``mutation`` (F, one number),
    ``recombination`` (Cr), ``seed``/``rng`` (an int; None draws one), ``callback``
    (called with an ``OptimizeResult`` holding ``fun`` and ``nit`` after each
    generation; returning True or raising ``StopIteration`` stops), ``disp``.

    Where gpude differs: the population is updated once per generation (SciPy's
    ``updating="deferred"``); F is one number (SciPy's default draws F from [0.5, 1)
    each generation: left at its default, gpude uses F = 0.5); the initial population
    is uniform (SciPy's default is a Latin hypercube). ``polish`` (True by default, as
    SciPy) refines the best point with L-BFGS and numerical gradients inside the bounds
    (SciPy: L-BFGS-B), on the host in f64; the refined point replaces the best when it
    is better, and its evaluations count in ``nfev``. Asking explicitly for what gpude
    does not have (a mutation range, ``init`` other than "random",
    ``updating="immediate"``, ``constraints``, ``x0``, ``integrality``,
    ``randtobest1bin``) is a ``ValueError``. ``workers`` is accepted and ignored: gpude uses every core (or the
    GPU).

    Returns an ``OptimizeResult``: ``x``, ``fun``, ``nit``, ``nfev``, ``success``,
    ``message``, and gpude's ``verified_error``, ``backend``, ``generations``,
    ``termination``, ``seed``.
    """
    lower, upper = _bounds(bounds)
    dim = len(lower)
    if strategy not in _SCIPY_STRATEGIES:
        known = ", ".join(sorted(_SCIPY_STRATEGIES))
        raise ValueError(f"strategy {strategy!r} is not available in gpude: one of {known}")
    if mutation is _DEFAULT:
        f = 0.5
    elif isinstance(mutation, (tuple, list)):
        raise ValueError(
            f"mutation={tuple(mutation)!r} (dithering: F drawn from a range each "
            "generation) is not available in gpude: give one F"
        )
    else:
        f = float(mutation)
    if init is not _DEFAULT and not (isinstance(init, str) and init == "random"):
        raise ValueError(
            f"init={init!r} is not available in gpude: its initial population is "
            "uniform (init='random')"
        )
    if updating is not _DEFAULT and updating != "deferred":
        raise ValueError(
            f"updating={updating!r} is not available in gpude: it updates once per "
            "generation (updating='deferred')"
        )
    if constraints not in ((), None, []):
        raise ValueError("constraints are not available in gpude yet")
    if x0 is not None:
        raise ValueError("x0 is not available in gpude yet")
    if integrality is not None and np.any(integrality):
        raise ValueError("integrality is not available in gpude yet")
    if not (isinstance(workers, int) or callable(workers)):
        raise ValueError("workers must be an int or a map-like callable")
    if callable(workers):
        raise ValueError("workers as a map-like callable is not available: gpude evaluates in parallel itself")
    if rng is not None and seed is not None:
        raise ValueError("give seed or rng, not both")
    seed = rng if rng is not None else seed
    if seed is None:
        seed = int.from_bytes(os.urandom(8), "little") >> 1
    elif isinstance(seed, np.random.Generator) or isinstance(seed, np.random.RandomState):
        seed = int(seed.integers(0, 2**63) if hasattr(seed, "integers") else seed.randint(0, 2**31))
    popsize = int(popsize)
    if popsize < 1:
        raise ValueError(f"popsize = {popsize} is not allowed: 1 or more")
    pop = max(5, popsize * dim)
    if not isinstance(args, tuple):
        args = (args,)
    settings = {
        "objective": "python",
        "name": getattr(func, "__name__", "objective"),
        "dim": dim,
        "lower": lower,
        "upper": upper,
        "strategy": _SCIPY_STRATEGIES[strategy],
        # As SciPy: a trial's component outside the bounds is drawn again inside them.
        "bounds": "resample",
        "f": f,
        "cr": float(recombination),
        "pop": pop,
        "generations": int(maxiter),
        "tol": float(tol),
        "atol": float(atol),
        "seed": int(seed),
        "precision": "f64",
        "backend": backend,
        "polish": "lbfgs" if polish else None,
    }

    def observe(run, g, best):
        if disp:
            print(f"differential_evolution step {g}: f(x)= {best}")
        if callback is None:
            return False
        try:
            return bool(callback(OptimizeResult(fun=best, nit=g)))
        except StopIteration:
            return True

    d = _gpude.run(settings, _trampoline(func, args, vectorized), observe)[0]
    r = _result(d)
    term = d["termination"]
    r["nit"] = d["generations"]
    r["nfev"] = d["evaluations"]
    p = d.get("polished")
    if p is not None:
        # As SciPy: the polished point replaces the best when it is better, and its
        # evaluations count.
        r["nfev"] += p["evaluations"]
        if p["improved"]:
            r["x"] = np.asarray(p["x"], dtype=np.float64)
            r["fun"] = np.float64(p["fun"])
            r["verified_error"] = p["error"]
    r["success"] = term in ("Converged", "TargetReached")
    if term == "Converged":
        r["message"] = "Optimization terminated successfully."
    elif term == "MaxGenerations":
        r["message"] = "Maximum number of iterations has been exceeded."
    elif term == "Stopped":
        r["message"] = "callback function requested stop early"
    return r


def minimize(
    objective,
    bounds=None,
    *,
    dim=None,
    strategy="jso",
    backend="auto",
    precision="f64",
    pop=None,
    generations=None,
    max_evals=None,
    runs=1,
    seed=0,
    f=None,
    cr=None,
    bound_policy=None,
    tol=None,
    atol=None,
    stagnation=None,
    target=None,
    min=None,
    history=False,
    callback=None,
    polish=None,
):
    """gpude's own call: ``objective`` is a Python function of many points (an array of
    shape (n, D) in, n values out), a built-in or CEC 2017 function's name
    (``"rastrigin"``, ``"cec2017-f5"``: ``bounds`` may be left out, ``dim`` given), or
    ``gpude.expr(text)``. ``strategy`` any of gpude's (jso, lshade, shade, jade, jde,
    thesis, rand1bin, …); ``max_evals`` or ``generations`` the budget; ``runs``
    independent runs (streams 0 … runs − 1 of ``seed``); ``tol``/``atol``/``stagnation``
    the convergence stops; ``target`` an error to stop at; ``min`` a Python objective's
    known minimum (errors are measured from it); ``callback(run, generation, best)``
    returning True stops that run; ``polish`` ("lbfgs" or "nelder-mead") refines each
    run's best point after it (the result's ``polished`` entry, apart from ``x`` and
    ``fun``). Returns an ``OptimizeResult`` (a list of them when ``runs`` > 1)."""
    settings = {
        "strategy": strategy,
        "backend": backend,
        "precision": precision,
        "pop": pop,
        "generations": generations,
        "max_evals": max_evals,
        "runs": runs,
        "seed": seed,
        "f": f,
        "cr": cr,
        "bounds": bound_policy,
        "tol": tol,
        "atol": atol,
        "stagnation": stagnation,
        "target": target,
        "min": min,
        "history": history,
        "polish": polish,
    }
    if bounds is not None:
        lower, upper = _bounds(bounds)
        settings["lower"], settings["upper"] = lower, upper
        if dim is not None and dim != len(lower):
            raise ValueError(f"dim = {dim} but bounds give {len(lower)} variables")
        dim = len(lower)
    if dim is None:
        raise ValueError("give bounds (one pair per variable) or dim")
    settings["dim"] = int(dim)
    evaluate = None
    if isinstance(objective, str):
        if min is not None:
            raise ValueError("min applies to Python objectives and expressions only")
        settings["objective"], settings["name"] = "function", objective
    elif isinstance(objective, Expr):
        settings["objective"], settings["name"] = "expr", objective.text
        settings["min"] = objective.min if min is None else min
    elif callable(objective):
        settings["objective"] = "python"
        settings["name"] = getattr(objective, "__name__", "objective")
        evaluate = _batch_trampoline(objective)
    else:
        raise ValueError(
            "objective must be a function of an (n, D) array, a function's name, or gpude.expr(text)"
        )

    def observe(run, g, best):
        return bool(callback(run, g, best)) if callback is not None else False

    results = [_result(d) for d in _gpude.run(settings, evaluate, observe)]
    return results[0] if runs == 1 else results
