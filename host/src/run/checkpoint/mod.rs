//! Checkpoints: the state of a run between two generations, from which
//! [`crate::cpu::resume`] or [`crate::CudaEngine::resume`] goes on with the same bits as a
//! run that never stopped, and a file format for a list of runs. The state holds no
//! engine: both compute the same bits, so either goes on from the other's checkpoint.
//!
//! Every random number of a run is keyed by (seed, stream, individual) with the
//! generation in the counter, so the population, its values and the generation count are
//! the whole state: the best individual is found again from the values (lowest value,
//! then lowest index, as the engines do).
//!
//! The file format of a list of runs is in `file.rs` beside this module.

use crate::error::{Error, Result};
use crate::job::config::{Job, Precision};
use crate::job::problem::same_bits;
use crate::run::result::{Ending, RunResult, Termination, termination};
use crate::run::stops::{Stops, stop_of};
use gpude_device::de::better;
use gpude_device::{BoundPolicy, Crossover, Formula, Function, Real, Strategy, ThesisVariant};
use nalgebra::DVector;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::time::Duration;

mod archipelago;
mod file;

pub use archipelago::{
    ArchipelagoCheckpoint, ArchipelagoEntry, IslandState, Rows, decode_archipelagos,
    encode_archipelagos, is_archipelago_file,
};

pub use file::{MAGIC, VERSION, decode, encode, encode_parts, encoded_size};

/// A population and its values in the precision of its job, row-major (`x[i·D + j]`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum State {
    F32 { x: Vec<f32>, fit: Vec<f32> },
    F64 { x: Vec<f64>, fit: Vec<f64> },
}

/// The precisions a [`State`] holds.
pub trait Stored: Real {
    /// The state of this population.
    fn state(x: Vec<Self>, fit: Vec<Self>) -> State;
    /// The population of a state in this precision, if it is.
    fn parts(state: State) -> Option<(Vec<Self>, Vec<Self>)>;
    /// These values as [`Rows`].
    fn rows(v: Vec<Self>) -> Rows;
    /// The values of `rows` in this precision, if they are.
    fn of_rows(rows: Rows) -> Option<Vec<Self>>;
}

impl Stored for f32 {
    fn state(x: Vec<f32>, fit: Vec<f32>) -> State {
        State::F32 { x, fit }
    }
    fn parts(state: State) -> Option<(Vec<f32>, Vec<f32>)> {
        match state {
            State::F32 { x, fit } => Some((x, fit)),
            State::F64 { .. } => None,
        }
    }
    fn rows(v: Vec<f32>) -> Rows {
        Rows::F32(v)
    }
    fn of_rows(rows: Rows) -> Option<Vec<f32>> {
        match rows {
            Rows::F32(v) => Some(v),
            Rows::F64(_) => None,
        }
    }
}

impl Stored for f64 {
    fn state(x: Vec<f64>, fit: Vec<f64>) -> State {
        State::F64 { x, fit }
    }
    fn parts(state: State) -> Option<(Vec<f64>, Vec<f64>)> {
        match state {
            State::F64 { x, fit } => Some((x, fit)),
            State::F32 { .. } => None,
        }
    }
    fn rows(v: Vec<f64>) -> Rows {
        Rows::F64(v)
    }
    fn of_rows(rows: Rows) -> Option<Vec<f64>> {
        match rows {
            Rows::F64(v) => Some(v),
            Rows::F32(_) => None,
        }
    }
}

/// Index of the best value: the lowest, then the lowest index (the engines' rule).
pub fn best_index<T: Real>(fit: &[T]) -> usize {
    let mut b = 0;
    for i in 1..fit.len() {
        if better(fit[i], i as u32, fit[b], b as u32) {
            b = i;
        }
    }
    b
}

/// Sets a job's generation limit (an evaluation budget becomes this count).
fn set_limit(job: &mut Job, generations: u32) -> Result<()> {
    if generations == u32::MAX {
        return Err(Error::invalid(
            "generations",
            generations,
            format!("at most {}", u32::MAX - 1),
        ));
    }
    *job = job.clone().with_generation_limit(generations);
    Ok(())
}

/// One run between two generations.
#[derive(Clone, Debug, PartialEq)]
pub struct Checkpoint {
    pub job: Job,
    /// Generations done (0: the initial population only).
    pub generation: u32,
    pub state: State,
    /// The best value after the initialisation and after each generation done, when
    /// the job records it.
    pub history: Option<Vec<f64>>,
    /// Time spent on the run so far.
    pub elapsed: Duration,
}

impl Checkpoint {
    /// The best individual's index.
    pub fn best_index(&self) -> usize {
        match &self.state {
            State::F32 { fit, .. } => best_index(fit),
            State::F64 { fit, .. } => best_index(fit),
        }
    }

    /// The best point and its value.
    pub fn best(&self) -> (Vec<f64>, f64) {
        let b = self.best_index();
        let d = self.job.dim() as usize;
        match &self.state {
            State::F32 { x, fit } => (
                x[b * d..(b + 1) * d].iter().map(|&v| v as f64).collect(),
                fit[b] as f64,
            ),
            State::F64 { x, fit } => (x[b * d..(b + 1) * d].to_vec(), fit[b]),
        }
    }

    /// Evaluations spent so far.
    pub fn evaluations(&self) -> u64 {
        self.job.evaluations(self.generation)
    }

    /// Has the run ended (generation limit or target reached, or a convergence stop
    /// fired)?
    pub fn finished(&self) -> bool {
        let (_, best_f) = self.best();
        self.generation >= self.job.generations()
            || self.job.target_value().is_some_and(|t| best_f <= t)
            || self.stop().is_some()
    }

    /// The convergence stop that ended the run here, if one did (see
    /// [`stop_of`]: never where the run is at its limit or target).
    pub fn stop(&self) -> Option<Termination> {
        if !self.job.stops().at(self.generation) {
            return None;
        }
        let values: Vec<f64> = match &self.state {
            State::F32 { fit, .. } => fit.iter().map(|&v| v as f64).collect(),
            State::F64 { fit, .. } => fit.clone(),
        };
        stop_of(&self.job, self.generation, &values, self.history.as_deref())
    }

    /// Raises or lowers the generation limit (a resumed run then goes on to it); an
    /// evaluation budget becomes this generation count. It is a g_max: under
    /// `generations=plus-one` the run goes on to one generation more.
    pub fn set_generations(&mut self, generations: u32) -> Result<()> {
        set_limit(&mut self.job, generations)
    }

    /// The result so far: what a run stopped here reports. Its termination is the
    /// target, the limit or budget, else the convergence stop that fired here, else
    /// [`Termination::Stopped`] (the run has not ended).
    pub fn result(&self) -> RunResult {
        let (x, best_f) = self.best();
        let stop = self.stop();
        let ended = self.generation >= self.job.generations()
            || self.job.target_value().is_some_and(|t| best_f <= t);
        RunResult::ended(
            &self.job,
            Ending {
                best_x: DVector::from_vec(x),
                best_f,
                generations: self.generation,
                evaluations: self.evaluations(),
                termination: match stop {
                    _ if ended => termination(&self.job, self.generation, best_f),
                    Some(t) => t,
                    None => Termination::Stopped,
                },
                elapsed: self.elapsed,
                history: self.history.clone(),
                layout: crate::run::result::RunLayout::Cpu,
                stream: self.job.stream(),
            },
        )
    }

    /// Checks that the parts agree: precision, sizes, history length.
    pub fn check(&self) -> Result<()> {
        let np = self.job.pop() as usize;
        let d = self.job.dim() as usize;
        let (precision, xs, fits) = match &self.state {
            State::F32 { x, fit } => (Precision::F32, x.len(), fit.len()),
            State::F64 { x, fit } => (Precision::F64, x.len(), fit.len()),
        };
        let bad = |m: String| {
            Err(Error::Input {
                what: "checkpoint".into(),
                message: m,
            })
        };
        if precision != self.job.precision() {
            return bad(format!(
                "the population is in {} but the job runs in {}",
                precision.name(),
                self.job.precision().name()
            ));
        }
        if Some(xs) != np.checked_mul(d) || fits != np {
            return bad(format!(
                "the population has {xs} components and {fits} values for Np = {np}, D = {d}"
            ));
        }
        if self.generation == u32::MAX {
            return bad("the generation count is out of range".into());
        }
        match &self.history {
            Some(h) if h.len() != self.generation as usize + 1 => bad(format!(
                "the history has {} values for {} generations",
                h.len(),
                self.generation
            )),
            None if self.job.history() => bad("the history is missing".into()),
            _ => Ok(()),
        }
    }
}

/// One run of a checkpoint file: started (its state) or not yet (its job).
#[derive(Clone, Debug, PartialEq)]
pub enum Entry {
    Pending(Job),
    Started(Checkpoint),
}

impl Entry {
    pub fn job(&self) -> &Job {
        match self {
            Entry::Pending(j) => j,
            Entry::Started(c) => &c.job,
        }
    }

    /// This entry, borrowed.
    pub fn part(&self) -> Part<'_> {
        match self {
            Entry::Pending(j) => Part::Pending(j),
            Entry::Started(c) => Part::Started(c),
        }
    }

    /// Sets the generation limit of the run (see [`Checkpoint::set_generations`]).
    pub fn set_generations(&mut self, generations: u32) -> Result<()> {
        match self {
            Entry::Started(c) => c.set_generations(generations),
            Entry::Pending(j) => set_limit(j, generations),
        }
    }
}

/// An [`Entry`] borrowed: what [`encode_parts`] takes, so that a list of runs can be
/// saved without copying their populations.
#[derive(Clone, Copy, Debug)]
pub enum Part<'a> {
    Pending(&'a Job),
    Started(&'a Checkpoint),
}

impl<'a> Part<'a> {
    /// The run's job.
    pub fn job(self) -> &'a Job {
        match self {
            Part::Pending(j) => j,
            Part::Started(c) => &c.job,
        }
    }
}

/// Can a checkpoint hold this job? Not yet an adaptive one: its memory, archive and
/// shrinking population are not part of the format.
pub fn savable(job: &Job) -> Result<()> {
    if job.objective().is_callback() {
        return Err(Error::invalid(
            "checkpoint of objective",
            crate::error::clip(&job.objective().name()),
            "a built-in function, an expression or a CEC 2017 function (a callback is code, which a file cannot hold)",
        ));
    }
    match job.adaptive() {
        Some(_) => Err(Error::invalid(
            "checkpoint of strategy",
            crate::job::config::strategy_name(job.strategy()),
            "a classic strategy or thesis (an adaptive run's memory and archive are not saved yet)",
        )),
        None => Ok(()),
    }
}
