//! The state of a run under control as it moves between host and device: a saved
//! population uploaded where a run goes on from it, a running one's downloaded into a
//! checkpoint in the CPU engine's format (either engine goes on from it with the same
//! bits).

use super::engine::FinalPopulation;
use super::kernels::GpuReal;
use crate::error::{Error, Result};
use crate::job::config::Job;
use crate::run::checkpoint::{Checkpoint, Entry, State, Stored};
use crate::run::result::{RunLayout, RunResult};
use std::time::Duration;

/// Rows of a double-buffered population (`np` rows of stride `st`, `dim` used), each
/// from the buffer its flag names, as one row-major state in the job's precision.
pub fn gather_state<T: Stored>(
    a: &[T],
    b: &[T],
    flags: &[u32],
    fit: Vec<T>,
    dim: usize,
    st: usize,
) -> State {
    let mut x = Vec::with_capacity(flags.len() * dim);
    for (i, &f) in flags.iter().enumerate() {
        let src = if f == 0 { a } else { b };
        x.extend_from_slice(&src[i * st..i * st + dim]);
    }
    T::state(x, fit)
}

/// The rows of a state padded to the kernels' stride (for upload into buffer a, with
/// every flag 0), and its values.
pub fn padded_state<T: Stored>(state: &State, dim: usize, st: usize) -> Result<(Vec<T>, Vec<T>)> {
    let (x, fit) = T::parts(state.clone()).ok_or_else(|| Error::Input {
        what: "checkpoint".into(),
        message: format!("the population is not in {}", T::NAME),
    })?;
    let np = fit.len();
    let mut rows = vec![T::ZERO; np * st];
    for i in 0..np {
        rows[i * st..i * st + dim].copy_from_slice(&x[i * dim..(i + 1) * dim]);
    }
    Ok((rows, fit))
}

/// A run's history: what it had before this launch (`before`: generations 0 ..= g0)
/// and what the launch recorded (`launch`: generations g0 ..= g, its first value the
/// same best as `before`'s last).
pub fn join_history(before: Option<Vec<f64>>, launch: &[f64]) -> Vec<f64> {
    match before {
        Some(mut h) if !h.is_empty() => {
            h.extend_from_slice(launch.get(1..).unwrap_or(&[]));
            h
        }
        _ => launch.to_vec(),
    }
}

/// The starting point of a run of a list: its job, the generations done, its state
/// (none for a fresh run) and its history and time so far.
pub struct Start<'e> {
    pub job: &'e Job,
    pub generation: u32,
    pub state: Option<&'e State>,
    pub history: Option<&'e [f64]>,
    pub elapsed: Duration,
}

impl<'e> Start<'e> {
    pub fn of(e: &'e Entry) -> Start<'e> {
        match e {
            Entry::Pending(job) => Start {
                job,
                generation: 0,
                state: None,
                history: None,
                elapsed: Duration::ZERO,
            },
            Entry::Started(c) => Start {
                job: &c.job,
                generation: c.generation,
                state: Some(&c.state),
                history: c.history.as_deref(),
                elapsed: c.elapsed,
            },
        }
    }

    /// Does the run start from a saved population (rather than the initialisation)?
    pub fn loaded(&self) -> bool {
        self.state.is_some() && self.generation > 0
    }
}

/// The checkpoint of a run downloaded from the GPU.
pub fn checkpoint_of(
    job: &Job,
    generation: u32,
    state: State,
    history: Option<Vec<f64>>,
    elapsed: Duration,
) -> Checkpoint {
    Checkpoint {
        job: job.clone(),
        generation,
        state,
        history,
        elapsed,
    }
}

/// The result of a checkpoint as the CUDA engine reports it: run in `layout`, its
/// launch shared by `launch_runs` runs.
pub fn result_of(c: &Checkpoint, layout: RunLayout, launch_runs: u32) -> RunResult {
    let mut r = c.result();
    r.backend = layout.backend();
    r.layout = layout;
    r.launch_runs = launch_runs;
    r
}

/// A precision the CUDA engine runs and a checkpoint stores.
pub trait Controlled: GpuReal + Stored {}

impl Controlled for f32 {}

impl Controlled for f64 {}

/// Refuses to download `bytes` of state when the host has less available.
pub(crate) fn check_download(bytes: usize) -> Result<()> {
    crate::run::memory::check_memory(bytes as u64)
}

/// Rows of a double-buffered population, each from the buffer its flag names.
pub(crate) fn gather<T: GpuReal>(
    a: &[T],
    b: &[T],
    flags: &[u32],
    fit: &[T],
    dim: usize,
    st: usize,
) -> FinalPopulation {
    let mut x = Vec::with_capacity(flags.len() * dim);
    for (i, &f) in flags.iter().enumerate() {
        let src = if f == 0 { a } else { b };
        x.extend(src[i * st..i * st + dim].iter().map(|v| v.to_f64()));
    }
    FinalPopulation {
        x,
        fit: fit.iter().map(|v| v.to_f64()).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gathered_and_padded_states_are_inverse() {
        let (dim, st) = (3usize, 4usize);
        let a = [1.0f32, 2.0, 3.0, 0.0, 4.0, 5.0, 6.0, 0.0];
        let b = [9.0f32, 9.5, 9.75, 0.0, 7.0, 8.0, 9.0, 0.0];
        let s = gather_state(&a, &b, &[1, 0], vec![0.5, 0.25], dim, st);
        assert_eq!(
            s,
            State::F32 {
                x: vec![9.0, 9.5, 9.75, 4.0, 5.0, 6.0],
                fit: vec![0.5, 0.25]
            }
        );
        let (rows, fit) = padded_state::<f32>(&s, dim, st).unwrap();
        assert_eq!(rows, [9.0, 9.5, 9.75, 0.0, 4.0, 5.0, 6.0, 0.0]);
        assert_eq!(fit, [0.5, 0.25]);
        assert!(padded_state::<f64>(&s, dim, st).is_err(), "wrong precision");
    }

    #[test]
    fn histories_join_without_repeating_the_start() {
        assert_eq!(
            join_history(Some(vec![5.0, 4.0, 3.0]), &[3.0, 2.0, 1.0]),
            [5.0, 4.0, 3.0, 2.0, 1.0]
        );
        assert_eq!(join_history(None, &[3.0, 2.0]), [3.0, 2.0]);
    }
}
