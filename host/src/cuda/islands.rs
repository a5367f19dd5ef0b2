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

use super::adaptive::AdaptiveLaunch;
use super::batch::BatchLaunch;
use super::engine::{CudaEngine, cuda_err};
use super::kernels::{GpuReal, Kernel};
use super::launch::{dev, padded, push_params};
use super::state::{Controlled, check_download, gather_state};
use crate::cpu::islands::{Algorithm, Archipelago, ArchipelagoResult};
use crate::error::{Error, Result};
use crate::job::config::Job;
use crate::job::precision::Precision;
use crate::run::archipelago::{ArchipelagoRan, GroupControl, GroupRan, IslandsWatch, drive};
use crate::run::checkpoint::{ArchipelagoCheckpoint, ArchipelagoEntry, IslandState};
use crate::run::control::{Flow, Observer};
use crate::run::result::{Ending, RunLayout, RunResult, Termination, termination};
use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, LaunchConfig};
use gpude_device::abi::{
    ADAPTIVE_GENS, ADAPTIVE_PHASE_RESUME, ADAPTIVE_PHASE_RUN, ADAPTIVE_STATE_WORDS, GeneticParams,
    KernelParams, MigrateParams, SwarmParams,
};
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

/// Rows of `dim` values, padded to `st` (with zeros).
fn pad<T: GpuReal>(rows: &[T], dim: usize, st: usize) -> Vec<T> {
    let n = rows.len() / dim;
    let mut out = vec![T::ZERO; n * st];
    for (o, r) in out.chunks_exact_mut(st).zip(rows.chunks_exact(dim)) {
        o[..dim].copy_from_slice(r);
    }
    out
}

/// Rows padded to `st`, cut to their `dim` values.
fn unpad<T: GpuReal>(rows: &[T], dim: usize, st: usize) -> Vec<T> {
    rows.chunks_exact(st)
        .flat_map(|r| r[..dim].iter().copied())
        .collect()
}

/// The values of `rows` in precision `T`.
fn values_of<T: Controlled>(rows: &crate::run::checkpoint::Rows) -> Result<Vec<T>> {
    T::of_rows(rows.clone()).ok_or_else(|| Error::Input {
        what: "archipelago checkpoint".into(),
        message: format!("its values are not in {}", T::NAME),
    })
}

/// The islands' records as the migration kernel keeps them: values, and points padded
/// to `st` (zeros while a record is empty).
fn records<T: Controlled>(
    states: &[&IslandState],
    dim: usize,
    st: usize,
) -> Result<(Vec<T>, Vec<T>)> {
    let mut f = Vec::with_capacity(states.len());
    let mut x = vec![T::ZERO; states.len() * st];
    for (q, s) in states.iter().enumerate() {
        f.push(values_of::<T>(&s.record_f)?[0]);
        let r = values_of::<T>(&s.record_x)?;
        if r.len() == dim {
            x[q * st..q * st + dim].copy_from_slice(&r);
        }
    }
    Ok((f, x))
}

/// The checkpoints of the archipelagos of a group (`n` islands each, their states in
/// order) after generation `g`, or after the generation each ended at.
#[allow(clippy::too_many_arguments)]
fn checkpoints(
    list: &[&Archipelago],
    states: Vec<IslandState>,
    n: usize,
    g: u32,
    ended: &[Option<u32>],
    migrations: &[u32],
    before: &[Duration],
    start: Instant,
) -> Vec<ArchipelagoCheckpoint> {
    let mut states = states.into_iter();
    list.iter()
        .enumerate()
        .map(|(a, arch)| ArchipelagoCheckpoint {
            archipelago: (*arch).clone(),
            generation: ended[a].unwrap_or(g),
            migrations: migrations[a],
            islands: states.by_ref().take(n).collect(),
            history: None,
            elapsed: before[a] + start.elapsed(),
        })
        .collect()
}

/// The common inputs of the islands' own kernels (swarms, GA): the seeds, streams and
/// bounds, uploaded, and the launch shape.
struct Inputs<T> {
    seeds: CudaSlice<u64>,
    streams: CudaSlice<u32>,
    lo: CudaSlice<T>,
    hi: CudaSlice<T>,
}

/// A launch of one of the islands' own kernels, one block per island: the swarms'
/// (`gpude_device::abi::SwarmParams`) or the GA's (`GeneticParams`).
struct OwnLaunch<T: GpuReal, P> {
    name: String,
    func: CudaFunction,
    cfg: LaunchConfig,
    params: P,
    /// The row buffers a launch changes (`np · stride` per island): the members first
    /// (a swarm's personal bests, the GA's population), then the others.
    rows: Vec<CudaSlice<T>>,
    /// For a swarm, the index in `rows` of the positions a migrant also becomes.
    also: Option<usize>,
    /// The members' values (`np` per island).
    values: CudaSlice<T>,
    gens_done: CudaSlice<u32>,
    best_f: CudaSlice<T>,
    _keep: (Inputs<T>, Vec<CudaSlice<T>>, CudaSlice<u32>),
}

/// The generation limit field of an own kernel's parameters.
trait Limit {
    fn set_gens(&mut self, gens: u32);
}

impl<T> Limit for SwarmParams<T> {
    fn set_gens(&mut self, gens: u32) {
        self.gens = gens;
    }
}

impl<T> Limit for GeneticParams<T> {
    fn set_gens(&mut self, gens: u32) {
        self.gens = gens;
    }
}

impl<T: GpuReal, P: KernelParams + Limit> OwnLaunch<T, P> {
    fn launch(&mut self, end: u32, stream: &CudaStream) -> Result<()> {
        self.params.set_gens(end);
        let mut b = stream.launch_builder(&self.func);
        push_params(&mut b, &self.params);
        // SAFETY: the parameters are the kernel's (the build script checks them against
        // the PTX); every buffer has the length `alloc_swarm` or `alloc_genetic` gave it
        // for the grid's islands and lives as long as `self`; the block is a multiple of
        // the group width.
        unsafe { b.launch(self.cfg) }.map_err(cuda_err(format!("{}: launching", self.name)))?;
        Ok(())
    }
}

/// An own kernel's launch being put together (see `CudaEngine::own_launch`): the
/// buffers both kernels have.
struct OwnStart<T> {
    name: String,
    func: CudaFunction,
    cfg: LaunchConfig,
    stream: Arc<CudaStream>,
    inputs: Inputs<T>,
    rows: Vec<CudaSlice<T>>,
    values: CudaSlice<T>,
    scratch_f: CudaSlice<T>,
    scratch_i: CudaSlice<u32>,
    gens_done: CudaSlice<u32>,
    best_f: CudaSlice<T>,
}

impl<T: GpuReal> OwnStart<T> {
    /// `n` zeroed values.
    fn alloc(&self, n: usize) -> Result<CudaSlice<T>> {
        self.stream
            .alloc_zeros::<T>(n.max(1))
            .map_err(cuda_err(format!("{}: allocating", self.name)))
    }

    /// The device address of a buffer.
    fn ptr<U>(&self, b: &CudaSlice<U>) -> *mut U {
        dev(b, &self.stream)
    }

    /// The launch with these parameters; `also`: the index in the rows of a swarm's
    /// positions; `extra`: the kernel's own buffer, kept alive with it.
    fn launch<P>(self, params: P, also: Option<usize>, extra: CudaSlice<T>) -> OwnLaunch<T, P> {
        OwnLaunch {
            name: self.name,
            func: self.func,
            cfg: self.cfg,
            params,
            rows: self.rows,
            also,
            values: self.values,
            gens_done: self.gens_done,
            best_f: self.best_f,
            _keep: (self.inputs, vec![extra, self.scratch_f], self.scratch_i),
        }
    }
}

/// The islands' buffers: a batch launch of DE populations, or a launch of the swarms'
/// or the GA's kernel.
enum Members<T: GpuReal> {
    De(Box<BatchLaunch<T>>),
    Adaptive(Box<AdaptiveIslands<T>>),
    Pso(Box<OwnLaunch<T, SwarmParams<T>>>),
    Ga(Box<OwnLaunch<T, GeneticParams<T>>>),
}

/// Adaptive DE islands: a launch of the adaptive kernels (one block per island) whose
/// first launch initialises the islands and the others go on from the buffers
/// (`ADAPTIVE_PHASE_RESUME`), and the marks the migration kernel reads (the adaptive
/// kernels keep their generation count in their state).
struct AdaptiveIslands<T: GpuReal> {
    l: AdaptiveLaunch<T>,
    started: bool,
    gens_done: CudaSlice<u32>,
}

/// Copies islands `k0 .. k1` of `p` from `src` to `dst` (each holds one equal part per
/// island).
fn part<U: cudarc::driver::DeviceRepr>(
    src: &CudaSlice<U>,
    dst: &mut CudaSlice<U>,
    k0: usize,
    k1: usize,
    p: usize,
    stream: &Arc<CudaStream>,
) -> Result<()> {
    let per = dst.len() / p;
    stream
        .memcpy_dtod(
            &src.slice(k0 * per..k1 * per),
            &mut dst.slice_mut(k0 * per..k1 * per),
        )
        .map_err(cuda_err("copying the islands' state"))
}

/// A copy of the islands' state before a launch.
struct Snapshot<T> {
    rows: Vec<CudaSlice<T>>,
    values: CudaSlice<T>,
    /// DE's flags, or an adaptive island's state words.
    flags: Option<CudaSlice<u32>>,
    /// An adaptive island's evaluations.
    counts: Option<CudaSlice<u64>>,
}

impl<T: GpuReal> Members<T> {
    fn name(&self) -> &str {
        match self {
            Members::De(l) => &l.name,
            Members::Adaptive(a) => &a.l.name,
            Members::Pso(l) => &l.name,
            Members::Ga(l) => &l.name,
        }
    }

    fn launch(&mut self, end: u32, stream: &CudaStream) -> Result<()> {
        match self {
            Members::De(l) => l.launch(end, 0, 0),
            Members::Adaptive(a) => {
                a.l.params.run.gens = end;
                let phase = if a.started {
                    ADAPTIVE_PHASE_RESUME
                } else {
                    ADAPTIVE_PHASE_RUN
                };
                a.started = true;
                a.l.launch(phase)
            }
            Members::Pso(l) => l.launch(end, stream),
            Members::Ga(l) => l.launch(end, stream),
        }
    }

    fn gens_done(&mut self) -> &mut CudaSlice<u32> {
        match self {
            Members::De(l) => &mut l.gens_done,
            Members::Adaptive(a) => &mut a.gens_done,
            Members::Pso(l) => &mut l.gens_done,
            Members::Ga(l) => &mut l.gens_done,
        }
    }

    fn best_f(&self) -> &CudaSlice<T> {
        match self {
            Members::De(l) => &l.best_f,
            Members::Adaptive(a) => &a.l.best_f,
            Members::Pso(l) => &l.best_f,
            Members::Ga(l) => &l.best_f,
        }
    }

    /// The row buffers (`np · stride` per island), the values (`np` per island) and the
    /// flags, if any.
    #[allow(clippy::type_complexity)]
    fn state(
        &mut self,
    ) -> (
        Vec<&mut CudaSlice<T>>,
        &mut CudaSlice<T>,
        Option<&mut CudaSlice<u32>>,
    ) {
        match self {
            Members::De(l) => (
                vec![&mut l.pop_a, &mut l.pop_b],
                &mut l.fit,
                Some(&mut l.flags),
            ),
            Members::Adaptive(a) => (vec![&mut a.l.x], &mut a.l.fit, None),
            Members::Pso(l) => (l.rows.iter_mut().collect(), &mut l.values, None),
            Members::Ga(l) => (l.rows.iter_mut().collect(), &mut l.values, None),
        }
    }

    /// Each adaptive island's evaluations spent (none for the other algorithms, whose
    /// count follows from the generations).
    fn evaluations(&self, stream: &Arc<CudaStream>) -> Result<Option<Vec<u64>>> {
        match self {
            Members::Adaptive(a) => stream
                .clone_dtoh(&a.l.evaluations)
                .map(Some)
                .map_err(cuda_err(format!("{}: reading back", a.l.name))),
            _ => Ok(None),
        }
    }

    /// Each adaptive island's generations done (from its state; empty for the others).
    fn generations(&self, stream: &Arc<CudaStream>) -> Result<Vec<u32>> {
        match self {
            Members::Adaptive(a) => {
                let st = stream
                    .clone_dtoh(&a.l.state)
                    .map_err(cuda_err(format!("{}: reading back", a.l.name)))?;
                Ok(st
                    .as_chunks::<ADAPTIVE_STATE_WORDS>()
                    .0
                    .iter()
                    .map(|w| w[ADAPTIVE_GENS])
                    .collect())
            }
            _ => Ok(Vec::new()),
        }
    }

    /// Values from one row to the next: the adaptive kernels' rows are not padded.
    fn row_stride(&self, st: usize) -> usize {
        match self {
            Members::Adaptive(a) => a.l.dim,
            _ => st,
        }
    }

    /// The islands' sizes now, as the migration kernel reads them (an adaptive
    /// population shrinks): the adaptive kernels' state, and its stride.
    fn sizes(&self, stream: &CudaStream) -> (*const u32, u32) {
        match self {
            Members::Adaptive(a) => (
                dev(&a.l.state, stream).cast_const(),
                ADAPTIVE_STATE_WORDS as u32,
            ),
            _ => (std::ptr::null(), 0),
        }
    }

    /// Puts every island (`states`, in order) in the buffers as a checkpoint holds it:
    /// a DE island's rows in the first row buffer (every flag stays 0).
    fn put(
        &mut self,
        states: &[&IslandState],
        np: usize,
        dim: usize,
        st: usize,
        stream: &Arc<CudaStream>,
    ) -> Result<()>
    where
        T: Controlled,
    {
        if let Members::Adaptive(_) = self {
            return Err(Error::invalid(
                "archipelago checkpoint of strategy",
                "adaptive",
                "a classic strategy or thesis (an adaptive island's memory and archive are not saved yet)",
            ));
        }
        let name = self.name().to_string();
        let up = |e| cuda_err(format!("{name}: uploading"))(e);
        let mut members = Vec::with_capacity(states.len() * np * st);
        let mut values = Vec::with_capacity(states.len() * np);
        let mut motion = (Vec::new(), Vec::new());
        for s in states {
            let (x, f) = T::parts(s.members.clone()).ok_or_else(|| Error::Input {
                what: "archipelago checkpoint".into(),
                message: format!("its values are not in {}", T::NAME),
            })?;
            members.extend(pad(&x, dim, st));
            values.extend(f);
            if let Some((px, pv)) = &s.motion {
                motion.0.extend(pad(&values_of::<T>(px)?, dim, st));
                motion.1.extend(pad(&values_of::<T>(pv)?, dim, st));
            }
        }
        let (rows, fit, _) = self.state();
        let mut rows = rows.into_iter();
        if let Some(r) = rows.next() {
            stream.memcpy_htod(&members, r).map_err(up)?;
        }
        stream.memcpy_htod(&values, fit).map_err(up)?;
        if let Members::Pso(_) = self {
            // A swarm's rows: personal bests, positions, velocities.
            let (rows, _, _) = self.state();
            let mut rows = rows.into_iter().skip(1);
            for m in [&motion.0, &motion.1] {
                if let Some(r) = rows.next() {
                    stream.memcpy_htod(m, r).map_err(up)?;
                }
            }
        }
        Ok(())
    }

    /// Every island's state, in order (its record from `rec_f`, `rec_x`).
    fn states(
        &mut self,
        rec_f: &CudaSlice<T>,
        rec_x: &CudaSlice<T>,
        np: usize,
        dim: usize,
        st: usize,
        stream: &Arc<CudaStream>,
    ) -> Result<Vec<IslandState>>
    where
        T: Controlled,
    {
        let name = self.name().to_string();
        let down = |e| cuda_err(format!("{name}: reading back"))(e);
        let pso = matches!(self, Members::Pso(_));
        let (rows, values, flags) = self.state();
        let bytes: usize = rows.iter().map(|r| r.len()).sum::<usize>() + values.len();
        check_download(2 * bytes * std::mem::size_of::<T>())?;
        let rows: Vec<Vec<T>> = rows
            .into_iter()
            .map(|r| stream.clone_dtoh(&*r))
            .collect::<std::result::Result<_, _>>()
            .map_err(down)?;
        let fit = stream.clone_dtoh(&*values).map_err(down)?;
        let flags = match flags {
            Some(f) => Some(stream.clone_dtoh(&*f).map_err(down)?),
            None => None,
        };
        let rf = stream.clone_dtoh(rec_f).map_err(down)?;
        let rx = stream.clone_dtoh(rec_x).map_err(down)?;
        let p = fit.len() / np;
        Ok((0..p)
            .map(|q| {
                let (r0, r1) = (q * np * st, (q + 1) * np * st);
                let f = fit[q * np..(q + 1) * np].to_vec();
                let members = match &flags {
                    Some(fl) => gather_state(
                        &rows[0][r0..r1],
                        &rows[1][r0..r1],
                        &fl[q * np..(q + 1) * np],
                        f,
                        dim,
                        st,
                    ),
                    None => T::state(unpad(&rows[0][r0..r1], dim, st), f),
                };
                let motion = pso.then(|| {
                    (
                        T::rows(unpad(&rows[1][r0..r1], dim, st)),
                        T::rows(unpad(&rows[2][r0..r1], dim, st)),
                    )
                });
                IslandState {
                    members,
                    motion,
                    record_x: T::rows(if rf[q].is_nan() {
                        Vec::new()
                    } else {
                        rx[q * st..q * st + dim].to_vec()
                    }),
                    record_f: T::rows(vec![rf[q]]),
                    history: None,
                }
            })
            .collect())
    }

    /// Every buffer an island goes on from, one part per island in each: rows, values,
    /// flags or state words, evaluations.
    #[allow(clippy::type_complexity)]
    fn saved(
        &mut self,
    ) -> (
        Vec<&mut CudaSlice<T>>,
        &mut CudaSlice<T>,
        Option<&mut CudaSlice<u32>>,
        Option<&mut CudaSlice<u64>>,
    ) {
        match self {
            Members::Adaptive(a) => {
                let (rows, fit, state, evals) = a.l.run_buffers();
                (rows, fit, Some(state), Some(evals))
            }
            _ => {
                let (rows, values, flags) = self.state();
                (rows, values, flags, None)
            }
        }
    }

    fn snapshot(&mut self, stream: &Arc<CudaStream>) -> Result<Snapshot<T>> {
        let context = format!("{}: copying the islands' state", self.name());
        let err = |e| cuda_err(context.clone())(e);
        let (rows, values, flags, counts) = self.saved();
        let mut out = Vec::with_capacity(rows.len());
        for r in rows {
            out.push(stream.clone_dtod(&*r).map_err(err)?);
        }
        Ok(Snapshot {
            rows: out,
            values: stream.clone_dtod(&*values).map_err(err)?,
            flags: match flags {
                Some(f) => Some(stream.clone_dtod(&*f).map_err(err)?),
                None => None,
            },
            counts: match counts {
                Some(c) => Some(stream.clone_dtod(&*c).map_err(err)?),
                None => None,
            },
        })
    }

    /// Puts islands `k0 .. k1` of `p` back as `snap` holds them (each buffer holds one
    /// equal part per island).
    fn restore(
        &mut self,
        snap: &Snapshot<T>,
        k0: usize,
        k1: usize,
        p: usize,
        stream: &Arc<CudaStream>,
    ) -> Result<()> {
        let (rows, values, flags, counts) = self.saved();
        for (dst, src) in rows.into_iter().zip(&snap.rows) {
            part(src, dst, k0, k1, p, stream)?;
        }
        part(&snap.values, values, k0, k1, p, stream)?;
        if let (Some(dst), Some(src)) = (flags, &snap.flags) {
            part(src, dst, k0, k1, p, stream)?;
        }
        if let (Some(dst), Some(src)) = (counts, &snap.counts) {
            part(src, dst, k0, k1, p, stream)?;
        }
        Ok(())
    }

    /// Copies islands `k0 .. k1` of `p` into `frozen` (a snapshot of all islands, made
    /// here the first time).
    fn freeze(
        &mut self,
        frozen: &mut Option<Snapshot<T>>,
        k0: usize,
        k1: usize,
        p: usize,
        stream: &Arc<CudaStream>,
    ) -> Result<()> {
        let Some(snap) = frozen.as_mut() else {
            *frozen = Some(self.snapshot(stream)?);
            return Ok(());
        };
        let (rows, values, flags, counts) = self.saved();
        for (src, dst) in rows.into_iter().zip(&mut snap.rows) {
            part(src, dst, k0, k1, p, stream)?;
        }
        part(values, &mut snap.values, k0, k1, p, stream)?;
        if let (Some(src), Some(dst)) = (flags, &mut snap.flags) {
            part(src, dst, k0, k1, p, stream)?;
        }
        if let (Some(src), Some(dst)) = (counts, &mut snap.counts) {
            part(src, dst, k0, k1, p, stream)?;
        }
        Ok(())
    }

    /// The members the migration kernel moves: rows, the second row buffer and flags
    /// (DE), the positions written with them (PSO), and their values.
    fn migrating(&self, stream: &CudaStream) -> (*mut T, *mut T, *const u32, *mut T, *mut T) {
        let null = std::ptr::null_mut();
        let own = |rows: &[CudaSlice<T>], also: Option<usize>, values: &CudaSlice<T>| {
            (
                dev(&rows[0], stream),
                null,
                std::ptr::null(),
                also.map_or(null, |k| dev(&rows[k], stream)),
                dev(values, stream),
            )
        };
        match self {
            Members::De(l) => (
                dev(&l.pop_a, stream),
                dev(&l.pop_b, stream),
                dev(&l.flags, stream),
                null,
                dev(&l.fit, stream),
            ),
            Members::Adaptive(a) => (
                dev(&a.l.x, stream),
                null,
                std::ptr::null(),
                null,
                dev(&a.l.fit, stream),
            ),
            Members::Pso(l) => own(&l.rows, l.also, &l.values),
            Members::Ga(l) => own(&l.rows, l.also, &l.values),
        }
    }

    fn gens_done_ptr(&self, stream: &CudaStream) -> *mut u32 {
        match self {
            Members::De(l) => dev(&l.gens_done, stream),
            Members::Adaptive(a) => dev(&a.gens_done, stream),
            Members::Pso(l) => dev(&l.gens_done, stream),
            Members::Ga(l) => dev(&l.gens_done, stream),
        }
    }
}

impl CudaEngine {
    /// Runs archipelagos on the GPU, one result each in order; compatible ones (equal
    /// but for seed and stream) share launches. The observer (for a single archipelago)
    /// sees the overall best after every stretch of generations between two events.
    pub fn run_archipelagos(
        &self,
        list: &[Archipelago],
        observer: Option<Observer>,
    ) -> Result<Vec<ArchipelagoResult>> {
        let mut watch = IslandsWatch {
            observer,
            ..IslandsWatch::default()
        };
        let entries = list
            .iter()
            .cloned()
            .map(ArchipelagoEntry::Pending)
            .collect();
        self.run_archipelago_entries(entries, &mut watch)?
            .into_iter()
            .map(|r| {
                r.result.ok_or_else(|| {
                    Error::invalid(
                        "archipelago",
                        "stopped",
                        "run to its end (nothing stops it)",
                    )
                })
            })
            .collect()
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
        let mut members = match a0.algorithm() {
            Algorithm::De if template.adaptive().is_some() => {
                Members::Adaptive(Box::new(AdaptiveIslands {
                    l: self.prepare_adaptive::<T>(&refs, stream.clone(), Layout::Batch)?,
                    started: false,
                    gens_done: stream
                        .alloc_zeros::<u32>(p)
                        .map_err(cuda_err("adaptive islands: allocating"))?,
                }))
            }
            Algorithm::De => Members::De(Box::new(self.alloc_batch::<T>(
                &refs,
                stream.clone(),
                true,
            )?)),
            Algorithm::Pso(pso) => {
                Members::Pso(Box::new(self.alloc_swarm::<T>(&refs, &pso, &stream)?))
            }
            Algorithm::Ga(ga) => {
                Members::Ga(Box::new(self.alloc_genetic::<T>(&refs, &ga, &stream)?))
            }
        };
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
                let gens = members.generations(&stream)?;
                let budget = template
                    .adaptive()
                    .map_or(u64::MAX, |ad| ad.max_evaluations);
                for (a, e) in ended.iter_mut().enumerate() {
                    if e.is_none() && evals[a * n] >= budget {
                        *e = Some(gens[a * n]);
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
        let mut results = Vec::with_capacity(na);
        for ((a, arch), state) in list.iter().enumerate().zip(finals) {
            let elapsed = before[a] + start.elapsed();
            // Stopped before its end, it is at the group's generation.
            let ga = ended[a].unwrap_or(g);
            let early = ended[a].is_none();
            let isl = a * n..(a + 1) * n;
            let mut b = isl.start;
            for q in isl.clone() {
                if better(rf[q], q as u32, rf[b], b as u32) {
                    b = q;
                }
            }
            let overall_f = rf[b].to_f64();
            let result = |q: usize, job: &Job, stream: u32, evaluations: u64| {
                RunResult::ended(
                    job,
                    Ending {
                        best_x: DVector::from_iterator(
                            dim as usize,
                            rx[q * rst..q * rst + dim as usize]
                                .iter()
                                .map(|v| v.to_f64()),
                        ),
                        best_f: rf[q].to_f64(),
                        generations: ga,
                        evaluations,
                        termination: if early {
                            Termination::Stopped
                        } else if spent[a] && target.is_none_or(|t| overall_f > t) {
                            Termination::MaxEvaluations
                        } else {
                            termination(job, ga, overall_f)
                        },
                        elapsed,
                        history: None,
                        layout: RunLayout::Islands,
                        stream,
                    },
                )
            };
            let evals_of = |q: usize| {
                island_evals
                    .as_ref()
                    .map_or(jobs[q].evaluations(ga), |e| e[q])
            };
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
            results.push((
                ArchipelagoResult {
                    islands,
                    best_island: b - isl.start,
                    overall,
                    migrations: migrations[a],
                    first_hit: target.filter(|&t| overall_f <= t).map(|_| ga),
                },
                state,
            ));
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
