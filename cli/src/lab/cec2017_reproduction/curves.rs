//! Convergence plots of `gpude reproduce cec2017`: for each dimension and function, the
//! median over the runs of the best error f(best) − F* against the evaluations spent, one
//! line per strategy, on a log scale (errors below 1e-8 drawn at 1e-8, the competition
//! counting them as 0). Files `plots/D<d>_F<n>.png` and `.svg` under the output folder,
//! each written whole or not at all.
//!
//! The runs record their history (the best value after the initial population and after
//! every generation). The evaluations behind each value are exact: they follow from the
//! job alone ([`evaluation_schedule`]), L-SHADE's and jSO's shrinking populations
//! included. The curves are thinned to about [`CURVE_POINTS`] points before they are kept
//! (and written to runs.json), so a run's history lives only as long as its batch.

use super::{FunctionResult, ZERO_BELOW, display_name};
use crate::plot::{Chart, Corner, Line, LogAxis};
use crate::{CliError, Result};
use gpude::device::adaptive::lpsr_size;
use gpude::{Job, RunResult, Strategy};
use serde::Serialize;
use std::path::Path;

/// The most points a kept curve has (one more where the last point is added).
pub const CURVE_POINTS: usize = 400;
/// The plots' folder inside the output folder.
pub const PLOTS_DIR: &str = "plots";

/// The median curve of one strategy's runs on one function.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Curve {
    /// Evaluations spent at each point (the first: the initial population).
    pub evaluations: Vec<u64>,
    /// The median over the runs of f(best) − F* at that point (the search's own best
    /// value), errors below 1e-8 at 1e-8.
    pub median_error: Vec<f64>,
}

/// The evaluations a run of `job` has spent after its initial population and after each
/// of its first `len − 1` generations: Np·(1 + g) for the classic strategies and the
/// adaptive ones of fixed size; for L-SHADE and jSO, each generation's trials (its
/// population, or what is left of the budget) followed by the linear reduction, as both
/// engines run it. The schedule depends on the job only, not on the run's random numbers.
pub fn evaluation_schedule(job: &Job, len: usize) -> Vec<u64> {
    let Some(a) = job.adaptive() else {
        return (0..len)
            .map(|g| job.evaluations(u32::try_from(g).unwrap_or(u32::MAX)))
            .collect();
    };
    let shrinks = matches!(job.strategy(), Strategy::LShade | Strategy::Jso);
    let n0 = job.pop();
    let (mut n, mut spent) = (n0, u64::from(n0));
    let mut out = Vec::with_capacity(len);
    for _ in 0..len {
        out.push(spent);
        spent += u64::from(n).min(a.max_evaluations.saturating_sub(spent));
        if shrinks {
            n = n.min(lpsr_size(n0, a.min_pop, spent, a.max_evaluations));
        }
    }
    out
}

/// The median of `values` (sorted in place); a NaN counts as +∞. NaN for no values.
fn median_of(values: &mut [f64]) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    for v in values.iter_mut().filter(|v| v.is_nan()) {
        *v = f64::INFINITY;
    }
    values.sort_unstable_by(f64::total_cmp);
    let m = values.len() / 2;
    if values.len() % 2 == 1 {
        values[m]
    } else {
        // The mean of the two middle values (∞ where either is).
        values[m - 1] / 2.0 + values[m] / 2.0
    }
}

/// Per generation, the median over the runs of `history − reference`, errors below 1e-8
/// at 1e-8 (a value that is not a number counts as +∞). A run that ended before the
/// longest one keeps its last value (a run's best does not change once it stops); empty
/// histories are left out. Empty when every history is.
pub fn median_curve(histories: &[&[f64]], reference: f64) -> Vec<f64> {
    let runs: Vec<&[f64]> = histories
        .iter()
        .copied()
        .filter(|h| !h.is_empty())
        .collect();
    let len = runs.iter().map(|h| h.len()).max().unwrap_or(0);
    let mut column = vec![0.0; runs.len()];
    (0..len)
        .map(|k| {
            for (c, h) in column.iter_mut().zip(&runs) {
                let e = h[k.min(h.len() - 1)] - reference;
                *c = if e < ZERO_BELOW { ZERO_BELOW } else { e };
            }
            median_of(&mut column)
        })
        .collect()
}

/// The indices kept of a curve of `len` points: every k-th, the last always, at most
/// `max + 1` in all.
pub fn thinned(len: usize, max: usize) -> Vec<usize> {
    if len <= max.max(2) {
        return (0..len).collect();
    }
    let step = (len - 1).div_ceil(max.max(2) - 1);
    let mut keep: Vec<usize> = (0..len).step_by(step).collect();
    if keep.last() != Some(&(len - 1)) {
        keep.push(len - 1);
    }
    keep
}

/// The median curve of a batch's `results` (run k of `job` with stream k), thinned to
/// about [`CURVE_POINTS`] points. Every run must have its history.
pub fn curve(job: &Job, results: &[RunResult], reference: f64) -> Result<Curve> {
    let histories = results
        .iter()
        .map(|r| {
            r.history.as_deref().ok_or_else(|| {
                CliError::runtime(format!(
                    "the run of stream {} came back without the history its job asked for",
                    r.stream
                ))
            })
        })
        .collect::<Result<Vec<&[f64]>>>()?;
    let median = median_curve(&histories, reference);
    let evaluations = evaluation_schedule(job, median.len());
    let keep = thinned(median.len(), CURVE_POINTS);
    Ok(Curve {
        evaluations: keep.iter().map(|&k| evaluations[k]).collect(),
        median_error: keep.iter().map(|&k| median[k]).collect(),
    })
}

/// The path of a function's plot inside the output folder, without the extension:
/// `plots/D10_F5`.
pub fn stem(dim: u32, function: u32) -> String {
    format!("{PLOTS_DIR}/D{dim}_F{function}")
}

/// Writes the plot of every function of `results` into `out/plots` (made if missing):
/// `D<d>_F<n>.png` and `.svg`.
pub fn write_all(
    out: &Path,
    results: &[FunctionResult],
    strategies: &[Strategy],
    runs: u32,
) -> Result<()> {
    let dir = out.join(PLOTS_DIR);
    std::fs::create_dir_all(&dir)
        .map_err(|e| CliError::runtime(format!("creating {}: {e}", dir.display())))?;
    for f in results {
        plot(out, f, strategies, runs)?;
    }
    Ok(())
}

fn plot(out: &Path, f: &FunctionResult, strategies: &[Strategy], runs: u32) -> Result<()> {
    let lines: Vec<Line> = strategies
        .iter()
        .filter_map(|&s| f.runs_of(s).map(|r| (s, r)))
        .map(|(s, r)| Line {
            label: display_name(s).into(),
            points: r
                .curve
                .evaluations
                .iter()
                .zip(&r.curve.median_error)
                .filter(|(_, e)| e.is_finite())
                .map(|(&x, &e)| (x as f64, e))
                .collect(),
            band: Vec::new(),
        })
        .collect();
    // The decades the curves span; the bottom one no lower than 1e-8, where the errors
    // below it are drawn.
    let y = LogAxis::of(lines.iter().flat_map(|l| l.points.iter().map(|p| p.1)))
        .floored(ZERO_BELOW.log10().round() as i32, "≤ 1e-8");
    let chart = Chart {
        title: format!(
            "F{} {}, D = {}: median error of {runs} runs",
            f.function, f.title, f.dim
        ),
        x_desc: "evaluations",
        x_max: f.budget as f64,
        y_desc: "median f(best) − F* (log scale; below 1e-8 drawn at 1e-8)",
        y,
        legend: Corner::LowerLeft,
        lines,
    };
    let stem = stem(f.dim, f.function);
    let failed =
        |p: &Path, e: std::io::Error| CliError::runtime(format!("writing {}: {e}", p.display()));
    let png = out.join(format!("{stem}.png"));
    chart.png(&png).map_err(|e| failed(&png, e))?;
    let svg = out.join(format!("{stem}.svg"));
    chart.svg(&svg).map_err(|e| failed(&svg, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_curve_holds_ended_runs_and_clamps_small_errors() {
        // F* = 100; three runs, the second ending after two generations.
        let a = [110.0, 104.0, 101.0, 100.0];
        let b = [130.0, 100.5];
        let c = [120.0, 102.0, 100.2, 100.000_000_001];
        let m = median_curve(&[&a, &b, &c, &[]], 100.0);
        assert_eq!(m.len(), 4, "as long as the longest run");
        assert_eq!(m[0], 20.0);
        assert_eq!(m[1], 2.0);
        // b keeps 0.5: the median of {1, 0.5, 0.2}.
        assert!((m[2] - 0.5).abs() < 1e-12, "{}", m[2]);
        // {0 → 1e-8, 0.5, 1e-9 → 1e-8}: errors below 1e-8 at 1e-8.
        assert_eq!(m[3], ZERO_BELOW);
        // An even count takes the middle pair's mean; a NaN counts as +∞.
        let m = median_curve(&[&[101.0], &[103.0]], 100.0);
        assert!((m[0] - 2.0).abs() < 1e-12);
        let m = median_curve(&[&[f64::NAN], &[f64::NAN], &[101.0]], 100.0);
        assert_eq!(m[0], f64::INFINITY);
        assert!(median_curve(&[&[]], 0.0).is_empty());
    }

    #[test]
    fn thinning_keeps_the_ends_and_bounds_the_count() {
        assert_eq!(thinned(5, 400), [0, 1, 2, 3, 4]);
        for len in [401, 1000, 9999, 250_001] {
            let k = thinned(len, 400);
            assert_eq!(k[0], 0);
            assert_eq!(*k.last().expect("points"), len - 1);
            assert!(k.len() <= 401 && k.len() >= 200, "{len}: {}", k.len());
            assert!(k.windows(2).all(|w| w[0] < w[1]));
        }
    }

    #[test]
    fn the_schedule_is_what_the_cpu_engine_spends() {
        let solver = gpude::Solver::new(&gpude::SolverOptions {
            backend: gpude::Backend::Cpu,
            ..gpude::SolverOptions::default()
        })
        .expect("the CPU engine");
        for (s, dim, budget) in [
            (Strategy::Jso, 10, 3000),
            (Strategy::LShade, 10, 3000),
            (Strategy::Shade, 5, 2000),
            (Strategy::Thesis, 10, 3000),
        ] {
            let b = Job::builder(gpude::Function::Rastrigin, dim)
                .strategy(s)
                .max_evaluations(budget)
                .history(true);
            let j = if s.is_adaptive() { b } else { b.pop(100) }
                .build()
                .expect("a job");
            let r = solver.run(&j, None).expect("a run");
            let h = r.history.as_ref().expect("history");
            assert_eq!(h.len() as u32, r.generations + 1);
            let e = evaluation_schedule(&j, h.len());
            assert_eq!(e[0], u64::from(j.pop()), "{s:?}");
            assert_eq!(*e.last().expect("points"), r.evaluations, "{s:?}");
            assert!(e.windows(2).all(|w| w[0] < w[1]), "{s:?}: {e:?}");
            if matches!(s, Strategy::Jso | Strategy::LShade) {
                // The population shrinks: the last steps are smaller than the first.
                let first = e[1] - e[0];
                let last = e[e.len() - 2] - e[e.len() - 3];
                assert!(last < first, "{s:?}: {first} then {last}");
            } else {
                assert!(e.windows(2).all(|w| w[1] - w[0] == u64::from(j.pop())));
            }
        }
    }
}
