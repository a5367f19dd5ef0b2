//! Particle swarm optimization (the form of Castro Liera et al. 2012), one lane's chunk of four components
//! at a time, and its random words.
//!
//! Every particle keeps a position `x`, a velocity `v` and its personal best `pbest`
//! (position and value); each island (swarm) has a global best `gbest`, the best
//! personal best. Generation `g ≥ 1`, for every particle and component `j`:
//! ```text
//! v ← w·v + c1·r1·(pbest − x) + c2·r2·(gbest − x)      (left to right, no fused ops)
//! v ← clamp(v, −v_max, v_max),  v_max = hi − lo         (the domain width)
//! x ← x + v, then the job's bound policy on x           (see [`crate::de::confine`])
//! ```
//! then `f(x)` is evaluated and replaces the personal best when strictly better
//! ([`crate::de::accepts`]). `gbest` is read from a snapshot taken before the
//! generation and recomputed after it ([`crate::de::better`]: lowest value, then lowest
//! index), so the swarm is synchronous like gpude's DE.
//!
//! # Random words
//! Particle `i` of population stream `p` reads subsequence `p·2³² + i` (as DE):
//! - generation 0, slot `q`: the initial position of components `4q .. 4q+4` (the same
//!   words and formula as DE's initial population: `lo + u (hi − lo)`);
//! - generation 0, slot [`VELOCITY_SLOT`]` + q`: the initial velocity,
//!   `(u − ½)(hi − lo)`;
//! - generation `g`, slot `2q`: `r1` of components `4q .. 4q+4`; slot `2q + 1`: `r2`;
//! - generation `g`, slot [`crate::de::RESAMPLE_SLOT`]` + q`: redraws of positions out
//!   of the domain under the resample policy.
//!
//! `r1`, `r2` are `Real::uniform` of the word: in (0, 1].

use crate::de::{BoundPolicy, confine, resample_chunk};
use crate::real::Real;

/// First generation-0 slot of the initial velocities.
pub const VELOCITY_SLOT: u32 = 0x4000_0000;

/// The slot of `r1` for chunk `q` in a generation ≥ 1.
#[inline(always)]
pub const fn r1_slot(q: u32) -> u32 {
    2 * q
}

/// The slot of `r2` for chunk `q` in a generation ≥ 1.
#[inline(always)]
pub const fn r2_slot(q: u32) -> u32 {
    2 * q + 1
}

/// Castro Liera et al.'s constants: w = 0.8, c1 = c2 = 1.62.
pub const INERTIA: f64 = 0.8;
pub const C1: f64 = 1.62;
pub const C2: f64 = 1.62;

/// The inertia weight and the two confidence constants.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PsoParams<T> {
    pub inertia: T,
    pub c1: T,
    pub c2: T,
}

/// The new velocity of one component before the clamp:
/// `((w·v + (c1·r1)·(pbest − x)) + (c2·r2)·(gbest − x))`.
#[inline(always)]
pub fn velocity<T: Real>(p: &PsoParams<T>, v: T, x: T, pbest: T, gbest: T, r1: T, r2: T) -> T {
    p.inertia * v + (p.c1 * r1) * (pbest - x) + (p.c2 * r2) * (gbest - x)
}

/// `v` clamped into `[−vmax, vmax]` (a NaN stays NaN).
#[inline(always)]
pub fn clamp_velocity<T: Real>(v: T, vmax: T) -> T {
    if v > vmax {
        vmax
    } else if v < -vmax {
        -vmax
    } else {
        v
    }
}

/// One chunk of the initial velocity: `(u − ½)(hi − lo)`.
#[inline(always)]
pub fn init_velocity_chunk<T: Real>(u: &[u32; 4], n: u32, lo: &[T; 4], hi: &[T; 4]) -> [T; 4] {
    let mut v = [T::ZERO; 4];
    let mut k = 0usize;
    while k < 4 {
        if (k as u32) < n {
            v[k] = (T::uniform(u[k]) - T::of(0.5)) * (hi[k] - lo[k]);
        }
        k += 1;
    }
    v
}

/// One particle's chunk moved one generation: the new position and velocity.
/// `u1`, `u2` are the chunk's `r1` and `r2` words; `resample` gives the redraw words
/// when a position component leaves the domain under [`BoundPolicy::Resample`].
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub fn step_chunk<T: Real>(
    p: &PsoParams<T>,
    bounds: BoundPolicy,
    n: u32,
    x: &[T; 4],
    v: &[T; 4],
    pbest: &[T; 4],
    gbest: &[T; 4],
    lo: &[T; 4],
    hi: &[T; 4],
    u1: &[u32; 4],
    u2: &[u32; 4],
    resample: impl FnOnce() -> [u32; 4],
) -> ([T; 4], [T; 4]) {
    let mut nx = [T::ZERO; 4];
    let mut nv = [T::ZERO; 4];
    let mut out = false;
    let mut k = 0usize;
    while k < 4 {
        if (k as u32) < n {
            let r1 = T::uniform(u1[k]);
            let r2 = T::uniform(u2[k]);
            let vk = velocity(p, v[k], x[k], pbest[k], gbest[k], r1, r2);
            let vk = clamp_velocity(vk, hi[k] - lo[k]);
            let c = confine(bounds, x[k] + vk, lo[k], hi[k], x[k]);
            out |= bounds == BoundPolicy::Resample && !(c >= lo[k] && c <= hi[k]);
            nx[k] = c;
            nv[k] = vk;
        }
        k += 1;
    }
    if out {
        resample_chunk(&mut nx, n, lo, hi, &resample());
    }
    (nx, nv)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn velocity_by_hand() {
        // w = 0.5, c1 = 2, c2 = 1, v = 2, x = 1, pbest = 3, gbest = −1, r1 = 0.25, r2 = 0.5:
        // 0.5·2 + (2·0.25)·(3 − 1) + (1·0.5)·(−1 − 1) = 1 + 1 − 1 = 1.
        let p = PsoParams {
            inertia: 0.5f64,
            c1: 2.0,
            c2: 1.0,
        };
        assert_eq!(velocity(&p, 2.0, 1.0, 3.0, -1.0, 0.25, 0.5), 1.0);
        assert_eq!(clamp_velocity(7.0f64, 4.0), 4.0);
        assert_eq!(clamp_velocity(-7.0f64, 4.0), -4.0);
        assert_eq!(clamp_velocity(-3.0f64, 4.0), -3.0);
        assert!(clamp_velocity(f64::NAN, 4.0).is_nan());
    }

    #[test]
    fn step_by_hand() {
        // In f32 the word 2³⁰ gives exactly 0.25 (2³⁰·2⁻³² = 0.25; + 2⁻³³ is below half
        // an ulp), 2³¹ gives 0.5, 3·2³⁰ gives 0.75.
        let q = 1u32 << 30;
        assert_eq!(f32::uniform(q), 0.25);
        assert_eq!(f32::uniform(2 * q), 0.5);
        assert_eq!(f32::uniform(3 * q), 0.75);
        let p = PsoParams {
            inertia: 0.5f32,
            c1: 2.0,
            c2: 1.0,
        };
        let lo = [-4.0f32; 4];
        let hi = [4.0f32; 4];
        // Component 0: the case of `velocity_by_hand`: v = 1, x = 1 + 1 = 2.
        // Component 1: v = 0.5·0 + (2·0.5)·(2 − 0) + (1·0.75)·(4 − 0) = 2 + 3 = 5, inside
        //   v_max = 8; x = 0 + 5 = 5, clipped to 4.
        // Component 2: v = 0.5·(−20) + 0 + 0 = −10 → clamped to −8; x = 3 − 8 = −5 → −4.
        // Component 3: unused (n = 3), stays 0.
        let x = [1.0f32, 0.0, 3.0, 9.0];
        let v = [2.0f32, 0.0, -20.0, 9.0];
        let pb = [3.0f32, 2.0, 3.0, 9.0];
        let gb = [-1.0f32, 4.0, 3.0, 9.0];
        let u1 = [q, 2 * q, q, q];
        let u2 = [2 * q, 3 * q, q, q];
        let (nx, nv) = step_chunk(
            &p,
            BoundPolicy::Clip,
            3,
            &x,
            &v,
            &pb,
            &gb,
            &lo,
            &hi,
            &u1,
            &u2,
            || unreachable!("no resampling under clip"),
        );
        assert_eq!(nv, [1.0, 5.0, -8.0, 0.0]);
        assert_eq!(nx, [2.0, 4.0, -4.0, 0.0]);
        // Without bounds the positions are free.
        let (nx, _) = step_chunk(
            &p,
            BoundPolicy::InitOnly,
            3,
            &x,
            &v,
            &pb,
            &gb,
            &lo,
            &hi,
            &u1,
            &u2,
            || [0; 4],
        );
        assert_eq!(nx, [2.0, 5.0, -5.0, 0.0]);
        // Resampling redraws only the components out of the domain: u = 0.5 → lo + 4 = 0.
        let (nx, _) = step_chunk(
            &p,
            BoundPolicy::Resample,
            3,
            &x,
            &v,
            &pb,
            &gb,
            &lo,
            &hi,
            &u1,
            &u2,
            || [2 * q; 4],
        );
        assert_eq!(nx, [2.0, 0.0, 0.0, 0.0]);
    }

    #[test]
    fn initial_velocity_spans_the_width() {
        // u = 0.75 on [−4, 4]: (0.75 − 0.5)·8 = 2.
        let q = 1u32 << 30;
        let v = init_velocity_chunk(&[3 * q, 2 * q, q, 0], 3, &[-4.0f32; 4], &[4.0f32; 4]);
        assert_eq!(v, [2.0, 0.0, -2.0, 0.0]);
    }
}
