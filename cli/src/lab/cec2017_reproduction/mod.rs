//! `gpude reproduce cec2017`: gpude's adaptive strategies (jSO and L-SHADE by default) on
//! the CEC 2017 suite under the competition's protocol, beside the published results of
//! jSO, LSHADE-cnEpSin and EBOwithCMAR.
//!
//! Protocol (the organisers' technical report, §2): 51 runs per function and dimension,
//! 10 000·D evaluations, error = f(x_best) − F* with errors below 1e-8 counted as 0. F2 is
//! left out by default, as the competition left it out. All runs of a function and strategy
//! go to the engine as one batch (random streams 0 … runs−1 of one seed). The error reported
//! is the verified one: the best point re-evaluated on the host in f64.
//!
//! The published numbers are read from the project's reference folder
//! (`shared/reference/` beside the repository): `cec2017-published.md` (mean ± sd per
//! algorithm, function and D, 3 significant digits) and `cec2017-runs.csv` (the 51 final
//! errors of jSO, EBOwithCMAR and LSHADE_SPACMA). gpude's jSO is compared with the
//! published jSO by the ratio of the means (the mean of the CSV's runs) and by a two-sided
//! Wilcoxon rank-sum test on the 51 runs ([`crate::stats::rank_sum`]).
//!
//! `options` holds what to run, [`published`] reads the reference folder, `runner` runs
//! the strategies and compares gpude's jSO with the published one, `curves` keeps the
//! convergence curves and plots them, `report` writes REPORT.md and runs.json, `command` holds the flags.

pub mod command;
mod curves;
mod options;
pub mod published;
mod report;
mod runner;

pub use curves::{
    CURVE_POINTS, Curve, PLOTS_DIR, curve, evaluation_schedule, median_curve, stem, thinned,
    write_all,
};
pub use options::{Options, display_name, key_name};
pub use published::locate_reference;
pub use report::{columns, mean_sd, report, sig3, summary_line, write};
pub use runner::{
    Comparison, FunctionResult, PUBLISHED_DIGITS, Reproduction, StrategyRuns, Summary, compare,
    competition_error, round_sig, run_dimension, run_function, run_strategy, summarise,
};

/// Runs per function and dimension (the competition's).
pub const FULL_RUNS: u32 = 51;
/// Runs per function with `--quick`.
pub const QUICK_RUNS: u32 = 3;
/// The competition's budget: evaluations per dimension.
pub const EVALUATIONS_PER_DIM: u64 = 10_000;
/// The budget per dimension with `--quick`.
pub const QUICK_EVALUATIONS_PER_DIM: u64 = 300;
/// The functions of `--quick`.
pub const QUICK_FUNCTIONS: [u32; 2] = [1, 5];
/// Errors below this count as 0 (the competition's rule).
pub const ZERO_BELOW: f64 = 1e-8;
/// The rank-sum test's level.
pub const ALPHA: f64 = 0.05;
/// gpude's jSO "matches" the published one when its mean error is at most this many
/// times the published mean (or both means are below [`ZERO_BELOW`]).
pub const WITHIN: f64 = 1.1;
/// The dimensions of the competition.
pub const DIMS: [u32; 4] = [10, 30, 50, 100];
/// The reference folder's place beside the repository.
pub const REFERENCE_DIR: &str = "shared/reference";
/// The CEC 2017 data inside the reference folder.
pub const DATA_IN_REFERENCE: &str = "cec2017/CEC17_fast_pow-C++.zip";
/// Set to 1 where the reference folder must be there (CI): tests then fail instead of
/// skipping when it is missing.
pub const REQUIRE_ENV: &str = "GPUDE_REQUIRE_CEC2017";

/// The published algorithms shown beside gpude's, as the reference files name them.
pub const SHOWN: [&str; 3] = ["jSO", "LSHADE-cnEpSin", "EBOwithCMAR"];
/// The published algorithm gpude's jSO is tested against.
pub const JSO: &str = "jSO";

/// The population size of the classic strategies (thesis, rand/1/bin) in the report:
/// 100 at every dimension, as SHADE's and JADE's papers run theirs, so that the budget
/// 10 000·D pays for exactly 100·D − 1 generations after the initial population.
pub const CLASSIC_POP: u32 = 100;
