//! Islands: the populations of one batch form an archipelago and exchange individuals
//! at generation boundaries, on the CPU engine.
//!
//! Island `k` of an archipelago built from a job with stream `s` is that job with
//! population stream `s·N + k` (N islands), so archipelago `s` of a series of runs uses
//! streams `s·N … s·N + N − 1`. Every island runs the same algorithm: DE with the job's
//! strategy (any of them), PSO ([`crate::cpu::pso`]) or the GA ([`crate::cpu::ga`]).
//!
//! # Order of a run
//! 1. Every island's generation 0 (its initial population), then its best.
//! 2. For `g = 1, 2, …`: every island runs generation `g` (independently; DE reads the
//!    island's own best of generation `g − 1`). If the best value over all islands has
//!    reached the target, the run stops after generation `g`. Otherwise, when `g` is a
//!    multiple of the interval and `g` is below the generation limit, one migration
//!    event runs as [`gpude_device::migration`] describes (snapshot of all emigrants,
//!    then all replacements, then every island's best recomputed).
//!
//! An interval of at least the generation limit therefore gives exactly the results of
//! the same jobs run one by one. For PSO the migrating "individuals" are the particles'
//! personal bests: a newcomer becomes the replaced particle's position and personal
//! best, and keeps that particle's velocity. An adaptive DE island (jDE … jSO) keeps its
//! own memory and archive: a newcomer takes the replaced row's place in the population
//! (jDE's F and Cr of that place stay), and the random draws of an event read the
//! islands' size at that generation (L-SHADE's and jSO's shrink on the same schedule,
//! as every island spends the same evaluations). Such an archipelago ends when the
//! islands' budgets are spent.
//!
//! Each island also keeps a record of the best point it has held, because with random
//! replacement an island can lose its best individual: the record starts empty and, at
//! every migration event with random replacement (just before it and just after it) and
//! at the end of the run, takes the island's current best unless the record is strictly
//! better. With worst replacement an island never loses its best (it receives fewer
//! individuals than it has, and its best is never among its worst), so the record is
//! only taken at the end: its current best. Between two events an island's best value
//! never worsens, so after any generation the better of the record and the current best
//! is the best value the island has held: the history and the target test read that.
//! The results report the records. (Taking them at the events only, not after every
//! generation, lets the GPU engine keep them in its migration kernel; the values are the
//! same, and where two points tie the record is the later one.)
//!
//! # Checkpoints
//! The state after generation g (after its migration event) is every island's members
//! (a swarm's positions and velocities too) and record, the generation, the events run
//! and the histories ([`crate::run::checkpoint::ArchipelagoCheckpoint`]); either engine
//! goes on from it with the same bits. A run saved at its generation limit has skipped
//! that generation's event: a run resumed from it with a higher limit runs the event
//! first ([`crate::run::checkpoint::ArchipelagoCheckpoint::pending_event`]).

use crate::cpu::ga::{self, Ga};
use crate::cpu::pso::{self, Pso, Swarm};
use crate::cpu::{self, Population, adaptive};
use crate::error::{Error, Result};
use crate::job::config::Job;
use crate::job::names::{lookup, name_of};
use crate::job::precision::Precision;
use crate::run::archipelago::{ArchipelagoRan, GroupControl, IslandsWatch, drive};
use crate::run::checkpoint::{ArchipelagoCheckpoint, ArchipelagoEntry, IslandState, Rows, Stored};
use crate::run::control::{Flow, Observer};
use crate::run::result::{Ending, RunResult, Termination, termination};
use gpude_device::Real;
use gpude_device::de::better;
use gpude_device::ga::GaParams;
use gpude_device::migration::{
    EMIGRANT_SLOT, REPLACE_SLOT, draw_distinct, random_ring, select_best, select_worst, source,
    sources,
};
pub use gpude_device::migration::{Emigrants, Replacement, Topology};
use gpude_device::philox::key_of;
use gpude_device::pso::PsoParams;
use nalgebra::DVector;
use rayon::prelude::*;
use std::time::{Duration, Instant};

/// The most islands in one archipelago.
pub const MAX_ISLANDS: u32 = 1 << 16;
/// The most individuals over all islands.
pub const MAX_INDIVIDUALS: u64 = 1 << 26;

/// Names of the topologies, emigrant rules, replacement rules and algorithms.
pub const TOPOLOGIES: [(&str, Topology); 3] = [
    ("ring", Topology::Ring),
    ("full", Topology::Full),
    ("random", Topology::Random),
];
pub const EMIGRANT_RULES: [(&str, Emigrants); 2] =
    [("best", Emigrants::Best), ("random", Emigrants::Random)];
pub const REPLACEMENTS: [(&str, Replacement); 2] = [
    ("worst", Replacement::Worst),
    ("random", Replacement::Random),
];

pub fn parse_topology(s: &str) -> Result<Topology> {
    lookup("topology", &TOPOLOGIES, s)
}
pub fn parse_emigrants(s: &str) -> Result<Emigrants> {
    lookup("emigrant selection", &EMIGRANT_RULES, s)
}
pub fn parse_replacement(s: &str) -> Result<Replacement> {
    lookup("replacement", &REPLACEMENTS, s)
}
pub fn topology_name(t: Topology) -> &'static str {
    name_of(&TOPOLOGIES, t)
}
pub fn emigrants_name(e: Emigrants) -> &'static str {
    name_of(&EMIGRANT_RULES, e)
}
pub fn replacement_name(r: Replacement) -> &'static str {
    name_of(&REPLACEMENTS, r)
}

/// The algorithm every island runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Algorithm {
    /// Differential Evolution with the job's strategy.
    De,
    /// Particle swarm optimization.
    Pso(Pso),
    /// The genetic algorithm ([`crate::cpu::ga`]).
    Ga(Ga),
}

impl Algorithm {
    pub fn name(self) -> &'static str {
        match self {
            Algorithm::De => "de",
            Algorithm::Pso(_) => "pso",
            Algorithm::Ga(_) => "ga",
        }
    }
}

/// Islands of one job template with their migration settings; built by
/// [`ArchipelagoBuilder::build`].
#[derive(Clone, Debug, PartialEq)]
pub struct Archipelago {
    template: Job,
    islands: u32,
    topology: Topology,
    interval: u32,
    migrants: u32,
    emigrants: Emigrants,
    replace: Replacement,
    algorithm: Algorithm,
}

/// Builds an [`Archipelago`]; left-out settings: ring, interval 1 % of the generation
/// limit (at least 1; seed 001's period), 1 migrant, best → worst, DE.
#[derive(Clone, Debug)]
pub struct ArchipelagoBuilder {
    a: Archipelago,
    interval: Option<u32>,
}

impl Archipelago {
    /// `islands` copies of `template`, island `k` on stream `template.stream()·N + k`.
    pub fn builder(template: Job, islands: u32) -> ArchipelagoBuilder {
        ArchipelagoBuilder {
            a: Archipelago {
                template,
                islands,
                topology: Topology::Ring,
                interval: 1,
                migrants: 1,
                emigrants: Emigrants::Best,
                replace: Replacement::Worst,
                algorithm: Algorithm::De,
            },
            interval: None,
        }
    }

    pub fn template(&self) -> &Job {
        &self.template
    }
    pub fn islands(&self) -> u32 {
        self.islands
    }
    pub fn topology(&self) -> Topology {
        self.topology
    }
    /// Generations between migration events.
    pub fn interval(&self) -> u32 {
        self.interval
    }
    /// Emigrants each island sends per event.
    pub fn migrants(&self) -> u32 {
        self.migrants
    }
    pub fn emigrants(&self) -> Emigrants {
        self.emigrants
    }
    pub fn replacement(&self) -> Replacement {
        self.replace
    }
    pub fn algorithm(&self) -> Algorithm {
        self.algorithm
    }

    /// Whether `other` is this archipelago but for its template's seed and stream (the
    /// GPU engine runs such archipelagos in the same launches).
    pub fn shares_launches_with(&self, other: &Archipelago) -> bool {
        let strip = |a: &Archipelago| Archipelago {
            template: a.template.clone().with_seed(0).with_stream(0),
            ..a.clone()
        };
        strip(self) == strip(other)
    }

    /// Individuals each island receives per event.
    pub fn incoming(&self) -> u32 {
        self.migrants * sources(self.topology, self.islands)
    }

    /// The job of island `k`.
    pub fn island_job(&self, k: u32) -> Job {
        self.template
            .clone()
            .with_stream(self.template.stream() * self.islands + k)
    }

    /// This archipelago with generation limit `generations` (an evaluation budget
    /// becomes this count); the migration interval stays.
    pub fn with_generations(&self, generations: u32) -> Result<Archipelago> {
        if generations == u32::MAX {
            return Err(Error::invalid(
                "generations",
                generations,
                format!("at most {}", u32::MAX - 1),
            ));
        }
        Ok(Archipelago {
            template: self.template.clone().with_generation_limit(generations),
            ..self.clone()
        })
    }

    /// Evaluations of a run of `g` generations over all islands.
    pub fn evaluations(&self, g: u32) -> u64 {
        self.islands as u64 * self.template.evaluations(g)
    }
}

impl ArchipelagoBuilder {
    pub fn topology(mut self, t: Topology) -> Self {
        self.a.topology = t;
        self
    }
    /// Generations between migration events.
    pub fn interval(mut self, g: u32) -> Self {
        self.interval = Some(g);
        self
    }
    /// Emigrants each island sends per event (K).
    pub fn migrants(mut self, k: u32) -> Self {
        self.a.migrants = k;
        self
    }
    pub fn emigrants(mut self, e: Emigrants) -> Self {
        self.a.emigrants = e;
        self
    }
    pub fn replacement(mut self, r: Replacement) -> Self {
        self.a.replace = r;
        self
    }
    pub fn algorithm(mut self, a: Algorithm) -> Self {
        self.a.algorithm = a;
        self
    }

    pub fn build(self) -> Result<Archipelago> {
        let mut a = self.a;
        if a.template.adaptive().is_some() && a.algorithm != Algorithm::De {
            return Err(Error::invalid(
                "strategy",
                crate::job::config::strategy_name(a.template.strategy()),
                format!(
                    "a DE strategy with algorithm de, not {}",
                    a.algorithm.name()
                ),
            ));
        }
        a.template.stops().unsupported("islands or PSO")?;
        let n = a.islands;
        if n == 0 || n > MAX_ISLANDS {
            return Err(Error::invalid(
                "number of islands",
                n,
                format!("1 ..= {MAX_ISLANDS}"),
            ));
        }
        let np = a.template.pop();
        // The smallest an island gets: L-SHADE's and jSO's populations shrink.
        let smallest = a.template.adaptive().map_or(np, |ad| ad.min_pop.min(np));
        let total = n as u64 * np as u64;
        if total > MAX_INDIVIDUALS {
            return Err(Error::invalid(
                "islands × population",
                format!("{n} × {np}"),
                format!("at most {MAX_INDIVIDUALS} individuals in all"),
            ));
        }
        let last = a.template.stream() as u64 * n as u64 + (n as u64 - 1);
        if last > u32::MAX as u64 {
            return Err(Error::invalid(
                "stream",
                a.template.stream(),
                format!(
                    "at most {} with {n} islands (island streams are stream·{n} + k)",
                    (u32::MAX as u64 - (n as u64 - 1)) / n as u64
                ),
            ));
        }
        a.interval = match self.interval {
            Some(0) => {
                return Err(Error::invalid(
                    "migration interval",
                    0,
                    "at least 1 generation",
                ));
            }
            Some(g) => g,
            None => (a.template.generations() / 100).max(1),
        };
        if a.migrants == 0 {
            return Err(Error::invalid("migrants", 0, "at least 1"));
        }
        let m = a.migrants as u64 * sources(a.topology, n) as u64;
        if m >= smallest as u64 {
            return Err(Error::invalid(
                "migrants",
                a.migrants,
                format!(
                    "fewer than the island size: each island receives migrants × sources = {} × {} = {m} individuals per event, which must be below Np = {smallest}{}",
                    a.migrants,
                    sources(a.topology, n),
                    if smallest < np {
                        " (the smallest size the strategy reduces the population to)"
                    } else {
                        ""
                    }
                ),
            ));
        }
        if let Algorithm::Ga(g) = a.algorithm {
            g.validate()?;
        }
        if matches!(a.algorithm, Algorithm::Ga(_)) && !a.template.thesis_variant().is_default() {
            return Err(Error::invalid(
                "thesis variant",
                crate::job::config::variant_name(a.template.thesis_variant()),
                "the default with algorithm ga (the variants are the thesis DE's)",
            ));
        }
        if let Algorithm::Pso(p) = a.algorithm {
            p.validate()?;
            if !a.template.thesis_variant().is_default() {
                return Err(Error::invalid(
                    "thesis variant",
                    crate::job::config::variant_name(a.template.thesis_variant()),
                    "the default with algorithm pso (the variants are the thesis DE's)",
                ));
            }
        }
        Ok(a)
    }
}

/// What an archipelago run returns.
#[derive(Clone, Debug, serde::Serialize)]
pub struct ArchipelagoResult {
    /// One result per island (its record, see the module's notes), in island order.
    pub islands: Vec<RunResult>,
    /// The island holding the overall best (the lowest index among equals).
    pub best_island: usize,
    /// The overall best: the best island's point, with the evaluations of all islands,
    /// the best value over all islands after every generation (when asked for) and
    /// the template's stream.
    pub overall: RunResult,
    /// Migration events that ran.
    pub migrations: u32,
    /// The first generation after which the overall best reached the target, if any.
    pub first_hit: Option<u32>,
}

enum State<T> {
    De {
        pop: Population<T>,
        best: usize,
        scratch: Vec<T>,
    },
    /// An adaptive strategy's population, memory and archive.
    Adaptive {
        st: adaptive::State<T>,
        best: usize,
    },
    Pso(Swarm<T>),
    Ga {
        pop: Population<T>,
        best: usize,
        params: GaParams<T>,
    },
}

struct Island<T> {
    job: Job,
    state: State<T>,
    rec_f: T,
    rec_x: Vec<T>,
    history: Option<Vec<f64>>,
}

impl<T: Real> Island<T> {
    fn new(job: Job, algorithm: Algorithm) -> Island<T> {
        let state = match algorithm {
            Algorithm::De if job.adaptive().is_some() => {
                let st = adaptive::State::new(&job);
                State::Adaptive {
                    best: st.pop.best(),
                    st,
                }
            }
            Algorithm::De => {
                let pop = cpu::initial::<T>(&job);
                let best = pop.best();
                State::De {
                    pop,
                    best,
                    scratch: Vec::new(),
                }
            }
            Algorithm::Pso(_) => State::Pso(pso::initial::<T>(&job)),
            Algorithm::Ga(g) => {
                let pop = cpu::initial::<T>(&job);
                let best = pop.best();
                State::Ga {
                    pop,
                    best,
                    params: g.params::<T>(),
                }
            }
        };
        let history = job.history().then(Vec::new);
        Island {
            job,
            state,
            rec_f: T::NAN,
            rec_x: Vec::new(),
            history,
        }
    }

    /// The island's state for a checkpoint (its record empty while its value is NaN).
    fn state(&self) -> IslandState
    where
        T: Stored,
    {
        let (members, motion) = match &self.state {
            State::De { pop, .. } | State::Ga { pop, .. } => {
                (T::state(pop.x.clone(), pop.fit.clone()), None)
            }
            // Never saved: a checkpoint refuses adaptive strategies (`savable`).
            State::Adaptive { st, .. } => (T::state(st.pop.x.clone(), st.pop.fit.clone()), None),
            State::Pso(s) => (
                T::state(s.pbest.clone(), s.pfit.clone()),
                Some((T::rows(s.x.clone()), T::rows(s.v.clone()))),
            ),
        };
        IslandState {
            members,
            motion,
            record_x: T::rows(if self.rec_f.is_nan() {
                Vec::new()
            } else {
                self.rec_x.clone()
            }),
            record_f: T::rows(vec![self.rec_f]),
            history: self.history.clone(),
        }
    }

    /// Island `job` running `algorithm` as `state` holds it (checked by
    /// [`ArchipelagoCheckpoint::check`]).
    fn restore(job: Job, algorithm: Algorithm, state: &IslandState) -> Result<Island<T>>
    where
        T: Stored,
    {
        let wrong = || Error::Input {
            what: "archipelago checkpoint".into(),
            message: format!("its values are not in {}", T::NAME),
        };
        let (x, fit) = T::parts(state.members.clone()).ok_or_else(wrong)?;
        let rows = |r: &Rows| T::of_rows(r.clone()).ok_or_else(wrong);
        let state_of = match algorithm {
            Algorithm::De => {
                let pop = Population::from_parts(&job, x, fit);
                State::De {
                    best: pop.best(),
                    pop,
                    scratch: Vec::new(),
                }
            }
            Algorithm::Ga(g) => {
                let pop = Population::from_parts(&job, x, fit);
                State::Ga {
                    best: pop.best(),
                    pop,
                    params: g.params::<T>(),
                }
            }
            Algorithm::Pso(_) => {
                let (px, pv) = state.motion.as_ref().ok_or_else(|| Error::Input {
                    what: "archipelago checkpoint".into(),
                    message: "a swarm's motion is missing".into(),
                })?;
                State::Pso(Swarm::from_parts(&job, rows(px)?, rows(pv)?, x, fit))
            }
        };
        let rec_f = rows(&state.record_f)?.first().copied().unwrap_or(T::NAN);
        Ok(Island {
            rec_x: rows(&state.record_x)?,
            rec_f,
            history: state.history.clone(),
            state: state_of,
            job,
        })
    }

    /// The migrating individuals: rows (row-major) and values.
    fn members(&self) -> (&[T], &[T]) {
        match &self.state {
            State::De { pop, .. } | State::Ga { pop, .. } => (&pop.x, &pop.fit),
            State::Adaptive { st, .. } => (&st.pop.x, &st.pop.fit),
            State::Pso(s) => (&s.pbest, &s.pfit),
        }
    }

    fn dim(&self) -> usize {
        self.job.dim() as usize
    }

    fn best(&self) -> usize {
        match &self.state {
            State::De { best, .. } | State::Ga { best, .. } | State::Adaptive { best, .. } => *best,
            State::Pso(s) => s.gbest,
        }
    }

    /// The record takes the current best unless the record is strictly better (a lower
    /// value; a tie or an empty record, NaN, takes it).
    fn take_record(&mut self) {
        let b = self.best();
        let d = self.dim();
        let (rows, fit) = self.members();
        let fb = fit[b];
        if !better(self.rec_f, u32::MAX, fb, 0) {
            let row = rows[b * d..(b + 1) * d].to_vec();
            self.rec_f = fb;
            self.rec_x = row;
        }
    }

    /// Runs generation `g`; false, doing nothing, when an adaptive island's budget is
    /// spent.
    fn step(&mut self, g: u32, params: &PsoParams<T>) -> bool {
        match &mut self.state {
            State::De { pop, best, scratch } => {
                *best = cpu::generation(&self.job, pop, *best, g, scratch);
            }
            State::Adaptive { st, best } => {
                if !st.generation(&self.job, g) {
                    return false;
                }
                *best = st.pop.best();
            }
            State::Pso(s) => pso::generation(&self.job, params, s, g),
            State::Ga { pop, best, params } => {
                *best = ga::generation(&self.job, params, pop, *best, g);
            }
        }
        true
    }

    /// Whether an adaptive island's budget is spent.
    fn spent(&self) -> bool {
        match (&self.state, self.job.adaptive()) {
            (State::Adaptive { st, .. }, Some(a)) => st.evaluations >= a.max_evaluations,
            _ => false,
        }
    }

    /// Individuals now (an adaptive island's population shrinks under L-SHADE and jSO).
    fn size(&self) -> u32 {
        self.members().1.len() as u32
    }

    /// Evaluations after `g` generations.
    fn evaluations(&self, g: u32) -> u64 {
        match &self.state {
            State::Adaptive { st, .. } => st.evaluations,
            _ => self.job.evaluations(g),
        }
    }

    /// The best value the island has held: the record's, or the current best's when
    /// the record is not strictly better.
    fn held(&self) -> T {
        let fb = self.members().1[self.best()];
        if better(self.rec_f, u32::MAX, fb, 0) {
            self.rec_f
        } else {
            fb
        }
    }

    fn replace(&mut self, i: usize, row: &[T], f: T) {
        match &mut self.state {
            State::De { pop, .. } | State::Ga { pop, .. } => {
                let d = pop.dim;
                pop.x[i * d..(i + 1) * d].copy_from_slice(row);
                pop.fit[i] = f;
            }
            State::Adaptive { st, .. } => {
                // The newcomer takes the row's place; jDE's F and Cr of that place stay.
                let d = st.pop.dim;
                st.pop.x[i * d..(i + 1) * d].copy_from_slice(row);
                st.pop.fit[i] = f;
            }
            State::Pso(s) => s.replace(i, row, f),
        }
    }

    fn refresh(&mut self, record: bool) {
        match &mut self.state {
            State::De { pop, best, .. } | State::Ga { pop, best, .. } => *best = pop.best(),
            State::Adaptive { st, best } => *best = st.pop.best(),
            State::Pso(s) => s.gbest = s.best(),
        }
        if record {
            self.take_record();
        }
    }

    fn record_history(&mut self) {
        let f = self.held().to_f64();
        if let Some(h) = self.history.as_mut() {
            h.push(f);
        }
    }
}

/// The island that has held the best value (lowest value, then lowest index).
fn overall<T: Real>(isl: &[Island<T>]) -> usize {
    let mut b = 0;
    for k in 1..isl.len() {
        if better(isl[k].held(), k as u32, isl[b].held(), b as u32) {
            b = k;
        }
    }
    b
}

/// One migration event after generation `g` (see [`gpude_device::migration`]).
fn migrate<T: Real>(a: &Archipelago, isl: &mut [Island<T>], g: u32) {
    let n = isl.len() as u32;
    let k = a.migrants as usize;
    let key = key_of(a.template.seed());
    // Every island has the same size (an adaptive one's shrinks on the same schedule).
    let np = isl[0].size();
    let record = a.replace == Replacement::Random;
    if record {
        isl.par_iter_mut().for_each(|i| i.take_record());
    }
    // 1. The snapshot: every island's emigrants, copied out.
    let out: Vec<(Vec<T>, Vec<T>)> = isl
        .par_iter()
        .map(|i| {
            let (rows, fit) = i.members();
            let d = i.dim();
            let mut idx = vec![0u32; k];
            match a.emigrants {
                Emigrants::Best => select_best(fit, &mut idx),
                Emigrants::Random => {
                    draw_distinct(key, i.job.stream(), g, EMIGRANT_SLOT, np, &mut idx)
                }
            }
            let mut r = Vec::with_capacity(k * d);
            for &e in &idx {
                r.extend_from_slice(&rows[e as usize * d..(e as usize + 1) * d]);
            }
            (r, idx.iter().map(|&e| fit[e as usize]).collect())
        })
        .collect();
    // 2. The sources.
    let mut ring = vec![0u32; n as usize];
    if a.topology == Topology::Random {
        random_ring(key, isl[0].job.stream(), g, &mut ring);
    }
    let ns = sources(a.topology, n);
    // 3–5. Targets from each island's own values, replacement, the new best.
    isl.par_iter_mut().enumerate().for_each(|(r, i)| {
        let d = i.dim();
        let mut targets = vec![0u32; k * ns as usize];
        match a.replace {
            Replacement::Worst => select_worst(i.members().1, &mut targets),
            Replacement::Random => {
                draw_distinct(key, i.job.stream(), g, REPLACE_SLOT, np, &mut targets)
            }
        }
        for s in 0..ns {
            let (rows, fit) = &out[source(a.topology, r as u32, s, n, &ring) as usize];
            for m in 0..k {
                let t = targets[s as usize * k + m] as usize;
                i.replace(t, &rows[m * d..(m + 1) * d], fit[m]);
            }
        }
        i.refresh(record);
    });
}

/// Records the best value each island and the archipelago has held after generation
/// `g` and shows it to the observer.
fn note<T: Real>(
    isl: &mut [Island<T>],
    g: u32,
    history: &mut Option<Vec<f64>>,
    observer: Option<Observer>,
) -> Flow {
    for i in isl.iter_mut() {
        i.record_history();
    }
    let f = isl[overall(isl)].held().to_f64();
    if let Some(h) = history.as_mut() {
        h.push(f);
    }
    observer.map_or(Flow::Continue, |o| o(g, f))
}

/// The archipelago's state after generation `g`.
fn checkpoint<T: Stored>(
    a: &Archipelago,
    isl: &[Island<T>],
    g: u32,
    migrations: u32,
    history: &Option<Vec<f64>>,
    elapsed: Duration,
) -> ArchipelagoCheckpoint {
    ArchipelagoCheckpoint {
        archipelago: a.clone(),
        generation: g,
        migrations,
        islands: isl.iter().map(Island::state).collect(),
        history: history.clone(),
        elapsed,
    }
}

/// Runs (or goes on with) one archipelago in precision `T` on the CPU under `control`:
/// its result and, when it was stopped or `control.keep` asks, its state at the end.
pub(crate) fn run_entry<T: Stored>(
    entry: &ArchipelagoEntry,
    control: &mut GroupControl,
) -> Result<(ArchipelagoResult, Option<ArchipelagoCheckpoint>)> {
    let start = Instant::now();
    let a = entry.archipelago();
    let n = a.islands;
    let params = match a.algorithm {
        Algorithm::Pso(p) => p.params::<T>(),
        Algorithm::De | Algorithm::Ga(_) => Pso::default().params::<T>(),
    };
    let observer = control.observer;
    let (mut isl, mut g, mut migrations, mut history, before) = match entry {
        ArchipelagoEntry::Pending(_) => {
            let isl: Vec<Island<T>> = (0..n)
                .into_par_iter()
                .map(|k| Island::new(a.island_job(k), a.algorithm))
                .collect();
            (
                isl,
                0,
                0,
                a.template.history().then(Vec::new),
                Duration::ZERO,
            )
        }
        ArchipelagoEntry::Started(c) => {
            c.check()?;
            let isl = (0..n)
                .map(|k| Island::restore(a.island_job(k), a.algorithm, &c.islands[k as usize]))
                .collect::<Result<Vec<_>>>()?;
            (
                isl,
                c.generation,
                c.migrations,
                c.history.clone(),
                c.elapsed,
            )
        }
    };
    let target = a.template.target_value();
    let reached = |isl: &[Island<T>]| {
        let b = overall(isl);
        target.is_some_and(|t| isl[b].held().to_f64() <= t)
    };
    if let ArchipelagoEntry::Started(c) = entry
        && c.pending_event()
    {
        // Saved at its old limit, it skipped this generation's event: run it, and
        // note what the islands hold after it, as a run that never stopped did.
        migrate(a, &mut isl, g);
        migrations += 1;
        for i in isl.iter_mut() {
            let f = i.held().to_f64();
            if let Some(last) = i.history.as_mut().and_then(|h| h.last_mut()) {
                *last = f;
            }
        }
        let f = isl[overall(&isl)].held().to_f64();
        if let Some(last) = history.as_mut().and_then(|h| h.last_mut()) {
            *last = f;
        }
    }
    let mut stopped = match entry {
        ArchipelagoEntry::Pending(_) => note(&mut isl, 0, &mut history, observer),
        ArchipelagoEntry::Started(_) => {
            observer.map_or(Flow::Continue, |o| o(g, isl[overall(&isl)].held().to_f64()))
        }
    } == Flow::Stop;
    let gmax = a.template.generations();
    // An adaptive archipelago ends when its islands' budgets are spent (all at once:
    // they spend the same).
    let mut spent = false;
    while !stopped && g < gmax && !reached(&isl) {
        if control.stopping() {
            break;
        }
        let ran: Vec<bool> = isl.par_iter_mut().map(|i| i.step(g + 1, &params)).collect();
        if !ran.iter().all(|&r| r) {
            spent = true;
            break;
        }
        g += 1;
        if a.template.objective().failed() {
            break;
        }
        // An adaptive archipelago whose budgets this generation spent has ended: no
        // event after it.
        spent = isl.iter().any(Island::spent);
        if n > 1 && g % a.interval == 0 && g < gmax && !reached(&isl) && !spent {
            migrate(a, &mut isl, g);
            migrations += 1;
        }
        stopped = note(&mut isl, g, &mut history, observer) == Flow::Stop;
        if spent {
            break;
        }
        if !stopped && control.due(g, gmax) && !reached(&isl) {
            let c = checkpoint(a, &isl, g, migrations, &history, before + start.elapsed());
            if let Some(save) = control.save.as_mut() {
                stopped = save(std::slice::from_ref(&c)) == Flow::Stop;
            }
        }
    }
    let elapsed = before + start.elapsed();
    let hit = reached(&isl);
    let ended_early = g < gmax && !hit && !spent && !a.template.objective().failed();
    let state = (control.keep || ended_early)
        .then(|| checkpoint(a, &isl, g, migrations, &history, elapsed));
    for i in isl.iter_mut() {
        i.take_record();
    }
    let b = overall(&isl);
    let overall_f = isl[b].rec_f.to_f64();
    let first_hit = hit.then_some(g);
    let result = |i: &Island<T>, stream: u32, evaluations: u64, history: Option<Vec<f64>>| {
        RunResult::ended(
            &i.job,
            Ending {
                best_x: DVector::from_iterator(i.rec_x.len(), i.rec_x.iter().map(|v| v.to_f64())),
                best_f: i.rec_f.to_f64(),
                generations: g,
                evaluations,
                termination: if ended_early {
                    Termination::Stopped
                } else if spent && !hit {
                    Termination::MaxEvaluations
                } else {
                    termination(&i.job, g, overall_f)
                },
                elapsed,
                history,
                layout: crate::run::result::RunLayout::CpuIslands,
                stream,
            },
        )
    };
    let islands: Vec<RunResult> = isl
        .iter()
        .map(|i| result(i, i.job.stream(), i.evaluations(g), i.history.clone()))
        .collect();
    let all: u64 = isl.iter().map(|i| i.evaluations(g)).sum();
    let overall = result(&isl[b], a.template.stream(), all, history);
    Ok((
        ArchipelagoResult {
            islands,
            best_island: b,
            overall,
            migrations,
            first_hit,
        },
        state,
    ))
}

/// Runs (or goes on with) archipelagos on the CPU, one after the other, under `watch`.
pub fn run_entries(
    entries: Vec<ArchipelagoEntry>,
    watch: &mut IslandsWatch,
) -> Result<Vec<ArchipelagoRan>> {
    drive(
        entries,
        watch,
        |_, _| false,
        |group, control| {
            let mut out = Vec::with_capacity(group.len());
            for e in group {
                let objective = e.archipelago().template().objective();
                objective.reset_failure();
                let r = match e.archipelago().template().precision() {
                    Precision::F32 => run_entry::<f32>(e, control)?,
                    Precision::F64 => run_entry::<f64>(e, control)?,
                };
                objective.take_failure()?;
                out.push(r);
            }
            Ok(out)
        },
    )
}

/// Runs the archipelago in precision `T` on the CPU; the observer sees the overall
/// best after the initialisation and after every generation, and may stop it.
pub fn run<T: Stored>(a: &Archipelago, observer: Option<Observer>) -> Result<ArchipelagoResult> {
    let mut control = GroupControl {
        observer,
        stop: None,
        every: 0,
        save: None,
        keep: false,
    };
    run_entry::<T>(&ArchipelagoEntry::Pending(a.clone()), &mut control).map(|(r, _)| r)
}

/// [`run`] in the template's precision.
pub fn run_cpu(a: &Archipelago, observer: Option<Observer>) -> Result<ArchipelagoResult> {
    match a.template.precision() {
        Precision::F32 => run::<f32>(a, observer),
        Precision::F64 => run::<f64>(a, observer),
    }
}

#[cfg(test)]
#[path = "islands_tests.rs"]
mod tests;
