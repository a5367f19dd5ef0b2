//! Islands on the GPU: archipelagos of DE populations, particle swarms or GA
//! populations, one block per island, with the CPU engine's rules ([`crate::cpu::islands`]) and bits.
//!
//! Compatible archipelagos (equal but for seed and stream) share every launch: the
//! islands of archipelago `a` are blocks `a·N … a·N + N − 1`. The generations between
//! two migration events run in one launch (a DE island is a population of the batch
//! layout, which goes on from its buffers; a swarm runs the kernel
//! `gpude_device::islands::swarm`, a GA island `gpude_device::islands::genetic`), and an event in two launches of the migration
//! kernel (emigrants out, then replacements), which also keeps each island's record
//! (see [`crate::cpu::islands`]).
//!
//! With a target, the CPU engine stops an archipelago after the first generation at
//! which any island has reached it. Each island of a launch stops at its own target, so
//! the others may have run on: the launch's state is copied before it, and an
//! archipelago that ended inside a launch is put back and run again to the generation
//! where it ended. An archipelago that has ended takes no part in the launches that
//! follow (its islands' `gens_done` is `u32::MAX`).
//!
//! One archipelago can also run over several GPUs, a part of its islands on each
//! (`across`).

use crate::cpu::islands::{Algorithm, Archipelago, ArchipelagoResult};
use crate::cuda::engine::{CudaEngine, cuda_err};
use crate::cuda::kernels::{GpuReal, Kernel};
use crate::cuda::launch::{dev, padded, push_params};
use crate::cuda::state::Controlled;
use crate::error::{Error, Result};
use crate::job::config::Job;
use crate::job::precision::Precision;
use crate::run::archipelago::{
    ArchipelagoRan, GroupControl, GroupRan, IslandsWatch, drive, run_to_end,
};
use crate::run::checkpoint::{ArchipelagoCheckpoint, ArchipelagoEntry, IslandState};
use crate::run::control::{Flow, Observer};
use crate::run::result::{Ending, RunLayout, RunResult, Termination, termination};
use cudarc::driver::{CudaSlice, CudaStream, LaunchConfig};
use gpude_device::abi::{GeneticParams, MigrateParams, SwarmParams};
use gpude_device::de::better;
use gpude_device::lanes::{group_width, stride};
use gpude_device::migration::sources;
use gpude_device::registry::Layout;
use nalgebra::DVector;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// An island that has ended (or takes no part in a launch).
const IDLE: u32 = u32::MAX;

/// The most threads per block of the migration kernel (fewer for small islands).
const MIGRATE_THREADS: u32 = 512;

/// Why an archipelago cannot run on the GPU engine, if it cannot.
pub(crate) fn unsupported(a: &Archipelago) -> Option<Error> {
    let job = a.template();
    if job.history() {
        return Some(Error::invalid(
            "history of islands on the GPU engine",
            "on",
            "off (the GPU engine keeps no per-generation record of an archipelago yet; the CPU engine does: --backend cpu)",
        ));
    }
    if job.objective().as_cec2017().is_some() {
        return Some(Error::invalid(
            "objective of islands on the GPU engine",
            job.objective().name(),
            "a built-in function, an expression or a PTX objective (CEC 2017 functions run on the GPU in the adaptive kernels only; islands of them run on the CPU engine: --backend cpu)",
        ));
    }
    if job.objective().is_host_callback() {
        return Some(Error::invalid(
            "objective of islands on the GPU engine",
            job.objective().name(),
            "a built-in function, an expression or a PTX objective (a host callback runs islands on the CPU engine: --backend cpu)",
        ));
    }
    if !matches!(a.algorithm(), Algorithm::De) && job.builtin().is_none() {
        return Some(Error::invalid(
            if matches!(a.algorithm(), Algorithm::Pso(_)) {
                "objective of PSO on the GPU engine"
            } else {
                "objective of the GA on the GPU engine"
            },
            job.objective().name(),
            format!(
                "a built-in function (other objectives run {} on the CPU engine: --backend cpu)",
                a.algorithm().name()
            ),
        ));
    }
    None
}

/// The generation an entry starts from.
fn generation_of(e: &ArchipelagoEntry) -> u32 {
    match e {
        ArchipelagoEntry::Started(c) => c.generation,
        ArchipelagoEntry::Pending(_) => 0,
    }
}

mod across;
mod members;
pub(crate) use across::splits;
pub use across::{run_across_entries, run_archipelago_across};
use members::*;

impl CudaEngine {
    /// Runs archipelagos on the GPU, one result each in order; compatible ones (equal
    /// but for seed and stream) share launches. The observer (for a single archipelago)
    /// sees the overall best after every stretch of generations between two events.
    pub fn run_archipelagos(
        &self,
        list: &[Archipelago],
        observer: Option<Observer>,
    ) -> Result<Vec<ArchipelagoResult>> {
        run_to_end(list, observer, |entries, watch| {
            self.run_archipelago_entries(entries, watch)
        })
    }

    /// Runs or goes on with archipelagos under `watch`: those that share launches
    /// (equal but for seed and stream, at the same generation) run together.
    pub fn run_archipelago_entries(
        &self,
        entries: Vec<ArchipelagoEntry>,
        watch: &mut IslandsWatch,
    ) -> Result<Vec<ArchipelagoRan>> {
        for e in &entries {
            if let Some(e) = unsupported(e.archipelago()) {
                return Err(e);
            }
        }
        drive(
            entries,
            watch,
            |a, b| {
                let started = |e: &ArchipelagoEntry| matches!(e, ArchipelagoEntry::Started(_));
                a.archipelago().shares_launches_with(b.archipelago())
                    && generation_of(a) == generation_of(b)
                    && started(a) == started(b)
            },
            |group, control| match group[0].archipelago().template().precision() {
                Precision::F32 => self.run_group::<f32>(group, control),
                Precision::F64 => self.run_group::<f64>(group, control),
            },
        )
    }

    /// What an own kernel's launch of `jobs` (one per island) starts from, every island
    /// at generation 0: its function and shape, the uploaded inputs, and the buffers
    /// both kernels have: `rows` row buffers, the members' values, the reductions'
    /// scratch, the generations done and the best values.
    fn own_launch<T: GpuReal>(
        &self,
        kernel: Kernel,
        jobs: &[&Job],
        stream: &Arc<CudaStream>,
        rows: usize,
    ) -> Result<OwnStart<T>> {
        let job = jobs[0];
        let p = jobs.len();
        let dim = job.dim();
        let st = stride(dim) as usize;
        let np = job.pop() as usize;
        let t = std::mem::size_of::<T>() as u64;
        self.check_memory(
            t * (rows * p * np * st + 2 * p * np + p * st + 33 * p + 2 * st) as u64
                + 4 * (34 * p) as u64,
        )?;
        let name = kernel.name();
        let func = self.function(kernel)?;
        let g = group_width(dim);
        let threads = self
            .max_threads(&func, &name)?
            .min(((np as u32 * g).div_ceil(32) * 32).max(32));
        let up = |e| cuda_err(format!("{name}: uploading"))(e);
        let seeds: Vec<u64> = jobs.iter().map(|j| j.seed()).collect();
        let streams: Vec<u32> = jobs.iter().map(|j| j.stream()).collect();
        let inputs = Inputs {
            seeds: stream.clone_htod(&seeds).map_err(up)?,
            streams: stream.clone_htod(&streams).map_err(up)?,
            lo: stream
                .clone_htod(&padded::<T>(job.lower(), st))
                .map_err(up)?,
            hi: stream
                .clone_htod(&padded::<T>(job.upper(), st))
                .map_err(up)?,
        };
        let err = |e| cuda_err(format!("{name}: allocating"))(e);
        let alloc = |n: usize| stream.alloc_zeros::<T>(n.max(1)).map_err(err);
        let alloc_u32 = |n: usize| stream.alloc_zeros::<u32>(n.max(1)).map_err(err);
        Ok(OwnStart {
            cfg: LaunchConfig {
                grid_dim: (p as u32, 1, 1),
                block_dim: (threads, 1, 1),
                shared_mem_bytes: 0,
            },
            stream: stream.clone(),
            func,
            inputs,
            rows: (0..rows)
                .map(|_| alloc(p * np * st))
                .collect::<Result<_>>()?,
            values: alloc(p * np)?,
            scratch_f: alloc(32 * p)?,
            scratch_i: alloc_u32(32 * p)?,
            gens_done: alloc_u32(p)?,
            best_f: alloc(p)?,
            name,
        })
    }

    /// The members of islands `jobs` (one per island) running `algorithm`, every island
    /// at generation 0: DE populations of the batch layout (or of the adaptive kernels),
    /// swarms or GA populations.
    fn members<T: GpuReal>(
        &self,
        algorithm: Algorithm,
        jobs: &[&Job],
        stream: &Arc<CudaStream>,
    ) -> Result<Members<T>> {
        Ok(match algorithm {
            Algorithm::De if jobs[0].adaptive().is_some() => {
                Members::Adaptive(Box::new(AdaptiveIslands {
                    l: self.prepare_adaptive::<T>(jobs, stream.clone(), Layout::Batch)?,
                    started: false,
                    gens_done: stream
                        .alloc_zeros::<u32>(jobs.len())
                        .map_err(cuda_err("adaptive islands: allocating"))?,
                }))
            }
            Algorithm::De => Members::De(Box::new(self.alloc_batch::<T>(
                jobs,
                stream.clone(),
                true,
            )?)),
            Algorithm::Pso(pso) => {
                Members::Pso(Box::new(self.alloc_swarm::<T>(jobs, &pso, stream)?))
            }
            Algorithm::Ga(ga) => Members::Ga(Box::new(self.alloc_genetic::<T>(jobs, &ga, stream)?)),
        })
    }

    /// The swarm launch of `jobs` (one per island), every swarm at generation 0.
    fn alloc_swarm<T: GpuReal>(
        &self,
        jobs: &[&Job],
        pso: &crate::cpu::pso::Pso,
        stream: &Arc<CudaStream>,
    ) -> Result<OwnLaunch<T, SwarmParams<T>>> {
        let job = jobs[0];
        let (p, dim, np) = (jobs.len(), job.dim(), job.pop() as usize);
        // Personal bests (the members), positions, velocities.
        let b = self.own_launch::<T>(Kernel::Swarm(T::KERNEL), jobs, stream, 3)?;
        let gbest = b.alloc(p * stride(dim) as usize)?;
        let s = &**stream;
        let pp = pso.params::<T>();
        let params = SwarmParams::<T> {
            function: job.builtin().map_or(0, |f| f as u32),
            formula: job.formula() as u32,
            bounds: job.bounds() as u32,
            dim,
            np: np as u32,
            gens: 0,
            target: T::of(job.target_value().unwrap_or(f64::NAN)),
            inertia: pp.inertia,
            c1: pp.c1,
            c2: pp.c2,
            seeds: dev(&b.inputs.seeds, s),
            streams: dev(&b.inputs.streams, s),
            lo: dev(&b.inputs.lo, s),
            hi: dev(&b.inputs.hi, s),
            x: dev(&b.rows[1], s),
            v: dev(&b.rows[2], s),
            pbest: dev(&b.rows[0], s),
            pfit: b.ptr(&b.values),
            gbest: dev(&gbest, s),
            scratch_f: b.ptr(&b.scratch_f),
            scratch_i: b.ptr(&b.scratch_i),
            gens_done: b.ptr(&b.gens_done),
            best_f: b.ptr(&b.best_f),
        };
        Ok(b.launch(params, Some(1), gbest))
    }

    /// The GA launch of `jobs` (one per island), every island at generation 0.
    fn alloc_genetic<T: GpuReal>(
        &self,
        jobs: &[&Job],
        ga: &crate::cpu::ga::Ga,
        stream: &Arc<CudaStream>,
    ) -> Result<OwnLaunch<T, GeneticParams<T>>> {
        let job = jobs[0];
        let (p, dim, np) = (jobs.len(), job.dim(), job.pop() as usize);
        // The population (the members), then the offspring's rows.
        let b = self.own_launch::<T>(Kernel::Genetic(T::KERNEL), jobs, stream, 2)?;
        let yfit = b.alloc(p * np)?;
        let s = &**stream;
        let gp = ga.params::<T>();
        let params = GeneticParams::<T> {
            function: job.builtin().map_or(0, |f| f as u32),
            formula: job.formula() as u32,
            bounds: job.bounds() as u32,
            dim,
            np: np as u32,
            gens: 0,
            target: T::of(job.target_value().unwrap_or(f64::NAN)),
            crossover: gp.crossover,
            mutation: gp.mutation,
            alpha: gp.alpha,
            range: gp.range,
            seeds: dev(&b.inputs.seeds, s),
            streams: dev(&b.inputs.streams, s),
            lo: dev(&b.inputs.lo, s),
            hi: dev(&b.inputs.hi, s),
            x: dev(&b.rows[0], s),
            y: dev(&b.rows[1], s),
            fit: b.ptr(&b.values),
            yfit: dev(&yfit, s),
            scratch_f: b.ptr(&b.scratch_f),
            scratch_i: b.ptr(&b.scratch_i),
            gens_done: b.ptr(&b.gens_done),
            best_f: b.ptr(&b.best_f),
        };
        Ok(b.launch(params, None, yfit))
    }

    /// Runs compatible archipelagos together in precision `T`, from the generation they
    /// are at (the same for all).
    fn run_group<T: Controlled>(
        &self,
        entries: &[&ArchipelagoEntry],
        control: &mut GroupControl,
    ) -> Result<GroupRan> {
        let start = Instant::now();
        let list: Vec<&Archipelago> = entries.iter().map(|e| e.archipelago()).collect();
        let observer = control.observer;
        let a0 = list[0];
        let template = a0.template();
        let n = a0.islands() as usize;
        let na = list.len();
        let p = na * n;
        let jobs: Vec<Job> = list
            .iter()
            .flat_map(|a| (0..a.islands()).map(|k| a.island_job(k)))
            .collect();
        let refs: Vec<&Job> = jobs.iter().collect();
        let (dim, np) = (template.dim(), template.pop() as usize);
        let st = stride(dim) as usize;
        let gmax = template.generations();
        let k = a0.migrants() as usize;
        let stream = self.first_stream();
        let mut members = self.members::<T>(a0.algorithm(), &refs, &stream)?;
        let name = format!("{} islands", members.name());
        // A row's values apart in the members, the emigrants and the records.
        let rst = members.row_stride(st);
        let err = |what: &'static str| {
            let name = name.clone();
            move |e| cuda_err(format!("{name}: {what}"))(e)
        };
        // The migration kernel's buffers.
        let t = std::mem::size_of::<T>() as u64;
        self.check_memory(
            t * (p * k * st + p * k + p + p * st + 32 * p) as u64
                + 4 * (p * k * n + p + 32 * p) as u64,
        )?;
        let migrate = self.function(Kernel::Migrate(T::KERNEL))?;
        let mthreads = self
            .max_threads(&migrate, &name)?
            .min(MIGRATE_THREADS)
            .min((np as u32).next_multiple_of(32));
        let alloc = |len: usize| {
            stream
                .alloc_zeros::<T>(len.max(1))
                .map_err(err("allocating"))
        };
        let allocu = |len: usize| {
            stream
                .alloc_zeros::<u32>(len.max(1))
                .map_err(err("allocating"))
        };
        let out_rows = alloc(p * k * rst)?;
        let out_fit = alloc(p * k)?;
        let pick = allocu(p * k * n)?;
        let ring = allocu(p)?;
        let started: Vec<&IslandState> = entries
            .iter()
            .filter_map(|e| match e {
                ArchipelagoEntry::Started(c) => Some(c.islands.iter()),
                ArchipelagoEntry::Pending(_) => None,
            })
            .flatten()
            .collect();
        // The records: empty (NaN) at the start, else as the checkpoints hold them.
        let (rf0, rx0) = if started.is_empty() {
            (vec![T::NAN; p], vec![T::ZERO; p * rst])
        } else {
            records::<T>(&started, dim as usize, rst)?
        };
        let rec_f = stream.clone_htod(&rf0).map_err(err("uploading"))?;
        let rec_x = stream.clone_htod(&rx0).map_err(err("uploading"))?;
        let scratch_f = alloc(32 * p)?;
        let scratch_i = allocu(32 * p)?;
        let seeds: Vec<u64> = jobs.iter().map(|j| j.seed()).collect();
        let streams: Vec<u32> = jobs.iter().map(|j| j.stream()).collect();
        let seeds_d = stream.clone_htod(&seeds).map_err(err("uploading"))?;
        let streams_d = stream.clone_htod(&streams).map_err(err("uploading"))?;
        let migrate_phase = |members: &Members<T>, phase: u32, g: u32| -> Result<()> {
            let s = &*stream;
            let (rows_a, rows_b, flags, also, fit) = members.migrating(s);
            let (sizes, size_stride) = members.sizes(s);
            let params = MigrateParams::<T> {
                phase,
                islands: n as u32,
                first: 0,
                np: np as u32,
                dim,
                g,
                migrants: k as u32,
                topology: a0.topology() as u32,
                emigrants: a0.emigrants() as u32,
                replace: a0.replacement() as u32,
                row_stride: rst as u32,
                size_stride,
                seeds: dev(&seeds_d, s),
                streams: dev(&streams_d, s),
                sizes,
                rows_a,
                rows_b,
                flags,
                also,
                fit,
                gens_done: members.gens_done_ptr(s),
                out_rows: dev(&out_rows, s),
                out_fit: dev(&out_fit, s),
                pick: dev(&pick, s),
                ring: dev(&ring, s),
                rec_f: dev(&rec_f, s),
                rec_x: dev(&rec_x, s),
                scratch_f: dev(&scratch_f, s),
                scratch_i: dev(&scratch_i, s),
            };
            let mut b = s.launch_builder(&migrate);
            push_params(&mut b, &params);
            // SAFETY: the parameters are the kernel's (checked against the PTX at build
            // time); the members' buffers hold p islands of np rows of stride(dim)
            // values (and np values, flags), the migration buffers are sized above for p
            // islands of k emigrants and k·n picks (k · sources ≤ k·n, and below np as
            // the archipelago's builder checks), and all of them outlive the launch.
            unsafe {
                b.launch(LaunchConfig {
                    grid_dim: (p as u32, 1, 1),
                    block_dim: (mthreads, 1, 1),
                    shared_mem_bytes: 0,
                })
            }
            .map_err(cuda_err(format!("{name}: launching the migration")))?;
            Ok(())
        };

        let target = template.target_value();
        // Each archipelago's generation at which it ended, and its events.
        let mut ended: Vec<Option<u32>> = vec![None; na];
        let mut migrations: Vec<u32> = entries
            .iter()
            .map(|e| match e {
                ArchipelagoEntry::Started(c) => c.migrations,
                ArchipelagoEntry::Pending(_) => 0,
            })
            .collect();
        let before: Vec<Duration> = entries
            .iter()
            .map(|e| match e {
                ArchipelagoEntry::Started(c) => c.elapsed,
                ArchipelagoEntry::Pending(_) => Duration::ZERO,
            })
            .collect();
        let mut g = generation_of(entries[0]);
        let mut stopped = false;
        let mut spent = vec![false; na];
        // Adaptive archipelagos that ended at their target, and their islands' end state.
        let mut frozen: Option<Snapshot<T>> = None;
        let mut frozen_at: Vec<usize> = Vec::new();
        if !started.is_empty() {
            // A group holds archipelagos at one generation: all started or all pending.
            members.put(&started, np, dim as usize, st, &stream)?;
            stream
                .memcpy_htod(&vec![g; p], members.gens_done())
                .map_err(err("uploading"))?;
            if let (Some(o), ArchipelagoEntry::Started(c)) = (observer, entries[0]) {
                stopped = o(g, c.held()) == Flow::Stop;
            }
        }
        // Archipelagos saved at their old limit skipped this generation's event: run
        // it for them (the others idle through it).
        let pending: Vec<bool> = entries
            .iter()
            .map(|e| matches!(e, ArchipelagoEntry::Started(c) if c.pending_event()))
            .collect();
        if pending.iter().any(|&p| p) {
            let gens: Vec<u32> = (0..p)
                .map(|q| if pending[q / n] { g } else { IDLE })
                .collect();
            stream
                .memcpy_htod(&gens, members.gens_done())
                .map_err(err("uploading"))?;
            migrate_phase(&members, 0, g)?;
            migrate_phase(&members, 1, g)?;
            stream
                .memcpy_htod(&vec![g; p], members.gens_done())
                .map_err(err("uploading"))?;
            for (m, &q) in migrations.iter_mut().zip(&pending) {
                *m += q as u32;
            }
        }
        let interval = a0.interval();
        let every = if control.save.is_some() {
            control.every
        } else {
            0
        };
        let ns = sources(a0.topology(), n as u32);
        // Which archipelagos the islands' `gens_done` marks as ended (IDLE): each launch
        // leaves the others at its end, so the buffer needs an upload only when that
        // changes or a rerun has marked others idle.
        let mut marked: Vec<bool> = vec![false; na];
        while !stopped && ended.iter().any(Option::is_none) {
            if control.stopping() {
                break;
            }
            let mut end = gmax.min((g / interval + 1).saturating_mul(interval));
            // The next save, if any (every = 0: none).
            if let Some(q) = g.checked_div(every) {
                end = end.min((q + 1).saturating_mul(every));
            }
            let snap = if target.is_some() {
                Some(members.snapshot(&stream)?)
            } else {
                None
            };
            members.launch(end, &stream)?;
            let mut rerun = false;
            if target.is_some() || observer.is_some() {
                // Each island's generations done (an adaptive one's in its state).
                let done = match &members {
                    Members::Adaptive(_) => members.generations(&stream)?,
                    _ => stream
                        .clone_dtoh(&*members.gens_done())
                        .map_err(err("running"))?,
                };
                let best = stream
                    .clone_dtoh(members.best_f())
                    .map_err(err("reading back"))?;
                let mut reruns: Vec<(u32, usize)> = Vec::new();
                let mut hits: Vec<usize> = Vec::new();
                for (a, e) in ended.iter_mut().enumerate() {
                    if e.is_some() {
                        continue;
                    }
                    let isl = a * n..(a + 1) * n;
                    let hit = isl
                        .clone()
                        .filter(|&q| target.is_some_and(|t| best[q].to_f64() <= t))
                        .map(|q| done[q])
                        .min();
                    if let Some(gs) = hit {
                        if isl.clone().any(|q| done[q] > gs) {
                            reruns.push((gs, a));
                        }
                        *e = Some(gs);
                        hits.push(a);
                    }
                }
                reruns.sort_unstable();
                rerun = !reruns.is_empty();
                // The adaptive kernels have no idle mark: the islands of an archipelago
                // that ended would go on in later launches (reruns to a later generation
                // included). Each one's end state is kept in `frozen` as soon as it is
                // reached, and put back before the results are read.
                let adaptive = matches!(members, Members::Adaptive(_));
                if adaptive {
                    for &a in hits.iter().filter(|&&a| !reruns.iter().any(|r| r.1 == a)) {
                        members.freeze(&mut frozen, a * n, (a + 1) * n, p, &stream)?;
                        frozen_at.push(a);
                    }
                }
                let mut i = 0;
                while i < reruns.len() {
                    let gs = reruns[i].0;
                    let mut gens = vec![IDLE; p];
                    let mut these = Vec::new();
                    while i < reruns.len() && reruns[i].0 == gs {
                        let a = reruns[i].1;
                        if let Some(s) = &snap {
                            members.restore(s, a * n, (a + 1) * n, p, &stream)?;
                        }
                        gens[a * n..(a + 1) * n].fill(g);
                        these.push(a);
                        i += 1;
                    }
                    stream
                        .memcpy_htod(&gens, members.gens_done())
                        .map_err(err("uploading"))?;
                    members.launch(gs, &stream)?;
                    if adaptive {
                        for a in these {
                            members.freeze(&mut frozen, a * n, (a + 1) * n, p, &stream)?;
                            frozen_at.push(a);
                        }
                    }
                }
                if let Some(o) = observer {
                    stopped = o(
                        end,
                        self.held_best::<T>(&stream, members.best_f(), &rec_f, &name)?,
                    ) == Flow::Stop;
                }
            }
            // Adaptive islands end when their budgets are spent (all of an
            // archipelago's at once: they spend the same), at the generation they reached.
            if let Some(evals) = members.evaluations(&stream)? {
                let budget = template
                    .adaptive()
                    .map_or(u64::MAX, |ad| ad.max_evaluations);
                let now_spent: Vec<usize> = (0..na)
                    .filter(|&a| ended[a].is_none() && evals[a * n] >= budget)
                    .collect();
                // The state words (where they stopped) only when some did.
                if !now_spent.is_empty() {
                    let gens = members.generations(&stream)?;
                    for a in now_spent {
                        ended[a] = Some(gens[a * n]);
                        spent[a] = true;
                    }
                }
            }
            g = end;
            if g >= gmax {
                for e in ended.iter_mut().filter(|e| e.is_none()) {
                    *e = Some(gmax);
                }
            }
            // Ended archipelagos idle from now on; the others are all at g (where the
            // launch left them, unless a rerun marked them idle).
            let now: Vec<bool> = ended.iter().map(Option::is_some).collect();
            if rerun || now != marked {
                let gens: Vec<u32> = (0..p).map(|q| if now[q / n] { IDLE } else { g }).collect();
                stream
                    .memcpy_htod(&gens, members.gens_done())
                    .map_err(err("uploading"))?;
                marked = now;
            }
            if n > 1 && ns > 0 && g.is_multiple_of(interval) && ended.iter().any(Option::is_none) {
                migrate_phase(&members, 0, g)?;
                migrate_phase(&members, 1, g)?;
                for (a, e) in ended.iter().enumerate() {
                    if e.is_none() {
                        migrations[a] += 1;
                    }
                }
            }
            if !stopped && control.due(g, gmax) && ended.iter().any(Option::is_none) {
                let states = members.states(&rec_f, &rec_x, np, dim as usize, rst, &stream)?;
                let cks = checkpoints(&list, states, n, g, &ended, &migrations, &before, start);
                if let Some(save) = control.save.as_mut() {
                    stopped = save(&cks) == Flow::Stop;
                }
            }
        }
        if let Some(f) = &frozen {
            for &a in &frozen_at {
                members.restore(f, a * n, (a + 1) * n, p, &stream)?;
            }
        }
        // The state at the end, before the records are taken: of every archipelago when
        // asked, else of those stopped before their end (none copied when none was).
        let finals: Vec<Option<ArchipelagoCheckpoint>> =
            if control.keep || ended.iter().any(Option::is_none) {
                let states = members.states(&rec_f, &rec_x, np, dim as usize, rst, &stream)?;
                checkpoints(&list, states, n, g, &ended, &migrations, &before, start)
                    .into_iter()
                    .zip(&ended)
                    .map(|(c, e)| (control.keep || e.is_none()).then_some(c))
                    .collect()
            } else {
                vec![None; na]
            };
        // The records at the end: every island's, whatever its gens_done.
        migrate_phase(&members, 2, g)?;
        let island_evals = members.evaluations(&stream)?;
        let rf = stream.clone_dtoh(&rec_f).map_err(err("reading back"))?;
        let rx = stream.clone_dtoh(&rec_x).map_err(err("reading back"))?;
        let records = Records {
            rec_f: &rf,
            rec_x: &rx,
            rst,
            evaluations: island_evals.as_deref(),
            launch_runs: &|_| p as u32,
        };
        let mut results = Vec::with_capacity(na);
        for ((a, arch), state) in list.iter().enumerate().zip(finals) {
            let end = End {
                // Stopped before its end, it is at the group's generation.
                generation: ended[a].unwrap_or(g),
                early: ended[a].is_none(),
                spent: spent[a],
                migrations: migrations[a],
                elapsed: before[a] + start.elapsed(),
            };
            results.push((records.result(arch, &jobs, a * n, end), state));
        }
        Ok(results)
    }

    /// The best value held over all islands (records and current bests).
    fn held_best<T: GpuReal>(
        &self,
        stream: &Arc<CudaStream>,
        best: &CudaSlice<T>,
        rec: &CudaSlice<T>,
        name: &str,
    ) -> Result<f64> {
        let b = stream
            .clone_dtoh(best)
            .map_err(cuda_err(format!("{name}: reading back")))?;
        let r = stream
            .clone_dtoh(rec)
            .map_err(cuda_err(format!("{name}: reading back")))?;
        let mut out = T::NAN;
        for (fb, fr) in b.into_iter().zip(r) {
            let held = if better(fr, u32::MAX, fb, 0) { fr } else { fb };
            if better(held, 0, out, 1) {
                out = held;
            }
        }
        Ok(out.to_f64())
    }
}

/// How an archipelago's run ended, for its result.
struct End {
    generation: u32,
    /// Stopped before its end.
    early: bool,
    /// Its evaluation budget spent (adaptive islands).
    spent: bool,
    migrations: u32,
    elapsed: Duration,
}

/// The islands' records read back at the end of a run: island q's best value `rec_f[q]`
/// and point (row q of `rec_x`, rows `rst` values apart), its evaluations (counted by
/// the adaptive kernels; else its job's count at the generation it ended) and how many
/// islands shared its launches.
struct Records<'a, T> {
    rec_f: &'a [T],
    rec_x: &'a [T],
    rst: usize,
    evaluations: Option<&'a [u64]>,
    launch_runs: &'a dyn Fn(usize) -> u32,
}

impl<T: GpuReal> Records<'_, T> {
    /// The result of archipelago `arch`, whose islands are records `at ..` (their jobs
    /// `jobs[at ..]`): each island's, and the best island's as the whole's (the lower
    /// value, the lower island on a tie), the reason from `end`.
    fn result(&self, arch: &Archipelago, jobs: &[Job], at: usize, end: End) -> ArchipelagoResult {
        let (rf, rx, rst) = (self.rec_f, self.rec_x, self.rst);
        let n = arch.islands() as usize;
        let dim = arch.template().dim() as usize;
        let target = arch.template().target_value();
        let ga = end.generation;
        let isl = at..at + n;
        let mut b = isl.start;
        for q in isl.clone() {
            if better(rf[q], q as u32, rf[b], b as u32) {
                b = q;
            }
        }
        let overall_f = rf[b].to_f64();
        let result = |q: usize, job: &Job, stream: u32, evaluations: u64| {
            let mut r = RunResult::ended(
                job,
                Ending {
                    best_x: DVector::from_iterator(
                        dim,
                        rx[q * rst..q * rst + dim].iter().map(|v| v.to_f64()),
                    ),
                    best_f: rf[q].to_f64(),
                    generations: ga,
                    evaluations,
                    termination: if end.early {
                        Termination::Stopped
                    } else if end.spent && target.is_none_or(|t| overall_f > t) {
                        Termination::MaxEvaluations
                    } else {
                        termination(job, ga, overall_f)
                    },
                    elapsed: end.elapsed,
                    history: None,
                    layout: RunLayout::Islands,
                    stream,
                },
            );
            r.launch_runs = (self.launch_runs)(q);
            r
        };
        let evals_of = |q: usize| self.evaluations.map_or(jobs[q].evaluations(ga), |e| e[q]);
        let islands: Vec<RunResult> = isl
            .clone()
            .map(|q| result(q, &jobs[q], jobs[q].stream(), evals_of(q)))
            .collect();
        let overall = result(
            b,
            arch.template(),
            arch.template().stream(),
            isl.clone().map(evals_of).sum(),
        );
        ArchipelagoResult {
            islands,
            best_island: b - isl.start,
            overall,
            migrations: end.migrations,
            first_hit: target.filter(|&t| overall_f <= t).map(|_| ga),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cpu::pso::Pso;
    use crate::job::objective::Objective;
    use gpude_device::Function;

    #[test]
    fn what_the_gpu_does_not_run_is_named() {
        let job = |history: bool| {
            Job::builder(Function::Sphere, 4)
                .pop(8)
                .generations(10)
                .history(history)
                .build()
                .unwrap()
        };
        let arch = |j: Job, alg| Archipelago::builder(j, 2).algorithm(alg).build().unwrap();
        assert!(unsupported(&arch(job(false), Algorithm::De)).is_none());
        assert!(unsupported(&arch(job(false), Algorithm::Pso(Pso::default()))).is_none());
        let e = unsupported(&arch(job(true), Algorithm::De)).unwrap();
        assert!(e.to_string().contains("history"), "{e}");
        let jade = |target: Option<f64>| {
            let b = Job::builder(Function::Sphere, 4)
                .pop(8)
                .strategy(gpude_device::Strategy::Jade);
            match target {
                Some(t) => b.target(t),
                None => b,
            }
            .build()
            .unwrap()
        };
        assert!(unsupported(&arch(jade(None), Algorithm::De)).is_none());
        assert!(unsupported(&arch(jade(Some(1e-3)), Algorithm::De)).is_none());
        let expr = Job::builder_for(Objective::expr("sum(x[j]^2)", None).unwrap(), 2)
            .domain(-1.0, 1.0)
            .pop(8)
            .generations(10)
            .build()
            .unwrap();
        assert!(unsupported(&arch(expr.clone(), Algorithm::De)).is_none());
        let e = unsupported(&arch(expr, Algorithm::Pso(Pso::default()))).unwrap();
        assert!(e.to_string().contains("a built-in function"), "{e}");
        let cb = Objective::callback("f", None, |xs: &[f64], d: usize| {
            xs.chunks(d).map(|x| x[0]).collect()
        })
        .unwrap();
        let cb = Job::builder_for(cb, 2)
            .domain(-1.0, 1.0)
            .pop(8)
            .generations(10)
            .build()
            .unwrap();
        let e = unsupported(&arch(cb, Algorithm::De)).unwrap();
        assert!(e.to_string().contains("host callback"), "{e}");
    }
}
