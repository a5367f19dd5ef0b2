//! The external-objective family (nvptx64 only): DE kernels whose objective is a
//! function they declare but do not define.
//!
//! The objective is `gpude_objective_f32(x, d)` or `gpude_objective_f64(x, d)`
//! ([`crate::registry::objective_symbol`]), declared `extern "C"`: the PTX keeps it as
//! `.extern .func`, and the host links the kernel's module with a module that defines
//! it (an expression's generated PTX with the maths of [`crate::expr_maths`]) through the
//! driver's JIT linker. The kernels are defined by the built-in family's macros, so they
//! take the same parameters (`crate::abi`) and the host launches them with the same code.
//!
//! # Layout
//!
//! An opaque `f(x, D)` cannot be spread over lanes, so a generation is done in rounds of
//! two halves. A group of G lanes (G from [`group_width`], as in the built-in kernels)
//! first builds G trials one after the other, exactly as the built-in kernels do (each
//! lane its four components per round, 16-byte loads, a random row read in one
//! coalesced request) and writes each to its individual's spare row. Then every lane of
//! the group calls the objective on one of these G rows: lane l evaluates the individual
//! of pass `base + l`, the one it drew the indices for (see `DrawCache`). Building keeps
//! the built-in memory pattern, and the objective runs on every lane.
//!
//! Unlike the built-in kernels, trials are always written out (the objective reads them
//! from memory), also when a row fits one round.
//!
//! The grid layouts (`de_step_*_external`, `de_grid_*_external`) run the built-in
//! kernels' `step_with` and `persistent_with` with the passes of [`External`], which
//! work in the same rounds.
//!
//! Draws, trial components, selection and the best follow the built-in kernels (and the
//! CPU engine) exactly: a run gives the CPU engine's bits whenever the objective does,
//! which an expression's PTX does (see `gpude-expr`).

use core::arch::asm;

use crate::abi::{BatchParams, GridParams, StepParams};
use crate::batch::{Block, Rows, WhenMapped, batch};
use crate::de::{
    BoundPolicy, COMPONENT_SLOT, Crossover, Draws, RESAMPLE_SLOT, accepts, better, block,
    first_exceeding, init_chunk, run_length, subsequence, trial_chunk,
};
use crate::functions::BuiltinObjective;
use crate::kernels::{
    DrawCache, Group, LaneReal, Passes, Setup, Sweep, persistent_with, row, step_with,
};
use crate::lanes::{chunk, rounds};
use crate::philox::block_words;

unsafe extern "C" {
    fn gpude_objective_f32(x: *const f32, d: u32) -> f32;
    fn gpude_objective_f64(x: *const f64, d: u32) -> f64;
}

/// A precision with an objective linked in.
pub trait ExternalReal: LaneReal {
    /// The objective at the point of `d` values from `x`.
    ///
    /// # Safety
    /// `x .. x + d` must be readable global memory (an expression's code reads it with
    /// global loads).
    unsafe fn objective(x: *const Self, d: u32) -> Self;
}

impl ExternalReal for f32 {
    #[inline(always)]
    unsafe fn objective(x: *const f32, d: u32) -> f32 {
        // SAFETY: the caller passes d readable values, all the objective reads.
        unsafe { gpude_objective_f32(x, d) }
    }
}

impl ExternalReal for f64 {
    #[inline(always)]
    unsafe fn objective(x: *const f64, d: u32) -> f64 {
        // SAFETY: as for f32.
        unsafe { gpude_objective_f64(x, d) }
    }
}

/// Orders the warp's memory accesses before it against those after it (all lanes).
#[inline(always)]
fn sync_warp() {
    // SAFETY: every lane of the warp reaches it the same number of times (the loops
    // around it have block-uniform trip counts), as the full member mask promises.
    unsafe { asm!("bar.warp.sync 0xffffffff;") }
}

/// Writes individual `i`'s initial row into buffer `a` when `active`: the built-in
/// kernels' initialisation without the evaluation.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(crate) unsafe fn init_row<T: LaneReal>(
    s: &Setup<T>,
    gr: &Group,
    key: [u32; 2],
    pstream: u32,
    i: u32,
    active: bool,
    lo: *const T,
    hi: *const T,
    a: *mut T,
) {
    if !active {
        return;
    }
    let dim = s.tp.dim;
    let sub = subsequence(pstream, i);
    let nr = rounds(dim);
    let mut c = 0;
    while c < nr {
        let (j0, n) = chunk(dim, gr.g, c, gr.lane);
        if n > 0 {
            let u = block_words(key, sub, block(0, j0 / 4));
            // SAFETY: j0 + 4 ≤ stride; the bounds are stride long and row i of a
            // holds stride values.
            unsafe {
                let (l4, h4) = (T::load4(lo.add(j0 as usize)), T::load4(hi.add(j0 as usize)));
                T::store4(
                    a.add((i * s.stride + j0) as usize),
                    init_chunk(&u, n, &l4, &h4),
                );
            }
        }
        c += 1;
    }
}

/// Builds individual `i`'s trial of generation `g` into its spare row (when `active`)
/// and returns that row: the built-in kernels' trial without the evaluation (the same
/// loads, words and components, with the words of the kernel's thesis variant: the
/// default's where the kernel has none, `Setup`'s variant being the constant 0 there).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(crate) unsafe fn trial_row<T: LaneReal>(
    s: &Setup<T>,
    gr: &Group,
    key: [u32; 2],
    pstream: u32,
    g: u32,
    i: u32,
    active: bool,
    best_i: u32,
    lo: *const T,
    hi: *const T,
    a: *mut T,
    b: *mut T,
    flags: *const u32,
    d: &Draws,
    fl: &[u32; 6],
) -> *mut T {
    let dim = s.tp.dim;
    let strat = s.tp.strategy;
    let ndraw = strat.draws();
    let sub = subsequence(pstream, i);
    let xi_row = row(a, b, fl[5], i, s.stride);
    let spare = row(a, b, fl[5] ^ 1, i, s.stride);
    let nr = rounds(dim);
    // Exponential crossover's run length needs every lane's uniforms first; the group's
    // minimum is a shuffle, so every lane takes part, active or not.
    let mut run = dim;
    if strat.crosses() && matches!(s.tp.crossover, Crossover::Exponential) {
        let mut first = u32::MAX;
        let mut c = 0;
        while c < nr {
            let (j0, n) = chunk(dim, gr.g, c, gr.lane);
            if n > 0 {
                let u = block_words(key, sub, block(g, COMPONENT_SLOT + j0 / 4));
                let f = first_exceeding(s.tp.cr, &u, j0, n, dim);
                if f < first {
                    first = f;
                }
            }
            c += 1;
        }
        run = run_length(gr.min_u32(first), dim);
    }
    if !active {
        return spare;
    }
    let mut rrows = [xi_row; 5];
    let mut k = 0;
    while k < 5 {
        if k < ndraw as usize {
            rrows[k] = row(a, b, fl[k], d.r[k], s.stride);
        }
        k += 1;
    }
    // SAFETY: best_i < np.
    let best_row = row(
        a,
        b,
        unsafe { *flags.add(best_i as usize) },
        best_i,
        s.stride,
    );
    let init_only = matches!(s.tp.bounds, BoundPolicy::InitOnly);
    let mut c = 0;
    while c < nr {
        let (j0, n) = chunk(dim, gr.g, c, gr.lane);
        if n > 0 {
            let off = j0 as usize;
            // The variant's words (the default's per-component words where the kernel
            // has no thesis variants: its variant is the constant default).
            let u = s.tp.variant.lambda_words(key, sub, g, j0);
            // SAFETY: every row pointer addresses a row of `stride ≥ j0 + 4` values.
            let (xi, best, l4, h4) = unsafe {
                (
                    if strat.uses_current() || strat.crosses() {
                        T::load4(xi_row.add(off))
                    } else {
                        [T::ZERO; 4]
                    },
                    if strat.uses_best() {
                        T::load4(best_row.add(off))
                    } else {
                        [T::ZERO; 4]
                    },
                    if init_only {
                        [T::ZERO; 4]
                    } else {
                        T::load4(lo.add(off))
                    },
                    if init_only {
                        [T::ZERO; 4]
                    } else {
                        T::load4(hi.add(off))
                    },
                )
            };
            let mut r = [[T::ZERO; 4]; 5];
            let mut k = 0;
            while k < 5 {
                if k < ndraw as usize {
                    // SAFETY: as above.
                    r[k] = unsafe { T::load4(rrows[k].add(off)) };
                }
                k += 1;
            }
            let v = trial_chunk(
                &s.tp,
                j0,
                n,
                &xi,
                &r,
                &best,
                &l4,
                &h4,
                &u,
                d.jrand,
                run,
                || block_words(key, sub, block(g, RESAMPLE_SLOT + j0 / 4)),
            );
            // SAFETY: the spare row of i is read by nobody else this generation.
            unsafe { T::store4(spare.add(off), v) };
        }
        c += 1;
    }
    spare
}

/// The grid layouts' passes with the objective linked in: in rounds of g passes, the
/// group builds g rows, then each lane evaluates the row of pass `base + lane`.
pub(crate) struct External;

impl<T: ExternalReal> Passes<T> for External {
    #[inline(always)]
    unsafe fn init(
        s: &Setup<T>,
        gr: &Group,
        sw: Sweep,
        key: [u32; 2],
        pstream: u32,
        lo: *const T,
        hi: *const T,
        a: *mut T,
        flags: *mut u32,
        fit: *mut T,
        _kc0: &[T; 4],
    ) -> (T, u32) {
        // SAFETY: indices are < np; the host sizes rows, flags and values for np
        // individuals.
        unsafe {
            let g = gr.g;
            let passes = sw.passes.div_ceil(g) * g;
            let (mut lf, mut li) = (T::NAN, u32::MAX);
            let mut base = 0;
            while base < passes {
                let mut k = 0;
                while k < g {
                    let (i, active) = sw.individual(base + k, s.np);
                    init_row(s, gr, key, pstream, i, active, lo, hi, a);
                    k += 1;
                }
                sync_warp();
                let (i, active) = sw.individual(base + gr.lane, s.np);
                if active {
                    let fx = T::objective(a.add((i * s.stride) as usize), s.tp.dim);
                    *fit.add(i as usize) = fx;
                    *flags.add(i as usize) = 0;
                    if better(fx, i, lf, li) {
                        lf = fx;
                        li = i;
                    }
                }
                base += g;
            }
            (lf, li)
        }
    }

    #[inline(always)]
    unsafe fn trial(
        s: &Setup<T>,
        gr: &Group,
        sw: Sweep,
        cache: &mut DrawCache,
        key: [u32; 2],
        pstream: u32,
        gn: u32,
        best_i: u32,
        lo: *const T,
        hi: *const T,
        a: *mut T,
        b: *mut T,
        flags_in: *const u32,
        flags_out: *mut u32,
        fit: *mut T,
        _kc0: &[T; 4],
    ) -> (T, u32) {
        // SAFETY: indices are < np; the host sizes the flags' planes, rows and values
        // for np individuals.
        unsafe {
            let g = gr.g;
            let passes = sw.passes.div_ceil(g) * g;
            let (mut lf, mut li) = (T::NAN, u32::MAX);
            let mut base = 0;
            while base < passes {
                // The round's trials, built by the whole group; lane k keeps the k-th
                // and the flag of its individual.
                let (mut mine, mut flag) = (a, 0);
                let mut k = 0;
                while k < g {
                    let pass = base + k;
                    let (i, active) = sw.individual(pass, s.np);
                    let (d, fl) = cache.get(
                        s,
                        gr,
                        key,
                        pstream,
                        gn,
                        pass,
                        |q| q * sw.groups + sw.my_group,
                        flags_in,
                    );
                    let spare = trial_row(
                        s, gr, key, pstream, gn, i, active, best_i, lo, hi, a, b, flags_in, &d, &fl,
                    );
                    if k == gr.lane {
                        mine = spare;
                        flag = fl[5];
                    }
                    k += 1;
                }
                sync_warp();
                let (i, active) = sw.individual(base + gr.lane, s.np);
                if active {
                    let ft = T::objective(mine, s.tp.dim);
                    let fi = *fit.add(i as usize);
                    let acc = accepts(ft, fi);
                    let fx = if acc { ft } else { fi };
                    *flags_out.add(i as usize) = flag ^ (acc as u32);
                    *fit.add(i as usize) = fx;
                    if better(fx, i, lf, li) {
                        lf = fx;
                        li = i;
                    }
                }
                base += g;
            }
            (lf, li)
        }
    }
}

/// The plain batch entry points' code: the one batch body ([`crate::batch`]) with
/// [`ExternalRows`], serving the control block only where `p.ctl` is not null.
///
/// # Safety
/// The host sizes every buffer as for the built-in batch kernels.
#[inline(always)]
pub(crate) unsafe fn batch_plain<T: ExternalReal>(s: Setup<T>, p: BatchParams<T>) {
    // SAFETY: forwarded.
    unsafe { batch::<T, _, ExternalRows, WhenMapped>(s, p) }
}

/// The controlled batch entry points' code (`…_ctl`, as the built-in families have):
/// the same as [`batch_plain`].
///
/// # Safety
/// As [`batch_plain`].
#[inline(always)]
pub(crate) unsafe fn batch_controlled<T: ExternalReal>(s: Setup<T>, p: BatchParams<T>) {
    // SAFETY: forwarded.
    unsafe { batch::<T, _, ExternalRows, WhenMapped>(s, p) }
}

/// The batch layout's rows with the objective linked in: rows in global memory, built
/// in rounds of `g` passes (see the module documentation): the group builds a round's
/// `g` rows together, then each lane evaluates one of them whole.
pub(crate) struct ExternalRows {
    /// Whole rounds of `g` passes.
    passes: u32,
    cache: DrawCache,
}

impl<T: ExternalReal> Rows<T, BuiltinObjective> for ExternalRows {
    #[inline(always)]
    unsafe fn new(b: &Block<T, BuiltinObjective>) -> Self {
        ExternalRows {
            passes: b.passes().div_ceil(b.gr.g) * b.gr.g,
            cache: DrawCache::new(),
        }
    }

    #[inline(always)]
    unsafe fn init(&mut self, b: &Block<T, BuiltinObjective>) {
        let g = b.gr.g;
        let mut base = 0;
        // SAFETY: the caller's contract; every index is < np.
        unsafe {
            while base < self.passes {
                // A round's rows into buffer a, then one row per lane evaluated.
                let mut k = 0;
                while k < g {
                    let (i, active) = b.individual(base + k);
                    init_row(&b.s, &b.gr, b.key, b.pstream, i, active, b.lo, b.hi, b.a);
                    k += 1;
                }
                sync_warp();
                let (i, active) = b.individual(base + b.gr.lane);
                if active {
                    *b.fit.add(i as usize) = T::objective(b.a.add((i * b.st) as usize), b.dim);
                    *b.flags.add(i as usize) = 0;
                }
                base += g;
            }
        }
    }

    #[inline(always)]
    unsafe fn trials(&mut self, b: &Block<T, BuiltinObjective>, gn: u32, bi: u32) -> u64 {
        let g = b.gr.g;
        let mut base = 0;
        // SAFETY: the caller's contract; every index is < np.
        unsafe {
            while base < self.passes {
                // The round's trials, built by the whole group; lane k keeps the k-th.
                let mut mine = b.a;
                let mut k = 0;
                while k < g {
                    let pass = base + k;
                    let (i, active) = b.individual(pass);
                    let (d, fl) = self.cache.get(
                        &b.s,
                        &b.gr,
                        b.key,
                        b.pstream,
                        gn,
                        pass,
                        |q| q * b.groups + b.my_group,
                        b.flags,
                    );
                    let spare = trial_row(
                        &b.s, &b.gr, b.key, b.pstream, gn, i, active, bi, b.lo, b.hi, b.a, b.b,
                        b.flags, &d, &fl,
                    );
                    if k == b.gr.lane {
                        mine = spare;
                    }
                    k += 1;
                }
                sync_warp();
                let (i, active) = b.individual(base + b.gr.lane);
                if active {
                    *b.trial_fit.add(i as usize) = T::objective(mine, b.dim);
                }
                base += g;
            }
        }
        0
    }
}

/// A generation of a grid-wide population with the objective linked in (the built-in
/// `step` with [`External`]'s passes).
#[inline(always)]
pub(crate) unsafe fn step<T: ExternalReal>(s: Setup<T>, p: StepParams<T>) {
    // SAFETY: forwarded from the kernel's contract.
    unsafe { step_with::<T, _, External>(s, p) }
}

/// A whole grid-wide run with the objective linked in (the built-in `persistent` with
/// [`External`]'s passes).
#[inline(always)]
pub(crate) unsafe fn persistent_entry<T: ExternalReal>(s: Setup<T>, p: GridParams<T>) {
    // SAFETY: forwarded from the kernel's contract.
    unsafe {
        if p.ctl.is_null() {
            persistent_with::<T, _, External, false>(s, p)
        } else {
            persistent_with::<T, _, External, true>(s, p)
        }
    }
}
