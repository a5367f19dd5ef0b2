//! Adaptive Differential Evolution: the update rules of jDE, JADE, SHADE, L-SHADE and jSO
//! as plain functions that the CPU engine calls and a kernel can call alike.
//!
//! # Papers
//! - jDE: J. Brest, S. Greiner, B. Bošković, M. Mernik, V. Žumer, "Self-adapting control
//!   parameters in differential evolution", IEEE TEVC 10(6), 2006.
//! - JADE: J. Zhang, A. C. Sanderson, "JADE: adaptive differential evolution with optional
//!   external archive", IEEE TEVC 13(5), 2009.
//! - SHADE: R. Tanabe, A. Fukunaga, "Success-history based parameter adaptation for
//!   differential evolution", IEEE CEC 2013.
//! - L-SHADE: R. Tanabe, A. Fukunaga, "Improving the search performance of SHADE using
//!   linear population size reduction", IEEE CEC 2014.
//! - jSO: J. Brest, M. S. Maučec, B. Bošković, "Single objective real-parameter
//!   optimization: algorithm jSO", IEEE CEC 2017.
//!
//! # Random words
//! The adaptive strategies draw from the same Philox streams as the classic ones
//! (individual `i` of population stream `p` reads subsequence `p·2³² + i`; generation `g`
//! reads blocks `g·2³² + slot`, see [`crate::de`]), with a fixed number of words per
//! individual and generation whatever the data:
//! - slot 0: `[r1, r2, r3 or p-best rank, archive slot]` (jDE draws its three indices with
//!   [`crate::de::draw_indices`], as rand/1 does);
//! - slot 1: word 1 is `jrand`, as for the classic strategies;
//! - slots `2 + q`: the binomial crossover's uniforms, as for the classic strategies;
//! - slot [`PARAM_SLOT`]: jDE's `[rand1, rand2, rand3, rand4]`; the others'
//!   `[memory index, Box–Muller u1, Box–Muller u2, SHADE's p_i]`;
//! - slots [`PARAM_SLOT`]` + 1` and `+ 2`: the [`CAUCHY_TRIES`] uniforms of the Cauchy draws
//!   of F (all strategies but jDE).
//!
//! Per individual and generation jDE thus reads 3 blocks (12 words) and the
//! current-to-pbest strategies 5 blocks (20 words), plus the crossover's `⌈D/4⌉` blocks
//! (and a resampling block per chunk under the resampling bound policy). Population-wide
//! draws (deleting archive members when L-SHADE or jSO shrink the archive) read the
//! reserved individual [`POPULATION_INDEX`], block `g·2³² + ⌊t/4⌋` for the t-th deletion.
//!
//! # Variates
//! - Normal (Cr): Box–Muller's cosine branch from two uniforms u1, u2 ∈ (0, 1]:
//!   `z = √(−2 ln u1) · cos(2π u2)`, then `Cr = μ + 0.1 z` clamped to [0, 1].
//! - Cauchy (F): `F = μ + 0.1 tan(π(u − 1/2))` for each of the [`CAUCHY_TRIES`] uniforms
//!   in turn; the first F > 0 is taken (and cut to 1 when above), as the papers'
//!   "regenerate while F ≤ 0" prescribes. All tries ≤ 0 (probability below 2·10⁻⁵ even for
//!   μ = 0.1) fall back to `min(μ, 1)`.

use crate::de::{BoundPolicy, better, confine, resample_chunk};
use crate::philox::{below, uniform_f64};
use crate::real::Real;
use core::cmp::Ordering;

/// The slot of the parameter words.
pub const PARAM_SLOT: u32 = 0x4000_0000;
/// How many uniforms a Cauchy draw of F may use.
pub const CAUCHY_TRIES: usize = 8;
/// The individual index whose stream holds the population-wide draws (no individual
/// has it: populations hold fewer than 2³² − 1).
pub const POPULATION_INDEX: u32 = u32::MAX;
/// The scale of the normal and Cauchy draws of every SHADE-family paper.
pub const SCALE: f64 = 0.1;
/// The largest angle of a Cauchy draw: just below π/2 in f32 and f64.
pub const CAUCHY_EDGE: f64 = 1.570_796_25;
/// L-SHADE's terminal value ⊥ of a Cr memory entry (any negative value reads as ⊥).
pub const TERMINAL: f64 = -1.0;

/// A standard normal variate from two uniform words (Box–Muller, cosine branch).
#[inline(always)]
pub fn normal<T: Real>(w1: u32, w2: u32) -> T {
    let u1 = T::uniform(w1);
    let u2 = T::uniform(w2);
    (T::of(-2.0) * u1.ln()).sqrt() * (T::of(2.0) * T::PI * u2).cos()
}

/// Cr ~ N(μ, 0.1) clamped to [0, 1]; 0 when μ is the terminal value ⊥ (L-SHADE).
#[inline(always)]
pub fn draw_cr<T: Real>(mu: T, w1: u32, w2: u32) -> T {
    if mu < T::ZERO {
        return T::ZERO;
    }
    (mu + T::of(SCALE) * normal::<T>(w1, w2))
        .max(T::ZERO)
        .min(T::ONE)
}

/// F ~ Cauchy(μ, 0.1), regenerated while ≤ 0 (at most [`CAUCHY_TRIES`] times, else
/// `min(μ, 1)`), cut to 1 when above.
#[inline(always)]
pub fn draw_f<T: Real>(mu: T, w: &[u32; CAUCHY_TRIES]) -> T {
    // The angle stays inside ±1.57079625, so that rounding (f32's π/2 is above the real
    // one) never carries it past ±π/2, where tan changes sign.
    let edge = T::of(CAUCHY_EDGE);
    let mut k = 0;
    while k < CAUCHY_TRIES {
        let angle = (T::PI * (T::uniform(w[k]) - T::of(0.5)))
            .max(-edge)
            .min(edge);
        let f = mu + T::of(SCALE) * angle.tan();
        if f > T::ZERO {
            return f.min(T::ONE);
        }
        k += 1;
    }
    mu.min(T::ONE)
}

/// jDE's bounds of F: F_l = 0.1, F_u = 0.9 (so F ∈ [0.1, 1]).
pub const JDE_F_LOWER: f64 = 0.1;
pub const JDE_F_UPPER: f64 = 0.9;
/// jDE's initial F and Cr of every individual.
pub const JDE_F_INIT: f64 = 0.5;
pub const JDE_CR_INIT: f64 = 0.9;

/// jDE's rule (Brest et al. 2006, eqs. 5–6) with the words `[rand1, rand2, rand3,
/// rand4]`: `F' = F_l + rand1·F_u` if `rand2 < τ1`, else F; `Cr' = rand3` if `rand4 < τ2`,
/// else Cr. The trial uses (F', Cr'); they survive with it.
#[inline(always)]
pub fn jde_update<T: Real>(f: T, cr: T, w: &[u32; 4], tau1: T, tau2: T) -> (T, T) {
    let [r1, r2, r3, r4] = [
        T::uniform(w[0]),
        T::uniform(w[1]),
        T::uniform(w[2]),
        T::uniform(w[3]),
    ];
    let f = if r2 < tau1 {
        T::of(JDE_F_LOWER) + r1 * T::of(JDE_F_UPPER)
    } else {
        f
    };
    let cr = if r4 < tau2 { r3 } else { cr };
    (f, cr)
}

/// The individuals of one current-to-pbest trial.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PbestDraws {
    /// Index into the ranking ([`select_best`]): the p-best is `ranking[rank]`.
    pub rank: u32,
    /// From the population, ≠ i.
    pub r1: u32,
    /// From population ∪ archive, ≠ i, ≠ r1: values `≥ n` are archive entry `r2 − n`.
    pub r2: u32,
}

/// The indices of a current-to-pbest trial from slot 0's words (no rejection): the p-best
/// among the `k` best, r1 uniform over the population but i, r2 uniform over the
/// `n + archive` rows but i and r1 (JADE, §III.B).
#[inline(always)]
pub fn pbest_indices(w: &[u32; 4], i: u32, n: u32, archive: u32, k: u32) -> PbestDraws {
    let mut r1 = below(w[0], n - 1);
    if r1 >= i {
        r1 += 1;
    }
    let (a, b) = if i < r1 { (i, r1) } else { (r1, i) };
    let mut r2 = below(w[1], n + archive - 2);
    if r2 >= a {
        r2 += 1;
    }
    if r2 >= b {
        r2 += 1;
    }
    PbestDraws {
        rank: below(w[2], k),
        r1,
        r2,
    }
}

/// How many individuals make "the best 100p %": `max(2, round(p·n))`, at most n (the
/// reference implementations of L-SHADE and jSO round this way and keep at least two).
#[inline(always)]
pub fn pbest_count(p: f64, n: u32) -> u32 {
    let k = libm::round(p * n as f64);
    let k = if k >= 2.0 { k as u32 } else { 2 };
    k.min(n)
}

/// SHADE's per-individual p_i, uniform in [2/n, p_max] (Tanabe & Fukunaga 2013, §III.B),
/// from one word; p_max below 2/n gives 2/n.
#[inline(always)]
pub fn shade_p(w: u32, n: u32, p_max: f64) -> f64 {
    let p_min = 2.0 / n as f64;
    if p_max <= p_min {
        return p_min;
    }
    p_min + uniform_f64(w) * (p_max - p_min)
}

/// The order of individuals: lower value, then lower index; NaN last.
#[inline(always)]
fn order<T: Real>(fit: &[T], a: u32, b: u32) -> Ordering {
    if a == b {
        Ordering::Equal
    } else if better(fit[a as usize], a, fit[b as usize], b) {
        Ordering::Less
    } else {
        Ordering::Greater
    }
}

/// Puts the indices of the `k` best individuals of `fit` into `idx[..k]`, best first
/// (lower value, then lower index, NaN last): a partial selection, then a sort of the k
/// selected only. `idx` must be as long as `fit`.
pub fn select_best<T: Real>(fit: &[T], k: usize, idx: &mut [u32]) {
    let mut j = 0;
    while j < idx.len() {
        idx[j] = j as u32;
        j += 1;
    }
    let k = k.min(idx.len());
    if k == 0 {
        return;
    }
    if k < idx.len() {
        idx.select_nth_unstable_by(k - 1, |&a, &b| order(fit, a, b));
    }
    idx[..k].sort_unstable_by(|&a, &b| order(fit, a, b));
}

/// Individual i's rank (0 = best) in the order of [`select_best`]: how many are better.
/// A thread per individual can find the top k this way without sorting.
pub fn rank<T: Real>(fit: &[T], i: u32) -> u32 {
    let mut r = 0;
    let mut j = 0;
    while j < fit.len() {
        if better(fit[j], j as u32, fit[i as usize], i) {
            r += 1;
        }
        j += 1;
    }
    r
}

/// One component of current-to-pbest-w/1 (jSO, eq. 2):
/// `x_i + F_w (x_pbest − x_i) + F (x_r1 − x̃_r2)`; F_w = F is JADE's current-to-pbest/1.
#[inline(always)]
pub fn pbest_mutant<T: Real>(f: T, fw: T, xi: T, xp: T, x1: T, x2: T) -> T {
    xi + fw * (xp - xi) + f * (x1 - x2)
}

/// One lane's chunk of a current-to-pbest trial: mutation, binomial crossover (component
/// j from the mutant if its uniform ≤ Cr or j = jrand) and the bound policy.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub fn pbest_trial_chunk<T: Real>(
    f: T,
    fw: T,
    cr: T,
    bounds: BoundPolicy,
    j0: u32,
    n: u32,
    rows: [&[T; 4]; 4],
    lo: &[T; 4],
    hi: &[T; 4],
    u: &[u32; 4],
    jrand: u32,
    resample: impl FnOnce() -> [u32; 4],
) -> [T; 4] {
    let [xi, xp, x1, x2] = rows;
    let mut v = [T::ZERO; 4];
    let mut out = false;
    let mut k = 0usize;
    while k < 4 {
        if (k as u32) < n {
            let take = T::uniform(u[k]) <= cr || j0 + k as u32 == jrand;
            let c = if take {
                pbest_mutant(f, fw, xi[k], xp[k], x1[k], x2[k])
            } else {
                xi[k]
            };
            let c = confine(bounds, c, lo[k], hi[k], xi[k]);
            out |= bounds == BoundPolicy::Resample && !(c >= lo[k] && c <= hi[k]);
            v[k] = c;
        }
        k += 1;
    }
    if out {
        resample_chunk(&mut v, n, lo, hi, &resample());
    }
    v
}

/// Selection of the SHADE family: the trial replaces x_i when not worse (L-SHADE and jSO,
/// Algorithm 1: `f(u) ≤ f(x)`; a NaN trial never does); jDE's selection is the same.
#[inline(always)]
pub fn replaces<T: Real>(trial: T, current: T) -> bool {
    trial <= current || (current.is_nan() && !trial.is_nan())
}

/// Is the trial a success (strictly better: its F and Cr join S_F, S_Cr and x_i the
/// archive)? JADE's selection replaces on success only.
#[inline(always)]
pub fn succeeds<T: Real>(trial: T, current: T) -> bool {
    trial < current || (current.is_nan() && !trial.is_nan())
}

/// The successes of one generation: the sums give the (weighted) arithmetic and Lehmer
/// means. Weights are the improvements |Δf|; the papers' normalised weights
/// w_k = Δf_k / ΣΔf cancel in both means. A generation's record is summed in a fixed
/// order, a pairwise tree over the trial indices (`adaptive_gen::success_tree`), which
/// both engines follow.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Successes<T> {
    pub count: u32,
    /// Σ F, Σ F², Σ Cr, Σ Cr² (unweighted, for JADE and as a fallback).
    pub f: T,
    pub f2: T,
    pub cr: T,
    pub cr2: T,
    /// Σ Δf·F, Σ Δf·F², Σ Δf·Cr, Σ Δf·Cr², Σ Δf.
    pub wf: T,
    pub wf2: T,
    pub wcr: T,
    pub wcr2: T,
    pub w: T,
    /// max Cr.
    pub cr_max: T,
}

impl<T: Real> Successes<T> {
    /// Adds a success with parameters (F, Cr) that improved by `df`.
    #[inline(always)]
    pub fn add(&mut self, f: T, cr: T, df: T) {
        self.count += 1;
        self.f = self.f + f;
        self.f2 = self.f2 + f * f;
        self.cr = self.cr + cr;
        self.cr2 = self.cr2 + cr * cr;
        self.wf = self.wf + df * f;
        self.wf2 = self.wf2 + df * f * f;
        self.wcr = self.wcr + df * cr;
        self.wcr2 = self.wcr2 + df * cr * cr;
        self.w = self.w + df;
        self.cr_max = self.cr_max.max(cr);
    }

    /// The record of one success: what [`Successes::add`] adds to an empty one.
    #[inline(always)]
    pub fn one(f: T, cr: T, df: T) -> Self {
        let mut s = Self::default();
        s.add(f, cr, df);
        s
    }

    /// Two records together: counts and sums added, the larger Cr kept. Commutative bit
    /// for bit; an empty record (`default`) changes nothing, as every term is ≥ +0.
    #[inline(always)]
    pub fn merge(self, o: Self) -> Self {
        Successes {
            count: self.count + o.count,
            f: self.f + o.f,
            f2: self.f2 + o.f2,
            cr: self.cr + o.cr,
            cr2: self.cr2 + o.cr2,
            wf: self.wf + o.wf,
            wf2: self.wf2 + o.wf2,
            wcr: self.wcr + o.wcr,
            wcr2: self.wcr2 + o.wcr2,
            w: self.w + o.w,
            cr_max: self.cr_max.max(o.cr_max),
        }
    }

    /// Are the weighted sums usable (positive, finite total weight)?
    #[inline(always)]
    fn weighted(&self) -> bool {
        let w = self.w.to_f64();
        w > 0.0 && w.is_finite() && self.wf2.to_f64().is_finite()
    }

    /// mean_WL(S_F) = Σ w F² / Σ w F (unweighted when the weights are not finite).
    #[inline(always)]
    pub fn lehmer_f(&self) -> T {
        if self.weighted() {
            self.wf2 / self.wf
        } else {
            self.f2 / self.f
        }
    }

    /// mean_WL(S_Cr); the caller handles max(S_Cr) = 0.
    #[inline(always)]
    pub fn lehmer_cr(&self) -> T {
        if self.weighted() {
            self.wcr2 / self.wcr
        } else {
            self.cr2 / self.cr
        }
    }

    /// mean_WA(S_Cr) = Σ w Cr / Σ w.
    #[inline(always)]
    pub fn mean_cr(&self) -> T {
        if self.weighted() {
            self.wcr / self.w
        } else {
            self.cr / T::of_u32(self.count)
        }
    }
}

/// JADE's adaptation (Zhang & Sanderson 2009, eqs. 8–10), when some trial succeeded:
/// `μ_Cr ← (1 − c) μ_Cr + c · mean_A(S_Cr)`, `μ_F ← (1 − c) μ_F + c · mean_L(S_F)`, with
/// the unweighted arithmetic and Lehmer means.
#[inline(always)]
pub fn jade_update<T: Real>(mu_f: &mut T, mu_cr: &mut T, s: &Successes<T>, c: T) {
    if s.count == 0 {
        return;
    }
    *mu_cr = (T::ONE - c) * *mu_cr + c * (s.cr / T::of_u32(s.count));
    *mu_f = (T::ONE - c) * *mu_f + c * (s.f2 / s.f);
}

/// The memory update rules of the success-history strategies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemoryRule {
    /// SHADE (Tanabe & Fukunaga 2013, eqs. 7–8): `M_F,k = mean_WL(S_F)`,
    /// `M_Cr,k = mean_WA(S_Cr)`.
    Shade,
    /// L-SHADE (Tanabe & Fukunaga 2014, eqs. 7–8): `M_F,k = mean_WL(S_F)`;
    /// `M_Cr,k = ⊥` when it is ⊥ already or max(S_Cr) = 0, else `mean_WL(S_Cr)`.
    LShade,
    /// jSO (Brest, Maučec & Bošković 2017, Algorithm 1, after iL-SHADE): L-SHADE's means,
    /// each averaged with the entry's old value; the last entry stays 0.9 for F and Cr
    /// and is never written.
    Jso,
}

/// jSO's fixed last memory entry (F and Cr).
pub const JSO_FIXED_ENTRY: f64 = 0.9;

/// Writes entry `k` of the memory (`mf`, `mcr`, H entries) from the successes and moves
/// `k` on, cyclically (over the first H − 1 entries for jSO). Without successes nothing
/// changes, `k` included.
#[inline(always)]
pub fn update_memory<T: Real>(
    rule: MemoryRule,
    mf: &mut [T],
    mcr: &mut [T],
    k: &mut u32,
    s: &Successes<T>,
) {
    if s.count == 0 {
        return;
    }
    let i = *k as usize;
    let half = T::of(0.5);
    let terminal = mcr[i] < T::ZERO || s.cr_max <= T::ZERO;
    match rule {
        MemoryRule::Shade => {
            mf[i] = s.lehmer_f();
            mcr[i] = s.mean_cr();
        }
        MemoryRule::LShade => {
            mf[i] = s.lehmer_f();
            mcr[i] = if terminal {
                T::of(TERMINAL)
            } else {
                s.lehmer_cr()
            };
        }
        MemoryRule::Jso => {
            mf[i] = (s.lehmer_f() + mf[i]) * half;
            mcr[i] = if terminal {
                T::of(TERMINAL)
            } else {
                (s.lehmer_cr() + mcr[i]) * half
            };
        }
    }
    let cycle = match rule {
        MemoryRule::Jso => mf.len() as u32 - 1,
        _ => mf.len() as u32,
    };
    *k = (*k + 1) % cycle.max(1);
}

/// Where a success puts its parent in the archive: appended while there is room, else over
/// a uniformly chosen entry (JADE's "randomly remove", done as a replacement) from the
/// success's archive word; `None` without an archive.
#[inline(always)]
pub fn archive_slot(w: u32, len: u32, capacity: u32) -> Option<u32> {
    if capacity == 0 {
        None
    } else if len < capacity {
        Some(len)
    } else {
        Some(below(w, capacity))
    }
}

/// An archive's capacity: `round(rate · n)`.
#[inline(always)]
pub fn archive_capacity(rate: f64, n: u32) -> u32 {
    libm::round(rate * n as f64) as u32
}

/// L-SHADE's linear population size reduction (Tanabe & Fukunaga 2014, eq. 10):
/// `N = round(((N_min − N_init) / MAX_NFE) · NFE + N_init)`, never below N_min.
#[inline(always)]
pub fn lpsr_size(n_init: u32, n_min: u32, nfe: u64, max_nfe: u64) -> u32 {
    let slope = (n_min as f64 - n_init as f64) / max_nfe as f64;
    let n = libm::round(slope * nfe as f64 + n_init as f64);
    if n <= n_min as f64 { n_min } else { n as u32 }
}

/// L-SHADE's initial population: `round(18 · D)`.
#[inline(always)]
pub fn lshade_initial_pop(dim: u32) -> u32 {
    18 * dim
}

/// jSO's initial population: `round(25 · ln D · √D)`.
#[inline(always)]
pub fn jso_initial_pop(dim: u32) -> u32 {
    let d = dim as f64;
    libm::round(25.0 * libm::log(d) * libm::sqrt(d)) as u32
}

/// jSO's p at a fraction `t = NFE / MAX_NFE` of the budget: linear from p_max down to
/// p_max / 2 (0.25 to 0.125 with the paper's p_max).
#[inline(always)]
pub fn jso_p(p_max: f64, t: f64) -> f64 {
    p_max - (p_max - p_max / 2.0) * t
}

/// jSO's weight of the p-best difference: F_w = 0.7 F before 20 % of the budget,
/// 0.8 F before 40 %, 1.2 F after (eq. 2).
#[inline(always)]
pub fn jso_fw_factor(t: f64) -> f64 {
    if t < 0.2 {
        0.7
    } else if t < 0.4 {
        0.8
    } else {
        1.2
    }
}

/// jSO's clamps by progress `t`: Cr ≥ 0.7 before 25 % of the budget, ≥ 0.6 before 50 %;
/// F ≤ 0.7 before 60 %.
#[inline(always)]
pub fn jso_clamp<T: Real>(f: T, cr: T, t: f64) -> (T, T) {
    let cr = if t < 0.25 {
        cr.max(T::of(0.7))
    } else if t < 0.5 {
        cr.max(T::of(0.6))
    } else {
        cr
    };
    let f = if t < 0.6 { f.min(T::of(0.7)) } else { f };
    (f, cr)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normal_from_known_uniforms() {
        // u1 = 1 (word u32::MAX in f32): √(−2 ln 1) = 0 → z = 0 whatever u2.
        assert_eq!(normal::<f32>(u32::MAX, 12345), 0.0);
        // u1 = u2 = ½ (word 2³¹ − ½ does not exist; w = 2³¹ gives ½ + 2⁻³³ in f64):
        // z = √(2 ln 2) · cos(π + 2π·2⁻³³) ≈ −1.177410023.
        let z = normal::<f64>(1 << 31, 1 << 31);
        assert!((z + 1.177_410_022_515_475).abs() < 1e-8, "{z}");
        // Cr = 0.5 + 0.1 z, clamped; ⊥ gives 0.
        let cr = draw_cr::<f64>(0.5, 1 << 31, 1 << 31);
        assert!((cr - 0.382_258_997_748_452_5).abs() < 1e-8, "{cr}");
        assert_eq!(draw_cr::<f64>(TERMINAL, 1 << 31, 1 << 31), 0.0);
        assert_eq!(draw_cr::<f64>(0.0, 1 << 31, 1 << 31), 0.0);
        // A moment check: mean ≈ 0, variance ≈ 1 over Philox words.
        let mut g = crate::philox::Philox4x32::new(7, 0, 0);
        let n = 20_000;
        let (mut s, mut s2) = (0.0, 0.0);
        for _ in 0..n {
            let z = normal::<f64>(g.next_word(), g.next_word());
            s += z;
            s2 += z * z;
        }
        let mean = s / n as f64;
        let var = s2 / n as f64 - mean * mean;
        assert!(
            mean.abs() < 0.03 && (var - 1.0).abs() < 0.05,
            "{mean} {var}"
        );
    }

    #[test]
    fn cauchy_regenerates_nonpositive_and_cuts_at_one() {
        // Word 2³¹ gives u = ½ + 2⁻³³: tan ≈ 0, F ≈ μ.
        let mid = 1u32 << 31;
        let f = draw_f::<f64>(0.5, &[mid; CAUCHY_TRIES]);
        assert!((f - 0.5).abs() < 1e-9);
        // Word 0 gives u ≈ 2⁻³³: tan(π(u − ½)) ≈ −1/(π·2⁻³³) ≈ −2.7e9 → F < 0, retried;
        // the third word is the first that gives F > 0.
        let mut w = [0u32; CAUCHY_TRIES];
        w[2] = mid;
        assert!((draw_f::<f64>(0.3, &w) - 0.3).abs() < 1e-9);
        // u = 0.75: F = μ + 0.1·tan(π/4) = μ + 0.1; μ = 0.95 → 1.05 → cut to 1.
        let q = 3u32 << 30;
        assert!((draw_f::<f64>(0.2, &[q; CAUCHY_TRIES]) - 0.3).abs() < 1e-9);
        assert_eq!(draw_f::<f64>(0.95, &[q; CAUCHY_TRIES]), 1.0);
        // Every try ≤ 0: the fallback min(μ, 1). (Word 0 in f32: u − ½ rounds to −½, whose
        // angle −π/2 rounded would give tan > 0 without the edge.)
        assert_eq!(draw_f::<f64>(0.4, &[0; CAUCHY_TRIES]), 0.4);
        assert_eq!(draw_f::<f32>(0.4, &[0; CAUCHY_TRIES]), 0.4);
    }

    #[test]
    fn jde_tau_rule_with_given_uniforms() {
        // Words → uniforms: w·2⁻³² + 2⁻³³ (f64). Take rand1 = ½ (+2⁻³³), rand2 = 0.05
        // (< τ1 = 0.1), rand3 = 0.25, rand4 = 0.5 (≥ τ2): F' = 0.1 + 0.5·0.9 = 0.55,
        // Cr' = Cr = 0.9.
        let w = |u: f64| (u * 4_294_967_296.0) as u32;
        let (f, cr) = jde_update::<f64>(0.5, 0.9, &[w(0.5), w(0.05), w(0.25), w(0.5)], 0.1, 0.1);
        assert!((f - 0.55).abs() < 1e-9, "{f}");
        assert_eq!(cr, 0.9);
        // rand2 = 0.2 ≥ τ1 keeps F; rand4 = 0.01 < τ2 takes Cr' = rand3 = 0.25.
        let (f, cr) = jde_update::<f64>(0.7, 0.9, &[w(0.5), w(0.2), w(0.25), w(0.01)], 0.1, 0.1);
        assert_eq!(f, 0.7);
        assert!((cr - 0.25).abs() < 1e-9, "{cr}");
        // The extremes: rand1 → 1 gives F = 1.0, rand1 → 0 gives 0.1.
        let (f, _) = jde_update::<f64>(0.5, 0.9, &[u32::MAX, 0, 0, u32::MAX], 0.1, 0.1);
        assert!((f - 1.0).abs() < 1e-9);
        let (f, _) = jde_update::<f64>(0.5, 0.9, &[0, 0, 0, u32::MAX], 0.1, 0.1);
        assert!((f - 0.1).abs() < 1e-9);
    }

    #[test]
    fn pbest_indices_avoid_i_and_each_other() {
        // n = 5, i = 2, archive 3. w0 = 0 → r1 = 0 (below i); w1 = 0 → below = 0, past
        // r1 = 0 → 1; rank = 0.
        let d = pbest_indices(&[0, 0, 0, 0], 2, 5, 3, 4);
        assert_eq!(
            d,
            PbestDraws {
                rank: 0,
                r1: 0,
                r2: 1
            }
        );
        // w0 = max: below = 3 ≥ i → r1 = 4; w1 = max: below(·, 6) = 5, past 2 → 6, past 4
        // → 7 (archive entry 2); rank = below(max, 4) = 3.
        let m = u32::MAX;
        let d = pbest_indices(&[m, m, m, 0], 2, 5, 3, 4);
        assert_eq!(
            d,
            PbestDraws {
                rank: 3,
                r1: 4,
                r2: 7
            }
        );
        // Exhaustively over a grid of words: r1 ∈ P \ {i}, r2 ∈ (P ∪ A) \ {i, r1}.
        for n in 3..7u32 {
            for a in 0..4u32 {
                for i in 0..n {
                    let mut seen = [0u32; 12];
                    for s in 0..16u32 {
                        for t in 0..16u32 {
                            let d = pbest_indices(&[s << 28, t << 28, s << 28, 0], i, n, a, 2);
                            assert!(d.r1 < n && d.r1 != i);
                            assert!(d.r2 < n + a && d.r2 != i && d.r2 != d.r1);
                            assert!(d.rank < 2);
                            seen[d.r2 as usize] += 1;
                        }
                    }
                    let hit = seen.iter().filter(|&&c| c > 0).count() as u32;
                    // With r1 varying too, every row but i turns up.
                    assert_eq!(hit, n + a - 1, "n {n} a {a} i {i}");
                }
            }
        }
    }

    #[test]
    fn top_p_selection_with_ties() {
        // Values: index 0..7; ties at 1.0 (indices 1, 4, 6), NaN at 3.
        let fit = [5.0f32, 1.0, 3.0, f32::NAN, 1.0, 0.5, 1.0, 2.0];
        let mut idx = [0u32; 8];
        // Order: 5 (0.5), 1, 4, 6 (1.0 by index), 7 (2.0), 2 (3.0), 0 (5.0), 3 (NaN).
        select_best(&fit, 4, &mut idx);
        assert_eq!(idx[..4], [5, 1, 4, 6]);
        select_best(&fit, 2, &mut idx);
        assert_eq!(idx[..2], [5, 1]);
        select_best(&fit, 8, &mut idx);
        assert_eq!(idx, [5, 1, 4, 6, 7, 2, 0, 3]);
        for (r, &i) in idx.iter().enumerate() {
            assert_eq!(rank(&fit, i), r as u32);
        }
        // p-best counts: max(2, round(p n)), at most n.
        assert_eq!(pbest_count(0.05, 30), 2); // 1.5 → 2
        assert_eq!(pbest_count(0.11, 180), 20); // 19.8 → 20
        assert_eq!(pbest_count(0.05, 100), 5);
        assert_eq!(pbest_count(0.25, 4), 2); // 1 → 2
        assert_eq!(pbest_count(1.0, 3), 3);
        // SHADE's p_i ∈ [2/n, p_max]: word 0 → 2/n (+ 2⁻³³ of the range), max → p_max.
        assert!((shade_p(0, 100, 0.2) - 0.02).abs() < 1e-9);
        assert!((shade_p(u32::MAX, 100, 0.2) - 0.2).abs() < 1e-9);
        assert_eq!(shade_p(7, 5, 0.2), 0.4);
    }

    #[test]
    fn means_of_given_successes() {
        // S_F = {0.5, 1.0}, S_Cr = {0.2, 0.6}, Δf = {1, 3}:
        // mean_WL(S_F) = (1·0.25 + 3·1) / (1·0.5 + 3·1) = 3.25 / 3.5 = 0.928571…
        // mean_WA(S_Cr) = (0.2 + 1.8) / 4 = 0.5
        // mean_WL(S_Cr) = (0.04 + 1.08) / (0.2 + 1.8) = 1.12 / 2 = 0.56
        // unweighted: mean_L(S_F) = 1.25 / 1.5 = 0.8333…, mean_A(S_Cr) = 0.4
        let mut s = Successes::<f64>::default();
        s.add(0.5, 0.2, 1.0);
        s.add(1.0, 0.6, 3.0);
        assert!((s.lehmer_f() - 3.25 / 3.5).abs() < 1e-15);
        assert!((s.mean_cr() - 0.5).abs() < 1e-15);
        assert!((s.lehmer_cr() - 0.56).abs() < 1e-15);
        assert_eq!(s.cr_max, 0.6);
        // JADE, c = 0.1, μ_F = μ_Cr = 0.5: μ_Cr = 0.45 + 0.04 = 0.49,
        // μ_F = 0.45 + 0.1·0.8333… = 0.533333…
        let (mut mf, mut mcr) = (0.5, 0.5);
        jade_update(&mut mf, &mut mcr, &s, 0.1);
        assert!((mcr - 0.49).abs() < 1e-15);
        assert!((mf - (0.45 + 0.125 / 1.5)).abs() < 1e-15);
        // No successes: no change.
        jade_update(&mut mf, &mut mcr, &Successes::default(), 0.1);
        assert!((mcr - 0.49).abs() < 1e-15);
        // An infinite improvement falls back to the unweighted means.
        let mut t = Successes::<f64>::default();
        t.add(0.5, 0.2, f64::INFINITY);
        t.add(1.0, 0.6, 1.0);
        assert!((t.lehmer_f() - 1.25 / 1.5).abs() < 1e-15);
        assert!((t.mean_cr() - 0.4).abs() < 1e-15);
    }

    #[test]
    fn memory_updates_and_index_wrap() {
        let mut s = Successes::<f64>::default();
        s.add(0.5, 0.2, 1.0);
        s.add(1.0, 0.6, 3.0);
        // SHADE, H = 3, k = 2: entry 2 = (0.928571…, 0.5) and k wraps to 0.
        let (mut mf, mut mcr, mut k) = ([0.5; 3], [0.5; 3], 2);
        update_memory(MemoryRule::Shade, &mut mf, &mut mcr, &mut k, &s);
        assert_eq!(k, 0);
        assert_eq!(mf[..2], [0.5, 0.5]);
        assert!((mf[2] - 3.25 / 3.5).abs() < 1e-15 && (mcr[2] - 0.5).abs() < 1e-15);
        // L-SHADE: Cr by the Lehmer mean, 0.56.
        let (mut mf, mut mcr, mut k) = ([0.5; 2], [0.5; 2], 0);
        update_memory(MemoryRule::LShade, &mut mf, &mut mcr, &mut k, &s);
        assert_eq!(k, 1);
        assert!((mcr[0] - 0.56).abs() < 1e-15);
        // max(S_Cr) = 0 → ⊥; and ⊥ stays ⊥ whatever the successes.
        let mut z = Successes::<f64>::default();
        z.add(0.5, 0.0, 1.0);
        update_memory(MemoryRule::LShade, &mut mf, &mut mcr, &mut k, &z);
        assert_eq!((k, mcr[1]), (0, TERMINAL));
        k = 1;
        update_memory(MemoryRule::LShade, &mut mf, &mut mcr, &mut k, &s);
        assert_eq!(mcr[1], TERMINAL);
        assert!((mf[1] - 3.25 / 3.5).abs() < 1e-15);
        // jSO, H = 3: entries 0 and 1 cycle, entry 2 stays 0.9. From M_F = 0.3,
        // M_Cr = 0.8: M_F = (0.928571… + 0.3)/2 = 0.614285…, M_Cr = (0.56 + 0.8)/2 = 0.68.
        let (mut mf, mut mcr, mut k) = ([0.3, 0.3, 0.9], [0.8, 0.8, 0.9], 0);
        update_memory(MemoryRule::Jso, &mut mf, &mut mcr, &mut k, &s);
        assert_eq!(k, 1);
        assert!((mf[0] - (3.25 / 3.5 + 0.3) / 2.0).abs() < 1e-15);
        assert!((mcr[0] - 0.68).abs() < 1e-15);
        update_memory(MemoryRule::Jso, &mut mf, &mut mcr, &mut k, &s);
        assert_eq!(k, 0);
        assert_eq!((mf[2], mcr[2]), (0.9, 0.9));
        // No successes: nothing moves.
        update_memory(
            MemoryRule::Jso,
            &mut mf,
            &mut mcr,
            &mut k,
            &Successes::default(),
        );
        assert_eq!(k, 0);
    }

    #[test]
    fn archive_slots() {
        assert_eq!(archive_slot(123, 0, 0), None);
        assert_eq!(archive_slot(u32::MAX, 3, 5), Some(3));
        // Full: replace below(w, 5); w = 2³¹ → 2, w = max → 4.
        assert_eq!(archive_slot(1 << 31, 5, 5), Some(2));
        assert_eq!(archive_slot(u32::MAX, 5, 5), Some(4));
        // round(2.6 · 180) = 468; round(2.6 · 5) = 13; round(1.4·5) = 7.
        assert_eq!(archive_capacity(2.6, 180), 468);
        assert_eq!(archive_capacity(2.6, 5), 13);
        assert_eq!(archive_capacity(0.0, 5), 0);
    }

    #[test]
    fn population_and_schedules() {
        // N_init = 180, N_min = 4, MAX_NFE = 100 000:
        // NFE = 180: 180 − 176·0.0018 = 179.68 → 180; 1 000: 178.24 → 178;
        // 25 000: 180 − 44 = 136; 50 000: 92; 99 000: 5.76 → 6; 100 000: 4.
        for (nfe, want) in [
            (180, 180),
            (1000, 178),
            (25_000, 136),
            (50_000, 92),
            (99_000, 6),
            (100_000, 4),
        ] {
            assert_eq!(lpsr_size(180, 4, nfe, 100_000), want, "{nfe}");
        }
        assert_eq!(lshade_initial_pop(10), 180);
        // 25 · ln 10 · √10 = 25 · 2.302585 · 3.162278 = 182.03 → 182;
        // D = 30: 25 · 3.401197 · 5.477226 = 465.73 → 466.
        assert_eq!(jso_initial_pop(10), 182);
        assert_eq!(jso_initial_pop(30), 466);
        // p: 0.25 at the start, 0.1875 halfway, 0.125 at the end.
        assert_eq!(jso_p(0.25, 0.0), 0.25);
        assert_eq!(jso_p(0.25, 0.5), 0.1875);
        assert_eq!(jso_p(0.25, 1.0), 0.125);
        // F_w: 0.7 F, 0.8 F, 1.2 F.
        assert_eq!(jso_fw_factor(0.0), 0.7);
        assert_eq!(jso_fw_factor(0.19), 0.7);
        assert_eq!(jso_fw_factor(0.2), 0.8);
        assert_eq!(jso_fw_factor(0.39), 0.8);
        assert_eq!(jso_fw_factor(0.4), 1.2);
        // Clamps: t = 0.1 → Cr ≥ 0.7, F ≤ 0.7; t = 0.3 → Cr ≥ 0.6; t = 0.55 → F ≤ 0.7
        // only; t = 0.7 → none.
        assert_eq!(jso_clamp::<f64>(0.9, 0.1, 0.1), (0.7, 0.7));
        assert_eq!(jso_clamp::<f64>(0.5, 0.1, 0.3), (0.5, 0.6));
        assert_eq!(jso_clamp::<f64>(0.9, 0.1, 0.55), (0.7, 0.1));
        assert_eq!(jso_clamp::<f64>(0.9, 0.1, 0.7), (0.9, 0.1));
    }

    #[test]
    fn pbest_chunk_mutates_crosses_and_bounds() {
        // F = 0.5, F_w = 0.25: x_i = 1, x_p = 3, x_r1 = 4, x_r2 = 2 →
        // 1 + 0.25·2 + 0.5·2 = 2.5. Cr = 0 takes only jrand = 1; hi = 2 with the midpoint
        // rule gives (2 + 1)/2 = 1.5.
        let xi = [1.0f64; 4];
        let (xp, x1, x2) = ([3.0; 4], [4.0; 4], [2.0; 4]);
        let v = pbest_trial_chunk(
            0.5,
            0.25,
            0.0,
            BoundPolicy::InitOnly,
            0,
            4,
            [&xi, &xp, &x1, &x2],
            &[0.0; 4],
            &[2.0; 4],
            &[u32::MAX; 4],
            1,
            || [0; 4],
        );
        assert_eq!(v, [1.0, 2.5, 1.0, 1.0]);
        let v = pbest_trial_chunk(
            0.5,
            0.25,
            1.0,
            BoundPolicy::Midpoint,
            0,
            3,
            [&xi, &xp, &x1, &x2],
            &[0.0; 4],
            &[2.0; 4],
            &[0; 4],
            9,
            || [0; 4],
        );
        assert_eq!(v, [1.5, 1.5, 1.5, 0.0]);
    }

    #[test]
    fn selection_rules() {
        assert!(replaces(1.0f64, 1.0) && !succeeds(1.0f64, 1.0));
        assert!(replaces(0.5f64, 1.0) && succeeds(0.5f64, 1.0));
        assert!(!replaces(f64::NAN, 1.0) && !succeeds(f64::NAN, 1.0));
        assert!(replaces(1.0f64, f64::NAN) && succeeds(1.0, f64::NAN));
    }
}
