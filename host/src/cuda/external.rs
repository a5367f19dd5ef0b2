//! Objectives linked in at run time: the CUDA engine's side of the device crate's
//! external family (`gpude_device::external`).
//!
//! An external kernel declares the objective (`gpude_objective_f32` / `_f64`, see
//! [`objective_symbol`]) without defining it. For a job whose objective is an
//! expression, the engine links three PTX modules with the driver's JIT linker
//! (`cuLinkCreate`, `cuLinkAddData`, `cuLinkComplete`): the kernel's own module, the
//! expression's generated PTX (which defines the objective) and the module of the
//! expression maths (`gpude_device::expr_maths`, which defines the transcendentals the
//! expression calls). The linked image is loaded as a module; it is kept per kernel and
//! expression text, so that a batch or a benchmark links once.
//!
//! The separable family (`gpude_device::kernels_separable`) is linked the same way with
//! a module that defines the objective's separable form: a PTX objective's own module
//! (which may define both forms; the engine prefers the separable one), or an
//! expression's separable form's module. Its flags go into the launch parameter
//! `Run::formula` (`run_params`).
//!
//! The kernels take the same arguments as the built-in ones: the launch code is shared,
//! and only the function differs.

use super::engine::{CudaEngine, cuda_err};
use super::kernels::{GpuReal, Kernel};
use crate::error::{Error, Result};
use crate::job::config::Job;
use crate::job::config::Precision;
use crate::job::objective::Objective;
use crate::job::ptx_objective::{PtxCode, symbol as ptx_symbol, with_separable_b};
use cudarc::driver::sys::{self, CUjit_option, CUjitInputType};
use cudarc::driver::{CudaFunction, LaunchConfig, PushKernelArg};
use gpude_device::registry::{EXPR_MATHS_MODULE, KernelPrecision, separable_symbols};
use gpude_expr::{Expr, Precision as ExprPrecision};
use std::ffi::{CString, c_void};
use std::hash::{Hash, Hasher};

pub use gpude_device::registry::objective_symbol;

/// How much of the JIT linker's error log an error message keeps.
const LOG_BYTES: usize = 4096;

/// Can the CUDA engine run `job`'s objective? Built-in functions, expressions and PTX
/// objectives (in a precision their module defines) run in every layout, with every
/// strategy and thesis variant; host callbacks in their own (the DE stages on the GPU,
/// the callback on the host, see `callback.rs`); CEC 2017 functions not at all.
pub fn check_objective(job: &Job) -> Result<()> {
    if job.objective().is_host_callback() {
        return Ok(());
    }
    if let Some(code) = job.objective().ptx_code() {
        let p = job.precision();
        if code.defines(p) {
            return Ok(());
        }
        return Err(Error::invalid(
            "precision",
            p.name(),
            format!(
                "{} for the PTX objective {:?}: its module defines {} only",
                code.precisions(),
                crate::error::clip(&job.objective().name()),
                ptx_symbol(if p == Precision::F32 {
                    Precision::F64
                } else {
                    Precision::F32
                })
            ),
        ));
    }
    let what = match job.objective() {
        Objective::Builtin(_) | Objective::Expr(_) => return Ok(()),
        Objective::Cec2017(_) => {
            let name = crate::job::config::strategy_name(job.strategy());
            return Err(Error::invalid(
                "layout",
                name,
                format!(
                    "a single run or a batch for {name} on a CEC 2017 function on the GPU (they run in the adaptive kernels, one block per run; islands and the other layouts do not evaluate CEC functions); use --backend cpu for this layout"
                ),
            ));
        }
        Objective::Callback(_) => "callback",
    };
    Err(Error::invalid(
        "objective",
        crate::error::clip(&job.objective().name()),
        format!("{what} objectives run on the CPU engine only for now; use --backend cpu"),
    ))
}

/// The cache key of a PTX objective's links: its text itself (length and hash), so that
/// two objectives with the same module share a link.
fn ptx_key(code: &PtxCode) -> String {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    code.text().hash(&mut h);
    format!("ptx {} {:016x}", code.text().len(), h.finish())
}

/// The PTX that defines `job`'s objective in precision `p`, and the key it is cached
/// under (`None` for a built-in function, which needs no linking).
fn objective_code(job: &Job, p: ExprPrecision) -> Result<Option<(String, String)>> {
    if let Some(code) = job.objective().ptx_code() {
        check_objective(job)?;
        let key = ptx_key(code);
        // The separable kernels refer to the b-terms whatever the flags.
        let text = if code.separable(job.precision()).is_some() {
            with_separable_b(code.text(), job.precision())
        } else {
            code.text().to_string()
        };
        return Ok(Some((key, text)));
    }
    match job.objective() {
        Objective::Builtin(_) => Ok(None),
        // The separable form's module, for the separable kernels (see `kernel_name`).
        Objective::Expr(e) if e.separable.is_some() => {
            // The stub b-terms in the module's precision (`p`), which is the job's.
            let mp = match p {
                ExprPrecision::F32 => crate::job::precision::Precision::F32,
                ExprPrecision::F64 => crate::job::precision::Precision::F64,
            };
            let ptx = with_separable_b(
                &job.objective().expr_separable_ptx(p).unwrap_or_default(),
                mp,
            );
            // One module for every dimension: one link per kernel and expression.
            Ok(Some((
                format!("separable {} {}", p.name(), e.expr.source()),
                ptx,
            )))
        }
        // Generated for the job's dimension: the per-j values come from a table.
        Objective::Expr(e) => Ok(Some((
            format!("expr {} D={} {}", p.name(), job.dim(), e.expr.source()),
            e.expr.ptx_for_dim(p, job.dim()),
        ))),
        _ => check_objective(job).map(|()| None),
    }
}

impl CudaEngine {
    /// `kernel` of `job` (built-in, or external and linked with the job's objective),
    /// loaded.
    pub(super) fn job_function<T: GpuReal>(
        &self,
        kernel: Kernel,
        job: &Job,
    ) -> Result<CudaFunction> {
        match objective_code(job, T::EXPR)? {
            None => self.function(kernel),
            Some((key, ptx)) => self.linked_function(kernel, &key, &ptx),
        }
    }

    /// `kernel` of the external family linked with `objective` (PTX defining the
    /// objective symbol) and the expression maths; cached under (`kernel`, `key`).
    pub(crate) fn linked_function(
        &self,
        kernel: Kernel,
        key: &str,
        objective: &str,
    ) -> Result<CudaFunction> {
        let name = kernel.name();
        let code = self
            .kernels
            .get(name.as_str())
            .ok_or_else(|| Error::MissingKernel { name: name.clone() })?;
        // A linked kernel is cached: inline only for a link that will happen.
        if let Some((_, f)) = self
            .linked
            .lock()
            .expect("linked kernel cache lock")
            .get(&(kernel, key.to_string()))
        {
            return Ok(f.clone());
        }
        let maths = self.kernels.get(EXPR_MATHS_MODULE).copied().unwrap_or("");
        let inl = inlined(&name, code, objective, maths);
        match self.linked(kernel, key, &[(&name, &inl), ("objective", objective)]) {
            // The inlining is an optimisation: where the JIT refuses its text, the
            // kernel is linked with its calls.
            Err(_) if inl.as_str() != *code => {
                self.linked(kernel, key, &[(&name, code), ("objective", objective)])
            }
            r => r,
        }
    }

    /// The entry point of `kernel` in `modules` linked with the expression maths,
    /// loaded; cached under (`kernel`, `key`).
    pub(super) fn linked(
        &self,
        kernel: Kernel,
        key: &str,
        modules: &[(&str, &str)],
    ) -> Result<CudaFunction> {
        let cache_key = (kernel, key.to_string());
        let mut cache = self.linked.lock().expect("linked kernel cache lock");
        if let Some((_, f)) = cache.get(&cache_key) {
            return Ok(f.clone());
        }
        let entry = kernel.name();
        let maths = self
            .kernels
            .get(EXPR_MATHS_MODULE)
            .ok_or_else(|| Error::MissingKernel {
                name: EXPR_MATHS_MODULE.into(),
            })?;
        let mut all = modules.to_vec();
        all.push((EXPR_MATHS_MODULE, maths));
        self.ctx
            .bind_to_thread()
            .map_err(cuda_err(format!("{entry}: binding the context")))?;
        let image = link(&entry, &all, kernel.register_cap())?;
        let module = self
            .ctx
            .load_module(cudarc::nvrtc::Ptx::from_binary(image))
            .map_err(cuda_err(format!("loading the linked module of {entry}")))?;
        let f = module
            .load_function(&entry)
            .map_err(|_| Error::MissingKernel { name: entry })?;
        cache.insert(cache_key, (module, f.clone()));
        Ok(f)
    }

    /// The values of expression `e` at row-major points (`n × dim`) on the GPU, in
    /// precision `T`: its PTX with an evaluation kernel ([`Expr::ptx_eval_kernel`]),
    /// linked with the maths as the DE kernels are. Equal to [`Expr::eval`] bit for bit.
    pub fn evaluate_expr<T: GpuReal>(
        &self,
        e: &Expr,
        dim: u32,
        points: &[f64],
    ) -> Result<Vec<f64>> {
        let key = format!("eval D={dim} {}", e.source());
        self.evaluate_module::<T>(&key, dim, points, || {
            e.ptx_eval_kernel_for_dim(T::EXPR, dim)
        })
    }

    /// The values of a PTX objective at row-major points (`n × dim`) on the GPU, in
    /// precision `T`: the module's whole-vector function ([`ptx_symbol`]) called once
    /// per point by an evaluation kernel appended to the module, linked with the maths
    /// as the DE kernels are. A module that defines only the separable form is refused.
    pub fn evaluate_ptx<T: GpuReal>(
        &self,
        code: &PtxCode,
        dim: u32,
        points: &[f64],
    ) -> Result<Vec<f64>> {
        if !code.defines_whole(T::PRECISION) {
            return Err(Error::Input {
                what: "PTX objective".into(),
                message: format!(
                    "evaluating points calls {}, which the module does not define \
                     (it defines the objective in {}{}); give a module with that function \
                     or another precision",
                    ptx_symbol(T::PRECISION),
                    code.precisions(),
                    if code.separable(T::PRECISION).is_some() {
                        ", in this precision only its separable form"
                    } else {
                        ""
                    }
                ),
            });
        }
        let key = format!("eval {}", ptx_key(code));
        self.evaluate_module::<T>(&key, dim, points, || {
            let mut m = code.text().to_string();
            m.push_str(&T::EXPR.eval_entry());
            m
        })
    }

    /// The values at row-major points (`n × dim`) of the objective the module `module`
    /// defines, with the evaluation entry of [`ExprPrecision::eval_entry`]; the linked
    /// kernel is cached under `key`.
    fn evaluate_module<T: GpuReal>(
        &self,
        key: &str,
        dim: u32,
        points: &[f64],
        module: impl FnOnce() -> String,
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
        if n > u32::MAX as usize {
            return Err(Error::invalid("points", n, "at most 2^32 - 1 points"));
        }
        let kernel = Kernel::ExprEval(T::EXPR);
        let entry = kernel.name();
        let func = self.linked(kernel, key, &[("objective", &module())])?;
        let x: Vec<T> = points.iter().map(|&v| T::of(v)).collect();
        let stream = &self.streams[0];
        let ctx = |what: &str| format!("{entry}: {what}");
        let x_d = stream.clone_htod(&x).map_err(cuda_err(ctx("uploading")))?;
        let mut out = stream
            .alloc_zeros::<T>(n)
            .map_err(cuda_err(ctx("allocating")))?;
        let (nn, stride) = (n as u32, dim);
        let threads = 128u32;
        let mut b = stream.launch_builder(&func);
        b.arg(&x_d).arg(&dim).arg(&stride).arg(&nn).arg(&mut out);
        // SAFETY: the entry's parameters are (xs, d, stride, n, out) as
        // `ExprPrecision::eval_entry` defines them; x holds n rows of `stride` values and
        // out n values, and threads at or past n return at once.
        unsafe {
            b.launch(LaunchConfig {
                grid_dim: (nn.div_ceil(threads), 1, 1),
                block_dim: (threads, 1, 1),
                shared_mem_bytes: 0,
            })
        }
        .map_err(cuda_err(ctx("launching")))?;
        let v = stream.clone_dtoh(&out).map_err(cuda_err(ctx("running")))?;
        Ok(v.into_iter().map(|x| x.to_f64()).collect())
    }
}

/// A JIT link in progress; destroyed on drop, whatever happened.
struct LinkState(sys::CUlinkState);

impl Drop for LinkState {
    fn drop(&mut self) {
        // SAFETY: the state was created by cuLinkCreate and is destroyed once, here;
        // the image it owns was copied out before.
        unsafe {
            let _ = sys::cuLinkDestroy(self.0);
        }
    }
}

/// Kernel `name`'s PTX with the objective's functions it calls copied in at each call
/// ([`super::ptx_inline`]): the separable terms, or the whole-vector objective; then the
/// expression maths those call. What cannot be inlined stays a call, which the link
/// resolves. `GPUDE_INLINE=0` keeps every call (for comparisons).
pub(crate) fn inlined(name: &str, kernel: &str, objective: &str, maths: &str) -> String {
    if std::env::var("GPUDE_INLINE").is_ok_and(|v| v.trim() == "0") {
        return kernel.to_string();
    }
    let p = if name.contains("_f64") {
        KernelPrecision::F64
    } else {
        KernelPrecision::F32
    };
    let mut names = separable_symbols(p).to_vec();
    names.push(objective_symbol(p));
    let (k, _) = super::ptx_inline::inline_calls(kernel, objective, &names);
    let maths_names: Vec<&str> = gpude_device::expr_maths::SYMBOLS
        .iter()
        .map(|(n, _)| *n)
        .collect();
    super::ptx_inline::inline_calls_tagged(&k, maths, &maths_names, "m").0
}

/// Links PTX `modules` (name, text) into a cubin with the driver's JIT linker for the
/// current context's GPU, with at most `max_registers` registers per thread. Failures
/// carry the linker's error log (an undefined or mismatched symbol names it).
///
/// The caller must have made the engine's context current.
fn link(kernel: &str, modules: &[(&str, &str)], max_registers: Option<u32>) -> Result<Vec<u8>> {
    let mut log = vec![0u8; LOG_BYTES];
    let mut options = vec![
        CUjit_option::CU_JIT_ERROR_LOG_BUFFER,
        CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
    ];
    // Option values are passed as pointers: the buffer, then numbers cast to pointers.
    let mut values: Vec<*mut c_void> = vec![log.as_mut_ptr().cast(), LOG_BYTES as *mut c_void];
    if let Some(n) = max_registers {
        options.push(CUjit_option::CU_JIT_MAX_REGISTERS);
        values.push(n as usize as *mut c_void);
    }
    let failed = |what: String, r: sys::CUresult, log: &[u8]| {
        let text =
            String::from_utf8_lossy(&log[..log.iter().position(|&b| b == 0).unwrap_or(log.len())])
                .trim()
                .to_string();
        Error::Cuda {
            context: format!("linking {kernel}"),
            message: if text.is_empty() {
                format!("{what}: {r:?}")
            } else {
                format!("{what}: {r:?}: {text}")
            },
        }
    };
    let mut state: sys::CUlinkState = std::ptr::null_mut();
    // SAFETY: `options` and `values` have the same length and live (with the log
    // buffer they point to) until the state is destroyed at the end of this function.
    let r = unsafe {
        sys::cuLinkCreate_v2(
            options.len() as u32,
            options.as_mut_ptr(),
            values.as_mut_ptr(),
            &mut state,
        )
    };
    if r != sys::CUresult::CUDA_SUCCESS {
        return Err(failed("creating the linker".into(), r, &log));
    }
    let state = LinkState(state);
    for (name, ptx) in modules {
        let text = CString::new(*ptx).map_err(|_| Error::Cuda {
            context: format!("linking {kernel}"),
            message: format!("the PTX of {name} holds a NUL byte"),
        })?;
        let cname = CString::new(*name).unwrap_or_default();
        let bytes = text.as_bytes_with_nul();
        // SAFETY: `bytes` is NUL-terminated PTX of `bytes.len()` bytes and the name a C
        // string, both alive for the call (the linker copies what it keeps).
        let r = unsafe {
            sys::cuLinkAddData_v2(
                state.0,
                CUjitInputType::CU_JIT_INPUT_PTX,
                bytes.as_ptr() as *mut c_void,
                bytes.len(),
                cname.as_ptr(),
                0,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            )
        };
        if r != sys::CUresult::CUDA_SUCCESS {
            return Err(failed(format!("adding {name}"), r, &log));
        }
    }
    let mut cubin: *mut c_void = std::ptr::null_mut();
    let mut size = 0usize;
    // SAFETY: the state is live; on success the image is owned by the state until it is
    // destroyed, and it is copied out below before that.
    let r = unsafe { sys::cuLinkComplete(state.0, &mut cubin, &mut size) };
    if r != sys::CUresult::CUDA_SUCCESS || cubin.is_null() {
        return Err(failed("completing the link".into(), r, &log));
    }
    // SAFETY: the linker returned `size` readable bytes at `cubin`, alive until the state
    // is dropped after this copy.
    let image = unsafe { std::slice::from_raw_parts(cubin as *const u8, size) }.to_vec();
    drop(state);
    Ok(image)
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpude_device::Function;

    fn expr_job() -> Job {
        Job::builder_for(Objective::expr("sum(x^2)", Some(0.0)).unwrap(), 4)
            .domain(-1.0, 1.0)
            .build()
            .unwrap()
    }

    #[test]
    fn expressions_and_builtins_run_on_the_gpu() {
        assert!(check_objective(&expr_job()).is_ok());
        assert!(check_objective(&Job::builder(Function::Griewank, 4).build().unwrap()).is_ok());
    }

    #[test]
    fn host_callbacks_run_on_the_gpu_and_need_no_link() {
        let o = Objective::pointwise("f", None, |x: &[f64]| x[0]).unwrap();
        let job = Job::builder_for(o.clone(), 2)
            .domain(0.0, 1.0)
            .build()
            .unwrap();
        assert!(check_objective(&job).is_ok());
        assert!(objective_code(&job, ExprPrecision::F64).unwrap().is_none());
        // Thesis variants that change the trials too (the family has them).
        let v = (1..64)
            .filter_map(gpude_device::ThesisVariant::from_bits)
            .find(|v| v.changes_trials())
            .expect("a variant that changes the trials");
        let varied = Job::builder_for(o, 2)
            .domain(0.0, 1.0)
            .thesis_variant(v)
            .build()
            .unwrap();
        assert!(check_objective(&varied).is_ok());
    }

    #[test]
    fn a_ptx_objective_runs_in_the_precisions_its_module_defines() {
        let e = gpude_expr::Expr::parse("sum(x^2)").unwrap();
        let code = crate::job::ptx_objective::PtxCode::parse(e.ptx(ExprPrecision::F32)).unwrap();
        let o = Objective::ptx("sq", Some(0.0), code).unwrap();
        let job = |p| {
            Job::builder_for(o.clone(), 4)
                .domain(-1.0, 1.0)
                .precision(p)
                .build()
                .unwrap()
        };
        assert!(check_objective(&job(Precision::F32)).is_ok());
        let (key, text) = objective_code(&job(Precision::F32), ExprPrecision::F32)
            .unwrap()
            .unwrap();
        assert!(key.starts_with("ptx ") && text.contains("gpude_objective_f32"));
        let err = check_objective(&job(Precision::F64))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("precision = f64") && err.contains("gpude_objective_f32 only"),
            "{err}"
        );
        assert!(objective_code(&job(Precision::F64), ExprPrecision::F64).is_err());
        // The thesis variants that change the trials run too (their own family).
        let v = (1..64)
            .filter_map(gpude_device::ThesisVariant::from_bits)
            .find(|v| v.changes_trials())
            .expect("a variant that changes the trials");
        let varied = Job::builder_for(o.clone(), 4)
            .domain(-1.0, 1.0)
            .precision(Precision::F32)
            .thesis_variant(v)
            .build()
            .unwrap();
        assert!(check_objective(&varied).is_ok());
        assert_eq!(
            crate::cuda::kernels::de_kernel::<f32>(gpude_device::registry::Layout::Batch, &varied)
                .name(),
            "de_batch_f32_external_thesis_variant"
        );
    }

    #[test]
    fn the_code_of_an_expression_defines_the_symbol_the_kernels_call() {
        let job = expr_job();
        for (kp, ep) in [
            (KernelPrecision::F32, ExprPrecision::F32),
            (KernelPrecision::F64, ExprPrecision::F64),
        ] {
            // `sum(x^2)` is separable: its module defines the separable form's terms
            // (and the b-terms the separable kernels refer to).
            let (key, ptx) = objective_code(&job, ep).unwrap().unwrap();
            assert!(key.contains("sum(x^2)") && key.contains(ep.name()), "{key}");
            assert!(key.starts_with("separable"), "{key}");
            for sym in [ep.sep_a_name(), ep.sep_b_name(), ep.sep_finish_name()] {
                assert!(ptx.contains(&format!(") {sym}(")), "{sym}");
            }
            assert!(ptx.contains(ep.sep_flags_name()), "flags");
            // A neighbour ahead is not separable: the whole-vector symbol.
            let ahead = Objective::expr("sum(x[j+1] - x)", None).unwrap();
            let whole = Job::builder_for(ahead, 4)
                .domain(-1.0, 1.0)
                .build()
                .unwrap();
            let (key, ptx) = objective_code(&whole, ep).unwrap().unwrap();
            assert!(key.starts_with("expr"), "{key}");
            let sym = objective_symbol(kp);
            assert_eq!(sym, ep.function_name());
            assert!(ptx.contains(".visible .func (.param ."), "{ptx}");
            assert!(ptx.contains(&format!(") {sym}(")), "{ptx}");
        }
        let b = Job::builder(Function::Sphere, 4).build().unwrap();
        assert!(objective_code(&b, ExprPrecision::F32).unwrap().is_none());
    }
}
