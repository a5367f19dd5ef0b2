//! The whole-GPU layouts: one population over the grid, one launch per generation
//! ([`step_with`]) or all generations in one cooperative launch ([`persistent_with`]),
//! with a thread group's passes ([`Passes`]) as the one body of both.

use super::*;

/// State words of a whole-grid run.
pub const STATE_GEN: usize = 0;
pub const STATE_TICKET: usize = 1;
pub const STATE_DONE: usize = 2;
pub const STATE_BEST: usize = 3;
/// How many u32 the state holds.
pub const STATE_WORDS: usize = 4;

/// How a thread group walks a grid-wide population: pass `p` serves individual
/// `p·groups + my_group`.
#[derive(Clone, Copy)]
pub(crate) struct Sweep {
    pub(crate) passes: u32,
    pub(crate) groups: u32,
    pub(crate) my_group: u32,
}

impl Sweep {
    /// The individual of pass `pass` (clamped to np − 1) and whether it exists.
    #[inline(always)]
    pub(crate) fn individual(&self, pass: u32, np: u32) -> (u32, bool) {
        let i0 = pass * self.groups + self.my_group;
        if i0 < np { (i0, true) } else { (np - 1, false) }
    }
}

/// How the grid layouts ([`step_with`], [`persistent_with`]) initialise and advance a thread group's
/// individuals: [`Builtin`] evaluates the built-in functions with the group; the
/// external family (`external.rs`) calls an objective linked in at run time.
pub(crate) trait Passes<T: LaneReal, O: LaneObjective<T> = BuiltinObjective> {
    /// As [`init_passes`].
    #[allow(clippy::too_many_arguments)]
    unsafe fn init(
        s: &Setup<T, O>,
        gr: &Group,
        sw: Sweep,
        key: [u32; 2],
        pstream: u32,
        lo: *const T,
        hi: *const T,
        a: *mut T,
        flags: *mut u32,
        fit: *mut T,
        kc0: &[T; 4],
    ) -> (T, u32);
    /// As [`trial_passes`].
    #[allow(clippy::too_many_arguments)]
    unsafe fn trial(
        s: &Setup<T, O>,
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
        kc0: &[T; 4],
    ) -> (T, u32);
}

/// The passes that evaluate with the group: the built-in functions' and the separable
/// family's.
pub(crate) struct Builtin;

impl<T: LaneReal, O: LaneObjective<T>> Passes<T, O> for Builtin {
    #[inline(always)]
    unsafe fn init(
        s: &Setup<T, O>,
        gr: &Group,
        sw: Sweep,
        key: [u32; 2],
        pstream: u32,
        lo: *const T,
        hi: *const T,
        a: *mut T,
        flags: *mut u32,
        fit: *mut T,
        kc0: &[T; 4],
    ) -> (T, u32) {
        // SAFETY: forwarded.
        unsafe { init_passes(s, gr, sw, key, pstream, lo, hi, a, flags, fit, kc0) }
    }
    #[inline(always)]
    unsafe fn trial(
        s: &Setup<T, O>,
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
        kc0: &[T; 4],
    ) -> (T, u32) {
        // SAFETY: forwarded.
        unsafe {
            trial_passes(
                s, gr, sw, cache, key, pstream, gn, best_i, lo, hi, a, b, flags_in, flags_out, fit,
                kc0,
            )
        }
    }
}

/// Initialises the group's individuals of a grid-wide population into buffer `a` (flags
/// to 0) and returns the thread's best (value, index).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(crate) unsafe fn init_passes<T: LaneReal, O: LaneObjective<T>>(
    s: &Setup<T, O>,
    gr: &Group,
    sw: Sweep,
    key: [u32; 2],
    pstream: u32,
    lo: *const T,
    hi: *const T,
    a: *mut T,
    flags: *mut u32,
    fit: *mut T,
    kc0: &[T; 4],
) -> (T, u32) {
    // SAFETY: indices are < np; the host sizes flags and values for np individuals.
    unsafe {
        let (mut lf, mut li) = (T::NAN, u32::MAX);
        let mut pass = 0;
        while pass < sw.passes {
            let (i, active) = sw.individual(pass, s.np);
            let fx = init_one(s, gr, key, pstream, i, active, lo, hi, a, kc0);
            if active {
                if gr.lane == 0 {
                    *fit.add(i as usize) = fx;
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

/// Generation `gn` of the group's individuals of a grid-wide population: trials read
/// `flags_in`, the new flags go to `flags_out`, values are updated in place. Returns the
/// thread's best (value, index).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(crate) unsafe fn trial_passes<T: LaneReal, O: LaneObjective<T>>(
    s: &Setup<T, O>,
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
    kc0: &[T; 4],
) -> (T, u32) {
    // SAFETY: indices are < np; the host sizes flags planes and values for np.
    unsafe {
        let (mut lf, mut li) = (T::NAN, u32::MAX);
        let mut pass = 0;
        while pass < sw.passes {
            let (i, active) = sw.individual(pass, s.np);
            let fi = *fit.add(i as usize);
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
            let (ft, acc) = trial_one(
                s, gr, key, pstream, gn, i, active, best_i, lo, hi, a, b, flags_in, fi, &d, &fl,
                kc0,
            );
            if active {
                let fx = if acc { ft } else { fi };
                if gr.lane == 0 {
                    *flags_out.add(i as usize) = fl[5] ^ (acc as u32);
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

/// [`step_with`] with the built-in functions' passes.
#[inline(always)]
pub(crate) unsafe fn step<T: LaneReal>(s: Setup<T>, p: StepParams<T>) {
    // SAFETY: forwarded.
    unsafe { step_with::<T, _, Builtin>(s, p) }
}

/// One generation of one population spread over the grid (or its initialisation when
/// `init` is set), its individuals served by the passes of `E`. The last block to finish
/// reduces the blocks' bests.
#[inline(always)]
pub(crate) unsafe fn step_with<T: LaneReal, O: LaneObjective<T>, E: Passes<T, O>>(
    s: Setup<T, O>,
    p: StepParams<T>,
) {
    let StepParams {
        run: Run { gens, target, .. },
        init,
        pstream,
        seed,
        lo,
        hi,
        pop_a: a,
        pop_b: b,
        flags,
        fit,
        part_f,
        part_i,
        scratch_f,
        scratch_i,
        state,
        best_f,
        hist,
    } = p;
    let init = init != 0;
    // SAFETY: the host sizes the buffers: flags 2·np, partials gridDim, scratch
    // 32·gridDim, state STATE_WORDS, hist gens + 1 (or null).
    unsafe {
        let tid = _thread_idx_x();
        let nthreads = _block_dim_x();
        let blk = _block_idx_x();
        let nblocks = _grid_dim_x();
        let np = s.np;
        let dim = s.tp.dim;
        let key = key_of(seed);
        let gn = if init {
            0
        } else {
            *(state.add(STATE_GEN) as *const u32) + 1
        };
        if !init && *(state.add(STATE_DONE) as *const u32) != 0 {
            return;
        }
        let best_i = *(state.add(STATE_BEST) as *const u32);
        let flags_in = flags.add(((gn + 1) % 2 * np) as usize);
        let flags_out = flags.add((gn % 2 * np) as usize);
        let g = group_width(dim);
        let gr = Group::new(g, tid & 31);
        let groups_per_block = nthreads / g;
        let groups = groups_per_block * nblocks;
        let my_group = blk * groups_per_block + tid / g;
        let passes = np.div_ceil(groups);
        let kc0 = s.obj.consts(chunk(dim, g, 0, gr.lane).0);
        let mut cache = DrawCache {
            pre: Draws {
                r: [0; 5],
                jrand: 0,
            },
            flags: [0; 6],
        };
        let sw = Sweep {
            passes,
            groups,
            my_group,
        };
        let (lf, li) = if init {
            E::init(&s, &gr, sw, key, pstream, lo, hi, a, flags_out, fit, &kc0)
        } else {
            E::trial(
                &s, &gr, sw, &mut cache, key, pstream, gn, best_i, lo, hi, a, b, flags_in,
                flags_out, fit, &kc0,
            )
        };
        let (bf, bi) = block_best(
            lf,
            li,
            scratch_f.add(32 * blk as usize),
            scratch_i.add(32 * blk as usize),
        );
        if tid == 0 {
            *part_f.add(blk as usize) = bf;
            *part_i.add(blk as usize) = bi;
            fence_gpu();
        }
        _syncthreads();
        // The last block to arrive reduces the partials.
        let last = if tid == 0 {
            atomic_inc(state.add(STATE_TICKET)) == nblocks - 1
        } else {
            false
        };
        let scratch_last = scratch_i.add(32 * blk as usize + 31);
        if tid == 0 {
            core::ptr::write_volatile(scratch_last, last as u32);
        }
        _syncthreads();
        if core::ptr::read_volatile(scratch_last) == 0 {
            return;
        }
        fence_gpu();
        let mut lf = T::NAN;
        let mut li = u32::MAX;
        let mut k = tid;
        while k < nblocks {
            let f = core::ptr::read_volatile(part_f.add(k as usize));
            let i = core::ptr::read_volatile(part_i.add(k as usize));
            if better(f, i, lf, li) {
                lf = f;
                li = i;
            }
            k += nthreads;
        }
        let (bf, bi) = block_best(
            lf,
            li,
            scratch_f.add(32 * blk as usize),
            scratch_i.add(32 * blk as usize),
        );
        if tid == 0 {
            *best_f = bf;
            *state.add(STATE_BEST) = bi;
            *state.add(STATE_GEN) = gn;
            if !hist.is_null() {
                *hist.add(gn as usize) = bf;
            }
            if gn >= gens || bf <= target {
                *state.add(STATE_DONE) = 1;
            }
            *state.add(STATE_TICKET) = 0;
            fence_gpu();
        }
    }
}

/// [`persistent_with`] with the built-in functions' passes, without a control block (the
/// code of a plain launch) or with one.
///
/// # Safety
/// As [`persistent_with`].
#[inline(always)]
pub(crate) unsafe fn persistent_entry<T: LaneReal>(s: Setup<T>, p: GridParams<T>) {
    // SAFETY: forwarded.
    unsafe {
        if p.ctl.is_null() {
            persistent_with::<T, _, Builtin, false>(s, p)
        } else {
            persistent_with::<T, _, Builtin, true>(s, p)
        }
    }
}

/// One population over the whole grid, all generations in one cooperative launch; a
/// grid barrier ends each generation. The blocks' bests of generation g sit in plane
/// g % 2 of the partials, so every block can reduce them after the barrier while the
/// next generation writes the other plane. The passes of `E` serve the individuals. With
/// `CTL`, under the control block `p.ctl` and from the generations done that the state
/// holds.
#[inline(always)]
pub(crate) unsafe fn persistent_with<
    T: LaneReal,
    O: LaneObjective<T>,
    E: Passes<T, O>,
    const CTL: bool,
>(
    s: Setup<T, O>,
    p: GridParams<T>,
) {
    let GridParams {
        run: Run { gens, target, .. },
        seed,
        pstream,
        lo,
        hi,
        pop_a: a,
        pop_b: b,
        flags,
        fit,
        part_f,
        part_i,
        sync,
        state,
        best_f,
        hist,
        ctl,
        report,
    } = p;
    // SAFETY: the host sizes the buffers: flags 2·np, partials 2·gridDim, state
    // STATE_WORDS, sync GRID_SYNC_WORDS, hist gens + 1 (or null); all blocks are
    // co-resident; `ctl` is null or a mapped control block of one slot.
    unsafe {
        let tid = _thread_idx_x();
        let blk = _block_idx_x();
        let nblocks = _grid_dim_x();
        let nthreads = _block_dim_x();
        let np = s.np;
        let dim = s.tp.dim;
        let key = key_of(seed);
        let g = group_width(dim);
        let gr = Group::new(g, tid & 31);
        let groups_per_block = nthreads / g;
        let groups = groups_per_block * nblocks;
        let my_group = blk * groups_per_block + tid / g;
        let passes = np.div_ceil(groups);
        let kc0 = s.obj.consts(chunk(dim, g, 0, gr.lane).0);
        // The block's reductions and what thread 0 passes on after a barrier go
        // through shared memory.
        let (sf, si, bc) = grid_shared::<T>();
        let mut epoch = 0u64;
        let mut cache = DrawCache {
            pre: Draws {
                r: [0; 5],
                jrand: 0,
            },
            flags: [0; 6],
        };
        let sw = Sweep {
            passes,
            groups,
            my_group,
        };
        // The generations done, as the host left them in the state: 0 for a fresh run,
        // which starts with the initialisation into buffer a (flags plane 0); a run that
        // goes on from generation gen0 finds its population in the buffers (rows as
        // flags plane gen0 % 2 says, values in fit) and its blocks' bests are found
        // again, over the same individuals in the same order.
        let gen0 = if CTL {
            read_volatile(state.add(STATE_GEN))
        } else {
            0
        };
        let (lf, li) = if gen0 == 0 {
            E::init(&s, &gr, sw, key, pstream, lo, hi, a, flags, fit, &kc0)
        } else {
            let (mut lf, mut li) = (T::NAN, u32::MAX);
            let mut pass = 0;
            while pass < sw.passes {
                let (i, active) = sw.individual(pass, np);
                let fx = *fit.add(i as usize);
                if active && better(fx, i, lf, li) {
                    lf = fx;
                    li = i;
                }
                pass += 1;
            }
            (lf, li)
        };
        // Single precision: each block publishes its best to the generation's slot
        // (see [`crate::abi::GRID_SYNC_WORDS`]), which every thread reads after the
        // barrier. Double precision, whose pairs do not fit one word: each block writes
        // its best to the generation's plane of partials, which every block reduces
        // after the barrier.
        let keyed = T::WORDS == 1;
        let slot = |g: u32| sync.add(GRID_SLOT_STRIDE * (1 + (g % 3) as usize));
        let plane0 = ((gen0 % 2) * nblocks) as usize;
        if keyed {
            let (bf0, bi0) = block_best_warp0(lf, li, sf, si);
            if tid == 0 {
                *part_f.add(plane0 + blk as usize) = bf0;
                atomic_max_u64(slot(gen0), !lane_key(bf0, bi0));
            }
        } else {
            let (bf0, bi0) = block_best(lf, li, sf, si);
            if tid == 0 {
                *part_f.add(plane0 + blk as usize) = bf0;
                *part_i.add(plane0 + blk as usize) = bi0;
            }
        }
        // The exact value of the best `bi` after generation `g` (the key holds −0 as +0
        // and NaN as the default NaN): the partial of the block that evaluated it.
        let exact = |g: u32, bi: u32, bf: T| {
            if keyed && bi < np {
                let b = (bi % groups) / groups_per_block;
                *part_f.add(((g % 2) * nblocks + b) as usize)
            } else {
                bf
            }
        };
        // Under control, block 0's thread 0 reads the host's command during each
        // reported generation (the start included) and the barrier that ends it
        // carries a stop to every block; in exact mode the report waits for the host
        // and one more barrier carries its answer.
        let on = CTL;
        let mut halt = false;
        // In single precision, the slot of the generation the last barrier ended, as
        // thread 0 read it for the block.
        let mut word = 0u64;
        let stop = on
            && blk == 0
            && tid == 0
            && !control::exact(report)
            && control::reports(report, gen0, gen0)
            && command(ctl, gen0, report) == STOP;
        if keyed {
            let (h, w) = grid_sync_word(sync, nblocks, &mut epoch, stop, slot(gen0), bc);
            (halt, word) = (on && h, w);
        } else if on {
            halt = grid_sync_or(sync, nblocks, &mut epoch, stop);
        } else {
            grid_sync(sync, nblocks, &mut epoch);
        }
        let mut gn = gen0;
        let (mut bf, mut bi);
        loop {
            // The best after generation gn: its slot, or plane gn % 2 of the partials.
            if keyed {
                let (kf, ki) = key_best(!word);
                bf = T::from_words([kf.to_bits(), 0]);
                bi = ki;
                // Thread 0 of every block read slot gn − 1 before this barrier, and
                // generation gn + 2 writes it after the next one: it is cleared for that
                // one.
                if blk == 0 && tid == 0 {
                    write_volatile(slot(gn + 2), 0);
                }
            } else {
                let plane = ((gn % 2) * nblocks) as usize;
                let mut lf = T::NAN;
                let mut li = u32::MAX;
                let mut k = tid;
                while k < nblocks {
                    let f = core::ptr::read_volatile(part_f.add(plane + k as usize));
                    let i = core::ptr::read_volatile(part_i.add(plane + k as usize));
                    if better(f, i, lf, li) {
                        lf = f;
                        li = i;
                    }
                    k += nthreads;
                }
                let r = block_best(lf, li, sf, si);
                bf = r.0;
                bi = r.1;
            }
            if blk == 0 && tid == 0 && !hist.is_null() {
                *hist.add(gn as usize) = exact(gn, bi, bf);
            }
            if gn >= gens || bf <= target || halt {
                break;
            }
            if on && control::reports(report, gen0, gn) {
                let mut stop = false;
                if blk == 0 && tid == 0 {
                    write_progress(ctl, gn, exact(gn, bi, bf));
                    stop = control::exact(report) && command(ctl, gn, report) == STOP;
                }
                if control::exact(report) && grid_sync_or(sync, nblocks, &mut epoch, stop) {
                    break;
                }
            }
            gn += 1;
            let stop = on
                && blk == 0
                && tid == 0
                && !control::exact(report)
                && control::reports(report, gen0, gn)
                && command(ctl, gn, report) == STOP;
            let flags_in = flags.add((((gn + 1) % 2) * np) as usize);
            let flags_out = flags.add(((gn % 2) * np) as usize);
            let (lf, li) = E::trial(
                &s, &gr, sw, &mut cache, key, pstream, gn, bi, lo, hi, a, b, flags_in, flags_out,
                fit, &kc0,
            );
            let plane = ((gn % 2) * nblocks) as usize;
            if keyed {
                let (pf, pi) = block_best_warp0(lf, li, sf, si);
                if tid == 0 {
                    *part_f.add(plane + blk as usize) = pf;
                    atomic_max_u64(slot(gn), !lane_key(pf, pi));
                }
            } else {
                let (pf, pi) = block_best(lf, li, sf, si);
                if tid == 0 {
                    *part_f.add(plane + blk as usize) = pf;
                    *part_i.add(plane + blk as usize) = pi;
                }
            }
            if keyed {
                let (h, w) = grid_sync_word(sync, nblocks, &mut epoch, stop, slot(gn), bc);
                (halt, word) = (on && h, w);
            } else if on {
                halt = grid_sync_or(sync, nblocks, &mut epoch, stop);
            } else {
                grid_sync(sync, nblocks, &mut epoch);
            }
        }
        if blk == 0 && tid == 0 {
            *best_f = exact(gn, bi, bf);
            *state.add(STATE_BEST) = bi;
            *state.add(STATE_GEN) = gn;
            *state.add(STATE_DONE) = 1;
        }
    }
}
