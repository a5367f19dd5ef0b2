//! Local refinement of a search's best point ("polishing", as SciPy's
//! `differential_evolution(polish=True)` does): the last digits of a smooth minimum come
//! cheaper from a local method than from more generations.
//!
//! Two methods, both argmin's, in f64 on the host with the objective's CPU code (the
//! values the results are verified with):
//! - [`Method::Lbfgs`]: L-BFGS (memory 10, Moré–Thuente line search) with central-
//!   difference gradients. Where the job keeps its individuals in the box (any bound
//!   policy but init-only), the search runs in y with x = lo + (hi − lo)·(1 + sin y)/2,
//!   smooth and unbounded in y, so every point it evaluates lies in the box; with
//!   init-only bounds (the box is for the initial population only) it runs on x itself.
//! - [`Method::NelderMead`]: Nelder–Mead from a simplex around the start (5 % of the
//!   box's width per component), for objectives without useful gradients; points
//!   outside the box are clamped into it when the job keeps its individuals there.
//!
//! The polished point replaces nothing by itself: [`Polished::improved`] says whether it
//! is better than the start, and callers report both.

use crate::error::{Error, Result};
use crate::job::config::Job;
use argmin::core::{CostFunction, Executor, Gradient, State};
use argmin::solver::linesearch::MoreThuenteLineSearch;
use argmin::solver::neldermead::NelderMead;
use argmin::solver::quasinewton::LBFGS;
use gpude_device::BoundPolicy;
use nalgebra::DVector;
use serde::Serialize;
use std::sync::atomic::{AtomicU64, Ordering};

/// The local method.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// L-BFGS with numerical gradients (smooth objectives).
    Lbfgs,
    /// Nelder–Mead (no gradients).
    NelderMead,
}

impl Method {
    /// `lbfgs` or `nelder-mead` (case and `_`/`-` do not matter).
    pub fn parse(s: &str) -> Result<Method> {
        match s.trim().to_ascii_lowercase().replace('_', "-").as_str() {
            "lbfgs" | "l-bfgs" | "l-bfgs-b" => Ok(Method::Lbfgs),
            "nelder-mead" | "neldermead" => Ok(Method::NelderMead),
            _ => Err(Error::invalid(
                "polish method",
                crate::error::clip(s),
                "lbfgs or nelder-mead",
            )),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Method::Lbfgs => "lbfgs",
            Method::NelderMead => "nelder-mead",
        }
    }
}

/// The most iterations of the local method by default (L-BFGS: each costs about
/// 2·D + a few evaluations; Nelder–Mead: one or two).
pub const DEFAULT_ITERATIONS: u64 = 200;

/// A polished point.
#[derive(Clone, Debug, Serialize)]
pub struct Polished {
    pub method: Method,
    /// The best point the local method found (the start when it found none better).
    #[serde(serialize_with = "ser_vec")]
    pub x: DVector<f64>,
    /// Its value in f64, and its error (value − the objective's reference).
    pub f: f64,
    pub error: f64,
    /// The start's value in f64.
    pub start_f: f64,
    /// The objective's evaluations the polish spent.
    pub evaluations: u64,
    /// Whether `x` is better than the start.
    pub improved: bool,
}

fn ser_vec<S: serde::Serializer>(v: &DVector<f64>, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.collect_seq(v.iter())
}

/// The objective in the coordinates the local method moves in.
#[derive(Clone)]
struct Problem<'a> {
    job: &'a Job,
    /// `Some` when the point must stay in the box (the job's bounds, transformed).
    boxed: bool,
    lo: &'a [f64],
    hi: &'a [f64],
    /// The method's coordinates are y (boxed L-BFGS) rather than x.
    transformed: bool,
    /// The evaluations so far (shared by the copies the methods hold).
    evaluations: &'a AtomicU64,
}

impl Problem<'_> {
    /// x from the method's coordinates.
    fn x_of(&self, p: &[f64]) -> Vec<f64> {
        p.iter()
            .enumerate()
            .map(|(j, &v)| {
                let (lo, hi) = (self.lo[j], self.hi[j]);
                if self.transformed {
                    lo + (hi - lo) * 0.5 * (1.0 + v.sin())
                } else if self.boxed {
                    v.clamp(lo, hi)
                } else {
                    v
                }
            })
            .collect()
    }

    /// The method's coordinates of x.
    fn p_of(&self, x: &[f64]) -> Vec<f64> {
        x.iter()
            .enumerate()
            .map(|(j, &v)| {
                let (lo, hi) = (self.lo[j], self.hi[j]);
                if self.transformed {
                    (2.0 * (v - lo) / (hi - lo) - 1.0).clamp(-1.0, 1.0).asin()
                } else {
                    v
                }
            })
            .collect()
    }

    fn value(&self, x: &[f64]) -> f64 {
        self.evaluations.fetch_add(1, Ordering::Relaxed);
        let v = self.job.objective().evaluate_f64(x);
        // The methods compare values: NaN counts as worse than anything.
        if v.is_nan() { f64::INFINITY } else { v }
    }
}

impl CostFunction for Problem<'_> {
    type Param = Vec<f64>;
    type Output = f64;
    fn cost(&self, p: &Vec<f64>) -> std::result::Result<f64, argmin::core::Error> {
        Ok(self.value(&self.x_of(p)))
    }
}

impl Gradient for Problem<'_> {
    type Param = Vec<f64>;
    type Gradient = Vec<f64>;
    /// Central differences in the method's coordinates, step ∛ε·max(|p_j|, 1).
    fn gradient(&self, p: &Vec<f64>) -> std::result::Result<Vec<f64>, argmin::core::Error> {
        let step = f64::EPSILON.cbrt();
        let mut q = p.clone();
        let mut g = Vec::with_capacity(p.len());
        for j in 0..p.len() {
            let h = step * p[j].abs().max(1.0);
            q[j] = p[j] + h;
            let up = self.value(&self.x_of(&q));
            q[j] = p[j] - h;
            let down = self.value(&self.x_of(&q));
            q[j] = p[j];
            let d = (up - down) / (2.0 * h);
            g.push(if d.is_finite() { d } else { 0.0 });
        }
        Ok(g)
    }
}

/// Polishes `x0` (a point of `job`'s dimension) with `method`, at most `iterations`
/// iterations. Refused for objectives without CPU code (PTX alone: nothing on the host
/// can evaluate them).
pub fn polish(job: &Job, x0: &[f64], method: Method, iterations: u64) -> Result<Polished> {
    let o = job.objective();
    if !o.has_cpu_code() {
        return Err(Error::invalid(
            "polish",
            crate::error::clip(&o.name()),
            "an objective the host can evaluate (a built-in or CEC 2017 function, an expression, a callback, or PTX with its CPU function): polishing runs on the host",
        ));
    }
    let d = job.dim() as usize;
    if x0.len() != d {
        return Err(Error::invalid(
            "polish start",
            format!("{} values", x0.len()),
            format!("{d} values, one per component"),
        ));
    }
    if iterations == 0 {
        return Err(Error::invalid("polish iterations", 0, "1 or more"));
    }
    let boxed = job.bounds() != BoundPolicy::InitOnly;
    let evaluations = AtomicU64::new(0);
    let problem = Problem {
        job,
        boxed,
        lo: job.lower(),
        hi: job.upper(),
        transformed: boxed && method == Method::Lbfgs,
        evaluations: &evaluations,
    };
    let start_x = problem.x_of(&problem.p_of(x0));
    let start_f = problem.value(&start_x);
    let start = problem.p_of(x0);
    let found: Option<(Vec<f64>, f64)> = match method {
        Method::Lbfgs => LBFGS::new(MoreThuenteLineSearch::new(), 10)
            .with_tolerance_grad(0.0)
            .and_then(|s| s.with_tolerance_cost(0.0))
            .and_then(|solver| {
                Executor::new(problem.clone(), solver)
                    .configure(|state| state.param(start.clone()).max_iters(iterations))
                    .run()
            })
            .ok()
            .and_then(|r| {
                let s = r.state();
                s.get_best_param().cloned().map(|p| (p, s.get_best_cost()))
            }),
        Method::NelderMead => {
            let mut simplex = vec![start.clone()];
            for j in 0..d {
                let mut v = start.clone();
                let width = (problem.hi[j] - problem.lo[j]).abs();
                v[j] += 0.05 * if width > 0.0 { width } else { 1.0 };
                simplex.push(v);
            }
            NelderMead::new(simplex)
                .with_sd_tolerance(0.0)
                .and_then(|solver| {
                    Executor::new(problem.clone(), solver)
                        .configure(|state| state.max_iters(iterations))
                        .run()
                })
                .ok()
                .and_then(|r| {
                    let s = r.state();
                    s.get_best_param().cloned().map(|p| (p, s.get_best_cost()))
                })
        }
    };
    let (x, f) = match found {
        Some((p, f)) if f < start_f => (problem.x_of(&p), f),
        _ => (start_x, start_f),
    };
    // The value at the point reported, evaluated once more (the method's best cost is
    // that value, but this way the two cannot drift apart).
    let f_x = problem.value(&x);
    let (x, f) = if f_x <= f { (x, f_x) } else { (x, f) };
    Ok(Polished {
        method,
        x: DVector::from_vec(x),
        f,
        error: f - o.reference(),
        start_f,
        evaluations: evaluations.load(Ordering::Relaxed),
        improved: f < start_f,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::objective::Objective;
    use gpude_device::Function;

    fn job(f: Function, d: u32, bounds: BoundPolicy) -> Job {
        Job::builder_for(Objective::Builtin(f), d)
            .domain(-5.0, 5.0)
            .bounds(bounds)
            .precision(crate::job::precision::Precision::F64)
            .build()
            .expect("a job")
    }

    #[test]
    fn lbfgs_finishes_a_smooth_minimum_and_counts_its_evaluations() {
        let j = job(Function::Rosenbrock, 4, BoundPolicy::Clip);
        let p = polish(&j, &[0.9, 0.8, 0.7, 0.6], Method::Lbfgs, 500).expect("polished");
        assert!(p.improved && p.error < 1e-8, "{p:?}");
        assert!(p.x.iter().all(|&v| (v - 1.0).abs() < 1e-3), "{p:?}");
        assert!(p.evaluations > 10 && p.start_f > p.f);
        // Unbounded (init-only) too.
        let j = job(Function::Sphere, 3, BoundPolicy::InitOnly);
        let p = polish(&j, &[0.3, -0.2, 0.1], Method::Lbfgs, 100).expect("polished");
        assert!(p.error < 1e-12, "{p:?}");
    }

    #[test]
    fn the_box_is_kept_and_a_minimum_on_its_edge_is_found() {
        // Sphere shifted out of the box [-5, 5]: its best point in the box is at 5.
        let o = Objective::expr("sum((x - 7)^2)", Some(0.0)).expect("expr");
        let j = Job::builder_for(o, 2)
            .domain(-5.0, 5.0)
            .bounds(BoundPolicy::Clip)
            .build()
            .expect("a job");
        for m in [Method::Lbfgs, Method::NelderMead] {
            let p = polish(&j, &[0.0, 1.0], m, 2000).expect("polished");
            assert!(
                p.x.iter().all(|&v| (-5.0..=5.0).contains(&v)),
                "{m:?} {p:?}"
            );
            assert!((p.f - 8.0).abs() < 1e-3, "{m:?} {p:?}");
        }
    }

    #[test]
    fn nelder_mead_needs_no_gradient() {
        let j = job(Function::Sphere, 2, BoundPolicy::Clip);
        let p = polish(&j, &[1.0, -1.0], Method::NelderMead, 400).expect("polished");
        assert!(p.improved && p.error < 1e-8, "{p:?}");
    }

    #[test]
    fn a_start_that_cannot_be_improved_is_kept() {
        let j = job(Function::Sphere, 2, BoundPolicy::Clip);
        let p = polish(&j, &[0.0, 0.0], Method::Lbfgs, 50).expect("polished");
        assert!(
            !p.improved && p.f == 0.0 && p.x.iter().all(|&v| v == 0.0),
            "{p:?}"
        );
    }

    #[test]
    fn bad_requests_are_refused_by_name() {
        let j = job(Function::Sphere, 2, BoundPolicy::Clip);
        let e = polish(&j, &[0.0], Method::Lbfgs, 10).expect_err("refused");
        assert!(e.to_string().contains("2 values"), "{e}");
        let e = polish(&j, &[0.0, 0.0], Method::Lbfgs, 0).expect_err("refused");
        assert!(e.to_string().contains("1 or more"), "{e}");
        let e = Method::parse("newton").expect_err("refused");
        assert!(e.to_string().contains("lbfgs or nelder-mead"), "{e}");
        assert_eq!(Method::parse("L-BFGS-B").ok(), Some(Method::Lbfgs));
        assert_eq!(Method::parse("Nelder_Mead").ok(), Some(Method::NelderMead));
    }
}
