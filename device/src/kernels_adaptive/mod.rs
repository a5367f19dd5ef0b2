//! The adaptive kernels: jDE, JADE, SHADE, L-SHADE and jSO, one block per run, every
//! generation in one launch (`adaptive_batch_{f32,f64}_{function}`), or one run over
//! the whole grid (`adaptive_grid_{f32,f64}_{function}`, see below). The CEC 2017
//! kernels also run the classic strategies (thesis, rand/1/bin, …) on CEC functions:
//! the trials a thread per individual through [`classic_trial`] (the CPU engine's
//! trials), the selection a thread per individual, the best by thread 0.
//!
//! A generation runs as the CPU engine runs it, through the same functions of
//! [`crate::adaptive_gen`], every step spread over the team:
//! 1. the p-best ranking, a top-k selection ([`Ctx::top_k`]): individual i at
//!    `ranking[rank(i)]` when its rank ([`rank`]: how many are better) is below k, the
//!    first k of the order the CPU engine's partial sort gives (the trials read no
//!    further); from 2 048 individuals on, ranked among the candidates that a sample's
//!    threshold leaves;
//! 2. the trials and their values, a thread per individual (strided over the team);
//! 3. the selection ([`Ctx::select`]): the generation's record of successes as a
//!    pairwise tree over the trials (warp butterflies; the CPU engine sums in the same
//!    tree), each success's archive slot from a chunked scan of the successes (what the
//!    pass in index order gives), the archived parents and the replacing trials copied
//!    element by element, the best by a warp butterfly and atomic minima;
//! 4. L-SHADE and jSO: the ranks again, the kept rows numbered by the same scan and
//!    moved, thread 0 shrinking the archive;
//! 5. thread 0: the memory's update, the history, the state.
//!
//! No step is a pass over the population on one thread. L-SHADE's reduction still
//! compares every pair (O(N²/threads) a thread), the largest cost left at large N.
//!
//! The objective is a type of [`Eval`]: a built-in function, a CEC 2017 function, an
//! objective linked in at run time (`adaptive_*_external`, the whole-vector
//! `gpude_objective_T`; `adaptive_*_separable`, the separable form evaluated as the CPU
//! engine's lanes do, its flags in `run.formula`), or one the host evaluates
//! (`adaptive_batch_*_host`): those kernels run one phase per launch
//! ([`AdaptiveRun::phase`]: the initial rows; their best; per generation the trials,
//! then the rest), the same steps as the whole run, the values written by the host in
//! between. Thread 0 leaves whether the run goes on and the next generation's trial
//! count in the state ([`ADAPTIVE_DONE`], [`ADAPTIVE_COUNT`]) for both.
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

mod team;
mod warp;

pub(crate) use team::{BlockTeam, GridTeam, Team};
use warp::{
    order_key, warp_count_before, warp_exclusive_count, warp_merge_records, warp_record, warp_sum,
    warp_sum_before,
};

use core::ptr::{read_volatile, write_volatile};
use core::slice::{from_raw_parts, from_raw_parts_mut};

use crate::abi::{
    ADAPTIVE_ARCHIVE, ADAPTIVE_BEST, ADAPTIVE_COUNT, ADAPTIVE_DONE, ADAPTIVE_GENS,
    ADAPTIVE_MEMORY_K, ADAPTIVE_NEXT, ADAPTIVE_PHASE_INIT_BEST, ADAPTIVE_PHASE_INIT_ROWS,
    ADAPTIVE_PHASE_RESUME, ADAPTIVE_PHASE_SELECT, ADAPTIVE_PHASE_TRIALS, ADAPTIVE_SIZE,
    ADAPTIVE_STATE_WORDS, AdaptiveParams, AdaptiveRun, adaptive_ranking_words,
};
use crate::abi::{ADAPTIVE_BEST_INDEX, ADAPTIVE_BEST_KEY, ADAPTIVE_TAU};
use crate::adaptive::{JDE_CR_INIT, JDE_F_INIT, Successes, archive_capacity, archive_slot, rank};
use crate::adaptive_gen::{
    Outcome, View, adapt, archive_len_after, classic_trial, counts_success, initial_memory,
    next_size, pbest_k, replaces, shrink_archive, strategy_of, success_leaf, trial,
};
use crate::cec2017::{self, Data, scratch_len};
use crate::de::{
    BoundPolicy, Crossover, Strategy, TrialParams, accepts, better, block, init_chunk, subsequence,
};
use crate::external::ExternalReal;
use crate::functions::{Formula, Function};
use crate::kernels::{LaneReal, atomic_max_u32, atomic_max_u64, warp_best};
use crate::kernels_separable;
use crate::lanes::{evaluate, evaluate_of};
use crate::philox::{block_words, key_of};
use crate::real::Real;
use crate::separable::{SepFlags, SepLanes, Separable};
use crate::variant::ThesisVariant;

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

/// An adaptive kernel's objective, as one thread evaluates one point.
pub(crate) trait Eval<T: Real>: Copy {
    /// Whether the kernel also runs the classic strategies (the CEC 2017 kernels).
    const CLASSIC: bool = false;
    /// Whether the host evaluates: a launch runs the phase of [`AdaptiveRun::phase`]
    /// and [`Eval::value`] is never called (the host-callback kernels).
    const HOST: bool = false;
    /// The value at `x`, a row of the run's buffers (`scratch`: the thread's values).
    fn value(&self, x: &[T], scratch: &mut [T]) -> T;
}

/// A built-in function (fixed at compile time) in the run's formula.
#[derive(Clone, Copy)]
pub(crate) struct Builtin(pub(crate) Function, pub(crate) Formula);

impl<T: Real> Eval<T> for Builtin {
    #[inline(always)]
    fn value(&self, x: &[T], _: &mut [T]) -> T {
        evaluate(self.0, self.1, x)
    }
}

/// A CEC 2017 function: its number and data at run time.
#[derive(Clone, Copy)]
pub(crate) struct Cec<'a, T>(pub(crate) u32, pub(crate) Data<'a, T>);

impl<T: Real> Eval<T> for Cec<'_, T> {
    const CLASSIC: bool = true;
    #[inline(always)]
    fn value(&self, x: &[T], scratch: &mut [T]) -> T {
        cec2017::evaluate(self.0, x, &self.1, scratch)
    }
}

/// The whole-vector objective linked in at run time (`gpude_objective_T`, as the
/// external family calls it).
#[derive(Clone, Copy)]
pub(crate) struct External;

impl<T: ExternalReal> Eval<T> for External {
    #[inline(always)]
    fn value(&self, x: &[T], _: &mut [T]) -> T {
        // SAFETY: `x` is a row of the run's global buffers (`x` or `trials`): its
        // `x.len()` values are all the objective reads.
        unsafe { T::objective(x.as_ptr(), x.len() as u32) }
    }
}

/// The separable objective linked in at run time, with the flags the host passes in
/// [`AdaptiveRun::formula`]: evaluated as a group of lanes does, on one thread
/// ([`evaluate_of`], as the CPU engine evaluates it).
#[derive(Clone, Copy)]
pub(crate) struct SeparableLinked(pub(crate) SepFlags);

impl<T: Real> Eval<T> for SeparableLinked
where
    kernels_separable::Linked: Separable<T>,
{
    #[inline(always)]
    fn value(&self, x: &[T], _: &mut [T]) -> T {
        evaluate_of(
            SepLanes {
                s: &kernels_separable::LINKED,
                flags: self.0,
            },
            x,
        )
    }
}

/// An objective the host evaluates between the launches (a host callback).
#[derive(Clone, Copy)]
pub(crate) struct Host;

impl<T: Real> Eval<T> for Host {
    const HOST: bool = true;
    #[inline(always)]
    fn value(&self, _: &[T], _: &mut [T]) -> T {
        T::of(f64::NAN)
    }
}

/// One run's part of the buffers of [`AdaptiveParams`] and its settings, as a thread
/// of its team uses them.
struct Ctx<'a, T> {
    a: AdaptiveRun,
    d: usize,
    np: usize,
    h: usize,
    cap_max: usize,
    key: [u32; 2],
    stream: u32,
    x: *mut T,
    fit: *mut T,
    trials: *mut T,
    tfit: *mut T,
    tparam: *mut T,
    tword: *mut u32,
    archive: *mut T,
    memory: *mut T,
    jde: *mut T,
    ranks: *mut u32,
    ranking: *mut u32,
    /// This thread's scratch values (`sl` of them).
    scratch: *mut T,
    sl: usize,
    state: *mut u32,
    evals: *mut u64,
    best_f: *mut T,
    /// Null for no history.
    hist: *mut T,
    lo: &'a [T],
    hi: &'a [T],
}

impl<T: Real> Ctx<'_, T> {
    /// Run `b`'s part of `p`'s buffers as thread `tid` of `nt` sees them.
    ///
    /// # Safety
    /// `p`'s buffers are sized as [`AdaptiveParams`] says for run `b` and thread `tid`
    /// of a team of `nt`.
    #[inline(always)]
    unsafe fn new(p: &AdaptiveParams<T>, b: usize, tid: usize, nt: usize) -> Self {
        let a: AdaptiveRun = p.run;
        let d = a.dim as usize;
        let np = a.np as usize;
        let h = a.memory_size as usize;
        let cap_max = (archive_capacity(a.archive_rate, a.np) as usize).max(1);
        let sl = scratch_len(d);
        // SAFETY: the caller's contract: every offset below lies inside its buffer.
        unsafe {
            Ctx {
                a,
                d,
                np,
                h,
                cap_max,
                key: key_of(*p.seeds.add(b)),
                stream: *p.streams.add(b),
                x: p.x.add(b * np * d),
                fit: p.fit.add(b * np),
                trials: p.trials.add(b * np * d),
                tfit: p.trial_fit.add(b * np),
                tparam: p.trial_param.add(b * 2 * np),
                tword: p.trial_word.add(b * np),
                archive: p.archive.add(b * cap_max * d),
                memory: p.memory.add(b * 2 * h),
                jde: p.jde.add(b * 2 * np),
                ranks: p.ranks.add(b * np.max(cap_max)),
                ranking: p.ranking.add(b * adaptive_ranking_words(a.np)),
                scratch: p.scratch.add((b * nt + tid) * sl),
                sl,
                state: p.state.add(b * ADAPTIVE_STATE_WORDS),
                evals: p.evaluations.add(b),
                best_f: p.best_f.add(b),
                hist: if p.hist.is_null() {
                    core::ptr::null_mut()
                } else {
                    p.hist.add(b * (a.gens as usize + 1))
                },
                lo: from_raw_parts(p.lo, d),
                hi: from_raw_parts(p.hi, d),
            }
        }
    }

    /// The initial population (generation 0 of the streams), as `cpu::initial`, with
    /// its values when `o` is given, a thread per individual; thread 0 the memory and
    /// the state.
    ///
    /// # Safety
    /// The buffers of [`Ctx::new`]; no other thread of the team touches this run's
    /// buffers until the team's next barrier but through this call.
    #[inline(always)]
    unsafe fn init<O: Eval<T>>(&self, tid: usize, nt: usize, o: Option<&O>) {
        let (d, np, h) = (self.d, self.np, self.h);
        let s = strategy_of(&self.a);
        // SAFETY: the caller's contract; each thread writes its own rows, thread 0
        // alone the memory and the state.
        unsafe {
            let scratch = from_raw_parts_mut(self.scratch, self.sl);
            let mut i = tid;
            while i < np {
                let row = from_raw_parts_mut(self.x.add(i * d), d);
                let sub = subsequence(self.stream, i as u32);
                let mut j0 = 0;
                while j0 < d {
                    let n = if d - j0 < 4 { d - j0 } else { 4 };
                    let u = block_words(self.key, sub, block(0, (j0 / 4) as u32));
                    let v = init_chunk(
                        &u,
                        n as u32,
                        &crate::adaptive_gen::chunk4(self.lo, j0),
                        &crate::adaptive_gen::chunk4(self.hi, j0),
                    );
                    row[j0..j0 + n].copy_from_slice(&v[..n]);
                    j0 += 4;
                }
                if let Some(o) = o {
                    *self.fit.add(i) = o.value(row, scratch);
                }
                *self.jde.add(i) = T::of(JDE_F_INIT);
                *self.jde.add(np + i) = T::of(JDE_CR_INIT);
                i += nt;
            }
            if tid == 0 {
                let mut e = 0;
                while e < h {
                    let (mf, mcr) = initial_memory::<T>(s, e, h);
                    *self.memory.add(e) = mf;
                    *self.memory.add(h + e) = mcr;
                    e += 1;
                }
                *self.state.add(ADAPTIVE_SIZE) = self.a.np;
                *self.state.add(ADAPTIVE_ARCHIVE) = 0;
                *self.state.add(ADAPTIVE_MEMORY_K) = 0;
                *self.state.add(ADAPTIVE_GENS) = 0;
                *self.evals = np as u64;
            }
        }
    }

    /// Thread 0, once the values are in `fit`: the best of the first
    /// `state[ADAPTIVE_SIZE]` individuals, its value as entry `g` of the history, and
    /// then whether the run goes on ([`ADAPTIVE_DONE`], [`ADAPTIVE_COUNT`]).
    ///
    /// # Safety
    /// The buffers of [`Ctx::new`]; thread 0 only, no other thread touching the state,
    /// the best or the history until the team's next barrier.
    #[inline(always)]
    unsafe fn best(&self, g: u32) {
        // SAFETY: the caller's contract.
        unsafe {
            let n = *self.state.add(ADAPTIVE_SIZE) as usize;
            self.best_is(g, best_of(from_raw_parts(self.fit, n)));
        }
    }

    /// [`Ctx::best`] with the best individual's index found already.
    ///
    /// # Safety
    /// As [`Ctx::best`].
    #[inline(always)]
    unsafe fn best_is(&self, g: u32, best: usize) {
        let a = &self.a;
        // SAFETY: the caller's contract.
        unsafe {
            let n = *self.state.add(ADAPTIVE_SIZE) as usize;
            let bf = *self.fit.add(best);
            *self.state.add(ADAPTIVE_BEST) = best as u32;
            *self.best_f = bf;
            if !self.hist.is_null() {
                *self.hist.add(g as usize) = bf;
            }
            let left = a.max_evaluations.saturating_sub(*self.evals);
            let over = g >= a.gens || bf.to_f64() <= a.target || left == 0;
            *self.state.add(ADAPTIVE_COUNT) = (n as u64).min(left) as u32;
            write_volatile(self.state.add(ADAPTIVE_DONE), over as u32);
            write_volatile(self.state.add(ADAPTIVE_GENS), g);
        }
    }

    /// The trials of the next generation (`state[ADAPTIVE_GENS] + 1`), with their
    /// values when `o` is given: the p-best ranking's top k, then a thread per trial.
    ///
    /// # Safety
    /// The buffers of [`Ctx::new`]; every thread of `team` calls it, after a barrier
    /// that follows the state's last change.
    #[inline(always)]
    unsafe fn trials<O: Eval<T>, M: Team>(&self, team: &mut M, o: Option<&O>)
    where
        T: LaneReal,
    {
        let (a, d) = (&self.a, self.d);
        let (tid, nt) = (team.tid(), team.threads());
        // SAFETY: the caller's contract; every thread reads the state alike (no thread
        // writes it in this call) and writes its own trials; the ranking is read only
        // after the barrier that follows its writes, which every thread reaches (`k`
        // is the same for all).
        unsafe {
            let n = read_volatile(self.state.add(ADAPTIVE_SIZE)) as usize;
            let spent = read_volatile(self.evals);
            let g1 = read_volatile(self.state.add(ADAPTIVE_GENS)) + 1;
            let m = read_volatile(self.state.add(ADAPTIVE_COUNT)) as usize;
            let t = spent as f64 / a.max_evaluations as f64;
            let k = pbest_k(a, n as u32, t);
            if k > 0 {
                self.top_k(team, n, k);
            }
            let archive_len = read_volatile(self.state.add(ADAPTIVE_ARCHIVE));
            let v = View {
                g: g1,
                n: n as u32,
                k,
                t,
                x: from_raw_parts(self.x, n * d),
                lo: self.lo,
                hi: self.hi,
                ranking: from_raw_parts(self.ranking, k as usize),
                archive: from_raw_parts(self.archive, self.cap_max * d),
                archive_len,
                mf: from_raw_parts(self.memory, self.h),
                mcr: from_raw_parts(self.memory.add(self.h), self.h),
                jf: from_raw_parts(self.jde, n),
                jcr: from_raw_parts(self.jde.add(self.np), n),
            };
            let scratch = from_raw_parts_mut(self.scratch, self.sl);
            let mut i = tid;
            while i < m {
                let out = from_raw_parts_mut(self.trials.add(i * d), d);
                let oc = trial(a, self.key, self.stream, &v, i, out);
                if let Some(o) = o {
                    *self.tfit.add(i) = o.value(out, scratch);
                }
                *self.tparam.add(2 * i) = oc.f;
                *self.tparam.add(2 * i + 1) = oc.cr;
                *self.tword.add(i) = oc.archive_word;
                i += nt;
            }
        }
    }

    /// The rest of the generation whose trials and values are in place, over the team
    /// (thread 0 only for the memory's update and the state):
    /// 1. each warp takes chunks of 32 trials: each lane its trial's part of the record
    ///    ([`success_leaf`]), the chunk's record by a butterfly at distances 1, 2, 4, 8,
    ///    16 ([`success_tree`](crate::adaptive_gen::success_tree)'s order); the archive
    ///    slots' owners are cleared;
    /// 2. each success's archive slot from the successes before it (the chunks' counts
    ///    before its chunk, then a scan in the warp): what the pass in index order
    ///    ([`judge`](crate::adaptive_gen::judge)) gives; a slot's owner is its latest
    ///    parent (an atomic maximum). Warp 0 merges the chunks' records, 32 at a time, and
    ///    thread 0 adapts the memory and writes the state;
    /// 3. the archived parents (a slot's owner only), then the replacing trials, element
    ///    by element; the best individual ([`Ctx::team_best`]);
    /// 4. L-SHADE's and jSO's reduction: all threads rank, the kept rows are numbered by
    ///    the same chunked scan and moved (through the trial buffer); thread 0 shrinks
    ///    the archive. Thread 0: the best and the state.
    ///
    /// # Safety
    /// The buffers of [`Ctx::new`]; every thread of `team` calls it, after a barrier
    /// that follows the trials' values; the team's size is a multiple of 32.
    #[inline(always)]
    unsafe fn select<M: Team>(&self, team: &mut M)
    where
        T: LaneReal,
    {
        let (a, d, np, h) = (&self.a, self.d, self.np, self.h);
        let (tid, nt) = (team.tid(), team.threads());
        let (lane, warp, warps) = ((tid & 31) as u32, tid / 32, nt / 32);
        let (x, fit, jde, archive) = (self.x, self.fit, self.jde, self.archive);
        let (trials, tfit, tparam, tword, ranks) =
            (self.trials, self.tfit, self.tparam, self.tword, self.ranks);
        // SAFETY: the caller's contract. Between two barriers each location is written
        // by one thread at most and read by no other, but for the owners (atomic maxima,
        // read after the barrier that follows them); the chunks' records are written by
        // their warp's lane 0 and read after a barrier. Every thread reaches every
        // barrier and every warp-wide step: `m`, `n` and `next` are read alike, after
        // the barrier that follows their writes, and the chunk loops' trip counts are
        // the same for a warp's lanes.
        unsafe {
            let n = read_volatile(self.state.add(ADAPTIVE_SIZE)) as usize;
            // Thread 0 writes the generation only at the end, after every read here.
            let g1 = read_volatile(self.state.add(ADAPTIVE_GENS)) + 1;
            let m = read_volatile(self.state.add(ADAPTIVE_COUNT)) as usize;
            let alen0 = read_volatile(self.state.add(ADAPTIVE_ARCHIVE));
            let s = strategy_of(a);
            let jde_run = s == Strategy::Jde;
            let capacity = archive_capacity(a.archive_rate, n as u32);
            let chunks = m.div_ceil(32);
            // The chunks' records (the p-best ranking is read no more this generation).
            let parts = self.ranking as *mut Successes<T>;
            // 1. The chunks' records.
            let mut c = warp;
            while c < chunks {
                let i = c * 32 + lane as usize;
                let leaf = if i < m {
                    let o = Outcome {
                        f: *tparam.add(2 * i),
                        cr: *tparam.add(2 * i + 1),
                        archive_word: 0,
                    };
                    success_leaf(s, *tfit.add(i), *fit.add(i), &o)
                } else {
                    Successes::default()
                };
                let r = warp_record(leaf);
                if lane == 0 {
                    *parts.add(c) = r;
                }
                c += warps;
            }
            let mut e = tid;
            while e < capacity as usize {
                *ranks.add(e) = 0;
                e += nt;
            }
            if tid == 0 {
                write_volatile(self.state.add(ADAPTIVE_BEST_KEY) as *mut u64, 0);
                write_volatile(self.state.add(ADAPTIVE_BEST_INDEX), 0);
            }
            team.barrier();
            // 2. The slots and their owners, each warp its chunks.
            let mut c = warp;
            while c < chunks {
                let before = warp_count_before(parts, c, lane);
                let i = c * 32 + lane as usize;
                let (value, parent) = if i < m {
                    (*tfit.add(i), *fit.add(i))
                } else {
                    (T::ZERO, T::ZERO)
                };
                let won = i < m && counts_success(s, value, parent);
                let k = before + warp_exclusive_count(won, lane);
                if i < m {
                    let mut word = NO_SLOT;
                    if won {
                        let len = if capacity == 0 || alen0 >= capacity {
                            alen0
                        } else {
                            capacity.min(alen0 + k)
                        };
                        if let Some(slot) = archive_slot(*tword.add(i), len, capacity) {
                            atomic_max_u32(ranks.add(slot as usize), i as u32 + 1);
                            word = slot;
                        }
                    }
                    if replaces(s, value, parent) {
                        word |= REPLACES;
                    }
                    *tword.add(i) = word;
                }
                c += warps;
            }
            if warp == 0 {
                let total = warp_merge_records(parts, chunks, lane);
                if lane == 0 {
                    let mut mk = *self.state.add(ADAPTIVE_MEMORY_K);
                    adapt(
                        a,
                        from_raw_parts_mut(self.memory, h),
                        from_raw_parts_mut(self.memory.add(h), h),
                        &mut mk,
                        &total,
                    );
                    *self.state.add(ADAPTIVE_MEMORY_K) = mk;
                    *self.state.add(ADAPTIVE_ARCHIVE) =
                        archive_len_after(alen0, total.count, capacity);
                    let spent = *self.evals + m as u64;
                    *self.evals = spent;
                    *self.state.add(ADAPTIVE_NEXT) = next_size(a, n as u32, spent);
                }
            }
            team.barrier();
            // 3. The archived parents (before any row is replaced), each slot's owner only.
            let total = m * d;
            if !jde_run {
                let mut e = tid;
                while e < total {
                    let i = e / d;
                    let slot = *tword.add(i) & NO_SLOT;
                    if slot != NO_SLOT && read_volatile(ranks.add(slot as usize)) == i as u32 + 1 {
                        *archive.add(slot as usize * d + (e - i * d)) = *x.add(e);
                    }
                    e += nt;
                }
                team.barrier();
            }
            // The replacements.
            let mut e = tid;
            while e < total {
                let i = e / d;
                if *tword.add(i) & REPLACES != 0 {
                    *x.add(e) = *trials.add(e);
                    if e == i * d {
                        *fit.add(i) = *tfit.add(i);
                        if jde_run {
                            *jde.add(i) = *tparam.add(2 * i);
                            *jde.add(np + i) = *tparam.add(2 * i + 1);
                        }
                    }
                }
                e += nt;
            }
            team.barrier();
            let mut best = self.team_best(team, n);
            let next = read_volatile(self.state.add(ADAPTIVE_NEXT)) as usize;
            if next < n {
                // L-SHADE's and jSO's reduction: the `next` best, in index order.
                let fs = from_raw_parts(fit, n);
                let mut i = tid;
                while i < n {
                    *ranks.add(i) = rank(fs, i as u32);
                    i += nt;
                }
                team.barrier();
                // Each kept row's place: how many kept rows come before it (the
                // chunks' counts, then a scan in the warp).
                let counts = self.ranking;
                let rows = n.div_ceil(32);
                let mut c = warp;
                while c < rows {
                    let i = c * 32 + lane as usize;
                    let kept = i < n && (*ranks.add(i) as usize) < next;
                    let k = warp_exclusive_count(kept, lane);
                    if lane == 31 {
                        *counts.add(c) = k + kept as u32;
                    }
                    c += warps;
                }
                team.barrier();
                let mut c = warp;
                while c < rows {
                    let before = warp_sum_before(counts, c, lane);
                    let i = c * 32 + lane as usize;
                    let kept = i < n && (*ranks.add(i) as usize) < next;
                    let k = before + warp_exclusive_count(kept, lane);
                    if i < n {
                        *ranks.add(i) = if kept { k } else { NO_SLOT };
                    }
                    c += warps;
                }
                team.barrier();
                // The best is kept (rank 0); its place is its index from here on.
                best = *ranks.add(best) as usize;
                // The kept rows, packed into the trial buffers, then back.
                let mut e = tid;
                while e < n * d {
                    let i = e / d;
                    let to = *ranks.add(i);
                    if to != NO_SLOT {
                        let to = to as usize;
                        *trials.add(to * d + (e - i * d)) = *x.add(e);
                        if e == i * d {
                            *tfit.add(to) = *fit.add(i);
                            *tparam.add(2 * to) = *jde.add(i);
                            *tparam.add(2 * to + 1) = *jde.add(np + i);
                        }
                    }
                    e += nt;
                }
                team.barrier();
                let mut e = tid;
                while e < next * d {
                    *x.add(e) = *trials.add(e);
                    let i = e / d;
                    if e == i * d {
                        *fit.add(i) = *tfit.add(i);
                        *jde.add(i) = *tparam.add(2 * i);
                        *jde.add(np + i) = *tparam.add(2 * i + 1);
                    }
                    e += nt;
                }
                team.barrier();
                if tid == 0 {
                    let mut alen = *self.state.add(ADAPTIVE_ARCHIVE);
                    shrink_archive(
                        self.key,
                        self.stream,
                        g1,
                        d,
                        from_raw_parts_mut(archive, self.cap_max * d),
                        &mut alen,
                        archive_capacity(a.archive_rate, next as u32),
                    );
                    *self.state.add(ADAPTIVE_ARCHIVE) = alen;
                    *self.state.add(ADAPTIVE_SIZE) = next as u32;
                }
            }
            if tid == 0 {
                self.best_is(g1, best);
            }
        }
    }

    /// The p-best ranking's top k: individual i at `ranking[r]` for its rank r (how many
    /// of the first `n` are better, [`rank`]) when r < k; the trials read no further.
    /// Below [`TOP_K_SAMPLED_FROM`] individuals each thread counts its individuals'
    /// ranks. From there on the count is over candidates only: a sample of
    /// [`TOP_K_SAMPLE`] evenly spaced individuals is ranked (a warp per sample), its
    /// element τ of rank ≈ 1.2·k·sample/n + 8 chosen (about three standard deviations
    /// of the sample's count above k's share); the candidates, every individual not
    /// worse than τ, are packed in index order (a chunked scan) into `ranks` and the
    /// trial values; each candidate's rank among them (a warp per candidate) is its
    /// rank in the population, as every other individual is worse than all of them.
    /// Where the candidates are fewer than k (a sample far from the population's order),
    /// the threads count over everyone. Either way the ranking is the same.
    ///
    /// # Safety
    /// The buffers of [`Ctx::new`]; every thread of `team` calls it, after a barrier
    /// that follows the values' last change; `ranks`, the trial values and the trial
    /// words are free until the barrier it ends with; the team's size is a multiple of
    /// 32; `1 ≤ k ≤ n`.
    #[inline(always)]
    unsafe fn top_k<M: Team>(&self, team: &mut M, n: usize, k: u32) {
        let (tid, nt) = (team.tid(), team.threads());
        let (lane, warp, warps) = ((tid & 31) as u32, tid / 32, nt / 32);
        let fs = self.fit;
        // SAFETY: the caller's contract. Between barriers each word is written by one
        // thread (τ's index by the one lane whose sample has rank q; a chunk's count by
        // its lane 31; a candidate's place by its lane; a rank's entry by its
        // candidate's warp) and read after the next barrier; every thread reaches every
        // barrier and every warp's loops have the same trip counts for its lanes.
        unsafe {
            if n >= TOP_K_SAMPLED_FROM {
                let s = if n < TOP_K_SAMPLE { n } else { TOP_K_SAMPLE };
                let q = ((6 * k as usize * s) / (5 * n) + 8).min(s - 1) as u32;
                // Sample t is individual t·n/s (distinct, in index order).
                let at = |t: usize| t * n / s;
                let tau = self.state.add(ADAPTIVE_TAU);
                let mut t = warp;
                while t < s {
                    let it = at(t);
                    let ft = *fs.add(it);
                    let mut c = 0u32;
                    let mut u0 = 0;
                    while u0 < s {
                        let u = u0 + lane as usize;
                        if u < s {
                            let iu = at(u);
                            c += better(*fs.add(iu), iu as u32, ft, it as u32) as u32;
                        }
                        u0 += 32;
                    }
                    if warp_sum(c) == q && lane == 0 {
                        *tau = it as u32;
                    }
                    t += warps;
                }
                team.barrier();
                let it = read_volatile(tau) as usize;
                let ft = *fs.add(it);
                let candidate =
                    |i: usize| i < n && (i == it || better(*fs.add(i), i as u32, ft, it as u32));
                let chunks = n.div_ceil(32);
                let counts = self.tword;
                let mut c = warp;
                while c < chunks {
                    let i = c * 32 + lane as usize;
                    let yes = candidate(i);
                    let x = warp_exclusive_count(yes, lane);
                    if lane == 31 {
                        *counts.add(c) = x + yes as u32;
                    }
                    c += warps;
                }
                team.barrier();
                let (ci, cv) = (self.ranks, self.tfit);
                let mut c = warp;
                while c < chunks {
                    let before = warp_sum_before(counts, c, lane);
                    let i = c * 32 + lane as usize;
                    let yes = candidate(i);
                    let to = (before + warp_exclusive_count(yes, lane)) as usize;
                    if yes {
                        *ci.add(to) = i as u32;
                        *cv.add(to) = *fs.add(i);
                    }
                    c += warps;
                }
                let total = warp_sum_before(counts, chunks, lane) as usize;
                team.barrier();
                if total >= k as usize {
                    let mut p = warp;
                    while p < total {
                        let (ip, vp) = (*ci.add(p), *cv.add(p));
                        let mut c = 0u32;
                        let mut q0 = 0;
                        while q0 < total {
                            let q = q0 + lane as usize;
                            if q < total {
                                c += better(*cv.add(q), *ci.add(q), vp, ip) as u32;
                            }
                            q0 += 32;
                        }
                        let r = warp_sum(c);
                        if lane == 0 && r < k {
                            *self.ranking.add(r as usize) = ip;
                        }
                        p += warps;
                    }
                    team.barrier();
                    return;
                }
            }
            let all = from_raw_parts(fs, n);
            let mut i = tid;
            while i < n {
                let r = rank(all, i as u32);
                if r < k {
                    *self.ranking.add(r as usize) = i as u32;
                }
                i += nt;
            }
            team.barrier();
        }
    }

    /// The best of the first `n` values (lower value, then lower index, NaN last: what
    /// [`best_of`] gives) over the team: each thread its rows, a warp butterfly
    /// ([`warp_best`]), then two atomic minima, of the values' order keys
    /// ([`order_key`]) and of the index among the warps holding the least key. Every
    /// thread gets the index.
    ///
    /// # Safety
    /// The buffers of [`Ctx::new`]; every thread of `team` calls it, after a barrier
    /// that follows the values' last change and the zeroing of the state's words
    /// [`ADAPTIVE_BEST_KEY`] and [`ADAPTIVE_BEST_INDEX`]; the team's size is a multiple
    /// of 32; `n ≥ 1`.
    #[inline(always)]
    unsafe fn team_best<M: Team>(&self, team: &mut M, n: usize) -> usize
    where
        T: LaneReal,
    {
        let (tid, nt) = (team.tid(), team.threads());
        // SAFETY: the caller's contract; the words are changed by atomics only, and
        // read after the barrier that follows them.
        unsafe {
            let key_word = self.state.add(ADAPTIVE_BEST_KEY) as *mut u64;
            let index_word = self.state.add(ADAPTIVE_BEST_INDEX);
            let (mut bf, mut bi) = (T::of(f64::NAN), u32::MAX);
            let mut i = tid;
            while i < n {
                let f = *self.fit.add(i);
                if better(f, i as u32, bf, bi) {
                    bf = f;
                    bi = i as u32;
                }
                i += nt;
            }
            let (bf, bi) = warp_best(bf, bi);
            let leader = tid & 31 == 0 && bi != u32::MAX;
            if leader {
                atomic_max_u64(key_word, !order_key(bf));
            }
            team.barrier();
            if leader && order_key(bf) == !read_volatile(key_word) {
                atomic_max_u32(index_word, !bi);
            }
            team.barrier();
            !read_volatile(index_word) as usize
        }
    }
}

/// The population size from which [`Ctx::top_k`] ranks candidates only (on an H200 the
/// candidates cost more than counting over everyone at Np = 1 000, a fifth as much at
/// 10 000).
const TOP_K_SAMPLED_FROM: usize = 2048;
/// The sample [`Ctx::top_k`] picks its threshold from.
const TOP_K_SAMPLE: usize = 512;

/// A trial's word after the judging pass: its parent's archive slot ([`NO_SLOT`]:
/// none) and, in the top bit, whether the trial replaces its parent.
const REPLACES: u32 = 1 << 31;
const NO_SLOT: u32 = REPLACES - 1;

/// One run over `team`; see the module's documentation. A host-callback kernel
/// ([`Eval::HOST`]) runs the phase [`AdaptiveRun::phase`] names; the others the whole
/// run.
///
/// # Safety
/// The host launches it with the buffers [`AdaptiveParams`] describes, sized for the
/// grid's runs and the team's threads, and with a CEC function's data for [`Cec`]; for a
/// [`GridTeam`], cooperatively, with `sync` a zeroed word; for [`Host`], the phases in
/// their order, the values of each phase's rows written between them.
#[inline(always)]
pub(crate) unsafe fn adaptive<T: LaneReal, O: Eval<T>, M: Team>(
    p: AdaptiveParams<T>,
    o: O,
    team: &mut M,
) {
    let a: AdaptiveRun = p.run;
    let (b, tid, nt) = (team.run(), team.tid(), team.threads());
    let (d, np) = (a.dim as usize, a.np as usize);
    // SAFETY: the buffers are sized as `AdaptiveParams` says (the caller's contract), so
    // every run's part and every thread's scratch lies inside its buffer; the threads
    // write disjoint parts between barriers (thread 0 alone in the serial parts); every
    // thread of the team reaches each barrier: the control flow around them depends only
    // on values all threads read alike, after the barrier that follows their writes.
    unsafe {
        let c = Ctx::new(&p, b, tid, nt);
        if O::HOST {
            match a.phase {
                ADAPTIVE_PHASE_INIT_ROWS => c.init::<O>(tid, nt, None),
                ADAPTIVE_PHASE_INIT_BEST if tid == 0 => c.best(0),
                ADAPTIVE_PHASE_TRIALS => c.trials::<O, M>(team, None),
                ADAPTIVE_PHASE_SELECT => c.select(team),
                _ => {}
            }
            return;
        }
        if a.phase == ADAPTIVE_PHASE_RESUME {
            // The state is in the buffers; the members may have changed since (a
            // migration event): the best and whether the run goes on, found again.
            if tid == 0 {
                c.best(read_volatile(c.state.add(ADAPTIVE_GENS)));
            }
        } else {
            c.init(tid, nt, Some(&o));
            team.barrier();
            if tid == 0 {
                c.best(0);
            }
        }
        team.barrier();

        if O::CLASSIC
            && let Some(tp) = classic_params::<T>(&a)
        {
            // A classic strategy: every generation at full size, as `cpu::generation`.
            let (key, stream, x, fit) = (c.key, c.stream, c.x, c.fit);
            let (trials, tfit, state) = (c.trials, c.tfit, c.state);
            let scratch = from_raw_parts_mut(c.scratch, c.sl);
            let mut g = read_volatile(state.add(ADAPTIVE_GENS));
            loop {
                let best = read_volatile(state.add(ADAPTIVE_BEST)) as usize;
                let bf = read_volatile(c.best_f);
                if g >= a.gens || bf.to_f64() <= a.target {
                    break;
                }
                let g1 = g + 1;
                let xs = from_raw_parts(x, np * d);
                let mut i = tid;
                while i < np {
                    let out = from_raw_parts_mut(trials.add(i * d), d);
                    classic_trial(&tp, key, stream, g1, a.np, i, xs, best, c.lo, c.hi, out);
                    *tfit.add(i) = o.value(out, scratch);
                    i += nt;
                }
                team.barrier();
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
                team.barrier();
                if tid == 0 {
                    *c.evals += np as u64;
                    c.best(g1);
                }
                team.barrier();
                g = g1;
            }
            return;
        }

        while read_volatile(c.state.add(ADAPTIVE_DONE)) == 0 {
            c.trials(team, Some(&o));
            team.barrier();
            c.select(team);
            team.barrier();
        }
    }
}
