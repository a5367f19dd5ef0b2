//! Composition functions.

use super::basic::{Basic, Basic as B};
use super::hybrid::hybrid;
use super::*;
use crate::real::Real;

/// A part of a composition function: a basic function shifted and rotated by the
/// part's data, or a hybrid function (F29, F30).
#[derive(Clone, Copy, Debug)]
pub(super) enum Comp {
    Rotated(Basic),
    Hybrid(u32),
}

/// One part of a composition: what, `λ` as the reference's quotient `num·g/den`
/// (`None` for 1), and `σ`. The bias of part `i` is `100·i`.
pub(super) type CompPart = (Comp, Option<(f64, f64)>, f64);

pub(super) const L_1E_6: Option<(f64, f64)> = Some((10000.0, 1e10));
pub(super) const L_10: Option<(f64, f64)> = Some((1000.0, 100.0));
pub(super) const L_10B: Option<(f64, f64)> = Some((10000.0, 1e3));
pub(super) const L_1: Option<(f64, f64)> = Some((1000.0, 1e3));
pub(super) const L_5E_4: Option<(f64, f64)> = Some((10000.0, 2e7));

pub(super) fn composition_spec(n: u32) -> &'static [CompPart] {
    use Comp::{Hybrid as H, Rotated as R};
    match n {
        21 => &[
            (R(B::Rosenbrock), None, 10.0),
            (R(B::Elliptic), L_1E_6, 20.0),
            (R(B::Rastrigin), None, 30.0),
        ],
        22 => &[
            (R(B::Rastrigin), None, 10.0),
            (R(B::Griewank), L_10, 20.0),
            (R(B::Schwefel), None, 30.0),
        ],
        23 => &[
            (R(B::Rosenbrock), None, 10.0),
            (R(B::Ackley), L_10, 20.0),
            (R(B::Schwefel), None, 30.0),
            (R(B::Rastrigin), None, 40.0),
        ],
        24 => &[
            (R(B::Ackley), L_10, 10.0),
            (R(B::Elliptic), L_1E_6, 20.0),
            (R(B::Griewank), L_10, 30.0),
            (R(B::Rastrigin), None, 40.0),
        ],
        25 => &[
            (R(B::Rastrigin), L_10B, 10.0),
            (R(B::HappyCat), L_1, 20.0),
            (R(B::Ackley), L_10, 30.0),
            (R(B::Discus), L_1E_6, 40.0),
            (R(B::Rosenbrock), None, 50.0),
        ],
        // Report vs reference, item 7: λ = [5e-4, 1, 10, 1, 10].
        26 => &[
            (R(B::ExpandedSchaffer6), L_5E_4, 10.0),
            (R(B::Schwefel), None, 20.0),
            (R(B::Griewank), L_10, 20.0),
            (R(B::Rosenbrock), None, 30.0),
            (R(B::Rastrigin), L_10B, 40.0),
        ],
        27 => &[
            (R(B::HgBat), Some((10000.0, 1000.0)), 10.0),
            (R(B::Rastrigin), L_10B, 20.0),
            (R(B::Schwefel), Some((10000.0, 4e3)), 30.0),
            (R(B::BentCigar), Some((10000.0, 1e30)), 40.0),
            (R(B::Elliptic), L_1E_6, 50.0),
            (R(B::ExpandedSchaffer6), L_5E_4, 60.0),
        ],
        28 => &[
            (R(B::Ackley), L_10, 10.0),
            (R(B::Griewank), L_10, 20.0),
            (R(B::Discus), L_1E_6, 30.0),
            (R(B::Rosenbrock), None, 40.0),
            (R(B::HappyCat), L_1, 50.0),
            (R(B::ExpandedSchaffer6), L_5E_4, 60.0),
        ],
        29 => &[
            (H(15), None, 10.0),
            (H(16), None, 30.0),
            (H(17), None, 50.0),
        ],
        _ => &[
            (H(15), None, 10.0),
            (H(18), None, 30.0),
            (H(19), None, 50.0),
        ],
    }
}

/// Composition function `n` (21..=30), without the optimum value (eqs. 30, 31).
pub(super) fn composition<T: Real>(n: u32, x: &[T], data: &Data<'_, T>, scratch: &mut [T]) -> T {
    let d = x.len();
    let parts = composition_spec(n);
    let count = parts.len();
    let nf = T::of_u32(d as u32);
    // The reference's "infinite" weight of a part whose optimum is x itself: 1e99, or
    // the largest finite value where that overflows (f32).
    let big = if T::of(1e99) == T::INFINITY {
        T::of(f32::MAX as f64)
    } else {
        T::of(1e99)
    };
    let mut fit = [T::ZERO; 6];
    let mut w = [T::ZERO; 6];
    let mut w_max = T::ZERO;
    let mut i = 0;
    while i < count {
        let (what, lambda, sigma) = parts[i];
        let o = &data.shift[i * d..i * d + d];
        let m = &data.rotation[i * d * d..(i + 1) * d * d];
        let g = match what {
            Comp::Rotated(b) => rotated(b, x, o, m, scratch),
            Comp::Hybrid(h) => {
                let s = &data.shuffle[i * d..i * d + d];
                hybrid(h, x, o, m, s, scratch)
            }
        };
        let g = match lambda {
            Some((num, den)) => T::of(num) * g / T::of(den),
            None => g,
        };
        fit[i] = g + T::of_u32(100 * i as u32);
        let mut s = T::ZERO;
        let mut j = 0;
        while j < d {
            let t = x[j] - o[j];
            s = s + t * t;
            j += 1;
        }
        w[i] = if s != T::ZERO {
            let sig = T::of(sigma);
            (T::ONE / s).sqrt() * (-s / T::of(2.0) / nf / (sig * sig)).exp()
        } else {
            big
        };
        if w[i] > w_max {
            w_max = w[i];
        }
        i += 1;
    }
    let mut w_sum = T::ZERO;
    i = 0;
    while i < count {
        w_sum = w_sum + w[i];
        i += 1;
    }
    if w_max == T::ZERO {
        i = 0;
        while i < count {
            w[i] = T::ONE;
            i += 1;
        }
        w_sum = T::of_u32(count as u32);
    }
    let mut f = T::ZERO;
    i = 0;
    while i < count {
        f = f + w[i] / w_sum * fit[i];
        i += 1;
    }
    f
}
