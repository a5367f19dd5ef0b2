//! The islands' buffers on the GPU: a batch launch of DE populations, a launch of the
//! adaptive kernels, or of the swarms' or the GA's kernel, and what the archipelago's
//! run does with them (launch, copy out and back, hand to the migration kernel, put a
//! checkpoint in and take one out).

use super::super::adaptive::AdaptiveLaunch;
use super::super::batch::BatchLaunch;
use super::super::engine::cuda_err;
use super::super::kernels::GpuReal;
use super::super::launch::{dev, push_params};
use super::super::state::{Controlled, check_download, gather_state};
use crate::cpu::islands::Archipelago;
use crate::error::{Error, Result};
use crate::run::checkpoint::{ArchipelagoCheckpoint, IslandState};
use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, LaunchConfig};
use gpude_device::abi::{
    ADAPTIVE_GENS, ADAPTIVE_PHASE_RESUME, ADAPTIVE_PHASE_RUN, ADAPTIVE_STATE_WORDS, GeneticParams,
    KernelParams, SwarmParams,
};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Rows of `dim` values, padded to `st` (with zeros).
pub(super) fn pad<T: GpuReal>(rows: &[T], dim: usize, st: usize) -> Vec<T> {
    let n = rows.len() / dim;
    let mut out = vec![T::ZERO; n * st];
    for (o, r) in out.chunks_exact_mut(st).zip(rows.chunks_exact(dim)) {
        o[..dim].copy_from_slice(r);
    }
    out
}

/// Rows padded to `st`, cut to their `dim` values.
pub(super) fn unpad<T: GpuReal>(rows: &[T], dim: usize, st: usize) -> Vec<T> {
    rows.chunks_exact(st)
        .flat_map(|r| r[..dim].iter().copied())
        .collect()
}

/// The values of `rows` in precision `T`.
pub(super) fn values_of<T: Controlled>(rows: &crate::run::checkpoint::Rows) -> Result<Vec<T>> {
    T::of_rows(rows.clone()).ok_or_else(|| Error::Input {
        what: "archipelago checkpoint".into(),
        message: format!("its values are not in {}", T::NAME),
    })
}

/// The islands' records as the migration kernel keeps them: values, and points padded
/// to `st` (zeros while a record is empty).
pub(super) fn records<T: Controlled>(
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
pub(super) fn checkpoints(
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
pub(super) struct Inputs<T> {
    pub(super) seeds: CudaSlice<u64>,
    pub(super) streams: CudaSlice<u32>,
    pub(super) lo: CudaSlice<T>,
    pub(super) hi: CudaSlice<T>,
}

/// A launch of one of the islands' own kernels, one block per island: the swarms'
/// (`gpude_device::abi::SwarmParams`) or the GA's (`GeneticParams`).
pub(super) struct OwnLaunch<T: GpuReal, P> {
    pub(super) name: String,
    pub(super) func: CudaFunction,
    pub(super) cfg: LaunchConfig,
    pub(super) params: P,
    /// The row buffers a launch changes (`np · stride` per island): the members first
    /// (a swarm's personal bests, the GA's population), then the others.
    pub(super) rows: Vec<CudaSlice<T>>,
    /// For a swarm, the index in `rows` of the positions a migrant also becomes.
    pub(super) also: Option<usize>,
    /// The members' values (`np` per island).
    pub(super) values: CudaSlice<T>,
    pub(super) gens_done: CudaSlice<u32>,
    pub(super) best_f: CudaSlice<T>,
    pub(super) _keep: (Inputs<T>, Vec<CudaSlice<T>>, CudaSlice<u32>),
}

/// The generation limit field of an own kernel's parameters.
pub(super) trait Limit {
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
    pub(super) fn launch(&mut self, end: u32, stream: &CudaStream) -> Result<()> {
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
pub(super) struct OwnStart<T> {
    pub(super) name: String,
    pub(super) func: CudaFunction,
    pub(super) cfg: LaunchConfig,
    pub(super) stream: Arc<CudaStream>,
    pub(super) inputs: Inputs<T>,
    pub(super) rows: Vec<CudaSlice<T>>,
    pub(super) values: CudaSlice<T>,
    pub(super) scratch_f: CudaSlice<T>,
    pub(super) scratch_i: CudaSlice<u32>,
    pub(super) gens_done: CudaSlice<u32>,
    pub(super) best_f: CudaSlice<T>,
}

impl<T: GpuReal> OwnStart<T> {
    /// `n` zeroed values.
    pub(super) fn alloc(&self, n: usize) -> Result<CudaSlice<T>> {
        self.stream
            .alloc_zeros::<T>(n.max(1))
            .map_err(cuda_err(format!("{}: allocating", self.name)))
    }

    /// The device address of a buffer.
    pub(super) fn ptr<U>(&self, b: &CudaSlice<U>) -> *mut U {
        dev(b, &self.stream)
    }

    /// The launch with these parameters; `also`: the index in the rows of a swarm's
    /// positions; `extra`: the kernel's own buffer, kept alive with it.
    pub(super) fn launch<P>(
        self,
        params: P,
        also: Option<usize>,
        extra: CudaSlice<T>,
    ) -> OwnLaunch<T, P> {
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
pub(super) enum Members<T: GpuReal> {
    De(Box<BatchLaunch<T>>),
    Adaptive(Box<AdaptiveIslands<T>>),
    Pso(Box<OwnLaunch<T, SwarmParams<T>>>),
    Ga(Box<OwnLaunch<T, GeneticParams<T>>>),
}

/// Adaptive DE islands: a launch of the adaptive kernels (one block per island) whose
/// first launch initialises the islands and the others go on from the buffers
/// (`ADAPTIVE_PHASE_RESUME`), and the marks the migration kernel reads (the adaptive
/// kernels keep their generation count in their state).
pub(super) struct AdaptiveIslands<T: GpuReal> {
    pub(super) l: AdaptiveLaunch<T>,
    pub(super) started: bool,
    pub(super) gens_done: CudaSlice<u32>,
}

/// Copies islands `k0 .. k1` of `p` from `src` to `dst` (each holds one equal part per
/// island).
pub(super) fn part<U: cudarc::driver::DeviceRepr>(
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
pub(super) struct Snapshot<T> {
    pub(super) rows: Vec<CudaSlice<T>>,
    pub(super) values: CudaSlice<T>,
    /// DE's flags, or an adaptive island's state words.
    pub(super) flags: Option<CudaSlice<u32>>,
    /// An adaptive island's evaluations.
    pub(super) counts: Option<CudaSlice<u64>>,
}

impl<T: GpuReal> Members<T> {
    pub(super) fn name(&self) -> &str {
        match self {
            Members::De(l) => &l.name,
            Members::Adaptive(a) => &a.l.name,
            Members::Pso(l) => &l.name,
            Members::Ga(l) => &l.name,
        }
    }

    pub(super) fn launch(&mut self, end: u32, stream: &CudaStream) -> Result<()> {
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

    pub(super) fn gens_done(&mut self) -> &mut CudaSlice<u32> {
        match self {
            Members::De(l) => &mut l.gens_done,
            Members::Adaptive(a) => &mut a.gens_done,
            Members::Pso(l) => &mut l.gens_done,
            Members::Ga(l) => &mut l.gens_done,
        }
    }

    pub(super) fn best_f(&self) -> &CudaSlice<T> {
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
    pub(super) fn state(
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
    pub(super) fn evaluations(&self, stream: &Arc<CudaStream>) -> Result<Option<Vec<u64>>> {
        match self {
            Members::Adaptive(a) => stream
                .clone_dtoh(&a.l.evaluations)
                .map(Some)
                .map_err(cuda_err(format!("{}: reading back", a.l.name))),
            _ => Ok(None),
        }
    }

    /// Each adaptive island's generations done (from its state; empty for the others).
    pub(super) fn generations(&self, stream: &Arc<CudaStream>) -> Result<Vec<u32>> {
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
    pub(super) fn row_stride(&self, st: usize) -> usize {
        match self {
            Members::Adaptive(a) => a.l.dim,
            _ => st,
        }
    }

    /// The islands' sizes now, as the migration kernel reads them (an adaptive
    /// population shrinks): the adaptive kernels' state, and its stride.
    pub(super) fn sizes(&self, stream: &CudaStream) -> (*const u32, u32) {
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
    pub(super) fn put(
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
    pub(super) fn states(
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
    pub(super) fn saved(
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

    pub(super) fn snapshot(&mut self, stream: &Arc<CudaStream>) -> Result<Snapshot<T>> {
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
    pub(super) fn restore(
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
    pub(super) fn freeze(
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
    pub(super) fn migrating(
        &self,
        stream: &CudaStream,
    ) -> (*mut T, *mut T, *const u32, *mut T, *mut T) {
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

    pub(super) fn gens_done_ptr(&self, stream: &CudaStream) -> *mut u32 {
        match self {
            Members::De(l) => dev(&l.gens_done, stream),
            Members::Adaptive(a) => dev(&a.gens_done, stream),
            Members::Pso(l) => dev(&l.gens_done, stream),
            Members::Ga(l) => dev(&l.gens_done, stream),
        }
    }
}
