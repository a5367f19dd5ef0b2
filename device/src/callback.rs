//! The host-callback family (nvptx64 only): step-layout kernels for an objective that
//! runs on the host, a batch of rows at a time.
//!
//! The DE stages stay on the GPU; only the rows to evaluate and their values cross. One
//! population is spread over the grid as in the step layout, but it always lives in
//! `pop_a` (every flag stays 0) and `pop_b` holds the rows to evaluate, one per
//! individual, at the row stride. Each launch does one phase, chosen by the `init`
//! parameter ([`crate::registry::HOST_SELECT`] and the others):
//!
//! - *initial rows*: individual `i`'s initial row into row `i` of `pop_a` (the built-in
//!   kernels' initialisation without the evaluation);
//! - *initial selection*: the host has written the rows' values into `fit[0..np]`; the
//!   flags are cleared and the best found, as the step kernels' initialisation does;
//! - *trials*: individual `i`'s trial of the next generation into row `i` of `pop_b`
//!   (the external family's trial, so the built-in kernels' draws and components);
//! - *selection*: the host has written the trials' values into `fit[np..2·np]`; an
//!   accepted trial's row is copied into `pop_a` and its value into `fit[i]`, and the
//!   best is found, as the step kernels' generation does (state, best value, history).
//!
//! The selection and the best are the step kernels' own ([`step_with`] with the passes
//! of [`Host`]); draws, trial components and acceptance follow the CPU engine exactly,
//! so a run gives the CPU engine's bits for the same values.

use core::arch::nvptx::{_block_dim_x, _block_idx_x, _grid_dim_x, _thread_idx_x};

use crate::abi::StepParams;
use crate::de::{Draws, accepts, better};
use crate::external::{init_row, trial_row};
use crate::kernels::{
    DrawCache, Group, LaneReal, Passes, STATE_BEST, STATE_DONE, STATE_GEN, Setup, Sweep, step_with,
};
use crate::lanes::{chunk, group_width, rounds};
use crate::philox::key_of;
use crate::registry::{HOST_INIT_ROWS, HOST_INIT_SELECT, HOST_SELECT, HOST_TRIALS};

/// The step layout's passes when the host has evaluated the rows: the initialisation
/// reads the values the host wrote, a generation selects among the trials in `b` with
/// the values the host wrote after the population's.
pub(crate) struct Host;

impl<T: LaneReal> Passes<T> for Host {
    #[inline(always)]
    unsafe fn init(
        s: &Setup<T>,
        gr: &Group,
        sw: Sweep,
        _key: [u32; 2],
        _pstream: u32,
        _lo: *const T,
        _hi: *const T,
        _a: *mut T,
        flags: *mut u32,
        fit: *mut T,
        _kc0: &[T; 4],
    ) -> (T, u32) {
        // SAFETY: indices are < np; the host sizes flags and values for np individuals.
        unsafe {
            let (mut lf, mut li) = (T::NAN, u32::MAX);
            let mut pass = 0;
            while pass < sw.passes {
                let (i, active) = sw.individual(pass, s.np);
                if active {
                    let fx = *fit.add(i as usize);
                    if gr.lane == 0 {
                        *flags.add(i as usize) = 0;
                    }
                    if better(fx, i, lf, li) {
                        lf = fx;
                        li = i;
                    }
                }
                pass += 1;
            }
            (lf, li)
        }
    }

    #[inline(always)]
    unsafe fn trial(
        s: &Setup<T>,
        gr: &Group,
        sw: Sweep,
        _cache: &mut DrawCache,
        _key: [u32; 2],
        _pstream: u32,
        _gn: u32,
        _best_i: u32,
        _lo: *const T,
        _hi: *const T,
        a: *mut T,
        b: *mut T,
        _flags_in: *const u32,
        flags_out: *mut u32,
        fit: *mut T,
        _kc0: &[T; 4],
    ) -> (T, u32) {
        // SAFETY: indices are < np; rows of a and b hold `stride` values for np
        // individuals, `fit` 2·np values and the flags' plane np words (the host sizes
        // them so).
        unsafe {
            let dim = s.tp.dim;
            let nr = rounds(dim);
            let (mut lf, mut li) = (T::NAN, u32::MAX);
            let mut pass = 0;
            while pass < sw.passes {
                let (i, active) = sw.individual(pass, s.np);
                if active {
                    let fi = *fit.add(i as usize);
                    let ft = *fit.add((s.np + i) as usize);
                    let acc = accepts(ft, fi);
                    if acc {
                        // The group copies the trial's row, four components a lane.
                        let off = (i * s.stride) as usize;
                        let mut c = 0;
                        while c < nr {
                            let (j0, n) = chunk(dim, gr.g, c, gr.lane);
                            if n > 0 {
                                let at = off + j0 as usize;
                                T::store4(a.add(at), T::load4(b.add(at)));
                            }
                            c += 1;
                        }
                    }
                    let fx = if acc { ft } else { fi };
                    if gr.lane == 0 {
                        *flags_out.add(i as usize) = 0;
                        *fit.add(i as usize) = fx;
                    }
                    if better(fx, i, lf, li) {
                        lf = fx;
                        li = i;
                    }
                }
                pass += 1;
            }
            (lf, li)
        }
    }
}

/// Writes the rows the host evaluates next: the initial population into `pop_a`
/// (`trials` false) or the next generation's trials into `pop_b` (the generation after
/// the state's, from the state's best; nothing once the state says done).
///
/// # Safety
/// As the step kernels: buffers sized as [`StepParams`] says, every flag 0.
#[inline(always)]
unsafe fn rows<T: LaneReal>(s: Setup<T>, p: StepParams<T>, trials: bool) {
    let StepParams {
        pstream,
        seed,
        lo,
        hi,
        pop_a: a,
        pop_b: b,
        flags,
        state,
        ..
    } = p;
    // SAFETY: the host sizes the buffers as for the step kernels; every index is < np.
    unsafe {
        let tid = _thread_idx_x();
        let nthreads = _block_dim_x();
        let blk = _block_idx_x();
        let nblocks = _grid_dim_x();
        let np = s.np;
        let dim = s.tp.dim;
        let key = key_of(seed);
        let g = group_width(dim);
        let gr = Group::new(g, tid & 31);
        let groups_per_block = nthreads / g;
        let groups = groups_per_block * nblocks;
        let my_group = blk * groups_per_block + tid / g;
        let sw = Sweep {
            passes: np.div_ceil(groups),
            groups,
            my_group,
        };
        if !trials {
            let mut pass = 0;
            while pass < sw.passes {
                let (i, active) = sw.individual(pass, np);
                init_row(&s, &gr, key, pstream, i, active, lo, hi, a);
                pass += 1;
            }
            return;
        }
        if *(state.add(STATE_DONE) as *const u32) != 0 {
            return;
        }
        let gn = *(state.add(STATE_GEN) as *const u32) + 1;
        let best_i = *(state.add(STATE_BEST) as *const u32);
        let flags_in = flags.add(((gn + 1) % 2 * np) as usize);
        let mut cache = DrawCache {
            pre: Draws {
                r: [0; 5],
                jrand: 0,
            },
            flags: [0; 6],
        };
        let mut pass = 0;
        while pass < sw.passes {
            let (i, active) = sw.individual(pass, np);
            let (d, fl) = cache.get(
                &s,
                &gr,
                key,
                pstream,
                gn,
                pass,
                |q| q * sw.groups + sw.my_group,
                flags_in,
            );
            // Every flag is 0: the population is in a, the spare row is b's.
            trial_row(
                &s, &gr, key, pstream, gn, i, active, best_i, lo, hi, a, b, flags_in, &d, &fl,
            );
            pass += 1;
        }
    }
}

/// One phase of a host-callback run, as `p.init` says (see the module documentation).
///
/// # Safety
/// As [`rows`]; `fit` holds 2·np values.
#[inline(always)]
pub(crate) unsafe fn host_entry<T: LaneReal>(s: Setup<T>, mut p: StepParams<T>) {
    // SAFETY: forwarded from the kernel's contract.
    unsafe {
        match p.init {
            HOST_INIT_ROWS => rows(s, p, false),
            HOST_TRIALS => rows(s, p, true),
            HOST_INIT_SELECT => {
                p.init = 1;
                step_with::<T, _, Host>(s, p)
            }
            // An unknown phase cannot come from the host; it selects rather than trap.
            _ => {
                p.init = HOST_SELECT;
                step_with::<T, _, Host>(s, p)
            }
        }
    }
}
