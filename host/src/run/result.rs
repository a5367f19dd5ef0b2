//! What a run returns.

use crate::error::{Error, num};
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
    /// The population converged: the standard deviation of its values was at most
    /// `atol + tol·|mean|` (see [`crate::run::stops`]).
    Converged,
    /// The best value did not improve in the job's stagnation window (see
    /// [`crate::run::stops`]).
    Stagnated,
    /// The run failed: its best value (or a component of its best point) is not a finite
    /// number, so the result means nothing. Every individual overflowed or became NaN:
    /// the domain is too wide for the function in this precision. The run still
    /// reports what it ended with; [`RunResult::ok`] turns this into an error.
    NonFinite,
}

impl Termination {
    pub fn describe(self) -> &'static str {
        match self {
            Termination::TargetReached => "target error reached",
            Termination::MaxGenerations => "generation limit reached",
            Termination::MaxEvaluations => "evaluation budget spent",
            Termination::Stopped => "stopped before the end",
            Termination::Converged => "population converged: spread ≤ atol + tol·|mean|",
            Termination::Stagnated => "best stagnated",
            Termination::NonFinite => "failed: the best value is not finite",
        }
    }

    /// Did the run end normally (any reason but [`Termination::NonFinite`])?
    pub fn is_success(self) -> bool {
        self != Termination::NonFinite
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
    /// `best_f` minus the function's minimum: the error the search computed, in its
    /// precision and formulas.
    pub error: f64,
    /// `best_x` re-evaluated on the host in f64 with the exact formulas, minus the
    /// minimum: the error to trust (success counts use it).
    pub verified_error: f64,
    /// True when `error` and `verified_error` differ by more than the rounding of the
    /// run's precision (see [`verify`]): the search's own value was misleading.
    pub errors_disagree: bool,
    pub generations: u32,
    pub evaluations: u64,
    pub termination: Termination,
    /// Wall time of the launch that ran it: the run's own on the CPU and in the grid
    /// and step layouts; in a batch, the whole launch's, which `launch_runs` runs shared.
    #[serde(serialize_with = "ser_secs")]
    pub elapsed: Duration,
    /// Best value after the initialisation and after each generation, when asked for.
    pub history: Option<Vec<f64>>,
    /// `cpu` or `cuda`.
    pub backend: &'static str,
    /// The layout that ran it.
    pub layout: RunLayout,
    /// How many runs shared the launch that `elapsed` times (1 but in a batch).
    pub launch_runs: u32,
    pub seed: u64,
    pub stream: u32,
}

/// Where and how a run ran: the engine and its layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RunLayout {
    /// The CPU engine, one run after the other.
    Cpu,
    /// The CPU engine's islands (one run, several populations).
    CpuIslands,
    /// The CPU engine's dimension split.
    CpuSplit,
    /// One block per run, the rows in global memory.
    Batch,
    /// One block per run, the population resident in shared memory.
    BatchResident,
    /// One block per run, the rows in global memory, staged into shared memory a pass
    /// ahead.
    BatchPipelined,
    /// One run over the whole GPU, one cooperative launch.
    Grid,
    /// One run over the whole GPU, one launch per generation.
    Steps,
    /// The host evaluates the objective between the GPU's phases.
    HostCallback,
    /// The GPU's islands: one block per island, migration kernels between launches.
    Islands,
}

impl RunLayout {
    /// `cpu` or `cuda`.
    pub fn backend(self) -> &'static str {
        match self {
            RunLayout::Cpu | RunLayout::CpuIslands | RunLayout::CpuSplit => "cpu",
            _ => "cuda",
        }
    }

    /// Its name in the JSON and the text output.
    pub fn name(self) -> &'static str {
        match self {
            RunLayout::Cpu => "cpu",
            RunLayout::CpuIslands => "cpu_islands",
            RunLayout::CpuSplit => "cpu_split",
            RunLayout::Batch => "batch",
            RunLayout::BatchResident => "batch_resident",
            RunLayout::BatchPipelined => "batch_pipelined",
            RunLayout::Grid => "grid",
            RunLayout::Steps => "steps",
            RunLayout::HostCallback => "host_callback",
            RunLayout::Islands => "islands",
        }
    }
}

/// How a run ended, as an engine knows it: what [`RunResult::ended`] completes.
pub(crate) struct Ending {
    pub best_x: DVector<f64>,
    pub best_f: f64,
    pub generations: u32,
    pub evaluations: u64,
    /// The engine's reason; a best that is not finite overrides it (unless the run was
    /// stopped before its end).
    pub termination: Termination,
    pub elapsed: Duration,
    pub history: Option<Vec<f64>>,
    pub layout: RunLayout,
    pub stream: u32,
}

impl RunResult {
    /// The one way the engines make a result: the search's error, the verified error
    /// ([`verify`]) and [`Termination::NonFinite`] for a best value or point that is not
    /// finite.
    pub(crate) fn ended(job: &crate::job::config::Job, e: Ending) -> RunResult {
        let error = e.best_f - job.objective().reference();
        let (verified_error, errors_disagree) = verify(job, &e.best_x, error);
        let finite = e.best_f.is_finite() && e.best_x.iter().all(|v| v.is_finite());
        let termination = if finite || e.termination == Termination::Stopped {
            e.termination
        } else {
            Termination::NonFinite
        };
        RunResult {
            best_x: e.best_x,
            best_f: e.best_f,
            error,
            verified_error,
            errors_disagree,
            generations: e.generations,
            evaluations: e.evaluations,
            termination,
            elapsed: e.elapsed,
            history: e.history,
            backend: e.layout.backend(),
            layout: e.layout,
            launch_runs: 1,
            seed: job.seed(),
            stream: e.stream,
        }
    }

    /// The result, or [`Error::NonFinite`] when the run ended with a best value or
    /// point that is not finite.
    pub fn ok(self) -> crate::error::Result<RunResult> {
        if self.termination.is_success() {
            return Ok(self);
        }
        let bad = self
            .best_x
            .iter()
            .position(|v| !v.is_finite())
            .map(|j| format!("component {j} of the best point is {}", num(self.best_x[j])));
        let what = match bad {
            Some(b) if self.best_f.is_finite() => b,
            _ => format!("the best value is {}", num(self.best_f)),
        };
        Err(Error::NonFinite {
            what: format!(
                "{what} after {} generations: every individual overflowed or is NaN (the function overflows on this domain: narrow it, or run an f32 job in f64)",
                self.generations
            ),
        })
    }
}

fn ser_vec<S: serde::Serializer>(v: &DVector<f64>, s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(v.iter())
}

fn ser_secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

/// The verified error of a run's best point and whether the search's own `error`
/// disagrees with it: `|error − verified| > tol·max(|error|, |verified|)` with
/// `tol` = 1e-5 in f32 (≈ 80 ulps, beyond what the exact formulas' rounding gives) and
/// 1e-12 in f64. Both engines fill their results through this one function. An
/// objective given as PTX without a CPU function is not evaluated again: its verified
/// error is the search's.
pub fn verify(job: &crate::job::config::Job, best_x: &DVector<f64>, error: f64) -> (f64, bool) {
    // PTX code without a CPU function: nothing here can evaluate it again.
    if !job.objective().has_cpu_code() {
        return (error, false);
    }
    let x: Vec<f64> = best_x.iter().copied().collect();
    // Built-ins with the exact formulas; expressions and CEC functions in f64; callbacks
    // called once more.
    let v = job.objective().evaluate_f64(&x) - job.objective().reference();
    // The relative tolerance, and the terms' underflow: each of D terms may lose up to
    // the smallest subnormal (f32 squares of |x| ≲ 1e-23 are 0).
    let (tol, tiny) = match job.precision() {
        crate::job::precision::Precision::F32 => (1e-5, f32::from_bits(1) as f64),
        crate::job::precision::Precision::F64 => (1e-12, f64::from_bits(1)),
    };
    let floor = 4.0 * tiny * x.len() as f64;
    let disagree = if error.is_finite() && v.is_finite() {
        (error - v).abs() > tol * error.abs().max(v.abs()) + floor
    } else {
        error.to_bits() != v.to_bits()
    };
    (v, disagree)
}

/// Why a run on the GPU ended: the job's own reason when it reached its limit or
/// target, else [`Termination::Stopped`].
pub fn ending(job: &crate::job::config::Job, generations: u32, best_f: f64) -> Termination {
    let reached = job.target_value().is_some_and(|t| best_f <= t);
    if generations >= job.generations() || reached {
        termination(job, generations, best_f)
    } else {
        Termination::Stopped
    }
}

/// Why a run that ended stopped, from how many generations it ran and its best value
/// ([`RunResult::ended`] turns a best that is not finite into
/// [`Termination::NonFinite`]).
pub(crate) fn termination(
    job: &crate::job::config::Job,
    generations: u32,
    best_f: f64,
) -> Termination {
    match job.target_value() {
        Some(t) if best_f <= t => Termination::TargetReached,
        _ if job.budget_from_evaluations() && generations >= job.generations() => {
            Termination::MaxEvaluations
        }
        _ => Termination::MaxGenerations,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::job::config::Job;

    #[test]
    fn a_run_short_of_its_limit_and_target_was_stopped() {
        let job = Job::builder(gpude_device::Function::Sphere, 4)
            .pop(8)
            .generations(50)
            .target(1e-3)
            .build()
            .unwrap();
        assert_eq!(ending(&job, 20, 1.0), Termination::Stopped);
        assert_eq!(ending(&job, 50, 1.0), Termination::MaxGenerations);
        assert_eq!(ending(&job, 20, 1e-4), Termination::TargetReached);
    }
}
