//! The engine's runs of whole jobs: each in the layout its mode and objective ask for.

use super::batch::{Pending, compatible};
use super::engine::{CudaEngine, FinalPopulation, Mode};
use super::external::check_objective;
use crate::error::Result;
use crate::job::config::Job;
use crate::run::result::RunResult;
use gpude_device::lanes::group_width;

impl CudaEngine {
    /// Runs one job; `mode` picks the layout.
    pub fn run(&self, job: &Job, mode: Mode) -> Result<RunResult> {
        if job.objective().is_host_callback() {
            // Its own layout, whatever `mode` says (see `callback.rs`).
            return self
                .callback_run(job, &mut crate::run::control::Control::default())
                .map(|o| o.result);
        }
        job.check()?;
        if crate::cuda::adaptive::in_adaptive_kernels(job) {
            return Ok(self.run_adaptive(&[job], mode)?.remove(0).0);
        }
        let mode = match mode {
            Mode::Auto => self.auto_mode(job),
            m => m,
        };
        check_objective(job)?;
        match mode {
            Mode::Grid => match job.precision() {
                crate::job::precision::Precision::F32 => self.grid::<f32>(job, false).map(|r| r.0),
                crate::job::precision::Precision::F64 => self.grid::<f64>(job, false).map(|r| r.0),
            },
            Mode::Steps => match job.precision() {
                crate::job::precision::Precision::F32 => self.steps::<f32>(job, false).map(|r| r.0),
                crate::job::precision::Precision::F64 => self.steps::<f64>(job, false).map(|r| r.0),
            },
            _ => Ok(self.run_batch(std::slice::from_ref(job))?.remove(0)),
        }
    }

    /// Runs one job and reads its final population back (for parity checks).
    pub fn run_with_population(
        &self,
        job: &Job,
        mode: Mode,
    ) -> Result<(RunResult, FinalPopulation)> {
        if job.objective().is_host_callback() {
            let o = self.callback_run(job, &mut crate::run::control::Control::default())?;
            let (x, fit) = match o.checkpoint.state {
                crate::run::checkpoint::State::F32 { x, fit } => (
                    x.iter().map(|&v| v as f64).collect(),
                    fit.iter().map(|&v| v as f64).collect(),
                ),
                crate::run::checkpoint::State::F64 { x, fit } => (x, fit),
            };
            return Ok((o.result, FinalPopulation { x, fit }));
        }
        job.check()?;
        if crate::cuda::adaptive::in_adaptive_kernels(job) {
            return Ok(self.run_adaptive(&[job], mode)?.remove(0));
        }
        let mode = match mode {
            Mode::Auto => self.auto_mode(job),
            m => m,
        };
        check_objective(job)?;
        match (mode, job.precision()) {
            (Mode::Grid, crate::job::precision::Precision::F32) => self
                .grid::<f32>(job, true)
                .map(|(r, p)| (r, p.expect("asked for"))),
            (Mode::Grid, crate::job::precision::Precision::F64) => self
                .grid::<f64>(job, true)
                .map(|(r, p)| (r, p.expect("asked for"))),
            (Mode::Steps, crate::job::precision::Precision::F32) => self
                .steps::<f32>(job, true)
                .map(|(r, p)| (r, p.expect("asked for"))),
            (Mode::Steps, crate::job::precision::Precision::F64) => self
                .steps::<f64>(job, true)
                .map(|(r, p)| (r, p.expect("asked for"))),
            (_, crate::job::precision::Precision::F32) => {
                let l = self.launch_batch::<f32>(&[job], self.streams[0].clone())?;
                let pop = l.population(0, job)?;
                Ok((l.finish(&[job])?.remove(0), pop))
            }
            (_, crate::job::precision::Precision::F64) => {
                let l = self.launch_batch::<f64>(&[job], self.streams[0].clone())?;
                let pop = l.population(0, job)?;
                Ok((l.finish(&[job])?.remove(0), pop))
            }
        }
    }

    /// The layout `auto` picks: a single population that one block cannot serve well
    /// (more individuals than a few warps' worth per thread group) spreads over the GPU.
    pub fn auto_mode(&self, job: &Job) -> Mode {
        let groups_per_block = 1024 / group_width(job.dim());
        if job.pop() > 8 * groups_per_block {
            Mode::Grid
        } else {
            Mode::Batch
        }
    }

    /// Runs many jobs: compatible ones (equal but for seed and stream) share a launch,
    /// one block per job; launches are spread over the streams. One result per job, in
    /// order.
    pub fn run_batch(&self, jobs: &[Job]) -> Result<Vec<RunResult>> {
        if jobs.iter().any(|j| {
            crate::cuda::adaptive::in_adaptive_kernels(j) || j.objective().is_host_callback()
        }) {
            // Host callbacks run one after the other (as on the CPU engine), adaptive
            // jobs go to their own kernels, the other jobs in their launches.
            Job::check_all(jobs)?;
            let (cb, rest): (Vec<usize>, Vec<usize>) =
                (0..jobs.len()).partition(|&k| jobs[k].objective().is_host_callback());
            let (adaptive, plain): (Vec<usize>, Vec<usize>) = rest
                .into_iter()
                .partition(|&k| crate::cuda::adaptive::in_adaptive_kernels(&jobs[k]));
            let mut results: Vec<Option<RunResult>> = vec![None; jobs.len()];
            if !adaptive.is_empty() {
                let refs: Vec<&Job> = adaptive.iter().map(|&k| &jobs[k]).collect();
                for (&k, (r, _)) in adaptive.iter().zip(self.run_adaptive(&refs, Mode::Batch)?) {
                    results[k] = Some(r);
                }
            }
            if !plain.is_empty() {
                let others: Vec<Job> = plain.iter().map(|&k| jobs[k].clone()).collect();
                for (&k, r) in plain.iter().zip(self.run_batch(&others)?) {
                    results[k] = Some(r);
                }
            }
            for k in cb {
                results[k] = Some(self.run(&jobs[k], Mode::Auto)?);
            }
            return Ok(results
                .into_iter()
                .map(|r| r.expect("every job ran"))
                .collect());
        }
        for job in jobs {
            check_objective(job)?;
        }
        Job::check_all(jobs)?;
        let mut groups: Vec<Vec<usize>> = Vec::new();
        for (k, job) in jobs.iter().enumerate() {
            match groups.iter_mut().find(|g| compatible(&jobs[g[0]], job)) {
                Some(g) => g.push(k),
                None => groups.push(vec![k]),
            }
        }
        let mut results: Vec<Option<RunResult>> = vec![None; jobs.len()];
        let mut pending = Vec::new();
        for (n, group) in groups.iter().enumerate() {
            let stream = self.streams[n % self.streams.len()].clone();
            let first = &jobs[group[0]];
            let members: Vec<&Job> = group.iter().map(|&k| &jobs[k]).collect();
            let launch = match first.precision() {
                crate::job::precision::Precision::F32 => {
                    Pending::F32(self.launch_batch::<f32>(&members, stream)?)
                }
                crate::job::precision::Precision::F64 => {
                    Pending::F64(self.launch_batch::<f64>(&members, stream)?)
                }
            };
            pending.push((group.clone(), launch));
        }
        for (group, launch) in pending {
            let members: Vec<&Job> = group.iter().map(|&k| &jobs[k]).collect();
            let rs = match launch {
                Pending::F32(l) => l.finish(&members)?,
                Pending::F64(l) => l.finish(&members)?,
            };
            for (k, r) in group.into_iter().zip(rs) {
                results[k] = Some(r);
            }
        }
        Ok(results
            .into_iter()
            .map(|r| r.expect("every job ran"))
            .collect())
    }
}
