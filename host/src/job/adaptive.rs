//! The settings of the adaptive strategies: jDE, JADE, SHADE, L-SHADE and jSO.
//!
//! Their update rules are the device crate's ([`gpude_device::adaptive`]); this module
//! holds their settings (the papers' defaults, overridable through
//! [`JobBuilder`](crate::job::config::JobBuilder)), which both engines read
//! ([`run_settings`](crate::job::config::run_settings)).
//!
//! Defaults (papers as cited in [`gpude_device::adaptive`]):
//!
//! | | N_init | H | archive | p | other |
//! |---|---|---|---|---|---|
//! | jDE | 100 | – | – | – | τ1 = τ2 = 0.1, F ∈ [0.1, 1] |
//! | JADE | 100 | – | 1.0·N | 0.05 | c = 0.1, μ_F = μ_Cr = 0.5 |
//! | SHADE | 100 | 100 | 1.0·N | p_i ∈ [2/N, 0.2] | M = 0.5 |
//! | L-SHADE | 18·D | 6 | 2.6·N | 0.11 | N_min = 4, M = 0.5 |
//! | jSO | 25·ln D·√D | 5 | 1.0·N | 0.25 → 0.125 | N_min = 4, M_F = 0.3, M_Cr = 0.8 |
//!
//! JADE's N = 100 is gpude's choice, the value of jDE's and SHADE's papers. The budget
//! defaults to the CEC competitions' 10 000·D evaluations, the bound policy to the
//! papers' midpoint rule; crossover is binomial. jDE and the SHADE family replace x_i when
//! the trial is not worse, JADE only when it is better; successes (the parameters that
//! adapt, the parents that enter the archive) are strict improvements everywhere.

use crate::error::{Error, Result};
use crate::job::limits::MAX_POP;
use crate::job::names::strategy_name;
use gpude_device::adaptive as rules;
use gpude_device::{Crossover, Strategy};

/// The settings of an adaptive strategy, resolved and validated.
#[derive(Clone, Debug, PartialEq)]
pub struct Adaptive {
    /// H, the success-history memory's entries (SHADE, L-SHADE, jSO; 1 otherwise).
    pub memory_size: u32,
    /// The archive holds at most `round(rate · N)` parents; 0: no archive.
    pub archive_rate: f64,
    /// p of current-to-pbest: JADE's and L-SHADE's p, SHADE's upper bound of p_i,
    /// jSO's p at the start (it ends at p/2); 0 for jDE.
    pub p_best: f64,
    /// JADE's learning rate c (0 for the others).
    pub learning_rate: f64,
    /// jDE's τ1 and τ2 (0 for the others).
    pub tau: [f64; 2],
    /// The population size at the end of the budget (L-SHADE, jSO); the initial size for
    /// the others.
    pub min_pop: u32,
    /// The evaluation budget: the run stops when it is spent, and the schedules of
    /// L-SHADE and jSO read it.
    pub max_evaluations: u64,
}

/// What [`JobBuilder`](crate::job::config::JobBuilder)'s adaptive settings hold before
/// `build`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AdaptiveOptions {
    pub(crate) memory_size: Option<u32>,
    pub(crate) archive_rate: Option<f64>,
    pub(crate) p_best: Option<f64>,
    pub(crate) learning_rate: Option<f64>,
    pub(crate) tau: Option<[f64; 2]>,
    pub(crate) min_pop: Option<u32>,
}

/// The CEC competitions' budget per dimension, the default of the adaptive strategies.
pub const EVALUATIONS_PER_DIM: u64 = 10_000;
/// The smallest population an adaptive strategy runs with (L-SHADE's N_min).
pub const MIN_POP: u32 = 4;
/// The largest memory.
pub const MAX_MEMORY: u32 = 1 << 16;
/// The largest archive rate.
pub const MAX_ARCHIVE_RATE: f64 = 10.0;

/// The papers' initial population size, for the adaptive strategies.
pub fn default_pop(s: Strategy, dim: u32) -> Option<u32> {
    let n = match s {
        Strategy::Jde | Strategy::Jade | Strategy::Shade => 100,
        Strategy::LShade => rules::lshade_initial_pop(dim),
        Strategy::Jso => rules::jso_initial_pop(dim),
        _ => return None,
    };
    Some(n.clamp(MIN_POP, MAX_POP))
}

impl Adaptive {
    /// (generations, whether the budget sets them) for a job with the user's generation
    /// limit: at most as many generations as the budget can pay for at the smallest
    /// population.
    pub(crate) fn limits(&self, pop: u32, generations: Option<u32>) -> (u32, bool) {
        let (e, n) = (self.max_evaluations, self.min_pop as u64);
        let left = e.saturating_sub(pop as u64);
        let by_budget = u64::min(left.div_ceil(n), u32::MAX as u64 - 1) as u32;
        match generations {
            Some(g) => (g.min(by_budget), false),
            None => (by_budget, true),
        }
    }

    /// A one-line description: `jso (H = 5, archive 1·N, p 0.25 → 0.125, N → 4)`.
    pub fn describe(&self, s: Strategy) -> String {
        let name = strategy_name(s);
        match s {
            Strategy::Jde => format!("{name} (tau1 = {}, tau2 = {})", self.tau[0], self.tau[1]),
            Strategy::Jade => format!(
                "{name} (p = {}, c = {}, archive {}·N)",
                self.p_best, self.learning_rate, self.archive_rate
            ),
            Strategy::Shade => format!(
                "{name} (H = {}, archive {}·N, p_i in [2/N, {}])",
                self.memory_size, self.archive_rate, self.p_best
            ),
            Strategy::LShade => format!(
                "{name} (H = {}, archive {}·N, p = {}, N -> {})",
                self.memory_size, self.archive_rate, self.p_best, self.min_pop
            ),
            _ => format!(
                "{name} (H = {}, archive {}·N, p {} -> {}, N -> {})",
                self.memory_size,
                self.archive_rate,
                self.p_best,
                self.p_best / 2.0,
                self.min_pop
            ),
        }
    }
}

/// Resolves and checks the adaptive settings of a job; `None` for a classic strategy
/// (which must then have none set).
pub(crate) fn settle(
    s: Strategy,
    crossover: Crossover,
    o: &AdaptiveOptions,
    dim: u32,
    pop: u32,
    evaluations: Option<u64>,
) -> Result<Option<Adaptive>> {
    let name = strategy_name(s);
    let for_only = |what: &'static str, value: String, which: &str| {
        Error::invalid(what, value, format!("only {which} use it, not {name}"))
    };
    if !s.is_adaptive() {
        let given = [
            ("memory size", o.memory_size.map(|v| v.to_string())),
            ("archive rate", o.archive_rate.map(|v| v.to_string())),
            ("p-best", o.p_best.map(|v| v.to_string())),
            ("learning rate", o.learning_rate.map(|v| v.to_string())),
            ("tau", o.tau.map(|v| format!("{v:?}"))),
            ("minimum population", o.min_pop.map(|v| v.to_string())),
        ];
        if let Some((what, Some(v))) = given.into_iter().find(|(_, v)| v.is_some()) {
            return Err(for_only(what, v, "the adaptive strategies"));
        }
        return Ok(None);
    }
    if crossover != Crossover::Binomial {
        return Err(Error::invalid(
            "crossover",
            "exp",
            format!("bin: {name} crosses binomially"),
        ));
    }
    if pop < MIN_POP {
        return Err(Error::invalid(
            "population size",
            pop,
            format!("{MIN_POP} ..= {} for {name}", MAX_POP),
        ));
    }
    let memory = matches!(s, Strategy::Shade | Strategy::LShade | Strategy::Jso);
    let archive = s.uses_pbest();
    let reduces = matches!(s, Strategy::LShade | Strategy::Jso);
    // The papers' values.
    let (h, rate, p) = match s {
        Strategy::Jde => (1, 0.0, 0.0),
        Strategy::Jade => (1, 1.0, 0.05),
        Strategy::Shade => (100, 1.0, 0.2),
        Strategy::LShade => (6, 2.6, 0.11),
        _ => (5, 1.0, 0.25),
    };
    let memory_size = match o.memory_size {
        Some(v) if !memory => {
            return Err(for_only(
                "memory size",
                v.to_string(),
                "shade, lshade and jso",
            ));
        }
        Some(v) => {
            let least = if s == Strategy::Jso { 2 } else { 1 };
            if !(least..=MAX_MEMORY).contains(&v) {
                return Err(Error::invalid(
                    "memory size",
                    v,
                    format!(
                        "{least} ..= {MAX_MEMORY}{}",
                        if least == 2 {
                            " (jso keeps its last entry fixed)"
                        } else {
                            ""
                        }
                    ),
                ));
            }
            v
        }
        None => h,
    };
    let archive_rate = match o.archive_rate {
        Some(v) if !archive => {
            return Err(for_only(
                "archive rate",
                v.to_string(),
                "jade, shade, lshade and jso",
            ));
        }
        Some(v) if !(v.is_finite() && (0.0..=MAX_ARCHIVE_RATE).contains(&v)) => {
            return Err(Error::invalid(
                "archive rate",
                v,
                format!("a number in [0, {MAX_ARCHIVE_RATE}] (0: no archive)"),
            ));
        }
        Some(v) => v,
        None => rate,
    };
    let p_best = match o.p_best {
        Some(v) if !archive => {
            return Err(for_only(
                "p-best",
                v.to_string(),
                "jade, shade, lshade and jso",
            ));
        }
        Some(v) if !(v.is_finite() && v > 0.0 && v <= 1.0) => {
            return Err(Error::invalid("p-best", v, "a number in (0, 1]"));
        }
        Some(v) => v,
        None => p,
    };
    let learning_rate = match o.learning_rate {
        Some(v) if s != Strategy::Jade => {
            return Err(for_only("learning rate", v.to_string(), "jade"));
        }
        Some(v) if !(v.is_finite() && v > 0.0 && v <= 1.0) => {
            return Err(Error::invalid("learning rate", v, "a number in (0, 1]"));
        }
        Some(v) => v,
        None if s == Strategy::Jade => 0.1,
        None => 0.0,
    };
    let tau = match o.tau {
        Some(v) if s != Strategy::Jde => return Err(for_only("tau", format!("{v:?}"), "jde")),
        Some(v) => {
            for t in v {
                if !(t.is_finite() && (0.0..=1.0).contains(&t)) {
                    return Err(Error::invalid("tau", t, "a number in [0, 1]"));
                }
            }
            v
        }
        None if s == Strategy::Jde => [0.1, 0.1],
        None => [0.0, 0.0],
    };
    let min_pop = match o.min_pop {
        Some(v) if !reduces => {
            return Err(for_only(
                "minimum population",
                v.to_string(),
                "lshade and jso",
            ));
        }
        Some(v) if !(MIN_POP..=pop).contains(&v) => {
            return Err(Error::invalid(
                "minimum population",
                v,
                format!("{MIN_POP} ..= the initial population ({pop})"),
            ));
        }
        Some(v) => v,
        None if reduces => MIN_POP,
        None => pop,
    };
    let max_evaluations = evaluations.unwrap_or(EVALUATIONS_PER_DIM * dim as u64);
    if max_evaluations < pop as u64 {
        return Err(Error::invalid(
            "evaluation budget",
            max_evaluations,
            format!("at least the population size ({pop}) for the initial population"),
        ));
    }
    Ok(Some(Adaptive {
        memory_size,
        archive_rate,
        p_best,
        learning_rate,
        tau,
        min_pop,
        max_evaluations,
    }))
}
