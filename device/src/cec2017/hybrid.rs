//! Hybrid functions.

use super::basic::{Basic, LUNACEK_SCALE, lunacek, schaffer_f7};
use super::*;
use crate::real::Real;

/// A part of a hybrid function.
#[derive(Clone, Copy, Debug)]
pub(super) enum Part {
    Basic(Basic),
    /// Report vs reference, item 6: evaluated on the first `n_g` permuted entries.
    SchafferF7,
    /// Report vs reference, item 6: signs from the first `n_g` shift entries.
    Lunacek,
}

use Basic as B;

/// F11–F20: the shares `p_g` in tenths and the parts.
pub(super) fn hybrid_spec(n: u32) -> (&'static [u32], &'static [Part]) {
    match n {
        11 => (
            &[2, 4, 4],
            &[
                Part::Basic(B::Zakharov),
                Part::Basic(B::Rosenbrock),
                Part::Basic(B::Rastrigin),
            ],
        ),
        12 => (
            &[3, 3, 4],
            &[
                Part::Basic(B::Elliptic),
                Part::Basic(B::Schwefel),
                Part::Basic(B::BentCigar),
            ],
        ),
        13 => (
            &[3, 3, 4],
            &[
                Part::Basic(B::BentCigar),
                Part::Basic(B::Rosenbrock),
                Part::Lunacek,
            ],
        ),
        14 => (
            &[2, 2, 2, 4],
            &[
                Part::Basic(B::Elliptic),
                Part::Basic(B::Ackley),
                Part::SchafferF7,
                Part::Basic(B::Rastrigin),
            ],
        ),
        15 => (
            &[2, 2, 3, 3],
            &[
                Part::Basic(B::BentCigar),
                Part::Basic(B::HgBat),
                Part::Basic(B::Rastrigin),
                Part::Basic(B::Rosenbrock),
            ],
        ),
        16 => (
            &[2, 2, 3, 3],
            &[
                Part::Basic(B::ExpandedSchaffer6),
                Part::Basic(B::HgBat),
                Part::Basic(B::Rosenbrock),
                Part::Basic(B::Schwefel),
            ],
        ),
        17 => (
            &[1, 2, 2, 2, 3],
            &[
                Part::Basic(B::Katsuura),
                Part::Basic(B::Ackley),
                Part::Basic(B::GriewankRosenbrock),
                Part::Basic(B::Schwefel),
                Part::Basic(B::Rastrigin),
            ],
        ),
        18 => (
            &[2, 2, 2, 2, 2],
            &[
                Part::Basic(B::Elliptic),
                Part::Basic(B::Ackley),
                Part::Basic(B::Rastrigin),
                Part::Basic(B::HgBat),
                Part::Basic(B::Discus),
            ],
        ),
        19 => (
            &[2, 2, 2, 2, 2],
            &[
                Part::Basic(B::BentCigar),
                Part::Basic(B::Rastrigin),
                Part::Basic(B::GriewankRosenbrock),
                Part::Basic(B::Weierstrass),
                Part::Basic(B::ExpandedSchaffer6),
            ],
        ),
        // Report vs reference, item 6: the first part is HGBat, not HappyCat.
        _ => (
            &[1, 1, 2, 2, 2, 2],
            &[
                Part::Basic(B::HgBat),
                Part::Basic(B::Katsuura),
                Part::Basic(B::Ackley),
                Part::Basic(B::Rastrigin),
                Part::Basic(B::Schwefel),
                Part::SchafferF7,
            ],
        ),
    }
}

/// The size of part `g` of a hybrid function at dimension `dim`: `⌈p_g·D⌉` for all but
/// the last part, which takes the rest. (The reference computes `ceil(p·D)` in
/// floating point; for D a multiple of 10, as all official dimensions are, `p·D` rounds
/// to the exact integer, so the integer form here is the same.)
pub fn hybrid_part_sizes(n: u32, dim: usize) -> ([usize; 6], usize) {
    let (tenths, _) = hybrid_spec(n);
    let mut sizes = [0usize; 6];
    let mut used = 0;
    let mut g = 0;
    while g + 1 < tenths.len() {
        sizes[g] = (tenths[g] as usize * dim).div_ceil(10);
        used += sizes[g];
        g += 1;
    }
    sizes[g] = dim.saturating_sub(used);
    (sizes, tenths.len())
}

/// Hybrid function `n` (11..=20) of `x` with shift `o`, rotation `m` and zero-based
/// permutation `s`, without the optimum value.
pub(super) fn hybrid<T: Real>(
    n: u32,
    x: &[T],
    o: &[T],
    m: &[T],
    s: &[u32],
    scratch: &mut [T],
) -> T {
    let d = x.len();
    let (_, parts) = hybrid_spec(n);
    let (sizes, count) = hybrid_part_sizes(n, d);
    let (a, rest) = scratch.split_at_mut(d);
    let (b, rest) = rest.split_at_mut(d);
    let c = &mut rest[..d];
    shift_rotate(x, &o[..d], &m[..d * d], T::ONE, a, b);
    let mut i = 0;
    while i < d {
        c[i] = b[s[i] as usize];
        i += 1;
    }
    let mut f = T::ZERO;
    let mut start = 0;
    let mut g = 0;
    while g < count {
        let k = sizes[g];
        let v = &c[start..start + k];
        let t = &mut a[..k];
        let fg = match parts[g] {
            Part::Basic(bf) => {
                let scale = T::of(bf.scale());
                let mut i = 0;
                while i < k {
                    t[i] = v[i] * scale;
                    i += 1;
                }
                bf.eval(t)
            }
            Part::SchafferF7 => schaffer_f7(&c[..k]),
            Part::Lunacek => {
                let mut i = 0;
                while i < k {
                    t[i] = v[i] * T::of(LUNACEK_SCALE);
                    i += 1;
                }
                lunacek(t, &o[..k], None)
            }
        };
        f = f + fg;
        start += k;
        g += 1;
    }
    f
}
