//! The CEC 2017 bound-constrained benchmark suite, F1–F30.
//!
//! Source: N. H. Awad, M. Z. Ali, P. N. Suganthan, J. J. Liang, B. Y. Qu, *Problem
//! Definitions and Evaluation Criteria for the CEC 2017 Special Session and Competition
//! on Single Objective Real-Parameter Numerical Optimization*, technical report, NTU
//! Singapore, modified 15 October 2016 ("the report"), and the organisers' C reference
//! implementation `cec17_test_func.cpp` ("the reference"), which is what the
//! competition evaluated and which the published results were computed with. Where the
//! two disagree, this module computes what the reference computes (so that errors are
//! comparable with the published ones) and says so at the place, marked **Report vs
//! reference**. The list of all such places is in the section below.
//!
//! # Numbering
//!
//! The report of October 2016 lists 29 functions: it dropped the Sum of Different
//! Power function, which was the second function of the suite. The data files and the
//! reference keep the original numbers 1–30, and the competition's results are given in
//! those numbers (F2 excluded). This module uses the 30 numbers: F_n has optimum value
//! F_n* = 100·n, F2 is the Sum of Different Power function (`Σ |z_i|^i`), and the
//! report's function k ≥ 2 is F_(k+1) here.
//!
//! # Data
//!
//! Every function is `F_n(x) = g(x) + 100·n`, where `g` uses the official shift vectors
//! `o` (`shift_data_n.txt`), rotation matrices `M` (`M_n_Dd.txt`, row-major, `z = M·y`
//! meaning `z_i = Σ_j M[i][j] y_j`) and, for the hybrid functions, permutations `S`
//! (`shuffle_data_n_Dd.txt`). The functions take them as slices, laid out as
//! [`Data`] describes, so that the same code can run on the GPU from device buffers.
//! The host crate reads the files.
//!
//! # Arithmetic
//!
//! Every operation is written in the reference's order with the reference's constants
//! (for instance `(x − o)·(2.048/100)` with the quotient rounded first, sums from the
//! first component to the last, `100·t·t` as `(100·t)·t`), with `libm` for the
//! transcendental functions. In `f64` the values therefore agree with the reference
//! compiled by a C compiler to within the last-bit differences of the two maths
//! libraries (see the host crate's tests for the measured agreement). `pow(x, 2)` and
//! `pow(x, 0.5)` of the reference are written `x·x` and `sqrt(x)` (both correctly
//! rounded, as `pow` is for these exponents).
//!
//! # Report vs reference: the places where they differ
//!
//! 1. F6. The report's table calls it the Expanded Schaffer F6 function; its
//!    definition (eq. 24) is Schaffer's F7 of `M·(0.5(x − o)/100)` with terms
//!    `√s_i·(sin(50 s_i^0.2) + 1)`. The reference uses Schaffer's F7 with terms
//!    `√s_i + √s_i·sin²(50 s_i^0.2)` on `x − o` itself: no scaling, and no rotation (it
//!    reads the buffer that holds the shifted vector before rotation).
//! 2. F7, Lunacek bi-Rastrigin. Report: `y = 600(x − o)/100`, `z = Λ^100(x̂ − μ0)`.
//!    Reference: `y = 10(x − o)/100`, no Λ, and the cosine term uses `M·(x̂ − μ0)`
//!    while the two quadratic terms use the unrotated `x̂`.
//! 3. F8, non-continuous Rastrigin. Report: rounding of `|y_i| > 0.5` to halves,
//!    then `M1 Λ^10 M2 T_asy^0.2(T_osz(·))`. The reference rounds a buffer that its
//!    shift step then overwrites, and applies neither Λ nor T_asy nor T_osz: F8 is the
//!    shifted and rotated Rastrigin function (scaling 5.12/100), with F8's own data.
//! 4. F9, Levy. Report: scaling 5.12/100; reference: none. With `w_i = 1 + (z_i − 1)/4`
//!    the minimum is at `z = (1, …, 1)`, i.e. at `x = o + Mᵀ·1`, not at `o`: F9(o) > F9*.
//! 5. F10, Schwefel. The report's equation has no rotation; the reference rotates by
//!    `M_10`. The constant is 418.9828872724338 (report: 418.9829).
//! 6. Hybrid functions (F11–F20). Report: `z = M(x − o)` permuted, each part by its own
//!    matrix. Reference: one rotation of `x − o` by `M_n`, then the permutation, and
//!    each part scaled by its basic function's factor. Further, in the reference:
//!    - F13's Lunacek part takes `sign(o_i)` from the first entries of the shift
//!      vector, not from the entries of its own variables;
//!    - F14's and F20's Schaffer F7 part is evaluated on the first `n_g` entries of the
//!      permuted vector (the start of the buffer), not on its own `n_g` entries;
//!    - F20's first part is HGBat (the report says HappyCat).
//! 7. Composition functions (F21–F30). F26's λ in the report, `[1e-26, 10, 1e-6, 10,
//!    5e-4]`, does not belong to its parts; the reference uses `[5e-4, 1, 10, 1, 10]`.
//!    The reference writes each λ as a quotient, e.g. `10000·g/1e10` for 1e-6, and
//!    computes it so. When `x = o_i` exactly, `w_i` is 1e99 rather than infinite
//!    (so `ω_i` is 1 up to rounding); when every `w_i` underflows to 0, all `ω_i` are
//!    `1/N` (the report says nothing of either case).
//! 8. The report names F28 "Composition Function 10" and F29 "Composition Function 9";
//!    their parts (F28: hybrids 5, 6, 7 of the report = F15, F16, F17 here; F29: 5, 8,
//!    9 = F15, F18, F19) agree with the reference's F29 and F30.

use crate::real::Real;

mod basic;
mod composition;
mod hybrid;
#[cfg(test)]
mod tests;

use basic::{Basic, LUNACEK_SCALE, lunacek, schaffer_f7};
use composition::composition;
use hybrid::hybrid;
pub use hybrid::hybrid_part_sizes;

/// Number of functions, F1 to F30.
pub const COUNT: u32 = 30;

/// The dimensions the official data cover for every function.
pub const DIMENSIONS: [usize; 4] = [10, 30, 50, 100];

/// The lower and upper bound of every variable.
pub const BOUND: f64 = 100.0;

/// The optimum value F_n* = 100·n.
#[inline(always)]
pub fn f_star<T: Real>(n: u32) -> T {
    T::of_u32(100 * n)
}

/// How many shift vectors and rotation matrices F_n uses: one for F1–F20, one per part
/// for the compositions.
pub const fn components(n: u32) -> usize {
    match n {
        21 | 22 | 29 | 30 => 3,
        23 | 24 => 4,
        25 | 26 => 5,
        27 | 28 => 6,
        _ => 1,
    }
}

/// How many permutations of `0..D` F_n uses (F11–F20: one; F29, F30: one per part).
pub const fn shuffles(n: u32) -> usize {
    match n {
        11..=20 => 1,
        29 | 30 => 3,
        _ => 0,
    }
}

/// The length of the scratch buffer [`evaluate`] needs at dimension `dim`.
pub const fn scratch_len(dim: usize) -> usize {
    3 * dim
}

/// The official data of one function at one dimension `D`.
///
/// - `shift`: [`components`]`(n)` vectors of `D` values, one after the other (the first
///   `D` values of each row of `shift_data_n.txt`);
/// - `rotation`: [`components`]`(n)` matrices of `D × D` values, each row-major;
/// - `shuffle`: [`shuffles`]`(n)` permutations of `0..D`, **zero-based** (the files
///   count from 1), one after the other; empty for functions without one.
#[derive(Clone, Copy, Debug)]
pub struct Data<'a, T> {
    pub shift: &'a [T],
    pub rotation: &'a [T],
    pub shuffle: &'a [u32],
}

/// F_n(x) for n in 1..=30, optimum value included. `x.len()` is the dimension `D`;
/// `data` must hold F_n's data at that dimension and `scratch` at least
/// [`scratch_len`]`(D)` values (its contents are overwritten). Returns NaN for an `n`
/// out of range.
///
/// Panics when a slice is shorter than the layout of [`Data`] requires.
pub fn evaluate<T: Real>(n: u32, x: &[T], data: &Data<'_, T>, scratch: &mut [T]) -> T {
    let d = x.len();
    let o = data.shift;
    let m = data.rotation;
    let s = data.shuffle;
    let g = match n {
        1 => rotated(Basic::BentCigar, x, o, m, scratch),
        2 => rotated(Basic::SumDiffPow, x, o, m, scratch),
        3 => rotated(Basic::Zakharov, x, o, m, scratch),
        4 => rotated(Basic::Rosenbrock, x, o, m, scratch),
        5 => rotated(Basic::Rastrigin, x, o, m, scratch),
        6 => {
            // Report vs reference, item 1: x − o, neither scaled nor rotated.
            let y = &mut scratch[..d];
            let mut i = 0;
            while i < d {
                y[i] = x[i] - o[i];
                i += 1;
            }
            schaffer_f7(y)
        }
        7 => {
            let (t, _) = scratch.split_at_mut(d);
            let mut i = 0;
            while i < d {
                t[i] = (x[i] - o[i]) * T::of(LUNACEK_SCALE);
                i += 1;
            }
            lunacek(t, &o[..d], Some(&m[..d * d]))
        }
        // Report vs reference, item 3: the plain shifted and rotated Rastrigin function.
        8 => rotated(Basic::Rastrigin, x, o, m, scratch),
        9 => rotated(Basic::Levy, x, o, m, scratch),
        10 => rotated(Basic::Schwefel, x, o, m, scratch),
        11..=20 => hybrid(n, x, o, m, s, scratch),
        21..=30 => composition(n, x, data, scratch),
        _ => return T::of(f64::NAN),
    };
    g + f_star(n)
}

// ---------------------------------------------------------------------------------
// Transformations.

/// Row `i` of the `n × n` matrix `m` times `v`, summed from the first column.
#[inline(always)]
fn row_dot<T: Real>(m: &[T], i: usize, v: &[T]) -> T {
    let n = v.len();
    let row = &m[i * n..i * n + n];
    let mut s = T::ZERO;
    let mut j = 0;
    while j < n {
        s = s + v[j] * row[j];
        j += 1;
    }
    s
}

/// `out = M·((x − o)·scale)`, using `tmp` for the scaled shift.
fn shift_rotate<T: Real>(x: &[T], o: &[T], m: &[T], scale: T, tmp: &mut [T], out: &mut [T]) {
    let n = x.len();
    let mut i = 0;
    while i < n {
        tmp[i] = (x[i] - o[i]) * scale;
        i += 1;
    }
    i = 0;
    while i < n {
        out[i] = row_dot(m, i, &tmp[..n]);
        i += 1;
    }
}

/// `b(M·((x − o)·scale_b))`: a basic function shifted and rotated by one function's (or
/// one composition part's) data.
fn rotated<T: Real>(b: Basic, x: &[T], o: &[T], m: &[T], scratch: &mut [T]) -> T {
    let n = x.len();
    let (tmp, rest) = scratch.split_at_mut(n);
    let z = &mut rest[..n];
    shift_rotate(x, &o[..n], &m[..n * n], T::of(b.scale()), tmp, z);
    b.eval(z)
}
