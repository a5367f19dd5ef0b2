//! The exact formulas (`Formula::Exact`, the default) against an independent
//! double-double reference, in ulps of the result's precision, at points spread over
//! magnitudes next to every optimum (distances 1e-1 … 1e-20) and over the domain.
//!
//! # The reference
//! Double-double arithmetic (about 106 bits) written here from the formulas of
//! `gpude functions`, sharing no code with the engines: sin and cos by Taylor series
//! after a reduction by a double-double π/2, expm1 by its series (or by squaring for
//! large arguments), and the periodic arguments reduced exactly (`x − round(x)`, and
//! `3^k·x mod 1` in 128-bit integers). The reference is evaluated at the point the engine
//! sees (for f32, the point rounded to f32), so any difference is the engine's rounding.
//!
//! # The bounds
//! `|got − ref| ≤ B·ulp(ref)` with ulp in the result's precision, and `got == 0` exactly
//! where the true value is exactly 0. The bounds B below are the worst measured over
//! these points with some margin; a correctly rounded result would have B = ½.
//!
//! The test can fail: the textbook arithmetic (the formulas as printed) violates these
//! bounds by orders of magnitude next to the optimum, which
//! `textbook_formulas_violate_the_bounds` checks.

use gpude::{Formula, Function, Precision};

// ---------------------------------------------------------------------------------------
// Double-double arithmetic.

#[derive(Clone, Copy, Debug, PartialEq)]
struct Dd {
    hi: f64,
    lo: f64,
}

fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    (s, (a - (s - bb)) + (b - bb))
}

fn quick_two_sum(a: f64, b: f64) -> Dd {
    let s = a + b;
    Dd {
        hi: s,
        lo: b - (s - a),
    }
}

fn two_prod(a: f64, b: f64) -> (f64, f64) {
    let p = a * b;
    (p, a.mul_add(b, -p))
}

impl Dd {
    const ZERO: Dd = Dd { hi: 0.0, lo: 0.0 };
    /// π and e to about 107 bits.
    const PI: Dd = Dd {
        hi: std::f64::consts::PI,
        lo: 1.224_646_799_147_353_2e-16,
    };
    const E: Dd = Dd {
        hi: std::f64::consts::E,
        lo: 1.445_646_891_729_250_2e-16,
    };

    fn of(x: f64) -> Dd {
        Dd { hi: x, lo: 0.0 }
    }

    /// An integer below 2¹⁰⁶, exactly.
    fn of_u128(v: u128) -> Dd {
        let hi = ((v >> 53) << 53) as f64;
        let lo = (v & ((1u128 << 53) - 1)) as f64;
        quick_two_sum(hi, lo)
    }

    fn add(self, o: Dd) -> Dd {
        let (s, e) = two_sum(self.hi, o.hi);
        let (t, f) = two_sum(self.lo, o.lo);
        let d = quick_two_sum(s, e + t);
        quick_two_sum(d.hi, d.lo + f)
    }

    fn neg(self) -> Dd {
        Dd {
            hi: -self.hi,
            lo: -self.lo,
        }
    }

    fn sub(self, o: Dd) -> Dd {
        self.add(o.neg())
    }

    fn mul(self, o: Dd) -> Dd {
        let (p, e) = two_prod(self.hi, o.hi);
        quick_two_sum(p, e + (self.hi * o.lo + self.lo * o.hi))
    }

    fn scale(self, s: f64) -> Dd {
        self.mul(Dd::of(s))
    }

    fn div(self, o: Dd) -> Dd {
        let q1 = self.hi / o.hi;
        let r = self.sub(o.scale(q1));
        let q2 = r.hi / o.hi;
        let r = r.sub(o.scale(q2));
        let q3 = r.hi / o.hi;
        quick_two_sum(q1, q2).add(Dd::of(q3))
    }

    fn sqrt(self) -> Dd {
        if self.hi == 0.0 {
            return Dd::ZERO;
        }
        let y = Dd::of(self.hi.sqrt());
        y.add(self.sub(y.mul(y)).div(y.scale(2.0)))
    }

    fn sq(self) -> Dd {
        self.mul(self)
    }

    fn abs(self) -> Dd {
        if self.hi < 0.0 { self.neg() } else { self }
    }

    fn to_f64(self) -> f64 {
        self.hi + self.lo
    }
}

fn dd_sum(values: impl IntoIterator<Item = Dd>) -> Dd {
    values.into_iter().fold(Dd::ZERO, Dd::add)
}

/// Taylor series of sin (odd) or cos (even) at r, |r| ≲ 5.
fn taylor(r: Dd, odd: bool) -> Dd {
    let r2 = r.sq();
    let mut term = if odd { r } else { Dd::of(1.0) };
    let mut sum = term;
    let mut k = if odd { 1.0 } else { 0.0 };
    for _ in 0..60 {
        term = term.mul(r2).div(Dd::of(-(k + 1.0) * (k + 2.0)));
        k += 2.0;
        sum = sum.add(term);
        if term.hi.abs() <= 1e-36 * sum.hi.abs().max(1e-300) {
            break;
        }
    }
    sum
}

/// sin t, reduced by multiples of π/2 (|t| up to a few thousand).
fn dd_sin(t: Dd) -> Dd {
    let half_pi = Dd::PI.scale(0.5);
    let n = (t.hi / half_pi.hi).round();
    let r = t.sub(half_pi.scale(n));
    match (n as i64).rem_euclid(4) {
        0 => taylor(r, true),
        1 => taylor(r, false),
        2 => taylor(r, true).neg(),
        _ => taylor(r, false).neg(),
    }
}

/// sin²(π·v) for v = w·r, r = x − round(x) exact: sin²(kπx) = sin²(kπr) for integer k.
fn sin2_pi_multiple(x: f64, k: f64) -> Dd {
    let r = x - x.round();
    let (h, l) = two_prod(k, r);
    taylor(Dd::PI.mul(quick_two_sum(h, l)), true).sq()
}

/// e^x − 1.
fn dd_expm1(x: Dd) -> Dd {
    if x.hi.abs() < 0.5 {
        let mut term = x;
        let mut sum = x;
        for k in 2..80 {
            term = term.mul(x).div(Dd::of(k as f64));
            sum = sum.add(term);
            if term.hi.abs() <= 1e-36 * sum.hi.abs() {
                break;
            }
        }
        sum
    } else {
        // e^x = (e^{x/256})^256.
        let mut e = dd_expm1(x.scale(1.0 / 256.0)).add(Dd::of(1.0));
        for _ in 0..8 {
            e = e.sq();
        }
        e.sub(Dd::of(1.0))
    }
}

/// sin²(π·3^k·x) with `3^k·x mod 1` exact.
fn weierstrass_sin2(x: f64, k: u32) -> Dd {
    let bits = x.abs().to_bits();
    let biased = (bits >> 52) as i32;
    let frac = (bits & ((1u64 << 52) - 1)) as u128;
    let (m, e) = if biased == 0 {
        (frac, -1074)
    } else {
        (frac | (1u128 << 52), biased - 1075)
    };
    if e >= 0 || m == 0 {
        return Dd::ZERO;
    }
    let p = 3u128.pow(k) * m; // < 2⁸⁵
    let s = (-e) as u32;
    let mut r = if s >= 128 { p } else { p & ((1u128 << s) - 1) };
    if s < 128 && r > (1u128 << (s - 1)) {
        r = (1u128 << s) - r;
    }
    // φ = r·2^-s ≤ ½, scaled in two steps (each exact).
    let phi = Dd::of_u128(r)
        .scale(2f64.powi(-((s / 2) as i32)))
        .scale(2f64.powi(-((s - s / 2) as i32)));
    taylor(Dd::PI.mul(phi), true).sq()
}

/// The exact value of `f` at `x` (to about 100 bits).
fn reference(f: Function, x: &[f64]) -> Dd {
    let d = x.len();
    let one = Dd::of(1.0);
    let sq = |v: f64| Dd::of(v).sq();
    match f {
        Function::Sphere => dd_sum(x.iter().map(|&v| sq(v))),
        Function::Griewank => {
            let s = dd_sum(x.iter().map(|&v| sq(v))).div(Dd::of(4000.0));
            // 1 − Π cos t_j, accumulated as m ← m + m_j − m·m_j, m_j = 2 sin²(t_j/2).
            let mut m = Dd::ZERO;
            for (j, &v) in x.iter().enumerate() {
                let t = Dd::of(v).div(Dd::of((j + 1) as f64).sqrt());
                let mj = dd_sin(t.scale(0.5)).sq().scale(2.0);
                m = m.add(mj).sub(m.mul(mj));
            }
            s.add(m)
        }
        Function::Rosenbrock => dd_sum(x.windows(2).map(|w| {
            let a = Dd::of(w[0]);
            one.sub(a)
                .sq()
                .add(Dd::of(w[1]).sub(a.sq()).sq().scale(100.0))
        })),
        Function::Ackley => {
            let df = Dd::of(d as f64);
            let q = dd_sum(x.iter().map(|&v| sq(v)));
            let sn = dd_sum(x.iter().map(|&v| sin2_pi_multiple(v, 1.0)));
            let a = Dd::of(-1.0).div(Dd::of(5.0)).mul(q.div(df).sqrt());
            let t1 = dd_expm1(a).scale(-20.0);
            let t2 = Dd::E.mul(dd_expm1(sn.scale(-2.0).div(df))).neg();
            t1.add(t2)
        }
        Function::Penalized => {
            let mut a = sin2_pi_multiple(x[0], 3.0);
            for j in 1..d {
                a = a.add(
                    Dd::of(x[j - 1])
                        .sub(one)
                        .sq()
                        .mul(one.add(sin2_pi_multiple(x[j], 3.0))),
                );
            }
            let last = x[d - 1];
            a = a.add(
                Dd::of(last)
                    .sub(one)
                    .sq()
                    .mul(one.add(sin2_pi_multiple(last, 2.0))),
            );
            let u = dd_sum(x.iter().map(|&v| {
                let e = Dd::of(v).abs().sub(Dd::of(5.0));
                if e.hi > 0.0 {
                    e.sq().sq().scale(100.0)
                } else {
                    Dd::ZERO
                }
            }));
            a.div(Dd::of(10.0)).add(u)
        }
        Function::Rastrigin => dd_sum(
            x.iter()
                .map(|&v| sq(v).add(sin2_pi_multiple(v, 1.0).scale(20.0))),
        ),
        Function::Schwefel12 => {
            let mut prefix = Dd::ZERO;
            let mut v = Dd::ZERO;
            for &xi in x {
                prefix = prefix.add(Dd::of(xi));
                v = v.add(prefix.sq());
            }
            v
        }
        Function::Weierstrass => {
            let mut v = Dd::ZERO;
            for &xj in x {
                let mut w = 2.0;
                for k in 0..=20 {
                    v = v.add(weierstrass_sin2(xj, k).scale(w));
                    w *= 0.5;
                }
            }
            v
        }
    }
}

// ---------------------------------------------------------------------------------------
// Points, ulps and the bounds.

struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [−1, 1).
    fn signed(&mut self) -> f64 {
        2.0 * ((self.next() >> 11) as f64 / (1u64 << 53) as f64) - 1.0
    }
}

fn domain_and_argmin(f: Function) -> ((f64, f64), f64) {
    let info = gpude::FunctionInfo::of(f);
    (info.domain, info.argmin)
}

/// |got − ref| in units of the last place of `reference` in precision `p` (∞ where
/// the true value is 0 and `got` is not). Where the value or its `terms` terms fall
/// below the normal range (f32 next to the optimum: Σx² at |x| ~ 1e-21 is ~1e-42),
/// each term may lose up to one unit of the smallest subnormal: the unit is then at
/// least `terms` such units.
fn ulps(got: f64, reference: Dd, p: Precision, terms: usize) -> f64 {
    let (digits, emin) = match p {
        Precision::F32 => (24, -126),
        Precision::F64 => (53, -1022),
    };
    let r = reference.to_f64();
    if r == 0.0 {
        return if got == 0.0 { 0.0 } else { f64::INFINITY };
    }
    let e = (r.abs().log2().floor() as i32).max(emin);
    let tiny = 2f64.powi(emin - (digits - 1));
    let ulp = 2f64.powi(e - (digits - 1)).max(terms as f64 * tiny);
    // |got − ref| in double-double, so that it is exact for f64 results too.
    Dd::of(got).sub(reference).abs().to_f64() / ulp
}

const DIMS: [usize; 6] = [1, 2, 5, 30, 128, 131];

/// The test points: next to the minimiser at distances 10^-1 … 10^-20 (every component
/// at that scale, and half the components exactly at the minimiser), and over the
/// domain.
fn points(f: Function, d: usize, rng: &mut SplitMix64) -> Vec<Vec<f64>> {
    let ((lo, hi), argmin) = domain_and_argmin(f);
    let mut out = Vec::new();
    for e in 1..=20 {
        let delta = 10f64.powi(-e);
        out.push((0..d).map(|_| argmin + delta * rng.signed()).collect());
        out.push(
            (0..d)
                .map(|j| {
                    if j % 2 == 0 {
                        argmin
                    } else {
                        argmin + delta * rng.signed()
                    }
                })
                .collect(),
        );
    }
    for _ in 0..6 {
        out.push(
            (0..d)
                .map(|_| lo + (hi - lo) * 0.5 * (rng.signed() + 1.0))
                .collect(),
        );
    }
    out.push(vec![argmin; d]);
    out
}

/// The worst error in ulps of `formula`, and where: (ulps, x, got, exact), next to the
/// optimum (distances 1e-1 … 1e-20, and the optimum itself) and over the domain.
type Worst = (f64, Vec<f64>, f64, f64);

fn worst(f: Function, p: Precision, formula: Formula) -> [Worst; 2] {
    let mut rng = SplitMix64(0xE4AC_7000 + f as u64);
    let mut w: [Worst; 2] = [(0.0, Vec::new(), 0.0, 0.0), (0.0, Vec::new(), 0.0, 0.0)];
    for &d in &DIMS {
        for (i, x) in points(f, d, &mut rng).into_iter().enumerate() {
            let near = i < 40 || i == 46;
            let xp: Vec<f64> = match p {
                Precision::F32 => x.iter().map(|&v| v as f32 as f64).collect(),
                Precision::F64 => x,
            };
            let r = reference(f, &xp);
            let got = gpude::evaluate_as(f, p, formula, &xp).unwrap();
            let u = ulps(got, r, p, d);
            let k = if near { 0 } else { 1 };
            if u > w[k].0 || w[k].1.is_empty() {
                w[k] = (u, xp, got, r.to_f64());
            }
        }
    }
    w
}

/// The bounds in ulps, per function: (f32, f64) next to the optimum, and the same over
/// the domain. Griewank's arguments `x_j·(1/√j)` are rounded once: over the domain
/// (|t| up to ~600) that moves cos t by up to |t·sin t| ulps of t, the function's own
/// condition number, so the bound there is larger.
fn bound(f: Function) -> [(f64, f64); 2] {
    match f {
        Function::Sphere => [(2.0, 2.0); 2],
        Function::Griewank => [(8.0, 8.0), (64.0, 64.0)],
        Function::Rosenbrock => [(4.0, 4.0); 2],
        Function::Ackley => [(4.0, 4.0); 2],
        Function::Penalized => [(4.0, 4.0); 2],
        Function::Rastrigin => [(3.0, 3.0); 2],
        Function::Schwefel12 => [(8.0, 8.0); 2],
        Function::Weierstrass => [(4.0, 4.0); 2],
    }
}

fn check(f: Function) {
    let b = bound(f);
    for (pi, p) in [Precision::F32, Precision::F64].into_iter().enumerate() {
        let w = worst(f, p, Formula::Exact);
        for (k, region) in ["near the optimum", "over the domain"].iter().enumerate() {
            let bk = if pi == 0 { b[k].0 } else { b[k].1 };
            let (u, x, got, r) = &w[k];
            println!("{f:?} {p:?} {region}: worst {u:.3} ulp (bound {bk})");
            let shown: Vec<f64> = x.iter().take(8).copied().collect();
            assert!(
                *u <= bk,
                "{f:?} {p:?} {region}: {u} ulp > {bk}: got {got:e}, exact {r:e} at D={} x[..8]={shown:?}",
                x.len()
            );
        }
    }
}

#[test]
fn sphere_is_exact_to_a_few_ulps() {
    check(Function::Sphere);
}

#[test]
fn griewank_is_exact_to_a_few_ulps() {
    check(Function::Griewank);
}

#[test]
fn rosenbrock_is_exact_to_a_few_ulps() {
    check(Function::Rosenbrock);
}

#[test]
fn ackley_is_exact_to_a_few_ulps() {
    check(Function::Ackley);
}

#[test]
fn penalized_is_exact_to_a_few_ulps() {
    check(Function::Penalized);
}

#[test]
fn rastrigin_is_exact_to_a_few_ulps() {
    check(Function::Rastrigin);
}

#[test]
fn schwefel12_is_exact_to_a_few_ulps() {
    check(Function::Schwefel12);
}

#[test]
fn weierstrass_is_exact_to_a_few_ulps() {
    check(Function::Weierstrass);
}

/// The same points through the textbook formulas: next to the optimum they cancel, and
/// the errors are far beyond the bounds above (in f32, e.g., Griewank returns 0 where
/// the value is ~1e-9, and Ackley stalls near 1e-6). This is what the tests above
/// would report if the engines still used them.
#[test]
fn textbook_formulas_violate_the_bounds() {
    for f in [
        Function::Griewank,
        Function::Ackley,
        Function::Rastrigin,
        Function::Weierstrass,
        Function::Penalized,
    ] {
        let b = bound(f)[0];
        let u32_ = worst(f, Precision::F32, Formula::Textbook)[0].0;
        let u64_ = worst(f, Precision::F64, Formula::Textbook)[0].0;
        println!("{f:?} textbook next to the optimum: worst f32 {u32_:e} ulp, f64 {u64_:e} ulp");
        assert!(u32_ > 1000.0 * b.0, "{f:?} f32 textbook: {u32_}");
        assert!(u64_ > 1000.0 * b.1, "{f:?} f64 textbook: {u64_}");
    }
}

/// The reference against values known in closed form.
#[test]
fn reference_agrees_with_closed_forms() {
    let close = |a: Dd, b: f64| (a.to_f64() - b).abs() <= 1e-15 * b.abs();
    assert!(close(reference(Function::Rastrigin, &[0.5]), 20.25));
    assert!(close(reference(Function::Rosenbrock, &[0.0, 1.0]), 101.0));
    assert!(close(
        reference(Function::Ackley, &[2.0, -2.0]),
        20.0 * (1.0 - (-0.4f64).exp())
    ));
    assert!(close(
        reference(Function::Weierstrass, &[0.5, 0.5]),
        2.0 * (4.0 - 2f64.powi(-19))
    ));
    // Griewank at x = (π, 0): 1 − cos π = 2 (plus π²/4000).
    let g = reference(Function::Griewank, &[std::f64::consts::PI, 0.0]).to_f64();
    assert!((g - (2.0 + std::f64::consts::PI.powi(2) / 4000.0)).abs() < 1e-15);
    // Double-double: sin and expm1 to far below an f64 ulp.
    let s = dd_sin(Dd::of(1.0));
    assert!((s.hi - 1f64.sin()).abs() <= f64::EPSILON);
    let e = dd_expm1(Dd::of(1e-10));
    assert!((e.hi - 1e-10f64.exp_m1()).abs() <= 1e-10 * f64::EPSILON);
    for &v in &[0.0, 1.0, -3.0] {
        assert_eq!(reference(Function::Sphere, &[v]).to_f64(), v * v);
    }
}

/// The formula reaches the CPU engine: each run's best value is its best point's value
/// under that run's formula, and the textbook run reports 0 where the exact one does not.
#[test]
fn the_formula_reaches_the_engine() {
    let run = |formula: Formula| {
        let job = gpude::Job::builder(Function::Griewank, 8)
            .pop(64)
            .generations(300)
            .seed(3)
            .formula(formula)
            .build()
            .unwrap();
        let r = gpude::cpu::run::<f32>(&job, None).expect("runs");
        let x: Vec<f64> = r.best_x.iter().copied().collect();
        let again = gpude::evaluate_as(Function::Griewank, Precision::F32, formula, &x).unwrap();
        assert_eq!(r.best_f, again, "{formula:?}");
        r
    };
    run(Formula::Exact);
    run(Formula::Textbook);
    // Next to the optimum the textbook f32 value collapses to 0: every cos(1e-4/√j)
    // rounds to 1, and 2e-11 − 1 + 1 is 0.
    let x = [1e-4; 8];
    let t = gpude::evaluate_as(Function::Griewank, Precision::F32, Formula::Textbook, &x).unwrap();
    let e = gpude::evaluate_as(Function::Griewank, Precision::F32, Formula::Exact, &x).unwrap();
    assert_eq!(t, 0.0);
    assert!(e > 1e-8, "exact {e:e}");
}

/// Every result carries the error re-evaluated in f64 with the exact formulas, and a
/// textbook f32 run whose search reports 0 is flagged.
#[test]
fn results_carry_a_verified_error() {
    let run = |formula: Formula| {
        let job = gpude::Job::builder(Function::Griewank, 4)
            .domain(-1.0, 1.0)
            .pop(64)
            .generations(1500)
            .seed(5)
            .formula(formula)
            .build()
            .unwrap();
        let r = gpude::cpu::run::<f32>(&job, None).expect("runs");
        let x: Vec<f64> = r.best_x.iter().copied().collect();
        let v = gpude::evaluate(Function::Griewank, Precision::F64, &x).unwrap();
        assert_eq!(r.verified_error, v, "{formula:?}");
        r
    };
    let t = run(Formula::Textbook);
    assert_eq!(t.error, 0.0, "the textbook f32 search reports 0: {t:?}");
    assert!(t.verified_error > 0.0 && t.errors_disagree, "{t:?}");
    let e = run(Formula::Exact);
    assert!(!e.errors_disagree, "{e:?}");
    assert!(e.verified_error > 0.0);
}
