//! Reruns the experiments of the thesis's chapter 5 and writes them beside the thesis's
//! published numbers (`gpude reproduce thesis`).
//!
//! The cases: the thesis variant ("EDCP": [`Strategy::Thesis`], the domain used only for
//! the initial population) at D = 128 on Griewank, Rosenbrock and f4 with
//! Np ∈ {2048, 4096, 8192} and on Ackley with Np up to 65535, 35 independent runs each
//! (one seed, random streams 0 … 34, all in one batch); and Table 5.6, the original DE
//! (rand/1/bin, F = 0.3, Cr = 0.5) against the variant at each function's largest Np with
//! the same number of evaluations.
//!
//! [`reproduce`] runs the cases; [`write`] writes `runs.json`, `histories.json`,
//! `REPORT.md` and one convergence plot per function (`plot_<function>.png` and `.svg`).

use super::minima::{self, Classification, Outcome};
use super::plot::{Chart, Corner, Line, LogAxis};
use gpude::host::config::variant_name;
use gpude::{
    BoundPolicy, Crossover, Error, Formula, Function, FunctionInfo, Job, Precision, Result,
    RunResult, Solver, Strategy, ThesisVariant,
};
use serde::Serialize;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime};

/// The thesis's published figures: S. J. Domínguez González, MSc thesis, UMSNH 2011,
/// chapter 5 (the GPU version "EDCP" on a Tesla C2050, single precision, D = 128,
/// 35 runs per case, success = final error ≤ 1e-10).
pub mod published {
    use gpude::Function;

    /// The dimension of every experiment.
    pub const DIM: u32 = 128;
    /// Independent runs per case.
    pub const RUNS: u32 = 35;
    /// A run succeeds when its final error is at most this.
    pub const SUCCESS_ERROR: f64 = 1e-10;

    /// One population size of one function.
    #[derive(Clone, Copy, Debug, PartialEq)]
    pub struct Case {
        pub np: u32,
        /// Mean total time of one run in seconds (section 5.1, Figures 5.1(a)–5.4(a)).
        pub time_s: f64,
        /// Mean final error over the 35 runs, where the text states it (Figures 5.9,
        /// 5.14, 5.18 and 5.23 are described only at some sizes).
        pub mean_error: Option<f64>,
        /// Runs with error ≤ 1e-10, in percent (Figures 5.8, 5.13, 5.22; Ackley: 0 % in
        /// every case, section 5.2.4).
        pub success_pct: f64,
    }

    /// One function's rows of Table 5.6: the original DE against EDCP.
    #[derive(Clone, Copy, Debug, PartialEq)]
    pub struct Comparison {
        /// The population size of the comparison (the function's largest).
        pub np: u32,
        /// The evaluations as Table 5.6 prints them (for Griewank 8,299,192, where
        /// Np + Np·g_max gives 8,200,192).
        pub evaluations_printed: u64,
        pub original_time_s: f64,
        pub original_error: f64,
        pub edcp_time_s: f64,
        pub edcp_error: f64,
    }

    /// One test function of chapter 5.
    #[derive(Clone, Copy, Debug, PartialEq)]
    pub struct Experiment {
        pub function: Function,
        /// The name in titles.
        pub title: &'static str,
        pub g_max: u32,
        /// The initial domain, the same interval in every component.
        pub domain: (f64, f64),
        pub cases: &'static [Case],
        pub table56: Comparison,
    }

    const fn case(np: u32, time_s: f64, mean_error: Option<f64>, success_pct: f64) -> Case {
        Case {
            np,
            time_s,
            mean_error,
            success_pct,
        }
    }

    /// The four experiments in the thesis's order (sections 5.2.2 – 5.2.5).
    pub const EXPERIMENTS: [Experiment; 4] = [
        Experiment {
            function: Function::Griewank,
            title: "Griewank",
            g_max: 1000,
            domain: (-600.0, 600.0),
            cases: &[
                case(2048, 1.192, Some(0.000986), 85.71),
                case(4096, 2.030, None, 94.29),
                case(8192, 4.071, Some(0.000211), 97.14),
            ],
            table56: Comparison {
                np: 8192,
                evaluations_printed: 8_299_192,
                original_time_s: 5.43684,
                original_error: 0.04316,
                edcp_time_s: 5.14613,
                edcp_error: 0.00041,
            },
        },
        Experiment {
            function: Function::Rosenbrock,
            title: "Rosenbrock",
            g_max: 18000,
            domain: (-600.0, 600.0),
            cases: &[
                case(2048, 25.607, Some(0.569521), 82.86),
                case(4096, 40.107, Some(0.569520), 82.86),
                case(8192, 74.375, Some(0.341711), 91.43),
            ],
            table56: Comparison {
                np: 8192,
                evaluations_printed: 147_464_192,
                original_time_s: 92.017630,
                original_error: 114.25053,
                edcp_time_s: 79.20554,
                edcp_error: 0.35437,
            },
        },
        Experiment {
            function: Function::Ackley,
            title: "Ackley",
            g_max: 3000,
            domain: (-32.0, 32.0),
            cases: &[
                case(2048, 3.105, Some(0.000017), 0.0),
                case(4096, 5.267, None, 0.0),
                case(8192, 10.723, None, 0.0),
                case(16384, 22.761, None, 0.0),
                case(32768, 46.352, None, 0.0),
                case(65535, 93.452, Some(0.000007), 0.0),
            ],
            table56: Comparison {
                np: 65535,
                evaluations_printed: 196_670_535,
                original_time_s: 152.13696,
                original_error: 21.11168,
                edcp_time_s: 139.83214,
                edcp_error: 0.000007,
            },
        },
        Experiment {
            function: Function::Penalized,
            title: "f4",
            g_max: 2000,
            domain: (-600.0, 600.0),
            cases: &[
                case(2048, 2.382, Some(3.784998e-13), 100.0),
                case(4096, 4.032, Some(2.144040e-13), 100.0),
                case(8192, 8.061, Some(2.144040e-13), 100.0),
            ],
            table56: Comparison {
                np: 8192,
                evaluations_printed: 16_392_192,
                original_time_s: 11.29543,
                original_error: 4.00148,
                edcp_time_s: 9.53449,
                edcp_error: 0.00024,
            },
        },
    ];

    /// Table 5.5: the 35 GPU errors of Ackley at Np = 65535: (Np, best, median, worst).
    pub const ACKLEY_TABLE_5_5: (u32, f64, f64, f64) = (65535, 6.68e-6, 6.68e-6, 1.05e-5);

    /// The experiment of a function, if the thesis has one.
    pub fn experiment(f: Function) -> Option<&'static Experiment> {
        EXPERIMENTS.iter().find(|e| e.function == f)
    }
}

/// The dimension of the quick mode.
pub const QUICK_DIM: u32 = 16;
/// The population sizes of the quick mode (every function).
pub const QUICK_NP: [u32; 2] = [64, 128];
/// The quick mode runs the thesis's g_max divided by this.
pub const QUICK_GEN_DIVISOR: u32 = 20;
/// Runs per case in the quick mode unless given.
pub const QUICK_RUNS: u32 = 3;
/// The most runs per case.
pub const MAX_RUNS: u32 = 1 << 16;
/// Generations kept per run in `histories.json` and in the plots (evenly spaced, first
/// and last included).
pub const HISTORY_POINTS: usize = 500;
/// F and Cr of the original DE of Table 5.6.
pub const ORIGINAL_F: f64 = 0.3;
pub const ORIGINAL_CR: f64 = 0.5;

/// The arithmetic of a case: the objective's formulas and the precision.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Arithmetic {
    pub formula: Formula,
    pub precision: Precision,
}

impl Arithmetic {
    /// The formulas as printed, in f32: what the thesis computed.
    pub const TEXTBOOK_F32: Arithmetic = Arithmetic {
        formula: Formula::Textbook,
        precision: Precision::F32,
    };
    /// The exact formulas in f32.
    pub const EXACT_F32: Arithmetic = Arithmetic {
        formula: Formula::Exact,
        precision: Precision::F32,
    };
    /// The exact formulas in f64.
    pub const F64: Arithmetic = Arithmetic {
        formula: Formula::Exact,
        precision: Precision::F64,
    };
    /// The formulas as printed, in f64.
    pub const TEXTBOOK_F64: Arithmetic = Arithmetic {
        formula: Formula::Textbook,
        precision: Precision::F64,
    };
    /// Every arithmetic with its name.
    pub const NAMED: [(&'static str, Arithmetic); 4] = [
        ("textbook-f32", Arithmetic::TEXTBOOK_F32),
        ("exact-f32", Arithmetic::EXACT_F32),
        ("f64", Arithmetic::F64),
        ("textbook-f64", Arithmetic::TEXTBOOK_F64),
    ];
    /// The default of a reproduction: the thesis's arithmetic, then the exact formulas
    /// in f32 and in f64.
    pub const DEFAULT: [Arithmetic; 3] = [
        Arithmetic::TEXTBOOK_F32,
        Arithmetic::EXACT_F32,
        Arithmetic::F64,
    ];

    /// `textbook-f32`, `exact-f32`, `f64` (exact) or `textbook-f64`.
    pub fn name(self) -> &'static str {
        Self::NAMED
            .iter()
            .find(|(_, a)| *a == self)
            .map_or("?", |(n, _)| n)
    }

    /// `textbook f32`, `exact f32`, `f64`, `textbook f64`: for tables.
    pub fn label(self) -> String {
        self.name().replace('-', " ")
    }

    /// Parses a comma list of arithmetic names (`exact-f64` is `f64`; `all` is every
    /// one).
    pub fn parse_list(list: &str) -> Result<Vec<Arithmetic>> {
        let known = || {
            Self::NAMED
                .iter()
                .map(|(n, _)| *n)
                .collect::<Vec<_>>()
                .join(", ")
                + ", all"
        };
        let mut out = Vec::new();
        for name in list.split(',').map(|n| n.trim().to_ascii_lowercase()) {
            if name.is_empty() {
                continue;
            }
            let found: Vec<Arithmetic> = match name.as_str() {
                "all" => Self::NAMED.iter().map(|(_, a)| *a).collect(),
                "exact-f64" => vec![Arithmetic::F64],
                n => match Self::NAMED.iter().find(|(k, _)| *k == n) {
                    Some((_, a)) => vec![*a],
                    None => {
                        return Err(Error::UnknownName {
                            kind: "arithmetic",
                            name: name.clone(),
                            known: known(),
                        });
                    }
                },
            };
            for a in found {
                if !out.contains(&a) {
                    out.push(a);
                }
            }
        }
        if out.is_empty() {
            return Err(Error::InvalidParameter {
                name: "arithmetic",
                value: format!("{list:?}"),
                allowed: format!("a comma list of {}", known()),
            });
        }
        Ok(out)
    }
}

impl Serialize for Arithmetic {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

/// The two algorithms of chapter 5.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum Scheme {
    /// The thesis's variant (EDCP): [`Strategy::Thesis`], no crossover.
    #[serde(rename = "thesis")]
    Edcp,
    /// The original DE of Table 5.6: rand/1/bin, F = 0.3, Cr = 0.5.
    #[serde(rename = "rand1bin")]
    Original,
}

impl Scheme {
    /// `thesis` or `rand1bin`.
    pub fn name(self) -> &'static str {
        match self {
            Scheme::Edcp => "thesis",
            Scheme::Original => "rand1bin",
        }
    }

    /// A description for people.
    pub fn describe(self) -> String {
        match self {
            Scheme::Edcp => "EDCP (thesis variant)".to_string(),
            Scheme::Original => {
                format!("original DE (rand/1/bin, F = {ORIGINAL_F}, Cr = {ORIGINAL_CR})")
            }
        }
    }
}

/// What to rerun.
#[derive(Clone, Debug, PartialEq)]
pub struct Options {
    /// Functions, in any order (the report follows the thesis's order).
    pub functions: Vec<Function>,
    /// The arithmetics every case runs in (see [`Arithmetic::DEFAULT`]).
    pub arithmetics: Vec<Arithmetic>,
    /// Independent runs per case.
    pub runs: u32,
    pub seed: u64,
    /// Small sizes (D = 16, Np ∈ {64, 128}, g_max / 20) for a check in seconds.
    pub quick: bool,
    /// Also run Table 5.6's original DE.
    pub table56: bool,
    /// How the EDCP cases compute their trials (the original DE is not affected).
    pub variant: ThesisVariant,
    /// Only these population sizes of the EDCP cases (`None`: every size).
    pub only_sizes: Option<Vec<u32>>,
}

impl Options {
    /// All four functions, the three default arithmetics, 35 runs, seed 1, Table 5.6
    /// included.
    pub fn thesis() -> Options {
        Options {
            functions: published::EXPERIMENTS.iter().map(|e| e.function).collect(),
            arithmetics: Arithmetic::DEFAULT.to_vec(),
            runs: published::RUNS,
            seed: 1,
            quick: false,
            table56: true,
            variant: ThesisVariant::DEFAULT,
            only_sizes: None,
        }
    }

    /// Parses a comma list of griewank, rosenbrock, f4 (or penalized) and ackley.
    pub fn parse_functions(list: &str) -> Result<Vec<Function>> {
        let known = || {
            published::EXPERIMENTS
                .iter()
                .map(|e| FunctionInfo::of(e.function).name)
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut out = Vec::new();
        for name in list.split(',').map(str::trim) {
            if name.is_empty() {
                continue;
            }
            let f = FunctionInfo::parse(name)
                .ok()
                .map(|i| i.function)
                .filter(|f| published::experiment(*f).is_some())
                .ok_or_else(|| Error::UnknownName {
                    kind: "thesis function",
                    name: name.to_string(),
                    known: known(),
                })?;
            if !out.contains(&f) {
                out.push(f);
            }
        }
        if out.is_empty() {
            return Err(Error::InvalidParameter {
                name: "functions",
                value: format!("{list:?}"),
                allowed: format!("a comma list of {}", known()),
            });
        }
        Ok(out)
    }

    /// Checks the values.
    pub fn validate(&self) -> Result<()> {
        if self.runs == 0 || self.runs > MAX_RUNS {
            return Err(Error::InvalidParameter {
                name: "runs",
                value: self.runs.to_string(),
                allowed: format!("1 ..= {MAX_RUNS}"),
            });
        }
        if self.functions.is_empty() {
            return Err(Error::InvalidParameter {
                name: "functions",
                value: "none".into(),
                allowed: "at least one of griewank, rosenbrock, f4, ackley".into(),
            });
        }
        if self.arithmetics.is_empty() {
            return Err(Error::InvalidParameter {
                name: "arithmetic",
                value: "none".into(),
                allowed: "at least one of textbook-f32, exact-f32, f64, textbook-f64".into(),
            });
        }
        if let Some(only) = &self.only_sizes {
            let mut known: Vec<u32> = self
                .experiments()
                .iter()
                .flat_map(|e| self.all_sizes(e))
                .collect();
            known.sort_unstable();
            known.dedup();
            if let Some(bad) = only.iter().find(|np| !known.contains(np)) {
                return Err(Error::InvalidParameter {
                    name: "sizes",
                    value: bad.to_string(),
                    allowed: format!(
                        "population sizes of the chosen functions{}: {}",
                        if self.quick { " in quick mode" } else { "" },
                        known
                            .iter()
                            .map(u32::to_string)
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                });
            }
            for e in self.experiments() {
                if self.sizes(e).is_empty() {
                    return Err(Error::InvalidParameter {
                        name: "sizes",
                        value: only
                            .iter()
                            .map(u32::to_string)
                            .collect::<Vec<_>>()
                            .join(","),
                        allowed: format!(
                            "at least one size of every chosen function: {} has {}",
                            FunctionInfo::of(e.function).name,
                            self.all_sizes(e)
                                .iter()
                                .map(u32::to_string)
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    });
                }
            }
        }
        Ok(())
    }

    /// The dimension of every case.
    pub fn dim(&self) -> u32 {
        if self.quick {
            QUICK_DIM
        } else {
            published::DIM
        }
    }

    /// The selected experiments in the thesis's order.
    pub fn experiments(&self) -> Vec<&'static published::Experiment> {
        published::EXPERIMENTS
            .iter()
            .filter(|e| self.functions.contains(&e.function))
            .collect()
    }

    /// The population sizes of an experiment's EDCP cases.
    pub fn sizes(&self, e: &published::Experiment) -> Vec<u32> {
        let mut all = self.all_sizes(e);
        if let Some(only) = &self.only_sizes {
            all.retain(|np| only.contains(np));
        }
        all
    }

    /// Every population size of an experiment (in quick mode, the quick ones).
    fn all_sizes(&self, e: &published::Experiment) -> Vec<u32> {
        if self.quick {
            QUICK_NP.to_vec()
        } else {
            e.cases.iter().map(|c| c.np).collect()
        }
    }

    /// Parses a comma list of population sizes (checked against the functions by
    /// [`Options::validate`]).
    pub fn parse_sizes(list: &str) -> Result<Vec<u32>> {
        let mut out = Vec::new();
        for item in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
            let np = item.parse::<u32>().map_err(|_| Error::InvalidParameter {
                name: "sizes",
                value: format!("{item:?}"),
                allowed: "a comma list of population sizes, such as 2048,4096".into(),
            })?;
            if !out.contains(&np) {
                out.push(np);
            }
        }
        if out.is_empty() {
            return Err(Error::InvalidParameter {
                name: "sizes",
                value: format!("{list:?}"),
                allowed: "a comma list of population sizes, such as 2048,4096".into(),
            });
        }
        Ok(out)
    }

    /// The generations of an experiment.
    pub fn g_max(&self, e: &published::Experiment) -> u32 {
        if self.quick {
            (e.g_max / QUICK_GEN_DIVISOR).max(1)
        } else {
            e.g_max
        }
    }

    /// Every case, in order: the thesis variant for each function, size and arithmetic,
    /// then the original DE of Table 5.6 (when asked for) at each function's largest size.
    pub fn cases(&self) -> Vec<Case> {
        let dim = self.dim();
        let mut out = Vec::new();
        for e in self.experiments() {
            for np in self.sizes(e) {
                for &arithmetic in &self.arithmetics {
                    out.push(Case {
                        function: e.function,
                        dim,
                        np,
                        g_max: self.g_max(e),
                        domain: e.domain,
                        arithmetic,
                        scheme: Scheme::Edcp,
                        variant: self.variant,
                    });
                }
            }
        }
        if self.table56 {
            for e in self.experiments() {
                let np = self.table56_np(e);
                for &arithmetic in &self.arithmetics {
                    out.push(Case {
                        function: e.function,
                        dim,
                        np,
                        g_max: self.g_max(e),
                        domain: e.domain,
                        arithmetic,
                        scheme: Scheme::Original,
                        variant: ThesisVariant::DEFAULT,
                    });
                }
            }
        }
        out
    }

    /// The population size of Table 5.6 for an experiment (its largest).
    pub fn table56_np(&self, e: &published::Experiment) -> u32 {
        if self.quick {
            QUICK_NP[QUICK_NP.len() - 1]
        } else {
            e.table56.np
        }
    }
}

/// One case: a function, a size, an arithmetic and a scheme.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Case {
    pub function: Function,
    pub dim: u32,
    pub np: u32,
    pub g_max: u32,
    pub domain: (f64, f64),
    pub arithmetic: Arithmetic,
    pub scheme: Scheme,
    /// The thesis variant of an EDCP case (the default for the original DE).
    pub variant: ThesisVariant,
}

impl Case {
    /// `griewank-np2048-exact-f32-thesis`.
    pub fn id(&self) -> String {
        format!(
            "{}-np{}-{}-{}",
            self.name(),
            self.np,
            self.arithmetic.name(),
            self.scheme.name()
        )
    }

    /// The function's gpude name.
    pub fn name(&self) -> &'static str {
        FunctionInfo::of(self.function).name
    }

    /// The generations a run makes: g_max, plus one under `generations=plus-one`.
    pub fn generations(&self) -> u32 {
        self.g_max + self.variant.extra_generations()
    }

    /// Np + Np·(the generations a run makes).
    pub fn evaluations(&self) -> u64 {
        self.np as u64 * (1 + self.generations() as u64)
    }

    /// The `runs` jobs of this case: one seed, streams 0 … runs − 1, with histories.
    pub fn jobs(&self, runs: u32, seed: u64) -> Result<Vec<Job>> {
        (0..runs)
            .map(|k| self.job(self.np, self.g_max, seed, k, true))
            .collect()
    }

    fn job(&self, np: u32, g_max: u32, seed: u64, stream: u32, history: bool) -> Result<Job> {
        let b = Job::builder(self.function, self.dim)
            .domain(self.domain.0, self.domain.1)
            .bounds(BoundPolicy::InitOnly)
            .pop(np)
            .generations(g_max)
            .precision(self.arithmetic.precision)
            .formula(self.arithmetic.formula)
            .seed(seed)
            .stream(stream)
            .history(history);
        let b = match self.scheme {
            Scheme::Edcp => b.strategy(Strategy::Thesis).thesis_variant(self.variant),
            Scheme::Original => b
                .strategy(Strategy::Rand1)
                .crossover(Crossover::Binomial)
                .f(ORIGINAL_F)
                .cr(ORIGINAL_CR),
        };
        b.build()
    }

    /// The thesis's numbers for this case (the thesis variant at the thesis's sizes).
    pub fn thesis(&self) -> Option<&'static published::Case> {
        if self.dim != published::DIM || self.scheme != Scheme::Edcp {
            return None;
        }
        let e = published::experiment(self.function)?;
        if e.g_max != self.g_max {
            return None;
        }
        e.cases.iter().find(|c| c.np == self.np)
    }
}

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

fn collect(case: &Case, results: &[RunResult], batch_wall_s: f64) -> CaseResult {
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
    fn find(&self, f: Function, np: u32, a: Arithmetic, s: Scheme) -> Option<&CaseResult> {
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

/// The files [`write`] made.
#[derive(Clone, Debug)]
pub struct Written {
    pub report: PathBuf,
    pub runs: PathBuf,
    pub histories: PathBuf,
    pub plots: Vec<PathBuf>,
}

/// One convergence plot.
#[derive(Clone, Debug)]
struct Plot {
    function: Function,
    arithmetic: Arithmetic,
    png: String,
    svg: String,
    /// Plotted values (median and quartiles) that were ≤ 0, drawn on the bottom line.
    clamped: usize,
    values: usize,
}

/// Writes `runs.json`, `histories.json`, the plots and `REPORT.md` into `dir` (made if
/// missing).
pub fn write(dir: &Path, r: &Reproduction) -> Result<Written> {
    std::fs::create_dir_all(dir)?;
    let runs = dir.join("runs.json");
    write_json(&runs, &runs_json(r), true)?;
    let histories = dir.join("histories.json");
    write_json(&histories, &histories_json(r), false)?;
    let mut plots = Vec::new();
    for e in r.options.experiments() {
        for (k, &a) in r.options.arithmetics.iter().enumerate() {
            let stem = if k == 0 {
                format!("plot_{}", FunctionInfo::of(e.function).name)
            } else {
                format!("plot_{}_{}", FunctionInfo::of(e.function).name, a.name())
            };
            plots.push(plot_function(dir, &stem, r, e, a)?);
        }
    }
    let report = dir.join("REPORT.md");
    crate::output::write(&report, report_markdown(r, &plots).as_bytes())?;
    Ok(Written {
        report,
        runs,
        histories,
        plots: plots
            .iter()
            .flat_map(|p| [dir.join(&p.png), dir.join(&p.svg)])
            .collect(),
    })
}

/// Writes `v` as JSON: indented, or compact (for the large histories).
fn write_json<T: Serialize>(path: &Path, v: &T, pretty: bool) -> Result<()> {
    let s = if pretty {
        serde_json::to_string_pretty(v)
    } else {
        serde_json::to_string(v)
    };
    let s = s.map_err(|e| {
        Error::Io(std::io::Error::other(format!(
            "writing {}: {e}",
            path.display()
        )))
    })?;
    crate::output::write(path, (s + "\n").as_bytes())?;
    Ok(())
}

#[derive(Serialize)]
struct CaseJson {
    case: String,
    /// `default` or the variant's `key=value` list.
    thesis_variant: String,
    function: &'static str,
    dim: u32,
    np: u32,
    g_max: u32,
    evaluations: u64,
    domain: [f64; 2],
    arithmetic: Arithmetic,
    precision: &'static str,
    formula: &'static str,
    strategy: Scheme,
    runs: usize,
    batch_wall_s: f64,
    time_per_run_s: f64,
    /// On the verified errors.
    stats: Stats,
    /// On the errors the search computed.
    reported: Stats,
    failures: Failures,
}

#[derive(Serialize)]
struct RunsJson<'a> {
    context: &'a Context,
    /// The EDCP cases' variant: `default` or its `key=value` list.
    thesis_variant: String,
    quick: bool,
    seed: u64,
    success_error: f64,
    cases: Vec<CaseJson>,
    runs: Vec<&'a RunRecord>,
}

fn runs_json(r: &Reproduction) -> RunsJson<'_> {
    RunsJson {
        context: &r.context,
        thesis_variant: variant_name(r.options.variant),
        quick: r.options.quick,
        seed: r.options.seed,
        success_error: published::SUCCESS_ERROR,
        cases: r
            .results
            .iter()
            .map(|c| CaseJson {
                case: c.case.id(),
                thesis_variant: variant_name(c.case.variant),
                function: c.case.name(),
                dim: c.case.dim,
                np: c.case.np,
                g_max: c.case.g_max,
                evaluations: c.case.evaluations(),
                domain: [c.case.domain.0, c.case.domain.1],
                arithmetic: c.case.arithmetic,
                precision: c.case.arithmetic.precision.name(),
                formula: gpude::host::config::formula_name(c.case.arithmetic.formula),
                strategy: c.case.scheme,
                runs: c.runs.len(),
                batch_wall_s: c.batch_wall_s,
                time_per_run_s: c.time_per_run_s(),
                stats: c.stats.clone(),
                reported: c.reported.clone(),
                failures: c.failures.clone(),
            })
            .collect(),
        runs: r.results.iter().flat_map(|c| &c.runs).collect(),
    }
}

#[derive(Serialize)]
struct HistoryJson<'a> {
    case: String,
    generations: &'a [u32],
    /// Per run (index = stream), the best error at each listed generation.
    runs: &'a [Vec<f64>],
    curve: &'a Curve,
}

#[derive(Serialize)]
struct HistoriesJson<'a> {
    note: &'static str,
    cases: Vec<HistoryJson<'a>>,
}

fn histories_json(r: &Reproduction) -> HistoriesJson<'_> {
    HistoriesJson {
        note: "best error (best value so far minus the minimum) after the listed generations \
               (0 = the initial population), at most 500 evenly spaced generations per run; \
               curve: 25 %, 50 % and 75 % quantiles across runs",
        cases: r
            .results
            .iter()
            .map(|c| HistoryJson {
                case: c.case.id(),
                generations: &c.history_generations,
                runs: &c.histories,
                curve: &c.curve,
            })
            .collect(),
    }
}

// ---------------------------------------------------------------------------------------
// Plots

fn plot_function(
    dir: &Path,
    stem: &str,
    r: &Reproduction,
    e: &published::Experiment,
    arithmetic: Arithmetic,
) -> Result<Plot> {
    let cases: Vec<&CaseResult> = r
        .options
        .sizes(e)
        .into_iter()
        .filter_map(|np| r.find(e.function, np, arithmetic, Scheme::Edcp))
        .collect();
    let axis = LogAxis::of(
        cases
            .iter()
            .flat_map(|c| [&c.curve.q25, &c.curve.median, &c.curve.q75])
            .flat_map(|v| v.iter().copied()),
    );
    // Values ≤ 0 are drawn on the axis' bottom line, which stands for them.
    let bottom = axis.bottom();
    let mut clamped = 0;
    let mut values = 0;
    let mut clamp = |v: f64| {
        values += 1;
        if v > 0.0 {
            v
        } else {
            clamped += 1;
            bottom
        }
    };
    let lines: Vec<Line> = cases
        .iter()
        .map(|c| {
            // (generation, q25, median, q75)
            let kept: Vec<(f64, f64, f64, f64)> = c
                .curve
                .generations
                .iter()
                .enumerate()
                .filter(|(k, _)| !c.curve.median[*k].is_nan())
                .map(|(k, &g)| {
                    (
                        f64::from(g),
                        clamp(c.curve.q25[k]),
                        clamp(c.curve.median[k]),
                        clamp(c.curve.q75[k]),
                    )
                })
                .collect();
            Line {
                label: format!("Np = {}", c.case.np),
                points: kept.iter().map(|p| (p.0, p.2)).collect(),
                band: kept.iter().map(|p| (p.0, p.1, p.3)).collect(),
            }
        })
        .collect();
    let runs = r.options.runs;
    let chart = Chart {
        title: format!(
            "{}, D = {}, {}: best error per generation (median, 25–75 % band, {runs} runs)",
            e.title,
            r.options.dim(),
            arithmetic.label()
        ),
        x_desc: "generation",
        x_max: f64::from(r.options.g_max(e)),
        y_desc: if axis.bottom_label.is_some() {
            "best error (log scale; bottom line = 0)"
        } else {
            "best error (log scale)"
        },
        y: axis,
        legend: Corner::UpperRight,
        lines,
    };
    let png = format!("{stem}.png");
    let svg = format!("{stem}.svg");
    chart.png(&dir.join(&png))?;
    chart.svg(&dir.join(&svg))?;
    Ok(Plot {
        function: e.function,
        arithmetic,
        png,
        svg,
        clamped,
        values,
    })
}

// ---------------------------------------------------------------------------------------
// The report

/// Errors: `0`, or three decimals in scientific notation.
fn fmt_err(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else if !v.is_finite() {
        format!("{v}")
    } else {
        format!("{v:.3e}")
    }
}

/// Seconds: four decimals, scientific below a millisecond.
fn fmt_secs(v: f64) -> String {
    if v >= 1e-3 || v == 0.0 {
        format!("{v:.4}")
    } else {
        format!("{v:.3e}")
    }
}

/// A thesis figure as printed (the shortest form that reads back).
fn fmt_thesis(v: f64) -> String {
    if v != 0.0 && v.abs() < 1e-6 {
        format!("{v:e}")
    } else {
        format!("{v}")
    }
}

/// 1234567 → `1,234,567`.
fn grouped(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (k, ch) in s.chars().enumerate() {
        if k > 0 && (s.len() - k) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

const NONE: &str = "—";

fn row(cells: &[String]) -> String {
    format!("| {} |\n", cells.join(" | "))
}

fn header(cells: &[&str]) -> String {
    let mut s = row(&cells.iter().map(|c| c.to_string()).collect::<Vec<_>>());
    s.push_str(&row(&cells
        .iter()
        .map(|_| "---".to_string())
        .collect::<Vec<_>>()));
    s
}

/// A pair of values as `reported / verified`.
fn pair(reported: String, verified: String) -> String {
    format!("{reported} / {verified}")
}

/// A count with the median verified error of its runs: `18 (median 1.700e-9)`.
fn count_with_median(n: usize, median: f64) -> String {
    if n == 0 {
        "0".into()
    } else {
        format!("{n} (median {})", fmt_err(median))
    }
}

/// The trapped runs of a case: `3 (3 at …, error 3.987e0)`.
fn trapped_cell(f: &Failures) -> String {
    let n = f.trapped_runs();
    if n == 0 {
        return "0".into();
    }
    let parts: Vec<String> = f
        .trapped
        .iter()
        .map(|t| {
            let e = if t.minimum_error_least == t.minimum_error_largest {
                format!("error {}", fmt_minimum(t.minimum_error_least))
            } else {
                format!(
                    "errors {} … {}",
                    fmt_minimum(t.minimum_error_least),
                    fmt_minimum(t.minimum_error_largest)
                )
            };
            format!("{} at {}, {e}", t.runs, t.minimum)
        })
        .collect();
    format!("{n} ({})", parts.join("; "))
}

/// A local minimum's error: six significant digits, in plain decimals.
fn fmt_minimum(v: f64) -> String {
    if !(v.is_finite() && v > 0.0) {
        return format!("{v}");
    }
    let decimals = (5 - v.log10().floor() as i32).max(0) as usize;
    format!("{v:.decimals$}")
}

/// The whole of `REPORT.md`.
/// The report header's line on the EDCP cases' variant.
fn variant_line(v: ThesisVariant) -> String {
    if v.is_default() {
        return "default (gpude's own thesis strategy)".into();
    }
    let deviation = if v.lambda_draw == gpude::device::variant::LambdaDraw::PerIndividual {
        "; λ per individual is a deviation from the thesis, run as a contrast"
    } else {
        ""
    };
    format!(
        "**`{}`**: the EDCP cases run this alternative to gpude's thesis strategy (`--thesis-variant`; the original DE of Table 5.6 is not affected){deviation}",
        variant_name(v)
    )
}

fn report_markdown(r: &Reproduction, plots: &[Plot]) -> String {
    let o = &r.options;
    let c = &r.context;
    let mut s = String::new();
    let _ = writeln!(s, "# Thesis chapter 5, rerun with gpude\n");
    if o.quick {
        let _ = writeln!(
            s,
            "**Quick mode**: D = {QUICK_DIM}, Np ∈ {{{}}}, g_max = the thesis's / {QUICK_GEN_DIVISOR}. \
             These sizes are not the thesis's, so the thesis columns are left empty ({NONE}).\n",
            QUICK_NP.map(|n| n.to_string()).join(", ")
        );
    }
    let arithmetics: Vec<String> = o.arithmetics.iter().map(|a| a.label()).collect();
    let mut kv = |k: &str, v: String| {
        let _ = writeln!(s, "- **{k}**: {v}");
    };
    kv("date", c.date.clone());
    kv("gpude", format!("{} (PTX for {})", c.gpude, c.ptx_arch));
    kv(
        "backend",
        match &c.fallback_reason {
            Some(why) => format!("{} (no GPU: {why})", c.backend),
            None => c.backend.to_string(),
        },
    );
    kv(
        "device",
        match (&c.device, c.multiprocessors) {
            (Some(d), Some(sm)) => format!("{d} ({sm} multiprocessors)"),
            (Some(d), None) => d.clone(),
            _ => format!("CPU, {} threads", c.cpu_threads),
        },
    );
    kv("command", format!("`{}`", c.command));
    kv("arithmetic", arithmetics.join(", "));
    kv("thesis variant", variant_line(o.variant));
    kv(
        "runs per case",
        format!(
            "{} (seed {}, random streams 0 … {})",
            o.runs,
            o.seed,
            o.runs - 1
        ),
    );
    kv("dimension", format!("D = {}", o.dim()));
    kv(
        "success",
        format!(
            "verified error ≤ {:e} (the best point re-evaluated in f64 with the exact formulas)",
            published::SUCCESS_ERROR
        ),
    );
    s.push('\n');
    let _ = writeln!(
        s,
        "Thesis figures: S. J. Domínguez González, MSc thesis, UMSNH 2011, chapter 5 \
         (GPU version \"EDCP\", NVIDIA Tesla C2050, single precision, the formulas as printed): \
         times from section 5.1, success rates and mean errors from sections 5.2.2–5.2.5, \
         Table 5.5 and Table 5.6. {NONE} marks a figure the thesis does not state (or, in quick \
         mode, a case it did not run).\n"
    );
    let _ = writeln!(
        s,
        "Arithmetics: *textbook f32* evaluates the formulas as printed in single precision, as \
         the thesis did; *exact f32* and *f64* evaluate them arranged so that nothing cancels \
         (docs/FUNCTIONS.md). Every run's best point is then re-evaluated in f64 with the exact \
         formulas: its *verified* error. Cells that read `a / b` give the *reported* figure (on \
         the error the search computed, which is what the thesis reports) and the *verified* one. \
         A reported success that verification refutes is an *artefact* of the arithmetic.\n"
    );
    let _ = writeln!(s, "## How time is measured\n");
    let _ = writeln!(
        s,
        "All runs of a case go to the engine as one batch (`Solver::run_batch`). \
         *batch wall* is the wall time of that call over all {} runs (uploads, the runs and \
         the downloads of results and histories); *time/run* is batch wall ÷ runs. {} \
         The thesis's time is the mean total time of one run on its own. \
         *speed-up* = thesis time/run ÷ our time/run.\n",
        o.runs,
        if c.backend == "cuda" {
            "Before each timed batch a one-generation launch of the same kernel runs, so that the \
             driver's compilation of the PTX is not timed. On the GPU the runs of a batch run at \
             the same time (one block per run in one launch with the batch layout), so time/run \
             is a share of a common launch, not the time one run takes alone."
        } else {
            "The CPU engine runs the batch's runs one after another, each generation spread \
             over all CPU threads."
        }
    );
    for e in o.experiments() {
        function_section(&mut s, r, e, plots);
    }
    artefacts_section(&mut s, r);
    if o.table56 {
        table56_section(&mut s, r);
    }
    notes_section(&mut s, r, plots);
    s
}

fn function_section(s: &mut String, r: &Reproduction, e: &published::Experiment, plots: &[Plot]) {
    let o = &r.options;
    let name = FunctionInfo::of(e.function).name;
    let _ = writeln!(
        s,
        "## {} (`{name}`)\n\nD = {}, g_max = {}, initial domain [{}, {}]^{}, thesis variant.\n",
        e.title,
        o.dim(),
        o.g_max(e),
        e.domain.0,
        e.domain.1,
        o.dim()
    );
    let _ = writeln!(
        s,
        "### Success and errors\n\nPer arithmetic: reported / verified.\n"
    );
    let mut head: Vec<String> = [
        "Np",
        "evaluations",
        "success % (thesis)",
        "mean error (thesis)",
    ]
    .map(String::from)
    .to_vec();
    for a in &o.arithmetics {
        let l = a.label();
        head.push(format!("{l}: success % (ours)"));
        head.push(format!("{l}: mean error (ours)"));
        head.push(format!("{l}: median error (ours)"));
    }
    s.push_str(&header(
        &head.iter().map(String::as_str).collect::<Vec<_>>(),
    ));
    for np in o.sizes(e) {
        let cases: Vec<Option<&CaseResult>> = o
            .arithmetics
            .iter()
            .map(|&a| r.find(e.function, np, a, Scheme::Edcp))
            .collect();
        let Some(first) = cases.iter().flatten().next() else {
            continue;
        };
        let t = first.case.thesis();
        let mut cells = vec![
            np.to_string(),
            grouped(first.case.evaluations()),
            t.map_or(NONE.into(), |t| format!("{:.2}", t.success_pct)),
            t.and_then(|t| t.mean_error).map_or(NONE.into(), fmt_thesis),
        ];
        for c in &cases {
            match c {
                Some(c) => {
                    cells.push(pair(
                        format!("{:.2}", c.reported.success_pct),
                        format!("{:.2}", c.stats.success_pct),
                    ));
                    cells.push(pair(
                        fmt_err(c.reported.mean_error),
                        fmt_err(c.stats.mean_error),
                    ));
                    cells.push(pair(
                        fmt_err(c.reported.median_error),
                        fmt_err(c.stats.median_error),
                    ));
                }
                None => cells.extend([NONE.to_string(), NONE.into(), NONE.into()]),
            }
        }
        s.push_str(&row(&cells));
    }
    s.push('\n');
    let _ = writeln!(
        s,
        "### Failing runs and times\n\nRuns whose verified error exceeds {:e}, classified as in \
         the notes: trapped at a known local minimum, still descending, or stalled.\n",
        published::SUCCESS_ERROR
    );
    s.push_str(&header(&[
        "Np",
        "arithmetic",
        "failures (ours)",
        "artefacts (ours)",
        "trapped (ours)",
        "descending (ours)",
        "stalled (ours)",
        "best verified (ours)",
        "worst verified (ours)",
        "time/run s (thesis)",
        "time/run s (ours)",
        "batch wall s (ours)",
        "speed-up",
    ]));
    for np in o.sizes(e) {
        for &a in &o.arithmetics {
            let Some(c) = r.find(e.function, np, a, Scheme::Edcp) else {
                continue;
            };
            let t = c.case.thesis();
            let ours = c.time_per_run_s();
            let f = &c.failures;
            s.push_str(&row(&[
                np.to_string(),
                a.label(),
                (c.stats.runs - c.stats.successes).to_string(),
                f.artefacts.to_string(),
                trapped_cell(f),
                count_with_median(f.descending, f.descending_median_error),
                count_with_median(f.stalled, f.stalled_median_error),
                fmt_err(c.stats.best_error),
                fmt_err(c.stats.worst_error),
                t.map_or(NONE.into(), |t| fmt_thesis(t.time_s)),
                fmt_secs(ours),
                fmt_secs(c.batch_wall_s),
                match t {
                    Some(t) if ours > 0.0 => format!("{:.1}", t.time_s / ours),
                    _ => NONE.into(),
                },
            ]));
        }
    }
    s.push('\n');
    if e.function == Function::Ackley && !o.quick {
        let (np, best, median, worst) = published::ACKLEY_TABLE_5_5;
        let _ = writeln!(
            s,
            "Thesis Table 5.5 (Ackley, Np = {np}, the 35 GPU errors): best {best:e}, median {median:e}, worst {worst:e}.\n"
        );
    }
    for p in plots.iter().filter(|p| p.function == e.function) {
        let _ = writeln!(
            s,
            "![{} convergence, {}]({}) ([SVG]({}))\n",
            e.title,
            p.arithmetic.label(),
            p.png,
            p.svg
        );
    }
}

/// Which of the thesis's successes hold up: per case, the reported successes of the
/// thesis's arithmetic (textbook f32) and how many of them verification refutes.
fn artefacts_section(s: &mut String, r: &Reproduction) {
    let o = &r.options;
    let _ = writeln!(s, "## f32 artefacts: which thesis successes hold up\n");
    let _ = writeln!(
        s,
        "The thesis judged success on the value its search computed, in textbook f32. Our \
         textbook f32 runs count the same way (*reported*); the verified error says whether the \
         best point really is within {:e} of the minimum. Per case, from textbook f32:\n",
        published::SUCCESS_ERROR
    );
    if !o.arithmetics.contains(&Arithmetic::TEXTBOOK_F32) {
        let _ = writeln!(
            s,
            "- textbook f32 was not run (`--arithmetic`), so there is nothing to judge here.\n"
        );
        return;
    }
    for e in o.experiments() {
        for np in o.sizes(e) {
            let Some(c) = r.find(e.function, np, Arithmetic::TEXTBOOK_F32, Scheme::Edcp) else {
                continue;
            };
            let reported = c.reported.successes;
            let artefacts = c.failures.artefacts;
            let thesis = c
                .case
                .thesis()
                .map(|t| format!("the thesis reports {:.2} %; ", t.success_pct));
            let subject = if thesis.is_some() {
                "the thesis's successes here"
            } else {
                "the reported successes here"
            };
            let artefact_errors: Vec<f64> = c
                .runs
                .iter()
                .filter(|r| r.artefact)
                .map(|r| r.verified_error)
                .collect();
            let verdict = if reported == 0 {
                "no run reports a success in this arithmetic, so there is nothing to refute"
                    .to_string()
            } else if artefacts == reported {
                format!(
                    "all of them fail verification (median verified error {}): **{subject} are f32 artefacts**",
                    fmt_err(crate::stats::median(&artefact_errors))
                )
            } else if artefacts > 0 {
                format!(
                    "{artefacts} of them fail verification (median verified error {}): **{subject} are partly f32 artefacts** (about {:.0} %)",
                    fmt_err(crate::stats::median(&artefact_errors)),
                    100.0 * artefacts as f64 / reported as f64
                )
            } else {
                format!(
                    "all of them hold up under verification: **{subject} are not f32 artefacts**"
                )
            };
            let others: Vec<String> = o
                .arithmetics
                .iter()
                .filter(|&&a| a != Arithmetic::TEXTBOOK_F32)
                .filter_map(|&a| r.find(e.function, np, a, Scheme::Edcp))
                .map(|c| {
                    format!(
                        "{} {}/{} verified",
                        c.case.arithmetic.label(),
                        c.stats.successes,
                        c.stats.runs
                    )
                })
                .collect();
            let _ = writeln!(
                s,
                "- {}, Np = {np}: {}{reported} of our {} textbook f32 runs report success; {verdict}.{}",
                e.title,
                thesis.unwrap_or_default(),
                c.stats.runs,
                if others.is_empty() {
                    String::new()
                } else {
                    format!(" For comparison: {}.", others.join(", "))
                }
            );
        }
    }
    s.push('\n');
}

fn table56_section(s: &mut String, r: &Reproduction) {
    let o = &r.options;
    let _ = writeln!(
        s,
        "## Table 5.6: original DE against the thesis variant\n\n\
         The original DE is rand/1/bin with F = {ORIGINAL_F} and Cr = {ORIGINAL_CR}, the same \
         initial domain (initialisation only) and the same evaluations as the variant at each \
         function's largest population. The variant's rows are the runs of the sections above. \
         Cells with two figures: reported / verified.\n"
    );
    s.push_str(&header(&[
        "function",
        "Np",
        "g_max",
        "evaluations",
        "arithmetic",
        "scheme",
        "mean error (thesis)",
        "mean error (ours)",
        "success % (ours)",
        "time s (thesis)",
        "time/run s (ours)",
        "batch wall s (ours)",
    ]));
    for e in o.experiments() {
        let np = o.table56_np(e);
        for &a in &o.arithmetics {
            for scheme in [Scheme::Original, Scheme::Edcp] {
                let Some(c) = r.find(e.function, np, a, scheme) else {
                    continue;
                };
                let (t_err, t_time) = match (o.quick, scheme) {
                    (true, _) => (None, None),
                    (false, Scheme::Original) => (
                        Some(e.table56.original_error),
                        Some(e.table56.original_time_s),
                    ),
                    (false, Scheme::Edcp) => {
                        (Some(e.table56.edcp_error), Some(e.table56.edcp_time_s))
                    }
                };
                s.push_str(&row(&[
                    e.title.to_string(),
                    np.to_string(),
                    c.case.g_max.to_string(),
                    grouped(c.case.evaluations()),
                    a.label(),
                    scheme.describe(),
                    t_err.map_or(NONE.into(), fmt_thesis),
                    pair(fmt_err(c.reported.mean_error), fmt_err(c.stats.mean_error)),
                    pair(
                        format!("{:.2}", c.reported.success_pct),
                        format!("{:.2}", c.stats.success_pct),
                    ),
                    t_time.map_or(NONE.into(), fmt_thesis),
                    fmt_secs(c.time_per_run_s()),
                    fmt_secs(c.batch_wall_s),
                ]));
            }
        }
    }
    s.push('\n');
    if !o.quick {
        let printed: Vec<String> = o
            .experiments()
            .iter()
            .filter(|e| e.table56.evaluations_printed != e.table56.np as u64 * (1 + e.g_max as u64))
            .map(|e| {
                format!(
                    "{} {} (Np + Np·g_max = {})",
                    e.title,
                    grouped(e.table56.evaluations_printed),
                    grouped(e.table56.np as u64 * (1 + e.g_max as u64))
                )
            })
            .collect();
        if !printed.is_empty() {
            let _ = writeln!(
                s,
                "Evaluations as Table 5.6 prints them, where they differ from Np + Np·g_max: {}.\n",
                printed.join("; ")
            );
        }
    }
}

fn notes_section(s: &mut String, r: &Reproduction, plots: &[Plot]) {
    let o = &r.options;
    let _ = writeln!(s, "## Notes\n");
    let arithmetics: Vec<String> = o.arithmetics.iter().map(|a| a.label()).collect();
    let mut note = |t: String| {
        let _ = writeln!(s, "- {t}");
    };
    note(format!(
        "Arithmetic: {} on every engine; the thesis ran in single precision with the formulas \
         as printed (textbook f32). f4 is the standard generalized penalized function 2 (the \
         thesis's equation prints a factor 10 that its code and results do not have; see \
         docs/FUNCTIONS.md).",
        arithmetics.join(", ")
    ));
    note(format!(
        "Verification: after each run its best point is evaluated on the host in f64 with the \
         exact formulas; error statistics marked verified, success counts and the \
         classification use that value (`verified_error` in runs.json), reported ones the \
         search's own (`error`). Success = error ≤ {:e}.",
        published::SUCCESS_ERROR
    ));
    note(format!(
        "Failing runs (`outcome` in runs.json): *trapped* when the verified error is within \
         {:.0} % of the error of the known local minimum of the best point's cell (Rosenbrock: \
         x₁ < 0, the local minimum near (−1, 1, …, 1), found by Newton's method, error 3.98662 \
         at D = 128; f4: the leading components with round(3(x_j − 1)) ≠ 0, each held a third \
         (or more) off 1, error 0.010987 for x₁ alone; Griewank: the components with \
         n_j = round(x_j/(π√j)) ≠ 0 when Σn_j is even, so that the cosines' product is +1 \
         (x₁ ≈ ±2π alone: error 0.009865); minima refined in f64 by \
         golden-section searches; `minimum`, `minimum_error` and `minimum_distance`, the largest \
         component difference, in runs.json). Otherwise *descending* when the search's best \
         value still improved over the last {:.0} % of the generations, else *stalled* (its \
         arithmetic no longer sees better points). Ackley has no known local minima here.",
        100.0 * minima::TRAPPED_RELATIVE,
        100.0 * minima::TAIL
    ));
    note(
        "Bounds: the domain is used only to draw the initial population; later generations \
         are not kept inside it (as in the thesis)."
            .into(),
    );
    note(
        "Random numbers: Philox4x32-10, keyed by the seed, one random stream per run \
         (stream k for run k); the thesis used CURAND's XORWOW generator."
            .into(),
    );
    note(
        "Random indices r1, r2 (and r3 for rand/1) are drawn without rejection: each draw is \
         uniform over the indices still free (one 32-bit word each, multiply-shift mapping with \
         bias below Np/2³²); the thesis's appendix B draws them by rejection."
            .into(),
    );
    note(
        "λ of the thesis variant is drawn afresh for every component of every individual, \
         uniform in (0, 1] (w·2⁻³² + 2⁻³³ for a 32-bit word w)."
            .into(),
    );
    note(
        "x_best is the best individual of the current population; with greedy selection this \
         is the best solution found so far."
            .into(),
    );
    note(
        "Every run performs all g_max generations (no early stop); error = best value − the \
         function's minimum (0 for all four); evaluations = Np + Np·g_max."
            .into(),
    );
    if r.context.backend == "cuda" {
        note(format!(
            "GPU layout flag: `{}` (with `auto` or `batch`, the runs of a case share one launch, \
             one thread block per run).",
            r.context.mode
        ));
    }
    let clamped: usize = plots.iter().map(|p| p.clamped).sum();
    let values: usize = plots.iter().map(|p| p.values).sum();
    note(format!(
        "Plots: one per function and arithmetic, of the error the search computed (reported): \
         the median and the 25–75 % band of the best error across runs, at most \
         {HISTORY_POINTS} evenly spaced generations per curve, log-scale y axis. A log scale \
         cannot show errors ≤ 0 (an exact zero error, or a best value rounded below the \
         minimum): where there are such values, the plot's bottom line, labelled 0 and two \
         decades below the smallest positive value plotted, stands for them; {clamped} of \
         {values} plotted values (quartiles and medians) are drawn there. Text is set in \
         DejaVu Sans."
    ));
    note(
        "Files: `runs.json` (every run, with its verified error and outcome, and the case \
         statistics, reported and verified), `histories.json` (per run, the best error at the \
         sampled generations, and the plotted quantiles)."
            .into(),
    );
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

    #[test]
    fn thesis_evaluations() {
        let o = Options::thesis();
        let cases = o.cases();
        // 3 + 3 + 6 + 3 sizes of the variant, 4 comparisons, in three arithmetics.
        assert_eq!(cases.len(), 19 * 3);
        let ack = cases
            .iter()
            .find(|c| c.function == Function::Ackley && c.scheme == Scheme::Original)
            .unwrap();
        assert_eq!(ack.arithmetic, Arithmetic::TEXTBOOK_F32);
        assert_eq!(ack.evaluations(), 196_670_535);
        assert!(
            cases
                .iter()
                .all(|c| c.scheme == Scheme::Original || c.thesis().is_some())
        );
    }

    #[test]
    fn function_lists() {
        assert_eq!(
            Options::parse_functions("ackley, f4,penalized").unwrap(),
            vec![Function::Ackley, Function::Penalized]
        );
        assert!(Options::parse_functions("sphere").is_err());
        assert!(Options::parse_functions(" , ").is_err());
        assert_eq!(
            Arithmetic::parse_list("textbook-f32, f64,exact-f64").unwrap(),
            vec![Arithmetic::TEXTBOOK_F32, Arithmetic::F64]
        );
        assert_eq!(Arithmetic::parse_list("all").unwrap().len(), 4);
        assert!(Arithmetic::parse_list("f16").is_err());
        assert!(Arithmetic::parse_list(",").is_err());
        for (name, a) in Arithmetic::NAMED {
            assert_eq!(a.name(), name);
        }
    }

    /// A run's result as an engine would return it.
    fn result(x: Vec<f64>, error: f64, verified_error: f64, history: Vec<f64>) -> RunResult {
        RunResult {
            best_x: nalgebra::DVector::from_vec(x),
            best_f: error,
            error,
            verified_error,
            errors_disagree: error != verified_error,
            generations: history.len() as u32 - 1,
            evaluations: 0,
            termination: gpude::Termination::MaxGenerations,
            elapsed: std::time::Duration::ZERO,
            history: Some(history),
            backend: "cpu",
            seed: 1,
            stream: 0,
        }
    }

    #[test]
    fn report_names_artefacts_and_trapped_runs() {
        let options = Options {
            functions: vec![Function::Griewank],
            arithmetics: vec![Arithmetic::TEXTBOOK_F32, Arithmetic::EXACT_F32],
            runs: 4,
            table56: false,
            ..Options::thesis()
        };
        let near = vec![1e-4; 128];
        let trap = minima::local_minimum_of_cell(Function::Griewank, &{
            let mut x = vec![0.0; 128];
            x[0] = 6.3;
            x
        })
        .unwrap();
        let flat = vec![1.0; 1001];
        let results = options
            .cases()
            .iter()
            .map(|case| {
                let rs: Vec<RunResult> = if case.arithmetic == Arithmetic::TEXTBOOK_F32 {
                    // Three reported successes the verification refutes, one descending.
                    let mut v = vec![result(near.clone(), 0.0, 3e-8, flat.clone()); 3];
                    v.push(result(
                        vec![0.5; 128],
                        0.02,
                        0.02,
                        (0..=1000).map(|g| 1.0 / (1.0 + g as f64)).collect(),
                    ));
                    v
                } else {
                    // Three true successes and one run trapped at a local minimum.
                    let mut v = vec![result(vec![1e-9; 128], 1e-13, 1e-13, flat.clone()); 3];
                    v.push(result(trap.x.clone(), trap.error, trap.error, flat.clone()));
                    v
                };
                collect(case, &rs, 1.0)
            })
            .collect();
        let r = Reproduction {
            options,
            context: Context {
                date: utc_now(),
                command: "gpude reproduce thesis".into(),
                gpude: "0",
                ptx_arch: "sm_70",
                backend: "cpu",
                device: None,
                multiprocessors: None,
                fallback_reason: None,
                mode: "auto".into(),
                cpu_threads: 1,
            },
            results,
        };
        let c = r
            .find(
                Function::Griewank,
                2048,
                Arithmetic::TEXTBOOK_F32,
                Scheme::Edcp,
            )
            .unwrap();
        assert_eq!((c.reported.successes, c.stats.successes), (3, 0));
        assert_eq!(c.failures.artefacts, 3);
        assert_eq!((c.failures.stalled, c.failures.descending), (3, 1));
        let c = r
            .find(
                Function::Griewank,
                2048,
                Arithmetic::EXACT_F32,
                Scheme::Edcp,
            )
            .unwrap();
        assert_eq!((c.reported.successes, c.stats.successes), (3, 3));
        assert_eq!(c.failures.trapped_runs(), 1);
        assert_eq!(c.runs[3].classification.outcome, Outcome::Trapped);

        let report = report_markdown(&r, &[]);
        assert!(
            report.contains(
                "- Griewank, Np = 2048: the thesis reports 85.71 %; 3 of our 4 textbook f32 runs \
                 report success; all of them fail verification (median verified error 3.000e-8): \
                 **the thesis's successes here are f32 artefacts**. For comparison: exact f32 3/4 \
                 verified."
            ),
            "{report}"
        );
        assert!(
            report.contains("| 2048 | 2,050,048 | 85.71 | 0.000986 | 75.00 / 0.00 | "),
            "{report}"
        );
        assert!(
            report.contains(&format!(
                "| 2048 | exact f32 | 1 | 0 | 1 (1 at {}, error 0.00986467) | 0 | 0 |",
                trap.name
            )),
            "{report}"
        );
        assert!(
            report.contains(
                "| 2048 | textbook f32 | 4 | 3 | 0 | 1 (median 2.000e-2) | 3 (median 3.000e-8) |"
            ),
            "{report}"
        );
    }

    #[test]
    fn grouping() {
        assert_eq!(grouped(8_200_192), "8,200,192");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1000), "1,000");
    }
}
