//! How a run is watched, stopped and saved on the way: one [`Control`] for a run, one
//! [`Watch`] for a list of runs. Both engines take them: the CPU engine looks between
//! generations, the GPU's persistent kernels report every [`Reporting::every`]
//! generations through a control block (`crate::cuda::control`).

use crate::error::{Error, Result};
use crate::run::checkpoint::{Checkpoint, Entry, Part};
use crate::run::result::RunResult;
use gpude_device::control;
use std::sync::atomic::AtomicBool;

/// What an observer decides after a generation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[must_use]
pub enum Flow {
    /// Go on.
    Continue,
    /// Stop the run here: it ends with [`crate::Termination::Stopped`] and its state so
    /// far (unless it had ended anyway).
    Stop,
}

/// Something that watches a run: called after the initialisation (generation 0, or the
/// generation a resumed run starts from) and after every generation with the best value
/// so far; [`Flow::Stop`] ends the run at that generation.
pub type Observer<'a> = &'a (dyn Fn(u32, f64) -> Flow + Sync);

/// Receives the run's state every [`Control::every`] generations; [`Flow::Stop`] ends
/// the run there.
pub type Saver<'a> = &'a mut dyn FnMut(&Checkpoint) -> Flow;

/// How a run is watched, stopped and saved on the way. `Control::default()` does none
/// of it.
#[derive(Default)]
pub struct Control<'a> {
    pub observer: Option<Observer<'a>>,
    /// Polled before every generation: once set, the run stops there.
    pub stop: Option<&'a AtomicBool>,
    /// Give `save` the state every this many generations (0: never). The state after
    /// the last generation is in the [`Outcome`], not given to `save`.
    pub every: u32,
    pub save: Option<Saver<'a>>,
}

/// How a run ended: its result and its final state (from which it can go on).
#[derive(Clone, Debug)]
pub struct Outcome {
    pub result: RunResult,
    pub checkpoint: Checkpoint,
}

/// How often a kernel under control reports, and whether it waits for the host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Reporting {
    /// Report (and look for a stop) every this many generations, 1 ..= 2^31 − 1. A stop
    /// takes effect at the next multiple of it (or at the generation the launch
    /// started from); the observer sees those generations and the last one.
    pub every: u32,
    /// Wait at every report until the host has answered: the observer sees each
    /// reported generation, and its [`Flow::Stop`] ends the run exactly there, at the
    /// cost of a round trip to the host per report.
    pub exact: bool,
}

impl Default for Reporting {
    /// Every 32 generations, without waiting: a few stores and one load over the bus per
    /// 32 generations of each population.
    fn default() -> Self {
        Reporting {
            every: 32,
            exact: false,
        }
    }
}

impl Reporting {
    /// Refuses an interval of 0 or above [`control::MAX_EVERY`].
    pub fn check(&self) -> Result<()> {
        if self.every == 0 || self.every > control::MAX_EVERY {
            return Err(Error::invalid(
                "report interval",
                self.every,
                format!("1 ..= {} generations", control::MAX_EVERY),
            ));
        }
        Ok(())
    }

    /// The kernels' `report` argument.
    pub fn arg(&self) -> u32 {
        control::report(self.every, self.exact)
    }
}

/// An observer of several runs: `(run, generation, best) -> Flow`, where `run` is the
/// run's index in the list given. [`Flow::Stop`] stops that run.
pub type RunsObserver<'a> = &'a (dyn Fn(usize, u32, f64) -> Flow + Sync);

/// Receives the state of every run of the list, in order, every [`Watch::every`]
/// generations; [`Flow::Stop`] stops them all there.
pub type RunsSaver<'a> = &'a mut dyn FnMut(&[Part]) -> Flow;

/// How a list of runs is watched, stopped and saved on the way: the several-run form
/// of [`Control`].
#[derive(Default)]
pub struct Watch<'a> {
    pub observer: Option<RunsObserver<'a>>,
    /// Once set, every run stops at its next reported generation.
    pub stop: Option<&'a AtomicBool>,
    /// Give `save` the state of the runs every this many generations (0: never).
    pub every: u32,
    pub save: Option<RunsSaver<'a>>,
    pub reporting: Reporting,
    /// Download the final state of the runs that ended too (not only of those that
    /// were stopped), so that each comes back as [`Entry::Started`].
    pub keep: bool,
}

/// What became of one run of a list: its result (none when a stop came before it
/// started) and its entry (its state when it was stopped or `keep` asked for it, else
/// its job, from which a rerun gives the same bits).
#[derive(Clone, Debug)]
pub struct Ran {
    pub result: Option<RunResult>,
    pub entry: Entry,
}

/// Checks what an engine runs under a watch: every job savable when anything is
/// saved, every started run's parts, and the reporting.
pub fn check_watch(entries: &[Entry], watch: &Watch) -> Result<()> {
    watch.reporting.check()?;
    if watch.save.is_some() || watch.keep {
        for e in entries {
            crate::run::checkpoint::savable(e.job())?;
        }
    }
    for e in entries {
        if let Entry::Started(c) = e {
            c.check()?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn report_intervals_out_of_range_are_refused() {
        for every in [0, control::MAX_EVERY + 1] {
            let e = Reporting {
                every,
                exact: false,
            }
            .check()
            .unwrap_err();
            assert!(e.to_string().contains("report interval"), "{e}");
        }
    }
}
