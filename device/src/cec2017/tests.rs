//! The CEC 2017 functions' own checks.

use super::basic::{Basic as B, *};
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
