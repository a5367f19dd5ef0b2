//! The extension module `gpude._gpude`: one function, [`run`], which the Python package
//! (`pysrc/gpude/__init__.py`) calls with a job's settings as a dict, its objective (a
//! built-in or CEC 2017 name, an expression, or a Python function evaluated through a
//! trampoline), and an observer. The Python package gives it SciPy's and gpude's calls;
//! this module only builds the jobs, runs them without holding the interpreter, and
//! hands back each result as a dict.

use gpude::host::config::{parse_bounds, parse_crossover, parse_strategy};
use gpude::run::control::Flow;
use gpude::run::polish::{DEFAULT_ITERATIONS, Method, Polished};
use gpude::{Backend, Job, Objective, Precision, RunResult, Solver, SolverOptions};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use std::sync::{Arc, Mutex};

/// A gpude error as a Python exception: bad input is a `ValueError`, anything else
/// (a GPU that fails, a file that cannot be read) a `RuntimeError`; the message is
/// gpude's.
fn py_err(e: gpude::Error) -> PyErr {
    match e {
        gpude::Error::InvalidParameter { .. }
        | gpude::Error::UnknownName { .. }
        | gpude::Error::Input { .. } => PyValueError::new_err(e.to_string()),
        other => PyRuntimeError::new_err(other.to_string()),
    }
}

/// The first Python exception raised while the runs ran (by the objective, the
/// observer or a signal): the runs stop at the next generation and it is raised after.
type Failure = Arc<Mutex<Option<PyErr>>>;

fn fail(failure: &Failure, e: PyErr) {
    let mut slot = failure.lock().unwrap_or_else(|p| p.into_inner());
    if slot.is_none() {
        *slot = Some(e);
    }
}

fn failed(failure: &Failure) -> bool {
    failure.lock().unwrap_or_else(|p| p.into_inner()).is_some()
}

/// A Python function of many points: the trampoline `f(points: bytes, n, dim)` gets the
/// `n` points as native-endian f64 values, row after row, and returns `n` numbers.
fn python_objective(f: Py<PyAny>, failure: Failure) -> impl Fn(&[f64], usize) -> Vec<f64> {
    move |xs: &[f64], dim: usize| {
        let n = xs.len().checked_div(dim).unwrap_or(0);
        if failed(&failure) {
            return vec![f64::NAN; n];
        }
        Python::attach(|py| {
            let bytes: Vec<u8> = xs.iter().flat_map(|v| v.to_ne_bytes()).collect();
            let got = f
                .bind(py)
                .call1((PyBytes::new(py, &bytes), n, dim))
                .and_then(|v| v.extract::<Vec<f64>>());
            match got {
                Ok(v) if v.len() == n => v,
                Ok(v) => {
                    fail(
                        &failure,
                        PyValueError::new_err(format!(
                            "the objective returned {} values for {n} points: one per point",
                            v.len()
                        )),
                    );
                    vec![f64::NAN; n]
                }
                Err(e) => {
                    fail(&failure, e);
                    vec![f64::NAN; n]
                }
            }
        })
    }
}

/// `settings[key]`, converted; `None` when it is absent or `None`.
fn opt<'py, T: FromPyObjectOwned<'py>>(s: &Bound<'py, PyDict>, key: &str) -> PyResult<Option<T>> {
    match s.get_item(key)? {
        Some(v) if !v.is_none() => match v.extract::<T>() {
            Ok(t) => Ok(Some(t)),
            Err(e) => {
                let e: PyErr = e.into();
                Err(PyValueError::new_err(format!("{key}: {e}")))
            }
        },
        _ => Ok(None),
    }
}

/// `settings[key]`, which must be there.
fn req<'py, T: FromPyObjectOwned<'py>>(s: &Bound<'py, PyDict>, key: &str) -> PyResult<T> {
    opt(s, key)?.ok_or_else(|| PyValueError::new_err(format!("{key} is missing")))
}

/// The jobs of `settings` (one per run, streams 0 …), with the objective of its
/// `objective` entry: `{"kind": "function", "name": …}`, `{"kind": "expr", "text": …,
/// "min": …}` or `{"kind": "python", "name": …, "min": …}` (evaluated by `evaluate`).
fn jobs(
    s: &Bound<'_, PyDict>,
    evaluate: Option<Py<PyAny>>,
    failure: &Failure,
) -> PyResult<Vec<Job>> {
    let dim: u32 = req(s, "dim")?;
    let kind: String = req(s, "objective")?;
    let min: Option<f64> = opt(s, "min")?;
    let (objective, domain) = match kind.as_str() {
        "function" => {
            let name: String = req(s, "name")?;
            let (objective, domain) = Objective::named(&name, dim).map_err(py_err)?;
            (objective, Some(domain))
        }
        "expr" => {
            let text: String = req(s, "name")?;
            (Objective::expr(&text, min).map_err(py_err)?, None)
        }
        "python" => {
            let name: String = req(s, "name")?;
            let f = evaluate
                .ok_or_else(|| PyValueError::new_err("a Python objective needs its function"))?;
            let objective = Objective::callback(name, min, python_objective(f, failure.clone()))
                .map_err(py_err)?;
            (objective, None)
        }
        other => {
            return Err(PyValueError::new_err(format!(
                "objective kind {other:?} is not one of: function, expr, python"
            )));
        }
    };
    let mut b = Job::builder_for(objective, dim);
    match (opt::<Vec<f64>>(s, "lower")?, opt::<Vec<f64>>(s, "upper")?) {
        (Some(lo), Some(hi)) => b = b.domain_box(lo, hi),
        (None, None) => match domain {
            Some((lo, hi)) => b = b.domain(lo, hi),
            None => {
                return Err(PyValueError::new_err(
                    "bounds are missing: this objective has no domain of its own",
                ));
            }
        },
        _ => return Err(PyValueError::new_err("give both bounds or neither")),
    }
    if let Some(name) = opt::<String>(s, "strategy")? {
        let (strategy, implied) = parse_strategy(&name).map_err(py_err)?;
        b = b.strategy(strategy);
        if let Some(c) = implied {
            b = b.crossover(c);
        }
    }
    if let Some(c) = opt::<String>(s, "crossover")? {
        b = b.crossover(parse_crossover(&c).map_err(py_err)?);
    }
    if let Some(p) = opt::<String>(s, "bounds")? {
        b = b.bounds(parse_bounds(&p).map_err(py_err)?);
    }
    if let Some(p) = opt::<String>(s, "precision")? {
        b = b.precision(Precision::parse(&p).map_err(py_err)?);
    }
    if let Some(v) = opt(s, "f")? {
        b = b.f(v);
    }
    if let Some(v) = opt(s, "cr")? {
        b = b.cr(v);
    }
    if let Some(v) = opt(s, "pop")? {
        b = b.pop(v);
    }
    if let Some(v) = opt(s, "generations")? {
        b = b.generations(v);
    }
    if let Some(v) = opt(s, "max_evals")? {
        b = b.max_evaluations(v);
    }
    if let Some(v) = opt(s, "target")? {
        b = b.target(v);
    }
    if let Some(v) = opt(s, "tol")? {
        b = b.tol(v);
    }
    if let Some(v) = opt(s, "atol")? {
        b = b.atol(v);
    }
    if let Some(v) = opt(s, "stagnation")? {
        b = b.stagnation(v);
    }
    let seed: u64 = opt(s, "seed")?.unwrap_or(0);
    let history: bool = opt(s, "history")?.unwrap_or(false);
    let runs: u32 = opt(s, "runs")?.unwrap_or(1);
    if runs == 0 {
        return Err(PyValueError::new_err("runs = 0 is not allowed: 1 or more"));
    }
    let first = b.seed(seed).history(history).build().map_err(py_err)?;
    Ok((0..runs).map(|k| first.clone().with_stream(k)).collect())
}

/// A result as a dict (`x` a list; the Python package makes it an array).
fn result_dict<'py>(py: Python<'py>, r: &RunResult) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("x", r.best_x.iter().copied().collect::<Vec<f64>>())?;
    d.set_item("fun", r.best_f)?;
    d.set_item("error", r.error)?;
    d.set_item("verified_error", r.verified_error)?;
    d.set_item("errors_disagree", r.errors_disagree)?;
    d.set_item("generations", r.generations)?;
    d.set_item("evaluations", r.evaluations)?;
    d.set_item("termination", format!("{:?}", r.termination))?;
    d.set_item("message", r.termination.describe())?;
    d.set_item("backend", r.backend)?;
    d.set_item("seed", r.seed)?;
    d.set_item("stream", r.stream)?;
    d.set_item("elapsed_s", r.elapsed.as_secs_f64())?;
    d.set_item("history", r.history.clone())?;
    Ok(d)
}

/// Runs the jobs of `settings` on `settings["backend"]` (`auto`, `cpu` or `cuda`) and
/// returns one result dict per run. `evaluate` is the objective's trampoline when it
/// is a Python function; `settings["polish"]` (`lbfgs`, `nelder-mead`) refines each
/// run's best point after it (the result's `polished` dict); `observe(run, generation,
/// best)` is called after each
/// generation the engine reports and stops the run when it returns true. The
/// interpreter is released while the runs run; an exception from the objective, the
/// observer or a signal (Ctrl-C) stops them and is raised here.
#[pyfunction]
#[pyo3(signature = (settings, evaluate=None, observe=None))]
fn run(
    py: Python<'_>,
    settings: &Bound<'_, PyDict>,
    evaluate: Option<Py<PyAny>>,
    observe: Option<Py<PyAny>>,
) -> PyResult<Vec<Py<PyDict>>> {
    let failure: Failure = Arc::new(Mutex::new(None));
    let jobs = jobs(settings, evaluate, &failure)?;
    let backend = Backend::parse(&opt::<String>(settings, "backend")?.unwrap_or("auto".into()))
        .map_err(py_err)?;
    let polish = opt::<String>(settings, "polish")?
        .map(|m| Method::parse(&m))
        .transpose()
        .map_err(py_err)?;
    type Ran = (RunResult, Option<Polished>);
    let results: gpude::Result<Vec<Ran>> = py.detach(|| {
        let solver = Solver::new(&SolverOptions {
            backend,
            ..SolverOptions::default()
        })?;
        let mut out = Vec::with_capacity(jobs.len());
        for (k, job) in jobs.iter().enumerate() {
            let watch = |g: u32, best: f64| -> Flow {
                let stop = Python::attach(|py| {
                    if let Err(e) = py.check_signals() {
                        fail(&failure, e);
                    }
                    if let Some(o) = &observe
                        && !failed(&failure)
                    {
                        match o.bind(py).call1((k, g, best)).and_then(|v| v.is_truthy()) {
                            Ok(true) => return true,
                            Ok(false) => {}
                            Err(e) => fail(&failure, e),
                        }
                    }
                    failed(&failure)
                });
                if stop { Flow::Stop } else { Flow::Continue }
            };
            let r = solver.run(job, Some(&watch))?;
            if failed(&failure) {
                break;
            }
            // The polish of a run stopped by the observer is left out, as the CLI does.
            let p = match polish {
                Some(m) if r.termination != gpude::Termination::Stopped => {
                    let x: Vec<f64> = r.best_x.iter().copied().collect();
                    Some(gpude::run::polish::polish(job, &x, m, DEFAULT_ITERATIONS)?)
                }
                _ => None,
            };
            out.push((r, p));
            if failed(&failure) {
                break;
            }
        }
        Ok(out)
    });
    if let Some(e) = failure.lock().unwrap_or_else(|p| p.into_inner()).take() {
        return Err(e);
    }
    let results = results.map_err(py_err)?;
    results
        .iter()
        .map(|(r, p)| {
            let d = result_dict(py, r)?;
            if let Some(p) = p {
                let q = PyDict::new(py);
                q.set_item("method", p.method.name())?;
                q.set_item("x", p.x.iter().copied().collect::<Vec<f64>>())?;
                q.set_item("fun", p.f)?;
                q.set_item("error", p.error)?;
                q.set_item("start_fun", p.start_f)?;
                q.set_item("evaluations", p.evaluations)?;
                q.set_item("improved", p.improved)?;
                d.set_item("polished", q)?;
            }
            Ok(d.unbind())
        })
        .collect()
}

/// The names of the built-in functions, with their domains and minima.
#[pyfunction]
fn functions() -> Vec<(String, f64, f64, f64)> {
    gpude::FUNCTIONS
        .iter()
        .map(|i| (i.name.to_string(), i.domain.0, i.domain.1, i.min))
        .collect()
}

#[pymodule]
fn _gpude(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(functions, m)?)?;
    m.add("KERNELS", gpude::KERNELS.len())?;
    Ok(())
}
