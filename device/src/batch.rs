//! The batch layout's one body (nvptx64 only): one block evolves one population through
//! all generations in one launch ([`batch`]).
//!
//! Every batch entry point instantiates [`batch`] with two types:
//! - a [`Rows`]: where the population's rows and values live and how a generation's
//!   trials are made and evaluated: [`Lanes`] (rows in global memory, an objective
//!   evaluated by the group's lanes: the built-in functions and the separable family),
//!   `external::Linked` (rows in global memory, a whole-vector objective linked in at
//!   run time), `resident::Resident` (rows in shared memory for the whole run) and
//!   `pipelined::Pipelined` (rows in global memory, staged with `cp.async` one pass
//!   ahead);
//! - a [`Steering`]: whether the launch serves a control block ([`Plain`],
//!   [`Controlled`], or [`WhenMapped`], which asks the launch).
//!
//! The body owns what every layout shares: the block's share of the buffers, the
//! initial best, the loop over generations with its stop conditions and control
//! reports, the barrier that ends the trials, the selection, the best reduction, the
//! history and the results. A [`Rows`] owns only what differs. All of it is inlined into
//! each entry point, so an entry point's code is what a body written for it alone would
//! be.

use core::arch::nvptx::{_block_dim_x, _block_idx_x, _syncthreads, _thread_idx_x};

use crate::abi::{BatchParams, Run};
use crate::control::{self, SLOT_WORDS, STOP};
use crate::de::{accepts, better};
use crate::kernels::{
    DrawCache, Group, LaneReal, Setup, barrier_or, block_best, block_best_with, command, init_one,
    row, trial_one, write_progress,
};
use crate::lanes::{LaneObjective, chunk, group_width};
use crate::philox::key_of;

/// What a block knows of its population and its threads: the launch's settings, the
/// block's share of every global buffer, and how its thread groups sweep the
/// individuals (pass `q` of a group serves individual `q · groups + my_group`).
#[derive(Clone, Copy)]
pub(crate) struct Block<T, O> {
    pub(crate) s: Setup<T, O>,
    pub(crate) tid: u32,
    pub(crate) nthreads: u32,
    pub(crate) np: u32,
    pub(crate) dim: u32,
    pub(crate) st: u32,
    pub(crate) key: [u32; 2],
    pub(crate) pstream: u32,
    pub(crate) lo: *const T,
    pub(crate) hi: *const T,
    /// The population's two row buffers (`flags[i]` says which holds x_i).
    pub(crate) a: *mut T,
    pub(crate) b: *mut T,
    pub(crate) flags: *mut u32,
    pub(crate) fit: *mut T,
    pub(crate) trial_fit: *mut T,
    pub(crate) scratch_f: *mut T,
    pub(crate) scratch_i: *mut u32,
    pub(crate) gr: Group,
    pub(crate) groups: u32,
    pub(crate) my_group: u32,
}

impl<T: LaneReal, O> Block<T, O> {
    /// The individual of pass `pass` (clamped to np − 1) and whether it exists.
    #[inline(always)]
    pub(crate) fn individual(&self, pass: u32) -> (u32, bool) {
        let i0 = pass * self.groups + self.my_group;
        if i0 < self.np {
            (i0, true)
        } else {
            (self.np - 1, false)
        }
    }

    /// The passes that cover the population (individuals per thread group).
    #[inline(always)]
    pub(crate) fn passes(&self) -> u32 {
        self.np.div_ceil(self.groups)
    }

    /// The block's values and reduction scratch in global memory.
    #[inline(always)]
    pub(crate) fn global_values(&self) -> Values<T> {
        Values {
            fit: self.fit,
            trial_fit: self.trial_fit,
            scratch_f: self.scratch_f,
            scratch_i: self.scratch_i,
        }
    }
}

/// Where the selection reads the population's values and the trials' values, and the
/// best reduction's scratch (32 values and 32 indices).
#[derive(Clone, Copy)]
pub(crate) struct Values<T> {
    pub(crate) fit: *mut T,
    pub(crate) trial_fit: *mut T,
    pub(crate) scratch_f: *mut T,
    pub(crate) scratch_i: *mut u32,
}

/// Where a batch block's rows live and how its trials are made: what differs between
/// the batch kernels. [`batch`] calls the methods in this order: [`Rows::new`],
/// [`Rows::init`] (a fresh run) or [`Rows::resume`] (a run that goes on), then per
/// generation [`Rows::trials`], the block
/// barrier, [`Rows::accept`] and the selection, and at the end [`Rows::finish`] and
/// [`Rows::best_row`].
pub(crate) trait Rows<T: LaneReal, O>: Sized {
    /// The rows are double-buffered as `flags` says, and an accepted trial flips its
    /// flag (rows resident in shared memory have one place each and no flags).
    const FLAGS: bool = true;
    /// The best reduction combines the warps' bests with a second butterfly
    /// ([`block_best_with`]'s `TREE`).
    const TREE: bool = false;

    /// The block's state for the whole run.
    ///
    /// # Safety
    /// Every thread of the block calls it, with the block's launch as the entry point's
    /// contract gives it.
    unsafe fn new(b: &Block<T, O>) -> Self;

    /// Where the selection reads the values (by default the block's global buffers).
    #[inline(always)]
    fn values(&self, b: &Block<T, O>) -> Values<T> {
        b.global_values()
    }

    /// Initialises and evaluates the population: every individual's row and its value
    /// in [`Rows::values`]' `fit` (and flag 0). A block barrier follows.
    ///
    /// # Safety
    /// As [`Rows::new`].
    unsafe fn init(&mut self, b: &Block<T, O>);

    /// A run that goes on from the population in the global buffers (rows as `flags`
    /// say, values in `fit`): brings it where [`Rows::trials`] reads it. Nothing by
    /// default (the rows are read from there). A block barrier follows.
    ///
    /// # Safety
    /// As [`Rows::new`].
    #[inline(always)]
    unsafe fn resume(&mut self, _b: &Block<T, O>) {}

    /// Builds and evaluates generation `gn`'s trials, the best individual being `bi`:
    /// every trial's value into `trial_fit`, and where [`Rows::FLAGS`] holds its row into
    /// the buffer x_i is not in. Returns what [`Rows::accept`] needs (a bit per pass).
    ///
    /// # Safety
    /// As [`Rows::new`]; the rows of generation `gn − 1` are complete.
    unsafe fn trials(&mut self, b: &Block<T, O>, gn: u32, bi: u32) -> u64;

    /// After the barrier that ends the trials, before the selection: moves the accepted
    /// trials' rows where the next generation reads them (`accepted` from
    /// [`Rows::trials`]). Nothing by default: a flag flip does it.
    ///
    /// # Safety
    /// As [`Rows::trials`].
    #[inline(always)]
    unsafe fn accept(&self, _b: &Block<T, O>, _accepted: u64) {}

    /// After the last generation: leaves the population where the host reads it.
    /// Nothing by default (it is in the global buffers).
    ///
    /// # Safety
    /// As [`Rows::new`].
    #[inline(always)]
    unsafe fn finish(&self, _b: &Block<T, O>) {}

    /// Individual `bi`'s current row.
    ///
    /// # Safety
    /// `bi` < np.
    #[inline(always)]
    unsafe fn best_row(&self, b: &Block<T, O>, bi: u32) -> *const T {
        // SAFETY: the caller's contract; the flags are np long.
        row(b.a, b.b, unsafe { *b.flags.add(bi as usize) }, bi, b.st)
    }
}

/// Whether a batch launch serves a control block (see [`crate::control`]): progress
/// reports every `report` generations, a stop command, and a start from the
/// generations done that `gens_done` holds.
pub(crate) trait Steering {
    /// Whether this launch's control block `ctl` is served.
    fn on(ctl: *mut u64) -> bool;
    /// Whether a run may go on from the generations done that `gens_done` holds (else
    /// it starts at generation 0).
    const RESUMES: bool;
    /// Whether the generations run in stretches from one report to the next, the
    /// control block looked at only between them (so that a stretch's loop is the plain
    /// one, and the control's values live outside it); else every generation looks.
    const STRETCHES: bool = false;
    /// Whether a launch initialises a population at generation 0 (else the host has
    /// done that with the plain entry point, and every launch goes on from the buffers).
    const INITS: bool = true;
}

/// No control block: the plain entry points.
pub(crate) struct Plain;

impl Steering for Plain {
    #[inline(always)]
    fn on(_ctl: *mut u64) -> bool {
        false
    }
    const RESUMES: bool = false;
}

/// Always a control block: the `…_ctl` entry points. They are entry points of their own
/// because a controlled loop beside the plain one (inlined or called) changed how
/// ptxas compiled the plain one, and a called one was slow.
pub(crate) struct Controlled;

impl Steering for Controlled {
    #[inline(always)]
    fn on(_ctl: *mut u64) -> bool {
        true
    }
    const RESUMES: bool = true;
    const STRETCHES: bool = true;
}

/// As [`Controlled`], but every launch goes on from the buffers, generation 0 included
/// (the host initialises the populations with the plain entry point first): the
/// global-memory `…_ctl` entry points. Without the initialisation's code, ptxas gives
/// the f64 kernel's loop the plain kernel's spills (324 bytes of spill loads against
/// 664, sm_90); the resident and pipelined kernels, whose controlled loops that change
/// slowed (8 to 14 %), keep [`Controlled`].
pub(crate) struct ControlledFromBuffers;

impl Steering for ControlledFromBuffers {
    #[inline(always)]
    fn on(_ctl: *mut u64) -> bool {
        true
    }
    const RESUMES: bool = true;
    const STRETCHES: bool = true;
    const INITS: bool = false;
}

/// A control block when the launch maps one (`ctl` not null): one entry point for both
/// (the external family, whose objective call dominates).
pub(crate) struct WhenMapped;

impl Steering for WhenMapped {
    #[inline(always)]
    fn on(ctl: *mut u64) -> bool {
        !ctl.is_null()
    }
    const RESUMES: bool = true;
}

/// One block evolves one population through all generations, its rows as `R` keeps
/// them, under control as `C` says.
///
/// # Safety
/// The host sizes every buffer for gridDim populations (see the host's launch code,
/// which checks the lengths before launching) and whatever `R` needs beyond that (its
/// shared memory); `ctl` is null or a mapped control block of gridDim slots.
#[inline(always)]
pub(crate) unsafe fn batch<T: LaneReal, O, R: Rows<T, O>, C: Steering>(
    s: Setup<T, O>,
    p: BatchParams<T>,
) {
    let BatchParams {
        run: Run { gens, target, .. },
        seeds,
        streams,
        lo,
        hi,
        pop_a,
        pop_b,
        flags,
        fit,
        trial_fit,
        scratch_f,
        scratch_i,
        best_x,
        best_f,
        best_idx,
        gens_done,
        hist,
        ctl,
        report,
    } = p;
    // SAFETY: the caller's contract; every index below is < np (rows, flags, values)
    // or < 32 (scratch), inside the block's share of the buffers.
    unsafe {
        let p = _block_idx_x();
        let tid = _thread_idx_x();
        let nthreads = _block_dim_x();
        let np = s.np;
        let dim = s.tp.dim;
        let st = s.stride;
        let key = key_of(*seeds.add(p as usize));
        let pstream = *streams.add(p as usize);
        let pop_off = (p * np) as usize;
        let g = group_width(dim);
        let b = Block {
            s,
            tid,
            nthreads,
            np,
            dim,
            st,
            key,
            pstream,
            lo,
            hi,
            a: pop_a.add(pop_off * st as usize),
            b: pop_b.add(pop_off * st as usize),
            flags: flags.add(pop_off),
            fit: fit.add(pop_off),
            trial_fit: trial_fit.add(pop_off),
            scratch_f: scratch_f.add(32 * p as usize),
            scratch_i: scratch_i.add(32 * p as usize),
            gr: Group::new(g, tid & 31),
            groups: nthreads / g,
            my_group: tid / g,
        };
        let hist = if hist.is_null() {
            hist
        } else {
            hist.add((p * (gens + 1)) as usize)
        };
        let mut rows = R::new(&b);
        let v = rows.values(&b);
        let best = |f: T, i: u32| {
            if R::TREE {
                block_best_with::<T, true>(f, i, v.scratch_f, v.scratch_i)
            } else {
                block_best(f, i, v.scratch_f, v.scratch_i)
            }
        };

        // The generations done: 0 for a fresh run, which starts with the
        // initialisation; a run that goes on from generation gen0 finds its population
        // in the buffers (rows as its flags say, values in fit).
        let gen0 = if C::RESUMES {
            *gens_done.add(p as usize)
        } else {
            0
        };
        if gen0 == 0 && C::INITS {
            rows.init(&b);
        } else {
            rows.resume(&b);
        }
        _syncthreads();
        let mut lf = T::NAN;
        let mut li = u32::MAX;
        let mut i = tid;
        while i < np {
            let fx = *v.fit.add(i as usize);
            if better(fx, i, lf, li) {
                lf = fx;
                li = i;
            }
            i += nthreads;
        }
        let (mut bf, mut bi) = best(lf, li);
        // A population past this launch's limit (runs of a list resumed at different
        // generations) has no slot in its history.
        if tid == 0 && !hist.is_null() && gen0 <= gens {
            *hist.add(gen0 as usize) = bf;
        }

        // The selection after generation gn's trials (and the barrier that ends them):
        // the accepted trials replace their parents, and the new best.
        let select = |rows: &mut R, accepted: u64, gn: u32| {
            rows.accept(&b, accepted);
            let mut lf = T::NAN;
            let mut li = u32::MAX;
            let mut i = tid;
            while i < np {
                let ft = *v.trial_fit.add(i as usize);
                let mut fx = *v.fit.add(i as usize);
                if accepts(ft, fx) {
                    fx = ft;
                    *v.fit.add(i as usize) = ft;
                    if R::FLAGS {
                        *b.flags.add(i as usize) ^= 1;
                    }
                }
                if better(fx, i, lf, li) {
                    lf = fx;
                    li = i;
                }
                i += nthreads;
            }
            let r = best(lf, li);
            if tid == 0 && !hist.is_null() {
                *hist.add(gn as usize) = r.0;
            }
            r
        };

        let mut gn = gen0;
        // Not `bf > target`: a NaN best never counts as having reached the target.
        #[allow(clippy::neg_cmp_op_on_partial_ord)]
        if C::STRETCHES {
            // From one report to the next: thread 0 reports generation gn and reads the
            // host's command, which a barrier hands to every thread; then the plain
            // loop up to the next reported generation.
            let every = control::every(report);
            while gn < gens && !(bf <= target) {
                let mut stop = false;
                if tid == 0 && control::reports(report, gen0, gn) {
                    let slot = ctl.add(p as usize * SLOT_WORDS);
                    write_progress(slot, gn, bf);
                    stop = command(slot, gn, report) == STOP;
                }
                if barrier_or(stop) {
                    break;
                }
                let end = gn
                    .checked_div(every)
                    .map_or(gens, |q| (q + 1).saturating_mul(every).min(gens));
                while gn < end && !(bf <= target) {
                    gn += 1;
                    let accepted = rows.trials(&b, gn, bi);
                    _syncthreads();
                    (bf, bi) = select(&mut rows, accepted, gn);
                }
            }
        } else {
            while gn < gens && !(bf <= target) {
                // Under control, thread 0 reports a reported generation gn and reads the
                // host's command, which the barrier after the trials hands to every
                // thread.
                let mut stop = false;
                if C::on(ctl) && tid == 0 && control::reports(report, gen0, gn) {
                    let slot = ctl.add(p as usize * SLOT_WORDS);
                    write_progress(slot, gn, bf);
                    stop = command(slot, gn, report) == STOP;
                }
                gn += 1;
                let accepted = rows.trials(&b, gn, bi);
                if !C::on(ctl) {
                    _syncthreads();
                } else if barrier_or(stop) {
                    // Stopped after generation gn − 1: its trials are dropped unselected.
                    gn -= 1;
                    break;
                }
                (bf, bi) = select(&mut rows, accepted, gn);
            }
        }

        // The population and the best row out.
        rows.finish(&b);
        let src = rows.best_row(&b, bi);
        let dst = best_x.add((p * st) as usize);
        let mut j = tid;
        while j < dim {
            *dst.add(j as usize) = *src.add(j as usize);
            j += nthreads;
        }
        if tid == 0 {
            *best_f.add(p as usize) = bf;
            *best_idx.add(p as usize) = bi;
            *gens_done.add(p as usize) = gn;
        }
    }
}

/// Rows in global memory, the objective evaluated by the group's lanes as the trial is
/// built (the built-in functions; the separable family's linked objective): a group
/// serves one individual a pass.
pub(crate) struct Lanes<T> {
    pub(crate) passes: u32,
    /// The objective's constants of the lane's first chunk.
    pub(crate) kc0: [T; 4],
    pub(crate) cache: DrawCache,
}

impl<T: LaneReal, O: LaneObjective<T>> Rows<T, O> for Lanes<T> {
    #[inline(always)]
    unsafe fn new(b: &Block<T, O>) -> Self {
        Lanes {
            passes: b.passes(),
            kc0: b.s.obj.consts(chunk(b.dim, b.gr.g, 0, b.gr.lane).0),
            cache: DrawCache::new(),
        }
    }

    #[inline(always)]
    unsafe fn init(&mut self, b: &Block<T, O>) {
        let mut pass = 0;
        while pass < self.passes {
            let (i, active) = b.individual(pass);
            // SAFETY: the caller's contract; i < np.
            unsafe {
                let fx = init_one(
                    &b.s, &b.gr, b.key, b.pstream, i, active, b.lo, b.hi, b.a, &self.kc0,
                );
                if active && b.gr.lane == 0 {
                    *b.fit.add(i as usize) = fx;
                    *b.flags.add(i as usize) = 0;
                }
            }
            pass += 1;
        }
    }

    #[inline(always)]
    unsafe fn trials(&mut self, b: &Block<T, O>, gn: u32, bi: u32) -> u64 {
        let mut pass = 0;
        while pass < self.passes {
            let (i, active) = b.individual(pass);
            // SAFETY: the caller's contract; i < np.
            unsafe {
                let fi = *b.fit.add(i as usize);
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
                let (ft, _) = trial_one(
                    &b.s, &b.gr, b.key, b.pstream, gn, i, active, bi, b.lo, b.hi, b.a, b.b,
                    b.flags, fi, &d, &fl, &self.kc0,
                );
                if active && b.gr.lane == 0 {
                    *b.trial_fit.add(i as usize) = ft;
                }
            }
            pass += 1;
        }
        0
    }
}
