//! Basic functions. Each takes the transformed vector z (shifted, scaled, rotated as the
//! function using it requires) and returns the basic function's value.

use super::row_dot;
use crate::real::Real;

/// The basic functions that a function applies to a prepared vector.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Basic {
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
pub(super) const LUNACEK_SCALE: f64 = 10.0 / 100.0;

impl Basic {
    /// The factor by which the reference scales `x − o` (or a hybrid's part) before the
    /// rotation, as the reference writes it: the quotient rounded to f64.
    pub(super) fn scale(self) -> f64 {
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

    pub(super) fn eval<T: Real>(self, z: &[T]) -> T {
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
pub(super) fn two_pi<T: Real>() -> T {
    T::of(2.0) * T::PI
}

/// `z_1² + 10⁶ Σ_{i≥2} z_i²` (report eq. 1).
pub(super) fn bent_cigar<T: Real>(z: &[T]) -> T {
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
pub(super) fn sum_diff_pow<T: Real>(z: &[T]) -> T {
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
pub(super) fn zakharov<T: Real>(z: &[T]) -> T {
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
pub(super) fn rosenbrock<T: Real>(z: &[T]) -> T {
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
pub(super) fn rastrigin<T: Real>(z: &[T]) -> T {
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
pub(super) fn schaffer_f7<T: Real>(y: &[T]) -> T {
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
pub(super) fn lunacek<T: Real>(y: &mut [T], o: &[T], m: Option<&[T]>) -> T {
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
pub(super) fn levy<T: Real>(z: &[T]) -> T {
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
pub(super) fn schwefel<T: Real>(z: &[T]) -> T {
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
pub(super) fn elliptic<T: Real>(z: &[T]) -> T {
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
pub(super) fn discus<T: Real>(z: &[T]) -> T {
    let mut f = T::of(1e6) * z[0] * z[0];
    let mut i = 1;
    while i < z.len() {
        f = f + z[i] * z[i];
        i += 1;
    }
    f
}

/// Ackley (eq. 12), evaluated as `e − 20 exp(−0.2 √(Σz²/D)) − exp(Σcos(2πz)/D) + 20`.
pub(super) fn ackley<T: Real>(z: &[T]) -> T {
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
pub(super) fn weierstrass<T: Real>(z: &[T]) -> T {
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
pub(super) fn griewank<T: Real>(z: &[T]) -> T {
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
pub(super) fn katsuura<T: Real>(z: &[T]) -> T {
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

/// `Σ(z − 1)²` and `Σ(z − 1)`, from the first component (HappyCat's and HGBat's sums).
#[inline(always)]
fn sums_from_one<T: Real>(z: &[T]) -> (T, T) {
    let mut r2 = T::ZERO;
    let mut sz = T::ZERO;
    let mut i = 0;
    while i < z.len() {
        let zi = z[i] - T::ONE;
        r2 = r2 + zi * zi;
        sz = sz + zi;
        i += 1;
    }
    (r2, sz)
}

/// HappyCat, `|Σz² − D|^(1/4) + (0.5 Σz² + Σz)/D + 0.5` on `z − 1` (eq. 16; the
/// reference moves the optimum from −1 to the origin).
pub(super) fn happy_cat<T: Real>(z: &[T]) -> T {
    let nf = T::of_u32(z.len() as u32);
    let (r2, sz) = sums_from_one(z);
    (r2 - nf).abs().powf(T::of(0.25)) + (T::of(0.5) * r2 + sz) / nf + T::of(0.5)
}

/// HGBat, `|(Σz²)² − (Σz)²|^(1/2) + (0.5 Σz² + Σz)/D + 0.5` on `z − 1` (eq. 17).
pub(super) fn hgbat<T: Real>(z: &[T]) -> T {
    let nf = T::of_u32(z.len() as u32);
    let (r2, sz) = sums_from_one(z);
    (r2 * r2 - sz * sz).abs().sqrt() + (T::of(0.5) * r2 + sz) / nf + T::of(0.5)
}

/// Expanded Griewank plus Rosenbrock (eq. 18) on `z + 1`: Griewank's one-dimensional
/// `t²/4000 − cos t + 1` of Rosenbrock's pair term, over the pairs (1,2), …, (D−1,D),
/// (D,1).
pub(super) fn griewank_rosenbrock<T: Real>(z: &[T]) -> T {
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
pub(super) fn expanded_schaffer6<T: Real>(z: &[T]) -> T {
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
