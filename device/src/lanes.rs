//! How a vector is spread over a group of lanes, and the CPU's lane-by-lane run of
//! the canonical evaluation.
//!
//! The group width `G` depends only on the dimension: the smallest power of two with
//! `4G ≥ D`, at most 32 (one warp). A vector of D components takes
//! `rounds(D) = ⌈D / 4G⌉` rounds; in round `c` lane `l` owns the four components from
//! `4(cG + l)`.

use crate::functions::{Acc, BuiltinObjective, Formula, Function, LaneIn, lane_consts, lane_total};
use crate::real::Real;

/// An objective as a group of lanes evaluates it: per-lane accumulators that start at
/// [`identity`](LaneObjective::identity), take each round's chunk by
/// [`accumulate`](LaneObjective::accumulate), combine across the group by the xor
/// butterfly ([`combine`](LaneObjective::combine)) and give the value by
/// [`finish`](LaneObjective::finish). The built-in functions
/// ([`BuiltinObjective`]) and a user's separable objective
/// ([`crate::separable::SepLanes`] on the CPU, the linked symbols on the GPU) are the
/// two kinds; the kernels and [`partial_of`] run any of them in the same order.
pub trait LaneObjective<T: Real>: Copy {
    /// Every lane's accumulators before the first round.
    fn identity(&self) -> Acc<T>;
    /// The per-chunk constants the kernels hoist out of their loops (see
    /// [`lane_consts`]); zeros where the objective has none.
    fn consts(&self, j0: u32) -> [T; 4];
    /// Adds one lane's chunk of one round to `acc` (`kc` from [`LaneObjective::consts`]).
    fn accumulate(&self, acc: &mut Acc<T>, li: &LaneIn<T>, dim: u32, kc: &[T; 4]);
    /// Two lanes' accumulators combined (commutative bit for bit).
    fn combine(&self, x: Acc<T>, y: Acc<T>) -> Acc<T>;
    /// Whether the second accumulator is used (the group shuffles it only then).
    fn uses_b(&self) -> bool;
    /// The value from the group's combined accumulators.
    fn finish(&self, acc: Acc<T>, dim: u32) -> T;
    /// Does a lane read the component before its chunk (`LaneIn::prev`)?
    fn needs_prev(&self) -> bool;
    /// Does a lane read the sum of the components before its chunk (`LaneIn::base`)?
    fn needs_prefix(&self) -> bool;
}

/// Components per lane per round (one 16-byte load of `f32`).
pub const PER_LANE: u32 = 4;
/// The widest group: a warp.
pub const MAX_GROUP: u32 = 32;

/// Runs `$body` for a lane's components 0, 1, 2 and 3, in that order, with `$k` bound
/// to each as a constant once compiled. A `while k < 4` loop whose body holds a branch
/// (the sine's far reduction) stays a loop on the GPU, where indexing a chunk's
/// registers with its counter then costs a chain of compares and selects per component.
/// The GPU gets a closure called four times ([`each_component_fn`], inlined there: the
/// faster of the forms measured, see docs/PERFORMANCE-HISTORY.md); the CPU gets the body written out
/// four times, as it does not always inline such a closure, and each call then pays for
/// its captured state (2.7 times slower). The operations and their order are the same.
#[macro_export]
#[doc(hidden)]
macro_rules! each_component {
    ($k:ident => $body:block) => {{
        #[cfg(target_arch = "nvptx64")]
        $crate::lanes::each_component_fn(|$k: usize| $body);
        #[cfg(not(target_arch = "nvptx64"))]
        {
            {
                let $k: usize = 0;
                $body
            }
            {
                let $k: usize = 1;
                $body
            }
            {
                let $k: usize = 2;
                $body
            }
            {
                let $k: usize = 3;
                $body
            }
        }
    }};
}

/// `f(0)`, `f(1)`, `f(2)`, `f(3)`: [`each_component!`] on the GPU.
#[inline(always)]
pub fn each_component_fn(mut f: impl FnMut(usize)) {
    f(0);
    f(1);
    f(2);
    f(3);
}

/// Lanes that serve one individual.
#[inline(always)]
pub const fn group_width(dim: u32) -> u32 {
    // The smallest power of two ≥ need, capped: a few instructions where a doubling
    // loop costs one round trip per doubling (kernels compute it per individual).
    let need = dim.div_ceil(PER_LANE);
    if need >= MAX_GROUP {
        MAX_GROUP
    } else {
        need.next_power_of_two()
    }
}

/// Rounds a group needs for one vector.
#[inline(always)]
pub const fn rounds(dim: u32) -> u32 {
    dim.div_ceil(PER_LANE * group_width(dim))
}

/// Row length in memory: the dimension rounded up to whole chunks of four.
#[inline(always)]
pub const fn stride(dim: u32) -> u32 {
    dim.div_ceil(PER_LANE) * PER_LANE
}

/// First component of lane `l` in round `c`, and how many components it owns.
#[inline(always)]
pub const fn chunk(dim: u32, g: u32, c: u32, l: u32) -> (u32, u32) {
    let j0 = PER_LANE * (c * g + l);
    let n = if j0 >= dim {
        0
    } else if dim - j0 < PER_LANE {
        dim - j0
    } else {
        PER_LANE
    };
    (j0, n)
}

/// The objective value of `x`, computed exactly as a group of lanes on the GPU does.
#[inline(always)]
pub fn evaluate<T: Real>(f: Function, formula: Formula, x: &[T]) -> T {
    evaluate_with(f, formula, x, |j0| lane_consts(f, j0))
}

/// [`evaluate`] with the per-chunk constants of [`lane_consts`] supplied by the caller
/// (`kc(j0)`), so that an engine evaluating many vectors computes them once.
#[inline(always)]
pub fn evaluate_with<T: Real>(
    f: Function,
    formula: Formula,
    x: &[T],
    kc: impl Fn(u32) -> [T; 4],
) -> T {
    evaluate_of_with(BuiltinObjective { f, formula }, x, kc)
}

/// The value of `x` under any [`LaneObjective`], computed exactly as a group of lanes
/// on the GPU does (for a built-in, [`evaluate`]).
#[inline(always)]
pub fn evaluate_of<T: Real, O: LaneObjective<T>>(o: O, x: &[T]) -> T {
    evaluate_of_with(o, x, |j0| o.consts(j0))
}

/// [`evaluate_of`] with the per-chunk constants supplied by the caller.
#[inline(always)]
pub fn evaluate_of_with<T: Real, O: LaneObjective<T>>(
    o: O,
    x: &[T],
    kc: impl Fn(u32) -> [T; 4],
) -> T {
    let dim = x.len() as u32;
    o.finish(partial_of(o, x, 0, dim, T::ZERO, T::ZERO, kc), dim)
}

/// [`partial_of`] for a built-in function.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub fn partial<T: Real>(
    f: Function,
    formula: Formula,
    x: &[T],
    j_start: u32,
    dim: u32,
    prev: T,
    base: T,
    kc: impl Fn(u32) -> [T; 4],
) -> Acc<T> {
    partial_of(
        BuiltinObjective { f, formula },
        x,
        j_start,
        dim,
        prev,
        base,
        kc,
    )
}

/// The combined sums of a piece of a vector: `x` holds components
/// `j_start .. j_start + x.len()` of a `dim`-dimensional vector (`j_start` a multiple of
/// [`PER_LANE`]), `prev` is component `j_start − 1` (unused when `j_start = 0`) and
/// `base` the sum of components `0 .. j_start` (only for objectives that
/// [need a prefix](LaneObjective::needs_prefix)). The piece is spread over its own group
/// (width [`group_width`] of its length) exactly as a whole vector is; for the whole
/// vector (`j_start = 0`, `prev = base = 0`) this is [`evaluate_of`] before the finish.
/// Pieces combine with [`LaneObjective::combine`]. Every lane's `prev` is set here; an
/// objective that does not [need it](LaneObjective::needs_prev) must not read it (the
/// kernels pass 0 then).
#[allow(clippy::needless_range_loop, clippy::too_many_arguments)] // lane-indexed, as the warp runs it
#[inline(always)]
pub fn partial_of<T: Real, O: LaneObjective<T>>(
    o: O,
    x: &[T],
    j_start: u32,
    dim: u32,
    prev: T,
    base: T,
    kc: impl Fn(u32) -> [T; 4],
) -> Acc<T> {
    let width = x.len() as u32;
    let g = group_width(width);
    let gu = g as usize;
    let mut acc = [o.identity(); MAX_GROUP as usize];
    if !o.needs_prefix() {
        // Without the prefix scan each lane needs only its own chunk and the component
        // before it (the previous lane's last one, or the previous round's, or `prev`):
        // no per-round array of the lanes' inputs. Lanes past the end own nothing and
        // keep the identity, as on the GPU.
        for c in 0..rounds(width) {
            for l in 0..gu {
                let (j0, n) = chunk(width, g, c, l as u32);
                if n == 0 {
                    continue;
                }
                let li = LaneIn {
                    v: crate::adaptive_gen::chunk4(x, j0 as usize),
                    j0: j_start + j0,
                    n,
                    prev: if j0 == 0 { prev } else { x[j0 as usize - 1] },
                    base: T::ZERO,
                };
                o.accumulate(&mut acc[l], &li, dim, &kc(li.j0));
            }
        }
        return butterfly_of(&mut acc[..gu], o);
    }
    let mut carry_last = prev;
    let mut carry_sum = base;
    let mut ins = [LaneIn {
        v: [T::ZERO; 4],
        j0: 0,
        n: 0,
        prev: T::ZERO,
        base: T::ZERO,
    }; MAX_GROUP as usize];
    for c in 0..rounds(width) {
        for l in 0..gu {
            let (j0, n) = chunk(width, g, c, l as u32);
            let mut v = [T::ZERO; 4];
            for k in 0..n as usize {
                v[k] = x[j0 as usize + k];
            }
            ins[l] = LaneIn {
                v,
                j0: j_start + j0,
                n,
                prev: T::ZERO,
                base: T::ZERO,
            };
        }
        for l in 0..gu {
            ins[l].prev = if l == 0 { carry_last } else { ins[l - 1].v[3] };
        }
        if o.needs_prefix() {
            let mut incl = [T::ZERO; MAX_GROUP as usize];
            for l in 0..gu {
                incl[l] = lane_total(&ins[l]);
            }
            scan_inclusive(&mut incl[..gu]);
            for l in 0..gu {
                let excl = if l == 0 { T::ZERO } else { incl[l - 1] };
                ins[l].base = carry_sum + excl;
            }
            carry_sum = carry_sum + incl[gu - 1];
        }
        for l in 0..gu {
            o.accumulate(&mut acc[l], &ins[l], dim, &kc(ins[l].j0));
        }
        carry_last = ins[gu - 1].v[3];
    }
    butterfly_of(&mut acc[..gu], o)
}

/// Hillis–Steele inclusive scan, in the order the warp-shuffle scan adds.
#[inline(always)]
pub fn scan_inclusive<T: Real>(x: &mut [T]) {
    let g = x.len();
    let mut d = 1;
    while d < g {
        let old: [T; MAX_GROUP as usize] =
            core::array::from_fn(|i| x.get(i).copied().unwrap_or(T::ZERO));
        for l in d..g {
            x[l] = old[l - d] + old[l];
        }
        d *= 2;
    }
}

/// The xor-butterfly combination of the lanes' sums, as the warp does it.
#[inline(always)]
pub fn butterfly<T: Real>(acc: &mut [Acc<T>], f: Function, formula: Formula) -> Acc<T> {
    butterfly_of(acc, BuiltinObjective { f, formula })
}

/// [`butterfly`] for any [`LaneObjective`]: lane 0's value after the warp's xor
/// butterfly. At each level the warp's lane `l` combines its own value with lane `l ^ m`'s;
/// as the combination is commutative bit for bit, lanes `l` and `l ^ m` then hold the
/// same value, so the lower half alone carries every value lane 0 will read: it is
/// computed in place, half as many combinations and no copies.
#[inline(always)]
pub fn butterfly_of<T: Real, O: LaneObjective<T>>(acc: &mut [Acc<T>], o: O) -> Acc<T> {
    let mut m = acc.len() / 2;
    while m >= 1 {
        for l in 0..m {
            acc[l] = o.combine(acc[l], acc[l + m]);
        }
        m /= 2;
    }
    acc[0]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The in-place halving gives lane 0's value of the warp's butterfly, which every
    /// lane computes from copies of the previous level.
    #[test]
    fn butterfly_is_the_warps_lane_zero() {
        let mut w = 0x9e37_79b9u32;
        let mut next = || {
            w ^= w << 13;
            w ^= w >> 17;
            w ^= w << 5;
            (w as f32 / u32::MAX as f32) * 3.0 - 1.0
        };
        for f in [Function::Griewank, Function::Ackley, Function::Sphere] {
            for formula in [Formula::Exact, Formula::Textbook] {
                for g in [1usize, 2, 4, 8, 16, 32] {
                    let lanes: Vec<Acc<f32>> = (0..g)
                        .map(|_| Acc {
                            a: next(),
                            b: next(),
                        })
                        .collect();
                    let mut warp = lanes.clone();
                    let mut m = g / 2;
                    while m >= 1 {
                        let old = warp.clone();
                        for l in 0..g {
                            warp[l] = old[l].combine(old[l ^ m], f, formula);
                        }
                        m /= 2;
                    }
                    assert!(warp.iter().all(|a| a.a.to_bits() == warp[0].a.to_bits()));
                    let mut acc = lanes.clone();
                    let got = butterfly(&mut acc, f, formula);
                    assert_eq!(
                        got.a.to_bits(),
                        warp[0].a.to_bits(),
                        "{f:?} {formula:?} {g}"
                    );
                    assert_eq!(
                        got.b.to_bits(),
                        warp[0].b.to_bits(),
                        "{f:?} {formula:?} {g}"
                    );
                }
            }
        }
    }

    #[test]
    fn groups_cover_every_component_once() {
        for dim in 1..300u32 {
            let g = group_width(dim);
            assert!(g.is_power_of_two() && g <= MAX_GROUP);
            assert!(g == MAX_GROUP || 4 * g >= dim, "{dim}");
            let mut seen = vec![0u32; dim as usize];
            for c in 0..rounds(dim) {
                for l in 0..g {
                    let (j0, n) = chunk(dim, g, c, l);
                    for k in 0..n {
                        seen[(j0 + k) as usize] += 1;
                    }
                    assert!(j0 + n <= stride(dim) || n == 0);
                }
            }
            assert!(seen.iter().all(|&s| s == 1), "dim {dim}");
        }
    }

    #[test]
    fn scan_matches_prefix_sums() {
        let mut x: Vec<f64> = (1..=13).map(|v| v as f64).collect();
        scan_inclusive(&mut x);
        let want: Vec<f64> = (1..=13).map(|v| (v * (v + 1) / 2) as f64).collect();
        assert_eq!(x, want);
    }
}
