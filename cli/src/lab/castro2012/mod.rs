//! `gpude reproduce castro2012`: the experiment of Castro Liera et al. 2012 —
//! PSO on 21 islands (swarms) of 128 particles with ring migration of the best every
//! 1 % of the generations, and a GA on 14 islands of 64 whose best 2 replace the next
//! island's worst 2 every 10 % — rerun beside gpude's DE on PSO's islands, on
//! Rastrigin, Ackley, Schwefel 1.2 and Weierstrass at D = 30.
//!
//! Every case is a list of [`Archipelago`]s (one per run) run through
//! [`Solver::run_archipelagos`], so the engine that runs it is the solver's; on the GPU
//! the runs of a case share every launch.
//!
//! [`published`] holds the paper's tables, this module the cases and their runs,
//! `report` the report and `command` the flags.

pub mod command;
pub mod published;
mod report;

pub use report::{report, write};

use crate::stats::Errors;
use crate::{CliError, Result};
use gpude::{
    Algorithm, Archipelago, BoundPolicy, Function, FunctionInfo, Ga, Job, Precision, Pso, Solver,
    Strategy,
};
use serde::Serialize;
use std::time::Instant;

/// Runs per case in the quick mode unless given.
pub const QUICK_RUNS: u32 = 2;
/// Runs per case of the full mode unless given (the paper ran 1500).
pub const FULL_RUNS: u32 = 10;

/// What to run.
#[derive(Clone, Debug)]
pub struct Options {
    pub runs: u32,
    pub quick: bool,
    pub seed: u64,
    pub precision: Precision,
    pub functions: Vec<Function>,
    /// Run gpude's DE islands beside PSO.
    pub de: bool,
    /// Run the paper's GA (gpude's operators) beside PSO.
    pub ga: bool,
}

impl Options {
    /// Islands, particles per island, dimension (PSO's and DE's).
    pub fn sizes(&self) -> (u32, u32, u32) {
        self.sizes_of(Family::Pso)
    }

    /// Islands, individuals per island, dimension of a family's cases.
    pub fn sizes_of(&self, family: Family) -> (u32, u32, u32) {
        match (self.quick, family) {
            (true, _) => (3, 16, 10),
            (false, Family::Ga) => (published::GA_ISLANDS, published::GA_SIZE, published::DIM),
            (false, _) => (published::ISLANDS, published::PARTICLES, published::DIM),
        }
    }

    /// The generation limit of a case: the paper's (PSO's 100 % row; the GA's own),
    /// ÷ 100 when quick.
    pub fn g_max(&self, c: &published::Case, family: Family) -> u32 {
        let g = match family {
            Family::Ga => c.ga.generations,
            _ => c.pso[0].generations,
        };
        if self.quick { (g / 100).max(20) } else { g }
    }

    /// Parses a comma list of function names (of the four).
    pub fn parse_functions(list: &str) -> Result<Vec<Function>> {
        let mut out = Vec::new();
        for name in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let f = FunctionInfo::parse(name)?.function;
            if !published::CASES.iter().any(|c| c.function == f) {
                return Err(CliError::usage(format!(
                    "{name} is not in the experiment; choose from ackley, rastrigin, schwefel12, weierstrass"
                )));
            }
            if !out.contains(&f) {
                out.push(f);
            }
        }
        if out.is_empty() {
            return Err(CliError::usage("--functions lists no function"));
        }
        Ok(out)
    }
}

/// The algorithm of one case.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Family {
    /// The paper's PSO.
    Pso,
    /// gpude's DE (the thesis strategy) on the same islands.
    De,
    /// The paper's GA (gpude's operators) on its 14 islands of 64.
    Ga,
}

impl Family {
    pub fn name(self) -> &'static str {
        match self {
            Family::Pso => "PSO",
            Family::De => "DE (thesis)",
            Family::Ga => "GA",
        }
    }
}

/// The archipelago of one run of a case: run `r` uses streams `r·N … r·N + N − 1`.
pub fn archipelago(
    o: &Options,
    c: &published::Case,
    family: Family,
    run: u32,
) -> gpude::Result<Archipelago> {
    let (islands, np, dim) = o.sizes_of(family);
    let g_max = o.g_max(c, family);
    let job = Job::builder(c.function, dim)
        .domain(c.domain.0, c.domain.1)
        .pop(np)
        .generations(g_max)
        .target(c.target)
        .bounds(BoundPolicy::Clip)
        .strategy(Strategy::Thesis)
        .precision(o.precision)
        .seed(o.seed)
        .stream(run)
        .build()?;
    let algorithm = match family {
        Family::Pso => Algorithm::Pso(Pso::default()),
        Family::De => Algorithm::De,
        Family::Ga => Algorithm::Ga(Ga::default()),
    };
    let (interval, migrants) = match family {
        Family::Ga => (
            (g_max * published::GA_INTERVAL_PCT / 100).max(1),
            if o.quick { 1 } else { published::GA_MIGRANTS },
        ),
        _ => ((g_max / 100).max(1), 1),
    };
    Archipelago::builder(job, islands)
        .algorithm(algorithm)
        .interval(interval)
        .migrants(migrants)
        .build()
}

/// One run's outcome.
#[derive(Clone, Debug, Serialize)]
pub struct Run {
    pub error: f64,
    pub generations: u32,
    pub success: bool,
    pub seconds: f64,
}

/// The outcome of one case.
#[derive(Clone, Debug, Serialize)]
pub struct CaseResult {
    pub function: &'static str,
    pub family: Family,
    pub islands: u32,
    pub particles: u32,
    pub dim: u32,
    pub g_max: u32,
    pub interval: u32,
    pub target: f64,
    pub runs: Vec<Run>,
    pub success_pct: f64,
    pub mean_error: f64,
    /// Mean generations of the successful runs (each stops at the target).
    pub mean_generations_to_target: Option<f64>,
    pub mean_seconds: f64,
}

/// Runs one case.
pub fn run_case(
    solver: &Solver,
    o: &Options,
    c: &published::Case,
    family: Family,
) -> Result<CaseResult> {
    let first = archipelago(o, c, family, 0)?;
    let archs = (0..o.runs)
        .map(|r| archipelago(o, c, family, r))
        .collect::<gpude::Result<Vec<_>>>()?;
    // On the GPU every run of the case shares the launches: each run's time is the
    // case's over its runs.
    let t = Instant::now();
    let res = solver.run_archipelagos(&archs, None)?;
    let seconds = t.elapsed().as_secs_f64() / o.runs.max(1) as f64;
    let runs: Vec<Run> = res
        .iter()
        .map(|res| Run {
            error: res.overall.error,
            generations: res.overall.generations,
            success: res.overall.error <= c.target,
            seconds,
        })
        .collect();
    let errors: Vec<f64> = runs.iter().map(|r| r.error).collect();
    let stats = Errors::of(&errors, c.target);
    let hits: Vec<f64> = runs
        .iter()
        .filter(|r| r.success)
        .map(|r| r.generations as f64)
        .collect();
    let n = runs.len().max(1) as f64;
    Ok(CaseResult {
        function: FunctionInfo::of(c.function).name,
        family,
        islands: first.islands(),
        particles: first.template().pop(),
        dim: first.template().dim(),
        g_max: first.template().generations(),
        interval: first.interval(),
        target: c.target,
        success_pct: 100.0 * stats.successes as f64 / n,
        mean_error: stats.mean,
        mean_generations_to_target: (!hits.is_empty())
            .then(|| hits.iter().sum::<f64>() / hits.len() as f64),
        mean_seconds: runs.iter().map(|r| r.seconds).sum::<f64>() / n,
        runs,
    })
}

/// Every case of the options, in the paper's order, PSO then DE for each function.
pub fn cases(o: &Options) -> Vec<(&'static published::Case, Family)> {
    let mut out = Vec::new();
    for c in published::CASES.iter() {
        if !o.functions.contains(&c.function) {
            continue;
        }
        out.push((c, Family::Pso));
        if o.de {
            out.push((c, Family::De));
        }
        if o.ga {
            out.push((c, Family::Ga));
        }
    }
    out
}
