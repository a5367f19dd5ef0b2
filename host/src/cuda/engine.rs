//! The engine: a GPU opened with cudarc (the driver is found at run time, so nothing
//! CUDA is needed to build), its streams, and the kernels' modules, each compiled by the
//! driver when first used.

use super::batch_kernel::{BatchKernel, SharedLimits, spare_cap_from_env};
use super::control::MappedBlock;
use super::kernels::{GpuReal, Kernel, with_register_cap};
use super::launch::{dev, push_params};
use crate::error::{Error, Result};
use cudarc::driver::sys::CUfunction_attribute_enum;
use cudarc::driver::{
    CudaContext, CudaFunction, CudaModule, CudaStream, DriverError, LaunchConfig,
};
use gpude_device::abi::EvalParams;
use gpude_device::lanes::{group_width, stride};
use gpude_device::{Formula, Function};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// A final population read back from the GPU: rows (`dim` values each) and values.
#[derive(Clone, Debug, PartialEq)]
pub struct FinalPopulation {
    pub x: Vec<f64>,
    pub fit: Vec<f64>,
}

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

/// The most CUDA streams an engine spreads launches over.
pub const MAX_STREAMS: usize = 128;

pub(crate) fn cuda_err(context: impl Into<String>) -> impl FnOnce(DriverError) -> Error {
    let context = context.into();
    move |source| Error::Driver { context, source }
}

/// Is a CUDA driver library present? (cudarc panics on first use without one.)
pub fn driver_present() -> bool {
    // SAFETY: only tries to open the driver library; no CUDA call is made.
    unsafe { cudarc::driver::sys::is_culib_present() }
}

/// A kernel's module and its entry point, loaded.
pub(super) type Loaded = (Arc<CudaModule>, CudaFunction);

/// A GPU with the gpude module loaded, and streams to spread launches over.
pub struct CudaEngine {
    pub(super) ctx: Arc<CudaContext>,
    /// Kernel name → its own PTX module, compiled by the driver on first use.
    pub(super) kernels: HashMap<&'static str, &'static str>,
    pub(super) streams: Vec<Arc<CudaStream>>,
    pub(super) functions: Mutex<HashMap<Kernel, Loaded>>,
    /// Kernels linked with an objective, by (entry point, objective's key).
    pub(super) linked: Mutex<HashMap<(Kernel, String), Loaded>>,
    /// A control block kept between controlled runs (pinned allocations are slow).
    pub(crate) blocks: Mutex<Option<MappedBlock>>,
    pub(super) sm_count: u32,
    pub(super) name: String,
    pub(super) capability: (i32, i32),
    /// The kernel batch launches use (see [`BatchKernel`]).
    pub(super) batch_kernel: Mutex<BatchKernel>,
    /// The most spare rows a resident block gets (`None`: as many as fit).
    pub(super) spare_cap: Mutex<Option<u32>>,
    pub(super) shared_limits: SharedLimits,
}

impl CudaEngine {
    /// Opens GPU `device` with the kernels (name, PTX module) and makes `streams`
    /// streams. Each kernel's module is compiled by the driver when first used.
    pub fn new(
        kernels: &'static [(&'static str, &'static str)],
        device: usize,
        streams: usize,
    ) -> Result<Self> {
        if kernels.is_empty() {
            return Err(Error::CudaUnavailable(
                "this build of gpude has no GPU kernels: they are built with the nightly Rust of gpude's rust-toolchain.toml, which the build did not find (or GPUDE_PTX=none); install it with rustup and build again".into(),
            ));
        }
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
        if streams == 0 || streams > MAX_STREAMS {
            return Err(Error::invalid(
                "streams",
                streams,
                format!("1 ..= {}", MAX_STREAMS),
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
        let shared_limits = SharedLimits {
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
        let spare_cap = Mutex::new(spare_cap_from_env()?);
        Ok(CudaEngine {
            ctx,
            kernels: kernels.iter().copied().collect(),
            streams: ss,
            functions: Mutex::new(HashMap::new()),
            linked: Mutex::new(HashMap::new()),
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

    /// The device's context (for the control blocks of [`control`]).
    pub(crate) fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    /// The stream the controlled runs use.
    pub(crate) fn first_stream(&self) -> Arc<CudaStream> {
        self.streams[0].clone()
    }

    /// `kernel`, loaded from its module (compiled by the driver with the kernel's
    /// register cap) when first asked for.
    pub(super) fn function(&self, kernel: Kernel) -> Result<CudaFunction> {
        let mut cache = self.functions.lock().expect("function cache lock");
        if let Some((_, f)) = cache.get(&kernel) {
            return Ok(f.clone());
        }
        let name = kernel.name();
        let ptx = self
            .kernels
            .get(name.as_str())
            .ok_or_else(|| Error::MissingKernel { name: name.clone() })?;
        let ptx = match kernel.register_cap() {
            Some(cap) => with_register_cap(ptx, cap),
            None => ptx.to_string(),
        };
        let module = self
            .ctx
            .load_module(cudarc::nvrtc::Ptx::from_src(ptx))
            .map_err(cuda_err(format!("loading the module of {name}")))?;
        let f = module
            .load_function(&name)
            .map_err(|_| Error::MissingKernel { name })?;
        cache.insert(kernel, (module, f.clone()));
        Ok(f)
    }

    /// Compiles (if not yet) the module of `kernel`: lets callers keep the driver's
    /// compilation out of timings.
    pub fn prepare(&self, kernel: Kernel) -> Result<()> {
        self.function(kernel).map(|_| ())
    }

    /// The most threads a block of `f` may have (registers permitting), in whole warps.
    pub(super) fn max_threads(&self, f: &CudaFunction, name: &str) -> Result<u32> {
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
        let kernel = Kernel::Evaluate(T::KERNEL);
        let name = kernel.name();
        let func = self.function(kernel)?;
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
