//! Islands on the GPU (nvptx64 only): the particle-swarm body ([`swarm`], one block per
//! swarm, the rules of [`crate::pso`]), the genetic algorithm's ([`genetic`], one block
//! per island, the rules of [`crate::ga`]) and the migration event's two phases
//! ([`migrate`], one block per island, the rules of [`crate::migration`]). A DE island
//! is a population of the batch layout ([`crate::batch`]), which goes on from its
//! buffers where a migration left it; the host runs the generations between two events
//! in one launch and an event in two.
//!
//! Both bodies compute what the CPU engine computes, bit for bit: the same words, the
//! same arithmetic per component, values by the group of lanes as
//! [`crate::lanes::evaluate`] does, and every choice (best, worst, draw) by the
//! functions the CPU engine calls or, for the block-wide selections, by reductions under
//! the same strict total order ([`better`]), whose result does not depend on the order
//! of comparisons.

use core::arch::nvptx::{_block_dim_x, _block_idx_x, _syncthreads, _thread_idx_x};
use core::slice::{from_raw_parts, from_raw_parts_mut};

use crate::abi::{GeneticParams, MigrateParams, SwarmParams};
use crate::de::{BoundPolicy, RESAMPLE_SLOT, accepts, better, block, init_chunk, subsequence};
use crate::functions::{BuiltinObjective, Formula, Function};
use crate::ga::{BITS_SLOT, BLEND_SLOT, DECIDE_SLOT, GaParams, SELECT_SLOT, child_chunk, plan};
use crate::kernels::{Eval, Group, LaneReal, block_best, shfl_bfly};
use crate::lanes::{LaneObjective, chunk, group_width, rounds, stride};
use crate::migration::{
    EMIGRANT_SLOT, Emigrants, REPLACE_SLOT, Replacement, Topology, draw_distinct, random_ring,
    source, sources,
};
use crate::philox::{block_words, key_of};
use crate::pso::{PsoParams, VELOCITY_SLOT, init_velocity_chunk, r1_slot, r2_slot, step_chunk};

/// A swarm's generations in one block: see [`SwarmParams`]. Thread groups of
/// [`group_width`] lanes serve one particle each per pass.
///
/// # Safety
/// The host sizes every buffer as [`SwarmParams`] says for gridDim swarms and launches
/// a multiple of the group width threads per block (at most 1 024).
#[inline(always)]
pub(crate) unsafe fn swarm<T: LaneReal>(p: SwarmParams<T>) {
    let SwarmParams {
        function,
        formula,
        bounds,
        dim,
        np,
        gens,
        target,
        inertia,
        c1,
        c2,
        seeds,
        streams,
        lo,
        hi,
        x,
        v,
        pbest,
        pfit,
        gbest,
        scratch_f,
        scratch_i,
        gens_done,
        best_f,
    } = p;
    // SAFETY: the caller's contract; every index below is < np (rows, values), < 32
    // (scratch) or < stride(dim) (components), inside the block's share.
    unsafe {
        let s = _block_idx_x() as usize;
        let gen0 = *gens_done.add(s);
        if gen0 == u32::MAX {
            return;
        }
        let tid = _thread_idx_x();
        let nthreads = _block_dim_x();
        let o = BuiltinObjective {
            f: Function::from_u32(function).unwrap_or(Function::Sphere),
            formula: Formula::from_u32(formula).unwrap_or(Formula::Exact),
        };
        let bounds = BoundPolicy::from_u32(bounds).unwrap_or(BoundPolicy::Clip);
        let params = PsoParams { inertia, c1, c2 };
        let g = group_width(dim);
        let gr = Group::new(g, tid & 31);
        let groups = nthreads / g;
        let my_group = tid / g;
        let st = stride(dim) as usize;
        let key = key_of(*seeds.add(s));
        let pstream = *streams.add(s);
        let off = s * np as usize * st;
        let (x, v, pbest) = (x.add(off), v.add(off), pbest.add(off));
        let pfit = pfit.add(s * np as usize);
        let gbest = gbest.add(s * st);
        let (sf, si) = (scratch_f.add(32 * s), scratch_i.add(32 * s));
        let nr = rounds(dim);
        let passes = np.div_ceil(groups);

        if gen0 == 0 {
            // Positions as DE's initial population, velocities (u − ½)(hi − lo).
            let mut pass = 0;
            while pass < passes {
                let i0 = pass * groups + my_group;
                let active = i0 < np;
                let i = if active { i0 } else { np - 1 };
                let sub = subsequence(pstream, i);
                let mut ev = Eval::<T>::new(&o);
                let mut c = 0;
                while c < nr {
                    let (j0, n) = chunk(dim, g, c, gr.lane);
                    let mut xv = [T::ZERO; 4];
                    if n > 0 {
                        let (l4, h4) =
                            (T::load4(lo.add(j0 as usize)), T::load4(hi.add(j0 as usize)));
                        let q = j0 / 4;
                        xv = init_chunk(&block_words(key, sub, block(0, q)), n, &l4, &h4);
                        let vv = init_velocity_chunk(
                            &block_words(key, sub, block(0, VELOCITY_SLOT + q)),
                            n,
                            &l4,
                            &h4,
                        );
                        if active {
                            let at = i as usize * st + j0 as usize;
                            T::store4(x.add(at), xv);
                            T::store4(pbest.add(at), xv);
                            T::store4(v.add(at), vv);
                        }
                    }
                    ev.round(&gr, &o, xv, j0, n, dim, &o.consts(j0));
                    c += 1;
                }
                let fx = ev.value(&gr, &o, dim);
                if active && gr.lane == 0 {
                    *pfit.add(i as usize) = fx;
                }
                pass += 1;
            }
            _syncthreads();
        }
        let (mut bf, mut bi) = swarm_best(pfit, np, tid, nthreads, sf, si);
        let mut gn = gen0;
        // Not `bf > target`: a NaN best never counts as having reached the target.
        #[allow(clippy::neg_cmp_op_on_partial_ord)]
        while gn < gens && !(bf <= target) {
            gn += 1;
            // The snapshot of the swarm's best that every particle moves against.
            let mut j = tid;
            while (j as usize) < st {
                *gbest.add(j as usize) = *pbest.add(bi as usize * st + j as usize);
                j += nthreads;
            }
            _syncthreads();
            let mut pass = 0;
            while pass < passes {
                let i0 = pass * groups + my_group;
                let active = i0 < np;
                let i = if active { i0 } else { np - 1 };
                let sub = subsequence(pstream, i);
                let row = i as usize * st;
                let mut ev = Eval::<T>::new(&o);
                let mut c = 0;
                while c < nr {
                    let (j0, n) = chunk(dim, g, c, gr.lane);
                    let mut nx = [T::ZERO; 4];
                    if n > 0 {
                        let at = row + j0 as usize;
                        let q = j0 / 4;
                        let (l4, h4) =
                            (T::load4(lo.add(j0 as usize)), T::load4(hi.add(j0 as usize)));
                        let nv;
                        (nx, nv) = step_chunk(
                            &params,
                            bounds,
                            n,
                            &T::load4(x.add(at)),
                            &T::load4(v.add(at)),
                            &T::load4(pbest.add(at)),
                            &T::load4(gbest.add(j0 as usize)),
                            &l4,
                            &h4,
                            &block_words(key, sub, block(gn, r1_slot(q))),
                            &block_words(key, sub, block(gn, r2_slot(q))),
                            || block_words(key, sub, block(gn, RESAMPLE_SLOT + q)),
                        );
                        if active {
                            T::store4(x.add(at), nx);
                            T::store4(v.add(at), nv);
                        }
                    }
                    ev.round(&gr, &o, nx, j0, n, dim, &o.consts(j0));
                    c += 1;
                }
                let fx = ev.value(&gr, &o, dim);
                if active && accepts(fx, *pfit.add(i as usize)) {
                    // The lanes copy the chunks they wrote.
                    let mut c = 0;
                    while c < nr {
                        let (j0, n) = chunk(dim, g, c, gr.lane);
                        if n > 0 {
                            let at = row + j0 as usize;
                            T::store4(pbest.add(at), T::load4(x.add(at)));
                        }
                        c += 1;
                    }
                    if gr.lane == 0 {
                        *pfit.add(i as usize) = fx;
                    }
                }
                pass += 1;
            }
            _syncthreads();
            (bf, bi) = swarm_best(pfit, np, tid, nthreads, sf, si);
        }
        if tid == 0 {
            *gens_done.add(s) = gn;
            *best_f.add(s) = bf;
        }
    }
}

/// The best (value, index) of `np` values; every thread gets it.
///
/// # Safety
/// Every thread of the block calls it; `fit` holds `np` values, the scratch 32 entries.
#[inline(always)]
unsafe fn swarm_best<T: LaneReal>(
    fit: *const T,
    np: u32,
    tid: u32,
    nthreads: u32,
    sf: *mut T,
    si: *mut u32,
) -> (T, u32) {
    let mut lf = T::NAN;
    let mut li = u32::MAX;
    let mut i = tid;
    while i < np {
        // SAFETY: i < np.
        let f = unsafe { *fit.add(i as usize) };
        if better(f, i, lf, li) {
            lf = f;
            li = i;
        }
        i += nthreads;
    }
    // SAFETY: the caller's contract.
    unsafe { block_best(lf, li, sf, si) }
}

/// Where an island's members live: rows in `a`, or in `a` or `b` as `flags` says.
#[derive(Clone, Copy)]
struct Members<T> {
    a: *mut T,
    b: *mut T,
    flags: *const u32,
    st: usize,
}

impl<T> Members<T> {
    /// Member `i`'s row.
    ///
    /// # Safety
    /// `i` < np of the island these pointers are offset to.
    #[inline(always)]
    unsafe fn row(&self, i: u32) -> *mut T {
        // SAFETY: the caller's contract.
        unsafe {
            let base = if self.flags.is_null() || *self.flags.add(i as usize) == 0 {
                self.a
            } else {
                self.b
            };
            base.add(i as usize * self.st)
        }
    }
}

/// One phase of a migration event: see [`MigrateParams`].
///
/// # Safety
/// The host sizes every buffer as [`MigrateParams`] says for gridDim islands (a
/// multiple of `islands`), with `migrants · sources ≤ np`, and runs phase 0 of an
/// event before its phase 1.
#[inline(always)]
pub(crate) unsafe fn migrate<T: LaneReal>(p: MigrateParams<T>) {
    let MigrateParams {
        phase,
        islands,
        first,
        np,
        dim,
        g,
        migrants,
        topology,
        emigrants,
        replace,
        row_stride,
        size_stride,
        seeds,
        streams,
        sizes,
        rows_a,
        rows_b,
        flags,
        also,
        fit,
        gens_done,
        out_rows,
        out_fit,
        pick,
        ring,
        rec_f,
        rec_x,
        scratch_f,
        scratch_i,
    } = p;
    // SAFETY: the caller's contract; every index below is inside island q's share of
    // the buffers, island qg's share of the emigrants or its archipelago's ring.
    unsafe {
        // The island's place in this launch's buffers (q) and in the archipelagos (qg).
        let q = _block_idx_x();
        let qg = first + q;
        if phase != 2 && *gens_done.add(q as usize) == u32::MAX {
            return;
        }
        let tid = _thread_idx_x();
        let nthreads = _block_dim_x();
        let st = if row_stride == 0 {
            stride(dim) as usize
        } else {
            row_stride as usize
        };
        let n = islands;
        let (arch, r) = (qg / n, qg % n);
        let topology = Topology::from_u32(topology).unwrap_or(Topology::Ring);
        let k = migrants;
        let ns = sources(topology, n);
        let key = key_of(*seeds.add(q as usize));
        let pstream = *streams.add(q as usize);
        let off = q as usize * np as usize;
        // The island's members now: its first `now` rows.
        let now = if sizes.is_null() {
            np
        } else {
            *sizes.add(q as usize * size_stride as usize)
        };
        let m = Members {
            a: rows_a.add(off * st),
            b: if rows_b.is_null() {
                rows_b
            } else {
                rows_b.add(off * st)
            },
            flags: if flags.is_null() {
                flags
            } else {
                flags.add(off)
            },
            st,
        };
        let also = if also.is_null() {
            also
        } else {
            also.add(off * st)
        };
        let fit = fit.add(off);
        let pick = pick.add(q as usize * (k * n) as usize);
        let ring = ring.add((arch * n) as usize);
        let (sf, si) = (
            scratch_f.add(32 * q as usize),
            scratch_i.add(32 * q as usize),
        );
        let (rec_f, rec_x) = (rec_f.add(q as usize), rec_x.add(q as usize * st));

        // With worst replacement an island keeps its best: its record is taken at the
        // end only.
        let random = Replacement::from_u32(replace) == Some(Replacement::Random);
        if phase == 2 {
            keep_record(m, fit, now, dim, tid, nthreads, rec_f, rec_x, sf, si);
        } else if phase == 0 {
            if random {
                keep_record(m, fit, now, dim, tid, nthreads, rec_f, rec_x, sf, si);
            }
            // The emigrants, copied out.
            if Emigrants::from_u32(emigrants) == Some(Emigrants::Random) {
                if tid == 0 {
                    let out = from_raw_parts_mut(pick, k as usize);
                    draw_distinct(key, pstream, g, EMIGRANT_SLOT, now, out);
                }
                _syncthreads();
            } else {
                select(fit, now, k, false, pick, tid, nthreads, sf, si);
            }
            let out_rows = out_rows.add(qg as usize * k as usize * st);
            let mut t = tid;
            while t < k * dim {
                let (e, j) = (t / dim, t % dim);
                let i = *pick.add(e as usize);
                *out_rows.add(e as usize * st + j as usize) = *m.row(i).add(j as usize);
                t += nthreads;
            }
            let mut e = tid;
            while e < k {
                *out_fit.add((qg * k + e) as usize) = *fit.add(*pick.add(e as usize) as usize);
                e += nthreads;
            }
            if topology == Topology::Random && r == 0 && tid == 0 {
                random_ring(key, pstream, g, from_raw_parts_mut(ring, n as usize));
            }
        } else {
            // The targets, from the island's own values before the event.
            let count = k * ns;
            if random {
                if tid == 0 {
                    let out = from_raw_parts_mut(pick, count as usize);
                    draw_distinct(key, pstream, g, REPLACE_SLOT, now, out);
                }
                _syncthreads();
            } else {
                select(fit, now, count, true, pick, tid, nthreads, sf, si);
            }
            // Incoming migrant e (source e / k, its emigrant e mod k) overwrites target e.
            let ring = from_raw_parts(ring as *const u32, n as usize);
            let mut t = tid;
            while t < count * dim {
                let (e, j) = (t / dim, t % dim);
                let from = arch * n + source(topology, r, e / k, n, ring);
                let val = *out_rows.add((from * k + e % k) as usize * st + j as usize);
                let i = *pick.add(e as usize);
                *m.row(i).add(j as usize) = val;
                if !also.is_null() {
                    *also.add(i as usize * st + j as usize) = val;
                }
                t += nthreads;
            }
            let mut e = tid;
            while e < count {
                let from = arch * n + source(topology, r, e / k, n, ring);
                *fit.add(*pick.add(e as usize) as usize) =
                    *out_fit.add((from * k + e % k) as usize);
                e += nthreads;
            }
            if random {
                _syncthreads();
                keep_record(m, fit, now, dim, tid, nthreads, rec_f, rec_x, sf, si);
            }
        }
    }
}

/// The island's record takes its current best unless the record is strictly better:
/// a lower value (the CPU engine's rule; a tie or an empty record, NaN, takes it).
///
/// # Safety
/// Every thread of the block calls it, after the members are complete.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn keep_record<T: LaneReal>(
    m: Members<T>,
    fit: *const T,
    np: u32,
    dim: u32,
    tid: u32,
    nthreads: u32,
    rec_f: *mut T,
    rec_x: *mut T,
    sf: *mut T,
    si: *mut u32,
) {
    // SAFETY: the caller's contract; the barrier orders the reads of the record before
    // its writes.
    unsafe {
        let (fb, bi) = swarm_best(fit, np, tid, nthreads, sf, si);
        let take = !better(*rec_f, u32::MAX, fb, 0);
        _syncthreads();
        if take {
            let src = m.row(bi);
            let mut j = tid;
            while j < dim {
                *rec_x.add(j as usize) = *src.add(j as usize);
                j += nthreads;
            }
            if tid == 0 {
                *rec_f = fb;
            }
        }
        _syncthreads();
    }
}

/// The `count` first of `fit` in the order of [`better`] (best first) or its reverse
/// (`worst`: worst first) into `pick`, as [`crate::migration::select_best`] and
/// [`crate::migration::select_worst`] give them: `count` rounds of a block reduction over
/// the values not picked yet.
///
/// # Safety
/// Every thread of the block calls it; `pick` holds `count ≤ np` entries, the scratch
/// 32.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
unsafe fn select<T: LaneReal>(
    fit: *const T,
    np: u32,
    count: u32,
    worst: bool,
    pick: *mut u32,
    tid: u32,
    nthreads: u32,
    sf: *mut T,
    si: *mut u32,
) {
    // "(fa, a) comes before (fb, b)"; index u32::MAX is nobody and comes last.
    let before = |fa: T, a: u32, fb: T, b: u32| {
        if a == u32::MAX {
            false
        } else if b == u32::MAX {
            true
        } else if worst {
            better(fb, b, fa, a)
        } else {
            better(fa, a, fb, b)
        }
    };
    // SAFETY: the caller's contract; the barriers order the scratch's and pick's
    // accesses.
    unsafe {
        let full = Group::new(32, tid & 31);
        let (lane, warp) = (tid & 31, tid / 32);
        let nwarps = nthreads.div_ceil(32);
        let mut done = 0;
        while done < count {
            let mut lf = T::NAN;
            let mut li = u32::MAX;
            let mut i = tid;
            while i < np {
                let mut taken = false;
                let mut e = 0;
                while e < done {
                    taken |= *pick.add(e as usize) == i;
                    e += 1;
                }
                let f = *fit.add(i as usize);
                if !taken && before(f, i, lf, li) {
                    lf = f;
                    li = i;
                }
                i += nthreads;
            }
            full.levels(T::STRAIGHT, |w| {
                let of = full.xor(lf, w);
                let oi = shfl_bfly(li, w, Group::C_WARP);
                if before(of, oi, lf, li) {
                    lf = of;
                    li = oi;
                }
            });
            if lane == 0 {
                *sf.add(warp as usize) = lf;
                *si.add(warp as usize) = li;
            }
            _syncthreads();
            if tid == 0 {
                let (mut bf, mut bi) = (*sf, *si);
                let mut w = 1;
                while w < nwarps {
                    let (of, oi) = (*sf.add(w as usize), *si.add(w as usize));
                    if before(of, oi, bf, bi) {
                        bf = of;
                        bi = oi;
                    }
                    w += 1;
                }
                *pick.add(done as usize) = bi;
            }
            _syncthreads();
            done += 1;
        }
    }
}

/// An island of the GA in one block: see [`GeneticParams`] and [`crate::ga`]. Thread
/// groups of [`group_width`] lanes build one offspring each per pass into `y`, which is
/// copied over the population once every offspring is done.
///
/// # Safety
/// The host sizes every buffer as [`GeneticParams`] says for gridDim islands and
/// launches a multiple of the group width threads per block (at most 1 024).
#[inline(always)]
pub(crate) unsafe fn genetic<T: LaneReal>(p: GeneticParams<T>) {
    let GeneticParams {
        function,
        formula,
        bounds,
        dim,
        np,
        gens,
        target,
        crossover,
        mutation,
        alpha,
        range,
        seeds,
        streams,
        lo,
        hi,
        x,
        y,
        fit,
        yfit,
        scratch_f,
        scratch_i,
        gens_done,
        best_f,
    } = p;
    // SAFETY: the caller's contract; every index below is < np (rows, values), < 32
    // (scratch) or < stride(dim) (components), inside the block's share.
    unsafe {
        let s = _block_idx_x() as usize;
        let gen0 = *gens_done.add(s);
        if gen0 == u32::MAX {
            return;
        }
        let tid = _thread_idx_x();
        let nthreads = _block_dim_x();
        let o = BuiltinObjective {
            f: Function::from_u32(function).unwrap_or(Function::Sphere),
            formula: Formula::from_u32(formula).unwrap_or(Formula::Exact),
        };
        let bounds = BoundPolicy::from_u32(bounds).unwrap_or(BoundPolicy::Clip);
        let params = GaParams {
            crossover,
            mutation,
            alpha,
            range,
        };
        let g = group_width(dim);
        let gr = Group::new(g, tid & 31);
        let groups = nthreads / g;
        let my_group = tid / g;
        let st = stride(dim) as usize;
        let key = key_of(*seeds.add(s));
        let pstream = *streams.add(s);
        let off = s * np as usize * st;
        let (x, y) = (x.add(off), y.add(off));
        let (fit, yfit) = (fit.add(s * np as usize), yfit.add(s * np as usize));
        let (sf, si) = (scratch_f.add(32 * s), scratch_i.add(32 * s));
        let nr = rounds(dim);
        let passes = np.div_ceil(groups);

        if gen0 == 0 {
            // DE's initial population.
            let mut pass = 0;
            while pass < passes {
                let i0 = pass * groups + my_group;
                let active = i0 < np;
                let i = if active { i0 } else { np - 1 };
                let sub = subsequence(pstream, i);
                let mut ev = Eval::<T>::new(&o);
                let mut c = 0;
                while c < nr {
                    let (j0, n) = chunk(dim, g, c, gr.lane);
                    let mut xv = [T::ZERO; 4];
                    if n > 0 {
                        let (l4, h4) =
                            (T::load4(lo.add(j0 as usize)), T::load4(hi.add(j0 as usize)));
                        xv = init_chunk(&block_words(key, sub, block(0, j0 / 4)), n, &l4, &h4);
                        if active {
                            T::store4(x.add(i as usize * st + j0 as usize), xv);
                        }
                    }
                    ev.round(&gr, &o, xv, j0, n, dim, &o.consts(j0));
                    c += 1;
                }
                let fx = ev.value(&gr, &o, dim);
                if active && gr.lane == 0 {
                    *fit.add(i as usize) = fx;
                }
                pass += 1;
            }
            _syncthreads();
        }
        let (mut bf, mut bi) = swarm_best(fit, np, tid, nthreads, sf, si);
        let mut gn = gen0;
        // Not `bf > target`: a NaN best never counts as having reached the target.
        #[allow(clippy::neg_cmp_op_on_partial_ord)]
        while gn < gens && !(bf <= target) {
            gn += 1;
            let mut pass = 0;
            while pass < passes {
                let i0 = pass * groups + my_group;
                let active = i0 < np;
                let i = if active { i0 } else { np - 1 };
                let row = i as usize * st;
                // Every group builds and evaluates an offspring (the lanes' shuffles need
                // the whole warp); the elite's group then writes the old best instead.
                let elite = i == 0;
                let sub = subsequence(pstream, i);
                let words = |slot: u32| block_words(key, sub, block(gn, slot));
                let plan = plan(
                    &params,
                    np,
                    dim,
                    &words(SELECT_SLOT),
                    &words(DECIDE_SLOT),
                    || words(BITS_SLOT),
                    |k| *fit.add(k as usize),
                );
                let mut ev = Eval::<T>::new(&o);
                let mut c = 0;
                while c < nr {
                    let (j0, n) = chunk(dim, g, c, gr.lane);
                    let mut cv = [T::ZERO; 4];
                    if n > 0 {
                        let q = j0 / 4;
                        let (l4, h4) =
                            (T::load4(lo.add(j0 as usize)), T::load4(hi.add(j0 as usize)));
                        cv = child_chunk(
                            &params,
                            &plan,
                            bounds,
                            j0,
                            n,
                            &T::load4(x.add(plan.a as usize * st + j0 as usize)),
                            &T::load4(x.add(plan.b as usize * st + j0 as usize)),
                            &l4,
                            &h4,
                            || words(BLEND_SLOT + q),
                            || words(RESAMPLE_SLOT + q),
                        );
                        if elite {
                            cv = T::load4(x.add(bi as usize * st + j0 as usize));
                        }
                        if active {
                            T::store4(y.add(row + j0 as usize), cv);
                        }
                    }
                    ev.round(&gr, &o, cv, j0, n, dim, &o.consts(j0));
                    c += 1;
                }
                let fx = ev.value(&gr, &o, dim);
                if active && gr.lane == 0 {
                    // The elite keeps its value (not re-evaluated).
                    *yfit.add(i as usize) = if elite { bf } else { fx };
                }
                pass += 1;
            }
            _syncthreads();
            // The new generation over the old.
            let mut t = tid as usize;
            while t < np as usize * st {
                *x.add(t) = *y.add(t);
                t += nthreads as usize;
            }
            let mut i = tid;
            while i < np {
                *fit.add(i as usize) = *yfit.add(i as usize);
                i += nthreads;
            }
            _syncthreads();
            (bf, bi) = swarm_best(fit, np, tid, nthreads, sf, si);
        }
        if tid == 0 {
            *gens_done.add(s) = gn;
            *best_f.add(s) = bf;
        }
    }
}
