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

use crate::common::{self, MAX_REPETITIONS};
use crate::stats::{self, RankSum, Verdict};
use crate::{CliError, Result};
use gpude::cec2017::{DataSource, FunctionId};
use gpude::host::config::{parse_strategy, strategy_name};
use gpude::{Crossover, Job, Objective, Precision, Solver, Strategy};
use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;

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

/// What to run.
#[derive(Clone, Debug, PartialEq)]
pub struct Options {
    pub dims: Vec<u32>,
    pub strategies: Vec<Strategy>,
    pub functions: Vec<FunctionId>,
    pub runs: u32,
    pub seed: u64,
    pub quick: bool,
    pub evaluations_per_dim: u64,
}

impl Options {
    /// The competition's protocol for jSO and L-SHADE at `dims`.
    pub fn competition(dims: Vec<u32>) -> Options {
        Options {
            dims,
            strategies: vec![Strategy::Jso, Strategy::LShade],
            functions: FunctionId::competition().collect(),
            runs: FULL_RUNS,
            seed: 1,
            quick: false,
            evaluations_per_dim: EVALUATIONS_PER_DIM,
        }
    }

    /// `--quick`: two functions at D = 10, 3 runs, 300·D evaluations.
    pub fn quick() -> Options {
        Options {
            functions: QUICK_FUNCTIONS
                .iter()
                .map(|&n| FunctionId::new(n).expect("a CEC 2017 function"))
                .collect(),
            runs: QUICK_RUNS,
            quick: true,
            evaluations_per_dim: QUICK_EVALUATIONS_PER_DIM,
            ..Options::competition(vec![10])
        }
    }

    /// Parses `10,30`.
    pub fn parse_dims(list: &str) -> Result<Vec<u32>> {
        let mut dims = Vec::new();
        for item in items(list) {
            let d: u32 = item
                .parse()
                .ok()
                .filter(|d| DIMS.contains(d))
                .ok_or_else(|| {
                    CliError::usage(format!(
                        "--dims: {item:?} is not a CEC 2017 dimension (10, 30, 50, 100)"
                    ))
                })?;
            if !dims.contains(&d) {
                dims.push(d);
            }
        }
        nonempty(dims, "--dims")
    }

    /// Parses `jso,lshade,thesis,rand1bin`: the adaptive strategies, and the classic
    /// `thesis` and `rand1bin` (also written `rand1`, `rand/1/bin`) beside them.
    pub fn parse_strategies(list: &str) -> Result<Vec<Strategy>> {
        let mut v = Vec::new();
        for item in items(list) {
            let (s, crossover) = parse_strategy(item)?;
            let ok = match s {
                Strategy::Thesis => crossover.is_none(),
                Strategy::Rand1 => matches!(crossover, None | Some(Crossover::Binomial)),
                s => s.is_adaptive() && crossover.is_none(),
            };
            if !ok {
                return Err(CliError::usage(format!(
                    "--strategies: {item:?} is not one of jde, jade, shade, lshade, jso, thesis, rand1bin"
                )));
            }
            if !v.contains(&s) {
                v.push(s);
            }
        }
        nonempty(v, "--strategies")
    }

    /// Parses `1,3-30` (numbers or ranges, optionally written `F5`), in order, without
    /// repeats.
    pub fn parse_functions(list: &str) -> Result<Vec<FunctionId>> {
        let bad = |item: &str| {
            CliError::usage(format!(
                "--functions: {item:?} is not a function number 1 ..= 30 or a range such as 3-30"
            ))
        };
        let number = |s: &str| -> Option<u32> {
            let s = s.trim();
            let s = s
                .strip_prefix('F')
                .or_else(|| s.strip_prefix('f'))
                .unwrap_or(s);
            s.parse().ok().filter(|n| (1..=30).contains(n))
        };
        let mut v: Vec<FunctionId> = Vec::new();
        for item in items(list) {
            let (a, b) = match item.split_once('-') {
                Some((a, b)) => (number(a), number(b)),
                None => (number(item), number(item)),
            };
            let (Some(a), Some(b)) = (a, b) else {
                return Err(bad(item));
            };
            if a > b {
                return Err(bad(item));
            }
            for n in a..=b {
                let id = FunctionId::new(n)?;
                if !v.contains(&id) {
                    v.push(id);
                }
            }
        }
        nonempty(v, "--functions")
    }

    pub fn validate(&self) -> Result<()> {
        if self.runs == 0 || self.runs > MAX_REPETITIONS {
            return Err(CliError::usage(format!(
                "--runs {} is not allowed: 1 ..= {MAX_REPETITIONS}",
                self.runs
            )));
        }
        Ok(())
    }

    /// The evaluation budget at dimension `dim`.
    pub fn budget(&self, dim: u32) -> u64 {
        self.evaluations_per_dim * dim as u64
    }
}

fn items(list: &str) -> impl Iterator<Item = &str> {
    list.split(',').map(str::trim).filter(|s| !s.is_empty())
}

fn nonempty<T>(v: Vec<T>, flag: &str) -> Result<Vec<T>> {
    if v.is_empty() {
        Err(CliError::usage(format!("{flag} names nothing")))
    } else {
        Ok(v)
    }
}

/// The name reports give a strategy: `jSO`, `L-SHADE`.
pub fn display_name(s: Strategy) -> &'static str {
    match s {
        Strategy::Jde => "jDE",
        Strategy::Jade => "JADE",
        Strategy::Shade => "SHADE",
        Strategy::LShade => "L-SHADE",
        Strategy::Jso => "jSO",
        Strategy::Rand1 => "rand/1/bin",
        _ => strategy_name(s),
    }
}

/// The name runs.json gives a strategy: `jso`, `lshade`, `thesis`, `rand1bin`.
pub fn key_name(s: Strategy) -> &'static str {
    match s {
        Strategy::Rand1 => "rand1bin",
        _ => strategy_name(s),
    }
}

/// The population size of the classic strategies (thesis, rand/1/bin) in the report:
/// 100 at every dimension, as SHADE's and JADE's papers run theirs, so that the budget
/// 10 000·D pays for exactly 100·D − 1 generations after the initial population.
pub const CLASSIC_POP: u32 = 100;

/// The reference folder: `explicit` when given, else `shared/reference` beside the
/// repository (where the binary was built from) or beside or under the working folder.
/// The error names every place looked at.
pub fn locate_reference(explicit: Option<&Path>) -> Result<PathBuf> {
    let mut candidates = Vec::new();
    match explicit {
        Some(p) => candidates.push(p.to_path_buf()),
        None => {
            let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
            candidates.push(repo.join("..").join(REFERENCE_DIR));
            if let Ok(cwd) = std::env::current_dir() {
                candidates.push(cwd.join("..").join(REFERENCE_DIR));
                candidates.push(cwd.join(REFERENCE_DIR));
            }
        }
    }
    if let Some(found) = candidates
        .iter()
        .find(|c| c.join(published::MARKDOWN).is_file())
    {
        return Ok(found.clone());
    }
    let looked: Vec<String> = candidates.iter().map(|c| c.display().to_string()).collect();
    Err(CliError::usage(format!(
        "the published CEC 2017 results ({} and {}) are not in {}: give the reference folder with --reference",
        published::MARKDOWN,
        published::CSV,
        looked.join(", ")
    )))
}

/// The published results: mean ± sd tables and per-run final errors.
pub mod published {
    use std::collections::BTreeMap;

    /// The file of the mean ± sd tables.
    pub const MARKDOWN: &str = "cec2017-published.md";
    /// The file of the per-run final errors.
    pub const CSV: &str = "cec2017-runs.csv";

    /// (algorithm, D, function number).
    pub type Key = (String, u32, u32);

    /// Mean and sample standard deviation of the final errors.
    #[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
    pub struct Summary {
        pub mean: f64,
        pub sd: f64,
    }

    /// Everything read from the reference folder.
    #[derive(Clone, Debug, Default, PartialEq)]
    pub struct Published {
        pub summaries: BTreeMap<Key, Summary>,
        pub runs: BTreeMap<Key, Vec<f64>>,
    }

    impl Published {
        pub fn summary(&self, algorithm: &str, dim: u32, f: u32) -> Option<Summary> {
            self.summaries.get(&(algorithm.into(), dim, f)).copied()
        }
        pub fn runs(&self, algorithm: &str, dim: u32, f: u32) -> Option<&[f64]> {
            self.runs
                .get(&(algorithm.into(), dim, f))
                .map(Vec::as_slice)
        }
    }

    /// `F12` → 12.
    fn function_number(s: &str) -> Option<u32> {
        s.trim()
            .strip_prefix('F')?
            .parse()
            .ok()
            .filter(|n| (1..=30).contains(n))
    }

    /// `1.76 ± 0.76` → (1.76, 0.76); a footnote mark after the number (`100 ± 1e-13 (a)`)
    /// is left out.
    fn mean_sd(cell: &str) -> Option<Summary> {
        let (m, s) = cell.split_once('±')?;
        let s = match s.trim().split_once('(') {
            Some((number, mark)) if mark.ends_with(')') => number,
            _ => s,
        };
        let (mean, sd) = (m.trim().parse::<f64>().ok()?, s.trim().parse::<f64>().ok()?);
        (mean.is_finite() && sd.is_finite() && mean >= 0.0 && sd >= 0.0)
            .then_some(Summary { mean, sd })
    }

    fn cells(line: &str) -> Vec<&str> {
        let t = line.trim();
        let t = t.strip_prefix('|').unwrap_or(t);
        let t = t.strip_suffix('|').unwrap_or(t);
        t.split('|').map(str::trim).collect()
    }

    /// Reads the tables of `cec2017-published.md`: under each heading `### D = <n> …`, a
    /// table whose header is `| F | Function | <algorithm> | … |` and whose rows are
    /// `| F<k> | <name> | <mean> ± <sd> | … |`. Errors name the line.
    pub fn parse_markdown(text: &str) -> Result<BTreeMap<Key, Summary>, String> {
        let mut out = BTreeMap::new();
        let mut dim: Option<u32> = None;
        let mut header: Option<Vec<String>> = None;
        for (k, line) in text.lines().enumerate() {
            let at = |what: &str| format!("line {}: {what}", k + 1);
            let t = line.trim();
            if let Some(rest) = t.strip_prefix("### D = ") {
                let n: String = rest.chars().take_while(char::is_ascii_digit).collect();
                dim = Some(n.parse().map_err(|_| at("no dimension after \"D = \""))?);
                header = None;
                continue;
            }
            if t.starts_with('#') {
                dim = None;
                header = None;
                continue;
            }
            let Some(d) = dim else { continue };
            if !t.starts_with('|') {
                header = None;
                continue;
            }
            let c = cells(t);
            match &header {
                None => {
                    if c.len() < 3 || c[0] != "F" {
                        return Err(at("a table header | F | Function | … | was expected"));
                    }
                    header = Some(c.iter().map(|s| s.to_string()).collect());
                }
                Some(h) => {
                    if c.iter().all(|s| s.chars().all(|ch| ch == '-' || ch == ':')) {
                        continue;
                    }
                    if c.len() != h.len() {
                        return Err(at(&format!(
                            "{} cells where the header has {}",
                            c.len(),
                            h.len()
                        )));
                    }
                    let f = function_number(c[0])
                        .ok_or_else(|| at(&format!("{:?} is not a function F1 … F30", c[0])))?;
                    for (alg, cell) in h.iter().zip(&c).skip(2) {
                        let s = mean_sd(cell)
                            .ok_or_else(|| at(&format!("{cell:?} is not \"mean ± sd\"")))?;
                        if out.insert((alg.clone(), d, f), s).is_some() {
                            return Err(at(&format!("F{f}, D = {d}, {alg} appears twice")));
                        }
                    }
                }
            }
        }
        if out.is_empty() {
            return Err("no table under a \"### D = …\" heading".into());
        }
        Ok(out)
    }

    /// Reads `cec2017-runs.csv`: `#` comment lines, the header `algorithm,function,dim,
    /// run1,…`, then one row per algorithm, function (`F<k>`) and D with the final errors.
    /// Every row must hold as many runs as the header names.
    pub fn parse_csv(text: &str) -> Result<BTreeMap<Key, Vec<f64>>, String> {
        let mut out = BTreeMap::new();
        let mut runs: Option<usize> = None;
        for (k, line) in text.lines().enumerate() {
            let at = |what: &str| format!("line {}: {what}", k + 1);
            let t = line.trim();
            if t.is_empty() || t.starts_with('#') {
                continue;
            }
            let fields: Vec<&str> = t.split(',').map(str::trim).collect();
            let Some(n) = runs else {
                if fields.len() < 4 || fields[..3] != ["algorithm", "function", "dim"] {
                    return Err(at("the header algorithm,function,dim,run1,… was expected"));
                }
                runs = Some(fields.len() - 3);
                continue;
            };
            if fields.len() != n + 3 {
                return Err(at(&format!(
                    "{} runs where the header names {n}",
                    fields.len().saturating_sub(3)
                )));
            }
            let f = function_number(fields[1])
                .ok_or_else(|| at(&format!("{:?} is not a function F1 … F30", fields[1])))?;
            let d: u32 = fields[2]
                .parse()
                .map_err(|_| at(&format!("{:?} is not a dimension", fields[2])))?;
            let errors = fields[3..]
                .iter()
                .map(|v| v.parse::<f64>().ok().filter(|e| e.is_finite() && *e >= 0.0))
                .collect::<Option<Vec<f64>>>()
                .ok_or_else(|| at("a final error is not a non-negative number"))?;
            if out.insert((fields[0].to_string(), d, f), errors).is_some() {
                return Err(at(&format!("{}, F{f}, D = {d} appears twice", fields[0])));
            }
        }
        if out.is_empty() {
            return Err("no runs".into());
        }
        Ok(out)
    }

    /// Reads both files from the reference folder.
    pub fn load(dir: &std::path::Path) -> Result<Published, String> {
        let read = |name: &str| {
            let p = dir.join(name);
            std::fs::read_to_string(&p).map_err(|e| format!("reading {}: {e}", p.display()))
        };
        let md = read(MARKDOWN)?;
        let csv = read(CSV)?;
        Ok(Published {
            summaries: parse_markdown(&md).map_err(|e| format!("{MARKDOWN}: {e}"))?,
            runs: parse_csv(&csv).map_err(|e| format!("{CSV}: {e}"))?,
        })
    }
}

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
    /// Wall time of the batch of all runs, seconds.
    pub wall_s: f64,
    /// The median error over the runs against the evaluations spent (the plots').
    pub curve: super::cec2017_plots::Curve,
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

/// Runs one strategy on one function: all runs in one batch.
pub fn run_strategy(
    solver: &Solver,
    objective: &Objective,
    strategy: Strategy,
    dim: u32,
    options: &Options,
) -> Result<StrategyRuns> {
    let jobs = (0..options.runs)
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
        .collect::<gpude::Result<Vec<Job>>>()?;
    let start = Instant::now();
    let results = solver.run_batch(&jobs)?;
    let wall_s = start.elapsed().as_secs_f64();
    let curve = super::cec2017_plots::curve(&jobs[0], &results, objective.reference())?;
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

/// The result of one function: gpude's strategies, then the comparison.
pub fn run_function(
    solver: &Solver,
    source: &DataSource,
    published: &published::Published,
    options: &Options,
    id: FunctionId,
    dim: u32,
) -> Result<FunctionResult> {
    let objective = Objective::cec2017(source, id, dim)?;
    let f = id.number();
    let mut gpude = Vec::new();
    for &s in &options.strategies {
        gpude.push(run_strategy(solver, &objective, s, dim, options)?);
    }
    let jso_vs_published = gpude
        .iter()
        .find(|r| r.strategy == strategy_name(Strategy::Jso))
        .zip(published.runs(JSO, dim, f))
        .map(|(ours, theirs)| compare(&ours.errors, theirs));
    Ok(FunctionResult {
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
    })
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

/// A number to 3 significant digits, as the published tables print them: `0`, `1.76`,
/// `12`, `0.0585`, `395`, `1.53e3`.
pub fn sig3(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    if !v.is_finite() {
        return format!("{v}");
    }
    let a = v.abs();
    if (1e-3..1e3).contains(&a) {
        let decimals = (2 - a.log10().floor() as i32).max(0) as usize;
        let s = format!("{v:.decimals$}");
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    } else {
        format!("{v:.2e}")
    }
}

/// `mean ± sd` to 3 significant digits.
pub fn mean_sd(mean: f64, sd: f64) -> String {
    format!("{} ± {}", sig3(mean), sig3(sd))
}

/// The column headers of a dimension's table for these strategies.
pub fn columns(strategies: &[Strategy]) -> Vec<String> {
    let mut h = vec!["F".to_string(), "function".to_string()];
    h.extend(
        strategies
            .iter()
            .map(|&s| format!("gpude {}", display_name(s))),
    );
    h.extend(SHOWN.iter().map(|a| format!("published {a}")));
    h.push("gpude jSO / published jSO".into());
    h.push("rank-sum vs published jSO".into());
    h.extend(
        strategies
            .iter()
            .map(|&s| format!("CPU time {} (s)", display_name(s))),
    );
    h
}

/// The ratio cell: `1.05`, `both < 1e-8`, or `∞ (published < 1e-8)`.
fn ratio_cell(c: &Comparison) -> String {
    match c.ratio {
        _ if c.both_below => "both < 1e-8".into(),
        Some(r) => format!("{r:.3}"),
        None => "∞ (published < 1e-8)".into(),
    }
}

/// The summary sentence of one dimension.
pub fn summary_line(s: &Summary) -> String {
    if s.compared == 0 {
        return format!(
            "D = {}: no comparison with the published jSO (gpude's jSO not run, or no published runs).",
            s.dim
        );
    }
    format!(
        "D = {}: gpude's jSO is within {WITHIN}× of the published jSO mean (or both below 1e-8) on {} of {} functions ({:.0} %); rank-sum test against the published jSO runs (α = {ALPHA}): {} better, {} same, {} worse.",
        s.dim,
        s.within,
        s.compared,
        100.0 * s.within as f64 / s.compared as f64,
        s.better,
        s.same,
        s.worse
    )
}

fn table(rows: &[Vec<String>]) -> String {
    let mut s = String::new();
    for (i, r) in rows.iter().enumerate() {
        let _ = writeln!(s, "| {} |", r.join(" | "));
        if i == 0 {
            let _ = writeln!(s, "|{}", " --- |".repeat(r.len()));
        }
    }
    s
}

/// REPORT.md.
pub fn report(r: &Reproduction, strategies: &[Strategy]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# CEC 2017: gpude's adaptive DE beside the published results\n"
    );
    let _ = writeln!(s, "Command: `{}`\n", r.command);
    let _ = writeln!(
        s,
        "Engine: {} ({} threads); f64; seed {}, random streams 0 … {} per function and strategy, all runs of a function in one batch. \
Budget {}·D evaluations; error = f(x_best) − F* of the best point re-evaluated in f64, errors below 1e-8 counted as 0.{}\n",
        r.backend,
        r.cpu_threads,
        r.seed,
        r.runs.saturating_sub(1),
        r.evaluations_per_dim,
        if r.quick {
            " **Quick check (`--quick`): not the competition's budget or run count; the comparison with the published numbers means nothing here.**"
        } else {
            ""
        }
    );
    let _ = writeln!(
        s,
        "Published results: `{}` (mean ± sample sd, 3 significant digits) and `{}` (the 51 final errors of jSO), from {}. CEC 2017 data: {}.\n",
        published::MARKDOWN,
        published::CSV,
        r.reference,
        r.data
    );
    let _ = writeln!(
        s,
        "Cells are mean ± sample sd of the final errors. \"gpude jSO / published jSO\" divides gpude's mean by the mean of the published runs. \
The rank-sum column is a two-sided Wilcoxon rank-sum (Mann–Whitney U) test of gpude's jSO runs against the published jSO's 51 runs, \
normal approximation with tie correction, α = {ALPHA}, gpude's errors rounded to the published runs' {PUBLISHED_DIGITS} significant digits: \
better / worse when gpude's errors are significantly smaller / larger. \
CPU time is the wall time of the batch of all runs of the function.\n"
    );
    if strategies.iter().any(|s| !s.is_adaptive()) {
        let _ = writeln!(
            s,
            "The classic strategies (gpude's thesis variant, rand/1/bin) run at the same budget with Np = {CLASSIC_POP}: \
the initial population and then as many whole generations as the budget pays for (Np·(1 + g) ≤ budget, {CLASSIC_POP}·D − 1 generations at 10 000·D), \
F = {}, Cr = {} (rand/1/bin), bounds {} (as the adaptive strategies: a component of a trial that leaves [−100, 100] \
is put midway between its parent's value and the bound, so that every point stays where the functions have their minimum F*).\n",
            gpude::host::config::DEFAULT_F,
            gpude::host::config::DEFAULT_CR,
            gpude::host::config::bounds_name(gpude::BoundPolicy::Midpoint)
        );
    }
    for sum in &r.summaries {
        let d = sum.dim;
        let _ = writeln!(
            s,
            "## D = {d} ({} evaluations per run)\n",
            r.evaluations_per_dim * d as u64
        );
        let mut rows = vec![columns(strategies)];
        for f in r.results.iter().filter(|f| f.dim == d) {
            let mut row = vec![format!("F{}", f.function), f.title.clone()];
            for &st in strategies {
                row.push(f.runs_of(st).map_or("—".into(), |x| mean_sd(x.mean, x.std)));
            }
            for a in SHOWN {
                row.push(
                    f.published
                        .get(a)
                        .copied()
                        .flatten()
                        .map_or("—".into(), |p| mean_sd(p.mean, p.sd)),
                );
            }
            match &f.jso_vs_published {
                Some(c) => {
                    row.push(ratio_cell(c));
                    row.push(format!("{} (p = {})", c.verdict.name(), sig3(c.rank_sum.p)));
                }
                None => {
                    row.push("—".into());
                    row.push("—".into());
                }
            }
            for &st in strategies {
                row.push(
                    f.runs_of(st)
                        .map_or("—".into(), |x| format!("{:.2}", x.wall_s)),
                );
            }
            rows.push(row);
        }
        s.push_str(&table(&rows));
        let _ = writeln!(s, "\n{}\n", summary_line(sum));
        convergence(&mut s, r, d);
    }
    // On the GPU the times are the batch launches' (the runs of one function and strategy
    // in one launch).
    if r.backend == "cuda" {
        s = s.replace("CPU time", "GPU time");
    }
    s
}

/// The section of dimension `d` that links its convergence plots.
fn convergence(s: &mut String, r: &Reproduction, d: u32) {
    let _ = writeln!(s, "### Convergence, D = {d}\n");
    let _ = writeln!(
        s,
        "Median over the {} runs of the best error f(best) − F* (the search's own best value) against the evaluations spent, \
one line per strategy, log scale, errors below 1e-8 drawn at 1e-8. The evaluations are exact: the initial population, then each generation's trials \
(L-SHADE's and jSO's populations shrink on their linear schedule; the classic strategies keep Np = {CLASSIC_POP}).\n",
        r.runs
    );
    for f in r.results.iter().filter(|f| f.dim == d) {
        let stem = super::cec2017_plots::stem(d, f.function);
        let _ = writeln!(
            s,
            "- F{} {}: [PNG]({stem}.png), [SVG]({stem}.svg)",
            f.function, f.title
        );
    }
    s.push('\n');
}

/// Writes REPORT.md and runs.json into `dir`, each whole or not at all.
pub fn write(dir: &Path, report: &str, r: &Reproduction) -> Result<()> {
    let json = common::to_json(r)?;
    for (name, bytes) in [
        ("REPORT.md", report.as_bytes()),
        ("runs.json", json.as_bytes()),
    ] {
        let p = dir.join(name);
        crate::output::write(&p, bytes)
            .map_err(|e| CliError::runtime(format!("writing {}: {e}", p.display())))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::published::{parse_csv, parse_markdown};
    use super::*;

    const MD: &str = "# Title\n\n## Tables\n\n### D = 10 (MaxFES = 100,000)\n\n\
| F | Function | jSO | LSHADE-cnEpSin |\n|---|---|---|---|\n\
| F1 | Bent Cigar | 0 ± 0 | 0 ± 0 |\n\
| F22 | Composition 2 | 100 ± 0 | 100 ± 1e-13 (a) |\n\
| F30 | Composition 10 | 395 ± 0.0449 | 1.76e+04 ± 8.61e+04 |\n\n\
### D = 30 (MaxFES = 300,000)\n\n| F | Function | jSO | LSHADE-cnEpSin |\n|---|---|---|---|\n\
| F6 | Schaffer | 6.04e-09 ± 2.71e-08 | 0 ± 0 |\n\n## Other\n\n| not | a | table |\n";

    fn get_sd(t: &BTreeMap<published::Key, published::Summary>, a: &str, d: u32, f: u32) -> f64 {
        t[&(a.to_string(), d, f)].sd
    }

    #[test]
    fn markdown_tables_are_read_per_dimension_algorithm_and_function() {
        let t = parse_markdown(MD).expect("parses");
        assert_eq!(t.len(), 8);
        assert_eq!(
            get_sd(&t, "LSHADE-cnEpSin", 10, 22),
            1e-13,
            "the footnote mark is left out"
        );
        let get = |a: &str, d: u32, f: u32| t[&(a.to_string(), d, f)];
        assert_eq!(get("jSO", 10, 30).mean, 395.0);
        assert_eq!(get("jSO", 10, 30).sd, 0.0449);
        assert_eq!(get("LSHADE-cnEpSin", 10, 30).mean, 1.76e4);
        assert_eq!(get("LSHADE-cnEpSin", 10, 30).sd, 8.61e4);
        assert_eq!(get("jSO", 30, 6).mean, 6.04e-9);
        assert_eq!(get("jSO", 10, 1).sd, 0.0);
        assert!(!t.contains_key(&("jSO".to_string(), 30, 1)));
    }

    #[test]
    fn malformed_markdown_cells_are_refused_with_the_line() {
        let bad = MD.replace("395 ± 0.0449", "395");
        let e = parse_markdown(&bad).expect_err("no ±");
        assert!(e.starts_with("line 11:") && e.contains("mean ± sd"), "{e}");
        let bad = MD.replace("1e-13 (a)", "1e-13 (a");
        assert!(parse_markdown(&bad).is_err(), "an unclosed mark");
        let bad = MD.replace("| F30 |", "| X30 |");
        assert!(parse_markdown(&bad).expect_err("no F").contains("X30"));
        let bad = MD.replace(
            "| F1 | Bent Cigar | 0 ± 0 | 0 ± 0 |",
            "| F1 | Bent Cigar | 0 ± 0 |",
        );
        assert!(
            parse_markdown(&bad)
                .expect_err("short")
                .contains("3 cells where the header has 4")
        );
        assert!(parse_markdown("# nothing\n").is_err());
    }

    const CSV: &str = "# comment\nalgorithm,function,dim,run1,run2,run3\n\
jSO,F1,10,0.0,0.0,0.0\njSO,F5,10,1.5,2.0,3.5e-1\nEBOwithCMAR,F5,30,0.0,1.0,2.0\n";

    #[test]
    fn csv_runs_are_read_per_algorithm_function_and_dimension() {
        let r = parse_csv(CSV).expect("parses");
        assert_eq!(r.len(), 3);
        assert_eq!(r[&("jSO".to_string(), 10, 5)], vec![1.5, 2.0, 0.35]);
        assert_eq!(r[&("EBOwithCMAR".to_string(), 30, 5)], vec![0.0, 1.0, 2.0]);
        let e = parse_csv(&CSV.replace("1.5,2.0,", "1.5,")).expect_err("short row");
        assert!(e.starts_with("line 4:") && e.contains("2 runs"), "{e}");
        assert!(parse_csv(&CSV.replace("0.0,1.0", "-1.0,1.0")).is_err());
        assert!(parse_csv(&CSV.replace("F5,30", "F5,x")).is_err());
        assert!(parse_csv(&CSV.replace("algorithm,", "alg,")).is_err());
        let twice = format!("{CSV}jSO,F1,10,0.0,0.0,0.0\n");
        assert!(parse_csv(&twice).expect_err("twice").contains("twice"));
    }

    /// The reference folder beside the repository, or None (with a SKIPPED line) when it
    /// is absent and not required.
    fn reference() -> Option<PathBuf> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../..")
            .join(REFERENCE_DIR);
        if dir.join(published::MARKDOWN).is_file() {
            return Some(dir);
        }
        if std::env::var(REQUIRE_ENV).is_ok_and(|v| v == "1") {
            panic!("{REQUIRE_ENV}=1 but {} is missing", dir.display());
        }
        eprintln!(
            "SKIPPED: {} is absent (set {REQUIRE_ENV}=1 to require it)",
            dir.display()
        );
        None
    }

    #[test]
    fn the_published_files_agree_with_each_other() {
        let Some(dir) = reference() else { return };
        let p = published::load(&dir).expect("the reference files parse");
        // 29 functions × 4 D × 4 algorithms in the tables; 3 algorithms × 30 × 4 runs.
        assert_eq!(p.summaries.len(), 29 * 4 * 4);
        assert_eq!(p.runs.len(), 3 * 30 * 4);
        assert!(p.runs.values().all(|v| v.len() == 51));
        assert_eq!(p.summary("jSO", 10, 5).expect("F5").mean, 1.76);
        assert_eq!(p.summary("LSHADE-cnEpSin", 10, 30).expect("F30").sd, 8.61e4);
        assert!(p.summary("jSO", 10, 2).is_none(), "F2 has no published row");
        // Mean and sd of the runs are the tables' to the 3 significant digits printed.
        let agrees = |exact: f64, printed: f64| {
            if printed == 0.0 {
                return exact == 0.0;
            }
            let unit = 10f64.powi(printed.abs().log10().floor() as i32 - 2);
            (exact - printed).abs() <= 0.5001 * unit
        };
        for alg in ["jSO", "EBOwithCMAR", "LSHADE_SPACMA"] {
            for d in DIMS {
                for f in FunctionId::competition().map(FunctionId::number) {
                    let runs = p.runs(alg, d, f).expect("runs");
                    let t = p.summary(alg, d, f).expect("table");
                    let (m, sd) = (stats::mean(runs), stats::std_dev(runs));
                    assert!(
                        agrees(m, t.mean),
                        "{alg} F{f} D = {d}: mean {m} vs {}",
                        t.mean
                    );
                    assert!(agrees(sd, t.sd), "{alg} F{f} D = {d}: sd {sd} vs {}", t.sd);
                }
            }
        }
    }

    #[test]
    fn significant_digits_as_the_tables_print_them() {
        assert_eq!(sig3(0.0), "0");
        assert_eq!(sig3(1.7647), "1.76");
        assert_eq!(sig3(12.0), "12");
        assert_eq!(sig3(0.058_49), "0.0585");
        assert_eq!(sig3(395.2), "395");
        assert_eq!(sig3(1530.4), "1.53e3");
        assert_eq!(sig3(17_600.0), "1.76e4");
        assert_eq!(sig3(6.04e-9), "6.04e-9");
        assert_eq!(mean_sd(1.76, 0.76), "1.76 ± 0.76");
    }

    #[test]
    fn list_flags_parse() {
        let f = Options::parse_functions("1,3-5, F10").expect("parses");
        let n: Vec<u32> = f.iter().map(|f| f.number()).collect();
        assert_eq!(n, [1, 3, 4, 5, 10]);
        assert!(Options::parse_functions("0").is_err());
        assert!(Options::parse_functions("5-3").is_err());
        assert!(Options::parse_functions("31").is_err());
        assert!(Options::parse_functions(",").is_err());
        assert_eq!(Options::parse_dims("30,10,30").expect("dims"), [30, 10]);
        assert!(Options::parse_dims("20").is_err());
        assert_eq!(
            Options::parse_strategies("jso, lshade").expect("strategies"),
            [Strategy::Jso, Strategy::LShade]
        );
        assert_eq!(
            Options::parse_strategies("jso,thesis,rand1bin,rand/1/bin,rand1").expect("strategies"),
            [Strategy::Jso, Strategy::Thesis, Strategy::Rand1]
        );
        for bad in ["rand1exp", "best1", "thesisbin", "pso"] {
            let e = Options::parse_strategies(bad).expect_err(bad).to_string();
            assert!(e.contains("thesis, rand1bin") || e.contains("pso"), "{e}");
        }
        let h = columns(&[Strategy::Jso, Strategy::Thesis, Strategy::Rand1]);
        assert_eq!(&h[2..5], ["gpude jSO", "gpude thesis", "gpude rand/1/bin"]);
        assert_eq!(
            h.last().map(String::as_str),
            Some("CPU time rand/1/bin (s)")
        );
        assert_eq!(key_name(Strategy::Rand1), "rand1bin");
        assert_eq!(key_name(Strategy::Thesis), "thesis");
    }

    #[test]
    fn comparisons_count_zeros_and_ratios() {
        let zeros = [0.0; 5];
        let c = compare(&zeros, &zeros);
        assert!(c.both_below && c.within && c.ratio.is_none());
        assert_eq!(c.verdict, Verdict::Same);
        assert_eq!(ratio_cell(&c), "both < 1e-8");
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
