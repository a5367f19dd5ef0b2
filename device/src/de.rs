//! Differential Evolution's operators, one component (or one lane's chunk) at a time,
//! and the layout of the random streams both engines draw from.
//!
//! # Random streams
//! Every number comes from Philox4x32-10 keyed by the run's seed. Individual `i` of the
//! population with stream number `p` reads subsequence `p·2³² + i`; generation `g` of it
//! reads blocks `g·2³² + slot` (generation 0 is the initialisation):
//! - init, slot `q`: uniforms for components `4q .. 4q+4`;
//! - slot 0: words for the first four index draws; slot 1: word 0 for the fifth draw,
//!   word 1 for `jrand` (the component crossover always takes; exponential crossover's start);
//! - slot `2 + q`: the per-component uniforms of components `4q .. 4q+4` (the thesis's λ,
//!   or the crossover test);
//! - slot `2³¹ + q`: the uniforms for resampling components `4q .. 4q+4` out of bounds;
//! - slot `2³⁰ + k`: the thesis strategy's rejection draws, when a
//!   [`ThesisVariant`] asks for them ([`crate::variant`]).
//!
//! A lane that owns the chunk of components from `4q` thus needs exactly one Philox block
//! per round for its uniforms.

use crate::philox::{below, block_words};
use crate::real::Real;
use crate::variant::ThesisVariant;

/// Mutation strategies.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Strategy {
    /// The thesis's variant (eq. 3.17): `x_i + λ(x_r1 − x_r2) + (1 − λ)(x_best − x_i)`,
    /// λ ∈ (0, 1] fresh per component, no crossover.
    Thesis = 0,
    /// DE/rand/1: `x_r1 + F(x_r2 − x_r3)`.
    Rand1 = 1,
    /// DE/best/1: `x_best + F(x_r1 − x_r2)`.
    Best1 = 2,
    /// DE/current-to-best/1: `x_i + F(x_best − x_i) + F(x_r1 − x_r2)`.
    CurrentToBest1 = 3,
    /// DE/rand/2: `x_r1 + F(x_r2 − x_r3) + F(x_r4 − x_r5)`.
    Rand2 = 4,
    /// DE/best/2: `x_best + F(x_r1 − x_r2) + F(x_r3 − x_r4)`.
    Best2 = 5,
    /// jDE (Brest et al. 2006): rand/1/bin with F and Cr self-adapted per individual.
    Jde = 6,
    /// JADE (Zhang & Sanderson 2009): current-to-pbest/1/bin with an optional archive and
    /// μ_F, μ_Cr adaptation.
    Jade = 7,
    /// SHADE (Tanabe & Fukunaga 2013): JADE's mutation with a success-history memory.
    Shade = 8,
    /// L-SHADE (Tanabe & Fukunaga 2014): SHADE with linear population size reduction.
    LShade = 9,
    /// jSO (Brest, Maučec & Bošković 2017): L-SHADE with current-to-pbest-w/1 and its
    /// p, F and Cr schedules.
    Jso = 10,
}

impl Strategy {
    /// The classic strategies: both engines run them.
    pub const ALL: [Strategy; 6] = [
        Strategy::Thesis,
        Strategy::Rand1,
        Strategy::Best1,
        Strategy::CurrentToBest1,
        Strategy::Rand2,
        Strategy::Best2,
    ];

    /// The adaptive strategies (see [`crate::adaptive`]), on both engines.
    pub const ADAPTIVE: [Strategy; 5] = [
        Strategy::Jde,
        Strategy::Jade,
        Strategy::Shade,
        Strategy::LShade,
        Strategy::Jso,
    ];

    pub fn from_u32(v: u32) -> Option<Strategy> {
        Self::ALL
            .get(v as usize)
            .or_else(|| Self::ADAPTIVE.get((v as usize).wrapping_sub(Self::ALL.len())))
            .copied()
    }

    /// Is it one of [`Strategy::ADAPTIVE`]?
    #[inline(always)]
    pub const fn is_adaptive(self) -> bool {
        self as u32 >= Strategy::Jde as u32
    }

    /// Does it mutate with current-to-pbest (JADE, SHADE, L-SHADE, jSO)?
    #[inline(always)]
    pub const fn uses_pbest(self) -> bool {
        matches!(
            self,
            Strategy::Jade | Strategy::Shade | Strategy::LShade | Strategy::Jso
        )
    }

    /// How many distinct random individuals (other than i) one trial needs.
    #[inline(always)]
    pub const fn draws(self) -> u32 {
        match self {
            Strategy::Thesis | Strategy::Best1 | Strategy::CurrentToBest1 => 2,
            Strategy::Jade | Strategy::Shade | Strategy::LShade | Strategy::Jso => 2,
            Strategy::Rand1 | Strategy::Jde => 3,
            Strategy::Best2 => 4,
            Strategy::Rand2 => 5,
        }
    }

    /// Does the strategy use crossover (all but the thesis's)?
    #[inline(always)]
    pub const fn crosses(self) -> bool {
        !matches!(self, Strategy::Thesis)
    }

    /// Does it read the best individual (for the current-to-pbest strategies: a p-best)?
    #[inline(always)]
    pub const fn uses_best(self) -> bool {
        matches!(
            self,
            Strategy::Thesis | Strategy::Best1 | Strategy::CurrentToBest1 | Strategy::Best2
        ) || self.uses_pbest()
    }

    /// Does it read x_i?
    #[inline(always)]
    pub const fn uses_current(self) -> bool {
        matches!(self, Strategy::Thesis | Strategy::CurrentToBest1) || self.uses_pbest()
    }
}

/// Crossover between the mutant and x_i (classic strategies only).
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Crossover {
    /// Each component from the mutant with probability Cr; `jrand` always.
    Binomial = 0,
    /// A cyclic run of L components from `jrand`, L = 1 + the number of leading
    /// uniforms ≤ Cr (at most D).
    Exponential = 1,
}

impl Crossover {
    pub fn from_u32(v: u32) -> Option<Crossover> {
        [Crossover::Binomial, Crossover::Exponential]
            .get(v as usize)
            .copied()
    }
}

/// What happens to trial components outside the initial domain.
#[repr(u32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BoundPolicy {
    /// The thesis: the domain only seeds the population; trials go anywhere.
    InitOnly = 0,
    /// Clamp into [lo, hi].
    Clip = 1,
    /// Mirror at the violated bound (then clamp, for points more than a width out).
    Reflect = 2,
    /// Draw the component afresh, uniformly in the domain.
    Resample = 3,
    /// Halfway between the violated bound and the parent's component: the rule of JADE,
    /// SHADE, L-SHADE and jSO (e.g. Tanabe & Fukunaga 2014, §II.B).
    Midpoint = 4,
}

impl BoundPolicy {
    pub fn from_u32(v: u32) -> Option<BoundPolicy> {
        [
            BoundPolicy::InitOnly,
            BoundPolicy::Clip,
            BoundPolicy::Reflect,
            BoundPolicy::Resample,
            BoundPolicy::Midpoint,
        ]
        .get(v as usize)
        .copied()
    }
}

/// The slot of the resampling uniforms of chunk `q`.
pub const RESAMPLE_SLOT: u32 = 0x8000_0000;
/// The first slot of the per-component uniforms.
pub const COMPONENT_SLOT: u32 = 2;

/// The subsequence of individual `i` in population stream `p`.
#[inline(always)]
pub fn subsequence(p: u32, i: u32) -> u64 {
    ((p as u64) << 32) | i as u64
}

/// The Philox block of `slot` in generation `g`.
#[inline(always)]
pub fn block(g: u32, slot: u32) -> u64 {
    ((g as u64) << 32) | slot as u64
}

/// The draws of one individual in one generation: random indices and `jrand`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Draws {
    pub r: [u32; 5],
    pub jrand: u32,
}

/// Draws `count` (≤ 5) indices in `0..n`, distinct from each other and from `i`, and
/// `jrand` in `0..dim` (pass dim = 0 when no crossover uses it: slot 1 is then not
/// drawn unless a fifth index is). No rejection: the m-th draw is uniform over the `n − 1 − m`
/// indices still free, mapped past the taken ones in ascending order.
#[inline(always)]
pub fn draw_indices(key: [u32; 2], p: u32, i: u32, g: u32, n: u32, count: u32, dim: u32) -> Draws {
    let sub = subsequence(p, i);
    let w0 = block_words(key, sub, block(g, 0));
    // Slot 1 only when a fifth index or jrand (crossover) is used; `count` and `dim`
    // tell: the thesis strategy (2 draws, no crossover) is called with dim = 0.
    let w1 = if count > 4 || dim > 0 {
        block_words(key, sub, block(g, 1))
    } else {
        [0; 4]
    };
    let words = [w0[0], w0[1], w0[2], w0[3], w1[0]];
    // Taken indices, kept sorted; slot 0 holds i.
    let mut taken = [u32::MAX; 6];
    taken[0] = i;
    let mut r = [0u32; 5];
    let mut m = 0u32;
    while m < 5 {
        if m < count {
            let mut t = below(words[m as usize], n - 1 - m);
            let mut k = 0;
            while k < 6 {
                if t >= taken[k] {
                    t += 1;
                }
                k += 1;
            }
            r[m as usize] = t;
            // Insert t: the last place is always free (u32::MAX); t sinks into order.
            taken[5] = t;
            let mut k = 5;
            while k >= 1 {
                if taken[k - 1] > taken[k] {
                    taken.swap(k - 1, k);
                }
                k -= 1;
            }
        }
        m += 1;
    }
    Draws {
        r,
        jrand: if dim > 0 { below(w1[1], dim) } else { 0 },
    }
}

/// The settings one trial needs.
#[derive(Clone, Copy, Debug)]
pub struct TrialParams<T> {
    pub strategy: Strategy,
    pub crossover: Crossover,
    pub bounds: BoundPolicy,
    pub f: T,
    pub cr: T,
    pub dim: u32,
    /// How the thesis strategy's λ and mutation are computed (the default for every
    /// other strategy).
    pub variant: ThesisVariant,
}

/// The mutant's component from the rows' components. For the adaptive strategies, jDE
/// is rand/1 and the current-to-pbest ones read `best` as the p-best, with F_w = F (jSO's
/// own F_w and the archive row are [`crate::adaptive::pbest_trial_chunk`]'s).
#[inline(always)]
pub fn mutate<T: Real>(s: Strategy, f: T, xi: T, r: &[T; 5], best: T, lambda: T) -> T {
    mutate_in(ThesisVariant::DEFAULT, s, f, xi, r, best, lambda)
}

/// [`mutate`], with the thesis strategy's arithmetic of variant `v`
/// ([`ThesisVariant::mutate`]).
#[inline(always)]
pub fn mutate_in<T: Real>(
    v: ThesisVariant,
    s: Strategy,
    f: T,
    xi: T,
    r: &[T; 5],
    best: T,
    lambda: T,
) -> T {
    match s {
        Strategy::Jde => r[0] + f * (r[1] - r[2]),
        Strategy::Jade | Strategy::Shade | Strategy::LShade | Strategy::Jso => {
            xi + f * (best - xi) + f * (r[0] - r[1])
        }
        Strategy::Thesis => v.mutate(xi, r[0], r[1], best, lambda),
        Strategy::Rand1 => r[0] + f * (r[1] - r[2]),
        Strategy::Best1 => best + f * (r[0] - r[1]),
        Strategy::CurrentToBest1 => xi + f * (best - xi) + f * (r[0] - r[1]),
        Strategy::Rand2 => r[0] + f * (r[1] - r[2]) + f * (r[3] - r[4]),
        Strategy::Best2 => best + f * (r[0] - r[1]) + f * (r[2] - r[3]),
    }
}

/// The first component index `k < dim − 1` (from `j0`, four at most) whose uniform
/// exceeds Cr, or `u32::MAX`: one lane's part of exponential crossover's length.
#[inline(always)]
pub fn first_exceeding<T: Real>(cr: T, u: &[u32; 4], j0: u32, n: u32, dim: u32) -> u32 {
    let mut k = 4u32;
    let mut first = u32::MAX;
    while k > 0 {
        k -= 1;
        let j = j0 + k;
        if k < n && j + 1 < dim && T::uniform(u[k as usize]) > cr {
            first = j;
        }
    }
    first
}

/// Exponential crossover's run length from the group-wide minimum of
/// [`first_exceeding`].
#[inline(always)]
pub fn run_length(first: u32, dim: u32) -> u32 {
    if first == u32::MAX { dim } else { first + 1 }
}

/// One lane's chunk of the trial vector: mutation, crossover and bounds.
///
/// `u` are the chunk's component words (slot `2 + j0/4`), `resample` gives the chunk's
/// resampling words when a component leaves the domain under [`BoundPolicy::Resample`].
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub fn trial_chunk<T: Real>(
    tp: &TrialParams<T>,
    j0: u32,
    n: u32,
    xi: &[T; 4],
    r: &[[T; 4]; 5],
    best: &[T; 4],
    lo: &[T; 4],
    hi: &[T; 4],
    u: &[u32; 4],
    jrand: u32,
    run: u32,
    resample: impl FnOnce() -> [u32; 4],
) -> [T; 4] {
    let mut v = [T::ZERO; 4];
    let mut out = false;
    let mut k = 0usize;
    while k < 4 {
        // In f32 every entry is computed and the ones past `n` are dropped: a select on
        // the GPU, where a branch per component cost its convergence barriers.
        let live = (k as u32) < n;
        if live || T::STRAIGHT {
            let j = j0 + k as u32;
            let uk = T::uniform(u[k]);
            let rk = [r[0][k], r[1][k], r[2][k], r[3][k], r[4][k]];
            // λ in the variant's range (the default's is `uk` itself).
            let lambda = tp.variant.lambda(u[k]);
            let m = mutate_in(tp.variant, tp.strategy, tp.f, xi[k], &rk, best[k], lambda);
            let take = if !tp.strategy.crosses() {
                true
            } else {
                match tp.crossover {
                    Crossover::Binomial => uk <= tp.cr || j == jrand,
                    Crossover::Exponential => {
                        let off = if j >= jrand {
                            j - jrand
                        } else {
                            j + tp.dim - jrand
                        };
                        off < run
                    }
                }
            };
            let c = confine(tp.bounds, if take { m } else { xi[k] }, lo[k], hi[k], xi[k]);
            out |= live & (tp.bounds == BoundPolicy::Resample) & !(c >= lo[k] && c <= hi[k]);
            v[k] = if live { c } else { T::ZERO };
        }
        k += 1;
    }
    if out {
        resample_chunk(&mut v, n, lo, hi, &resample());
    }
    v
}

/// One trial component `c` under bound policy `b` (`xi`: the parent's component).
/// [`BoundPolicy::Resample`] leaves it as it is: see [`resample_chunk`].
#[inline(always)]
pub fn confine<T: Real>(b: BoundPolicy, c: T, lo: T, hi: T, xi: T) -> T {
    match b {
        BoundPolicy::InitOnly | BoundPolicy::Resample => c,
        BoundPolicy::Clip => c.max(lo).min(hi),
        BoundPolicy::Reflect => {
            let c = if c < lo {
                lo + (lo - c)
            } else if c > hi {
                hi - (c - hi)
            } else {
                c
            };
            c.max(lo).min(hi)
        }
        // Halfway between the bound and the parent, written with differences that the
        // domain's finite width bounds (`(lo + xi)/2` overflows for huge bounds).
        BoundPolicy::Midpoint => {
            if c < lo {
                lo + (xi - lo) / T::of(2.0)
            } else if c > hi {
                hi - (hi - xi) / T::of(2.0)
            } else {
                c
            }
        }
    }
}

/// Draws the components of `v` (the first `n`) outside the domain afresh from the
/// chunk's resampling words `w`.
#[inline(always)]
pub fn resample_chunk<T: Real>(v: &mut [T; 4], n: u32, lo: &[T; 4], hi: &[T; 4], w: &[u32; 4]) {
    let mut k = 0usize;
    while k < 4 {
        if (k as u32) < n && !(v[k] >= lo[k] && v[k] <= hi[k]) {
            v[k] = in_domain(lo[k], hi[k], T::uniform(w[k]));
        }
        k += 1;
    }
}

/// The point at `u` ∈ (0, 1] of [lo, hi]: `lo (1 − u) + hi u`, which never forms the
/// width `hi − lo` (that overflows for bounds near the largest finite value, such as
/// ±1e308 in f64), clamped into [lo, hi] against the last bit of rounding. `u = 1` gives
/// `hi` exactly.
#[inline(always)]
pub fn in_domain<T: Real>(lo: T, hi: T, u: T) -> T {
    (lo * (T::ONE - u) + hi * u).max(lo).min(hi)
}

/// One lane's chunk of an initial individual: [`in_domain`] at u ∈ (0, 1].
#[inline(always)]
pub fn init_chunk<T: Real>(u: &[u32; 4], n: u32, lo: &[T; 4], hi: &[T; 4]) -> [T; 4] {
    let mut v = [T::ZERO; 4];
    let mut k = 0usize;
    while k < 4 {
        if (k as u32) < n {
            v[k] = in_domain(lo[k], hi[k], T::uniform(u[k]));
        }
        k += 1;
    }
    v
}

/// Greedy selection: the trial replaces x_i only if strictly better (a NaN trial never does).
#[inline(always)]
pub fn accepts<T: Real>(trial: T, current: T) -> bool {
    trial < current || (current.is_nan() && !trial.is_nan())
}

/// Is `(fa, ia)` a better best than `(fb, ib)`? Lower value, then lower index; NaN last.
#[inline(always)]
pub fn better<T: Real>(fa: T, ia: u32, fb: T, ib: u32) -> bool {
    if fa.is_nan() {
        return fb.is_nan() && ia < ib;
    }
    fb.is_nan() || fa < fb || (fa == fb && ia < ib)
}

/// [`better`]'s order on single-precision pairs as one integer: `(fa, ia)` is better
/// than `(fb, ib)` exactly when `best_key(fa, ia) < best_key(fb, ib)`, so a grid can find
/// its best with one atomic minimum (or a maximum of the complement). The high word
/// orders the values (−0 counted as +0, since `better` finds them equal; every NaN
/// above +∞), the low word is the index.
#[inline(always)]
pub fn best_key(f: f32, i: u32) -> u64 {
    const SIGN: u32 = 0x8000_0000;
    let hi = if f.is_nan() {
        u32::MAX
    } else {
        // −0 + 0 = +0; every other value is unchanged.
        let b = (f + 0.0).to_bits();
        if b & SIGN != 0 { !b } else { b | SIGN }
    };
    ((hi as u64) << 32) | i as u64
}

/// The pair of a [`best_key`]: the index, and the value with −0 as +0 and NaN as the
/// default NaN (the bits of any other value unchanged).
#[inline(always)]
pub fn key_best(k: u64) -> (f32, u32) {
    const SIGN: u32 = 0x8000_0000;
    let hi = (k >> 32) as u32;
    let f = if hi == u32::MAX {
        f32::NAN
    } else if hi & SIGN != 0 {
        f32::from_bits(hi & !SIGN)
    } else {
        f32::from_bits(!hi)
    };
    (f, k as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The key orders pairs as `better` does, and gives the pair back.
    #[test]
    fn the_best_key_orders_as_better() {
        let vals = [
            f32::NEG_INFINITY,
            -3.4e38,
            -1.0,
            -1.0e-45,
            -0.0,
            0.0,
            1.0e-45,
            1.5e-38,
            0.25,
            1.0,
            3.4e38,
            f32::INFINITY,
            f32::NAN,
            -f32::NAN,
            f32::from_bits(0x7fc0_1234),
        ];
        let idx = [0u32, 1, 7, u32::MAX - 1, u32::MAX];
        for &fa in &vals {
            for &ia in &idx {
                let (g, j) = key_best(best_key(fa, ia));
                assert_eq!(j, ia);
                if fa.is_nan() {
                    assert!(g.is_nan());
                } else {
                    assert_eq!(g.to_bits(), (fa + 0.0).to_bits(), "{fa:e}");
                }
                for &fb in &vals {
                    for &ib in &idx {
                        assert_eq!(
                            better(fa, ia, fb, ib),
                            best_key(fa, ia) < best_key(fb, ib),
                            "({fa:e}, {ia}) against ({fb:e}, {ib})"
                        );
                    }
                }
            }
        }
    }

    /// The kernels' reductions start from (NaN, u32::MAX): over any values that gives
    /// the CPU engine's best (a scan from index 0): a finite or infinite value before
    /// any NaN, the lowest index among equals, index 0 when every value is NaN.
    #[test]
    fn the_nan_identity_gives_the_cpu_best() {
        let n = f64::NAN;
        let i = f64::INFINITY;
        let cases: [&[f64]; 6] = [
            &[n, n, n],
            &[n, 3.0, n, 1.0],
            &[i, n, i],
            &[n, i, n],
            &[2.0, 2.0, n],
            &[n],
        ];
        for fit in cases {
            let (mut lf, mut li) = (f64::NAN, u32::MAX);
            for (k, &f) in fit.iter().enumerate() {
                if better(f, k as u32, lf, li) {
                    lf = f;
                    li = k as u32;
                }
            }
            let mut b = 0;
            for k in 1..fit.len() {
                if better(fit[k], k as u32, fit[b], b as u32) {
                    b = k;
                }
            }
            assert_eq!(li as usize, b, "{fit:?}");
            assert_eq!(lf.to_bits(), fit[b].to_bits(), "{fit:?}");
        }
    }
    use crate::philox::key_of;

    #[test]
    fn indices_are_distinct_in_range_and_spread() {
        let key = key_of(42);
        for &n in &[3u32, 4, 6, 7, 50] {
            for count in 1..=5u32 {
                if n < count + 1 {
                    continue;
                }
                let mut hits = vec![0u32; n as usize];
                for g in 1..200u32 {
                    for i in 0..n {
                        let d = draw_indices(key, 3, i, g, n, count, 9);
                        assert!(d.jrand < 9);
                        let r = &d.r[..count as usize];
                        for (a, &ra) in r.iter().enumerate() {
                            assert!(ra < n && ra != i, "n {n} i {i} r {r:?}");
                            for &rb in &r[a + 1..] {
                                assert_ne!(ra, rb, "n {n} i {i} r {r:?}");
                            }
                            hits[ra as usize] += 1;
                        }
                    }
                }
                let mean = hits.iter().sum::<u32>() as f64 / n as f64;
                for &h in &hits {
                    assert!(
                        (h as f64 - mean).abs() < 5.0 * mean.sqrt(),
                        "n {n} count {count} {hits:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn thesis_lambda_one_is_a_pure_difference_step() {
        let r = [3.0f64, 1.0, 0.0, 0.0, 0.0];
        assert_eq!(mutate(Strategy::Thesis, 0.5, 10.0, &r, -4.0, 1.0), 12.0);
        // λ → 0 pulls to the best.
        let v = mutate(Strategy::Thesis, 0.5, 10.0, &r, -4.0, 1e-12);
        assert!((v + 4.0).abs() < 1e-9);
    }

    #[test]
    fn bound_policies_keep_trials_inside() {
        let lo = [-1.0f64; 4];
        let hi = [2.0f64; 4];
        let xi = [0.0f64; 4];
        let far = [[50.0f64, -50.0, 1.0, 3.5]; 5];
        for bounds in [
            BoundPolicy::Clip,
            BoundPolicy::Reflect,
            BoundPolicy::Resample,
            BoundPolicy::Midpoint,
        ] {
            let tp = TrialParams {
                strategy: Strategy::Rand1,
                crossover: Crossover::Binomial,
                bounds,
                f: 0.0,
                cr: 1.0,
                dim: 4,
                variant: ThesisVariant::DEFAULT,
            };
            let v = trial_chunk(&tp, 0, 4, &xi, &far, &xi, &lo, &hi, &[7; 4], 0, 4, || {
                [1 << 31; 4]
            });
            for (k, c) in v.iter().enumerate() {
                assert!(*c >= -1.0 && *c <= 2.0, "{bounds:?} {k} {c}");
            }
            match bounds {
                BoundPolicy::Clip => assert_eq!(v, [2.0, -1.0, 1.0, 2.0]),
                BoundPolicy::Reflect => assert_eq!(v, [-1.0, 2.0, 1.0, 0.5]),
                // (hi + 0)/2 = 1, (lo + 0)/2 = −0.5; 1 stays; 3.5 > 2 → 1.
                BoundPolicy::Midpoint => assert_eq!(v, [1.0, -0.5, 1.0, 1.0]),
                _ => assert_eq!(v[2], 1.0),
            }
        }
    }

    #[test]
    fn binomial_crossover_takes_jrand_and_about_cr() {
        let tp = TrialParams {
            strategy: Strategy::Rand1,
            crossover: Crossover::Binomial,
            bounds: BoundPolicy::InitOnly,
            f: 0.5,
            cr: 0.0,
            dim: 4,
            variant: ThesisVariant::DEFAULT,
        };
        let r = [[1.0f64; 4]; 5];
        let v = trial_chunk(
            &tp,
            0,
            4,
            &[0.0; 4],
            &r,
            &[0.0; 4],
            &[0.0; 4],
            &[0.0; 4],
            &[u32::MAX; 4],
            2,
            0,
            || [0; 4],
        );
        assert_eq!(v, [0.0, 0.0, 1.0, 0.0]);
    }

    #[test]
    fn exponential_run_is_cyclic_from_jrand() {
        let tp = TrialParams {
            strategy: Strategy::Rand1,
            crossover: Crossover::Exponential,
            bounds: BoundPolicy::InitOnly,
            f: 0.5,
            cr: 0.5,
            dim: 4,
            variant: ThesisVariant::DEFAULT,
        };
        let r = [[1.0f64; 4]; 5];
        let v = trial_chunk(
            &tp,
            0,
            4,
            &[0.0; 4],
            &r,
            &[0.0; 4],
            &[0.0; 4],
            &[0.0; 4],
            &[0; 4],
            3,
            2,
            || [0; 4],
        );
        assert_eq!(v, [1.0, 0.0, 0.0, 1.0]);
        // first uniform above Cr at k = 1 → run of 2
        let u = [0u32, u32::MAX, 0, 0];
        assert_eq!(run_length(first_exceeding(0.5f64, &u, 0, 4, 4), 4), 2);
        assert_eq!(run_length(first_exceeding(0.5f64, &[0; 4], 0, 4, 4), 4), 4);
    }

    #[test]
    fn initial_points_stay_finite_and_inside_wide_domains() {
        let (lo, hi) = (-f64::MAX, f64::MAX);
        for w in [0u32, 1, 1 << 31, u32::MAX - 1, u32::MAX] {
            let u = f64::uniform(w);
            let v = in_domain(lo, hi, u);
            assert!(v.is_finite() && (lo..=hi).contains(&v), "u {u} v {v}");
            // The old form overflows here.
            assert!(!(lo + u * (hi - lo)).is_finite());
        }
        let v = init_chunk(&[u32::MAX; 4], 4, &[-3e38f32; 4], &[3e38f32; 4]);
        assert!(v.iter().all(|x| x.is_finite() && x.abs() <= 3e38), "{v:?}");
        // u = 1 is the upper bound itself, small u is near the lower one.
        assert_eq!(in_domain(-2.0f32, 5.0, 1.0), 5.0);
        assert!((in_domain(-2.0f64, 5.0, 1e-9) + 2.0).abs() < 1e-8);
        for w in [0u32, 12345, 1 << 30, u32::MAX] {
            let (lo, hi) = (1.0f32, 1.0000001f32);
            let v = in_domain(lo, hi, f32::uniform(w));
            assert!((lo..=hi).contains(&v));
        }
    }

    #[test]
    fn selection_and_ordering() {
        assert!(accepts(1.0f32, 2.0));
        assert!(!accepts(2.0f32, 2.0));
        assert!(!accepts(f32::NAN, 2.0));
        assert!(accepts(1.0f32, f32::NAN));
        assert!(better(1.0f32, 5, 2.0, 0));
        assert!(better(1.0f32, 0, 1.0, 5));
        assert!(!better(f32::NAN, 0, 1.0, 5));
    }
}
