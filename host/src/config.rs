//! A job: the problem, the strategy and its settings, the stopping rules and the seed.

use crate::error::{Error, Result};
use crate::problem::{FunctionInfo, Problem};
use gpude_device::{BoundPolicy, Crossover, Formula, Function, Strategy};

/// The arithmetic a run uses on every backend.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Precision {
    #[default]
    F32,
    F64,
}

impl Precision {
    pub fn name(self) -> &'static str {
        match self {
            Precision::F32 => "f32",
            Precision::F64 => "f64",
        }
    }
    pub fn parse(s: &str) -> Result<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "f32" | "single" | "float" => Ok(Precision::F32),
            "f64" | "double" => Ok(Precision::F64),
            _ => Err(Error::UnknownName {
                kind: "precision",
                name: s.to_string(),
                known: "f32, f64".into(),
            }),
        }
    }
}

/// Names of strategies, crossovers and bound policies, in one table each.
pub const STRATEGIES: [(&str, Strategy); 11] = [
    ("thesis", Strategy::Thesis),
    ("rand1", Strategy::Rand1),
    ("best1", Strategy::Best1),
    ("current-to-best1", Strategy::CurrentToBest1),
    ("rand2", Strategy::Rand2),
    ("best2", Strategy::Best2),
    ("jde", Strategy::Jde),
    ("jade", Strategy::Jade),
    ("shade", Strategy::Shade),
    ("lshade", Strategy::LShade),
    ("jso", Strategy::Jso),
];
pub const CROSSOVERS: [(&str, Crossover); 2] = [
    ("bin", Crossover::Binomial),
    ("exp", Crossover::Exponential),
];
pub const BOUND_POLICIES: [(&str, BoundPolicy); 5] = [
    ("init-only", BoundPolicy::InitOnly),
    ("clip", BoundPolicy::Clip),
    ("reflect", BoundPolicy::Reflect),
    ("resample", BoundPolicy::Resample),
    ("midpoint", BoundPolicy::Midpoint),
];

fn lookup<V: Copy>(kind: &'static str, table: &[(&str, V)], name: &str) -> Result<V> {
    let n = name.trim().to_ascii_lowercase();
    table
        .iter()
        .find(|(k, _)| *k == n)
        .map(|(_, v)| *v)
        .ok_or_else(|| Error::UnknownName {
            kind,
            name: name.to_string(),
            known: table.iter().map(|(k, _)| *k).collect::<Vec<_>>().join(", "),
        })
}

fn name_of<V: Copy + PartialEq>(table: &[(&'static str, V)], v: V) -> &'static str {
    table
        .iter()
        .find(|(_, x)| *x == v)
        .map(|(k, _)| *k)
        .unwrap_or("?")
}

/// Parses a strategy name: `thesis`, `rand1`, … (`rand1bin`, `rand/1/bin` and the like
/// also name a crossover, returned second).
pub fn parse_strategy(name: &str) -> Result<(Strategy, Option<Crossover>)> {
    let n: String = name
        .trim()
        .to_ascii_lowercase()
        .chars()
        .filter(|c| *c != '/')
        .collect();
    for (cname, c) in CROSSOVERS {
        if let Some(Ok(s)) = n
            .strip_suffix(cname)
            .map(|b| lookup("strategy", &STRATEGIES, b))
        {
            return Ok((s, Some(c)));
        }
    }
    lookup("strategy", &STRATEGIES, &n)
        .map(|s| (s, None))
        .map_err(|_| Error::UnknownName {
            kind: "strategy",
            name: name.to_string(),
            known: "thesis, rand1, best1, current-to-best1, rand2, best2 (optionally with a crossover suffix: rand1bin, rand1exp), jde, jade, shade, lshade, jso".into(),
        })
}
pub fn parse_crossover(name: &str) -> Result<Crossover> {
    lookup("crossover", &CROSSOVERS, name)
}
pub const FORMULAS: [(&str, Formula); 2] =
    [("exact", Formula::Exact), ("textbook", Formula::Textbook)];
pub fn parse_formula(name: &str) -> Result<Formula> {
    lookup("formula", &FORMULAS, name)
}
pub fn formula_name(f: Formula) -> &'static str {
    name_of(&FORMULAS, f)
}
pub fn parse_bounds(name: &str) -> Result<BoundPolicy> {
    lookup("bound policy", &BOUND_POLICIES, name)
}
pub fn strategy_name(s: Strategy) -> &'static str {
    name_of(&STRATEGIES, s)
}
pub fn crossover_name(c: Crossover) -> &'static str {
    name_of(&CROSSOVERS, c)
}
pub fn bounds_name(b: BoundPolicy) -> &'static str {
    name_of(&BOUND_POLICIES, b)
}

/// One optimization to run: validated by [`JobBuilder::build`].
#[derive(Clone, Debug, PartialEq)]
pub struct Job {
    pub problem: Problem,
    pub strategy: Strategy,
    pub crossover: Crossover,
    pub bounds: BoundPolicy,
    /// Scale factor F (classic strategies).
    pub f: f64,
    /// Crossover rate Cr (classic strategies).
    pub cr: f64,
    pub pop: u32,
    /// The most generations (after the initial population).
    pub generations: u32,
    /// True when `generations` came from an evaluation budget.
    pub budget_from_evaluations: bool,
    /// Stop once the best value is at most this far above the function's minimum.
    pub target: Option<f64>,
    pub seed: u64,
    /// Which random stream of the seed (independent repetitions use 0, 1, …).
    pub stream: u32,
    pub precision: Precision,
    /// How the objective is computed (exact, the default, or as printed).
    pub formula: Formula,
    /// Record the best value after every generation.
    pub history: bool,
    /// The settings of an adaptive strategy (`None` for the classic ones).
    pub adaptive: Option<crate::adaptive::Adaptive>,
}

impl Job {
    /// A builder with gpude's defaults: the thesis strategy, the function's usual domain
    /// used for initialisation only, Np = 10·D (at least 32), 1000 generations, seed 0, f32.
    /// The adaptive strategies have their papers' defaults instead (see
    /// [`crate::adaptive`]).
    pub fn builder(function: Function, dim: u32) -> JobBuilder {
        JobBuilder {
            function,
            dim,
            lower: None,
            upper: None,
            strategy: Strategy::Thesis,
            crossover: Crossover::Binomial,
            bounds: None,
            f: 0.5,
            cr: 0.9,
            pop: None,
            generations: None,
            evaluations: None,
            target: None,
            seed: 0,
            stream: 0,
            precision: Precision::F32,
            formula: Formula::Exact,
            history: false,
            adaptive: Default::default(),
        }
    }

    pub fn dim(&self) -> u32 {
        self.problem.dim()
    }

    pub fn info(&self) -> &'static FunctionInfo {
        self.problem.info()
    }

    /// Evaluations a run of `g` generations spends: Np + Np·g.
    pub fn evaluations(&self, g: u32) -> u64 {
        self.pop as u64 * (1 + g as u64)
    }

    /// The target as an absolute function value (minimum + target), if any.
    pub fn target_value(&self) -> Option<f64> {
        self.target.map(|t| self.info().min + t)
    }
}

/// Builds a [`Job`], checking every value.
#[derive(Clone, Debug)]
pub struct JobBuilder {
    function: Function,
    dim: u32,
    lower: Option<Vec<f64>>,
    upper: Option<Vec<f64>>,
    strategy: Strategy,
    crossover: Crossover,
    /// `None`: init-only for the classic strategies, midpoint for the adaptive ones.
    bounds: Option<BoundPolicy>,
    f: f64,
    cr: f64,
    pop: Option<u32>,
    generations: Option<u32>,
    evaluations: Option<u64>,
    target: Option<f64>,
    seed: u64,
    stream: u32,
    precision: Precision,
    formula: Formula,
    history: bool,
    pub(crate) adaptive: crate::adaptive::AdaptiveOptions,
}

/// The largest population: individual indices and Philox subsequences are 32-bit, and
/// the thesis's largest case is 65 535.
pub const MAX_POP: u32 = 1 << 24;

impl JobBuilder {
    /// The same initial interval in every component.
    pub fn domain(mut self, lo: f64, hi: f64) -> Self {
        // An invalid dimension is reported by `build`; do not allocate for it here.
        let n = if self.dim <= crate::problem::MAX_DIM {
            self.dim as usize
        } else {
            0
        };
        self.lower = Some(vec![lo; n]);
        self.upper = Some(vec![hi; n]);
        self
    }
    /// One initial interval per component.
    pub fn domain_box(mut self, lower: Vec<f64>, upper: Vec<f64>) -> Self {
        self.lower = Some(lower);
        self.upper = Some(upper);
        self
    }
    pub fn strategy(mut self, s: Strategy) -> Self {
        self.strategy = s;
        self
    }
    pub fn crossover(mut self, c: Crossover) -> Self {
        self.crossover = c;
        self
    }
    pub fn bounds(mut self, b: BoundPolicy) -> Self {
        self.bounds = Some(b);
        self
    }
    pub fn f(mut self, f: f64) -> Self {
        self.f = f;
        self
    }
    pub fn cr(mut self, cr: f64) -> Self {
        self.cr = cr;
        self
    }
    pub fn pop(mut self, np: u32) -> Self {
        self.pop = Some(np);
        self
    }
    pub fn generations(mut self, g: u32) -> Self {
        self.generations = Some(g);
        self
    }
    /// An evaluation budget (Np + Np·g ≤ budget); with `generations`, the smaller wins.
    pub fn max_evaluations(mut self, e: u64) -> Self {
        self.evaluations = Some(e);
        self
    }
    pub fn target(mut self, t: f64) -> Self {
        self.target = Some(t);
        self
    }
    pub fn seed(mut self, s: u64) -> Self {
        self.seed = s;
        self
    }
    pub fn stream(mut self, s: u32) -> Self {
        self.stream = s;
        self
    }
    pub fn precision(mut self, p: Precision) -> Self {
        self.precision = p;
        self
    }
    pub fn formula(mut self, f: Formula) -> Self {
        self.formula = f;
        self
    }
    pub fn history(mut self, h: bool) -> Self {
        self.history = h;
        self
    }

    pub fn build(self) -> Result<Job> {
        if self.dim == 0 || self.dim > crate::problem::MAX_DIM {
            return Err(Error::invalid(
                "dimension",
                self.dim,
                format!("1 ..= {}", crate::problem::MAX_DIM),
            ));
        }
        let problem = match (self.lower, self.upper) {
            (Some(l), Some(u)) => {
                if l.len() != self.dim as usize {
                    return Err(Error::invalid(
                        "lower bounds",
                        format!("{} values", l.len()),
                        format!("one per component ({})", self.dim),
                    ));
                }
                Problem::with_box(self.function, l, u)?
            }
            _ => Problem::new(self.function, self.dim)?,
        };
        let dim = problem.dim();
        let pop = self.pop.unwrap_or_else(|| {
            crate::adaptive::default_pop(self.strategy, dim)
                .unwrap_or_else(|| (10 * dim).clamp(32, 1 << 16))
        });
        let need = self.strategy.draws() + 1;
        if pop < need || pop > MAX_POP {
            return Err(Error::invalid(
                "population size",
                pop,
                format!(
                    "{need} ..= {MAX_POP} ({} draws {} distinct others)",
                    strategy_name(self.strategy),
                    need - 1
                ),
            ));
        }
        if !(self.f.is_finite() && self.f > 0.0 && self.f <= 2.0) {
            return Err(Error::invalid("F", self.f, "a number in (0, 2]"));
        }
        if !(self.cr.is_finite() && (0.0..=1.0).contains(&self.cr)) {
            return Err(Error::invalid("Cr", self.cr, "a number in [0, 1]"));
        }
        if let Some(t) = self.target
            && !(t.is_finite() && t >= 0.0)
        {
            return Err(Error::invalid("target error", t, "a finite number ≥ 0"));
        }
        let mut generations = self.generations.unwrap_or(1000);
        let mut from_evals = false;
        if let Some(e) = self.evaluations {
            if e < pop as u64 {
                return Err(Error::invalid(
                    "evaluation budget",
                    e,
                    format!("at least the population size ({pop}) for the initial population"),
                ));
            }
            let g = ((e - pop as u64) / pop as u64).min(u32::MAX as u64 - 1) as u32;
            if self.generations.is_none() || g < generations {
                generations = g;
                from_evals = true;
            }
        }
        let adaptive = crate::adaptive::settle(
            self.strategy,
            self.crossover,
            &self.adaptive,
            dim,
            pop,
            self.evaluations,
        )?;
        if let Some(a) = &adaptive {
            // Their own loop spends the budget exactly; generations only add a limit.
            (generations, from_evals) = a.limits(pop, self.generations);
        }
        if generations == u32::MAX {
            return Err(Error::invalid(
                "generations",
                generations,
                format!("at most {}", u32::MAX - 1),
            ));
        }
        Ok(Job {
            problem,
            strategy: self.strategy,
            crossover: self.crossover,
            bounds: self.bounds.unwrap_or(if adaptive.is_some() {
                BoundPolicy::Midpoint
            } else {
                BoundPolicy::InitOnly
            }),
            f: self.f,
            cr: self.cr,
            pop,
            generations,
            budget_from_evaluations: from_evals,
            target: self.target,
            seed: self.seed,
            stream: self.stream,
            precision: self.precision,
            formula: self.formula,
            history: self.history,
            adaptive,
        })
    }
}
