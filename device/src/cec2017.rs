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
// Basic functions. Each takes the transformed vector z (shifted, scaled, rotated as the
// function using it requires) and returns the basic function's value.

/// The basic functions that a function applies to a prepared vector.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Basic {
    BentCigar,
    SumDiffPow,
    Zakharov,
    Rosenbrock,
    Rastrigin,
    Levy,
    Schwefel,
    Elliptic,
    Discus,
    Ackley,
    Weierstrass,
    Griewank,
    Katsuura,
    HappyCat,
    HgBat,
    GriewankRosenbrock,
    ExpandedSchaffer6,
}

/// Lunacek bi-Rastrigin's scaling, `10/100` (report vs reference, item 2).
const LUNACEK_SCALE: f64 = 10.0 / 100.0;

impl Basic {
    /// The factor by which the reference scales `x − o` (or a hybrid's part) before the
    /// rotation, as the reference writes it: the quotient rounded to f64.
    fn scale(self) -> f64 {
        match self {
            Basic::Rosenbrock => 2.048 / 100.0,
            Basic::Rastrigin => 5.12 / 100.0,
            Basic::Schwefel => 1000.0 / 100.0,
            Basic::Weierstrass => 0.5 / 100.0,
            Basic::Griewank => 600.0 / 100.0,
            Basic::Katsuura | Basic::HappyCat | Basic::HgBat | Basic::GriewankRosenbrock => {
                5.0 / 100.0
            }
            _ => 1.0,
        }
    }

    fn eval<T: Real>(self, z: &[T]) -> T {
        match self {
            Basic::BentCigar => bent_cigar(z),
            Basic::SumDiffPow => sum_diff_pow(z),
            Basic::Zakharov => zakharov(z),
            Basic::Rosenbrock => rosenbrock(z),
            Basic::Rastrigin => rastrigin(z),
            Basic::Levy => levy(z),
            Basic::Schwefel => schwefel(z),
            Basic::Elliptic => elliptic(z),
            Basic::Discus => discus(z),
            Basic::Ackley => ackley(z),
            Basic::Weierstrass => weierstrass(z),
            Basic::Griewank => griewank(z),
            Basic::Katsuura => katsuura(z),
            Basic::HappyCat => happy_cat(z),
            Basic::HgBat => hgbat(z),
            Basic::GriewankRosenbrock => griewank_rosenbrock(z),
            Basic::ExpandedSchaffer6 => expanded_schaffer6(z),
        }
    }
}

#[inline(always)]
fn two_pi<T: Real>() -> T {
    T::of(2.0) * T::PI
}

/// `z_1² + 10⁶ Σ_{i≥2} z_i²` (report eq. 1).
fn bent_cigar<T: Real>(z: &[T]) -> T {
    let mut f = z[0] * z[0];
    let mut i = 1;
    while i < z.len() {
        f = f + T::of(1e6) * z[i] * z[i];
        i += 1;
    }
    f
}

/// The Sum of Different Power function (F2; not in the report of October 2016, see the
/// numbering note): `Σ_{i=1}^{D} |z_i|^i` as the reference computes it (`pow(|z_i|, i+1)`
/// with its `i` counted from 0; the function's usual definition, `Σ |z_i|^(i+1)` with
/// `i` from 1, has exponents 2..D+1).
fn sum_diff_pow<T: Real>(z: &[T]) -> T {
    let mut f = T::ZERO;
    let mut i = 0;
    while i < z.len() {
        f = f + z[i].abs().powf(T::of_u32(i as u32 + 1));
        i += 1;
    }
    f
}

/// `Σ z_i² + (Σ 0.5 i z_i)² + (Σ 0.5 i z_i)⁴` (eq. 2; `i` from 1: the reference's
/// `0.5·(i+1)` with `i` from 0, and so is the report's intent).
fn zakharov<T: Real>(z: &[T]) -> T {
    let mut s1 = T::ZERO;
    let mut s2 = T::ZERO;
    let mut i = 0;
    while i < z.len() {
        s1 = s1 + z[i] * z[i];
        s2 = s2 + T::of(0.5) * T::of_u32(i as u32 + 1) * z[i];
        i += 1;
    }
    s1 + s2 * s2 + s2.powf(T::of(4.0))
}

/// `Σ_{i<D} 100(z_i² − z_{i+1})² + (z_i − 1)²` on `z + 1` (eq. 3 and eq. 22: the
/// optimum moved to the origin).
fn rosenbrock<T: Real>(z: &[T]) -> T {
    let one = T::ONE;
    let mut f = T::ZERO;
    let mut i = 0;
    while i + 1 < z.len() {
        let a = z[i] + one;
        let b = z[i + 1] + one;
        let t1 = a * a - b;
        let t2 = a - one;
        f = f + (T::of(100.0) * t1 * t1 + t2 * t2);
        i += 1;
    }
    f
}

/// `Σ z_i² − 10 cos(2π z_i) + 10` (eq. 4).
fn rastrigin<T: Real>(z: &[T]) -> T {
    let mut f = T::ZERO;
    let mut i = 0;
    while i < z.len() {
        f = f + (z[i] * z[i] - T::of(10.0) * (two_pi::<T>() * z[i]).cos() + T::of(10.0));
        i += 1;
    }
    f
}

/// Schaffer's F7 as the reference computes it (report vs reference, item 1):
/// `[(1/(D−1)) Σ_{i<D} (√s_i + √s_i sin²(50 s_i^0.2))]²`, `s_i = √(y_i² + y_{i+1}²)`.
fn schaffer_f7<T: Real>(y: &[T]) -> T {
    let n = y.len();
    let mut f = T::ZERO;
    let mut i = 0;
    while i + 1 < n {
        let s = (y[i] * y[i] + y[i + 1] * y[i + 1]).sqrt();
        let t = (T::of(50.0) * s.powf(T::of(0.2))).sin();
        let r = s.sqrt();
        f = f + (r + r * t * t);
        i += 1;
    }
    let k = T::of_u32(n as u32 - 1);
    f * f / k / k
}

/// Lunacek bi-Rastrigin (eq. 6 as the reference computes it, report vs reference,
/// item 2). `y` holds the scaled `y_i` (overwritten with `2 sign(o_i) y_i`); `o` gives
/// the signs; `m` rotates the cosine term's argument when present.
fn lunacek<T: Real>(y: &mut [T], o: &[T], m: Option<&[T]>) -> T {
    let n = y.len();
    let nf = T::of_u32(n as u32);
    let mu0 = T::of(2.5);
    let d = T::ONE;
    let s = T::ONE - T::ONE / (T::of(2.0) * (nf + T::of(20.0)).sqrt() - T::of(8.2));
    let mu1 = -((mu0 * mu0 - d) / s).sqrt();
    let mut i = 0;
    while i < n {
        let t = T::of(2.0) * y[i];
        y[i] = if o[i] < T::ZERO { t * T::of(-1.0) } else { t };
        i += 1;
    }
    let mut t1 = T::ZERO;
    let mut t2 = T::ZERO;
    i = 0;
    while i < n {
        let xh = y[i] + mu0;
        let a = xh - mu0;
        t1 = t1 + a * a;
        let b = xh - mu1;
        t2 = t2 + b * b;
        i += 1;
    }
    t2 = t2 * s;
    t2 = t2 + d * nf;
    let mut c = T::ZERO;
    i = 0;
    while i < n {
        let zi = match m {
            Some(m) => row_dot(m, i, y),
            None => y[i],
        };
        c = c + (two_pi::<T>() * zi).cos();
        i += 1;
    }
    let f = if t1 < t2 { t1 } else { t2 };
    f + T::of(10.0) * (nf - c)
}

/// Levy (eq. 8), `w_i = 1 + (z_i − 1)/4`.
fn levy<T: Real>(z: &[T]) -> T {
    let n = z.len();
    let one = T::ONE;
    let w = |i: usize| one + (z[i] - one) / T::of(4.0);
    let s0 = (T::PI * w(0)).sin();
    let term1 = s0 * s0;
    let wl = w(n - 1);
    let sl = (two_pi::<T>() * wl).sin();
    let term3 = (wl - one) * (wl - one) * (one + sl * sl);
    let mut sum = T::ZERO;
    let mut i = 0;
    while i + 1 < n {
        let wi = w(i);
        let si = (T::PI * wi + one).sin();
        sum = sum + (wi - one) * (wi - one) * (one + T::of(10.0) * (si * si));
        i += 1;
    }
    term1 + sum + term3
}

/// Modified Schwefel (eq. 9), with the reference's constants.
fn schwefel<T: Real>(z: &[T]) -> T {
    let n = z.len();
    let nf = T::of_u32(n as u32);
    let c500 = T::of(500.0);
    let mut f = T::ZERO;
    let mut i = 0;
    while i < n {
        let zi = z[i] + T::of(4.209687462275036e+002);
        if zi > c500 {
            let r = c500 - zi.fmod(c500);
            f = f - r * r.sqrt().sin();
            let t = (zi - c500) / T::of(100.0);
            f = f + t * t / nf;
        } else if zi < -c500 {
            let m = zi.abs().fmod(c500);
            f = f - (-c500 + m) * (c500 - m).sqrt().sin();
            let t = (zi + c500) / T::of(100.0);
            f = f + t * t / nf;
        } else {
            f = f - zi * zi.abs().sqrt().sin();
        }
        i += 1;
    }
    f + T::of(4.189828872724338e+002) * nf
}

/// High-conditioned elliptic, `Σ (10⁶)^((i−1)/(D−1)) z_i²` (eq. 10), the weight as the
/// reference computes it: `10^(6(i−1)/(D−1))`.
fn elliptic<T: Real>(z: &[T]) -> T {
    let n = z.len();
    let mut f = T::ZERO;
    let mut i = 0;
    while i < n {
        let e = T::of(6.0) * T::of_u32(i as u32) / T::of_u32(n as u32 - 1);
        f = f + T::of(10.0).powf(e) * z[i] * z[i];
        i += 1;
    }
    f
}

/// Discus, `10⁶ z_1² + Σ_{i≥2} z_i²` (eq. 11).
fn discus<T: Real>(z: &[T]) -> T {
    let mut f = T::of(1e6) * z[0] * z[0];
    let mut i = 1;
    while i < z.len() {
        f = f + z[i] * z[i];
        i += 1;
    }
    f
}

/// Ackley (eq. 12), evaluated as `e − 20 exp(−0.2 √(Σz²/D)) − exp(Σcos(2πz)/D) + 20`.
fn ackley<T: Real>(z: &[T]) -> T {
    let nf = T::of_u32(z.len() as u32);
    let mut s1 = T::ZERO;
    let mut s2 = T::ZERO;
    let mut i = 0;
    while i < z.len() {
        s1 = s1 + z[i] * z[i];
        s2 = s2 + (two_pi::<T>() * z[i]).cos();
        i += 1;
    }
    let s1 = T::of(-0.2) * (s1 / nf).sqrt();
    let s2 = s2 / nf;
    T::E - T::of(20.0) * s1.exp() - s2.exp() + T::of(20.0)
}

/// Weierstrass, a = 0.5, b = 3, k_max = 20 (eq. 13). The cosine's argument is formed
/// as `(2π·3^k)·(z + 0.5)`, as in the reference: at k = 20 it reaches 10^10, where any
/// other grouping changes the cosine in its sixth digit.
fn weierstrass<T: Real>(z: &[T]) -> T {
    let n = z.len();
    let a = T::of(0.5);
    let b = T::of(3.0);
    let mut sum2 = T::ZERO;
    let mut ak = T::ONE;
    let mut bk = T::ONE;
    let mut k = 0;
    while k <= 20 {
        sum2 = sum2 + ak * (two_pi::<T>() * bk * T::of(0.5)).cos();
        ak = ak * a;
        bk = bk * b;
        k += 1;
    }
    let mut f = T::ZERO;
    let mut i = 0;
    while i < n {
        let mut sum = T::ZERO;
        let mut ak = T::ONE;
        let mut bk = T::ONE;
        let mut k = 0;
        while k <= 20 {
            sum = sum + ak * (two_pi::<T>() * bk * (z[i] + T::of(0.5))).cos();
            ak = ak * a;
            bk = bk * b;
            k += 1;
        }
        f = f + sum;
        i += 1;
    }
    f - T::of_u32(n as u32) * sum2
}

/// Griewank, `Σ z_i²/4000 − Π cos(z_i/√i) + 1` (eq. 14).
fn griewank<T: Real>(z: &[T]) -> T {
    let mut s = T::ZERO;
    let mut p = T::ONE;
    let mut i = 0;
    while i < z.len() {
        s = s + z[i] * z[i];
        p = p * (z[i] / (T::ONE + T::of_u32(i as u32)).sqrt()).cos();
        i += 1;
    }
    T::ONE + s / T::of(4000.0) - p
}

/// Katsuura (eq. 15): `10/D² Π_i (1 + i Σ_{j=1}^{32} |2^j z_i − round(2^j z_i)|/2^j)
/// ^(10/D^1.2) − 10/D²`, `round(t)` as `floor(t + 0.5)`.
fn katsuura<T: Real>(z: &[T]) -> T {
    let n = z.len();
    let nf = T::of_u32(n as u32);
    let e = T::of(10.0) / nf.powf(T::of(1.2));
    let mut f = T::ONE;
    let mut i = 0;
    while i < n {
        let mut t = T::ZERO;
        let mut p = T::ONE;
        let mut j = 1;
        while j <= 32 {
            p = p * T::of(2.0);
            let q = p * z[i];
            t = t + (q - (q + T::of(0.5)).floor()).abs() / p;
            j += 1;
        }
        f = f * (T::ONE + T::of_u32(i as u32 + 1) * t).powf(e);
        i += 1;
    }
    let c = T::of(10.0) / nf / nf;
    f * c - c
}

/// HappyCat, `|Σz² − D|^(1/4) + (0.5 Σz² + Σz)/D + 0.5` on `z − 1` (eq. 16; the
/// reference moves the optimum from −1 to the origin).
fn happy_cat<T: Real>(z: &[T]) -> T {
    let nf = T::of_u32(z.len() as u32);
    let mut r2 = T::ZERO;
    let mut sz = T::ZERO;
    let mut i = 0;
    while i < z.len() {
        let zi = z[i] - T::ONE;
        r2 = r2 + zi * zi;
        sz = sz + zi;
        i += 1;
    }
    (r2 - nf).abs().powf(T::of(0.25)) + (T::of(0.5) * r2 + sz) / nf + T::of(0.5)
}

/// HGBat, `|(Σz²)² − (Σz)²|^(1/2) + (0.5 Σz² + Σz)/D + 0.5` on `z − 1` (eq. 17).
fn hgbat<T: Real>(z: &[T]) -> T {
    let nf = T::of_u32(z.len() as u32);
    let mut r2 = T::ZERO;
    let mut sz = T::ZERO;
    let mut i = 0;
    while i < z.len() {
        let zi = z[i] - T::ONE;
        r2 = r2 + zi * zi;
        sz = sz + zi;
        i += 1;
    }
    (r2 * r2 - sz * sz).abs().sqrt() + (T::of(0.5) * r2 + sz) / nf + T::of(0.5)
}

/// Expanded Griewank plus Rosenbrock (eq. 18) on `z + 1`: Griewank's one-dimensional
/// `t²/4000 − cos t + 1` of Rosenbrock's pair term, over the pairs (1,2), …, (D−1,D),
/// (D,1).
fn griewank_rosenbrock<T: Real>(z: &[T]) -> T {
    let n = z.len();
    let one = T::ONE;
    let term = |a: T, b: T| {
        let t1 = a * a - b;
        let t2 = a - one;
        let t = T::of(100.0) * t1 * t1 + t2 * t2;
        t * t / T::of(4000.0) - t.cos() + one
    };
    let mut f = T::ZERO;
    let mut i = 0;
    while i + 1 < n {
        f = f + term(z[i] + one, z[i + 1] + one);
        i += 1;
    }
    f + term(z[n - 1] + one, z[0] + one)
}

/// Expanded Schaffer F6 (eq. 5): `Σ g(z_i, z_{i+1})` over the pairs (1,2), …, (D,1),
/// `g(x, y) = 0.5 + (sin²(√(x²+y²)) − 0.5)/(1 + 0.001(x²+y²))²`.
fn expanded_schaffer6<T: Real>(z: &[T]) -> T {
    let n = z.len();
    let g = |a: T, b: T| {
        let r = a * a + b * b;
        let s = r.sqrt().sin();
        let s = s * s;
        let t = T::ONE + T::of(0.001) * r;
        T::of(0.5) + (s - T::of(0.5)) / (t * t)
    };
    let mut f = T::ZERO;
    let mut i = 0;
    while i + 1 < n {
        f = f + g(z[i], z[i + 1]);
        i += 1;
    }
    f + g(z[n - 1], z[0])
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

// ---------------------------------------------------------------------------------
// Hybrid functions.

/// A part of a hybrid function.
#[derive(Clone, Copy, Debug)]
enum Part {
    Basic(Basic),
    /// Report vs reference, item 6: evaluated on the first `n_g` permuted entries.
    SchafferF7,
    /// Report vs reference, item 6: signs from the first `n_g` shift entries.
    Lunacek,
}

use Basic as B;

/// F11–F20: the shares `p_g` in tenths and the parts.
fn hybrid_spec(n: u32) -> (&'static [u32], &'static [Part]) {
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
fn hybrid<T: Real>(n: u32, x: &[T], o: &[T], m: &[T], s: &[u32], scratch: &mut [T]) -> T {
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

// ---------------------------------------------------------------------------------
// Composition functions.

/// A part of a composition function: a basic function shifted and rotated by the
/// part's data, or a hybrid function (F29, F30).
#[derive(Clone, Copy, Debug)]
enum Comp {
    Rotated(Basic),
    Hybrid(u32),
}

/// One part of a composition: what, `λ` as the reference's quotient `num·g/den`
/// (`None` for 1), and `σ`. The bias of part `i` is `100·i`.
type CompPart = (Comp, Option<(f64, f64)>, f64);

const L_1E_6: Option<(f64, f64)> = Some((10000.0, 1e10));
const L_10: Option<(f64, f64)> = Some((1000.0, 100.0));
const L_10B: Option<(f64, f64)> = Some((10000.0, 1e3));
const L_1: Option<(f64, f64)> = Some((1000.0, 1e3));
const L_5E_4: Option<(f64, f64)> = Some((10000.0, 2e7));

fn composition_spec(n: u32) -> &'static [CompPart] {
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
fn composition<T: Real>(n: u32, x: &[T], data: &Data<'_, T>, scratch: &mut [T]) -> T {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hybrid_part_sizes_follow_the_shares() {
        // F17 at D = 10: shares 0.1, 0.2, 0.2, 0.2, 0.3.
        let (s, k) = hybrid_part_sizes(17, 10);
        assert_eq!((k, &s[..k]), (5, &[1, 2, 2, 2, 3][..]));
        // F20 at D = 30: shares 0.1, 0.1, 0.2, 0.2, 0.2, 0.2.
        let (s, k) = hybrid_part_sizes(20, 30);
        assert_eq!((k, &s[..k]), (6, &[3, 3, 6, 6, 6, 6][..]));
        for n in 11..=20 {
            for d in DIMENSIONS {
                let (s, k) = hybrid_part_sizes(n, d);
                assert_eq!(s[..k].iter().sum::<usize>(), d, "F{n} D={d}");
                assert!(s[..k].iter().all(|&v| v >= 1), "F{n} D={d}: {s:?}");
            }
        }
    }

    #[test]
    fn basic_functions_at_their_optima() {
        let zero = [0.0f64; 10];
        for b in [
            B::BentCigar,
            B::SumDiffPow,
            B::Zakharov,
            B::Rosenbrock,
            B::Rastrigin,
            B::Elliptic,
            B::Discus,
            B::Weierstrass,
            B::Griewank,
            B::Katsuura,
            B::HappyCat,
            B::HgBat,
            B::GriewankRosenbrock,
            B::ExpandedSchaffer6,
        ] {
            assert_eq!(b.eval(&zero), 0.0, "{b:?}");
        }
        assert!(ackley(&zero).abs() < 1e-14);
        // Schwefel's constant makes the minimum 0 up to its 16 digits.
        assert!(schwefel(&zero).abs() < 1e-9);
        // Levy's minimum is at z = 1, not at 0 (report vs reference, item 4).
        assert!(levy(&[1.0f64; 10]).abs() < 1e-30);
        assert!(levy(&zero) > 0.1);
        assert_eq!(schaffer_f7(&zero), 0.0);
        let mut y = [0.0f64; 10];
        assert_eq!(lunacek(&mut y, &[1.0; 10], None), 0.0);
    }

    #[test]
    fn basic_functions_against_hand_computed_values() {
        // Bent cigar: 1 + 10⁶·(4 + 9).
        assert_eq!(bent_cigar(&[1.0f64, 2.0, -3.0]), 13_000_001.0);
        // Discus: 10⁶ + 4 + 9.
        assert_eq!(discus(&[1.0f64, 2.0, -3.0]), 1_000_013.0);
        // Sum of different power: |−2|¹ + 3² + |0.5|³.
        assert_eq!(sum_diff_pow(&[-2.0f64, 3.0, 0.5]), 2.0 + 9.0 + 0.125);
        // Zakharov at (1, 2): 5 + 2.5² + 2.5⁴.
        assert_eq!(zakharov(&[1.0f64, 2.0]), 5.0 + 6.25 + 39.0625);
        // Rosenbrock on z + 1 with z = (0, 1): a = 1, b = 2 → 100·(1 − 2)² + 0.
        assert_eq!(rosenbrock(&[0.0f64, 1.0]), 100.0);
        // Rastrigin at integers is Σ z².
        assert!((rastrigin(&[1.0f64, -2.0]) - 5.0).abs() < 1e-12);
        // Elliptic at D = 3: 1·1 + 10³·1 + 10⁶·1.
        assert!((elliptic(&[1.0f64, 1.0, 1.0]) - 1_001_001.0).abs() < 1e-9);
        // HGBat and HappyCat on z − 1 = (0, 0) (z = (1, 1)): 0 + (0 + 0)/2 + 0.5 and
        // |0 − 2|^(1/4) + 0.5.
        assert_eq!(hgbat(&[1.0f64, 1.0]), 0.5);
        assert!((happy_cat(&[1.0f64, 1.0]) - (2f64.powf(0.25) + 0.5)).abs() < 1e-15);
        // Katsuura at z = 1/4, D = 1: only j = 1 contributes, |0.5 − 1|/2 = 1/4, so
        // 10·(1 + 1/4)^10 − 10.
        let want = 10.0 * 1.25f64.powi(10) - 10.0;
        assert!((katsuura(&[0.25f64]) - want).abs() < 1e-12 * want);
    }

    #[test]
    fn evaluate_rejects_unknown_numbers() {
        let x = [0.0f64; 10];
        let data = Data {
            shift: &[0.0; 10],
            rotation: &[0.0; 100],
            shuffle: &[],
        };
        let mut s = [0.0; 30];
        assert!(evaluate(0, &x, &data, &mut s).is_nan());
        assert!(evaluate(31, &x, &data, &mut s).is_nan());
    }
}
