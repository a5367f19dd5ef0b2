//! The objective functions checked against independent references, and the Philox
//! generator checked through `rand_core`.
//!
//! # The references
//! Each reference below is written from the formulas (`gpude::FUNCTIONS`, the thesis's
//! chapter 5) as plain `f64` loops, arranged to be accurate to a few units of `f64`
//! roundoff even where the engines' arrangement cancels:
//! - sums are compensated (Neumaier);
//! - a periodic function is evaluated after an exact argument reduction
//!   (`x − round(x)` is exact), so `cos 2πx` costs one rounding of `2π·r` with |r| ≤ ½;
//! - `1 − cos 2θ` is written `2 sin²θ`, `1 − Π cos θ_j` as `−expm1(Σ ln cos θ_j)`,
//!   Ackley's `20 − 20 e^a + e − e^b` as `−20 expm1(a) − e expm1(b − 1)`;
//! - `x²` is split exactly with a fused multiply-add where it cancels (Rosenbrock);
//! - Weierstrass's `3^k (x + ½) mod 1` is computed exactly in integer arithmetic.
//!
//! # The tolerances
//! Every reference also returns a *condition magnitude* `cond`: the sum of the
//! magnitudes of the quantities the engines' arrangement rounds or cancels, plus
//! `|θ|·|∂f/∂θ|` for every trigonometric argument θ (rounding θ by one relative unit is
//! inherent to evaluating cos θ in floating point, and moves the result by that much).
//! The engines add at most 8 terms in sequence per lane and combine at most 5 butterfly
//! levels for D ≤ 131, with a handful of roundings per term, so a backward-stable
//! evaluation is within about 20·u·cond of the exact value (u: the unit roundoff).
//! The bounds checked are
//! - f64: `|got − ref| ≤ 1e-12·|ref| + 32·u₆₄·cond` (relative 1e-12 wherever the value
//!   is not the result of cancellation; near zero, 32 units of the terms' magnitude);
//! - f32, against the reference at the f32-rounded point: `|got − ref| ≤ 16·u₃₂·cond`
//!   (≈ 9.5e-7·cond, i.e. relative ≤ 1e-6 where cond ≈ |ref|: Sphere always, Rosenbrock,
//!   Schwefel 1.2, Rastrigin away from the integers).

use gpude::device::Philox4x32;
use gpude::device::philox::uniform_f32;
use gpude::{Function, Precision};
use rand_core::{RngCore, SeedableRng};
use std::f64::consts::{E, PI, TAU};

/// Unit roundoff of f64 (2⁻⁵³) and of f32 (2⁻²⁴).
const U64: f64 = f64::EPSILON / 2.0;
const U32: f64 = f32::EPSILON as f64 / 2.0;

const DIMS: [usize; 8] = [1, 2, 3, 5, 7, 30, 128, 131];

// ---------------------------------------------------------------------------------------
// A small deterministic generator for the test points.

struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unit()
    }

    fn int(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % (hi - lo + 1) as u64) as i64
    }
}

// ---------------------------------------------------------------------------------------
// Reference arithmetic.

/// Neumaier's compensated sum.
#[derive(Clone, Copy, Default)]
struct Sum {
    s: f64,
    c: f64,
}

impl Sum {
    fn add(&mut self, v: f64) {
        let t = self.s + v;
        if self.s.abs() >= v.abs() {
            self.c += (self.s - t) + v;
        } else {
            self.c += (v - t) + self.s;
        }
        self.s = t;
    }

    fn value(self) -> f64 {
        self.s + self.c
    }
}

fn sum(values: impl IntoIterator<Item = f64>) -> f64 {
    let mut s = Sum::default();
    for v in values {
        s.add(v);
    }
    s.value()
}

/// `x = n + r`, n an integer, |r| ≤ ½ (exact for the magnitudes used here).
fn split(x: f64) -> (f64, f64) {
    let n = x.round();
    (n, x - n)
}

fn odd(n: f64) -> bool {
    n.rem_euclid(2.0) == 1.0
}

/// cos 2πx.
fn cos_2pi(x: f64) -> f64 {
    (TAU * split(x).1).cos()
}

/// sin 2πx.
fn sin_2pi(x: f64) -> f64 {
    (TAU * split(x).1).sin()
}

/// sin πx = (−1)ⁿ sin πr.
fn sin_pi(x: f64) -> f64 {
    let (n, r) = split(x);
    let s = (PI * r).sin();
    if odd(n) { -s } else { s }
}

/// sin 3πx = (−1)ⁿ sin 3πr (3πn is a multiple of π with the parity of n).
fn sin_3pi(x: f64) -> f64 {
    let (n, r) = split(x);
    let s = (3.0 * PI * r).sin();
    if odd(n) { -s } else { s }
}

/// `3^k·x mod 1` for x ≥ 0, exact but for one final rounding.
fn frac_3k(x: f64, k: u32) -> f64 {
    assert!(x >= 0.0 && x.is_finite());
    if x == 0.0 {
        return 0.0;
    }
    let bits = x.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i32;
    let frac_bits = bits & ((1u64 << 52) - 1);
    // x = m · 2^e exactly.
    let (m, e) = if biased == 0 {
        (frac_bits, -1074)
    } else {
        (frac_bits | (1u64 << 52), biased - 1075)
    };
    if e >= 0 {
        return 0.0;
    }
    let p = 3u128.pow(k) * m as u128; // < 2^85
    let s = (-e) as u32;
    let r = if s >= 128 { p } else { p & ((1u128 << s) - 1) };
    (r as f64) * 2f64.powi(e)
}

/// A reference value and its condition magnitude (see the module's documentation).
#[derive(Clone, Copy, Debug)]
struct Ref {
    value: f64,
    cond: f64,
}

fn reference(f: Function, x: &[f64]) -> Ref {
    let d = x.len();
    let df = d as f64;
    match f {
        Function::Sphere => {
            let v = sum(x.iter().map(|v| v * v));
            Ref { value: v, cond: v }
        }
        Function::Griewank => {
            let s = sum(x.iter().map(|v| v * v)) / 4000.0;
            let theta: Vec<f64> = x
                .iter()
                .enumerate()
                .map(|(j, v)| v / ((j + 1) as f64).sqrt())
                .collect();
            let c: Vec<f64> = theta.iter().map(|t| t.cos()).collect();
            let p: f64 = c.iter().product();
            // 1 − Π cos θ_j, without cancellation when every factor is positive.
            let one_minus_p = if c.iter().all(|&v| v > 0.0) {
                let log_p = sum(theta.iter().map(|t| {
                    let h = (t / 2.0).sin();
                    (-2.0 * h * h).ln_1p()
                }));
                -log_p.exp_m1()
            } else {
                1.0 - p
            };
            // Π_{k≠j} |cos θ_k| from prefix and suffix products.
            let mut pre = vec![1.0; d + 1];
            let mut suf = vec![1.0; d + 1];
            for j in 0..d {
                pre[j + 1] = pre[j] * c[j].abs();
                suf[d - 1 - j] = suf[d - j] * c[d - 1 - j].abs();
            }
            let sens = sum(
                (0..d).map(|j| (1.0 + (theta[j] * theta[j].sin()).abs()) * pre[j] * suf[j + 1])
            );
            Ref {
                value: s + one_minus_p,
                cond: s + 1.0 + p.abs() * (1.0 + df) + sens,
            }
        }
        Function::Rosenbrock => {
            let mut v = Sum::default();
            let mut cond = Sum::default();
            for w in x.windows(2) {
                let (a, b) = (w[0], w[1]);
                let h = a * a;
                let l = a.mul_add(a, -h); // a² = h + l exactly
                let (s, e) = two_sum(b, -h);
                let dd = s + (e - l); // b − a², to about one rounding
                let (om, oe) = two_sum(1.0, -a);
                v.add(om * om + 2.0 * om * oe);
                v.add(100.0 * dd * dd);
                cond.add((1.0 + a.abs()).powi(2));
                cond.add(100.0 * (b.abs() + h).powi(2));
            }
            Ref {
                value: v.value(),
                cond: cond.value(),
            }
        }
        Function::Ackley => {
            let q = sum(x.iter().map(|v| v * v));
            let a = -0.2 * (q / df).sqrt();
            // Σ cos 2πx_j − D = −2 Σ sin² πx_j.
            let cm = -2.0 * sum(x.iter().map(|&v| sin_pi(v).powi(2)));
            let value = -20.0 * a.exp_m1() - E * (cm / df).exp_m1();
            let t1 = a.exp();
            let c = df + cm;
            let t2 = (c / df).exp();
            let args = sum(x.iter().map(|&v| 1.0 + (TAU * v * sin_2pi(v)).abs()));
            Ref {
                value,
                cond: 20.0 * t1 * (1.0 + a.abs())
                    + t2 * (1.0 + c.abs() / df + args / df)
                    + 20.0
                    + E,
            }
        }
        Function::Penalized => {
            let s3: Vec<f64> = x.iter().map(|&v| sin_3pi(v)).collect();
            let last = x[d - 1];
            let s2 = sin_2pi(last);
            let mut a = Sum::default();
            let mut sens = Sum::default();
            a.add(s3[0] * s3[0]);
            sens.add(3.0 * PI * x[0].abs() * 2.0 * s3[0].abs());
            for j in 1..d {
                let w = (x[j - 1] - 1.0).powi(2);
                a.add((x[j - 1] - 1.0).powi(2) * (1.0 + s3[j] * s3[j]));
                sens.add(3.0 * PI * x[j].abs() * 2.0 * s3[j].abs() * w);
            }
            a.add((last - 1.0).powi(2) * (1.0 + s2 * s2));
            sens.add(TAU * last.abs() * 2.0 * s2.abs() * (last - 1.0).powi(2));
            let u = sum(x.iter().map(|&v| {
                let e = (v.abs() - 5.0).max(0.0);
                100.0 * e.powi(4)
            }));
            let value = 0.1 * a.value() + u;
            Ref {
                value,
                cond: value + 0.1 * sens.value(),
            }
        }
        Function::Rastrigin => {
            // x² − 10 cos 2πx + 10 = x² + 20 sin² πx.
            let value = sum(x.iter().map(|&v| v * v + 20.0 * sin_pi(v).powi(2)));
            let cond = sum(x.iter().map(|&v| {
                v * v + 10.0 * cos_2pi(v).abs() + 10.0 + 10.0 * (TAU * v * sin_2pi(v)).abs()
            }));
            Ref { value, cond }
        }
        Function::Schwefel12 => {
            let mut prefix = Sum::default();
            let mut abs = 0.0;
            let mut v = Sum::default();
            let mut cond = Sum::default();
            for &xi in x {
                prefix.add(xi);
                abs += xi.abs();
                let s = prefix.value();
                v.add(s * s);
                cond.add(s * s + 2.0 * s.abs() * abs);
            }
            Ref {
                value: v.value(),
                cond: cond.value(),
            }
        }
        Function::Weierstrass => {
            // a^k cos(2π 3^k (x + ½)) − a^k cos(π 3^k) = a^k (1 + cos 2πφ) = 2 a^k cos² πφ,
            // φ = 3^k x + ½ mod 1 (3^k is odd, so 3^k/2 ≡ ½), cos(π 3^k) = −1.
            let mut v = Sum::default();
            let mut cond = Sum::default();
            for &xj in x {
                let t = (2.0 * xj + 1.0).abs();
                let mut ak = 1.0;
                let mut bk = 1.0;
                for k in 0..=20 {
                    let fr = frac_3k(xj.abs(), k);
                    let phi = if xj < 0.0 { 0.5 - fr } else { 0.5 + fr };
                    let r = split(phi).1;
                    // cos πr = sin π(½ − |r|): exactly 0 at r = ±½.
                    let c = (PI * (0.5 - r.abs())).sin();
                    v.add(2.0 * ak * c * c);
                    cond.add(ak * (2.0 + PI * bk * t * (TAU * r).sin().abs()));
                    ak *= 0.5;
                    bk *= 3.0;
                }
            }
            Ref {
                value: v.value(),
                cond: cond.value(),
            }
        }
    }
}

/// The second-order part of the argument-rounding error, in absolute terms, for unit
/// roundoff `u`: `|cos(θ + δ) − cos θ| ≤ |δ|·|sin θ| + δ²/2` (and ≤ 2), with |δ| ≤ 4u|θ|.
/// Only Weierstrass has arguments large enough for it to matter (π·3²⁰ ≈ 1.1e10): its
/// `x`-terms, and its constant `Σ a^k cos(π 3^k)`, where sin θ = 0 and the first-order
/// term vanishes. In f32 this bounds an error of ~1e-4 per component; the constant is
/// computed in the same arithmetic as the `x`-terms so that f(0) is exactly 0.
fn second_order(f: Function, x: &[f64], u: f64) -> f64 {
    if f != Function::Weierstrass {
        return 0.0;
    }
    let term = |theta: f64| (8.0 * (u * theta).powi(2)).min(2.0);
    let mut e = 0.0;
    for &xj in x {
        let t = (2.0 * xj + 1.0).abs();
        let mut ak = 1.0;
        let mut bk = 1.0;
        for _ in 0..=20 {
            e += ak * (term(PI * bk * t) + term(PI * bk));
            ak *= 0.5;
            bk *= 3.0;
        }
    }
    e
}

fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    (s, (a - (s - bb)) + (b - bb))
}

fn eval(f: Function, p: Precision, x: &[f64]) -> f64 {
    gpude::evaluate(f, p, x).unwrap_or_else(|e| panic!("{f:?} {p:?} at {x:?}: {e}"))
}

fn round_f32(x: &[f64]) -> Vec<f64> {
    x.iter().map(|&v| v as f32 as f64).collect()
}

// ---------------------------------------------------------------------------------------
// Random points against the references.

/// The boxes the random points come from: the function's usual domain, a unit box and
/// a tiny box around the minimiser (where the engines' sums cancel).
fn boxes(f: Function) -> Vec<(f64, f64)> {
    let (domain, argmin) = match f {
        Function::Sphere => ((-100.0, 100.0), 0.0),
        Function::Griewank => ((-600.0, 600.0), 0.0),
        Function::Rosenbrock => ((-600.0, 600.0), 1.0),
        Function::Ackley => ((-32.0, 32.0), 0.0),
        Function::Penalized => ((-600.0, 600.0), 1.0),
        Function::Rastrigin => ((-5.12, 5.12), 0.0),
        Function::Schwefel12 => ((-100.0, 100.0), 0.0),
        Function::Weierstrass => ((-0.5, 0.5), 0.0),
    };
    let mut b = vec![
        domain,
        (argmin - 1.0, argmin + 1.0),
        (argmin - 1e-3, argmin + 1e-3),
    ];
    if f == Function::Penalized {
        // Across the penalty's threshold |x| = 5, where the sine terms are not swamped.
        b.push((-7.0, 7.0));
    }
    b
}

#[derive(Default)]
struct Worst {
    rel64: f64,
    used64: f64,
    used32: f64,
}

fn check_random_points(f: Function) {
    let mut rng = SplitMix64(0x5EED_0000 + f as u64);
    let mut worst = Worst::default();
    let mut checked = 0;
    for (lo, hi) in boxes(f) {
        for &d in &DIMS {
            let points = if d > 100 { 12 } else { 32 };
            for _ in 0..points {
                let x: Vec<f64> = (0..d).map(|_| rng.range(lo, hi)).collect();

                let r = reference(f, &x);
                let got = eval(f, Precision::F64, &x);
                let err = (got - r.value).abs();
                let tol = 1e-12 * r.value.abs() + 32.0 * U64 * r.cond + second_order(f, &x, U64);
                assert!(
                    err <= tol,
                    "{f:?} f64 D={d} box [{lo}, {hi}]: got {got:e}, reference {:e} (cond {:e}), error {err:e} > {tol:e}\nx = {x:?}",
                    r.value,
                    r.cond
                );
                if r.value != 0.0 {
                    worst.rel64 = worst.rel64.max(err / r.value.abs());
                }
                worst.used64 = worst.used64.max(err / tol);

                let xr = round_f32(&x);
                let r = reference(f, &xr);
                let got = eval(f, Precision::F32, &x);
                assert_eq!(got, got as f32 as f64, "an f32 result is an f32 value");
                let err = (got - r.value).abs();
                let tol = 16.0 * U32 * r.cond + second_order(f, &xr, U32);
                assert!(
                    err <= tol,
                    "{f:?} f32 D={d} box [{lo}, {hi}]: got {got:e}, reference {:e} (cond {:e}), error {err:e} > {tol:e}\nx = {xr:?}",
                    r.value,
                    r.cond
                );
                worst.used32 = worst.used32.max(err / tol);
                checked += 1;
            }
        }
    }
    println!(
        "{f:?}: {checked} points; worst f64 relative error {:.2e}; largest error / bound: f64 {:.3}, f32 {:.3}",
        worst.rel64, worst.used64, worst.used32
    );
}

#[test]
fn sphere_matches_reference() {
    check_random_points(Function::Sphere);
}

#[test]
fn griewank_matches_reference() {
    check_random_points(Function::Griewank);
}

#[test]
fn rosenbrock_matches_reference() {
    check_random_points(Function::Rosenbrock);
}

#[test]
fn ackley_matches_reference() {
    check_random_points(Function::Ackley);
}

#[test]
fn penalized_matches_reference() {
    check_random_points(Function::Penalized);
}

#[test]
fn rastrigin_matches_reference() {
    check_random_points(Function::Rastrigin);
}

#[test]
fn schwefel12_matches_reference() {
    check_random_points(Function::Schwefel12);
}

#[test]
fn weierstrass_matches_reference() {
    check_random_points(Function::Weierstrass);
}

/// Sphere's terms are all positive: there the f32 bound is a plain relative one.
#[test]
fn sphere_f32_is_within_1e6_relative() {
    let mut rng = SplitMix64(77);
    for &d in &DIMS {
        for _ in 0..50 {
            let x: Vec<f64> = (0..d).map(|_| rng.range(-100.0, 100.0)).collect();
            let r = reference(Function::Sphere, &round_f32(&x)).value;
            let got = eval(Function::Sphere, Precision::F32, &x);
            assert!((got - r).abs() <= 1e-6 * r, "D={d}: {got} vs {r}");
        }
    }
}

/// The references themselves, against values known in closed form.
#[test]
fn references_agree_with_closed_forms() {
    assert_eq!(reference(Function::Sphere, &[1.0, 2.0, 3.0]).value, 14.0);
    assert_eq!(
        reference(Function::Rastrigin, &[1.0, -2.0, 3.0]).value,
        14.0
    );
    assert_eq!(reference(Function::Rosenbrock, &[0.0, 0.0]).value, 1.0);
    assert_eq!(
        reference(Function::Schwefel12, &[1.0, 1.0, 1.0]).value,
        14.0
    );
    assert_eq!(reference(Function::Weierstrass, &[0.0; 5]).value, 0.0);
    assert_eq!(reference(Function::Griewank, &[0.0; 5]).value, 0.0);
    assert_eq!(reference(Function::Ackley, &[0.0; 5]).value, 0.0);
    assert_eq!(reference(Function::Penalized, &[1.0; 5]).value, 0.0);
    // Rastrigin at ½: ¼ + 20.
    assert_eq!(reference(Function::Rastrigin, &[0.5]).value, 20.25);
    // Weierstrass at ½: every cosine is 1, each component gives 2 Σ 2^-k = 4 − 2^-19.
    let w = reference(Function::Weierstrass, &[0.5, 0.5]).value;
    assert_eq!(w, 2.0 * (4.0 - 2f64.powi(-19)));
    // The exact reduction against a direct evaluation where the latter is accurate.
    for x in [0.123_456_789f64, -0.3, 0.499, 1e-300] {
        for k in 0..=6 {
            let direct = (3f64.powi(k as i32) * x.abs()).fract();
            assert!((frac_3k(x.abs(), k) - direct).abs() < 1e-13, "{x} {k}");
        }
    }
    // Ackley in closed form at the integers: 20 (1 − e^{−0.2 |k|}).
    let a = reference(Function::Ackley, &[2.0, -2.0, 2.0]).value;
    assert!((a - 20.0 * (1.0 - (-0.4f64).exp())).abs() < 1e-14);
}

// ---------------------------------------------------------------------------------------
// Values at the optima and in closed form.

fn both(f: Function, x: &[f64]) -> (f64, f64) {
    (eval(f, Precision::F64, x), eval(f, Precision::F32, x))
}

#[test]
fn optima_give_zero() {
    for &d in &DIMS {
        let zeros = vec![0.0; d];
        let ones = vec![1.0; d];
        for f in [
            Function::Sphere,
            Function::Griewank,
            Function::Rastrigin,
            Function::Schwefel12,
            Function::Weierstrass,
        ] {
            assert_eq!(both(f, &zeros), (0.0, 0.0), "{f:?} D={d}");
        }
        assert_eq!(
            both(Function::Rosenbrock, &ones),
            (0.0, 0.0),
            "rosenbrock D={d}"
        );

        // f4 at (1, …, 1): only 0.1·sin²(3π·1) is left, and 3π is not a float:
        // |sin(fl(3π))| ≈ 3.7e-16 in f64 and ≈ 2.4e-7 in f32 (squared, times 0.1).
        let (p64, p32) = both(Function::Penalized, &ones);
        assert!((0.0..=1e-31).contains(&p64), "f4 f64 D={d}: {p64:e}");
        assert!((0.0..=1e-13).contains(&p32), "f4 f32 D={d}: {p32:e}");

        // Ackley at 0: −20 − e + 20 + e, rounded in that order: a few ulps of 20 at most.
        let (a64, a32) = both(Function::Ackley, &zeros);
        assert!(a64.abs() <= 4.0 * 20.0 * U64, "ackley f64 D={d}: {a64:e}");
        assert!(a32.abs() <= 4.0 * 20.0 * U32, "ackley f32 D={d}: {a32:e}");
    }
}

#[test]
fn ackley_at_zero_is_exactly_zero_in_f64() {
    // The minimum value is 0; a run that finds the minimiser should report error 0.
    for &d in &DIMS {
        let v = eval(Function::Ackley, Precision::F64, &vec![0.0; d]);
        assert_eq!(v, 0.0, "D={d}");
    }
}

#[test]
fn functions_are_never_negative_near_their_optima() {
    let mut rng = SplitMix64(4242);
    for f in Function::ALL {
        let argmin = if matches!(f, Function::Rosenbrock | Function::Penalized) {
            1.0
        } else {
            0.0
        };
        for &d in &DIMS {
            for scale in [0.0, 1e-30, 1e-12, 1e-7, 1e-4] {
                let x: Vec<f64> = (0..d)
                    .map(|_| argmin + scale * rng.range(-1.0, 1.0))
                    .collect();
                let (v64, v32) = both(f, &x);
                assert!(v64 >= 0.0, "{f:?} f64 D={d} scale {scale}: {v64:e}");
                assert!(v32 >= 0.0, "{f:?} f32 D={d} scale {scale}: {v32:e}");
            }
        }
    }
}

#[test]
fn sphere_rastrigin_rosenbrock_schwefel_closed_forms() {
    for p in [Precision::F64, Precision::F32] {
        assert_eq!(eval(Function::Sphere, p, &[1.0, 2.0, 3.0]), 14.0);
        assert_eq!(eval(Function::Sphere, p, &[-3.0]), 9.0);
        assert_eq!(eval(Function::Rosenbrock, p, &[0.0, 0.0]), 1.0);
        assert_eq!(eval(Function::Rosenbrock, p, &[-1.0, 1.0]), 4.0);
        assert_eq!(eval(Function::Rosenbrock, p, &[0.0, 1.0]), 101.0);
        assert_eq!(eval(Function::Rosenbrock, p, &[2.0, 4.0, 16.0]), 10.0);
        // One component: no pairs.
        assert_eq!(eval(Function::Rosenbrock, p, &[123.0]), 0.0);
        assert_eq!(eval(Function::Schwefel12, p, &[1.0, 1.0, 1.0]), 14.0);
        assert_eq!(eval(Function::Schwefel12, p, &[1.0, -1.0, 1.0, -1.0]), 2.0);
        // 1, 2, …, n: the prefix sums are the triangular numbers.
        for n in [5usize, 30, 131] {
            let x: Vec<f64> = (1..=n).map(|v| v as f64).collect();
            let want: f64 = (1..=n).map(|i| ((i * (i + 1) / 2) as f64).powi(2)).sum();
            let got = eval(Function::Schwefel12, p, &x);
            let tol = if p == Precision::F64 {
                0.0
            } else {
                1e-6 * want
            };
            assert!((got - want).abs() <= tol, "{p:?} n={n}: {got} vs {want}");
        }
    }
}

#[test]
fn rastrigin_at_integers_is_the_sum_of_squares() {
    let mut rng = SplitMix64(9);
    for &d in &DIMS {
        for _ in 0..20 {
            let x: Vec<f64> = (0..d).map(|_| rng.int(-5, 5) as f64).collect();
            let want: f64 = x.iter().map(|v| v * v).sum();
            assert_eq!(both(Function::Rastrigin, &x), (want, want), "D={d} x={x:?}");
        }
    }
}

#[test]
fn griewank_where_every_cosine_is_one() {
    // x_j = 2πk_j·√j makes every x_j/√j a multiple of 2π: the value is Σ x_j²/4000.
    let mut rng = SplitMix64(11);
    for &d in &DIMS {
        let x: Vec<f64> = (0..d)
            .map(|j| TAU * rng.int(1, 10) as f64 * ((j + 1) as f64).sqrt())
            .collect();
        let s64 = sum(x.iter().map(|v| v * v)) / 4000.0;
        let g64 = eval(Function::Griewank, Precision::F64, &x);
        assert!((g64 - s64).abs() <= 1e-12 * s64, "D={d}: {g64} vs {s64}");
        let xr = round_f32(&x);
        let s32 = sum(xr.iter().map(|v| v * v)) / 4000.0;
        let g32 = eval(Function::Griewank, Precision::F32, &x);
        // (S − 1) + 1 in f32: a few units of roundoff of 1 + S.
        assert!(
            (g32 - s32).abs() <= 16.0 * U32 * (1.0 + s32),
            "D={d}: {g32} vs {s32}"
        );
    }
}

#[test]
fn penalized_by_hand() {
    // x = 7 everywhere: u = 100·2⁴ = 1600 per component; every sine is sin(21π) or
    // sin(14π) = 0, so the bracket is 36·(D − 1) + 36 = 36·D: f = 1603.6·D.
    // x = −7: u is the same, (−8)² = 64: f = 1606.4·D.
    for &d in &DIMS {
        let df = d as f64;
        for (v, want) in [(7.0, 1603.6 * df), (-7.0, 1606.4 * df), (5.0, 1.6 * df)] {
            let (g64, g32) = both(Function::Penalized, &vec![v; d]);
            assert!(
                (g64 - want).abs() <= 1e-12 * want,
                "x={v} D={d}: {g64} vs {want}"
            );
            assert!(
                (g32 - want).abs() <= 1e-6 * want,
                "x={v} D={d}: {g32} vs {want}"
            );
        }
    }
    // x = (6, −6.5): u = 100·1⁴ + 100·1.5⁴ = 606.25; sin²(18π) = 0,
    // 25·[1 + sin²(−19.5π)] = 25·2 = 50 (the standard form: no factor 10 on the sine),
    // (−7.5)²·[1 + sin²(−13π)] = 56.25; f = 606.25 + 0.1·106.25 = 616.875.
    let (g64, g32) = both(Function::Penalized, &[6.0, -6.5]);
    assert!((g64 - 616.875).abs() <= 1e-12 * 616.875, "{g64}");
    assert!((g32 - 616.875).abs() <= 1e-6 * 616.875, "{g32}");
    // Inside [−5, 5] the penalty vanishes: (0, 0) gives 0.1·{0 + 1·1 + 1·1} = 0.2.
    let (g64, g32) = both(Function::Penalized, &[0.0, 0.0]);
    assert!((g64 - 0.2).abs() <= 1e-15, "{g64}");
    assert!((g32 - 0.2).abs() <= 4.0 * U32, "{g32}");
}

#[test]
fn ackley_and_weierstrass_by_hand() {
    // Ackley at integer points k: every cosine is 1, f = 20 (1 − e^{−0.2 |k|}).
    for &d in &DIMS {
        for k in [1.0f64, -3.0] {
            let want = 20.0 * (1.0 - (-0.2 * k.abs()).exp());
            let (g64, g32) = both(Function::Ackley, &vec![k; d]);
            assert!((g64 - want).abs() <= 1e-13, "k={k} D={d}: {g64} vs {want}");
            assert!(
                (g32 - want).abs() <= 8.0 * 20.0 * U32,
                "k={k} D={d}: {g32} vs {want}"
            );
        }
    }
    // Weierstrass at ±½: t = 2x + 1 ∈ {0, 2}, every cosine is 1, each component gives
    // 2 Σ_{k≤20} 2^-k = 4 − 2^-19.
    for &d in &DIMS {
        let want = d as f64 * (4.0 - 2f64.powi(-19));
        for v in [0.5, -0.5] {
            let g64 = eval(Function::Weierstrass, Precision::F64, &vec![v; d]);
            assert!(
                (g64 - want).abs() <= 1e-12 * want,
                "x={v} D={d}: {g64} vs {want}"
            );
        }
    }
}

#[test]
fn evaluate_refuses_bad_points() {
    let e = gpude::evaluate(Function::Sphere, Precision::F64, &[]).unwrap_err();
    assert!(e.to_string().contains("empty"), "{e}");
    for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
        for p in [Precision::F32, Precision::F64] {
            let e = gpude::evaluate(Function::Griewank, p, &[1.0, bad, 2.0]).unwrap_err();
            assert!(e.to_string().contains(&bad.to_string()), "{e}");
        }
    }
}

// ---------------------------------------------------------------------------------------
// Philox4x32-10 through rand_core.

fn words(seed: u64, sub: u64, offset: u64, n: usize) -> Vec<u32> {
    let mut g = Philox4x32::new(seed, sub, offset);
    (0..n).map(|_| g.next_word()).collect()
}

#[test]
fn curand_check_values_through_rng_core() {
    let table: [(u64, [u32; 8], [f32; 4]); 2] = [
        (
            0,
            [
                0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8, 0xf8e4cca4, 0x5cb200db, 0xb1a574eb,
                0x097eff67,
            ],
            [0.399_046_48, 0.880_520_2, 0.735_712_77, 0.605_481_86],
        ),
        (
            1,
            [
                0x844515e1, 0xf08d6eaa, 0x0f19c053, 0x83f875f0, 0xca7cf69e, 0xd9c77ded, 0x7e66d954,
                0x6d658f40,
            ],
            [0.516_679_17, 0.939_658_1, 0.058_986_682, 0.515_509_96],
        ),
    ];
    for (sub, want_words, want_uniform) in table {
        let mut g = Philox4x32::new(0, sub, 0);
        let got: Vec<u32> = (0..8).map(|_| g.next_u32()).collect();
        assert_eq!(got, want_words, "subsequence {sub}");
        let mut g = Philox4x32::new(0, sub, 0);
        let got: Vec<f32> = (0..4).map(|_| uniform_f32(g.next_u32())).collect();
        assert_eq!(got, want_uniform, "subsequence {sub}");
        let mut g = Philox4x32::new(0, sub, 0);
        let got: Vec<f32> = (0..4).map(|_| g.uniform()).collect();
        assert_eq!(got, want_uniform, "subsequence {sub}");
    }
    // The bare round function's published known answers.
    assert_eq!(
        gpude::device::philox4x32_10([0; 4], [0; 2]),
        [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]
    );
    assert_eq!(
        gpude::device::philox4x32_10([u32::MAX; 4], [u32::MAX; 2]),
        [0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd]
    );
    assert_eq!(
        gpude::device::philox4x32_10(
            [0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344],
            [0xa4093822, 0x299f31d0]
        ),
        [0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1]
    );
}

#[test]
fn seeding_matches_new() {
    for seed in [0u64, 1, 42, 0xdead_beef_cafe_f00d, u64::MAX] {
        let a = Philox4x32::seed_from_u64(seed);
        assert_eq!(a, Philox4x32::new(seed, 0, 0));
        let b = Philox4x32::from_seed(seed.to_le_bytes());
        assert_eq!(b, Philox4x32::new(seed, 0, 0));
        let mut a = a;
        let got: Vec<u32> = (0..12).map(|_| a.next_u32()).collect();
        assert_eq!(got, words(seed, 0, 0, 12));
    }
    // The key is (seed lo, seed hi): seeds differing only in the high word differ.
    assert_ne!(words(1, 0, 0, 4), words(1 | 1 << 32, 0, 0, 4));
}

#[test]
fn next_u32_and_next_u64_follow_the_word_stream() {
    for (seed, sub, offset) in [
        (0u64, 0u64, 0u64),
        (7, 3, 1),
        (123_456_789, 1 << 40, 6),
        (u64::MAX, u64::MAX, 3),
    ] {
        let w = words(seed, sub, offset, 40);
        let mut g = Philox4x32::new(seed, sub, offset);
        let got: Vec<u32> = (0..40).map(|_| g.next_u32()).collect();
        assert_eq!(got, w);
        // next_u64: two words, the first in the low half.
        let mut g = Philox4x32::new(seed, sub, offset);
        for i in 0..20 {
            let v = g.next_u64();
            assert_eq!(
                v,
                (w[2 * i + 1] as u64) << 32 | w[2 * i] as u64,
                "{seed} {sub} {offset} {i}"
            );
        }
        // Mixed calls keep their place in the stream.
        let mut g = Philox4x32::new(seed, sub, offset);
        assert_eq!(g.next_u32(), w[0]);
        assert_eq!(g.next_u64(), (w[2] as u64) << 32 | w[1] as u64);
        assert_eq!(g.next_word(), w[3]);
        assert_eq!(g.next_u32(), w[4]);
    }
}

#[test]
fn fill_bytes_is_the_word_stream_in_little_endian() {
    let seed = 0x0123_4567_89ab_cdef;
    let w = words(seed, 5, 0, 64);
    let stream: Vec<u8> = w.iter().flat_map(|v| v.to_le_bytes()).collect();
    for n in 0..=70usize {
        let mut g = Philox4x32::new(seed, 5, 0);
        let mut buf = vec![0u8; n];
        g.fill_bytes(&mut buf);
        assert_eq!(buf[..], stream[..n], "{n} bytes");
        if n % 4 == 0 {
            // Whole words: the next word follows on.
            assert_eq!(g.next_u32(), w[n / 4], "{n} bytes");
        }
    }
    // In pieces of whole words, fill_bytes and next_u32 interleave along the stream.
    let mut g = Philox4x32::new(seed, 5, 0);
    let mut out = Vec::new();
    for piece in [4usize, 8, 12, 16, 20] {
        let mut buf = vec![0u8; piece];
        g.fill_bytes(&mut buf);
        out.extend_from_slice(&buf);
        out.extend_from_slice(&g.next_u32().to_le_bytes());
    }
    assert_eq!(out[..], stream[..out.len()]);
}

#[test]
fn offsets_and_subsequences_position_the_stream() {
    for seed in [0u64, 99] {
        for sub in [0u64, 1, 2, 1 << 32] {
            let base = words(seed, sub, 0, 32);
            for off in 0..20u64 {
                let mut g = Philox4x32::new(seed, sub, off);
                let got: Vec<u32> = (0..8).map(|_| g.next_u32()).collect();
                assert_eq!(
                    got[..],
                    base[off as usize..off as usize + 8],
                    "{seed} {sub} {off}"
                );
            }
        }
        assert_ne!(words(seed, 0, 0, 8), words(seed, 1, 0, 8));
        assert_ne!(words(seed, 1, 0, 8), words(seed, 1 << 32, 0, 8));
    }
}
