"""The Python package on the CPU engine (backend="cpu": the same on any machine): SciPy's
call and result, gpude's own call, callbacks that stop, and errors as exceptions."""

import math

import numpy as np
import pytest

import gpude

CPU = {"backend": "cpu"}


def sphere(x):
    return float(np.sum(x**2))


def rosenbrock(x, a=1.0):
    return float(np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (a - x[:-1]) ** 2))


def test_the_quick_start_call_finds_the_minimum():
    r = gpude.differential_evolution(lambda x: (x**2).sum(), [(-5, 5)] * 10, seed=1, **CPU)
    assert r.success and r.message == "Optimization terminated successfully."
    assert r.x.shape == (10,) and r.fun < 1e-8 and r.verified_error < 1e-8
    # The polish's evaluations count, as in SciPy.
    assert r.nit == r.generations and r.nfev == 150 * (1 + r.nit) + r.polished["evaluations"]
    assert r.backend == "cpu" and r.termination == "Converged"
    # Attributes are keys, as in SciPy's OptimizeResult.
    assert r["fun"] == r.fun and "x" in r


def test_one_seed_gives_the_same_bits():
    a = gpude.differential_evolution(rosenbrock, [(-2, 2)] * 4, seed=7, maxiter=50, **CPU)
    b = gpude.differential_evolution(rosenbrock, [(-2, 2)] * 4, seed=7, maxiter=50, **CPU)
    c = gpude.differential_evolution(rosenbrock, [(-2, 2)] * 4, seed=8, maxiter=50, **CPU)
    assert a.x.tobytes() == b.x.tobytes() and a.fun == b.fun
    assert a.x.tobytes() != c.x.tobytes()


def test_args_vectorized_and_bounds_objects():
    args_seen = []

    def f(x, a):
        args_seen.append(a)
        return rosenbrock(x, a)

    r = gpude.differential_evolution(f, [(-2, 2)] * 3, args=(1.0,), seed=3, maxiter=40, **CPU)
    assert set(args_seen) == {1.0} and r.x.shape == (3,)

    shapes = []

    def fv(x):
        shapes.append(x.shape)
        return np.sum(x**2, axis=0)

    r = gpude.differential_evolution(
        fv, [(-1, 1)] * 3, vectorized=True, popsize=4, maxiter=20, seed=1, **CPU
    )
    # SciPy's convention: shape (D, S).
    assert shapes[0] == (3, 12) and r.nit == 20

    class Bounds:
        lb = [-1.0, -1.0]
        ub = [1.0, 2.0]

    r = gpude.differential_evolution(sphere, Bounds(), seed=2, maxiter=30, **CPU)
    assert -1.0 <= r.x[0] <= 1.0 and -1.0 <= r.x[1] <= 2.0


def test_the_callback_sees_generations_and_stops():
    seen = []

    def cb(intermediate_result):
        seen.append((intermediate_result.nit, intermediate_result.fun))
        return intermediate_result.nit >= 5

    r = gpude.differential_evolution(sphere, [(-5, 5)] * 4, seed=1, callback=cb, tol=0, **CPU)
    assert [g for g, _ in seen] == [0, 1, 2, 3, 4, 5]
    assert r.nit == 5 and not r.success and "callback" in r.message
    assert all(b >= a for (_, a), (_, b) in zip(seen[1:], seen)), "the best never worsens"

    def stop(_):
        raise StopIteration

    r = gpude.differential_evolution(sphere, [(-5, 5)] * 4, seed=1, callback=stop, **CPU)
    assert not r.success and r.nit <= 1


def test_what_gpude_cannot_honour_is_refused():
    b = [(-1, 1)] * 2
    for kwargs, words in [
        ({"mutation": (0.5, 1.0)}, "dithering"),
        ({"init": "latinhypercube"}, "init"),
        ({"updating": "immediate"}, "updating"),
        ({"constraints": [object()]}, "constraints"),
        ({"x0": [0.0, 0.0]}, "x0"),
        ({"integrality": [True, False]}, "integrality"),
        ({"strategy": "randtobest1bin"}, "randtobest1bin"),
    ]:
        with pytest.raises(ValueError, match=words):
            gpude.differential_evolution(sphere, b, **kwargs, **CPU)
    # Left at their defaults, they take gpude's nearest behaviour; False is fine.
    r = gpude.differential_evolution(sphere, b, polish=False, maxiter=5, seed=1, **CPU)
    assert r.nit == 5


def test_polish_refines_the_best_as_scipy_does():
    kw = dict(seed=5, maxiter=60, tol=0, **CPU)
    raw = gpude.differential_evolution(rosenbrock, [(-2, 2)] * 4, polish=False, **kw)
    pol = gpude.differential_evolution(rosenbrock, [(-2, 2)] * 4, **kw)  # polish=True
    assert pol.nit == raw.nit and pol.nfev > raw.nfev
    assert pol.fun < raw.fun and pol.fun < 1e-6, (pol.fun, raw.fun)
    assert np.all(np.abs(pol.x) <= 2)
    # gpude's own call reports the polish apart.
    r = gpude.minimize("rosenbrock", dim=4, strategy="rand1bin", generations=60,
                       polish="nelder-mead", seed=1, **CPU)
    p = r.polished
    assert p["method"] == "nelder-mead" and p["evaluations"] > 0
    assert p["fun"] <= r.fun and r.fun == r["fun"]
    with pytest.raises(ValueError, match="lbfgs or nelder-mead"):
        gpude.minimize("sphere", dim=2, polish="newton", **CPU)


def test_trials_stay_inside_the_bounds():
    seen = []

    def f(x):
        seen.append(x.copy())
        return float(np.sum((x - 3.0) ** 2))  # its minimum lies outside the box

    r = gpude.differential_evolution(f, [(-1, 1)] * 2, seed=1, maxiter=30, **CPU)
    xs = np.array(seen)
    assert np.all(xs >= -1) and np.all(xs <= 1)
    assert np.allclose(r.x, 1.0, atol=1e-6)


def test_bad_input_and_failing_objectives_raise_with_the_message():
    with pytest.raises(ValueError, match="pairs"):
        gpude.differential_evolution(sphere, [(-1, 1, 2)], **CPU)
    with pytest.raises(ValueError, match="lower|upper|bound"):
        gpude.differential_evolution(sphere, [(1, -1)] * 2, **CPU)

    class Boom(RuntimeError):
        pass

    calls = []

    def boom(x):
        calls.append(1)
        if len(calls) > 30:
            raise Boom("objective failed")
        return sphere(x)

    with pytest.raises(Boom, match="objective failed"):
        gpude.differential_evolution(boom, [(-1, 1)] * 2, seed=1, maxiter=1000, tol=0, **CPU)
    # It stopped at once, not after a thousand generations.
    assert len(calls) < 200

    with pytest.raises(ValueError, match="one value per point"):
        gpude.differential_evolution(
            lambda x: np.zeros(3), [(-1, 1)] * 2, vectorized=True, **CPU
        )
    with pytest.raises(ValueError, match="scalar"):
        gpude.differential_evolution(lambda x: x, [(-1, 1)] * 2, **CPU)


def test_nan_values_lose_against_numbers():
    def f(x):
        return math.nan if x[0] > 0 else sphere(x)

    r = gpude.differential_evolution(f, [(-1, 1)] * 2, seed=4, maxiter=60, **CPU)
    assert r.x[0] <= 0 and math.isfinite(r.fun)


def test_minimize_takes_names_expressions_and_array_functions():
    r = gpude.minimize("rastrigin", dim=10, strategy="jso", max_evals=20_000, seed=1, **CPU)
    assert r.x.shape == (10,) and r.evaluations <= 20_000 and r.verified_error < 50
    r = gpude.minimize(
        gpude.expr("sum(x^2) + 1", min=1), [(-3, 3)] * 5, strategy="lshade",
        max_evals=15_000, seed=2, **CPU,
    )
    assert abs(r.fun - 1) < 1e-6 and r.error < 1e-6

    rows = []

    def many(xs):
        rows.append(xs.shape)
        return np.sum((xs - 0.5) ** 2, axis=1)

    rs = gpude.minimize(many, [(-2, 2)] * 3, strategy="jade", pop=30, generations=80,
                        runs=3, seed=5, min=0.0, history=True, **CPU)
    assert len(rs) == 3 and rows[0] == (30, 3)
    assert [r.stream for r in rs] == [0, 1, 2]
    assert all(np.allclose(r.x, 0.5, atol=1e-3) for r in rs)
    assert all(r.history.shape == (81,) and np.all(np.diff(r.history) <= 0) for r in rs)

    stops = []

    def cb(run, g, best):
        stops.append(run)
        return g >= 3

    rs = gpude.minimize("sphere", dim=4, generations=100, runs=2, callback=cb, **CPU)
    assert [r.generations for r in rs] == [3, 3] and set(stops) == {0, 1}


def test_minimize_refuses_what_it_cannot_run():
    with pytest.raises(ValueError, match="unknown function|not a known"):
        gpude.minimize("no-such-function", dim=3, **CPU)
    with pytest.raises(ValueError, match="dim"):
        gpude.minimize(lambda xs: xs.sum(axis=1))
    with pytest.raises(ValueError, match="runs = 0"):
        gpude.minimize("sphere", dim=3, runs=0, **CPU)
    with pytest.raises(ValueError, match="backend|cpu|cuda"):
        gpude.minimize("sphere", dim=3, backend="tpu")


def test_scipy_and_gpude_run_the_same_script():
    scipy_optimize = pytest.importorskip("scipy.optimize")
    results = {}
    for name, de in [("scipy", scipy_optimize.differential_evolution),
                     ("gpude", gpude.differential_evolution)]:
        # The same calls, unchanged but for the function.
        r1 = de(rosenbrock, [(-2, 2)] * 3, seed=1, polish=False)
        r2 = de(lambda x: np.sum(x**2, axis=0), [(-5, 5)] * 4, vectorized=True, seed=2,
                maxiter=200, tol=1e-8, polish=False, updating="deferred")
        r3 = de(sphere, [(-5, 5)] * 2, strategy="rand1bin", mutation=0.6, recombination=0.9,
                seed=3, maxiter=100, atol=1e-12, polish=False)
        results[name] = (r1, r2, r3)
    for s, g in zip(results["scipy"], results["gpude"]):
        for key in ("x", "fun", "nit", "nfev", "success", "message"):
            assert key in s and key in g, key
        for r in (s, g):
            assert isinstance(r.fun, float) and isinstance(r.x, np.ndarray)
            assert isinstance(r.nit, int) and isinstance(r.nfev, int)
            assert isinstance(r.success, (bool, np.bool_)) and isinstance(r.message, str)
        assert type(g.fun) is type(s.fun) and g.x.dtype == s.x.dtype
        assert g.x.shape == s.x.shape
        # Both find these minima.
        assert g.fun < 1e-4 and s.fun < 1e-4, (g.fun, s.fun)
