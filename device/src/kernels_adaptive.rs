//! The adaptive kernels: jDE, JADE, SHADE, L-SHADE and jSO, one block per run, every
//! generation in one launch (`adaptive_batch_{f32,f64}_{function}`), or one run over
//! the whole grid (`adaptive_grid_{f32,f64}_{function}`, see below). The CEC 2017
//! kernels also run the classic strategies (thesis, rand/1/bin, …) on CEC functions:
//! the trials a thread per individual through [`classic_trial`] (the CPU engine's
//! trials), the selection a thread per individual, the best by thread 0.
//!
//! A generation runs as the CPU engine runs it, through the same functions of
//! [`crate::adaptive_gen`]:
//! 1. the p-best ranking, a top-k selection: each thread ranks individuals ([`rank`]:
//!    how many are better) and puts individual i at `ranking[rank(i)]` when its rank is
//!    below k, the first k of the order the CPU engine's partial sort gives (the trials
//!    read no further);
//! 2. the trials and their values, a thread per individual (strided over the block);
//! 3. thread 0: the selection, the archive and the memory in index order;
//! 4. L-SHADE and jSO: the threads rank again, thread 0 keeps the best `next` in index
//!    order and shrinks the archive;
//! 5. thread 0: the best individual, the history, the state.
//!
//! The serial parts (3–5) cost O(N·D) per generation on one thread against the trials'
//! O(N·D) over the block; see docs/CEC2017.md for what they cost and how to spread them.
//!
//! Every buffer is in global memory, laid out as [`AdaptiveParams`] says; the block's
//! threads meet at `bar.sync`, which also orders their global memory accesses.
//!
//! The same generation runs over a *team* of threads ([`Team`]): the block of its run
//! (`adaptive_batch_*`, a run per block) or the whole grid (`adaptive_grid_*`: one run,
//! one cooperative launch, the team's threads strided over the grid, thread 0 of block 0
//! doing the serial parts, and [`grid_sync`] in place of `bar.sync`). Only the team's
//! size and its barrier differ: every step and its order of operations is the same, so
//! both layouts give the CPU engine's bits. After a grid barrier plain loads see what
//! other blocks wrote before it (see [`grid_sync`]); the state words that steer the
//! control flow are read with `read_volatile` in both layouts.

use core::arch::nvptx::{_block_dim_x, _block_idx_x, _grid_dim_x, _syncthreads, _thread_idx_x};
use core::ptr::{read_volatile, write_volatile};
use core::slice::{from_raw_parts, from_raw_parts_mut};

use crate::abi::{
    ADAPTIVE_ARCHIVE, ADAPTIVE_BEST, ADAPTIVE_GENS, ADAPTIVE_MEMORY_K, ADAPTIVE_NEXT,
    ADAPTIVE_SIZE, ADAPTIVE_STATE_WORDS, AdaptiveParams, AdaptiveRun,
};
use crate::adaptive::{JDE_CR_INIT, JDE_F_INIT, archive_capacity, rank};
use crate::adaptive_gen::{
    Outcome, Selected, View, adapt, classic_trial, initial_memory, next_size, pbest_k, select,
    shrink_archive, strategy_of, trial,
};
use crate::cec2017::{self, Data, scratch_len};
use crate::de::{
    BoundPolicy, Crossover, Strategy, TrialParams, accepts, better, block, init_chunk, subsequence,
};
use crate::functions::{Formula, Function};
use crate::kernels::grid_sync;
use crate::lanes::evaluate;
use crate::philox::{block_words, key_of};
use crate::real::Real;
use crate::variant::ThesisVariant;

/// The objective of a kernel: a built-in function (fixed at compile time) or a CEC 2017
/// function (its number and data at run time).
#[derive(Clone, Copy)]
enum Objective<'a, T> {
    Builtin(Function, Formula),
    Cec(u32, Data<'a, T>),
}

impl<T: Real> Objective<'_, T> {
    #[inline(always)]
    fn value(&self, x: &[T], scratch: &mut [T]) -> T {
        match *self {
            Objective::Builtin(f, formula) => evaluate(f, formula, x),
            Objective::Cec(n, ref data) => cec2017::evaluate(n, x, data, scratch),
        }
    }
}

/// The index of the best of `fit` (lower value, then lower index, NaN last), as the CPU
/// engine finds it.
#[inline(always)]
fn best_of<T: Real>(fit: &[T]) -> usize {
    let mut b = 0;
    let mut i = 1;
    while i < fit.len() {
        if better(fit[i], i as u32, fit[b], b as u32) {
            b = i;
        }
        i += 1;
    }
    b
}

/// A classic run's trial settings (`None` for an adaptive strategy).
#[inline(always)]
fn classic_params<T: Real>(a: &AdaptiveRun) -> Option<TrialParams<T>> {
    let strategy = match Strategy::from_u32(a.strategy) {
        Some(s) if !s.is_adaptive() => s,
        _ => return None,
    };
    Some(TrialParams {
        strategy,
        crossover: Crossover::from_u32(a.crossover).unwrap_or(Crossover::Binomial),
        bounds: BoundPolicy::from_u32(a.bounds).unwrap_or(BoundPolicy::InitOnly),
        f: T::of(a.f),
        cr: T::of(a.cr),
        dim: a.dim,
        variant: ThesisVariant::from_bits(a.variant).unwrap_or(ThesisVariant::DEFAULT),
    })
}

/// The threads that run one run together: which run, this thread's index among them
/// and their count, and their barrier.
trait Team {
    /// The run's index (its part of every per-run buffer).
    fn run(&self) -> usize;
    /// This thread's index in the team (thread 0 does the serial parts).
    fn tid(&self) -> usize;
    /// The team's thread count (the stride of the parallel loops).
    fn threads(&self) -> usize;
    /// Every thread of the team waits for all; what any of them wrote to global memory
    /// before it, all of them see after it.
    ///
    /// # Safety
    /// Every thread of the team reaches each call, the same number of times.
    unsafe fn barrier(&mut self);
}

/// A block per run (`bar.sync`).
struct BlockTeam {
    run: usize,
    tid: usize,
    threads: usize,
}

impl BlockTeam {
    #[inline(always)]
    fn here() -> Self {
        // SAFETY: reading the special registers has no precondition.
        unsafe {
            BlockTeam {
                run: _block_idx_x() as usize,
                tid: _thread_idx_x() as usize,
                threads: _block_dim_x() as usize,
            }
        }
    }
}

impl Team for BlockTeam {
    #[inline(always)]
    fn run(&self) -> usize {
        self.run
    }
    #[inline(always)]
    fn tid(&self) -> usize {
        self.tid
    }
    #[inline(always)]
    fn threads(&self) -> usize {
        self.threads
    }
    #[inline(always)]
    unsafe fn barrier(&mut self) {
        // SAFETY: the caller's contract: every thread of the block reaches it.
        unsafe { _syncthreads() }
    }
}

/// The whole grid of a cooperative launch for run 0 ([`grid_sync`] on the counter
/// `sync`).
struct GridTeam {
    tid: usize,
    threads: usize,
    sync: *mut u64,
    blocks: u32,
    epoch: u64,
}

impl GridTeam {
    #[inline(always)]
    fn here(sync: *mut u64) -> Self {
        // SAFETY: reading the special registers has no precondition.
        unsafe {
            let (b, t, nt, nb) = (
                _block_idx_x(),
                _thread_idx_x(),
                _block_dim_x(),
                _grid_dim_x(),
            );
            GridTeam {
                tid: b as usize * nt as usize + t as usize,
                threads: nb as usize * nt as usize,
                sync,
                blocks: nb,
                epoch: 0,
            }
        }
    }
}

impl Team for GridTeam {
    #[inline(always)]
    fn run(&self) -> usize {
        0
    }
    #[inline(always)]
    fn tid(&self) -> usize {
        self.tid
    }
    #[inline(always)]
    fn threads(&self) -> usize {
        self.threads
    }
    #[inline(always)]
    unsafe fn barrier(&mut self) {
        // SAFETY: the caller's contract (every thread of the grid reaches it), and the
        // grid kernels' (a cooperative launch of `blocks` blocks, `sync` a zeroed word).
        unsafe { grid_sync(self.sync, self.blocks, &mut self.epoch) }
    }
}

/// One run over `team`; see the module's documentation.
///
/// # Safety
/// The host launches it with the buffers [`AdaptiveParams`] describes, sized for the
/// grid's runs and the team's threads, and with a CEC function's data when `function`
/// is `None`; for a [`GridTeam`], cooperatively, with `sync` a zeroed word.
#[inline(always)]
unsafe fn adaptive<T: Real, M: Team>(
    p: AdaptiveParams<T>,
    function: Option<Function>,
    team: &mut M,
) {
    let a: AdaptiveRun = p.run;
    let (b, tid, nt) = (team.run(), team.tid(), team.threads());
    // SAFETY: every thread of the team reaches each call: the kernel's control flow
    // around them depends only on values all threads read alike.
    let mut barrier = || unsafe { team.barrier() };
    let d = a.dim as usize;
    let np = a.np as usize;
    let h = a.memory_size as usize;
    let s = strategy_of(&a);
    let cap_max = (archive_capacity(a.archive_rate, a.np) as usize).max(1);
    let sl = scratch_len(d);
    // SAFETY: the buffers are sized as `AdaptiveParams` says (the caller's contract), so
    // every run's part and every thread's scratch below lies inside its buffer; the
    // threads write disjoint parts between barriers (thread 0 alone in the serial parts).
    unsafe {
        let key = key_of(*p.seeds.add(b));
        let stream = *p.streams.add(b);
        let x = p.x.add(b * np * d);
        let fit = p.fit.add(b * np);
        let trials = p.trials.add(b * np * d);
        let tfit = p.trial_fit.add(b * np);
        let tparam = p.trial_param.add(b * 2 * np);
        let tword = p.trial_word.add(b * np);
        let archive = p.archive.add(b * cap_max * d);
        let memory = p.memory.add(b * 2 * h);
        let jde = p.jde.add(b * 2 * np);
        let ranks = p.ranks.add(b * np);
        let ranking = p.ranking.add(b * np);
        let scratch = from_raw_parts_mut(p.scratch.add((b * nt + tid) * sl), sl);
        let state = p.state.add(b * ADAPTIVE_STATE_WORDS);
        let evals = p.evaluations.add(b);
        let best_f = p.best_f.add(b);
        let hist = if p.hist.is_null() {
            core::ptr::null_mut()
        } else {
            p.hist.add(b * (a.gens as usize + 1))
        };
        let lo = from_raw_parts(p.lo, d);
        let hi = from_raw_parts(p.hi, d);
        let objective = match function {
            Some(f) => {
                Objective::Builtin(f, Formula::from_u32(a.formula).unwrap_or(Formula::Exact))
            }
            None => Objective::Cec(
                a.function,
                Data {
                    shift: from_raw_parts(p.shift, cec2017::components(a.function) * d),
                    rotation: from_raw_parts(p.rotation, cec2017::components(a.function) * d * d),
                    shuffle: from_raw_parts(p.shuffle, cec2017::shuffles(a.function) * d),
                },
            ),
        };

        // The initial population (generation 0 of the streams), as `cpu::initial`.
        let mut i = tid;
        while i < np {
            let row = from_raw_parts_mut(x.add(i * d), d);
            let sub = subsequence(stream, i as u32);
            let mut j0 = 0;
            while j0 < d {
                let n = if d - j0 < 4 { d - j0 } else { 4 };
                let u = block_words(key, sub, block(0, (j0 / 4) as u32));
                let v = init_chunk(
                    &u,
                    n as u32,
                    &crate::adaptive_gen::chunk4(lo, j0),
                    &crate::adaptive_gen::chunk4(hi, j0),
                );
                row[j0..j0 + n].copy_from_slice(&v[..n]);
                j0 += 4;
            }
            *fit.add(i) = objective.value(row, scratch);
            *jde.add(i) = T::of(JDE_F_INIT);
            *jde.add(np + i) = T::of(JDE_CR_INIT);
            i += nt;
        }
        if tid == 0 {
            let mut e = 0;
            while e < h {
                let (mf, mcr) = initial_memory::<T>(s, e, h);
                *memory.add(e) = mf;
                *memory.add(h + e) = mcr;
                e += 1;
            }
            *state.add(ADAPTIVE_SIZE) = a.np;
            *state.add(ADAPTIVE_ARCHIVE) = 0;
            *state.add(ADAPTIVE_MEMORY_K) = 0;
            *state.add(ADAPTIVE_GENS) = 0;
            *evals = np as u64;
        }
        barrier();
        if tid == 0 {
            let best = best_of(from_raw_parts(fit, np));
            *state.add(ADAPTIVE_BEST) = best as u32;
            *best_f = *fit.add(best);
            if !hist.is_null() {
                *hist = *fit.add(best);
            }
        }
        barrier();

        if function.is_none()
            && let Some(tp) = classic_params::<T>(&a)
        {
            // A classic strategy: every generation at full size, as `cpu::generation`.
            let mut g = 0u32;
            loop {
                let best = read_volatile(state.add(ADAPTIVE_BEST)) as usize;
                let bf = read_volatile(best_f);
                if g >= a.gens || bf.to_f64() <= a.target {
                    break;
                }
                let g1 = g + 1;
                let xs = from_raw_parts(x, np * d);
                let mut i = tid;
                while i < np {
                    let out = from_raw_parts_mut(trials.add(i * d), d);
                    classic_trial(&tp, key, stream, g1, a.np, i, xs, best, lo, hi, out);
                    *tfit.add(i) = objective.value(out, scratch);
                    i += nt;
                }
                barrier();
                // The selection: each thread its own rows.
                let mut i = tid;
                while i < np {
                    let tf = *tfit.add(i);
                    if accepts(tf, *fit.add(i)) {
                        core::ptr::copy_nonoverlapping(trials.add(i * d), x.add(i * d), d);
                        *fit.add(i) = tf;
                    }
                    i += nt;
                }
                barrier();
                if tid == 0 {
                    let best = best_of(from_raw_parts(fit, np));
                    *state.add(ADAPTIVE_BEST) = best as u32;
                    *best_f = *fit.add(best);
                    if !hist.is_null() {
                        *hist.add(g1 as usize) = *fit.add(best);
                    }
                    *evals += np as u64;
                    write_volatile(state.add(ADAPTIVE_GENS), g1);
                }
                barrier();
                g = g1;
            }
            return;
        }

        let mut g = 0u32;
        loop {
            let n = read_volatile(state.add(ADAPTIVE_SIZE)) as usize;
            let spent = read_volatile(evals);
            let bf = read_volatile(best_f);
            if g >= a.gens || bf.to_f64() <= a.target {
                break;
            }
            let left = a.max_evaluations.saturating_sub(spent);
            if left == 0 {
                break;
            }
            let g1 = g + 1;
            let m = (n as u64).min(left) as usize;
            let t = spent as f64 / a.max_evaluations as f64;
            let k = pbest_k(&a, n as u32, t);
            if k > 0 {
                // The ranking's top k: individual i at its rank when that is below k
                // (the trials read no further; the ranks are a permutation of 0..n).
                let fs = from_raw_parts(fit, n);
                let mut i = tid;
                while i < n {
                    let r = rank(fs, i as u32);
                    if r < k {
                        *ranking.add(r as usize) = i as u32;
                    }
                    i += nt;
                }
                barrier();
            }
            let archive_len = read_volatile(state.add(ADAPTIVE_ARCHIVE));
            {
                let v = View {
                    g: g1,
                    n: n as u32,
                    k,
                    t,
                    x: from_raw_parts(x, n * d),
                    lo,
                    hi,
                    ranking: from_raw_parts(ranking, k as usize),
                    archive: from_raw_parts(archive, cap_max * d),
                    archive_len,
                    mf: from_raw_parts(memory, h),
                    mcr: from_raw_parts(memory.add(h), h),
                    jf: from_raw_parts(jde, n),
                    jcr: from_raw_parts(jde.add(np), n),
                };
                let mut i = tid;
                while i < m {
                    let out = from_raw_parts_mut(trials.add(i * d), d);
                    let o = trial(&a, key, stream, &v, i, out);
                    *tfit.add(i) = objective.value(out, scratch);
                    *tparam.add(2 * i) = o.f;
                    *tparam.add(2 * i + 1) = o.cr;
                    *tword.add(i) = o.archive_word;
                    i += nt;
                }
            }
            barrier();
            if tid == 0 {
                let mut alen = archive_len;
                let wins = select(
                    &a,
                    Selected {
                        x: from_raw_parts_mut(x, n * d),
                        fit: from_raw_parts_mut(fit, n),
                        archive: from_raw_parts_mut(archive, cap_max * d),
                        archive_len: &mut alen,
                        jf: from_raw_parts_mut(jde, n),
                        jcr: from_raw_parts_mut(jde.add(np), n),
                    },
                    m,
                    archive_capacity(a.archive_rate, n as u32),
                    from_raw_parts(trials, m * d),
                    |i| *tfit.add(i),
                    |i| Outcome {
                        f: *tparam.add(2 * i),
                        cr: *tparam.add(2 * i + 1),
                        archive_word: *tword.add(i),
                    },
                );
                let mut mk = *state.add(ADAPTIVE_MEMORY_K);
                adapt(
                    &a,
                    from_raw_parts_mut(memory, h),
                    from_raw_parts_mut(memory.add(h), h),
                    &mut mk,
                    &wins,
                );
                *state.add(ADAPTIVE_MEMORY_K) = mk;
                *state.add(ADAPTIVE_ARCHIVE) = alen;
                let spent = spent + m as u64;
                *evals = spent;
                *state.add(ADAPTIVE_NEXT) = next_size(&a, n as u32, spent);
            }
            barrier();
            let next = read_volatile(state.add(ADAPTIVE_NEXT)) as usize;
            if next < n {
                // L-SHADE's and jSO's reduction: the `next` best, in index order.
                let fs = from_raw_parts(fit, n);
                let mut i = tid;
                while i < n {
                    *ranks.add(i) = rank(fs, i as u32);
                    i += nt;
                }
                barrier();
                if tid == 0 {
                    let mut to = 0;
                    let mut i = 0;
                    while i < n {
                        if (*ranks.add(i) as usize) < next {
                            if to != i {
                                core::ptr::copy_nonoverlapping(x.add(i * d), x.add(to * d), d);
                                *fit.add(to) = *fit.add(i);
                                *jde.add(to) = *jde.add(i);
                                *jde.add(np + to) = *jde.add(np + i);
                            }
                            to += 1;
                        }
                        i += 1;
                    }
                    let mut alen = *state.add(ADAPTIVE_ARCHIVE);
                    shrink_archive(
                        key,
                        stream,
                        g1,
                        d,
                        from_raw_parts_mut(archive, cap_max * d),
                        &mut alen,
                        archive_capacity(a.archive_rate, next as u32),
                    );
                    *state.add(ADAPTIVE_ARCHIVE) = alen;
                    *state.add(ADAPTIVE_SIZE) = next as u32;
                }
            }
            if tid == 0 {
                let n = *state.add(ADAPTIVE_SIZE) as usize;
                let best = best_of(from_raw_parts(fit, n));
                *state.add(ADAPTIVE_BEST) = best as u32;
                *best_f = *fit.add(best);
                if !hist.is_null() {
                    *hist.add(g1 as usize) = *fit.add(best);
                }
                write_volatile(state.add(ADAPTIVE_GENS), g1);
            }
            barrier();
            g = g1;
        }
    }
}

/// Defines an adaptive entry point from [`AdaptiveParams`]' field list: `batch` (a run
/// per block) or `grid` (one run over the grid).
macro_rules! adaptive_entry {
    ($(#[$doc:meta])* $name:ident, $function:expr, batch; $params:ident<$t:ty> { $($f:ident: $ty:ty,)* }) => {
        $(#[$doc])*
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $name($($f: $ty),*) {
            let mut team = BlockTeam::here();
            // SAFETY: forwarded from this kernel's contract.
            unsafe { adaptive::<$t, _>($params::<$t> { $($f),* }, $function, &mut team) }
        }
    };
    ($(#[$doc:meta])* $name:ident, $function:expr, grid; $params:ident<$t:ty> { $($f:ident: $ty:ty,)* }) => {
        $(#[$doc])*
        #[unsafe(no_mangle)]
        pub unsafe extern "ptx-kernel" fn $name($($f: $ty),*) {
            let p = $params::<$t> { $($f),* };
            let mut team = GridTeam::here(p.sync);
            // SAFETY: forwarded from this kernel's contract.
            unsafe { adaptive::<$t, _>(p, $function, &mut team) }
        }
    };
}

/// The adaptive kernels of the registry's functions, both precisions (named as
/// [`crate::registry::AdaptiveKey`] names them; the build script checks the names).
macro_rules! adaptive_kernels {
    ($($(#[$doc:meta])* $variant:ident = $num:literal, $key:ident, $name:literal,
        $formula:literal, ($lo:expr, $hi:expr), $argmin:expr, $min:expr, $min_dim:literal;)*) => {
        $(
            crate::adaptive_params!(adaptive_entry!(
                /// A run of an adaptive strategy per block (see the module).
                ///
                /// # Safety
                /// Launched by the host with buffers sized as [`AdaptiveParams`] says.
                ${concat(adaptive_batch_f32_, $key)}, Some(Function::$variant), batch), f32);
            crate::adaptive_params!(adaptive_entry!(
                /// As the f32 kernel, in double precision.
                ///
                /// # Safety
                /// As the f32 kernel.
                ${concat(adaptive_batch_f64_, $key)}, Some(Function::$variant), batch), f64);
            crate::adaptive_params!(adaptive_entry!(
                /// One run of an adaptive strategy over the whole grid (see the module).
                ///
                /// # Safety
                /// Launched cooperatively by the host, with buffers sized as
                /// [`AdaptiveParams`] says for one run and the grid's threads, and `sync`
                /// a zeroed word.
                ${concat(adaptive_grid_f32_, $key)}, Some(Function::$variant), grid), f32);
            crate::adaptive_params!(adaptive_entry!(
                /// As the f32 kernel, in double precision.
                ///
                /// # Safety
                /// As the f32 kernel.
                ${concat(adaptive_grid_f64_, $key)}, Some(Function::$variant), grid), f64);
        )*
    };
}

crate::builtin_functions!(adaptive_kernels);

crate::adaptive_params!(
    adaptive_entry!(
        /// A run of an adaptive strategy per block on a CEC 2017 function.
        ///
        /// # Safety
        /// Launched by the host with buffers sized as [`AdaptiveParams`] says, the
        /// function's data included.
        adaptive_batch_f32_cec2017,
        None,
        batch
    ),
    f32
);
crate::adaptive_params!(
    adaptive_entry!(
        /// As `adaptive_batch_f32_cec2017`, in double precision.
        ///
        /// # Safety
        /// As `adaptive_batch_f32_cec2017`.
        adaptive_batch_f64_cec2017,
        None,
        batch
    ),
    f64
);
crate::adaptive_params!(
    adaptive_entry!(
        /// One run of an adaptive strategy (or a classic one) over the whole grid on a
        /// CEC 2017 function.
        ///
        /// # Safety
        /// Launched cooperatively by the host, with buffers sized as [`AdaptiveParams`]
        /// says for one run and the grid's threads, the function's data included, and
        /// `sync` a zeroed word.
        adaptive_grid_f32_cec2017,
        None,
        grid
    ),
    f32
);
crate::adaptive_params!(
    adaptive_entry!(
        /// As `adaptive_grid_f32_cec2017`, in double precision.
        ///
        /// # Safety
        /// As `adaptive_grid_f32_cec2017`.
        adaptive_grid_f64_cec2017,
        None,
        grid
    ),
    f64
);
