//! What a CEC 2017 reproduction runs (`--dims`, `--strategies`, `--functions`, `--runs`)
//! and the names reports give the strategies.

use super::{
    DIMS, EVALUATIONS_PER_DIM, FULL_RUNS, QUICK_EVALUATIONS_PER_DIM, QUICK_FUNCTIONS, QUICK_RUNS,
};
use crate::common::MAX_REPETITIONS;
use crate::{CliError, Result};
use gpude::cec2017::FunctionId;
use gpude::host::config::{parse_strategy, strategy_name};
use gpude::{Crossover, Strategy};

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

#[cfg(test)]
mod tests {
    use super::*;

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
        assert_eq!(key_name(Strategy::Rand1), "rand1bin");
        assert_eq!(key_name(Strategy::Thesis), "thesis");
    }
}
