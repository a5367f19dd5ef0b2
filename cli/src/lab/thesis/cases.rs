//! What a thesis reproduction reruns: the arithmetics and the two schemes of chapter 5,
//! the options of `gpude reproduce thesis`, and the cases they make.

use super::published;
use gpude::{
    BoundPolicy, Crossover, Error, Formula, Function, FunctionInfo, Job, Precision, Result,
    Strategy, ThesisVariant,
};
use serde::Serialize;

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
    /// The arithmetic of `formula` in `precision`.
    pub const fn new(formula: Formula, precision: Precision) -> Arithmetic {
        Arithmetic { formula, precision }
    }

    /// The formulas as printed, in f32: what the thesis computed.
    pub const TEXTBOOK_F32: Arithmetic = Arithmetic::new(Formula::Textbook, Precision::F32);
    /// The exact formulas in f32.
    pub const EXACT_F32: Arithmetic = Arithmetic::new(Formula::Exact, Precision::F32);
    /// The exact formulas in f64.
    pub const F64: Arithmetic = Arithmetic::new(Formula::Exact, Precision::F64);
    /// The formulas as printed, in f64.
    pub const TEXTBOOK_F64: Arithmetic = Arithmetic::new(Formula::Textbook, Precision::F64);
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
        let allowed = || format!("a comma list of {}", known());
        comma_list(list, "arithmetic", allowed, |item| {
            let name = item.to_ascii_lowercase();
            Ok(match name.as_str() {
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
            })
        })
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
        let allowed = || format!("a comma list of {}", known());
        comma_list(list, "functions", allowed, |name| {
            let f = FunctionInfo::parse(name)
                .ok()
                .map(|i| i.function)
                .filter(|f| published::experiment(*f).is_some())
                .ok_or_else(|| Error::UnknownName {
                    kind: "thesis function",
                    name: name.to_string(),
                    known: known(),
                })?;
            Ok(vec![f])
        })
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
        let allowed = || "a comma list of population sizes, such as 2048,4096".to_string();
        comma_list(list, "sizes", allowed, |item| {
            let np = item.parse::<u32>().map_err(|_| Error::InvalidParameter {
                name: "sizes",
                value: format!("{item:?}"),
                allowed: allowed(),
            })?;
            Ok(vec![np])
        })
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
        // The cases of one function at one size: one per arithmetic.
        let each_arithmetic = |e: &'static published::Experiment, np, scheme, variant| {
            self.arithmetics.iter().map(move |&arithmetic| Case {
                function: e.function,
                dim: self.dim(),
                np,
                g_max: self.g_max(e),
                domain: e.domain,
                arithmetic,
                scheme,
                variant,
            })
        };
        let mut out = Vec::new();
        for e in self.experiments() {
            for np in self.sizes(e) {
                out.extend(each_arithmetic(e, np, Scheme::Edcp, self.variant));
            }
        }
        if self.table56 {
            for e in self.experiments() {
                let np = self.table56_np(e);
                out.extend(each_arithmetic(
                    e,
                    np,
                    Scheme::Original,
                    ThesisVariant::DEFAULT,
                ));
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

    pub(super) fn job(
        &self,
        np: u32,
        g_max: u32,
        seed: u64,
        stream: u32,
        history: bool,
    ) -> Result<Job> {
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

/// Parses the comma list `list` of the parameter `name`: each item (trimmed; empty ones
/// skipped) gives one or more values through `item`, each value kept once, in the order
/// given. A list without values is refused, `allowed` saying what it should hold.
fn comma_list<T: PartialEq>(
    list: &str,
    name: &'static str,
    allowed: impl Fn() -> String,
    mut item: impl FnMut(&str) -> Result<Vec<T>>,
) -> Result<Vec<T>> {
    let mut out = Vec::new();
    for it in list.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        for v in item(it)? {
            if !out.contains(&v) {
                out.push(v);
            }
        }
    }
    if out.is_empty() {
        return Err(Error::InvalidParameter {
            name,
            value: format!("{list:?}"),
            allowed: allowed(),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpude::Function;

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
}
