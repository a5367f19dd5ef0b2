//! What a job minimises: a built-in function, an expression, a CEC 2017 function or a
//! host callback.
//!
//! The engines evaluate a job's objective in its precision:
//!
//! - **built-in** functions through the device crate's kernels' arithmetic (the fast,
//!   specialised paths of the CPU engine and the GPU kernels);
//! - **expressions** ([`gpude_expr::Expr`]) with [`Expr::eval`] in the run's precision,
//!   one instruction at a time (see the crate's documentation for the rounding);
//! - **CEC 2017** functions with the official data, in f64, or in f32 with the data
//!   rounded to f32 once;
//! - **callbacks** ([`BatchObjective`]) in f64: the engine hands over a whole batch of
//!   points at once — the initial population, then each generation's trials — and the
//!   callback returns one value per point.
//!
//! # The calling convention of a batch callback
//!
//! [`BatchObjective::evaluate`] receives `xs`, `n` points of `dim` components each,
//! **row-major**: point `i` is `xs[i·dim .. (i+1)·dim]` (so `xs.len() = n·dim`), and
//! returns `n` values, value `i` for point `i`. The points are the run's values converted
//! to f64 (exactly, for f32 runs); the values are rounded to the run's precision. A
//! generation's trials all come from the population as it was before the generation, so
//! one call per generation gives the same trajectory as one call per point.
//!
//! Rules: a value may be any f64. NaN is the worst value there is: a NaN trial never
//! replaces its parent, and a NaN is the best only when every value is NaN (the run then
//! ends as [`crate::Termination::NonFinite`]). A callback that panics, or returns a number
//! of values other than `n`, stops the run with an [`Error::Objective`] naming what went
//! wrong; the run does not crash and the error is returned by the engine's entry points
//! ([`crate::cpu::run`], [`crate::Solver::run`], …).

use crate::error::{Error, Result};
use crate::job::cec2017::{DataSource, FunctionData, FunctionId};
use crate::job::functions::FunctionInfo;
use crate::job::ptx_objective::PtxCode;
use gpude_device::lanes::{evaluate, evaluate_of};
use gpude_device::separable::{SepFlags, SepLanes, Separable};
use gpude_device::{Formula, Function, Real};
use gpude_expr::{Expr, Precision as ExprPrecision};
use rayon::prelude::*;
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// An objective evaluated a batch of points at a time (see the module documentation
/// for the layout and the rules).
pub trait BatchObjective: Send + Sync {
    /// The values of the `xs.len() / dim` points of `xs` (row-major), one per point.
    fn evaluate(&self, xs: &[f64], dim: usize) -> Vec<f64>;
}

impl<F> BatchObjective for F
where
    F: Fn(&[f64], usize) -> Vec<f64> + Send + Sync,
{
    fn evaluate(&self, xs: &[f64], dim: usize) -> Vec<f64> {
        self(xs, dim)
    }
}

/// A function of one point, evaluated on all cores (a [`BatchObjective`] that calls it
/// once per row, in parallel).
struct Pointwise<F>(F);

impl<F> BatchObjective for Pointwise<F>
where
    F: Fn(&[f64]) -> f64 + Send + Sync,
{
    fn evaluate(&self, xs: &[f64], dim: usize) -> Vec<f64> {
        xs.par_chunks(dim.max(1)).map(|x| (self.0)(x)).collect()
    }
}

/// An expression and its known minimum, if any.
pub struct ExprObjective {
    pub expr: Expr,
    pub min: Option<f64>,
    /// Its separable form, when it has one ([`separable_of`]): the engines evaluate it
    /// with the lanes, in the separable kernels on the GPU.
    pub(crate) separable: Option<Arc<dyn ExprSeparable>>,
}

impl fmt::Debug for ExprObjective {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ExprObjective")
            .field("expr", &self.expr)
            .field("min", &self.min)
            .field("separable", &self.separable.is_some())
            .finish()
    }
}

/// What the engines need of an expression's separable form: its terms in both
/// precisions (the CPU's lane-order evaluation) and the PTX module that defines the
/// separable symbols (see [`gpude_device::separable`]); the terms compute their j-only
/// values from j, so one module serves every dimension.
pub(crate) trait ExprSeparable:
    Separable<f32> + Separable<f64> + Send + Sync + std::panic::RefUnwindSafe
{
    /// The module defining `gpude_sep_*_T` and `gpude_sep_flags_T` in precision `p`.
    fn module(&self, p: ExprPrecision) -> String;
}

impl ExprSeparable for gpude_expr::SeparableExpr {
    fn module(&self, p: ExprPrecision) -> String {
        self.ptx(p)
    }
}

/// The separable form of `e`, when it has one (`gpude_expr::Expr::separable`): the one
/// place where the host asks the expression crate for it. Expressions without one run
/// as whole-vector objectives.
pub(crate) fn separable_of(e: &Expr) -> Option<Arc<dyn ExprSeparable>> {
    e.separable().map(|s| Arc::new(s) as Arc<dyn ExprSeparable>)
}

/// The CPU code of a separable objective in both precisions (see
/// [`gpude_device::separable::Separable`]): the same terms, in the same order, as the
/// PTX module's symbols, so that the CPU engine's lane-order evaluation gives the GPU's
/// bits.
pub struct SeparableCpu {
    pub f32: Box<dyn Separable<f32> + Send + Sync>,
    pub f64: Box<dyn Separable<f64> + Send + Sync>,
}

impl SeparableCpu {
    /// The flags of the form in precision `p`.
    fn flags(&self, p: crate::job::precision::Precision) -> SepFlags {
        match p {
            crate::job::precision::Precision::F32 => self.f32.flags(),
            crate::job::precision::Precision::F64 => self.f64.flags(),
        }
    }
}

/// The values of the rows of `xs` (`dim` components each) under a separable form, in
/// precision `T`, as a group of lanes computes them (the GPU's bits).
fn evaluate_separable<T: Real>(
    s32: &(dyn Separable<f32> + Send + Sync),
    s64: &(dyn Separable<f64> + Send + Sync),
    xs: &[T],
    dim: usize,
    out: &mut [T],
) {
    if T::NAME == "f32" {
        let lanes = SepLanes::new::<f32>(s32);
        xs.par_chunks(dim).zip(out.par_iter_mut()).for_each_init(
            || Vec::with_capacity(dim),
            |buf, (x, o)| {
                buf.clear();
                buf.extend(x.iter().map(|v| v.to_f64() as f32));
                *o = T::of(evaluate_of(lanes, buf) as f64);
            },
        );
    } else {
        let lanes = SepLanes::new::<f64>(s64);
        xs.par_chunks(dim).zip(out.par_iter_mut()).for_each_init(
            || Vec::with_capacity(dim),
            |buf, (x, o)| {
                buf.clear();
                buf.extend(x.iter().map(|v| v.to_f64()));
                *o = T::of(evaluate_of(lanes, buf));
            },
        );
    }
}

/// A CEC 2017 function's data at one dimension, with the data rounded to f32 once for
/// f32 runs.
pub struct CecObjective {
    data: FunctionData,
    shift32: Vec<f32>,
    rotation32: Vec<f32>,
}

impl CecObjective {
    pub fn new(data: FunctionData) -> CecObjective {
        CecObjective {
            shift32: data.shift().iter().map(|&v| v as f32).collect(),
            rotation32: data.rotation().iter().map(|&v| v as f32).collect(),
            data,
        }
    }

    pub fn data(&self) -> &FunctionData {
        &self.data
    }

    /// F_n(x) in precision `T` (f32 with the rounded data, f64 with the data as read).
    fn evaluate<T: Real>(&self, x: &[T], scratch: &mut Vec<T>) -> T {
        use gpude_device::cec2017 as dev;
        scratch.resize(dev::scratch_len(self.data.dim()), T::ZERO);
        let n = self.data.id().number();
        if T::NAME == "f32" {
            let xs: Vec<f32> = x.iter().map(|v| v.to_f64() as f32).collect();
            let data = dev::Data {
                shift: &self.shift32,
                rotation: &self.rotation32,
                shuffle: self.data.shuffle(),
            };
            let mut s = vec![0f32; scratch.len()];
            T::of(dev::evaluate(n, &xs, &data, &mut s) as f64)
        } else {
            let xs: Vec<f64> = x.iter().map(|v| v.to_f64()).collect();
            T::of(self.data.evaluate(&xs))
        }
    }
}

/// A host callback: its name, known minimum, smallest dimension, the function, and the
/// first failure of the run in progress.
pub struct CallbackObjective {
    name: String,
    min: Option<f64>,
    min_dim: u32,
    /// The function on the CPU; `None` for PTX code alone.
    f: Option<Box<dyn BatchObjective>>,
    /// The separable form on the CPU, which the CPU engine prefers to `f`.
    sep: Option<SeparableCpu>,
    /// The same objective compiled to PTX, for the GPU.
    gpu: Option<Arc<PtxCode>>,
    failed: AtomicBool,
    failure: Mutex<Option<String>>,
}

// A job holding a callback stays usable across `catch_unwind` like any other job: the
// engine catches the callback's panics itself and turns them into an error; the state a
// panicking callback leaves behind is its own.
impl std::panic::RefUnwindSafe for CallbackObjective {}
impl std::panic::UnwindSafe for CallbackObjective {}

impl CallbackObjective {
    /// Calls the callback on `n = xs.len() / dim` points; a panic or a wrong number of
    /// values is an error.
    fn call(&self, xs: &[f64], dim: usize) -> std::result::Result<Vec<f64>, String> {
        let n = xs.len() / dim.max(1);
        let Some(f) = &self.f else {
            return Err(format!(
                "the objective {:?} is PTX code without a CPU function: it runs on the GPU \
                 only (--backend cuda); the library takes a CPU function beside the PTX \
                 (Objective::ptx_with_cpu)",
                crate::error::clip(&self.name)
            ));
        };
        let out = catch_unwind(AssertUnwindSafe(|| f.evaluate(xs, dim))).map_err(|p| {
            let what = p
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "no message".into());
            format!(
                "the objective {:?} panicked: {}",
                crate::error::clip(&self.name),
                crate::error::clip(&what)
            )
        })?;
        if out.len() != n {
            return Err(format!(
                "the objective {:?} returned {} values for {n} points: one value per point is required",
                crate::error::clip(&self.name),
                out.len()
            ));
        }
        Ok(out)
    }

    fn fail(&self, message: String) {
        let mut slot = self.failure.lock().unwrap_or_else(|e| e.into_inner());
        if slot.is_none() {
            *slot = Some(message);
        }
        self.failed.store(true, Ordering::Release);
    }
}

/// What a job minimises. Cloning shares the expression, data or callback.
#[derive(Clone)]
pub enum Objective {
    /// One of gpude's built-in functions (the GPU kernels and the CPU's fast paths).
    Builtin(Function),
    /// An expression of the objective language ([`gpude_expr`]): the CPU engine
    /// evaluates it, the CUDA engine links its generated PTX with its kernels.
    Expr(Arc<ExprObjective>),
    /// A CEC 2017 function at the dimension its data were read for.
    Cec2017(Arc<CecObjective>),
    /// A host callback, evaluated on the CPU a batch at a time.
    Callback(Arc<CallbackObjective>),
}

impl From<Function> for Objective {
    fn from(f: Function) -> Objective {
        Objective::Builtin(f)
    }
}

impl fmt::Debug for Objective {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Objective::Builtin(b) => write!(f, "Builtin({b:?})"),
            Objective::Expr(e) => write!(f, "Expr({:?}, min {:?})", e.expr.source(), e.min),
            Objective::Cec2017(c) => write!(f, "Cec2017({} at D = {})", c.data.id(), c.data.dim()),
            Objective::Callback(c) => write!(f, "Callback({:?})", c.name),
        }
    }
}

impl PartialEq for Objective {
    /// The same built-in; the same expression text and minimum; the same CEC function
    /// and dimension; the very same callback.
    fn eq(&self, o: &Objective) -> bool {
        match (self, o) {
            (Objective::Builtin(a), Objective::Builtin(b)) => a == b,
            (Objective::Expr(a), Objective::Expr(b)) => {
                Arc::ptr_eq(a, b)
                    || (a.expr.source() == b.expr.source()
                        && a.min.map(f64::to_bits) == b.min.map(f64::to_bits))
            }
            (Objective::Cec2017(a), Objective::Cec2017(b)) => {
                a.data.id() == b.data.id() && a.data.dim() == b.data.dim()
            }
            (Objective::Callback(a), Objective::Callback(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }
}

/// Checks a user-given minimum.
fn check_min(min: Option<f64>) -> Result<()> {
    match min {
        Some(m) if !m.is_finite() => Err(Error::invalid(
            "known minimum",
            crate::error::num(m),
            "a finite number",
        )),
        _ => Ok(()),
    }
}

impl Objective {
    /// An expression of the objective language; `min` is its known minimum, if any.
    /// A parse error names the position and what was expected.
    pub fn expr(source: &str, min: Option<f64>) -> Result<Objective> {
        check_min(min)?;
        let expr = Expr::parse(source).map_err(|e| Error::Input {
            what: "expression".into(),
            message: e.to_string(),
        })?;
        let separable = separable_of(&expr);
        Ok(Objective::Expr(Arc::new(ExprObjective {
            expr,
            min,
            separable,
        })))
    }

    /// CEC 2017 function `id` at dimension `dim` (one of [`FunctionId::dimensions`]), its data read from
    /// `source` (see [`DataSource::locate`]).
    pub fn cec2017(source: &DataSource, id: FunctionId, dim: u32) -> Result<Objective> {
        let data = FunctionData::load(source, id, dim as usize)?;
        Ok(Objective::Cec2017(Arc::new(CecObjective::new(data))))
    }

    /// The function named `name` at dimension `dim`: a built-in (`rastrigin`) or a CEC
    /// 2017 function (`cec2017-f5`, its data found by [`DataSource::locate`]), with its
    /// usual domain (the same in every component).
    pub fn named(name: &str, dim: u32) -> Result<(Objective, (f64, f64))> {
        if crate::job::cec2017::is_cec2017_name(name) {
            let id = FunctionId::parse(name)?;
            let source = DataSource::locate(None)?;
            let b = crate::job::cec2017::BOUND;
            Ok((Objective::cec2017(&source, id, dim)?, (-b, b)))
        } else {
            let info = FunctionInfo::parse(name)?;
            Ok((Objective::Builtin(info.function), info.domain))
        }
    }

    /// A batch callback named `name` (see the module documentation for the layout).
    pub fn callback(
        name: impl Into<String>,
        min: Option<f64>,
        f: impl BatchObjective + 'static,
    ) -> Result<Objective> {
        Self::with_code(name.into(), min, Some(Box::new(f)), None)
    }

    fn with_code(
        name: String,
        min: Option<f64>,
        f: Option<Box<dyn BatchObjective>>,
        gpu: Option<PtxCode>,
    ) -> Result<Objective> {
        check_min(min)?;
        Ok(Objective::Callback(Arc::new(CallbackObjective {
            name,
            min,
            min_dim: 1,
            f,
            sep: None,
            gpu: gpu.map(Arc::new),
            failed: AtomicBool::new(false),
            failure: Mutex::new(None),
        })))
    }

    /// An objective compiled to PTX (see [`crate::job::ptx_objective`]), for the GPU only: the
    /// CPU engine refuses it when it first evaluates it, and a result's verified error is
    /// the search's own (nothing on the CPU can evaluate it again).
    pub fn ptx(name: impl Into<String>, min: Option<f64>, code: PtxCode) -> Result<Objective> {
        Self::with_code(name.into(), min, None, Some(code))
    }

    /// An objective compiled to PTX for the GPU with the same function for the CPU `f`
    /// (a batch callback, see the module documentation): the CPU engine runs `f`, the
    /// GPU the PTX, and results are verified with `f`. A Rust objective built for both
    /// targets from one source (`examples/objective-rust`) gives both.
    pub fn ptx_with_cpu(
        name: impl Into<String>,
        min: Option<f64>,
        code: PtxCode,
        f: impl BatchObjective + 'static,
    ) -> Result<Objective> {
        Self::with_code(name.into(), min, Some(Box::new(f)), Some(code))
    }

    /// An objective compiled to PTX that defines its separable form (see
    /// [`crate::job::ptx_objective`]) with the same form for the CPU `sep`: the CPU engine
    /// evaluates `sep` in the order of the GPU's lanes, and so gives the GPU's bits. The
    /// module may define the whole-vector objective too; the engines prefer the
    /// separable form. The flags of `sep` must be the module's in each precision the
    /// module defines the form for.
    pub fn ptx_separable(
        name: impl Into<String>,
        min: Option<f64>,
        code: PtxCode,
        sep: SeparableCpu,
    ) -> Result<Objective> {
        let name = name.into();
        let mut any = false;
        for p in [
            crate::job::precision::Precision::F32,
            crate::job::precision::Precision::F64,
        ] {
            if let Some(flags) = code.separable(p) {
                any = true;
                let cpu = sep.flags(p);
                if cpu != flags {
                    return Err(Error::invalid(
                        "separable CPU code",
                        format!("flags {} in {}", cpu.bits(), p.name()),
                        format!(
                            "the flags of the PTX module of {:?} ({}): the CPU code and the \
                             module must compute the same form",
                            crate::error::clip(&name),
                            flags.bits()
                        ),
                    ));
                }
            }
        }
        if !any {
            return Err(Error::invalid(
                "PTX objective",
                crate::error::clip(&name),
                "a module that defines the separable form (gpude_sep_a_T, \
                 gpude_sep_finish_T, gpude_sep_flags_T) for Objective::ptx_separable",
            ));
        }
        check_min(min)?;
        Ok(Objective::Callback(Arc::new(CallbackObjective {
            name,
            min,
            min_dim: 1,
            f: None,
            sep: Some(sep),
            gpu: Some(Arc::new(code)),
            failed: AtomicBool::new(false),
            failure: Mutex::new(None),
        })))
    }

    /// The flags of the separable form the engines run in precision `p`, when the
    /// objective has one there: a PTX module's, or an expression's.
    pub fn separable_flags(&self, p: crate::job::precision::Precision) -> Option<SepFlags> {
        match self {
            Objective::Callback(c) => c.gpu.as_ref().and_then(|g| g.separable(p)),
            Objective::Expr(e) => e.separable.as_ref().map(|s| match p {
                crate::job::precision::Precision::F32 => Separable::<f32>::flags(&**s),
                crate::job::precision::Precision::F64 => Separable::<f64>::flags(&**s),
            }),
            _ => None,
        }
    }

    /// An expression's separable form's module for precision `p`.
    pub(crate) fn expr_separable_ptx(&self, p: ExprPrecision) -> Option<String> {
        match self {
            Objective::Expr(e) => e.separable.as_ref().map(|s| s.module(p)),
            _ => None,
        }
    }

    /// The PTX code of an objective given as PTX, when it is one.
    pub fn ptx_code(&self) -> Option<&PtxCode> {
        match self {
            Objective::Callback(c) => c.gpu.as_deref(),
            _ => None,
        }
    }

    /// False only for PTX code without a CPU function: nothing on the CPU evaluates it.
    pub fn has_cpu_code(&self) -> bool {
        match self {
            Objective::Callback(c) => c.f.is_some() || c.sep.is_some(),
            _ => true,
        }
    }

    /// A callback of one point, called for every point of a batch on all cores.
    pub fn pointwise(
        name: impl Into<String>,
        min: Option<f64>,
        f: impl Fn(&[f64]) -> f64 + Send + Sync + 'static,
    ) -> Result<Objective> {
        Self::callback(name, min, Pointwise(f))
    }

    /// The built-in function, when it is one.
    pub fn builtin(&self) -> Option<Function> {
        match self {
            Objective::Builtin(f) => Some(*f),
            _ => None,
        }
    }

    /// The expression, when it is one.
    pub fn as_expr(&self) -> Option<&Expr> {
        match self {
            Objective::Expr(e) => Some(&e.expr),
            _ => None,
        }
    }

    /// The CEC 2017 function's data, when it is one.
    pub fn as_cec2017(&self) -> Option<&FunctionData> {
        match self {
            Objective::Cec2017(c) => Some(&c.data),
            _ => None,
        }
    }

    /// True for a host callback (also one given as PTX, with or without CPU code).
    pub fn is_callback(&self) -> bool {
        matches!(self, Objective::Callback(_))
    }

    /// True for a callback that only the host can evaluate (no PTX code): the CUDA
    /// engine keeps the DE stages on the GPU and calls it on the host for each batch.
    pub fn is_host_callback(&self) -> bool {
        matches!(self, Objective::Callback(c) if c.gpu.is_none())
    }

    /// The name reports use: the built-in's name, `expr`, `cec2017-f5`, the callback's.
    pub fn name(&self) -> String {
        match self {
            Objective::Builtin(f) => FunctionInfo::of(*f).name.to_string(),
            Objective::Expr(_) => "expr".into(),
            Objective::Cec2017(c) => c.data.id().name(),
            Objective::Callback(c) => c.name.clone(),
        }
    }

    /// One line for people: the name, and the expression's text (clipped).
    pub fn describe(&self) -> String {
        match self {
            Objective::Expr(e) => format!("expr {}", crate::error::clip(e.expr.source())),
            Objective::Cec2017(c) => format!("{} ({})", c.data.id().name(), c.data.id().title()),
            Objective::Callback(c) if c.gpu.is_some() => format!(
                "{} (PTX, {})",
                crate::error::clip(&c.name),
                c.gpu.as_ref().map_or("", |g| g.precisions())
            ),
            o => o.name(),
        }
    }

    /// The known minimum: built-ins' minimum, CEC's F* = 100·n, the user's for the rest.
    pub fn min(&self) -> Option<f64> {
        match self {
            Objective::Builtin(f) => Some(FunctionInfo::of(*f).min),
            Objective::Expr(e) => e.min,
            Objective::Cec2017(c) => Some(c.data.id().f_star()),
            Objective::Callback(c) => c.min,
        }
    }

    /// What errors are measured from: the known minimum, else 0 (an objective without
    /// a known minimum reports its values as errors).
    pub fn reference(&self) -> f64 {
        self.min().unwrap_or(0.0)
    }

    /// The smallest dimension the objective is defined for.
    pub fn min_dim(&self) -> u32 {
        match self {
            Objective::Builtin(f) => FunctionInfo::of(*f).min_dim,
            Objective::Expr(e) => e.expr.min_dim().max(1),
            Objective::Cec2017(c) => c.data.dim() as u32,
            Objective::Callback(c) => c.min_dim,
        }
    }

    /// The dimensions allowed beyond [`Objective::min_dim`]: a CEC function runs at the
    /// dimension of its data only.
    pub(crate) fn check_dim(&self, dim: u64) -> Result<()> {
        if let Objective::Cec2017(c) = self
            && dim != c.data.dim() as u64
        {
            return Err(Error::invalid(
                "dimension",
                dim,
                format!(
                    "{} (the dimension {} was loaded for)",
                    c.data.dim(),
                    c.data.id().name()
                ),
            ));
        }
        Ok(())
    }

    /// The values of the rows of `xs` (`dim` components each) in precision `T` into
    /// `out`, for objectives other than built-ins (the engines evaluate those inline).
    /// A callback's failure is recorded (see [`Objective::take_failure`]) and its values
    /// become NaN.
    pub(crate) fn evaluate_rows<T: Real>(
        &self,
        formula: gpude_device::Formula,
        xs: &[T],
        dim: usize,
        out: &mut [T],
    ) {
        match self {
            Objective::Builtin(f) => {
                xs.par_chunks(dim)
                    .zip(out.par_iter_mut())
                    .for_each(|(x, o)| *o = evaluate_fast(*f, formula, x));
            }
            Objective::Expr(e) if e.separable.is_some() => {
                if let Some(s) = &e.separable {
                    evaluate_separable(&**s, &**s, xs, dim, out);
                }
            }
            Objective::Expr(e) => {
                let e = &e.expr;
                if T::NAME == "f32" {
                    xs.par_chunks(dim).zip(out.par_iter_mut()).for_each_init(
                        || (e.scratch::<f32>(), Vec::with_capacity(dim)),
                        |(s, buf), (x, o)| {
                            buf.clear();
                            buf.extend(x.iter().map(|v| v.to_f64() as f32));
                            *o = T::of(e.eval_with(s, buf) as f64);
                        },
                    );
                } else {
                    xs.par_chunks(dim).zip(out.par_iter_mut()).for_each_init(
                        || (e.scratch::<f64>(), Vec::with_capacity(dim)),
                        |(s, buf), (x, o)| {
                            buf.clear();
                            buf.extend(x.iter().map(|v| v.to_f64()));
                            *o = T::of(e.eval_with(s, buf));
                        },
                    );
                }
            }
            Objective::Cec2017(c) => {
                xs.par_chunks(dim)
                    .zip(out.par_iter_mut())
                    .for_each_init(Vec::new, |s, (x, o)| *o = c.evaluate(x, s));
            }
            Objective::Callback(c) => {
                if c.failed.load(Ordering::Acquire) {
                    out.fill(T::of(f64::NAN));
                    return;
                }
                if let Some(s) = &c.sep {
                    let run = catch_unwind(AssertUnwindSafe(|| {
                        evaluate_separable(&*s.f32, &*s.f64, xs, dim, out)
                    }));
                    if run.is_err() {
                        c.fail(format!(
                            "the separable CPU code of the objective {:?} panicked",
                            crate::error::clip(&c.name)
                        ));
                        out.fill(T::of(f64::NAN));
                    }
                    return;
                }
                let x64: Vec<f64> = xs.iter().map(|v| v.to_f64()).collect();
                match c.call(&x64, dim) {
                    Ok(v) => {
                        for (o, v) in out.iter_mut().zip(v) {
                            *o = T::of(v);
                        }
                    }
                    Err(m) => {
                        c.fail(m);
                        out.fill(T::of(f64::NAN));
                    }
                }
            }
        }
    }

    /// The value at one point in f64 (the verification of results).
    pub fn evaluate_f64(&self, x: &[f64]) -> f64 {
        let mut out = [0.0];
        self.evaluate_rows(gpude_device::Formula::Exact, x, x.len(), &mut out);
        out[0]
    }

    /// True once a callback has failed during the run in progress.
    pub fn failed(&self) -> bool {
        match self {
            Objective::Callback(c) => c.failed.load(Ordering::Acquire),
            _ => false,
        }
    }

    /// Forgets a previous run's failure (the engines call it when a run starts).
    pub(crate) fn reset_failure(&self) {
        if let Objective::Callback(c) = self {
            *c.failure.lock().unwrap_or_else(|e| e.into_inner()) = None;
            c.failed.store(false, Ordering::Release);
        }
    }

    /// The failure of the run that just ended, as an error (and forgets it).
    pub fn take_failure(&self) -> Result<()> {
        if let Objective::Callback(c) = self
            && c.failed.swap(false, Ordering::AcqRel)
        {
            let m = c
                .failure
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .take()
                .unwrap_or_default();
            return Err(Error::Objective { message: m });
        }
        Ok(())
    }
}
/// [`evaluate`] with hardware FMA when there is one: the device maths use fused
/// multiply-adds, which round correctly with or without the instruction, so the bits
/// are the same (the CPU engine's trials are compiled the same way).
pub(crate) fn evaluate_fast<T: Real>(f: Function, formula: Formula, x: &[T]) -> T {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("fma") {
        // SAFETY: the processor has FMA (checked just above).
        return unsafe { evaluate_fma(f, formula, x) };
    }
    evaluate(f, formula, x)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "fma")]
fn evaluate_fma<T: Real>(f: Function, formula: Formula, x: &[T]) -> T {
    evaluate(f, formula, x)
}
