//! One individual's work by a thread group: the launch's settings ([`Setup`]), the
//! initialisation, the trial (built, written and evaluated in rounds of chunks), the
//! draws amortised over a group ([`DrawCache`]), and the evaluation kernels' body.

use super::*;

/// The running state of one group's canonical evaluation across rounds.
pub(crate) struct Eval<T> {
    acc: Acc<T>,
    carry_last: T,
    carry_sum: T,
}

impl<T: LaneReal> Eval<T> {
    #[inline(always)]
    pub(crate) fn new<O: LaneObjective<T>>(o: &O) -> Self {
        Eval {
            acc: o.identity(),
            carry_last: T::ZERO,
            carry_sum: T::ZERO,
        }
    }
    /// Adds one round's chunk `v` (lane-owned components from `j0`, `n` of them). The
    /// prefix `base` is the group's scan of the lanes' totals of plain components.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn round<O: LaneObjective<T>>(
        &mut self,
        gr: &Group,
        o: &O,
        v: [T; 4],
        j0: u32,
        n: u32,
        dim: u32,
        kc: &[T; 4],
    ) {
        let prev = if o.needs_prev() {
            let up = gr.up(v[3], 1);
            if gr.lane == 0 { self.carry_last } else { up }
        } else {
            T::ZERO
        };
        let mut li = LaneIn {
            v,
            j0,
            n,
            prev,
            base: T::ZERO,
        };
        if o.needs_prefix() {
            let (excl, total) = gr.scan_exclusive(lane_total(&li));
            li.base = self.carry_sum + excl;
            self.carry_sum = self.carry_sum + total;
        }
        o.accumulate(&mut self.acc, &li, dim, kc);
        if o.needs_prev() {
            self.carry_last = gr.idx(v[3], gr.g - 1);
        }
    }
    #[inline(always)]
    pub(crate) fn value<O: LaneObjective<T>>(&self, gr: &Group, o: &O, dim: u32) -> T {
        o.finish(gr.combine(self.acc, o), dim)
    }
}

/// Launch-wide settings, as the host passes them.
/// `O` is the objective the kernel evaluates: a built-in function (its code and formula
/// from the launch) or, in the separable family, the linked module's separable form.
#[derive(Clone, Copy)]
pub(crate) struct Setup<T, O = BuiltinObjective> {
    pub(crate) obj: O,
    pub(crate) tp: TrialParams<T>,
    pub(crate) np: u32,
    pub(crate) stride: u32,
}

impl<T: LaneReal, O> Setup<T, O> {
    /// The same settings with the objective `obj`.
    #[inline(always)]
    pub(crate) fn with_objective<P>(self, obj: P) -> Setup<T, P> {
        Setup {
            obj,
            tp: self.tp,
            np: self.np,
            stride: self.stride,
        }
    }
}

impl<T: LaneReal> Setup<T> {
    // The kernels' scalar arguments, one each: the entry points forward them as received.
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub(crate) fn new(
        function: u32,
        formula: u32,
        strategy: u32,
        crossover: u32,
        bounds: u32,
        dim: u32,
        np: u32,
        f: T,
        cr: T,
        variant: u32,
    ) -> Self {
        // Unknown codes cannot come from the host's validated jobs; fall back rather
        // than trap.
        Setup {
            obj: BuiltinObjective {
                f: Function::from_u32(function).unwrap_or(Function::Sphere),
                formula: Formula::from_u32(formula).unwrap_or(Formula::Exact),
            },
            tp: TrialParams {
                strategy: Strategy::from_u32(strategy).unwrap_or(Strategy::Thesis),
                crossover: Crossover::from_u32(crossover).unwrap_or(Crossover::Binomial),
                bounds: BoundPolicy::from_u32(bounds).unwrap_or(BoundPolicy::InitOnly),
                f,
                cr,
                dim,
                variant: ThesisVariant::from_bits(variant).unwrap_or(ThesisVariant::DEFAULT),
            },
            np,
            stride: stride(dim),
        }
    }
}

#[inline(always)]
pub(crate) fn row<T>(a: *mut T, b: *mut T, flag: u32, i: u32, stride: u32) -> *mut T {
    let base = if flag == 0 { a } else { b };
    // SAFETY (of the callers' use): i < np and rows are np × stride long.
    unsafe { base.add((i * stride) as usize) }
}

/// Initialises individual `i` into buffer `a` and returns its value (every lane).
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(crate) unsafe fn init_one<T: LaneReal, O: LaneObjective<T>>(
    s: &Setup<T, O>,
    gr: &Group,
    key: [u32; 2],
    pstream: u32,
    i: u32,
    active: bool,
    lo: *const T,
    hi: *const T,
    a: *mut T,
    kc0: &[T; 4],
) -> T {
    let dim = s.tp.dim;
    let sub = subsequence(pstream, i);
    let mut ev = Eval::<T>::new(&s.obj);
    let nr = rounds(dim);
    let mut c = 0;
    while c < nr {
        let (j0, n) = chunk(dim, gr.g, c, gr.lane);
        let mut v = [T::ZERO; 4];
        if n > 0 {
            let u = block_words(key, sub, block(0, j0 / 4));
            // SAFETY: j0 + 4 ≤ stride; bounds arrays are stride long.
            let (l4, h4) =
                unsafe { (T::load4(lo.add(j0 as usize)), T::load4(hi.add(j0 as usize))) };
            v = init_chunk(&u, n, &l4, &h4);
            if active {
                // SAFETY: row i of buffer a, chunk j0.
                unsafe { T::store4(a.add((i * s.stride + j0) as usize), v) };
            }
        }
        let kc = if c == 0 { *kc0 } else { s.obj.consts(j0) };
        ev.round(gr, &s.obj, v, j0, n, dim, &kc);
        c += 1;
    }
    ev.value(gr, &s.obj, dim)
}

/// Builds, writes (into the spare buffer) and evaluates individual `i`'s trial of
/// generation `g`. Returns the trial's value (every lane) and whether it was accepted.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(crate) unsafe fn trial_one<T: LaneReal, O: LaneObjective<T>>(
    s: &Setup<T, O>,
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
    fit_i: T,
    d: &Draws,
    fl: &[u32; 6],
    kc0: &[T; 4],
) -> (T, bool) {
    let ndraw = s.tp.strategy.draws();
    let fi = fl[5];
    let xi_row = row(a, b, fi, i, s.stride);
    let spare = row(a, b, fi ^ 1, i, s.stride);
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
    // SAFETY: the rows are rows of the population (the spare one read by nobody this
    // generation), as `trial_rows` asks.
    unsafe {
        trial_rows(
            s,
            gr,
            key,
            pstream,
            g,
            i,
            active,
            lo,
            hi,
            &RowPointers {
                xi: xi_row,
                drawn: rrows,
            },
            best_row,
            spare,
            fit_i,
            d.jrand,
            kc0,
        )
    }
}

/// Where [`trial_rows`] finds a lane's chunks of x_i and of the drawn rows.
pub(crate) trait RowSource<T: LaneReal> {
    /// The lane's chunk of x_i that starts at component `off`.
    ///
    /// # Safety
    /// `off` is the first component of one of the lane's chunks of the individual the
    /// source was made for, as the source's maker promises it.
    unsafe fn xi(&self, off: usize) -> [T; 4];
    /// The lane's chunk of drawn row `k` (`k <` the strategy's draws) at `off`.
    ///
    /// # Safety
    /// As [`RowSource::xi`].
    unsafe fn drawn(&self, k: usize, off: usize) -> [T; 4];
}

/// The rows themselves: x_i and the drawn rows, each `stride` values.
pub(crate) struct RowPointers<T> {
    pub(crate) xi: *const T,
    pub(crate) drawn: [*mut T; 5],
}

impl<T: LaneReal> RowSource<T> for RowPointers<T> {
    #[inline(always)]
    unsafe fn xi(&self, off: usize) -> [T; 4] {
        // SAFETY: the row holds `stride ≥ off + 4` values (the caller's contract).
        unsafe { T::load4(self.xi.add(off)) }
    }
    #[inline(always)]
    unsafe fn drawn(&self, k: usize, off: usize) -> [T; 4] {
        // SAFETY: as above.
        unsafe { T::load4(self.drawn[k].add(off)) }
    }
}

/// [`trial_one`] from its rows: builds individual `i`'s trial of generation `g` from
/// x_i and the drawn rows (the lane's chunks of them from `rows`) and the best row,
/// writes it to `spare` (every round of a row longer than one round, else only when
/// accepted) and evaluates it. Returns the trial's value (every lane) and whether it
/// was accepted.
///
/// # Safety
/// `rows` serves the lane's chunks of individual `i`'s rows (see [`RowSource`]);
/// `best_row` addresses `stride` readable values, `spare` `stride` writable values read
/// by no other thread until the generation's barrier; `lo` and `hi` are `stride` long.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(crate) unsafe fn trial_rows<T: LaneReal, O: LaneObjective<T>>(
    s: &Setup<T, O>,
    gr: &Group,
    key: [u32; 2],
    pstream: u32,
    g: u32,
    i: u32,
    active: bool,
    lo: *const T,
    hi: *const T,
    rows: &impl RowSource<T>,
    best_row: *const T,
    spare: *mut T,
    fit_i: T,
    jrand: u32,
    kc0: &[T; 4],
) -> (T, bool) {
    let dim = s.tp.dim;
    let strat = s.tp.strategy;
    let ndraw = strat.draws();
    let sub = subsequence(pstream, i);
    let nr = rounds(dim);
    // Exponential crossover's run length needs every lane's uniforms first.
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
    let mut ev = Eval::<T>::new(&s.obj);
    let mut last = [T::ZERO; 4];
    let mut c = 0;
    while c < nr {
        let (j0, n) = chunk(dim, gr.g, c, gr.lane);
        let mut v = [T::ZERO; 4];
        if n > 0 {
            let off = j0 as usize;
            let u = s.tp.variant.lambda_words(key, sub, g, j0);
            // SAFETY: every row pointer addresses a row of `stride ≥ j0 + 4` values.
            let (xi, best, l4, h4) = unsafe {
                (
                    if strat.uses_current() || strat.crosses() {
                        rows.xi(off)
                    } else {
                        [T::ZERO; 4]
                    },
                    if strat.uses_best() {
                        T::load4(best_row.add(off))
                    } else {
                        [T::ZERO; 4]
                    },
                    if matches!(s.tp.bounds, BoundPolicy::InitOnly) {
                        [T::ZERO; 4]
                    } else {
                        T::load4(lo.add(off))
                    },
                    if matches!(s.tp.bounds, BoundPolicy::InitOnly) {
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
                    r[k] = unsafe { rows.drawn(k, off) };
                }
                k += 1;
            }
            v = trial_chunk(
                &s.tp,
                j0,
                n,
                &xi,
                &r,
                &best,
                &l4,
                &h4,
                &u,
                jrand,
                run,
                || block_words(key, sub, block(g, RESAMPLE_SLOT + j0 / 4)),
            );
            if nr > 1 && active {
                // SAFETY: the spare row of i is read by nobody this generation.
                unsafe { T::store4(spare.add(off), v) };
            }
        }
        let kc = if c == 0 { *kc0 } else { s.obj.consts(j0) };
        ev.round(gr, &s.obj, v, j0, n, dim, &kc);
        last = v;
        c += 1;
    }
    let ft = ev.value(gr, &s.obj, dim);
    let acc = accepts(ft, fit_i);
    if nr == 1 && acc && active {
        let (j0, n) = chunk(dim, gr.g, 0, gr.lane);
        if n > 0 {
            // SAFETY: as above.
            unsafe { T::store4(spare.add(j0 as usize), last) };
        }
    }
    (ft, acc)
}

/// Index draws, amortised over a group: every `g` passes, lane `l` draws for the
/// individual of pass `base + l`; pass `p` then takes lane `p − base`'s draws.
/// The flags of the drawn rows (and of x_i) come with them, so that the row loads
/// need not wait on a flag load.
#[derive(Clone, Copy)]
pub(crate) struct DrawCache {
    pub(crate) pre: Draws,
    pub(crate) flags: [u32; 6],
}

impl DrawCache {
    /// An empty cache: the first pass of a generation fills it.
    #[inline(always)]
    pub(crate) const fn new() -> Self {
        DrawCache {
            pre: Draws {
                r: [0; 5],
                jrand: 0,
            },
            flags: [0; 6],
        }
    }

    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    pub(crate) fn get<T: LaneReal, O>(
        &mut self,
        s: &Setup<T, O>,
        gr: &Group,
        key: [u32; 2],
        pstream: u32,
        g: u32,
        pass: u32,
        individual_of_pass: impl Fn(u32) -> u32,
        flags: *const u32,
    ) -> (Draws, [u32; 6]) {
        let slot = pass & (gr.g - 1);
        let ndraw = s.tp.strategy.draws();
        let jdim = if s.tp.strategy.crosses() { s.tp.dim } else { 0 };
        if slot == 0 {
            let i = individual_of_pass(pass + gr.lane).min(s.np - 1);
            self.pre = s.tp.variant.draws(key, pstream, i, g, s.np, ndraw, jdim);
            // SAFETY: i and the drawn indices are < np, the flags' length.
            unsafe {
                let mut k = 0;
                while k < 5 {
                    if k < ndraw as usize {
                        self.flags[k] = *flags.add(self.pre.r[k] as usize);
                    }
                    k += 1;
                }
                self.flags[5] = *flags.add(i as usize);
            }
        }
        let mut d = Draws {
            r: [0; 5],
            jrand: 0,
        };
        let mut fl = [0u32; 6];
        let mut k = 0;
        while k < 5 {
            if k < ndraw as usize {
                d.r[k] = gr.idx_u32(self.pre.r[k], slot);
                fl[k] = gr.idx_u32(self.flags[k], slot);
            }
            k += 1;
        }
        fl[5] = gr.idx_u32(self.flags[5], slot);
        if jdim > 0 {
            d.jrand = gr.idx_u32(self.pre.jrand, slot);
        }
        (d, fl)
    }
}

#[inline(always)]
pub(crate) unsafe fn evaluate_rows<T: LaneReal>(p: EvalParams<T>) {
    let EvalParams {
        x,
        out,
        function,
        formula,
        dim,
        n,
    } = p;
    // SAFETY: the host passes buffers as the kernels above require.
    unsafe {
        let o = BuiltinObjective {
            f: Function::from_u32(function).unwrap_or(Function::Sphere),
            formula: Formula::from_u32(formula).unwrap_or(Formula::Exact),
        };
        let g = group_width(dim);
        let tid = _block_idx_x() * _block_dim_x() + _thread_idx_x();
        let gr = Group::new(g, _thread_idx_x() & 31);
        let groups = _grid_dim_x() * _block_dim_x() / g;
        let mut i0 = tid / g;
        let st = stride(dim);
        let passes = n.div_ceil(groups);
        let mut pass = 0;
        while pass < passes {
            let active = i0 < n;
            let i = if active { i0 } else { n - 1 };
            let mut ev = Eval::<T>::new(&o);
            let mut c = 0;
            while c < rounds(dim) {
                let (j0, cnt) = chunk(dim, g, c, gr.lane);
                let v = if cnt > 0 {
                    T::load4(x.add((i * st + j0) as usize))
                } else {
                    [T::ZERO; 4]
                };
                ev.round(&gr, &o, v, j0, cnt, dim, &o.consts(j0));
                c += 1;
            }
            let val = ev.value(&gr, &o, dim);
            if active && gr.lane == 0 {
                *out.add(i as usize) = val;
            }
            i0 += groups;
            pass += 1;
        }
    }
}
