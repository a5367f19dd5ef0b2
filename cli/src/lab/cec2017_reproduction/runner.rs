//! Runs gpude's strategies on the CEC 2017 functions (at one D, all runs of a strategy
//! on every function in one batch) and compares gpude's jSO with the published jSO runs.

use super::published;
use super::{ALPHA, CLASSIC_POP, JSO, Options, SHOWN, WITHIN, ZERO_BELOW, curves, key_name};
use crate::Result;
use crate::stats::{self, RankSum, Verdict};
use gpude::cec2017::{DataSource, FunctionId};
use gpude::host::config::strategy_name;
use gpude::{Job, Objective, Precision, Solver, Strategy};
use serde::Serialize;
use std::collections::BTreeMap;
use std::time::Instant;

/// Errors below [`ZERO_BELOW`] become 0.
pub fn competition_error(e: f64) -> f64 {
    if e < ZERO_BELOW { 0.0 } else { e }
}

/// One strategy's runs on one function.
#[derive(Clone, Debug, Serialize)]
pub struct StrategyRuns {
    /// `jso`, `lshade`.
    pub strategy: String,
    /// The final (verified) errors, below 1e-8 counted as 0, run k from stream k.
    pub errors: Vec<f64>,
    pub mean: f64,
    /// Sample standard deviation (n − 1).
    pub std: f64,
    pub median: f64,
    /// Evaluations each run spent (the budget).
    pub evaluations: Vec<u64>,
    /// Runs whose search error and verified error disagreed beyond rounding.
    pub errors_disagree: usize,
    /// Wall time of the batch these runs were part of, seconds: in `reproduce`, the
    /// strategy's runs of every function at this D together.
    pub wall_s: f64,
    /// The median error over the runs against the evaluations spent (the plots').
    pub curve: curves::Curve,
}

/// gpude's jSO against the published jSO on one function.
#[derive(Clone, Debug, Serialize)]
pub struct Comparison {
    /// The mean of the published runs (full precision, from the CSV).
    pub published_mean: f64,
    /// gpude's mean over the published mean; None when the published mean is below 1e-8.
    pub ratio: Option<f64>,
    /// Both means below 1e-8.
    pub both_below: bool,
    /// Ratio at most 1.1, or both below 1e-8.
    pub within: bool,
    pub rank_sum: RankSum,
    pub verdict: Verdict,
}

/// One function at one D.
#[derive(Clone, Debug, Serialize)]
pub struct FunctionResult {
    pub dim: u32,
    pub function: u32,
    pub title: String,
    pub budget: u64,
    pub gpude: Vec<StrategyRuns>,
    /// The published mean ± sd of [`SHOWN`] (None where the tables have no entry).
    pub published: BTreeMap<String, Option<published::Summary>>,
    /// gpude's jSO against the published jSO runs (when both are there).
    pub jso_vs_published: Option<Comparison>,
}

impl FunctionResult {
    pub fn runs_of(&self, s: Strategy) -> Option<&StrategyRuns> {
        self.gpude.iter().find(|r| r.strategy == key_name(s))
    }
}

/// The counts of one dimension's table.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Summary {
    pub dim: u32,
    pub functions: usize,
    /// Functions with a comparison (gpude's jSO run and the published runs there).
    pub compared: usize,
    pub within: usize,
    pub better: usize,
    pub same: usize,
    pub worse: usize,
}

/// Everything `runs.json` holds.
#[derive(Clone, Debug, Serialize)]
pub struct Reproduction {
    pub command: String,
    pub backend: String,
    pub cpu_threads: usize,
    pub seed: u64,
    pub runs: u32,
    pub quick: bool,
    pub evaluations_per_dim: u64,
    pub precision: &'static str,
    pub reference: String,
    pub data: String,
    pub alpha: f64,
    pub within_factor: f64,
    pub zero_below: f64,
    pub summaries: Vec<Summary>,
    pub results: Vec<FunctionResult>,
}

/// The jobs of one strategy's runs on one function (streams 0 … runs − 1).
fn strategy_jobs(
    objective: &Objective,
    strategy: Strategy,
    dim: u32,
    options: &Options,
) -> Result<Vec<Job>> {
    Ok((0..options.runs)
        .map(|stream| {
            let b = Job::builder_for(objective.clone(), dim)
                .strategy(strategy)
                .precision(Precision::F64)
                .max_evaluations(options.budget(dim))
                .seed(options.seed)
                .stream(stream)
                .history(true);
            // The classic strategies: Np = CLASSIC_POP, generations as many as the budget
            // pays for whole (Np·(1 + g) ≤ budget), F and Cr at their defaults, and the
            // adaptive strategies' bound rule (midpoint), so that every run stays in the
            // box where the functions have their minimum F*.
            let b = if strategy.is_adaptive() {
                b
            } else {
                b.pop(CLASSIC_POP).bounds(gpude::BoundPolicy::Midpoint)
            };
            b.build()
        })
        .collect::<gpude::Result<Vec<Job>>>()?)
}

/// One strategy's runs on one function from their jobs and results; `wall_s` is the
/// wall time of the batch they ran in.
fn strategy_runs(
    strategy: Strategy,
    objective: &Objective,
    jobs: &[Job],
    results: &[gpude::RunResult],
    wall_s: f64,
) -> Result<StrategyRuns> {
    let curve = curves::curve(&jobs[0], results, objective.reference())?;
    let errors: Vec<f64> = results
        .iter()
        .map(|r| competition_error(r.verified_error))
        .collect();
    Ok(StrategyRuns {
        strategy: key_name(strategy).into(),
        mean: stats::mean(&errors),
        std: stats::std_dev(&errors),
        median: stats::median(&errors),
        evaluations: results.iter().map(|r| r.evaluations).collect(),
        errors_disagree: results.iter().filter(|r| r.errors_disagree).count(),
        errors,
        wall_s,
        curve,
    })
}

/// Runs one strategy on one function: all runs in one batch.
pub fn run_strategy(
    solver: &Solver,
    objective: &Objective,
    strategy: Strategy,
    dim: u32,
    options: &Options,
) -> Result<StrategyRuns> {
    let jobs = strategy_jobs(objective, strategy, dim, options)?;
    let start = Instant::now();
    let results = solver.run_batch(&jobs)?;
    strategy_runs(
        strategy,
        objective,
        &jobs,
        &results,
        start.elapsed().as_secs_f64(),
    )
}

/// Runs every strategy on every function of `options` at dimension `dim`: each
/// strategy's runs of all the functions in one batch (on the GPU, a launch per function,
/// the launches side by side on the engine's streams), then each function's results
/// and its comparison with the published jSO. `progress` hears each batch's strategy
/// and wall time.
pub fn run_dimension(
    solver: &Solver,
    source: &DataSource,
    published: &published::Published,
    options: &Options,
    dim: u32,
    mut progress: impl FnMut(Strategy, f64),
) -> Result<Vec<FunctionResult>> {
    let objectives = options
        .functions
        .iter()
        .map(|&id| Objective::cec2017(source, id, dim))
        .collect::<gpude::Result<Vec<_>>>()?;
    let mut runs: Vec<Vec<StrategyRuns>> = vec![Vec::new(); objectives.len()];
    for &s in &options.strategies {
        let per: Vec<Vec<Job>> = objectives
            .iter()
            .map(|o| strategy_jobs(o, s, dim, options))
            .collect::<Result<_>>()?;
        let all: Vec<Job> = per.iter().flatten().cloned().collect();
        let start = Instant::now();
        let results = solver.run_batch(&all)?;
        let wall_s = start.elapsed().as_secs_f64();
        progress(s, wall_s);
        let mut from = 0;
        for (k, jobs) in per.iter().enumerate() {
            let to = from + jobs.len();
            runs[k].push(strategy_runs(
                s,
                &objectives[k],
                jobs,
                &results[from..to],
                wall_s,
            )?);
            from = to;
        }
    }
    Ok(options
        .functions
        .iter()
        .zip(runs)
        .map(|(&id, gpude)| function_result(published, options, id, dim, gpude))
        .collect())
}

/// One function's result from its strategies' runs.
fn function_result(
    published: &published::Published,
    options: &Options,
    id: FunctionId,
    dim: u32,
    gpude: Vec<StrategyRuns>,
) -> FunctionResult {
    let f = id.number();
    let jso_vs_published = gpude
        .iter()
        .find(|r| r.strategy == strategy_name(Strategy::Jso))
        .zip(published.runs(JSO, dim, f))
        .map(|(ours, theirs)| compare(&ours.errors, theirs));
    FunctionResult {
        dim,
        function: f,
        title: id.title().into(),
        budget: options.budget(dim),
        gpude,
        published: SHOWN
            .iter()
            .map(|a| (a.to_string(), published.summary(a, dim, f)))
            .collect(),
        jso_vs_published,
    }
}

/// The significant digits of the published jSO runs (`201.957`, `3.24135e-05`).
pub const PUBLISHED_DIGITS: usize = 6;

/// `v` rounded to `digits` significant digits.
pub fn round_sig(v: f64, digits: usize) -> f64 {
    if v == 0.0 || !v.is_finite() {
        return v;
    }
    format!("{v:.*e}", digits.saturating_sub(1))
        .parse()
        .unwrap_or(v)
}

/// gpude's jSO runs against the published ones. The rank-sum test sees gpude's errors
/// rounded to the published runs' 6 significant digits: otherwise runs that end on the
/// same plateau (F22's 100, F20's 0.312175) would rank apart only by the digits the
/// published files leave out.
pub fn compare(ours: &[f64], theirs: &[f64]) -> Comparison {
    let (m, pm) = (stats::mean(ours), stats::mean(theirs));
    let both_below = m < ZERO_BELOW && pm < ZERO_BELOW;
    let ratio = (pm >= ZERO_BELOW).then(|| m / pm);
    let printed: Vec<f64> = ours
        .iter()
        .map(|&e| round_sig(e, PUBLISHED_DIGITS))
        .collect();
    let rank_sum = stats::rank_sum(&printed, theirs);
    Comparison {
        published_mean: pm,
        ratio,
        both_below,
        within: both_below || ratio.is_some_and(|r| r <= WITHIN),
        verdict: rank_sum.verdict(ALPHA),
        rank_sum,
    }
}

/// The result of one function: gpude's strategies (each in a batch of its own), then
/// the comparison.
pub fn run_function(
    solver: &Solver,
    source: &DataSource,
    published: &published::Published,
    options: &Options,
    id: FunctionId,
    dim: u32,
) -> Result<FunctionResult> {
    let objective = Objective::cec2017(source, id, dim)?;
    let mut gpude = Vec::new();
    for &s in &options.strategies {
        gpude.push(run_strategy(solver, &objective, s, dim, options)?);
    }
    Ok(function_result(published, options, id, dim, gpude))
}

/// The counts of dimension `dim`.
pub fn summarise(dim: u32, results: &[FunctionResult]) -> Summary {
    let mut s = Summary {
        dim,
        ..Summary::default()
    };
    for r in results.iter().filter(|r| r.dim == dim) {
        s.functions += 1;
        if let Some(c) = &r.jso_vs_published {
            s.compared += 1;
            s.within += c.within as usize;
            match c.verdict {
                Verdict::Better => s.better += 1,
                Verdict::Same => s.same += 1,
                Verdict::Worse => s.worse += 1,
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comparisons_count_zeros_and_ratios() {
        let zeros = [0.0; 5];
        let c = compare(&zeros, &zeros);
        assert!(c.both_below && c.within && c.ratio.is_none());
        assert_eq!(c.verdict, Verdict::Same);
        let c = compare(&[1.0; 5], &zeros);
        assert!(!c.within && c.ratio.is_none());
        assert_eq!(c.verdict, Verdict::Worse);
        let c = compare(&[2.2, 2.2, 2.2], &[2.0, 2.0, 2.0]);
        assert!((c.ratio.expect("ratio") - 1.1).abs() < 1e-12);
        assert!(c.within);
        let c = compare(&[2.3, 2.3, 2.3], &[2.0, 2.0, 2.0]);
        assert!(!c.within);
        // Plateaus tie at the published precision.
        let c = compare(&[100.000_000_3, 100.000_000_1, 100.0], &[100.0; 3]);
        assert_eq!((c.rank_sum.p, c.verdict), (1.0, Verdict::Same));
        let c = compare(&[100.003; 3], &[100.0; 3]);
        assert!(c.rank_sum.z > 0.0);
        assert_eq!(round_sig(0.312_174_86, 6), 0.312_175);
        assert_eq!(round_sig(3.241_354e-5, 6), 3.241_35e-5);
        assert_eq!(round_sig(0.0, 6), 0.0);
        assert_eq!(competition_error(9.9e-9), 0.0);
        assert_eq!(competition_error(1e-8), 1e-8);
    }
}
