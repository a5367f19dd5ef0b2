//! A job: the problem, the strategy and its settings, the stopping rules and the seed.

use crate::error::{Error, Result, num};
// The precision, where callers found it before it had a file of its own.
use crate::job::objective::Objective;
pub use crate::job::precision::Precision;
use crate::job::problem::{FunctionInfo, MAX_DIM, Problem, check_dim_of};
use gpude_device::variant::{
    GenerationCount, IndexDraw, LambdaDraw, LambdaRange, MutationForm, ThesisVariant,
};
use gpude_device::{BoundPolicy, Crossover, Formula, Function, Strategy};

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

pub(crate) fn lookup<V: Copy>(kind: &'static str, table: &[(&str, V)], name: &str) -> Result<V> {
    let n = name.trim().to_ascii_lowercase();
    table
        .iter()
        .find(|(k, _)| *k == n)
        .map(|(_, v)| *v)
        .ok_or_else(|| Error::UnknownName {
            kind,
            name: crate::error::clip(name),
            known: table.iter().map(|(k, _)| *k).collect::<Vec<_>>().join(", "),
        })
}

pub(crate) fn name_of<V: Copy + PartialEq>(table: &[(&'static str, V)], v: V) -> &'static str {
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
            name: crate::error::clip(name),
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

/// The scale factor F a job has unless told otherwise.
pub const DEFAULT_F: f64 = 0.5;
/// The crossover rate Cr a job has unless told otherwise.
pub const DEFAULT_CR: f64 = 0.9;

/// One optimization to run, made and validated by [`JobBuilder::build`]. Its fields
/// are private, so every `Job` satisfies [`Job::check`]; the engines re-check it.
///
/// Settings that the strategy does not use are refused rather than ignored: the thesis
/// strategy draws its own λ and has no crossover, so a thesis job keeps F, Cr and the
/// crossover at their defaults (setting them to anything else is an error). It does
/// take every bound policy.
#[derive(Clone, Debug, PartialEq)]
pub struct Job {
    problem: Problem,
    strategy: Strategy,
    crossover: Crossover,
    bounds: BoundPolicy,
    f: f64,
    cr: f64,
    pop: u32,
    generations: u32,
    budget_from_evaluations: bool,
    target: Option<f64>,
    seed: u64,
    stream: u32,
    precision: Precision,
    formula: Formula,
    history: bool,
    adaptive: Option<crate::job::adaptive::Adaptive>,
    thesis_variant: ThesisVariant,
}

impl Job {
    /// A builder with gpude's defaults: the thesis strategy, the function's usual domain
    /// used for initialisation only, Np = 10·D (at least 32), 1000 generations, seed 0, f32.
    pub fn builder(function: Function, dim: u32) -> JobBuilder {
        Self::builder_for(Objective::Builtin(function), dim)
    }

    /// A builder for any objective, with the defaults of [`Job::builder`]. Expressions
    /// and callbacks have no usual domain: give one with [`JobBuilder::domain`] or
    /// [`JobBuilder::domain_box`] (CEC 2017 functions default to [-100, 100]).
    pub fn builder_for(objective: impl Into<Objective>, dim: u32) -> JobBuilder {
        JobBuilder {
            objective: objective.into(),
            dim,
            lower: None,
            upper: None,
            strategy: Strategy::Thesis,
            crossover: Crossover::Binomial,
            bounds: None,
            f: DEFAULT_F,
            cr: DEFAULT_CR,
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
            thesis_variant: ThesisVariant::DEFAULT,
        }
    }

    /// The function and the initial domain.
    pub fn problem(&self) -> &Problem {
        &self.problem
    }

    /// The built-in function.
    ///
    /// # Panics
    /// When the objective is not a built-in: see [`Job::builtin`] and [`Job::objective`].
    pub fn function(&self) -> Function {
        self.problem.function()
    }

    /// The built-in function, when the objective is one.
    pub fn builtin(&self) -> Option<Function> {
        self.problem.builtin()
    }

    /// What the job minimises.
    pub fn objective(&self) -> &Objective {
        self.problem.objective()
    }

    pub fn dim(&self) -> u32 {
        self.problem.dim()
    }

    /// What gpude knows of the built-in function.
    ///
    /// # Panics
    /// When the objective is not a built-in (see [`Job::builtin`]).
    pub fn info(&self) -> &'static FunctionInfo {
        self.problem.info()
    }

    /// The lower bound of every component.
    pub fn lower(&self) -> &[f64] {
        self.problem.lower()
    }

    /// The upper bound of every component.
    pub fn upper(&self) -> &[f64] {
        self.problem.upper()
    }

    pub fn strategy(&self) -> Strategy {
        self.strategy
    }

    /// The crossover (classic strategies; binomial for the thesis strategy).
    pub fn crossover(&self) -> Crossover {
        self.crossover
    }

    /// The bound policy.
    pub fn bounds(&self) -> BoundPolicy {
        self.bounds
    }

    /// Scale factor F (classic strategies).
    pub fn f(&self) -> f64 {
        self.f
    }

    /// Crossover rate Cr (classic strategies).
    pub fn cr(&self) -> f64 {
        self.cr
    }

    /// The population size Np.
    pub fn pop(&self) -> u32 {
        self.pop
    }

    /// The most generations (after the initial population) the engines run: the limit
    /// asked for, plus one under [`GenerationCount::PlusOne`] (see
    /// [`Job::thesis_variant`]).
    pub fn generations(&self) -> u32 {
        self.generations
    }

    /// The generation limit as asked for: [`Job::generations`] without the thesis
    /// variant's extra generation.
    pub fn g_max(&self) -> u32 {
        self.generations - self.thesis_variant.extra_generations()
    }

    /// True when `generations` came from an evaluation budget.
    pub fn budget_from_evaluations(&self) -> bool {
        self.budget_from_evaluations
    }

    /// Stop once the best value is at most this far above the objective's known minimum
    /// (above 0 when it has none).
    pub fn target(&self) -> Option<f64> {
        self.target
    }

    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Which random stream of the seed (independent repetitions use 0, 1, …).
    pub fn stream(&self) -> u32 {
        self.stream
    }

    pub fn precision(&self) -> Precision {
        self.precision
    }

    /// Record the best value after every generation.
    pub fn history(&self) -> bool {
        self.history
    }

    /// How the objective is computed (exact, the default, or as printed).
    pub fn formula(&self) -> Formula {
        self.formula
    }

    /// How the thesis strategy computes its trials ([`ThesisVariant::DEFAULT`]: gpude's
    /// own; any other only with the thesis strategy and init-only bounds).
    pub fn thesis_variant(&self) -> ThesisVariant {
        self.thesis_variant
    }

    /// The settings of an adaptive strategy (`None` for the classic ones).
    pub fn adaptive(&self) -> Option<&crate::job::adaptive::Adaptive> {
        self.adaptive.as_ref()
    }

    /// The same job with another seed (any seed is valid).
    pub fn with_seed(mut self, seed: u64) -> Job {
        self.seed = seed;
        self
    }

    /// The same job on another random stream of its seed (any stream is valid).
    pub fn with_stream(mut self, stream: u32) -> Job {
        self.stream = stream;
        self
    }

    /// The same job, recording the best value after every generation or not.
    pub fn with_history(mut self, history: bool) -> Job {
        self.history = history;
        self
    }

    /// The same job with bound policy `b` (every strategy takes every policy).
    pub fn with_bounds(mut self, b: BoundPolicy) -> Job {
        self.bounds = b;
        self
    }

    /// The same job in precision `p`, checked again (bounds that f64 represents may not
    /// be representable in f32).
    pub fn with_precision(mut self, p: Precision) -> Result<Job> {
        self.precision = p;
        self.check()?;
        Ok(self)
    }

    /// The same job with a generation limit of `generations` (an evaluation budget
    /// becomes this count), plus the thesis variant's extra generation if it has one;
    /// the sum below `u32::MAX`.
    pub(crate) fn with_generation_limit(mut self, generations: u32) -> Job {
        self.generations = generations.saturating_add(self.thesis_variant.extra_generations());
        self.budget_from_evaluations = false;
        self
    }

    /// Evaluations a run of `g` generations spends: Np + Np·g.
    pub fn evaluations(&self, g: u32) -> u64 {
        self.pop as u64 * (1 + g as u64)
    }

    /// The target as an absolute function value (minimum + target), if any.
    pub fn target_value(&self) -> Option<f64> {
        self.target.map(|t| self.objective().reference() + t)
    }

    /// Checks every invariant of a job: what [`JobBuilder::build`] guarantees. Linear in
    /// the dimension; the engines call it before running.
    pub fn check(&self) -> Result<()> {
        self.problem.check()?;
        match self.precision {
            Precision::F32 => self.problem.check_in::<f32>()?,
            Precision::F64 => self.problem.check_in::<f64>()?,
        }
        self.check_settings()
    }

    /// Checks many jobs: the domain (linear in the dimension) once for a run of jobs that
    /// share it (as repetitions of one job do), the settings of every job.
    pub fn check_all(jobs: &[Job]) -> Result<()> {
        let mut prev: Option<&Job> = None;
        for job in jobs {
            match prev {
                Some(p)
                    if p.precision == job.precision() && p.problem.shares_bounds(&job.problem) =>
                {
                    job.check_settings()?
                }
                _ => job.check()?,
            }
            prev = Some(job);
        }
        Ok(())
    }

    /// The checks of everything but the domain.
    fn check_settings(&self) -> Result<()> {
        check_pop(self.strategy, self.pop)?;
        if !(self.f.is_finite() && self.f > 0.0 && self.f <= 2.0) {
            return Err(Error::invalid("F", num(self.f), "a number in (0, 2]"));
        }
        if !(self.cr.is_finite() && (0.0..=1.0).contains(&self.cr)) {
            return Err(Error::invalid("Cr", num(self.cr), "a number in [0, 1]"));
        }
        if self.adaptive.is_some() && (self.f != DEFAULT_F || self.cr != DEFAULT_CR) {
            let (name, v) = if self.f != DEFAULT_F {
                ("F", self.f)
            } else {
                ("Cr", self.cr)
            };
            return Err(Error::invalid(
                name,
                num(v),
                format!(
                    "the {} strategy adapts F and Cr itself: leave them at their defaults ({DEFAULT_F}, {DEFAULT_CR}) or choose a classic strategy",
                    strategy_name(self.strategy)
                ),
            ));
        }
        if !self.strategy.crosses() {
            let s = strategy_name(self.strategy);
            if self.f != DEFAULT_F {
                return Err(Error::invalid(
                    "F",
                    num(self.f),
                    format!(
                        "the {s} strategy has no F (it draws λ per component): leave F at its default {DEFAULT_F} or choose a classic strategy"
                    ),
                ));
            }
            if self.cr != DEFAULT_CR {
                return Err(Error::invalid(
                    "Cr",
                    num(self.cr),
                    format!(
                        "the {s} strategy has no crossover: leave Cr at its default {DEFAULT_CR} or choose a classic strategy"
                    ),
                ));
            }
            if self.crossover != Crossover::Binomial {
                return Err(Error::invalid(
                    "crossover",
                    crossover_name(self.crossover),
                    format!(
                        "the {s} strategy has no crossover: leave it at its default (bin) or choose a classic strategy"
                    ),
                ));
            }
        }
        if let Some(t) = self.target
            && !(t.is_finite() && t >= 0.0)
        {
            return Err(Error::invalid(
                "target error",
                num(t),
                "a finite number ≥ 0",
            ));
        }
        if self.generations == u32::MAX {
            return Err(Error::invalid(
                "generations",
                self.generations,
                format!("at most {}", u32::MAX - 1),
            ));
        }
        self.check_variant()
    }

    /// A thesis variant other than the default only where it means something.
    fn check_variant(&self) -> Result<()> {
        let v = self.thesis_variant;
        if v.is_default() {
            return Ok(());
        }
        if self.strategy != Strategy::Thesis || self.bounds != BoundPolicy::InitOnly {
            return Err(Error::invalid(
                "thesis variant",
                variant_name(v),
                format!(
                    "default, unless the strategy is thesis with init-only bounds (this job: {} with {} bounds)",
                    strategy_name(self.strategy),
                    bounds_name(self.bounds)
                ),
            ));
        }
        if v.extra_generations() > 0 && self.budget_from_evaluations {
            return Err(Error::invalid(
                "thesis variant",
                variant_name(v),
                "a generation limit with generations=plus-one, not an evaluation budget (one more generation would spend more than the budget)",
            ));
        }
        if v.extra_generations() > self.generations {
            return Err(Error::invalid(
                "generations",
                self.generations,
                format!(
                    "at least {} with the thesis variant {}",
                    v.extra_generations(),
                    variant_name(v)
                ),
            ));
        }
        Ok(())
    }
}

/// A population large enough for the strategy's distinct draws, within [`MAX_POP`].
fn check_pop(strategy: Strategy, pop: u32) -> Result<()> {
    let need = strategy.draws() + 1;
    if pop < need || pop > MAX_POP {
        return Err(Error::invalid(
            "population size",
            pop,
            format!(
                "{need} ..= {MAX_POP} ({} draws {} distinct others)",
                strategy_name(strategy),
                need - 1
            ),
        ));
    }
    Ok(())
}

/// Builds a [`Job`], checking every value.
#[derive(Clone, Debug)]
pub struct JobBuilder {
    objective: Objective,
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
    pub(crate) adaptive: crate::job::adaptive::AdaptiveOptions,
    thesis_variant: ThesisVariant,
}

/// The largest population: individual indices and Philox subsequences are 32-bit, and
/// the thesis's largest case is 65 535.
pub const MAX_POP: u32 = 1 << 24;

impl JobBuilder {
    /// The same initial interval in every component.
    pub fn domain(mut self, lo: f64, hi: f64) -> Self {
        // An invalid dimension is reported by `build`; do not allocate for it here.
        let n = if self.dim <= MAX_DIM {
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
    /// How the thesis strategy computes its trials (see [`ThesisVariant`]); anything
    /// but the default needs the thesis strategy with init-only bounds, and
    /// [`GenerationCount::PlusOne`] a generation limit rather than an evaluation budget.
    pub fn thesis_variant(mut self, v: ThesisVariant) -> Self {
        self.thesis_variant = v;
        self
    }

    /// The job, after checking every value (see [`Job::check`]).
    pub fn build(self) -> Result<Job> {
        check_dim_of(&self.objective, self.dim)?;
        let problem = match (self.lower, self.upper) {
            (Some(l), Some(u)) => {
                if l.len() != self.dim as usize {
                    return Err(Error::invalid(
                        "lower bounds",
                        format!("{} values", l.len()),
                        format!("one per component ({})", self.dim),
                    ));
                }
                Problem::of_objective(self.objective, l, u)?
            }
            _ => match &self.objective {
                Objective::Builtin(f) => Problem::new(*f, self.dim)?,
                Objective::Cec2017(_) => {
                    let (lo, hi) = (-crate::job::cec2017::BOUND, crate::job::cec2017::BOUND);
                    let d = self.dim as usize;
                    Problem::of_objective(self.objective, vec![lo; d], vec![hi; d])?
                }
                o => {
                    return Err(Error::invalid(
                        "domain",
                        "none given",
                        format!(
                            "lower and upper bounds for the objective {} (it has no usual domain)",
                            crate::error::clip(&o.name())
                        ),
                    ));
                }
            },
        };
        let dim = problem.dim();
        let pop = self.pop.unwrap_or_else(|| {
            crate::job::adaptive::default_pop(self.strategy, dim)
                .unwrap_or_else(|| (10 * dim).clamp(32, 1 << 16))
        });
        check_pop(self.strategy, pop)?;
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
        let adaptive = crate::job::adaptive::settle(
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
        // The variant's extra generation (refused with a budget by `check`).
        generations = generations.saturating_add(self.thesis_variant.extra_generations());
        let job = Job {
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
            thesis_variant: self.thesis_variant,
        };
        job.check()?;
        Ok(job)
    }
}

/// The keys and values of a thesis variant's names, the default's first.
pub const VARIANT_KEYS: [(&str, &[&str]); 5] = [
    ("indices", &["free", "rejection"]),
    ("lambda", &["open-closed", "closed-open"]),
    ("lambda-draw", &["per-component", "per-individual"]),
    ("mutation", &["plain", "fma", "fma-inner", "from-best"]),
    ("generations", &["gmax", "plus-one"]),
];

/// The `key=value` names of a variant's fields that differ from the default, joined
/// by commas (`default` for the default), as [`parse_variant`] reads them.
pub fn variant_name(v: ThesisVariant) -> String {
    let d = ThesisVariant::DEFAULT;
    let values = [
        (v.indices != d.indices).then_some(v.indices as usize),
        (v.lambda != d.lambda).then_some(v.lambda as usize),
        (v.lambda_draw != d.lambda_draw).then_some(v.lambda_draw as usize),
        (v.mutation != d.mutation).then_some(v.mutation as usize),
        (v.generations != d.generations).then_some(v.generations as usize),
    ];
    let parts: Vec<String> = VARIANT_KEYS
        .iter()
        .zip(values)
        .filter_map(|((k, names), n)| n.map(|n| format!("{k}={}", names[n])))
        .collect();
    if parts.is_empty() {
        "default".into()
    } else {
        parts.join(",")
    }
}

/// Parses a thesis variant: `default`, or a comma list of `key=value` (keys and values in
/// [`VARIANT_KEYS`]; a key given twice is an error), such as
/// `indices=rejection,lambda=closed-open,mutation=fma,generations=plus-one`.
pub fn parse_variant(list: &str) -> Result<ThesisVariant> {
    let mut v = ThesisVariant::DEFAULT;
    let trimmed = list.trim();
    if trimmed.eq_ignore_ascii_case("default") {
        return Ok(v);
    }
    let keys = || {
        VARIANT_KEYS
            .iter()
            .map(|(k, names)| format!("{k}={}", names.join("|")))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut seen = [false; VARIANT_KEYS.len()];
    let mut any = false;
    for item in trimmed.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        any = true;
        let Some((key, value)) = item.split_once('=') else {
            return Err(Error::invalid(
                "thesis variant",
                crate::error::clip(item),
                format!(
                    "key=value items separated by commas, or default; the keys: {}",
                    keys()
                ),
            ));
        };
        let (key, value) = (
            key.trim().to_ascii_lowercase(),
            value.trim().to_ascii_lowercase(),
        );
        let Some(k) = VARIANT_KEYS.iter().position(|(name, _)| *name == key) else {
            return Err(Error::UnknownName {
                kind: "thesis variant key",
                name: crate::error::clip(&key),
                known: VARIANT_KEYS
                    .iter()
                    .map(|(k, _)| *k)
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        };
        if std::mem::replace(&mut seen[k], true) {
            return Err(Error::invalid(
                "thesis variant",
                crate::error::clip(trimmed),
                format!("each key once (\"{key}\" is given twice)"),
            ));
        }
        let names = VARIANT_KEYS[k].1;
        let Some(n) = names.iter().position(|name| *name == value) else {
            return Err(Error::UnknownName {
                kind: match k {
                    0 => "value of indices",
                    1 => "value of lambda",
                    2 => "value of lambda-draw",
                    3 => "value of mutation",
                    _ => "value of generations",
                },
                name: crate::error::clip(&value),
                known: names.join(", "),
            });
        };
        match k {
            0 => v.indices = [IndexDraw::Free, IndexDraw::Rejection][n],
            1 => v.lambda = [LambdaRange::OpenClosed, LambdaRange::ClosedOpen][n],
            2 => v.lambda_draw = [LambdaDraw::PerComponent, LambdaDraw::PerIndividual][n],
            3 => {
                v.mutation = [
                    MutationForm::Plain,
                    MutationForm::Fma,
                    MutationForm::FmaInner,
                    MutationForm::FromBest,
                ][n]
            }
            _ => v.generations = [GenerationCount::GMax, GenerationCount::PlusOne][n],
        }
    }
    if !any {
        return Err(Error::invalid(
            "thesis variant",
            format!("{list:?}"),
            format!(
                "default, or key=value items separated by commas; the keys: {}",
                keys()
            ),
        ));
    }
    Ok(v)
}
