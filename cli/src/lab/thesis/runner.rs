//! Runs the cases of a thesis reproduction and gathers what each produced: the runs'
//! records, the statistics of their errors (reported and verified), how the failing runs
//! failed, and the convergence curves.

use super::cases::{Arithmetic, Case, HISTORY_POINTS, Options, Scheme};
use super::minima::{self, Classification, Outcome};
use super::published;
use gpude::{Error, Function, FunctionInfo, Result, RunResult, Solver};
use serde::Serialize;
use std::time::{Instant, SystemTime};

/// Error statistics of the runs of a case.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Stats {
    pub runs: usize,
    pub successes: usize,
    pub success_pct: f64,
    pub mean_error: f64,
    pub median_error: f64,
    pub best_error: f64,
    pub worst_error: f64,
}

impl Stats {
    pub fn of(errors: &[f64]) -> Stats {
        let s = crate::stats::Errors::of(errors, published::SUCCESS_ERROR);
        Stats {
            runs: s.runs,
            successes: s.successes,
            success_pct: if s.runs == 0 {
                f64::NAN
            } else {
                100.0 * s.successes as f64 / s.runs as f64
            },
            mean_error: s.mean,
            median_error: s.median,
            best_error: s.best,
            worst_error: s.worst,
        }
    }
}

/// Runs trapped at one local minimum.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Trapped {
    pub minimum: String,
    pub runs: usize,
    /// The least and the largest error of the minima these runs are at (one family of
    /// minima may hold several members, e.g. different components one period out).
    pub minimum_error_least: f64,
    pub minimum_error_largest: f64,
}

/// How the runs of a case that fail verification failed.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Failures {
    /// Reported successes (search error ≤ 1e-10) whose verified error is larger.
    pub artefacts: usize,
    /// Per local minimum, most runs first.
    pub trapped: Vec<Trapped>,
    pub descending: usize,
    /// The median verified error of the descending runs.
    pub descending_median_error: f64,
    pub stalled: usize,
    /// The median verified error of the stalled runs.
    pub stalled_median_error: f64,
}

impl Failures {
    pub fn of(runs: &[RunRecord]) -> Failures {
        let errors = |o: Outcome| -> Vec<f64> {
            runs.iter()
                .filter(|r| r.classification.outcome == o)
                .map(|r| r.verified_error)
                .collect()
        };
        let mut trapped: Vec<Trapped> = Vec::new();
        for r in runs {
            let c = &r.classification;
            let (Some(name), Some(e)) = (&c.minimum, c.minimum_error) else {
                continue;
            };
            match trapped.iter_mut().find(|t| &t.minimum == name) {
                Some(t) => {
                    t.runs += 1;
                    t.minimum_error_least = t.minimum_error_least.min(e);
                    t.minimum_error_largest = t.minimum_error_largest.max(e);
                }
                None => trapped.push(Trapped {
                    minimum: name.clone(),
                    runs: 1,
                    minimum_error_least: e,
                    minimum_error_largest: e,
                }),
            }
        }
        trapped.sort_by(|a, b| b.runs.cmp(&a.runs).then(a.minimum.cmp(&b.minimum)));
        let descending = errors(Outcome::Descending);
        let stalled = errors(Outcome::Stalled);
        Failures {
            artefacts: runs.iter().filter(|r| r.artefact).count(),
            trapped,
            descending: descending.len(),
            descending_median_error: crate::stats::median(&descending),
            stalled: stalled.len(),
            stalled_median_error: crate::stats::median(&stalled),
        }
    }

    /// Trapped runs in all.
    pub fn trapped_runs(&self) -> usize {
        self.trapped.iter().map(|t| t.runs).sum()
    }
}

/// The median and quartiles of the best error across runs, at sampled generations.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Curve {
    pub generations: Vec<u32>,
    pub q25: Vec<f64>,
    pub median: Vec<f64>,
    pub q75: Vec<f64>,
}

/// At most `points` generations of `0..=g_max`, evenly spaced, first and last included.
pub fn sample_generations(g_max: u32, points: usize) -> Vec<u32> {
    let n = g_max as usize + 1;
    if n <= points || points < 2 {
        return (0..=g_max).collect();
    }
    let mut out: Vec<u32> = (0..points)
        .map(|k| ((k as f64 * g_max as f64) / (points - 1) as f64).round() as u32)
        .collect();
    out.dedup();
    out
}

/// One run as `runs.json` lists it.
#[derive(Clone, Debug, Serialize)]
pub struct RunRecord {
    pub case: String,
    pub function: &'static str,
    pub dim: u32,
    pub np: u32,
    pub g_max: u32,
    pub arithmetic: Arithmetic,
    pub precision: &'static str,
    /// `exact` or `textbook`.
    pub formula: &'static str,
    pub strategy: Scheme,
    pub run: u32,
    pub seed: u64,
    pub stream: u32,
    pub best_f: f64,
    /// The error the search computed (its precision and formulas).
    pub error: f64,
    /// The best point re-evaluated in f64 with the exact formulas.
    pub verified_error: f64,
    /// The two errors differ by more than rounding.
    pub errors_disagree: bool,
    /// Judged on the verified error.
    pub success: bool,
    /// Judged on the search's error (what a report without verification would count).
    pub reported_success: bool,
    /// A reported success that the verified error refutes.
    pub artefact: bool,
    /// Success, trapped (at which local minimum), descending or stalled (see
    /// [`super::minima`]).
    #[serde(flatten)]
    pub classification: Classification,
    pub generations: u32,
    pub evaluations: u64,
    /// The engine's own time of the run (on the GPU: of the launch that ran the batch).
    pub elapsed_s: f64,
    /// Wall time of the whole batch of this case's runs.
    pub batch_wall_s: f64,
    pub backend: &'static str,
}

/// The outcome of one case.
#[derive(Clone, Debug)]
pub struct CaseResult {
    pub case: Case,
    pub runs: Vec<RunRecord>,
    /// Wall time of `Solver::run_batch` over all the runs (uploads and downloads
    /// included, the driver's compilation of the kernel excluded by a warm-up).
    pub batch_wall_s: f64,
    /// Statistics of the verified errors (success counts included).
    pub stats: Stats,
    /// Statistics of the errors the search computed.
    pub reported: Stats,
    pub failures: Failures,
    /// The generations sampled in `histories` and `curve`.
    pub history_generations: Vec<u32>,
    /// Per run, the best error at the sampled generations.
    pub histories: Vec<Vec<f64>>,
    pub curve: Curve,
}

impl CaseResult {
    /// The batch's wall time divided by its runs.
    pub fn time_per_run_s(&self) -> f64 {
        self.batch_wall_s / self.runs.len().max(1) as f64
    }
}

/// Runs one case: its runs in one batch, timed from the outside.
pub fn run_case(solver: &Solver, case: &Case, runs: u32, seed: u64) -> Result<CaseResult> {
    let jobs = case.jobs(runs, seed)?;
    if solver.cuda().is_some() {
        // The driver compiles a kernel's module when first used: a one-generation run of
        // the same kernel keeps that out of the timing.
        let warm = case.job(case.np.min(64), 1, seed, 0, false)?;
        solver.run_batch(std::slice::from_ref(&warm))?;
    }
    let start = Instant::now();
    let results = solver.run_batch(&jobs)?;
    let batch_wall_s = start.elapsed().as_secs_f64();
    if results.len() != jobs.len() {
        return Err(Error::Io(std::io::Error::other(format!(
            "case {}: the engine returned {} results for {} runs",
            case.id(),
            results.len(),
            jobs.len()
        ))));
    }
    Ok(collect(case, &results, batch_wall_s))
}

pub(super) fn collect(case: &Case, results: &[RunResult], batch_wall_s: f64) -> CaseResult {
    let min = FunctionInfo::of(case.function).min;
    let id = case.id();
    let runs: Vec<RunRecord> = results
        .iter()
        .enumerate()
        .map(|(k, r)| RunRecord {
            case: id.clone(),
            function: case.name(),
            dim: case.dim,
            np: case.np,
            g_max: case.g_max,
            arithmetic: case.arithmetic,
            precision: case.arithmetic.precision.name(),
            formula: gpude::host::config::formula_name(case.arithmetic.formula),
            strategy: case.scheme,
            run: k as u32,
            seed: r.seed,
            stream: r.stream,
            best_f: r.best_f,
            error: r.error,
            verified_error: r.verified_error,
            errors_disagree: r.errors_disagree,
            success: r.verified_error <= published::SUCCESS_ERROR,
            reported_success: r.error <= published::SUCCESS_ERROR,
            artefact: r.error <= published::SUCCESS_ERROR
                && r.verified_error > published::SUCCESS_ERROR,
            classification: minima::classify(
                case.function,
                r.best_x.as_slice(),
                r.verified_error,
                published::SUCCESS_ERROR,
                r.history.as_deref().is_some_and(minima::improved_recently),
            ),
            generations: r.generations,
            evaluations: r.evaluations,
            elapsed_s: r.elapsed.as_secs_f64(),
            batch_wall_s,
            backend: r.backend,
        })
        .collect();
    // Statistics and success counts on the verified errors, and on the search's.
    let errors: Vec<f64> = results.iter().map(|r| r.verified_error).collect();
    let reported: Vec<f64> = results.iter().map(|r| r.error).collect();
    let gens = sample_generations(case.generations(), HISTORY_POINTS);
    let histories: Vec<Vec<f64>> = results
        .iter()
        .map(|r| {
            let h = r.history.as_deref().unwrap_or(&[]);
            gens.iter()
                .map(|&g| {
                    // A run that stopped early keeps its last value.
                    h.get(g as usize)
                        .or(h.last())
                        .map_or(f64::NAN, |&v| v - min)
                })
                .collect()
        })
        .collect();
    let mut curve = Curve {
        generations: gens.clone(),
        q25: Vec::with_capacity(gens.len()),
        median: Vec::with_capacity(gens.len()),
        q75: Vec::with_capacity(gens.len()),
    };
    for k in 0..gens.len() {
        let mut col: Vec<f64> = histories
            .iter()
            .filter_map(|h| h.get(k).copied())
            .filter(|v| !v.is_nan())
            .collect();
        col.sort_by(f64::total_cmp);
        curve.q25.push(crate::stats::quantile(&col, 0.25));
        curve.median.push(crate::stats::quantile(&col, 0.5));
        curve.q75.push(crate::stats::quantile(&col, 0.75));
    }
    let failures = Failures::of(&runs);
    CaseResult {
        case: *case,
        runs,
        batch_wall_s,
        stats: Stats::of(&errors),
        reported: Stats::of(&reported),
        failures,
        history_generations: gens,
        histories,
        curve,
    }
}

/// Where and how the cases ran, for the report's header.
#[derive(Clone, Debug, Serialize)]
pub struct Context {
    /// `YYYY-MM-DD HH:MM UTC`.
    pub date: String,
    /// The command line as typed.
    pub command: String,
    pub gpude: &'static str,
    pub ptx_arch: &'static str,
    /// `cpu` or `cuda`.
    pub backend: &'static str,
    /// The GPU's name, when the GPU ran the cases.
    pub device: Option<String>,
    pub multiprocessors: Option<u32>,
    /// Why `auto` fell back to the CPU, if it did.
    pub fallback_reason: Option<String>,
    /// The GPU layout flag (`auto`, `batch`, `grid`, `steps`).
    pub mode: String,
    pub cpu_threads: usize,
}

impl Context {
    /// The context of `solver` now.
    pub fn new(solver: &Solver, command: String, mode: &str) -> Context {
        Context {
            date: utc_now(),
            command,
            gpude: env!("CARGO_PKG_VERSION"),
            ptx_arch: gpude::PTX_ARCH,
            backend: solver.backend_name(),
            device: solver.cuda().map(|e| e.device_name().to_string()),
            multiprocessors: solver.cuda().map(|e| e.multiprocessors()),
            fallback_reason: solver.fallback_reason().map(str::to_string),
            mode: mode.to_string(),
            cpu_threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
        }
    }
}

/// Everything a reproduction produced.
#[derive(Clone, Debug)]
pub struct Reproduction {
    pub options: Options,
    pub context: Context,
    pub results: Vec<CaseResult>,
}

impl Reproduction {
    pub(super) fn find(
        &self,
        f: Function,
        np: u32,
        a: Arithmetic,
        s: Scheme,
    ) -> Option<&CaseResult> {
        self.results.iter().find(|r| {
            r.case.function == f && r.case.np == np && r.case.arithmetic == a && r.case.scheme == s
        })
    }
}

/// Runs every case of `options`; `progress` hears of each case before and after it runs.
pub fn reproduce(
    solver: &Solver,
    options: &Options,
    context: Context,
    progress: &mut dyn FnMut(&Case, Option<&CaseResult>),
) -> Result<Reproduction> {
    options.validate()?;
    let mut results = Vec::new();
    for case in options.cases() {
        progress(&case, None);
        let r = run_case(solver, &case, options.runs, options.seed)?;
        progress(&case, Some(&r));
        results.push(r);
    }
    Ok(Reproduction {
        options: options.clone(),
        context,
        results,
    })
}

/// The current time as `YYYY-MM-DD HH:MM UTC`.
pub fn utc_now() -> String {
    let t = humantime::format_rfc3339_seconds(SystemTime::now()).to_string();
    // `YYYY-MM-DDTHH:MM:SSZ`
    format!("{} {} UTC", &t[..10], &t[11..16])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_minutes_in_utc() {
        let d = utc_now();
        assert_eq!(d.len(), "2026-11-24 16:31 UTC".len(), "{d}");
        assert!(d.ends_with(" UTC") && d.as_bytes()[4] == b'-' && d.as_bytes()[13] == b':');
    }

    #[test]
    fn sampling_keeps_ends() {
        let g = sample_generations(18000, HISTORY_POINTS);
        assert_eq!(g.len(), HISTORY_POINTS);
        assert_eq!(g[0], 0);
        assert_eq!(*g.last().unwrap(), 18000);
        assert_eq!(sample_generations(10, 500), (0..=10).collect::<Vec<_>>());
    }
}
