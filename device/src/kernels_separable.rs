//! The separable family (nvptx64 only): the built-in kernels' code path with a user's
//! separable objective (see [`crate::separable`]) in place of a built-in function.
//!
//! The kernels declare the contract's symbols `gpude_sep_a_T`, `gpude_sep_b_T` and
//! `gpude_sep_finish_T` (`extern "C"`: the PTX keeps them as `.extern .func`), and the
//! host links each kernel's module with the objective's module through the driver's JIT
//! linker, as it does for the external family. A group of lanes builds a trial in
//! registers and evaluates it in the same rounds as the built-in kernels: each lane
//! calls `gpude_sep_a_T` (and `gpude_sep_b_T`) on its chunk, the group combines the
//! accumulators with the xor butterfly, and every lane calls `gpude_sep_finish_T`. So
//! a run gives the CPU engine's bits ([`crate::lanes::evaluate_of`] with
//! [`SepLanes`]) whenever the module's symbols compute what its CPU code does.
//!
//! # The flags
//!
//! The objective's [`SepFlags`] travel in the launch parameter
//! [`Run::formula`](crate::abi::Run::formula) (which the built-in kernels read as their
//! formula; a separable objective has none): [`SepFlags::bits`]. The host takes them
//! from the module's `gpude_sep_flags_T` global and checks them; the kernels only read
//! the parameter (a value no flags give counts as no flags).
//!
//! The entry points are defined by the built-in family's macros, so they take the same
//! parameters (`crate::abi`) and the host launches them with the same code; the
//! function code the macro passes is unused.

use crate::abi::{BatchParams, GridParams, StepParams};
use crate::kernels::{Builtin, LaneReal, Setup, persistent_with, step_with};
use crate::separable::{SepFlags, SepLanes, Separable};

unsafe extern "C" {
    fn gpude_sep_a_f32(
        acc: f32,
        x0: f32,
        x1: f32,
        x2: f32,
        x3: f32,
        prev: f32,
        base: f32,
        j0: u32,
        n: u32,
        d: u32,
    ) -> f32;
    fn gpude_sep_b_f32(
        acc: f32,
        x0: f32,
        x1: f32,
        x2: f32,
        x3: f32,
        prev: f32,
        base: f32,
        j0: u32,
        n: u32,
        d: u32,
    ) -> f32;
    fn gpude_sep_finish_f32(a: f32, b: f32, d: u32) -> f32;
    fn gpude_sep_a_f64(
        acc: f64,
        x0: f64,
        x1: f64,
        x2: f64,
        x3: f64,
        prev: f64,
        base: f64,
        j0: u32,
        n: u32,
        d: u32,
    ) -> f64;
    fn gpude_sep_b_f64(
        acc: f64,
        x0: f64,
        x1: f64,
        x2: f64,
        x3: f64,
        prev: f64,
        base: f64,
        j0: u32,
        n: u32,
        d: u32,
    ) -> f64;
    fn gpude_sep_finish_f64(a: f64, b: f64, d: u32) -> f64;
}

/// The linked module's separable form: its methods call the contract's symbols. The
/// flags come from the launch, not from here ([`SepLanes::flags`]).
pub(crate) struct Linked;

/// The one [`Linked`] the kernels' [`SepLanes`] refer to.
pub(crate) static LINKED: Linked = Linked;

impl Separable<f32> for Linked {
    #[inline(always)]
    fn flags(&self) -> SepFlags {
        SepFlags::default()
    }
    #[inline(always)]
    fn a(&self, acc: f32, v: [f32; 4], prev: f32, base: f32, j0: u32, n: u32, d: u32) -> f32 {
        // SAFETY: the host links a module defining the symbol with the contract's
        // signature (checked when the module is read); it reads nothing but its
        // arguments.
        unsafe { gpude_sep_a_f32(acc, v[0], v[1], v[2], v[3], prev, base, j0, n, d) }
    }
    #[inline(always)]
    fn b(&self, acc: f32, v: [f32; 4], prev: f32, base: f32, j0: u32, n: u32, d: u32) -> f32 {
        // SAFETY: as in `a`; called only when the flags say B, which the host checks
        // the module defines.
        unsafe { gpude_sep_b_f32(acc, v[0], v[1], v[2], v[3], prev, base, j0, n, d) }
    }
    #[inline(always)]
    fn finish(&self, a: f32, b: f32, d: u32) -> f32 {
        // SAFETY: as in `a`.
        unsafe { gpude_sep_finish_f32(a, b, d) }
    }
}

impl Separable<f64> for Linked {
    #[inline(always)]
    fn flags(&self) -> SepFlags {
        SepFlags::default()
    }
    #[inline(always)]
    fn a(&self, acc: f64, v: [f64; 4], prev: f64, base: f64, j0: u32, n: u32, d: u32) -> f64 {
        // SAFETY: as for f32.
        unsafe { gpude_sep_a_f64(acc, v[0], v[1], v[2], v[3], prev, base, j0, n, d) }
    }
    #[inline(always)]
    fn b(&self, acc: f64, v: [f64; 4], prev: f64, base: f64, j0: u32, n: u32, d: u32) -> f64 {
        // SAFETY: as for f32.
        unsafe { gpude_sep_b_f64(acc, v[0], v[1], v[2], v[3], prev, base, j0, n, d) }
    }
    #[inline(always)]
    fn finish(&self, a: f64, b: f64, d: u32) -> f64 {
        // SAFETY: as for f32.
        unsafe { gpude_sep_finish_f64(a, b, d) }
    }
}

/// The kernel's settings with the linked objective and the flags of `Run::formula`.
#[inline(always)]
fn linked<T: LaneReal>(s: Setup<T>, flags: u32) -> Setup<T, SepLanes<'static, Linked>>
where
    Linked: Separable<T>,
{
    s.with_objective(SepLanes {
        s: &LINKED,
        flags: SepFlags::from_bits(flags).unwrap_or_default(),
    })
}

/// The built-in `batch` with the linked objective, without a control block.
///
/// # Safety
/// As the built-in batch kernels.
#[inline(always)]
pub(crate) unsafe fn batch_plain<T: LaneReal>(s: Setup<T>, p: BatchParams<T>)
where
    Linked: Separable<T>,
{
    // SAFETY: forwarded.
    unsafe {
        crate::batch::batch::<T, _, crate::batch::Lanes<T>, crate::batch::Plain>(
            linked(s, p.run.formula),
            p,
        )
    }
}

/// The built-in `batch` with the linked objective, under the control block `p.ctl`.
///
/// # Safety
/// As the built-in controlled batch kernels.
#[inline(always)]
pub(crate) unsafe fn batch_controlled<T: LaneReal>(s: Setup<T>, p: BatchParams<T>)
where
    Linked: Separable<T>,
{
    // SAFETY: forwarded.
    unsafe {
        crate::batch::batch::<T, _, crate::batch::Lanes<T>, crate::batch::ControlledFromBuffers>(
            linked(s, p.run.formula),
            p,
        )
    }
}

/// The built-in `step` with the linked objective.
///
/// # Safety
/// As the built-in step kernels.
#[inline(always)]
pub(crate) unsafe fn step<T: LaneReal>(s: Setup<T>, p: StepParams<T>)
where
    Linked: Separable<T>,
{
    // SAFETY: forwarded.
    unsafe { step_with::<T, _, Builtin>(linked(s, p.run.formula), p) }
}

/// The built-in `persistent` with the linked objective, without a control block or
/// with one.
///
/// # Safety
/// As the built-in grid kernels.
#[inline(always)]
pub(crate) unsafe fn persistent_entry<T: LaneReal>(s: Setup<T>, p: GridParams<T>)
where
    Linked: Separable<T>,
{
    let s = linked(s, p.run.formula);
    // SAFETY: forwarded.
    unsafe {
        if p.ctl.is_null() {
            persistent_with::<T, _, Builtin, false>(s, p)
        } else {
            persistent_with::<T, _, Builtin, true>(s, p)
        }
    }
}
