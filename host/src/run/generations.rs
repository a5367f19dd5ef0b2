//! The generation loop of a run that the host steps a generation at a time: every
//! strategy of the CPU engine (the classic ones, the adaptive ones, the split by
//! dimension) runs in this one loop, which watches, stops and saves it as its
//! [`Control`] says, and ends it where the job's convergence stops fire
//! ([`crate::run::stops`]).

use crate::job::config::Job;
use crate::run::checkpoint::{Checkpoint, State};
use crate::run::control::{Control, Flow};
use crate::run::stops::stop_of;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// A run between two generations, stepped by the host.
pub trait Generations {
    /// The best value of the population now.
    fn best(&self) -> f64;
    /// Runs generation `g` (from 1). False, having done nothing, when the run cannot go
    /// on (an adaptive run whose evaluation budget is spent).
    fn step(&mut self, g: u32) -> bool;
    /// The state to save between generations; `None` (the default) for a run that is
    /// not saved on the way.
    fn state(&self) -> Option<State> {
        None
    }
    /// The population's values now, in f64 and in the population's order (what the
    /// convergence stops read); empty (the default) for a run that does not give them.
    fn values(&self) -> Vec<f64> {
        Vec::new()
    }
}

/// Does a convergence stop of `job` end `run` after generation `g`?
fn stops_at<G: Generations>(job: &Job, run: &G, g: u32, history: Option<&[f64]>) -> bool {
    job.stops().at(g) && stop_of(job, g, &run.values(), history).is_some()
}

/// Where the loop left a run: the generations done and the history.
pub struct Stepped {
    pub generation: u32,
    pub history: Option<Vec<f64>>,
}

/// Runs `run` of `job` from generation `g0` (its history so far in `history`, `before`
/// spent before `start`) until the job's generation limit or target, a failure of its
/// objective, or a stop: the observer's (shown generation `g0` and every generation
/// after it), the stop flag's (polled before every generation), the saver's (given
/// the state every [`Control::every`] generations, while the run has more to go) or
/// one of the job's convergence stops (looked at after the observer, before the saver:
/// a run that stops there is not saved there; a run resumed where one fired does not
/// go on).
pub fn drive<G: Generations>(
    job: &Job,
    run: &mut G,
    g0: u32,
    mut history: Option<Vec<f64>>,
    start: Instant,
    before: Duration,
    control: &mut Control,
) -> Stepped {
    let target = job.target_value();
    let reached = |f: f64| target.is_some_and(|t| f <= t);
    let mut stopped = control
        .observer
        .is_some_and(|o| o(g0, run.best()) == Flow::Stop)
        || stops_at(job, run, g0, history.as_deref());
    let mut g = g0;
    while !stopped && g < job.generations() && !reached(run.best()) {
        if control.stop.is_some_and(|s| s.load(Ordering::Relaxed)) || !run.step(g + 1) {
            break;
        }
        g += 1;
        if job.objective().failed() {
            break;
        }
        let bf = run.best();
        if let Some(h) = history.as_mut() {
            h.push(bf);
        }
        if let Some(o) = control.observer {
            stopped = o(g, bf) == Flow::Stop;
        }
        let more = g < job.generations() && !reached(bf);
        if stops_at(job, run, g, history.as_deref()) {
            break;
        }
        if !stopped
            && more
            && control.every > 0
            && g.is_multiple_of(control.every)
            && let Some(save) = control.save.as_mut()
            && let Some(state) = run.state()
        {
            let c = Checkpoint {
                job: job.clone(),
                generation: g,
                state,
                history: history.clone(),
                elapsed: before + start.elapsed(),
            };
            stopped = save(&c) == Flow::Stop;
        }
    }
    Stepped {
        generation: g,
        history,
    }
}
