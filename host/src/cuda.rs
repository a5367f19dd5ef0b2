//! The CUDA engine: loads the embedded PTX with cudarc (the driver is found at run
//! time, so nothing CUDA is needed to build) and drives the kernels of
//! `gpude_device::kernels`.
//!
//! All launch `unsafe` lives in this module; each launch is preceded by checks of the
//! buffer lengths it relies on.

use crate::config::Job;
use crate::error::{Error, Result};
use crate::result::{Ending, RunResult};
use cudarc::driver::sys::CUfunction_attribute_enum;
use cudarc::driver::{
    CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, DevicePtr, DeviceRepr,
    DriverError, LaunchArgs, LaunchConfig, PushKernelArg, ValidAsZeroBits,
};
use gpude_device::abi::{
    BatchParams, EvalParams, GridParams, KernelParams, ParamReal, Run, StepParams,
};
use gpude_device::lanes::{group_width, stride};
use gpude_device::registry::{
    Family, KERNEL_NAME_MAX, KernelKey, KernelPrecision, Layout, PIPELINED_SUFFIX,
};
use gpude_device::{Formula, Function, Real};
use nalgebra::DVector;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

mod adaptive;
mod callback;
mod ceilings;
mod external;
mod resident;
pub use ceilings::Ceilings;
pub use external::{check_objective, objective_symbol};
pub use resident::BatchKernel;

/// A final population read back from the GPU: rows (`dim` values each) and values.
#[derive(Clone, Debug, PartialEq)]
pub struct FinalPopulation {
    pub x: Vec<f64>,
    pub fit: Vec<f64>,
}

/// Words of the grid kernels' state (see the device crate's `STATE_*`).
pub(crate) const STATE_GEN: usize = 0;
pub(crate) const STATE_DONE: usize = 2;
pub(crate) const STATE_BEST: usize = 3;
pub(crate) const STATE_WORDS: usize = 4;

/// How a job is laid out on the GPU.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Mode {
    /// Batch for small populations, grid for one large one.
    #[default]
    Auto,
    /// One block per population, all generations in one launch.
    Batch,
    /// One population over the whole GPU: one cooperative launch for the whole run,
    /// a grid barrier between generations.
    Grid,
    /// One population over the whole GPU, one launch per generation (for comparison).
    Steps,
}

impl Mode {
    pub fn parse(s: &str) -> Result<Mode> {
        match s.trim().to_ascii_lowercase().as_str() {
            "auto" => Ok(Mode::Auto),
            "batch" | "block" => Ok(Mode::Batch),
            "grid" | "whole-gpu" => Ok(Mode::Grid),
            "steps" => Ok(Mode::Steps),
            _ => Err(Error::UnknownName {
                kind: "GPU mode",
                name: crate::error::clip(s),
                known: "auto, batch, grid, steps".into(),
            }),
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Mode::Auto => "auto",
            Mode::Batch => "batch",
            Mode::Grid => "grid",
            Mode::Steps => "steps",
        }
    }
}

pub(crate) fn cuda_err(context: impl Into<String>) -> impl FnOnce(DriverError) -> Error {
    let context = context.into();
    move |source| Error::Driver { context, source }
}

/// Is a CUDA driver library present? (cudarc panics on first use without one.)
pub fn driver_present() -> bool {
    // SAFETY: only tries to open the driver library; no CUDA call is made.
    unsafe { cudarc::driver::sys::is_culib_present() }
}

/// A GPU with the gpude module loaded, and streams to spread launches over.
pub struct CudaEngine {
    ctx: Arc<CudaContext>,
    /// Kernel name → its own PTX module, compiled by the driver on first use.
    kernels: HashMap<&'static str, &'static str>,
    streams: Vec<Arc<CudaStream>>,
    functions: Mutex<HashMap<String, (Arc<CudaModule>, CudaFunction)>>,
    /// A control block kept between controlled runs (pinned allocations are slow).
    pub(crate) blocks: Mutex<Option<crate::cuda_control::MappedBlock>>,
    sm_count: u32,
    name: String,
    capability: (i32, i32),
    /// The kernel plain batch launches use (see [`BatchKernel`]).
    batch_kernel: Mutex<BatchKernel>,
    /// The most spare rows a resident block gets (`None`: as many as fit).
    spare_cap: Mutex<Option<u32>>,
    shared_limits: resident::SharedLimits,
}

/// The name of a job's kernel in `layout` ([`KernelKey`]): the thesis strategy with
/// init-only bounds has its own specialised family, and one more for the alternatives of
/// a [`gpude_device::ThesisVariant`] that change the trials.
fn kernel_name<T: Real>(layout: Layout, job: &Job) -> String {
    let thesis = job.strategy() == gpude_device::Strategy::Thesis
        && job.bounds() == gpude_device::BoundPolicy::InitOnly;
    let key = KernelKey {
        layout,
        family: match (thesis, job.thesis_variant().changes_trials()) {
            (true, false) => Family::Thesis,
            (true, true) => Family::ThesisVariant,
            (false, _) => Family::Classic,
        },
        // Host callbacks run in the host-callback family; objectives with a separable
        // form in the job's precision in the separable family, the others than
        // built-ins in the external family (both linked in).
        function: match job.builtin() {
            Some(f) => f.key(),
            None if job.objective().is_host_callback() => gpude_device::registry::HOST,
            None if job
                .objective()
                .separable_flags(precision_of::<T>())
                .is_some() =>
            {
                gpude_device::registry::SEPARABLE
            }
            None => gpude_device::registry::EXTERNAL,
        },
        precision: if T::NAME == "f32" {
            KernelPrecision::F32
        } else {
            KernelPrecision::F64
        },
    };
    let mut buf = [0u8; KERNEL_NAME_MAX];
    key.name_into(&mut buf).to_string()
}

/// The precision of the real type `T`.
fn precision_of<T: Real>() -> crate::Precision {
    if T::NAME == "f32" {
        crate::Precision::F32
    } else {
        crate::Precision::F64
    }
}

/// A floating type the kernels exist for.
pub trait GpuReal: Real + ParamReal + DeviceRepr + ValidAsZeroBits + Unpin {}
impl GpuReal for f32 {}
impl GpuReal for f64 {}

/// A job's run settings, as every DE kernel takes them (the first field of each family's
/// parameter struct).
fn run_params<T: GpuReal>(job: &Job) -> Run<T> {
    Run {
        f: T::of(job.f()),
        cr: T::of(job.cr()),
        // No target: NaN, which no value reaches (−∞ would be reached by an objective
        // that overflows to −∞, ending the run early where the CPU engine goes on).
        target: T::of(job.target_value().unwrap_or(f64::NAN)),
        strategy: job.strategy() as u32,
        crossover: job.crossover() as u32,
        bounds: job.bounds() as u32,
        // The separable family reads its objective's flags here (see
        // `gpude_device::abi::Run::formula`).
        formula: match job.objective().separable_flags(precision_of::<T>()) {
            Some(flags) if job.builtin().is_none() => flags.bits(),
            _ => job.formula() as u32,
        },
        dim: job.dim(),
        np: job.pop(),
        gens: job.generations(),
        variant: job.thesis_variant().bits(),
    }
}

/// The device address of a buffer, for a pointer field of a parameter struct.
fn dev<T>(buf: &CudaSlice<T>, stream: &CudaStream) -> *mut T {
    // The engine turns cudarc's event tracking off (see `CudaEngine::new`), so the
    // returned guard records nothing and may go at once.
    let (ptr, _guard) = buf.device_ptr(stream);
    ptr as *mut T
}

/// The device address of an optional buffer; null without one.
fn dev_opt<T>(buf: Option<&CudaSlice<T>>, stream: &CudaStream) -> *mut T {
    buf.map_or(std::ptr::null_mut(), |b| dev(b, stream))
}

/// A byte of a parameter struct, as cudarc hands a kernel parameter to the driver: by
/// the address of its first byte (the driver copies the parameter's declared size).
#[repr(transparent)]
struct ParamByte(u8);

// SAFETY: only the address of a `ParamByte` reaches the driver; `push_params` makes it the
// first byte of a field whose size is the kernel parameter's size (checked against the
// PTX by the build script), and the field outlives the launch builder.
unsafe impl DeviceRepr for ParamByte {}

/// Pushes the fields of `p` as the kernel's parameters, one each, in order: the entry
/// points take their parameter struct's fields (see `gpude_device::abi`).
fn push_params<'a, P: KernelParams>(b: &mut LaunchArgs<'a>, p: &'a P) {
    let base = (p as *const P).cast::<u8>();
    for field in P::FIELDS {
        // SAFETY: `field.offset` is the offset of a field of `P` (the contract of
        // `KernelParams`), so the byte lies inside `*p`, is initialised, and is borrowed
        // for as long as the builder.
        let byte = unsafe { &*base.add(field.offset).cast::<ParamByte>() };
        b.arg(byte);
    }
}

impl CudaEngine {
    /// Opens GPU `device` with the kernels (name, PTX module) and makes `streams`
    /// streams. Each kernel's module is compiled by the driver when first used.
    pub fn new(
        kernels: &'static [(&'static str, &'static str)],
        device: usize,
        streams: usize,
    ) -> Result<Self> {
        if !driver_present() {
            return Err(Error::CudaUnavailable(
                "no NVIDIA driver library (libcuda.so) was found".into(),
            ));
        }
        let n =
            CudaContext::device_count().map_err(|e| Error::CudaUnavailable(format!("{e:?}")))?;
        if n <= 0 {
            return Err(Error::CudaUnavailable("the driver reports no GPU".into()));
        }
        if device >= n as usize {
            return Err(Error::invalid(
                "device",
                device,
                format!("0 ..= {} ({n} GPUs)", n - 1),
            ));
        }
        if streams == 0 || streams > crate::MAX_STREAMS {
            return Err(Error::invalid(
                "streams",
                streams,
                format!("1 ..= {}", crate::MAX_STREAMS),
            ));
        }
        let ctx = CudaContext::new(device).map_err(cuda_err("opening the device"))?;
        // SAFETY: every buffer the engine makes is allocated, used and freed on one
        // stream (a launch's buffers live on the stream it runs on, and are read back
        // with a synchronising copy before they are dropped), so cudarc's per-use events
        // would only add host time to every launch.
        unsafe { ctx.disable_event_tracking() };
        let mut ss = vec![ctx.default_stream()];
        for _ in 1..streams {
            ss.push(ctx.new_stream().map_err(cuda_err("creating a stream"))?);
        }
        use cudarc::driver::sys::CUdevice_attribute_enum as A;
        let sm_count = ctx
            .attribute(A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
            .map_err(cuda_err("reading the multiprocessor count"))? as u32;
        let name = ctx.name().unwrap_or_else(|_| "unknown GPU".into());
        let capability = ctx.compute_capability().unwrap_or((0, 0));
        let attr = |a: A, what: &str| -> Result<u32> {
            ctx.attribute(a)
                .map(|v| v.max(0) as u32)
                .map_err(cuda_err(format!("reading {what}")))
        };
        let shared_limits = resident::SharedLimits {
            per_block_optin: attr(
                A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                "the shared memory per block",
            )?,
            per_sm: attr(
                A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR,
                "the shared memory per multiprocessor",
            )?,
        };
        let batch_kernel = Mutex::new(BatchKernel::from_env()?);
        let spare_cap = Mutex::new(resident::spare_cap_from_env()?);
        Ok(CudaEngine {
            ctx,
            kernels: kernels.iter().copied().collect(),
            streams: ss,
            functions: Mutex::new(HashMap::new()),
            blocks: Mutex::new(None),
            sm_count,
            name,
            capability,
            batch_kernel,
            spare_cap,
            shared_limits,
        })
    }

    pub fn device_name(&self) -> &str {
        &self.name
    }
    pub fn multiprocessors(&self) -> u32 {
        self.sm_count
    }
    pub fn compute_capability(&self) -> (i32, i32) {
        self.capability
    }
    pub fn streams(&self) -> usize {
        self.streams.len()
    }

    /// The device's context (for the control blocks of [`crate::cuda_control`]).
    pub(crate) fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    /// The stream the controlled runs use.
    pub(crate) fn first_stream(&self) -> Arc<CudaStream> {
        self.streams[0].clone()
    }

    fn function(&self, name: &str) -> Result<CudaFunction> {
        let mut cache = self.functions.lock().expect("function cache lock");
        if let Some((_, f)) = cache.get(name) {
            return Ok(f.clone());
        }
        let ptx = self
            .kernels
            .get(name)
            .ok_or_else(|| Error::MissingKernel { name: name.into() })?;
        let ptx = match register_cap(name) {
            Some(cap) => with_register_cap(ptx, cap),
            None => ptx.to_string(),
        };
        let module = self
            .ctx
            .load_module(cudarc::nvrtc::Ptx::from_src(ptx))
            .map_err(cuda_err(format!("loading the module of {name}")))?;
        let f = module
            .load_function(name)
            .map_err(|_| Error::MissingKernel { name: name.into() })?;
        cache.insert(name.into(), (module, f.clone()));
        Ok(f)
    }

    /// Compiles (if not yet) the module of `name`: lets callers keep the driver's
    /// compilation out of timings.
    pub fn prepare(&self, name: &str) -> Result<()> {
        self.function(name).map(|_| ())
    }

    /// The most threads a block of `f` may have (registers permitting), in whole warps.
    fn max_threads(&self, f: &CudaFunction, name: &str) -> Result<u32> {
        let t = f
            .get_attribute(CUfunction_attribute_enum::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)
            .map_err(cuda_err(format!("querying {name}")))?;
        Ok(((t as u32) / 32 * 32).clamp(32, 1024))
    }

    pub(crate) fn check_memory(&self, needed: u64) -> Result<()> {
        let (free, _) = self
            .ctx
            .mem_get_info()
            .map_err(cuda_err("reading free memory"))?;
        // Leave room for the module, the streams and the driver.
        let usable = (free as u64).saturating_sub(64 << 20);
        if needed > usable {
            return Err(Error::OutOfMemory {
                memory: "GPU",
                needed,
                free: free as u64,
            });
        }
        Ok(())
    }

    /// Runs one job; `mode` picks the layout.
    pub fn run(&self, job: &Job, mode: Mode) -> Result<RunResult> {
        if job.objective().is_host_callback() {
            // Its own layout, whatever `mode` says (see `callback.rs`).
            return self
                .callback_run(job, &mut crate::cpu::Control::default())
                .map(|o| o.result);
        }
        job.check()?;
        if crate::adaptive::in_adaptive_kernels(job) {
            return Ok(self.run_adaptive(&[job], mode)?.remove(0).0);
        }
        let mode = match mode {
            Mode::Auto => self.auto_mode(job),
            m => m,
        };
        check_objective(job)?;
        match mode {
            Mode::Grid => match job.precision() {
                crate::Precision::F32 => self.grid::<f32>(job, false).map(|r| r.0),
                crate::Precision::F64 => self.grid::<f64>(job, false).map(|r| r.0),
            },
            Mode::Steps => match job.precision() {
                crate::Precision::F32 => self.steps::<f32>(job, false).map(|r| r.0),
                crate::Precision::F64 => self.steps::<f64>(job, false).map(|r| r.0),
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
            let o = self.callback_run(job, &mut crate::cpu::Control::default())?;
            let (x, fit) = match o.checkpoint.state {
                crate::checkpoint::State::F32 { x, fit } => (
                    x.iter().map(|&v| v as f64).collect(),
                    fit.iter().map(|&v| v as f64).collect(),
                ),
                crate::checkpoint::State::F64 { x, fit } => (x, fit),
            };
            return Ok((o.result, FinalPopulation { x, fit }));
        }
        job.check()?;
        if crate::adaptive::in_adaptive_kernels(job) {
            return Ok(self.run_adaptive(&[job], mode)?.remove(0));
        }
        let mode = match mode {
            Mode::Auto => self.auto_mode(job),
            m => m,
        };
        check_objective(job)?;
        match (mode, job.precision()) {
            (Mode::Grid, crate::Precision::F32) => self
                .grid::<f32>(job, true)
                .map(|(r, p)| (r, p.expect("asked for"))),
            (Mode::Grid, crate::Precision::F64) => self
                .grid::<f64>(job, true)
                .map(|(r, p)| (r, p.expect("asked for"))),
            (Mode::Steps, crate::Precision::F32) => self
                .steps::<f32>(job, true)
                .map(|(r, p)| (r, p.expect("asked for"))),
            (Mode::Steps, crate::Precision::F64) => self
                .steps::<f64>(job, true)
                .map(|(r, p)| (r, p.expect("asked for"))),
            (_, crate::Precision::F32) => {
                let l = self.launch_batch::<f32>(&[job], self.streams[0].clone())?;
                let pop = l.population(0, job)?;
                Ok((l.finish(&[job])?.remove(0), pop))
            }
            (_, crate::Precision::F64) => {
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
        if jobs
            .iter()
            .any(|j| crate::adaptive::in_adaptive_kernels(j) || j.objective().is_host_callback())
        {
            // Host callbacks run one after the other (as on the CPU engine), adaptive
            // jobs go to their own kernels, the other jobs in their launches.
            Job::check_all(jobs)?;
            let (cb, rest): (Vec<usize>, Vec<usize>) =
                (0..jobs.len()).partition(|&k| jobs[k].objective().is_host_callback());
            let (adaptive, plain): (Vec<usize>, Vec<usize>) = rest
                .into_iter()
                .partition(|&k| crate::adaptive::in_adaptive_kernels(&jobs[k]));
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
                crate::Precision::F32 => Pending::F32(self.launch_batch::<f32>(&members, stream)?),
                crate::Precision::F64 => Pending::F64(self.launch_batch::<f64>(&members, stream)?),
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

    /// Runs adaptive jobs (every one of `jobs` must be adaptive, or a classic strategy on
    /// a CEC 2017 function) in the layout `mode` asks for (see
    /// [`crate::adaptive::gpu_layout`]): in the batch layout (`auto`, `batch`) compatible
    /// ones share a launch of the adaptive kernels, one block each, launches spread over
    /// the streams; in the grid layout (`grid`) each runs over the whole GPU in a
    /// cooperative launch of its own, one after the other. One result and final
    /// population per job, in order.
    pub fn run_adaptive(
        &self,
        jobs: &[&Job],
        mode: Mode,
    ) -> Result<Vec<(RunResult, FinalPopulation)>> {
        if jobs.iter().any(|j| j.objective().is_host_callback()) {
            // Host callbacks one at a time (`callback_run`), the others together.
            let (cb, rest): (Vec<usize>, Vec<usize>) =
                (0..jobs.len()).partition(|&k| jobs[k].objective().is_host_callback());
            let mut results: Vec<Option<(RunResult, FinalPopulation)>> = vec![None; jobs.len()];
            let others: Vec<&Job> = rest.iter().map(|&k| jobs[k]).collect();
            if !others.is_empty() {
                for (&k, r) in rest.iter().zip(self.run_adaptive(&others, mode)?) {
                    results[k] = Some(r);
                }
            }
            for k in cb {
                // Its own layout, whatever `mode` says (see `callback.rs`).
                results[k] = Some(self.run_with_population(jobs[k], mode)?);
            }
            return Ok(results
                .into_iter()
                .map(|r| r.expect("every job ran"))
                .collect());
        }
        let mut layout = Layout::Batch;
        for job in jobs {
            layout = crate::adaptive::gpu_layout(mode, job)?;
            if !crate::adaptive::in_adaptive_kernels(job) {
                let name = crate::config::strategy_name(job.strategy());
                return Err(Error::invalid(
                    "strategy",
                    name,
                    format!(
                        "an adaptive strategy (jde, jade, shade, lshade, jso), or any strategy on a CEC 2017 function, in a batch of adaptive runs; run {name} in a batch of its own"
                    ),
                ));
            }
            crate::adaptive::gpu_check(job)?;
        }
        let owned: Vec<Job> = jobs.iter().map(|&j| j.clone()).collect();
        Job::check_all(&owned)?;
        enum Launch {
            F32(adaptive::AdaptiveLaunch<f32>),
            F64(adaptive::AdaptiveLaunch<f64>),
        }
        let launch = |members: &[&Job], stream: Arc<CudaStream>| -> Result<Launch> {
            Ok(match members[0].precision() {
                crate::Precision::F32 => {
                    Launch::F32(self.launch_adaptive(members, stream, layout)?)
                }
                crate::Precision::F64 => {
                    Launch::F64(self.launch_adaptive(members, stream, layout)?)
                }
            })
        };
        let finish = |l: Launch, members: &[&Job]| match l {
            Launch::F32(l) => l.finish(members),
            Launch::F64(l) => l.finish(members),
        };
        let mut results: Vec<Option<(RunResult, FinalPopulation)>> = vec![None; jobs.len()];
        if layout == Layout::Grid {
            // Each run has the whole GPU: one cooperative launch after the other, each
            // read back before the next starts.
            for (k, job) in jobs.iter().enumerate() {
                let l = launch(&[job], self.streams[0].clone())?;
                results[k] = finish(l, &[job])?.pop();
            }
        } else {
            let mut groups: Vec<Vec<usize>> = Vec::new();
            for (k, job) in jobs.iter().enumerate() {
                match groups.iter_mut().find(|g| compatible(jobs[g[0]], job)) {
                    Some(g) => g.push(k),
                    None => groups.push(vec![k]),
                }
            }
            let mut pending = Vec::new();
            for (n, group) in groups.iter().enumerate() {
                let stream = self.streams[n % self.streams.len()].clone();
                let members: Vec<&Job> = group.iter().map(|&k| jobs[k]).collect();
                pending.push((group, launch(&members, stream)?));
            }
            for (group, l) in pending {
                let members: Vec<&Job> = group.iter().map(|&k| jobs[k]).collect();
                for (&k, r) in group.iter().zip(finish(l, &members)?) {
                    results[k] = Some(r);
                }
            }
        }
        Ok(results
            .into_iter()
            .map(|r| r.expect("every job ran"))
            .collect())
    }

    fn launch_batch<T: GpuReal>(
        &self,
        jobs: &[&Job],
        stream: Arc<CudaStream>,
    ) -> Result<BatchLaunch<T>> {
        let mut l = self.alloc_batch::<T>(jobs, stream, false)?;
        l.launch(jobs[0].generations(), 0, 0)?;
        Ok(l)
    }

    /// The buffers and parameters of a batch launch of `jobs` (compatible: equal but
    /// for seed and stream), after checking that they fit, with the seeds, streams and
    /// bounds uploaded and every population's generations done at 0 (a fresh run); with
    /// `controlled`, for the entry points that take a control block. A plain launch (no
    /// control block, from generation 0) may run the resident kernel, as the engine's
    /// [`BatchKernel`] says; the others run the global-memory one.
    pub(crate) fn alloc_batch<T: GpuReal>(
        &self,
        jobs: &[&Job],
        stream: Arc<CudaStream>,
        controlled: bool,
    ) -> Result<BatchLaunch<T>> {
        let job = jobs[0];
        let p = jobs.len();
        let dim = job.dim();
        let st = stride(dim) as usize;
        let np = job.pop() as usize;
        let gens = job.generations();
        let hist_len = if job.history() {
            (gens as usize + 1) * p
        } else {
            0
        };
        let t = std::mem::size_of::<T>() as u64;
        let needed = t
            * (2 * (p * np * st) + 2 * p * np + 32 * p + p * st + p + 2 * st + hist_len) as u64
            + 4 * (p * np + 32 * p + 2 * p) as u64
            + 12 * p as u64;
        self.check_memory(needed)?;
        let resident = if controlled {
            None
        } else {
            self.batch_plan::<T>(job)?
        };
        let (name, func, threads, shared_mem_bytes) = match resident {
            Some(r) => (r.name, r.func, r.threads, r.bytes),
            None => {
                let layout = if controlled {
                    Layout::BatchControlled
                } else {
                    Layout::Batch
                };
                let name = kernel_name::<T>(layout, job);
                let func = self.job_function::<T>(&name, job)?;
                let g = group_width(dim);
                let threads = self
                    .max_threads(&func, &name)?
                    .min(((np as u32 * g).div_ceil(32) * 32).max(32));
                (name, func, threads, 0)
            }
        };
        let ctx = |what: &str| format!("{name}: {what}");
        let alloc = |n: usize| -> Result<CudaSlice<T>> {
            stream
                .alloc_zeros::<T>(n.max(1))
                .map_err(cuda_err(ctx("allocating")))
        };
        let allocu = |n: usize| -> Result<CudaSlice<u32>> {
            stream
                .alloc_zeros::<u32>(n.max(1))
                .map_err(cuda_err(ctx("allocating")))
        };
        let seeds: Vec<u64> = jobs.iter().map(|j| j.seed()).collect();
        let streams: Vec<u32> = jobs.iter().map(|j| j.stream()).collect();
        let up = |e| cuda_err(ctx("uploading"))(e);
        let seeds_d = stream.clone_htod(&seeds).map_err(up)?;
        let streams_d = stream.clone_htod(&streams).map_err(up)?;
        let lo_d = stream
            .clone_htod(&padded::<T>(job.lower(), st))
            .map_err(up)?;
        let hi_d = stream
            .clone_htod(&padded::<T>(job.upper(), st))
            .map_err(up)?;
        let pop_a = alloc(p * np * st)?;
        let pop_b = alloc(p * np * st)?;
        let flags = allocu(p * np)?;
        let fit = alloc(p * np)?;
        let trial_fit = alloc(p * np)?;
        let scratch_f = alloc(32 * p)?;
        let scratch_i = allocu(32 * p)?;
        let best_x = alloc(p * st)?;
        let best_f = alloc(p)?;
        let best_idx = allocu(p)?;
        let gens_done = allocu(p)?;
        let hist = if hist_len > 0 {
            Some(alloc(hist_len)?)
        } else {
            None
        };
        // Every buffer above is sized for `p` populations of `np` rows of `st` values,
        // as the kernel indexes them.
        debug_assert_eq!(pop_a.len(), p * np * st);
        let s = &*stream;
        let params = BatchParams::<T> {
            run: run_params(job),
            seeds: dev(&seeds_d, s),
            streams: dev(&streams_d, s),
            lo: dev(&lo_d, s),
            hi: dev(&hi_d, s),
            pop_a: dev(&pop_a, s),
            pop_b: dev(&pop_b, s),
            flags: dev(&flags, s),
            fit: dev(&fit, s),
            trial_fit: dev(&trial_fit, s),
            scratch_f: dev(&scratch_f, s),
            scratch_i: dev(&scratch_i, s),
            best_x: dev(&best_x, s),
            best_f: dev(&best_f, s),
            best_idx: dev(&best_idx, s),
            gens_done: dev(&gens_done, s),
            hist: dev_opt(hist.as_ref(), s),
            ctl: std::ptr::null_mut(),
            report: 0,
        };
        Ok(BatchLaunch {
            name: name.clone(),
            func,
            cfg: LaunchConfig {
                grid_dim: (p as u32, 1, 1),
                block_dim: (threads, 1, 1),
                shared_mem_bytes,
            },
            start: Instant::now(),
            p,
            st,
            params,
            pop_a,
            pop_b,
            flags,
            fit,
            best_x,
            best_f,
            gens_done,
            hist,
            _keep: (
                seeds_d, streams_d, lo_d, hi_d, trial_fit, scratch_f, scratch_i, best_idx,
            ),
            stream,
        })
    }

    /// The buffers of a whole-GPU run, after checking they fit: the padded bounds, both
    /// population buffers, `2·np` flags, values, `planes` planes of per-block partials,
    /// per-block scratch, the state words, the best value and the optional history.
    /// `extra` bytes of the caller's own are counted in the memory check.
    fn grid_buffers<T: GpuReal>(
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
    fn grid_shape(
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
    fn per_sm(&self, func: &CudaFunction, name: &str, threads: u32) -> Result<u32> {
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
        let name = kernel_name::<T>(Layout::Step, job);
        let func = self.job_function::<T>(&name, job)?;
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
    fn steps<T: GpuReal>(
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
        let bu = &run.bu;
        read_grid(
            &run.stream,
            job,
            &run.name,
            &s,
            elapsed,
            [&bu.pop_a, &bu.pop_b],
            &bu.flags,
            &bu.fit,
            &bu.best_f,
            bu.hist.as_ref(),
            0,
            keep,
        )
    }

    /// The cooperative kernel, its launch shape, buffers and parameters for a whole-GPU
    /// run of `job` in one launch, ready for the initialisation (the state's generation
    /// 0).
    pub(crate) fn grid_run<T: GpuReal>(&self, job: &Job) -> Result<GridRun<T>> {
        let dim = job.dim();
        let np = job.pop() as usize;
        let name = kernel_name::<T>(Layout::Grid, job);
        let func = self.job_function::<T>(&name, job)?;
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
    fn grid<T: GpuReal>(
        &self,
        job: &Job,
        keep: bool,
    ) -> Result<(RunResult, Option<FinalPopulation>)> {
        let mut run = self.grid_run::<T>(job)?;
        let start = Instant::now();
        run.launch(job.generations(), 0, 0)?;
        let s = run.state()?;
        let elapsed = start.elapsed();
        let bu = &run.bu;
        read_grid(
            &run.stream,
            job,
            &run.name,
            &s,
            elapsed,
            [&bu.pop_a, &bu.pop_b],
            &bu.flags,
            &bu.fit,
            &bu.best_f,
            bu.hist.as_ref(),
            0,
            keep,
        )
    }

    /// Evaluates row-major points (`n × dim`) on the GPU, as the kernels do.
    pub fn evaluate<T: GpuReal>(
        &self,
        f: Function,
        formula: Formula,
        dim: u32,
        points: &[f64],
    ) -> Result<Vec<f64>> {
        if dim == 0 || !points.len().is_multiple_of(dim as usize) {
            return Err(Error::invalid(
                "points",
                points.len(),
                format!("a multiple of the dimension {dim}"),
            ));
        }
        let n = points.len() / dim as usize;
        if n == 0 {
            return Ok(Vec::new());
        }
        let st = stride(dim) as usize;
        let mut x = vec![T::ZERO; n * st];
        for i in 0..n {
            for j in 0..dim as usize {
                x[i * st + j] = T::of(points[i * dim as usize + j]);
            }
        }
        let name = format!("evaluate_{}", T::NAME);
        let func = self.function(&name)?;
        let stream = &self.streams[0];
        let x_d = stream
            .clone_htod(&x)
            .map_err(cuda_err(format!("{name}: uploading")))?;
        let out = stream
            .alloc_zeros::<T>(n)
            .map_err(cuda_err(format!("{name}: allocating")))?;
        let threads = 256u32;
        let blocks = ((n as u32 * group_width(dim)).div_ceil(threads)).max(1);
        let params = EvalParams::<T> {
            function: f as u32,
            formula: formula as u32,
            dim,
            n: n as u32,
            x: dev(&x_d, stream),
            out: dev(&out, stream),
        };
        let mut b = stream.launch_builder(&func);
        push_params(&mut b, &params);
        // SAFETY: the parameters are the kernel's (checked against the PTX at build time);
        // x holds n rows of stride(dim) values and out n values, as the kernel reads and
        // writes them, and both live until the values are read back.
        unsafe {
            b.launch(LaunchConfig {
                grid_dim: (blocks, 1, 1),
                block_dim: (threads, 1, 1),
                shared_mem_bytes: 0,
            })
        }
        .map_err(cuda_err(format!("{name}: launching")))?;
        let v = stream
            .clone_dtoh(&out)
            .map_err(cuda_err(format!("{name}: running")))?;
        Ok(v.into_iter().map(|x| x.to_f64()).collect())
    }
}

/// The register cap of a kernel: `GPUDE_MAXNREG` (16 ..= 255; 0 for none) when set,
/// else the cap measured fastest for its layout on an H100 (`GPUDE_MAXNREG` swept over
/// 64, 72, 80, 96 and 128; docs/PERFORMANCE.md, version 12). Below the cap that lets a
/// block have 1 024 threads (64), ptxas spills; above it, fewer warps hide the latency.
/// - whole-GPU kernels (`de_grid_…`), both precisions: 128 (Np = 8 192: 11.2 µs per
///   generation against 13.9 at 64, and 18.4 against 23.5 uncapped in f64);
/// - resident batch kernels (`de_batch_f32_…_shared`): 80;
/// - pipelined batch kernels (`de_batch_…_pipelined`), both precisions: 96 (132 × 2048
///   Griewank: 152.6 µs per generation against 163.6 at 64 and 159.7 at 72; version 17);
/// - the other batch kernels: 72 (f64: 708 µs against 976 uncapped), but 64 for the
///   single-precision kernels of linked objectives, which 72 slowed;
/// - every other single-precision DE kernel: 64; the rest: none (double precision spills
///   under a low cap).
pub(crate) fn register_cap(name: &str) -> Option<u32> {
    if let Ok(v) = std::env::var("GPUDE_MAXNREG") {
        return v.trim().parse().ok().filter(|n| (16..=255).contains(n));
    }
    default_register_cap(name)
}

/// [`register_cap`] without the environment.
fn default_register_cap(name: &str) -> Option<u32> {
    let f32 = name.contains("_f32_");
    let linked = name.contains("_external") || name.contains("_separable");
    if name.starts_with("de_grid_") {
        Some(128)
    } else if name.starts_with("de_batch_") && name.ends_with("_shared") {
        f32.then_some(80)
    } else if name.starts_with("de_batch_") && name.ends_with(PIPELINED_SUFFIX) {
        Some(96)
    } else if name.starts_with("de_batch_") {
        Some(if f32 && linked { 64 } else { 72 })
    } else {
        (name.starts_with("de_") && f32).then_some(64)
    }
}

/// The module with a `.maxnreg` directive before its entry's body.
fn with_register_cap(ptx: &str, cap: u32) -> String {
    let at = ptx
        .find(".entry")
        .and_then(|e| ptx[e..].find("\n{\n").map(|p| e + p + 1));
    match at {
        Some(pos) => format!("{}.maxnreg {cap}\n{}", &ptx[..pos], &ptx[pos..]),
        None => ptx.to_string(),
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
    fn step_params(&self, job: &Job, s: &CudaStream) -> StepParams<T> {
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
    fn grid_params(&self, job: &Job, s: &CudaStream, sync: &CudaSlice<u64>) -> GridParams<T> {
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

/// Bounds converted to `T` and padded to the row stride.
fn padded<T: GpuReal>(v: &[f64], st: usize) -> Vec<T> {
    let mut out: Vec<T> = v.iter().map(|&x| T::of(x)).collect();
    out.resize(st, T::ZERO);
    out
}

/// Reads a whole-GPU run's outcome back: the state words, the best row (from the
/// buffer its flag names), the history from generation `from` on and, with `keep`, the
/// final population.
#[allow(clippy::too_many_arguments)]
pub(crate) fn read_grid<T: GpuReal>(
    stream: &Arc<CudaStream>,
    job: &Job,
    name: &str,
    state: &[u32],
    elapsed: Duration,
    pops: [&CudaSlice<T>; 2],
    flags: &CudaSlice<u32>,
    fit: &CudaSlice<T>,
    best_f: &CudaSlice<T>,
    hist: Option<&CudaSlice<T>>,
    from: u32,
    keep: bool,
) -> Result<(RunResult, Option<FinalPopulation>)> {
    let read = |e| cuda_err(format!("{name}: reading back"))(e);
    let dim = job.dim() as usize;
    let st = stride(job.dim()) as usize;
    let np = job.pop() as usize;
    let gn = state[STATE_GEN];
    let bi = state[STATE_BEST] as usize;
    let bf = stream.clone_dtoh(best_f).map_err(read)?[0].to_f64();
    let plane = (gn as usize % 2) * np;
    let fl = stream
        .clone_dtoh(&flags.slice(plane + bi..plane + bi + 1))
        .map_err(read)?[0];
    let x = stream
        .clone_dtoh(&pops[fl as usize & 1].slice(bi * st..bi * st + dim))
        .map_err(read)?;
    let history = match hist {
        Some(h) => {
            let v = stream.clone_dtoh(h).map_err(read)?;
            Some(
                v[from as usize..=gn as usize]
                    .iter()
                    .map(|x| x.to_f64())
                    .collect(),
            )
        }
        None => None,
    };
    let population = if keep {
        let a = stream.clone_dtoh(pops[0]).map_err(read)?;
        let b = stream.clone_dtoh(pops[1]).map_err(read)?;
        let fl = stream.clone_dtoh(flags).map_err(read)?;
        let f = stream.clone_dtoh(fit).map_err(read)?;
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
            termination: crate::cuda_control::ending(job, gn, bf),
            elapsed,
            history,
            backend: "cuda",
            stream: job.stream(),
        },
    );
    Ok((result, population))
}

/// Jobs that can share a launch: equal in everything but seed and stream.
pub(crate) fn compatible(a: &Job, b: &Job) -> bool {
    // Clones share the bounds, so this copies no vectors.
    let strip = |j: &Job| j.clone().with_seed(0).with_stream(0);
    strip(a) == strip(b)
}

enum Pending {
    F32(BatchLaunch<f32>),
    F64(BatchLaunch<f64>),
}

/// A batch launch (one block per population), with the buffers its results come from
/// and its parameters. `gens_done` holds each population's generations done: 0 starts
/// it with the initialisation, more goes on from the population in the buffers.
pub(crate) struct BatchLaunch<T: GpuReal> {
    pub(crate) stream: Arc<CudaStream>,
    pub(crate) name: String,
    func: CudaFunction,
    cfg: LaunchConfig,
    pub(crate) start: Instant,
    pub(crate) p: usize,
    pub(crate) st: usize,
    params: BatchParams<T>,
    pub(crate) pop_a: CudaSlice<T>,
    pub(crate) pop_b: CudaSlice<T>,
    pub(crate) flags: CudaSlice<u32>,
    pub(crate) fit: CudaSlice<T>,
    pub(crate) best_x: CudaSlice<T>,
    pub(crate) best_f: CudaSlice<T>,
    pub(crate) gens_done: CudaSlice<u32>,
    pub(crate) hist: Option<CudaSlice<T>>,
    #[allow(clippy::type_complexity)]
    _keep: (
        CudaSlice<u64>,
        CudaSlice<u32>,
        CudaSlice<T>,
        CudaSlice<T>,
        CudaSlice<T>,
        CudaSlice<T>,
        CudaSlice<u32>,
        CudaSlice<u32>,
    ),
}

/// Rows of a double-buffered population, each from the buffer its flag names.
fn gather<T: GpuReal>(
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

impl<T: GpuReal> BatchLaunch<T> {
    /// Launches the kernel: every population goes from its generations done to `end`
    /// (at most the jobs' limit), under the control block at device address `ctl` (0:
    /// none) with the `report` argument of [`gpude_device::control::report`].
    pub(crate) fn launch(&mut self, end: u32, ctl: u64, report: u32) -> Result<()> {
        self.params.run.gens = end;
        self.params.ctl = ctl as *mut u64;
        self.params.report = report;
        let mut b = self.stream.launch_builder(&self.func);
        push_params(&mut b, &self.params);
        // SAFETY: the parameters are the kernel's (the build script checks them against
        // the PTX), every buffer has the length the kernel indexes (see `alloc_batch`;
        // the history holds (end + 1)·p values as end ≤ the jobs' limit) and lives as
        // long as `self`, `ctl` is 0 or a mapped control block of p slots that outlives
        // the launch, and the launch shape is within the function's limits.
        unsafe { b.launch(self.cfg) }.map_err(cuda_err(format!("{}: launching", self.name)))?;
        Ok(())
    }

    /// Population `k`'s final rows and values.
    fn population(&self, k: usize, job: &Job) -> Result<FinalPopulation> {
        let err = |what: &str| cuda_err(format!("{}: {what}", self.name));
        let np = job.pop() as usize;
        let n = np * self.st;
        let a = self
            .stream
            .clone_dtoh(&self.pop_a.slice(k * n..(k + 1) * n))
            .map_err(err("reading back"))?;
        let b = self
            .stream
            .clone_dtoh(&self.pop_b.slice(k * n..(k + 1) * n))
            .map_err(err("reading back"))?;
        let fl = self
            .stream
            .clone_dtoh(&self.flags.slice(k * np..(k + 1) * np))
            .map_err(err("reading back"))?;
        let f = self
            .stream
            .clone_dtoh(&self.fit.slice(k * np..(k + 1) * np))
            .map_err(err("reading back"))?;
        Ok(gather(&a, &b, &fl, &f, job.dim() as usize, self.st))
    }

    /// Each population's outcome of the last launch: the generations done, the best
    /// value and point, and the history recorded from generation `from[k]` on.
    pub(crate) fn outcomes(&self, jobs: &[&Job], from: &[u32]) -> Result<Vec<Launched>> {
        let err = |what: &str| cuda_err(format!("{}: {what}", self.name));
        let gens_done = self
            .stream
            .clone_dtoh(&self.gens_done)
            .map_err(err("running"))?;
        let best_x = self
            .stream
            .clone_dtoh(&self.best_x)
            .map_err(err("reading back"))?;
        let best_f = self
            .stream
            .clone_dtoh(&self.best_f)
            .map_err(err("reading back"))?;
        let hist = match &self.hist {
            Some(h) => Some(self.stream.clone_dtoh(h).map_err(err("reading back"))?),
            None => None,
        };
        let dim = jobs[0].dim() as usize;
        // The history's stride is the last launch's limit + 1.
        let hl = self.params.run.gens as usize + 1;
        Ok((0..self.p)
            .map(|k| {
                let gn = gens_done[k];
                Launched {
                    generations: gn,
                    best_f: best_f[k].to_f64(),
                    best_x: best_x[k * self.st..k * self.st + dim]
                        .iter()
                        .map(|v| v.to_f64())
                        .collect(),
                    // Nothing for a population that started past the launch's limit.
                    history: hist.as_ref().map(|h| {
                        let (a, b) = (from[k] as usize, gn as usize);
                        if b < hl {
                            h[k * hl + a..k * hl + b + 1]
                                .iter()
                                .map(|v| v.to_f64())
                                .collect()
                        } else {
                            Vec::new()
                        }
                    }),
                }
            })
            .collect())
    }

    fn finish(self, jobs: &[&Job]) -> Result<Vec<RunResult>> {
        let out = self.outcomes(jobs, &vec![0; self.p])?;
        let elapsed: Duration = self.start.elapsed();
        Ok(jobs
            .iter()
            .zip(out)
            .map(|(job, o)| o.result(job, elapsed))
            .collect())
    }
}

/// What one population's launch ended with.
pub(crate) struct Launched {
    pub(crate) generations: u32,
    pub(crate) best_f: f64,
    pub(crate) best_x: Vec<f64>,
    /// The best after each generation of the launch (from the one it started at).
    pub(crate) history: Option<Vec<f64>>,
}

impl Launched {
    /// The result of a run that started with this launch (generation 0).
    pub(crate) fn result(self, job: &Job, elapsed: Duration) -> RunResult {
        RunResult::ended(
            job,
            Ending {
                best_x: DVector::from_vec(self.best_x),
                best_f: self.best_f,
                generations: self.generations,
                evaluations: job.evaluations(self.generations),
                termination: crate::cuda_control::ending(job, self.generations, self.best_f),
                elapsed,
                history: self.history,
                backend: "cuda",
                stream: job.stream(),
            },
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each layout gets the cap its measurements chose, and the kernels the sweep did not
    /// cover keep theirs.
    #[test]
    fn register_caps_follow_the_layout() {
        let cap = default_register_cap;
        assert_eq!(cap("de_grid_f32_griewank_thesis"), Some(128));
        assert_eq!(cap("de_grid_f64_external_thesis"), Some(128));
        assert_eq!(cap("de_batch_f32_griewank_thesis_shared"), Some(80));
        assert_eq!(cap("de_batch_f64_griewank_thesis_shared"), None);
        assert_eq!(cap("de_batch_f32_griewank_thesis"), Some(72));
        assert_eq!(cap("de_batch_f64_griewank_thesis"), Some(72));
        assert_eq!(cap("de_batch_f32_external_thesis"), Some(64));
        assert_eq!(cap("de_batch_f32_separable_thesis"), Some(64));
        assert_eq!(cap("de_batch_f64_external_thesis"), Some(72));
        assert_eq!(cap("de_step_f32_griewank_thesis"), Some(64));
        assert_eq!(cap("de_step_f64_griewank_thesis"), None);
        assert_eq!(cap("adaptive_batch_f32_griewank"), None);
    }

    #[test]
    fn the_cap_goes_before_the_entrys_body() {
        let ptx = ".visible .entry k(\n.param .u32 a\n)\n{\nret;\n}\n";
        let capped = with_register_cap(ptx, 72);
        assert!(capped.contains(")\n.maxnreg 72\n{\n"), "{capped}");
    }
}
