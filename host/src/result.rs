//! What a run returns.

use nalgebra::DVector;
use serde::Serialize;
use std::time::Duration;

/// Why a run stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Termination {
    /// The best value reached the target error.
    TargetReached,
    /// The generation limit was reached.
    MaxGenerations,
    /// The evaluation budget was spent.
    MaxEvaluations,
    /// Stopped before its end: by a stop flag (an interrupt) or an observer.
    Stopped,
}

impl Termination {
    pub fn describe(self) -> &'static str {
        match self {
            Termination::TargetReached => "target error reached",
            Termination::MaxGenerations => "generation limit reached",
            Termination::MaxEvaluations => "evaluation budget spent",
            Termination::Stopped => "stopped before the end",
        }
    }
}

/// The outcome of one job.
#[derive(Clone, Debug, Serialize)]
pub struct RunResult {
    /// The best point found.
    #[serde(serialize_with = "ser_vec")]
    pub best_x: DVector<f64>,
    /// Its function value.
    pub best_f: f64,
    /// `best_f` minus the function's minimum.
    pub error: f64,
    pub generations: u32,
    pub evaluations: u64,
    pub termination: Termination,
    /// Wall time of the run (for a batch: of the launch that ran it).
    #[serde(serialize_with = "ser_secs")]
    pub elapsed: Duration,
    /// Best value after the initialisation and after each generation, when asked for.
    pub history: Option<Vec<f64>>,
    /// `cpu` or `cuda`.
    pub backend: &'static str,
    pub seed: u64,
    pub stream: u32,
}

fn ser_vec<S: serde::Serializer>(v: &DVector<f64>, s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(v.iter())
}

fn ser_secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

/// Why the run stopped, from how many generations it ran.
pub(crate) fn termination(job: &crate::Job, generations: u32, best_f: f64) -> Termination {
    match job.target_value() {
        Some(t) if best_f <= t => Termination::TargetReached,
        _ if job.budget_from_evaluations && generations >= job.generations => {
            Termination::MaxEvaluations
        }
        _ => Termination::MaxGenerations,
    }
}
