//! The whole-GPU layouts: one population over every multiprocessor, in one cooperative
//! launch for the run (a grid barrier between generations) or one launch per
//! generation (the step layout).

use super::engine::{CudaEngine, FinalPopulation, cuda_err};
use super::kernels::{GpuReal, de_kernel};
use super::launch::{dev, dev_opt, padded, push_params, run_params};
use super::state::{Controlled, Start, check_download, gather, gather_state, padded_state};
use crate::error::{Error, Result};
use crate::job::config::Job;
use crate::run::checkpoint::State;
use crate::run::result::ending;
use crate::run::result::{Ending, RunLayout, RunResult};
use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, LaunchConfig};
use gpude_device::abi::{GridParams, StepParams};
use gpude_device::lanes::{group_width, stride};
use gpude_device::registry::Layout;
use nalgebra::DVector;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Words of the grid kernels' state (see the device crate's `STATE_*`).
pub(crate) const STATE_GEN: usize = 0;

pub(crate) const STATE_DONE: usize = 2;

pub(crate) const STATE_BEST: usize = 3;

pub(crate) const STATE_WORDS: usize = 4;

impl CudaEngine {
    /// The buffers of a whole-GPU run, after checking they fit: the padded bounds, both
    /// population buffers, `2·np` flags, values, `planes` planes of per-block partials,
    /// per-block scratch, the state words, the best value and the optional history.
    /// `extra` bytes of the caller's own are counted in the memory check.
    pub(super) fn grid_buffers<T: GpuReal>(
        &self,
        stream: &Arc<CudaStream>,
        job: &Job,
        name: &str,
        nblocks: usize,
        planes: usize,
        extra: u64,
    ) -> Result<GridBuffers<T>> {
        let st = stride(job.dim()) as usize;
        let np = job.pop() as usize;
        let hist_len = if job.history() {
            job.generations() as usize + 1
        } else {
            0
        };
        let t = std::mem::size_of::<T>() as u64;
        let needed = t
            * (2 * np * st + np + nblocks * (32 + planes) + 2 * st + hist_len + 1) as u64
            + 4 * (2 * np + (32 + planes) * nblocks + STATE_WORDS) as u64
            + extra;
        self.check_memory(needed)?;
        let err = |what: &str| cuda_err(format!("{name}: {what}"));
        let alloc = |n: usize| stream.alloc_zeros::<T>(n.max(1)).map_err(err("allocating"));
        let allocu = |n: usize| {
            stream
                .alloc_zeros::<u32>(n.max(1))
                .map_err(err("allocating"))
        };
        Ok(GridBuffers {
            lo: stream
                .clone_htod(&padded::<T>(job.lower(), st))
                .map_err(err("uploading"))?,
            hi: stream
                .clone_htod(&padded::<T>(job.upper(), st))
                .map_err(err("uploading"))?,
            pop_a: alloc(np * st)?,
            pop_b: alloc(np * st)?,
            flags: allocu(2 * np)?,
            fit: alloc(np)?,
            part_f: alloc(planes * nblocks)?,
            part_i: allocu(planes * nblocks)?,
            scratch_f: alloc(32 * nblocks)?,
            scratch_i: allocu(32 * nblocks)?,
            state: allocu(STATE_WORDS)?,
            best_f: alloc(1)?,
            hist: if hist_len > 0 {
                Some(alloc(hist_len)?)
            } else {
                None
            },
        })
    }

    /// The launch shape of a whole-GPU kernel for `np` individuals of dimension `dim`:
    /// threads per block (at most 256) and blocks (no more than the groups need, nor than
    /// fit on the GPU at once). With `resident`, a kernel no block of which fits is an
    /// error (the grid barrier needs every block resident); without, one block per
    /// multiprocessor is assumed.
    pub(super) fn grid_shape(
        &self,
        func: &CudaFunction,
        name: &str,
        np: usize,
        dim: u32,
        resident: bool,
    ) -> Result<(u32, usize)> {
        let g = group_width(dim);
        let threads = self.max_threads(func, name)?.min(256);
        let most = if resident {
            self.resident_blocks(func, name, threads)?
        } else {
            self.per_sm(func, name, threads)?.max(1) * self.sm_count
        };
        let groups_needed = (np as u32).div_ceil(threads / g);
        let nblocks = groups_needed.min(most).max(1) as usize;
        Ok((threads, nblocks))
    }

    /// How many blocks of `threads` threads of `func` a multiprocessor holds at once.
    pub(super) fn per_sm(&self, func: &CudaFunction, name: &str, threads: u32) -> Result<u32> {
        func.occupancy_max_active_blocks_per_multiprocessor(threads, 0, None)
            .map_err(cuda_err(format!("{name}: occupancy")))
    }

    /// The most blocks of `threads` threads of `func` that are resident on the GPU at
    /// once (what a cooperative launch may have); an error when none fits.
    pub(crate) fn resident_blocks(
        &self,
        func: &CudaFunction,
        name: &str,
        threads: u32,
    ) -> Result<u32> {
        let per_sm = self.per_sm(func, name, threads)?;
        if per_sm == 0 {
            return Err(Error::Cuda {
                context: name.to_string(),
                message: format!("no block of {threads} threads fits on a multiprocessor"),
            });
        }
        Ok(per_sm * self.sm_count)
    }

    /// The step kernel, its launch shape, buffers and parameters for a whole-GPU run of
    /// `job` with one launch per generation, ready for the initialisation.
    pub(crate) fn step_run<T: GpuReal>(&self, job: &Job) -> Result<StepRun<T>> {
        let dim = job.dim();
        let np = job.pop() as usize;
        let kernel = de_kernel::<T>(Layout::Step, job);
        let name = kernel.name();
        let func = self.job_function::<T>(kernel, job)?;
        let (threads, nblocks) = self.grid_shape(&func, &name, np, dim, false)?;
        let stream = self.streams[0].clone();
        let bu = self.grid_buffers::<T>(&stream, job, &name, nblocks, 1, 0)?;
        let params = bu.step_params(job, &stream);
        Ok(StepRun {
            cfg: LaunchConfig {
                grid_dim: (nblocks as u32, 1, 1),
                block_dim: (threads, 1, 1),
                shared_mem_bytes: 0,
            },
            func,
            name,
            params,
            stream,
            bu,
        })
    }

    /// One grid-wide population, one launch of the step kernel per generation.
    pub(super) fn steps<T: GpuReal>(
        &self,
        job: &Job,
        keep: bool,
    ) -> Result<(RunResult, Option<FinalPopulation>)> {
        let gens = job.generations();
        let mut run = self.step_run::<T>(job)?;
        let start = Instant::now();
        let check_every = 64u32;
        let mut launched = 0u32;
        while launched <= gens {
            run.launch(launched == 0)?;
            launched += 1;
            if job.target().is_some()
                && launched.is_multiple_of(check_every)
                && run.state()?[STATE_DONE] != 0
            {
                break;
            }
        }
        let s = run.state()?;
        let elapsed = start.elapsed();
        run.bu.outcome(
            &run.stream,
            job,
            &run.name,
            &s,
            Took {
                elapsed,
                layout: RunLayout::Steps,
            },
            ReadBack {
                history: true,
                population: keep,
            },
        )
    }

    /// The cooperative kernel, its launch shape, buffers and parameters for a whole-GPU
    /// run of `job` in one launch, ready for the initialisation (the state's generation
    /// 0).
    pub(crate) fn grid_run<T: GpuReal>(&self, job: &Job) -> Result<GridRun<T>> {
        let dim = job.dim();
        let np = job.pop() as usize;
        let kernel = de_kernel::<T>(Layout::Grid, job);
        let name = kernel.name();
        let func = self.job_function::<T>(kernel, job)?;
        // Every block must be resident at once (the grid barrier waits for all of them).
        let (threads, nblocks) = self.grid_shape(&func, &name, np, dim, true)?;
        let stream = self.streams[0].clone();
        let bu = self.grid_buffers::<T>(&stream, job, &name, nblocks, 2, 8)?;
        let sync = stream
            .alloc_zeros::<u64>(gpude_device::abi::GRID_SYNC_WORDS)
            .map_err(cuda_err(format!("{name}: allocating")))?;
        let params = bu.grid_params(job, &stream, &sync);
        Ok(GridRun {
            cfg: LaunchConfig {
                grid_dim: (nblocks as u32, 1, 1),
                block_dim: (threads, 1, 1),
                shared_mem_bytes: 0,
            },
            func,
            name,
            params,
            stream,
            bu,
            sync,
        })
    }

    /// One grid-wide population, the whole run in one cooperative launch.
    pub(super) fn grid<T: GpuReal>(
        &self,
        job: &Job,
        keep: bool,
    ) -> Result<(RunResult, Option<FinalPopulation>)> {
        let mut run = self.grid_run::<T>(job)?;
        let start = Instant::now();
        run.launch(job.generations(), 0, 0)?;
        let s = run.state()?;
        let elapsed = start.elapsed();
        run.bu.outcome(
            &run.stream,
            job,
            &run.name,
            &s,
            Took {
                elapsed,
                layout: RunLayout::Grid,
            },
            ReadBack {
                history: true,
                population: keep,
            },
        )
    }
}

/// A whole-GPU run in one cooperative launch (or several: each goes on from the
/// generation the state holds), with its buffers and parameters.
pub(crate) struct GridRun<T: GpuReal> {
    pub(crate) stream: Arc<CudaStream>,
    pub(crate) name: String,
    func: CudaFunction,
    cfg: LaunchConfig,
    params: GridParams<T>,
    pub(crate) bu: GridBuffers<T>,
    /// The grid barrier's counter and the best slots, zeroed before each launch.
    sync: CudaSlice<u64>,
}

impl<T: GpuReal> GridRun<T> {
    /// Launches the run from the generation in the state's `STATE_GEN` word (0: the
    /// initialisation) to `end`, under the control block at device address `ctl` (0:
    /// none) with the `report` argument of [`gpude_device::control::report`].
    pub(crate) fn launch(&mut self, end: u32, ctl: u64, report: u32) -> Result<()> {
        let ctx = |what: &str| format!("{}: {what}", self.name);
        self.stream
            .memset_zeros(&mut self.sync)
            .map_err(cuda_err(ctx("clearing the barrier")))?;
        self.params.run.gens = end;
        self.params.ctl = ctl as *mut u64;
        self.params.report = report;
        let mut b = self.stream.launch_builder(&self.func);
        push_params(&mut b, &self.params);
        // SAFETY: the parameters are the kernel's (checked against the PTX at build
        // time), and `sync` and the buffers live as long as `self`; flags hold 2·np
        // words, the partials 2·nblocks, the state STATE_WORDS
        // words and the history gens + 1 values (end ≤ gens), as the kernel indexes;
        // `ctl` is 0 or a mapped control block of one slot that outlives the launch; the
        // cooperative launch refuses a grid whose blocks cannot all be resident, which
        // the grid barrier needs (nblocks ≤ occupancy × multiprocessors).
        unsafe { b.launch_cooperative(self.cfg) }
            .map_err(cuda_err(ctx("launching (cooperative)")))?;
        Ok(())
    }

    /// The state words (waits for the launch).
    pub(crate) fn state(&self) -> Result<Vec<u32>> {
        self.stream
            .clone_dtoh(&self.bu.state)
            .map_err(cuda_err(format!("{}: running", self.name)))
    }
}

/// A whole-GPU run with one launch per generation, with its buffers and parameters.
pub(crate) struct StepRun<T: GpuReal> {
    pub(crate) stream: Arc<CudaStream>,
    pub(crate) name: String,
    func: CudaFunction,
    cfg: LaunchConfig,
    params: StepParams<T>,
    pub(crate) bu: GridBuffers<T>,
}

impl<T: GpuReal> StepRun<T> {
    /// Launches the initialisation (`init`) or the generation after the one in the
    /// state's `STATE_GEN` word (none once the state says done).
    pub(crate) fn launch(&mut self, init: bool) -> Result<()> {
        self.params.init = init as u32;
        let mut b = self.stream.launch_builder(&self.func);
        push_params(&mut b, &self.params);
        // SAFETY: the parameters are the kernel's (checked against the PTX at build
        // time); flags hold 2·np words, the partials and scratch cover every block, the
        // state STATE_WORDS words and the history gens + 1 values, as the kernel
        // indexes, and the buffers live as long as `self`.
        unsafe { b.launch(self.cfg) }.map_err(cuda_err(format!("{}: launching", self.name)))?;
        Ok(())
    }

    /// The state words (waits for the launches).
    pub(crate) fn state(&self) -> Result<Vec<u32>> {
        self.stream
            .clone_dtoh(&self.bu.state)
            .map_err(cuda_err(format!("{}: reading state", self.name)))
    }
}

/// The device buffers of a whole-GPU run (see `CudaEngine::grid_buffers`).
pub(crate) struct GridBuffers<T: GpuReal> {
    lo: CudaSlice<T>,
    hi: CudaSlice<T>,
    pub(crate) pop_a: CudaSlice<T>,
    pub(crate) pop_b: CudaSlice<T>,
    pub(crate) flags: CudaSlice<u32>,
    pub(crate) fit: CudaSlice<T>,
    part_f: CudaSlice<T>,
    part_i: CudaSlice<u32>,
    scratch_f: CudaSlice<T>,
    scratch_i: CudaSlice<u32>,
    pub(crate) state: CudaSlice<u32>,
    pub(crate) best_f: CudaSlice<T>,
    pub(crate) hist: Option<CudaSlice<T>>,
}

impl<T: GpuReal> GridBuffers<T> {
    /// The step kernels' parameters (the initialisation launch sets `init`).
    pub(super) fn step_params(&self, job: &Job, s: &CudaStream) -> StepParams<T> {
        StepParams {
            run: run_params(job),
            init: 0,
            pstream: job.stream(),
            seed: job.seed(),
            lo: dev(&self.lo, s),
            hi: dev(&self.hi, s),
            pop_a: dev(&self.pop_a, s),
            pop_b: dev(&self.pop_b, s),
            flags: dev(&self.flags, s),
            fit: dev(&self.fit, s),
            part_f: dev(&self.part_f, s),
            part_i: dev(&self.part_i, s),
            scratch_f: dev(&self.scratch_f, s),
            scratch_i: dev(&self.scratch_i, s),
            state: dev(&self.state, s),
            best_f: dev(&self.best_f, s),
            hist: dev_opt(self.hist.as_ref(), s),
        }
    }

    /// The grid kernels' parameters, with the grid barrier's counter `sync`.
    pub(super) fn grid_params(
        &self,
        job: &Job,
        s: &CudaStream,
        sync: &CudaSlice<u64>,
    ) -> GridParams<T> {
        GridParams {
            run: run_params(job),
            seed: job.seed(),
            pstream: job.stream(),
            lo: dev(&self.lo, s),
            hi: dev(&self.hi, s),
            pop_a: dev(&self.pop_a, s),
            pop_b: dev(&self.pop_b, s),
            flags: dev(&self.flags, s),
            fit: dev(&self.fit, s),
            part_f: dev(&self.part_f, s),
            part_i: dev(&self.part_i, s),
            sync: dev(sync, s),
            state: dev(&self.state, s),
            best_f: dev(&self.best_f, s),
            hist: dev_opt(self.hist.as_ref(), s),
            ctl: std::ptr::null_mut(),
            report: 0,
        }
    }
}

/// How a whole-GPU run ran: its wall time and layout (grid or steps).
#[derive(Clone, Copy)]
pub(crate) struct Took {
    pub(crate) elapsed: Duration,
    pub(crate) layout: RunLayout,
}

/// What to read back of a whole-GPU run besides its best: its history (from generation
/// 0) and its final population.
#[derive(Clone, Copy)]
pub(crate) struct ReadBack {
    pub(crate) history: bool,
    pub(crate) population: bool,
}

impl<T: GpuReal> GridBuffers<T> {
    /// Reads a whole-GPU run's outcome back from these buffers on `stream`: the state
    /// words, the best row (from the buffer its flag names) and what `read` asks for.
    pub(crate) fn outcome(
        &self,
        stream: &Arc<CudaStream>,
        job: &Job,
        name: &str,
        state: &[u32],
        took: Took,
        read: ReadBack,
    ) -> Result<(RunResult, Option<FinalPopulation>)> {
        let Took { elapsed, layout } = took;
        let err = |e| cuda_err(format!("{name}: reading back"))(e);
        let dim = job.dim() as usize;
        let st = stride(job.dim()) as usize;
        let np = job.pop() as usize;
        let gn = state[STATE_GEN];
        let bi = state[STATE_BEST] as usize;
        let bf = stream.clone_dtoh(&self.best_f).map_err(err)?[0].to_f64();
        let plane = (gn as usize % 2) * np;
        let fl = stream
            .clone_dtoh(&self.flags.slice(plane + bi..plane + bi + 1))
            .map_err(err)?[0];
        let x = stream
            .clone_dtoh(&[&self.pop_a, &self.pop_b][fl as usize & 1].slice(bi * st..bi * st + dim))
            .map_err(err)?;
        let history = match self.hist.as_ref().filter(|_| read.history) {
            Some(h) => {
                let v = stream.clone_dtoh(h).map_err(err)?;
                Some(v[..=gn as usize].iter().map(|x| x.to_f64()).collect())
            }
            None => None,
        };
        let population = if read.population {
            let a = stream.clone_dtoh(&self.pop_a).map_err(err)?;
            let b = stream.clone_dtoh(&self.pop_b).map_err(err)?;
            let fl = stream.clone_dtoh(&self.flags).map_err(err)?;
            let f = stream.clone_dtoh(&self.fit).map_err(err)?;
            Some(gather(&a, &b, &fl[plane..plane + np], &f, dim, st))
        } else {
            None
        };
        let result = RunResult::ended(
            job,
            Ending {
                best_x: DVector::from_iterator(dim, x.iter().map(|v| v.to_f64())),
                best_f: bf,
                generations: gn,
                evaluations: job.evaluations(gn),
                termination: ending(job, gn, bf),
                elapsed,
                history,
                layout,
                stream: job.stream(),
            },
        );
        Ok((result, population))
    }
}

/// The state of a whole-GPU run after generation `g` (its flags in plane g % 2).
pub(crate) fn grid_state<T: Controlled>(
    stream: &Arc<CudaStream>,
    name: &str,
    bu: &GridBuffers<T>,
    g: u32,
    job: &Job,
) -> Result<State> {
    let np = job.pop() as usize;
    let st = stride(job.dim()) as usize;
    check_download(2 * np * st * std::mem::size_of::<T>())?;
    let err = |e| cuda_err(format!("{name}: reading back"))(e);
    let plane = (g as usize % 2) * np;
    let a = stream.clone_dtoh(&bu.pop_a).map_err(err)?;
    let b = stream.clone_dtoh(&bu.pop_b).map_err(err)?;
    let flags = stream
        .clone_dtoh(&bu.flags.slice(plane..plane + np))
        .map_err(err)?;
    let fit = stream.clone_dtoh(&bu.fit).map_err(err)?;
    Ok(gather_state(&a, &b, &flags, fit, job.dim() as usize, st))
}

/// Uploads a saved population into a whole-GPU run's buffer a (its flags all 0) and
/// its values, and sets the state's generation.
pub(crate) fn upload_grid<T: Controlled>(
    stream: &Arc<CudaStream>,
    name: &str,
    bu: &mut GridBuffers<T>,
    s: &Start,
    best: bool,
) -> Result<()> {
    let job = s.job;
    let st = stride(job.dim()) as usize;
    let err = |e| cuda_err(format!("{name}: uploading"))(e);
    let state = s.state.ok_or_else(|| Error::Input {
        what: "checkpoint".into(),
        message: "a started run without its population".into(),
    })?;
    let (rows, fit) = padded_state::<T>(state, job.dim() as usize, st)?;
    stream.memcpy_htod(&rows, &mut bu.pop_a).map_err(err)?;
    stream.memcpy_htod(&fit, &mut bu.fit).map_err(err)?;
    let mut words = vec![0u32; STATE_WORDS];
    words[STATE_GEN] = s.generation;
    if best {
        // The step kernels read the best individual of the last generation here.
        let b = crate::run::checkpoint::best_index(&fit);
        words[STATE_BEST] = b as u32;
        stream
            .memcpy_htod(&fit[b..b + 1], &mut bu.best_f)
            .map_err(err)?;
    }
    stream.memcpy_htod(&words, &mut bu.state).map_err(err)?;
    Ok(())
}

/// The best value a whole-GPU run's state names.
pub(crate) fn grid_best<T: Controlled>(
    stream: &Arc<CudaStream>,
    name: &str,
    bu: &GridBuffers<T>,
) -> Result<f64> {
    Ok(stream
        .clone_dtoh(&bu.best_f)
        .map_err(cuda_err(format!("{name}: reading back")))?[0]
        .to_f64())
}

/// The history a whole-GPU run recorded from generation `from` to `g`.
pub(crate) fn grid_history<T: Controlled>(
    stream: &Arc<CudaStream>,
    name: &str,
    bu: &GridBuffers<T>,
    from: u32,
    g: u32,
) -> Result<Option<Vec<f64>>> {
    match &bu.hist {
        Some(h) => {
            let v = stream
                .clone_dtoh(&h.slice(from as usize..g as usize + 1))
                .map_err(cuda_err(format!("{name}: reading back")))?;
            Ok(Some(v.iter().map(|x| x.to_f64()).collect()))
        }
        None => Ok(None),
    }
}
