//! One archipelago over several GPUs. Each GPU holds a contiguous part of the islands
//! (members, records and the migration kernel's per-island buffers) and runs it in its
//! own launches; every GPU holds the emigrants of all islands. At a migration event each
//! GPU copies its islands' emigrants out (phase 0 of the migration kernel, which indexes
//! them by the island's place in the archipelago), the emigrants of every part (and the
//! random ring, drawn by island 0) are copied to every other GPU through the host, and
//! then each GPU brings its islands' migrants in (phase 1). Every island's operations and
//! draws are the ones it has on one GPU, so the archipelago has the same bits on any
//! number of GPUs.
//!
//! The copies go through the host: an event moves `migrants · islands` rows, a few
//! kilobytes to a few hundred (peer copies over NVLink would save their latency, tens of
//! microseconds per event).

use super::{End, MIGRATE_THREADS, Members, Records, checkpoints, unsupported};
use crate::cpu::islands::{Algorithm, Archipelago, ArchipelagoResult};
use crate::cuda::engine::{CudaEngine, cuda_err};
use crate::cuda::kernels::Kernel;
use crate::cuda::launch::{dev, push_params};
use crate::cuda::state::Controlled;
use crate::error::Result;
use crate::job::config::Job;
use crate::run::archipelago::{ArchipelagoRan, GroupControl, IslandsWatch, drive};
use crate::run::checkpoint::{ArchipelagoCheckpoint, ArchipelagoEntry};
use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, LaunchConfig};
use gpude_device::abi::MigrateParams;
use gpude_device::lanes::stride;
use gpude_device::migration::Topology;
use gpude_device::migration::sources;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Can `a`'s islands be shared out among `gpus` GPUs? Classic DE, PSO or the GA that
/// runs on the GPU, without a target (whose reruns need every island in one place), with
/// at least one island per GPU.
pub(crate) fn splits(a: &Archipelago, gpus: usize) -> bool {
    gpus > 1
        && a.islands() as usize >= gpus
        && a.template().target_value().is_none()
        && !(matches!(a.algorithm(), Algorithm::De) && a.template().adaptive().is_some())
        && unsupported(a).is_none()
}

/// One GPU's part of the archipelago: islands `first .. first + count`.
struct Part<T: Controlled> {
    first: usize,
    count: usize,
    stream: Arc<CudaStream>,
    members: Members<T>,
    name: String,
    migrate: CudaFunction,
    threads: u32,
    /// Every island's emigrants (the whole archipelago's).
    out_rows: CudaSlice<T>,
    out_fit: CudaSlice<T>,
    ring: CudaSlice<u32>,
    /// This part's islands' targets, records and scratch.
    pick: CudaSlice<u32>,
    rec_f: CudaSlice<T>,
    rec_x: CudaSlice<T>,
    scratch_f: CudaSlice<T>,
    scratch_i: CudaSlice<u32>,
    seeds: CudaSlice<u64>,
    streams: CudaSlice<u32>,
}

impl<T: Controlled> Part<T> {
    /// Islands `first ..` of `a` (their jobs `jobs`) on `engine`, at generation 0.
    fn new(engine: &CudaEngine, a: &Archipelago, jobs: &[Job], first: usize) -> Result<Self> {
        engine
            .context()
            .bind_to_thread()
            .map_err(cuda_err("binding a GPU"))?;
        let refs: Vec<&Job> = jobs.iter().collect();
        let p = refs.len();
        let n = a.islands() as usize;
        let template = a.template();
        let (dim, np) = (template.dim(), template.pop() as usize);
        let st = stride(dim) as usize;
        let k = a.migrants() as usize;
        let stream = engine.first_stream();
        let members = engine.members::<T>(a.algorithm(), &refs, &stream)?;
        let name = format!("{} islands", members.name());
        let rst = members.row_stride(st);
        let t = std::mem::size_of::<T>() as u64;
        engine.check_memory(
            t * (n * k * rst + n * k + p + p * rst + 32 * p) as u64
                + 4 * (p * k * n + n + 32 * p) as u64,
        )?;
        let migrate = engine.function(Kernel::Migrate(T::KERNEL))?;
        let threads = engine
            .max_threads(&migrate, &name)?
            .min(MIGRATE_THREADS)
            .min((np as u32).next_multiple_of(32));
        let err = |what: &'static str| {
            let name = name.clone();
            move |e| cuda_err(format!("{name}: {what}"))(e)
        };
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
        let seeds: Vec<u64> = jobs.iter().map(|j| j.seed()).collect();
        let streams: Vec<u32> = jobs.iter().map(|j| j.stream()).collect();
        Ok(Part {
            first,
            count: p,
            out_rows: alloc(n * k * rst)?,
            out_fit: alloc(n * k)?,
            ring: allocu(n)?,
            pick: allocu(p * k * n)?,
            // The records: empty (NaN) at the start.
            rec_f: stream
                .clone_htod(&vec![T::NAN; p])
                .map_err(err("uploading"))?,
            rec_x: alloc(p * rst)?,
            scratch_f: alloc(32 * p)?,
            scratch_i: allocu(32 * p)?,
            seeds: stream.clone_htod(&seeds).map_err(err("uploading"))?,
            streams: stream.clone_htod(&streams).map_err(err("uploading"))?,
            members,
            name,
            migrate,
            threads,
            stream,
        })
    }

    /// Launches `phase` of the migration kernel after generation `g` on this part.
    fn migrate(&self, a: &Archipelago, phase: u32, g: u32) -> Result<()> {
        let s = &*self.stream;
        let template = a.template();
        let (dim, np) = (template.dim(), template.pop());
        let rst = self.members.row_stride(stride(dim) as usize);
        let (rows_a, rows_b, flags, also, fit) = self.members.migrating(s);
        let (sizes, size_stride) = self.members.sizes(s);
        let params = MigrateParams::<T> {
            phase,
            islands: a.islands(),
            first: self.first as u32,
            np,
            dim,
            g,
            migrants: a.migrants(),
            topology: a.topology() as u32,
            emigrants: a.emigrants() as u32,
            replace: a.replacement() as u32,
            row_stride: rst as u32,
            size_stride,
            seeds: dev(&self.seeds, s),
            streams: dev(&self.streams, s),
            sizes,
            rows_a,
            rows_b,
            flags,
            also,
            fit,
            gens_done: self.members.gens_done_ptr(s),
            out_rows: dev(&self.out_rows, s),
            out_fit: dev(&self.out_fit, s),
            pick: dev(&self.pick, s),
            ring: dev(&self.ring, s),
            rec_f: dev(&self.rec_f, s),
            rec_x: dev(&self.rec_x, s),
            scratch_f: dev(&self.scratch_f, s),
            scratch_i: dev(&self.scratch_i, s),
        };
        let mut b = s.launch_builder(&self.migrate);
        push_params(&mut b, &params);
        // SAFETY: the parameters are the kernel's (checked against the PTX at build
        // time); the members' buffers hold `count` islands of np rows (and values,
        // flags), the per-island buffers (pick: k·islands each, records, scratch, seeds,
        // streams) `count` islands, and the emigrants' buffers (out_rows, out_fit, ring)
        // every island of the archipelago, which the kernel indexes by first + block
        // (< islands); all of them outlive the launch.
        unsafe {
            b.launch(LaunchConfig {
                grid_dim: (self.count as u32, 1, 1),
                block_dim: (self.threads, 1, 1),
                shared_mem_bytes: 0,
            })
        }
        .map_err(cuda_err(format!("{}: launching the migration", self.name)))?;
        Ok(())
    }
}

/// Every part's emigrants (and the random ring, which island 0 draws) to every other
/// part, through the host.
fn exchange<T: Controlled>(parts: &mut [Part<T>], a: &Archipelago, rst: usize) -> Result<()> {
    let k = a.migrants() as usize;
    let mut out = Vec::with_capacity(parts.len());
    for p in parts.iter() {
        let err = |e| cuda_err(format!("{}: reading the emigrants", p.name))(e);
        let (lo, hi) = (p.first * k, (p.first + p.count) * k);
        let rows = p
            .stream
            .clone_dtoh(&p.out_rows.slice(lo * rst..hi * rst))
            .map_err(err)?;
        let fit = p.stream.clone_dtoh(&p.out_fit.slice(lo..hi)).map_err(err)?;
        out.push((lo, hi, rows, fit));
    }
    let ring = if a.topology() == Topology::Random {
        Some(
            parts[0]
                .stream
                .clone_dtoh(&parts[0].ring)
                .map_err(cuda_err("reading the ring"))?,
        )
    } else {
        None
    };
    for (i, p) in parts.iter_mut().enumerate() {
        let err = |e| cuda_err(format!("{}: sending the emigrants", p.name))(e);
        for (j, (lo, hi, rows, fit)) in out.iter().enumerate() {
            if i == j {
                continue;
            }
            p.stream
                .memcpy_htod(rows, &mut p.out_rows.slice_mut(lo * rst..hi * rst))
                .map_err(err)?;
            p.stream
                .memcpy_htod(fit, &mut p.out_fit.slice_mut(*lo..*hi))
                .map_err(err)?;
        }
        if let (Some(r), true) = (&ring, i > 0) {
            p.stream.memcpy_htod(r, &mut p.ring).map_err(err)?;
        }
    }
    Ok(())
}

/// Runs archipelago `a` from generation 0 to its limit with its islands shared out
/// among `engines` (contiguous parts of near-equal size, one per engine; engines on the
/// same GPU run the same code one part after the other), with the bits that one engine
/// gives it. `Solver` does this with several GPUs; an archipelago with a target, of
/// adaptive DE or with fewer islands than engines is refused.
pub fn run_archipelago_across(
    engines: &[&CudaEngine],
    a: &Archipelago,
) -> Result<ArchipelagoResult> {
    let mut ran = run_across_entries(
        engines,
        ArchipelagoEntry::Pending(a.clone()),
        &mut IslandsWatch::default(),
    )?;
    ran.pop()
        .and_then(|r| r.result)
        .ok_or_else(|| crate::error::Error::Cuda {
            context: "an archipelago over several engines".into(),
            message: "it returned no result".into(),
        })
}

/// [`run_archipelago_across`] under `watch`: its stop flag ends the archipelago at the
/// next migration event (or the limit), with its state; `keep` keeps the state of an
/// archipelago that ended too. A watch with an observer or saves during the run, or a
/// started archipelago, is refused (they run on one GPU: see `Solver`). Returns the
/// one entry's [`ArchipelagoRan`], as [`CudaEngine::run_archipelago_entries`] does.
pub fn run_across_entries(
    engines: &[&CudaEngine],
    entry: ArchipelagoEntry,
    watch: &mut IslandsWatch,
) -> Result<Vec<ArchipelagoRan>> {
    let a = entry.archipelago();
    let watched = watch.observer.is_some() || (watch.every > 0 && watch.save.is_some());
    if watched || matches!(entry, ArchipelagoEntry::Started(_)) {
        return Err(crate::error::Error::invalid(
            "archipelago over several engines",
            if watched {
                "observed or saved during the run"
            } else {
                "started"
            },
            "a fresh archipelago, without an observer or saves during the run",
        ));
    }
    if !splits(a, engines.len()) {
        return Err(crate::error::Error::invalid(
            "archipelago over several engines",
            format!("{} islands on {} engines", a.islands(), engines.len()),
            "two or more engines, at least one island each, no target, classic DE, PSO or the GA on the GPU",
        ));
    }
    drive(
        vec![entry],
        watch,
        |_, _| false,
        |group, control| {
            let a = group[0].archipelago();
            let one = match a.template().precision() {
                crate::job::precision::Precision::F32 => run_across::<f32>(engines, a, control)?,
                crate::job::precision::Precision::F64 => run_across::<f64>(engines, a, control)?,
            };
            Ok(vec![one])
        },
    )
}

/// [`run_archipelago_across`] in precision `T`, under `control` (its stop flag and
/// `keep`): the result and, when stopped or kept, the state at the end.
fn run_across<T: Controlled>(
    engines: &[&CudaEngine],
    a: &Archipelago,
    control: &GroupControl,
) -> Result<(ArchipelagoResult, Option<ArchipelagoCheckpoint>)> {
    let start = Instant::now();
    let template = a.template();
    let n = a.islands() as usize;
    let jobs: Vec<Job> = (0..a.islands()).map(|k| a.island_job(k)).collect();
    let dim = template.dim();
    let gmax = template.generations();
    let used = engines.len().clamp(1, n);
    let mut parts: Vec<Part<T>> = Vec::with_capacity(used);
    let mut at = 0;
    for (i, e) in engines.iter().take(used).enumerate() {
        let count = n / used + usize::from(i < n % used);
        parts.push(Part::new(e, a, &jobs[at..at + count], at)?);
        at += count;
    }
    let rst = parts[0].members.row_stride(stride(dim) as usize);
    let interval = a.interval();
    let ns = sources(a.topology(), n as u32);
    let mut g = 0;
    let mut migrations = 0;
    let mut stopped = false;
    while g < gmax {
        if control.stopping() {
            stopped = true;
            break;
        }
        let end = gmax.min((g / interval + 1).saturating_mul(interval));
        // Every GPU runs its islands' stretch at once (the launches return at once).
        for p in parts.iter_mut() {
            p.members.launch(end, &p.stream)?;
        }
        g = end;
        if g < gmax && n > 1 && ns > 0 && g.is_multiple_of(interval) {
            for p in &parts {
                p.migrate(a, 0, g)?;
            }
            exchange(&mut parts, a, rst)?;
            for p in &parts {
                p.migrate(a, 1, g)?;
            }
            migrations += 1;
        }
    }
    // The state at the end (before the records are taken), when stopped or asked for.
    let state = if stopped || control.keep {
        let np = template.pop() as usize;
        let mut states = Vec::with_capacity(n);
        for p in parts.iter_mut() {
            states.extend(p.members.states(
                &p.rec_f,
                &p.rec_x,
                np,
                dim as usize,
                rst,
                &p.stream,
            )?);
        }
        let ended = [(!stopped).then_some(g)];
        checkpoints(
            &[a],
            states,
            n,
            g,
            &ended,
            &[migrations],
            &[Duration::ZERO],
            start,
        )
        .pop()
    } else {
        None
    };
    // The records at the end, every island's, and the evaluations (adaptive: counted).
    let mut rf: Vec<T> = Vec::with_capacity(n);
    let mut rx: Vec<T> = Vec::with_capacity(n * rst);
    let mut evals: Option<Vec<u64>> = Some(Vec::new());
    for p in &parts {
        p.migrate(a, 2, g)?;
        let err = |e| cuda_err(format!("{}: reading back", p.name))(e);
        rf.extend(p.stream.clone_dtoh(&p.rec_f).map_err(err)?);
        rx.extend(p.stream.clone_dtoh(&p.rec_x).map_err(err)?);
        let e = p.members.evaluations(&p.stream)?;
        evals = match (evals, e) {
            (Some(mut all), Some(e)) => {
                all.extend(e);
                Some(all)
            }
            _ => None,
        };
    }
    let elapsed = start.elapsed();
    // The islands that share island q's launches (its part's).
    let shared = |q: usize| {
        parts
            .iter()
            .find(|p| (p.first..p.first + p.count).contains(&q))
            .map_or(1, |p| p.count as u32)
    };
    let records = Records {
        rec_f: &rf,
        rec_x: &rx,
        rst,
        evaluations: evals.as_deref(),
        launch_runs: &shared,
    };
    let end = End {
        generation: g,
        early: stopped,
        spent: false,
        migrations,
        elapsed,
    };
    let result = records.result(a, &jobs, 0, end);
    Ok((result, state))
}
