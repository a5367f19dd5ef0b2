//! Host callbacks on the CUDA engine: the DE stages on the GPU, the objective on the
//! host (the device crate's host-callback family, `gpude_device::callback`).
//!
//! One population is spread over the GPU as in the step layout, with one launch per
//! phase. A generation is:
//!
//! 1. a launch that writes every individual's trial (mutation, crossover, bounds: the
//!    kernels' and the CPU engine's arithmetic and draws) into a buffer of `Np` rows;
//! 2. the rows copied to the host and handed to the callback as `Np × D` values,
//!    row-major, in f64 (see [`crate::job::objective`] for the calling convention);
//! 3. the values, rounded to the run's precision, copied back;
//! 4. a launch that selects (a trial replaces its parent when it is better, NaN never is)
//!    and finds the best, as the step kernels do.
//!
//! The initialisation is the same with the initial rows. The values are those of
//! [`Objective::evaluate_rows`], the CPU engine's batch evaluation, so a run gives the
//! CPU engine's bits, whatever the layout asked for (the callback has its own).
//!
//! A callback that panics or returns a wrong number of values stops the run after that
//! batch with [`Error::Objective`](crate::Error::Objective), as on the CPU engine; the
//! device buffers are freed on every path (they are dropped).
//!
//! Under a [`Control`], the host sees every generation (it drives them): the observer is
//! called after each, the stop flag polled before each, and the saver given the state
//! every [`Control::every`] generations, as the CPU engine does.
//!
//! An adaptive strategy's run goes to the adaptive kernels' host phases instead
//! ([`CudaEngine::adaptive_callback`], `cuda/adaptive.rs`): one block, the observer and
//! the stop flag as here, but no saves (the saver is not called), as on the CPU engine,
//! whose checkpoints do not hold an adaptive run's memory and archive.

use super::engine::{CudaEngine, cuda_err};
use super::external::check_objective;
use super::kernels::{GpuReal, de_kernel};
use super::launch::push_params;
use crate::error::{Error, Result};
use crate::job::config::Job;
use crate::job::objective::Objective;
use crate::run::checkpoint::{Checkpoint, Stored};
use crate::run::control::{Control, Flow, Outcome};
use crate::run::result::RunLayout;
use cudarc::driver::{CudaSlice, CudaStream, LaunchConfig};
use gpude_device::abi::StepParams;
use gpude_device::lanes::stride;
use gpude_device::registry::{HOST_INIT_ROWS, HOST_INIT_SELECT, HOST_SELECT, HOST_TRIALS, Layout};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use super::grid::{STATE_DONE, STATE_GEN};

/// The rows of a padded buffer (`np` rows of stride `st`) without the padding.
fn unpadded<T: Copy>(rows: &[T], np: usize, dim: usize, st: usize, out: &mut Vec<T>) {
    out.clear();
    for i in 0..np {
        out.extend_from_slice(&rows[i * st..i * st + dim]);
    }
}

/// The launches and transfers of one run.
struct HostRun<'a, T: GpuReal> {
    job: &'a Job,
    name: String,
    func: cudarc::driver::CudaFunction,
    cfg: LaunchConfig,
    stream: Arc<CudaStream>,
    params: StepParams<T>,
    bu: super::grid::GridBuffers<T>,
    /// `fit` of the kernels: the population's values, then the rows' values.
    fit: CudaSlice<T>,
    /// Host copies: the padded rows, the rows unpadded, their values.
    padded: Vec<T>,
    rows: Vec<T>,
    values: Vec<T>,
}

impl<T: GpuReal> HostRun<'_, T> {
    fn err(&self, what: &str) -> impl FnOnce(cudarc::driver::DriverError) -> Error {
        cuda_err(format!("{}: {what}", self.name))
    }

    /// One launch of phase `phase` (see `gpude_device::registry::HOST_SELECT`).
    fn launch(&mut self, phase: u32) -> Result<()> {
        self.params.init = phase;
        let mut b = self.stream.launch_builder(&self.func);
        push_params(&mut b, &self.params);
        // SAFETY: the parameters are the kernel's (checked against the PTX at build
        // time); the rows hold np × stride values each, `fit` 2·np values, the flags 2·np
        // zeroed words, the partials and scratch cover every block, the state
        // STATE_WORDS words and the history gens + 1 values, as the kernel indexes, and
        // every buffer outlives the launch (they are dropped with `self`, after the
        // stream's next synchronising copy).
        unsafe { b.launch(self.cfg) }.map_err(self.err("launching"))?;
        Ok(())
    }

    /// The rows of `pop_a` (`trials` false) or `pop_b` to the host, evaluated there, and
    /// their values back into `fit` at `np·trials`. False when the callback failed.
    fn evaluate(&mut self, trials: bool) -> Result<bool> {
        let (np, dim) = (self.job.pop() as usize, self.job.dim() as usize);
        let st = stride(self.job.dim()) as usize;
        let src = if trials {
            &self.bu.pop_b
        } else {
            &self.bu.pop_a
        };
        self.stream
            .memcpy_dtoh(src, &mut self.padded)
            .map_err(cuda_err(format!("{}: reading the rows", self.name)))?;
        unpadded(&self.padded, np, dim, st, &mut self.rows);
        let objective: &Objective = self.job.objective();
        objective.evaluate_rows(self.job.formula(), &self.rows, dim, &mut self.values);
        if objective.failed() {
            return Ok(false);
        }
        let at = if trials { np } else { 0 };
        self.stream
            .memcpy_htod(&self.values, &mut self.fit.slice_mut(at..at + np))
            .map_err(cuda_err(format!("{}: writing the values", self.name)))?;
        Ok(true)
    }

    /// The generations done, whether the run is over, and the best value.
    fn state(&self) -> Result<(u32, bool, f64)> {
        let s = self
            .stream
            .clone_dtoh(&self.bu.state)
            .map_err(self.err("reading the state"))?;
        let bf = self
            .stream
            .clone_dtoh(&self.bu.best_f)
            .map_err(self.err("reading the best"))?[0]
            .to_f64();
        Ok((s[STATE_GEN], s[STATE_DONE] != 0, bf))
    }

    /// The run's checkpoint after `g` generations: the population (rows unpadded) and
    /// values, and the history so far.
    fn checkpoint(&mut self, g: u32, elapsed: Duration) -> Result<Checkpoint>
    where
        T: Stored,
    {
        let (np, dim) = (self.job.pop() as usize, self.job.dim() as usize);
        let st = stride(self.job.dim()) as usize;
        let read = |what: &str| cuda_err(format!("{}: {what}", self.name));
        self.stream
            .memcpy_dtoh(&self.bu.pop_a, &mut self.padded)
            .map_err(read("reading the population"))?;
        let mut x = Vec::with_capacity(np * dim);
        unpadded(&self.padded, np, dim, st, &mut x);
        let fit = self
            .stream
            .clone_dtoh(&self.fit.slice(0..np))
            .map_err(read("reading the values"))?;
        let history = match &self.bu.hist {
            Some(h) => {
                let v = self
                    .stream
                    .clone_dtoh(&h.slice(0..=g as usize))
                    .map_err(read("reading the history"))?;
                Some(v.iter().map(|x| x.to_f64()).collect())
            }
            None => None,
        };
        Ok(Checkpoint {
            job: self.job.clone(),
            generation: g,
            state: T::state(x, fit),
            history,
            elapsed,
        })
    }
}

impl CudaEngine {
    /// Runs `job`, whose objective is a host callback, under `control` (see the module
    /// documentation). A failure of the callback is [`Error::Objective`].
    pub(crate) fn callback_run(&self, job: &Job, control: &mut Control) -> Result<Outcome> {
        crate::cuda::adaptive::gpu_check(job)?;
        job.check()?;
        if job.adaptive().is_some() {
            job.stops().unsupported("an adaptive strategy on a host callback on the GPU; the CPU engine runs it with stops")?;
        }
        check_objective(job)?;
        let objective = job.objective();
        objective.reset_failure();
        // An adaptive strategy runs in the adaptive kernels' host phases
        // (`cuda/adaptive.rs`), the others in the host-callback family.
        let r = match (job.precision(), job.adaptive().is_some()) {
            (crate::job::precision::Precision::F32, false) => {
                self.callback_drive::<f32>(job, control)
            }
            (crate::job::precision::Precision::F64, false) => {
                self.callback_drive::<f64>(job, control)
            }
            (crate::job::precision::Precision::F32, true) => {
                self.adaptive_callback::<f32>(job, control)
            }
            (crate::job::precision::Precision::F64, true) => {
                self.adaptive_callback::<f64>(job, control)
            }
        };
        // The callback's failure first: the run stopped because of it.
        objective.take_failure()?;
        r
    }

    pub(super) fn callback_drive<T: GpuReal + Stored>(
        &self,
        job: &Job,
        control: &mut Control,
    ) -> Result<Outcome> {
        let start = Instant::now();
        let (np, dim) = (job.pop() as usize, job.dim());
        let st = stride(dim) as usize;
        let kernel = de_kernel::<T>(Layout::Step, job);
        let name = kernel.name();
        let func = self.function(kernel)?;
        let (threads, nblocks) = self.grid_shape(&func, &name, np, dim, false)?;
        let stream = self.streams[0].clone();
        let t = std::mem::size_of::<T>() as u64;
        // `fit` of 2·np values (the rows' values beside the population's) replaces the
        // buffers' own.
        let bu = self.grid_buffers::<T>(&stream, job, &name, nblocks, 1, 2 * t * np as u64)?;
        let fit = stream
            .alloc_zeros::<T>(2 * np)
            .map_err(cuda_err(format!("{name}: allocating")))?;
        let mut params = bu.step_params(job, &stream);
        params.fit = super::launch::dev(&fit, &stream);
        let mut run = HostRun {
            job,
            name,
            func,
            cfg: LaunchConfig {
                grid_dim: (nblocks as u32, 1, 1),
                block_dim: (threads, 1, 1),
                shared_mem_bytes: 0,
            },
            stream,
            params,
            bu,
            fit,
            padded: vec![T::ZERO; np * st],
            rows: Vec::with_capacity(np * dim as usize),
            values: vec![T::ZERO; np],
        };

        run.launch(HOST_INIT_ROWS)?;
        if !run.evaluate(false)? {
            // The error is the callback's; nothing to select.
            return run.checkpoint(0, start.elapsed()).map(outcome);
        }
        run.launch(HOST_INIT_SELECT)?;
        let (mut g, mut done, bf) = run.state()?;
        let mut stopped = control.observer.is_some_and(|o| o(g, bf) == Flow::Stop);
        while !stopped && !done {
            if control.stop.is_some_and(|s| s.load(Ordering::Relaxed)) {
                break;
            }
            run.launch(HOST_TRIALS)?;
            if !run.evaluate(true)? {
                break;
            }
            run.launch(HOST_SELECT)?;
            let (gn, d, bf) = run.state()?;
            (g, done) = (gn, d);
            if let Some(o) = control.observer {
                stopped = o(g, bf) == Flow::Stop;
            }
            // A convergence stop (looked at on the host, which has the values).
            if !done && job.stops().at(g) && run.checkpoint(g, start.elapsed())?.stop().is_some() {
                break;
            }
            if !stopped
                && !done
                && control.every > 0
                && g.is_multiple_of(control.every)
                && control.save.is_some()
            {
                let c = run.checkpoint(g, start.elapsed())?;
                if let Some(save) = control.save.as_mut() {
                    stopped = save(&c) == Flow::Stop;
                }
            }
        }
        run.checkpoint(g, start.elapsed()).map(outcome)
    }
}

/// The outcome of a run that ended with `checkpoint`, as the CUDA engine reports it.
fn outcome(checkpoint: Checkpoint) -> Outcome {
    Outcome {
        result: super::state::result_of(&checkpoint, RunLayout::HostCallback, 1),
        checkpoint,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn callback_jobs_name_the_host_family_of_their_strategy() {
        use gpude_device::{BoundPolicy, Strategy};
        let o = Objective::callback("f", None, |xs: &[f64], d: usize| {
            xs.chunks(d).map(|x| x[0]).collect()
        })
        .unwrap();
        let base = || Job::builder_for(o.clone(), 5).domain(-1.0, 1.0);
        let thesis = base().build().unwrap();
        assert_eq!(thesis.strategy(), Strategy::Thesis);
        assert_eq!(
            de_kernel::<f32>(Layout::Step, &thesis).name(),
            "de_step_f32_host_thesis"
        );
        let classic = base()
            .strategy(Strategy::Rand1)
            .bounds(BoundPolicy::Clip)
            .build()
            .unwrap();
        assert_eq!(
            de_kernel::<f64>(Layout::Step, &classic).name(),
            "de_step_f64_host"
        );
        let v = (1..64)
            .filter_map(gpude_device::ThesisVariant::from_bits)
            .find(|v| v.changes_trials())
            .unwrap();
        let varied = base().thesis_variant(v).build().unwrap();
        assert_eq!(
            de_kernel::<f64>(Layout::Step, &varied).name(),
            "de_step_f64_host_thesis_variant"
        );
        // Every name is one the registry lists (the build checks the PTX defines it).
        let mut names = Vec::new();
        gpude_device::registry::for_each_host_key(|k| {
            let mut buf = [0u8; gpude_device::registry::KERNEL_NAME_MAX];
            names.push(k.name_into(&mut buf).to_string());
        });
        for j in [&thesis, &classic, &varied] {
            assert!(names.contains(&de_kernel::<f32>(Layout::Step, j).name()));
        }
        // A PTX objective is not a host callback: it runs in the external family.
        let e = gpude_expr::Expr::parse("sum(x^2)").unwrap();
        let code =
            crate::job::ptx_objective::PtxCode::parse(e.ptx(gpude_expr::Precision::F32)).unwrap();
        let ptx = Objective::ptx("sq", None, code).unwrap();
        assert!(!ptx.is_host_callback() && o.is_host_callback());
        let pj = Job::builder_for(ptx, 5)
            .domain(-1.0, 1.0)
            .precision(crate::job::precision::Precision::F32)
            .build()
            .unwrap();
        assert_eq!(
            de_kernel::<f32>(Layout::Step, &pj).name(),
            "de_step_f32_external_thesis"
        );
    }

    #[test]
    fn unpadded_rows_drop_the_padding_only() {
        let (np, dim, st) = (3, 5, 8);
        let padded: Vec<u32> = (0..(np * st) as u32).collect();
        let mut out = vec![99];
        unpadded(&padded, np, dim, st, &mut out);
        assert_eq!(out.len(), np * dim);
        for i in 0..np {
            for j in 0..dim {
                assert_eq!(out[i * dim + j], (i * st + j) as u32);
            }
        }
    }
}
