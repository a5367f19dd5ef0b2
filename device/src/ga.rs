//! A real-coded genetic algorithm (the GA of Castro Liera et al. 2012, whose operators
//! the paper leaves unstated: gpude chooses the standard real-coded ones), one lane's
//! chunk of four components at a time, and its random words.
//!
//! A generational GA with elitism. Generation `g ≥ 1` builds a new population from the
//! old one; individual 0 is the old best (row and value, not re-evaluated), and every
//! other individual `i` is an offspring:
//! 1. **Selection**: two binary tournaments. Candidates `c₁ = below(w₀, Np)`,
//!    `c₂ = below(w₁, Np)` (with replacement); parent `a` is the better of the two
//!    ([`crate::de::better`]); `w₂`, `w₃` give parent `b` the same way.
//! 2. **Crossover** (BLX-α, Eshelman & Schaffer), when `u ≤ p_c`: component `j` of the
//!    child is `(m − α·I) + u_j·((1 + 2α)·I)` with `m = min(a_j, b_j)`,
//!    `I = max(a_j, b_j) − m`; otherwise the child is a copy of `a`.
//! 3. **Mutation** (the breeder GA's, Mühlenbein & Schlierkamp-Voosen), when `u ≤ p_m`:
//!    one component `k = below(w, D)` moves by `± r·(hi_k − lo_k)·δ`, where
//!    `δ = Σ_{t<16} α_t 2⁻ᵗ` and each `α_t` is 1 with probability 1/16.
//! 4. The job's bound policy on every component ([`crate::de::confine`], the parent
//!    `a`'s component as the reference), then the child is evaluated.
//!
//! Castro Liera et al.'s settings: `p_c` = 0.16, `p_m` = 0.7; gpude's: `α` = 0.5,
//! `r` = 0.1.
//!
//! # Random words
//! Individual `i` of population stream `p` reads subsequence `p·2³² + i` (as DE), and
//! generation 0 is DE's initial population. In generation `g ≥ 1`:
//! - slot [`SELECT_SLOT`]: the four tournament words `w₀ … w₃`;
//! - slot [`DECIDE_SLOT`]: the crossover's `u`, the mutation's `u`, the mutated
//!   component's word and the sign (the low bit of the fourth word: 1 is minus);
//! - slot [`BITS_SLOT`]: `α₀ … α₇` from the nibbles of word 0 (lowest first), `α₈ … α₁₅`
//!   from word 1 (`α_t = 1` when its nibble is 0);
//! - slot [`BLEND_SLOT`]` + q`: the crossover's `u_j` of components `4q .. 4q+4`;
//! - slot [`crate::de::RESAMPLE_SLOT`]` + q`: redraws under the resample policy.
//!
//! The `u`s are `Real::uniform` of their word: in (0, 1].

use crate::de::{BoundPolicy, better, confine, resample_chunk};
use crate::philox::below;
use crate::real::Real;

/// The slot of the tournament words.
pub const SELECT_SLOT: u32 = 0;
/// The slot of the crossover and mutation decisions.
pub const DECIDE_SLOT: u32 = 1;
/// The slot of the mutation's sixteen bits.
pub const BITS_SLOT: u32 = 2;
/// The first slot of the crossover's per-component draws.
pub const BLEND_SLOT: u32 = 3;

/// Castro Liera et al.'s crossover and mutation probabilities.
pub const CROSSOVER: f64 = 0.16;
pub const MUTATION: f64 = 0.7;
/// BLX-α's α and the mutation's range (a fraction of the domain's width).
pub const ALPHA: f64 = 0.5;
pub const RANGE: f64 = 0.1;

/// The GA's settings in the arithmetic's precision.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GaParams<T> {
    pub crossover: T,
    pub mutation: T,
    pub alpha: T,
    pub range: T,
}

/// The winner of a binary tournament between the candidates of words `w1`, `w2`.
#[inline(always)]
pub fn tournament<T: Real>(w1: u32, w2: u32, np: u32, fit: impl Fn(u32) -> T) -> u32 {
    let (c1, c2) = (below(w1, np), below(w2, np));
    if better(fit(c2), c2, fit(c1), c1) {
        c2
    } else {
        c1
    }
}

/// An offspring's decisions: the parents, whether it crosses, and the mutation (its
/// component and signed step `± r·δ`, or none).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Plan<T> {
    pub a: u32,
    pub b: u32,
    pub cross: bool,
    /// The mutated component and `± r·δ` (a multiple of the domain's width there).
    pub mutation: Option<(u32, T)>,
}

/// The plan of an offspring from its words: `select` and `decide` (slots
/// [`SELECT_SLOT`], [`DECIDE_SLOT`]) and, read only when it mutates, `bits`
/// ([`BITS_SLOT`]).
#[inline(always)]
pub fn plan<T: Real>(
    p: &GaParams<T>,
    np: u32,
    dim: u32,
    select: &[u32; 4],
    decide: &[u32; 4],
    bits: impl FnOnce() -> [u32; 4],
    fit: impl Fn(u32) -> T,
) -> Plan<T> {
    let a = tournament(select[0], select[1], np, &fit);
    let b = tournament(select[2], select[3], np, &fit);
    let cross = T::uniform(decide[0]) <= p.crossover;
    let mutation = if T::uniform(decide[1]) <= p.mutation {
        let k = below(decide[2], dim);
        let w = bits();
        let mut delta = T::ZERO;
        let mut scale = T::ONE;
        let mut t = 0u32;
        while t < 16 {
            let word = w[(t / 8) as usize];
            if (word >> (4 * (t % 8))) & 0xf == 0 {
                delta = delta + scale;
            }
            scale = scale * T::of(0.5);
            t += 1;
        }
        let step = p.range * delta;
        Some((k, if decide[3] & 1 == 1 { -step } else { step }))
    } else {
        None
    };
    Plan {
        a,
        b,
        cross,
        mutation,
    }
}

/// One chunk of an offspring: components `j0 .. j0 + n` from the parents' chunks
/// `a`, `b`, the crossover's words `u` (read when it crosses), the bounds and the
/// resample words.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub fn child_chunk<T: Real>(
    p: &GaParams<T>,
    plan: &Plan<T>,
    bounds: BoundPolicy,
    j0: u32,
    n: u32,
    a: &[T; 4],
    b: &[T; 4],
    lo: &[T; 4],
    hi: &[T; 4],
    u: impl FnOnce() -> [u32; 4],
    resample: impl FnOnce() -> [u32; 4],
) -> [T; 4] {
    let mut c = *a;
    if plan.cross {
        let u = u();
        let spread = T::ONE + T::of(2.0) * p.alpha;
        let mut k = 0usize;
        while k < 4 {
            if (k as u32) < n {
                let m = a[k].min(b[k]);
                let width = a[k].max(b[k]) - m;
                c[k] = (m - p.alpha * width) + T::uniform(u[k]) * (spread * width);
            }
            k += 1;
        }
    }
    let mut out = false;
    let mut k = 0usize;
    while k < 4 {
        if (k as u32) < n {
            if let Some((at, step)) = plan.mutation
                && at == j0 + k as u32
            {
                c[k] = c[k] + step * (hi[k] - lo[k]);
            }
            let v = confine(bounds, c[k], lo[k], hi[k], a[k]);
            out |= bounds == BoundPolicy::Resample && !(v >= lo[k] && v <= hi[k]);
            c[k] = v;
        } else {
            c[k] = T::ZERO;
        }
        k += 1;
    }
    if out {
        resample_chunk(&mut c, n, lo, hi, &resample());
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    const Q: u32 = 1 << 30; // f32::uniform(Q) = 0.25, 2Q → 0.5, 3Q → 0.75

    fn params() -> GaParams<f32> {
        GaParams {
            crossover: 0.5,
            mutation: 0.5,
            alpha: 0.5,
            range: 0.1,
        }
    }

    #[test]
    fn tournaments_take_the_better_candidate() {
        let fit = [3.0f32, 1.0, 2.0, 1.0];
        let f = |i: u32| fit[i as usize];
        // below(w, 4) = w >> 30: candidates 0 and 1 → 1; 1 and 3 (equal values) → 1.
        assert_eq!(tournament(0, Q, 4, f), 1);
        assert_eq!(tournament(3 * Q, Q, 4, f), 1);
        assert_eq!(tournament(2 * Q, 0, 4, f), 2);
    }

    #[test]
    fn a_plan_by_hand() {
        let fit = [3.0f32, 1.0, 2.0, 1.0];
        let f = |i: u32| fit[i as usize];
        // Crossover u = 0.25 ≤ 0.5: crosses; mutation u = 0.75 > 0.5: none.
        let p = plan(
            &params(),
            4,
            7,
            &[0, Q, 2 * Q, 0],
            &[Q, 3 * Q, 0, 0],
            || unreachable!(),
            f,
        );
        assert_eq!(
            p,
            Plan {
                a: 1,
                b: 2,
                cross: true,
                mutation: None
            }
        );
        // Mutation u = 0.5 ≤ 0.5: component below(3Q, 7) = 5; nibbles 0 at t = 1 and
        // t = 8 (word 0 = 0xffff_ff0f, word 1 = 0xffff_fff0): δ = ½ + 2⁻⁸; minus.
        let p = plan(
            &params(),
            4,
            7,
            &[0; 4],
            &[3 * Q, 2 * Q, 3 * Q, 1],
            || [0xffff_ff0f, 0xffff_fff0, 0, 0],
            f,
        );
        let want = -(0.1f32 * (0.5 + 1.0 / 256.0));
        assert_eq!(p.mutation, Some((5, want)));
        assert!(!p.cross);
    }

    #[test]
    fn blend_and_mutation_by_hand() {
        let pr = params();
        let plan = Plan {
            a: 0,
            b: 1,
            cross: true,
            mutation: Some((5, -0.25f32)),
        };
        // Components 4..7 (j0 = 4, n = 3): a = 1, 2, 0; b = 3, 2, 1; u = 0.25, 0.5, 0.75.
        // k=0: m = 1, I = 2: (1 − 1) + 0.25·(2·2) = 1.
        // k=1: I = 0: 2.
        // k=2: m = 0, I = 1: −0.5 + 0.75·2 = 1; mutation (component 5 is k = 1): no.
        let c = child_chunk(
            &pr,
            &plan,
            BoundPolicy::InitOnly,
            4,
            3,
            &[1.0, 2.0, 0.0, 9.0],
            &[3.0, 2.0, 1.0, 9.0],
            &[-10.0; 4],
            &[10.0; 4],
            || [Q, 2 * Q, 3 * Q, 0],
            || unreachable!(),
        );
        // Component 5 mutates: 2 − 0.25·20 = −3.
        assert_eq!(c, [1.0, -3.0, 1.0, 0.0]);
        // No crossover: a copy of a, clipped.
        let plan = Plan {
            a: 0,
            b: 1,
            cross: false,
            mutation: Some((0, 1.0f32)),
        };
        let c = child_chunk(
            &pr,
            &plan,
            BoundPolicy::Clip,
            0,
            2,
            &[1.0, 2.0, 0.0, 0.0],
            &[3.0; 4],
            &[-2.0; 4],
            &[2.0; 4],
            || unreachable!(),
            || unreachable!(),
        );
        // Component 0: 1 + 1·4 = 5 → clipped to 2.
        assert_eq!(c, [2.0, 2.0, 0.0, 0.0]);
    }
}
