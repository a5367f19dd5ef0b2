//! The statistics every report uses: quantiles, medians, the summary of a set of final
//! errors, the sample standard deviation and the Wilcoxon rank-sum test. One
//! implementation, so that `run`, `batch`, `bench` and `reproduce` agree on what a median is.
//!
//! The rank-sum test needs the normal distribution's tail; it is computed here (a power
//! series and a continued fraction of erfc, accurate to about 1e-14) rather than taken from
//! a statistics crate, for one function of a few lines.

/// The (verified) error at or below which a run counts as a success when its job has no
/// target: the thesis's criterion.
pub const DEFAULT_SUCCESS: f64 = 1e-10;

/// The `p` quantile of sorted values, interpolating linearly between order statistics
/// (the "type 7" definition of most statistics packages); NaN for no values.
pub fn quantile(sorted: &[f64], p: f64) -> f64 {
    match sorted.len() {
        0 => f64::NAN,
        1 => sorted[0],
        n => {
            let h = (n - 1) as f64 * p.clamp(0.0, 1.0);
            let lo = h.floor() as usize;
            let hi = (lo + 1).min(n - 1);
            let (a, b) = (sorted[lo], sorted[hi]);
            if a == b {
                a
            } else {
                a + (h - lo as f64) * (b - a)
            }
        }
    }
}

/// Values sorted by IEEE total order (NaNs last).
pub fn sorted(values: &[f64]) -> Vec<f64> {
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    v
}

/// The median: the middle value, or the mean of the two middle values for an even count.
pub fn median(values: &[f64]) -> f64 {
    quantile(&sorted(values), 0.5)
}

/// The arithmetic mean; NaN for no values.
pub fn mean(values: &[f64]) -> f64 {
    if values.is_empty() {
        f64::NAN
    } else {
        values.iter().sum::<f64>() / values.len() as f64
    }
}

/// The sample standard deviation (divisor n − 1, as the CEC competitions' tables); NaN for
/// fewer than two values.
pub fn std_dev(values: &[f64]) -> f64 {
    if values.len() < 2 {
        return f64::NAN;
    }
    let m = mean(values);
    let ss: f64 = values.iter().map(|v| (v - m) * (v - m)).sum();
    (ss / (values.len() - 1) as f64).sqrt()
}

/// The complementary error function erfc(x) = 1 − erf(x), to about 1e-14 relative: the
/// Maclaurin series of erf below |x| = 2, the continued fraction of erfc above.
pub fn erfc(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    if x < 0.0 {
        return 2.0 - erfc(-x);
    }
    if x < 2.0 {
        // erf(x) = 2/√π Σ (−1)^n x^(2n+1) / (n! (2n+1))
        let (mut term, mut sum, x2) = (x, x, x * x);
        let mut n = 0.0;
        while term.abs() > 1e-17 * sum.abs() {
            n += 1.0;
            term *= -x2 / n;
            sum += term / (2.0 * n + 1.0);
        }
        return 1.0 - sum * std::f64::consts::FRAC_2_SQRT_PI;
    }
    if x > 27.0 {
        return 0.0;
    }
    // erfc(x) = e^(−x²)/√π · 1/(x + (1/2)/(x + 1/(x + (3/2)/(x + …)))), from the inside out.
    let mut f = x;
    for k in (1..=120).rev() {
        f = x + 0.5 * k as f64 / f;
    }
    (-x * x).exp() / (std::f64::consts::PI.sqrt() * f)
}

/// P(|Z| ≥ |z|) for a standard normal Z: the two-sided p-value of z.
pub fn two_sided_p(z: f64) -> f64 {
    erfc(z.abs() / std::f64::consts::SQRT_2).min(1.0)
}

/// The outcome of a Wilcoxon rank-sum (Mann–Whitney U) test of sample `a` against `b`.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct RankSum {
    /// U of `a`: the pairs (a_i, b_j) with a_i > b_j, ties counting ½ (0 when every a is
    /// below every b).
    pub u: f64,
    /// (U − n_a·n_b/2) / σ_U with the tie-corrected σ_U; 0 when σ_U is 0 (all values equal).
    pub z: f64,
    /// The two-sided p-value of z under the normal approximation (1 when σ_U is 0).
    pub p: f64,
}

/// Which sample a rank-sum test finds smaller.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// `a` is significantly smaller (for errors: better).
    Better,
    /// No significant difference at the level.
    Same,
    /// `a` is significantly larger (worse).
    Worse,
}

impl Verdict {
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Better => "better",
            Verdict::Same => "same",
            Verdict::Worse => "worse",
        }
    }
}

impl RankSum {
    /// The two-sided test at level `alpha`: smaller values in `a` are better.
    pub fn verdict(&self, alpha: f64) -> Verdict {
        // A NaN p (no test possible) is no evidence of a difference.
        let significant = self.p < alpha;
        if !significant {
            Verdict::Same
        } else if self.z < 0.0 {
            Verdict::Better
        } else {
            Verdict::Worse
        }
    }
}

/// The Wilcoxon rank-sum test (Mann–Whitney U), two-sided, by the normal approximation with
/// the tie correction and no continuity correction:
/// U = R_a − n_a(n_a+1)/2 with R_a the sum of `a`'s mid-ranks in the pooled sample,
/// σ_U² = n_a n_b / 12 · (n + 1 − Σ(t³ − t) / (n(n − 1))) over the groups of t tied values.
/// NaNs rank last (as the worst errors). Panics on an empty sample.
pub fn rank_sum(a: &[f64], b: &[f64]) -> RankSum {
    assert!(
        !a.is_empty() && !b.is_empty(),
        "rank-sum test of an empty sample"
    );
    let (na, nb) = (a.len() as f64, b.len() as f64);
    let mut pooled: Vec<(f64, bool)> = a
        .iter()
        .map(|&v| (v, true))
        .chain(b.iter().map(|&v| (v, false)))
        .collect();
    pooled.sort_by(|x, y| x.0.total_cmp(&y.0));
    let n = pooled.len();
    let (mut rank_a, mut ties) = (0.0, 0.0);
    let mut i = 0;
    while i < n {
        let mut j = i + 1;
        while j < n && pooled[j].0.total_cmp(&pooled[i].0).is_eq() {
            j += 1;
        }
        // Ranks i+1 ..= j share their mean.
        let mid = (i + 1 + j) as f64 / 2.0;
        let in_a = pooled[i..j].iter().filter(|p| p.1).count() as f64;
        rank_a += mid * in_a;
        let t = (j - i) as f64;
        ties += t * t * t - t;
        i = j;
    }
    let u = rank_a - na * (na + 1.0) / 2.0;
    let nf = n as f64;
    let var = na * nb / 12.0 * ((nf + 1.0) - ties / (nf * (nf - 1.0)));
    if var <= 0.0 {
        return RankSum { u, z: 0.0, p: 1.0 };
    }
    let z = (u - na * nb / 2.0) / var.sqrt();
    RankSum {
        u,
        z,
        p: two_sided_p(z),
    }
}

/// The summary of a set of final errors.
#[derive(Clone, Debug, PartialEq)]
pub struct Errors {
    pub runs: usize,
    pub mean: f64,
    pub median: f64,
    pub best: f64,
    pub worst: f64,
    /// Errors at most the threshold (NaN is never a success).
    pub successes: usize,
}

impl Errors {
    pub fn of(errors: &[f64], threshold: f64) -> Errors {
        let v = sorted(errors);
        Errors {
            runs: v.len(),
            mean: mean(&v),
            median: quantile(&v, 0.5),
            best: v.first().copied().unwrap_or(f64::NAN),
            worst: v.last().copied().unwrap_or(f64::NAN),
            successes: v.iter().filter(|&&e| e <= threshold).count(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_interpolate() {
        let v = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(quantile(&v, 0.5), 2.5);
        assert_eq!(quantile(&v, 0.25), 1.75);
        assert_eq!(quantile(&v, 0.0), 1.0);
        assert_eq!(quantile(&v, 1.0), 4.0);
        assert!(quantile(&[], 0.5).is_nan());
    }

    #[test]
    fn median_of_an_even_count_is_the_mean_of_the_middle_two() {
        assert_eq!(median(&[4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median(&[5.0, 1.0, 3.0]), 3.0);
    }

    #[test]
    fn error_summary() {
        let s = Errors::of(&[3.0, f64::NAN, 1e-12, 2.0], 1e-10);
        assert_eq!(s.runs, 4);
        assert_eq!(s.successes, 1);
        assert_eq!(s.best, 1e-12);
        assert!(s.worst.is_nan(), "NaN sorts last and is the worst");
        assert_eq!(s.median, 2.5);
    }

    #[test]
    fn sample_standard_deviation_divides_by_n_minus_one() {
        assert_eq!(
            std_dev(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]),
            (32.0f64 / 7.0).sqrt()
        );
        assert_eq!(std_dev(&[3.0, 3.0]), 0.0);
        assert!(std_dev(&[1.0]).is_nan());
    }

    #[test]
    fn erfc_matches_tabulated_values() {
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-13 * b.abs();
        assert_eq!(erfc(0.0), 1.0);
        assert!(close(erfc(0.5), 0.479_500_122_186_953_5), "{}", erfc(0.5));
        assert!(close(erfc(1.0), 0.157_299_207_050_285_13), "{}", erfc(1.0));
        // Either side of the switch from the series to the continued fraction.
        assert!(
            close(erfc(1.999), 0.004_698_443_348_629_488),
            "{}",
            erfc(1.999)
        );
        assert!(close(erfc(2.0), 0.004_677_734_981_047_266), "{}", erfc(2.0));
        assert!(close(erfc(3.0), 2.209_049_699_858_544e-5), "{}", erfc(3.0));
        assert!(close(erfc(5.0), 1.537_459_794_428_035e-12), "{}", erfc(5.0));
        assert!(close(erfc(-1.0), 1.842_700_792_949_715), "{}", erfc(-1.0));
        // The 5 % two-sided critical value of the normal distribution.
        assert!((two_sided_p(1.959_963_984_540_054) - 0.05).abs() < 1e-14);
        assert!((two_sided_p(-1.959_963_984_540_054) - 0.05).abs() < 1e-14);
    }

    #[test]
    fn rank_sum_of_separated_samples() {
        // Ranks of a: 1, 2, 3 → R = 6, U = 0; σ² = 3·3/12·7 = 5.25; z = −4.5/√5.25.
        let r = rank_sum(&[1.0, 2.0, 3.0], &[4.0, 5.0, 6.0]);
        assert_eq!(r.u, 0.0);
        assert!((r.z - (-4.5 / 5.25f64.sqrt())).abs() < 1e-15);
        assert!((r.p - 0.049_534_613_435_626_74).abs() < 1e-12, "{}", r.p);
        assert_eq!(r.verdict(0.05), Verdict::Better);
        let r = rank_sum(&[4.0, 5.0, 6.0], &[1.0, 2.0, 3.0]);
        assert_eq!(r.u, 9.0);
        assert_eq!(r.verdict(0.05), Verdict::Worse);
        assert_eq!(r.verdict(0.01), Verdict::Same);
    }

    #[test]
    fn rank_sum_with_ties() {
        // Pooled: 0 0 0 | 1 | 2 | 3 → the zeros share rank 2; a = {0, 0, 1} has R = 2+2+4 = 8,
        // U = 8 − 6 = 2; ties: 3³ − 3 = 24, σ² = 9/12 · (7 − 24/30) = 4.65.
        let r = rank_sum(&[0.0, 0.0, 1.0], &[0.0, 2.0, 3.0]);
        assert_eq!(r.u, 2.0);
        assert!((r.z - (-2.5 / 4.65f64.sqrt())).abs() < 1e-15, "{}", r.z);
        assert!((r.p - 0.246_314_673_491_760_95).abs() < 1e-12, "{}", r.p);
        assert_eq!(r.verdict(0.05), Verdict::Same);
        // Unequal sizes, a tie across the samples: U counts the tie as ½.
        let r = rank_sum(
            &[1.5, 3.0, 3.0, 7.0, 9.0],
            &[2.0, 3.0, 4.0, 8.0, 10.0, 11.0, 12.0],
        );
        assert_eq!(r.u, 10.0);
        assert!((r.p - 0.219_971_174_178_180_96).abs() < 1e-12, "{}", r.p);
    }

    #[test]
    fn rank_sum_of_identical_samples_is_same_with_p_one() {
        let r = rank_sum(&[0.0; 51], &[0.0; 51]);
        assert_eq!((r.u, r.z, r.p), (51.0 * 51.0 / 2.0, 0.0, 1.0));
        assert_eq!(r.verdict(0.05), Verdict::Same);
        // 51 zeros against 51 positive errors: far below 0.05.
        let worse: Vec<f64> = (1..=51).map(f64::from).collect();
        let r = rank_sum(&worse, &[0.0; 51]);
        assert_eq!(r.u, 51.0 * 51.0);
        assert!(r.p < 1e-15);
        assert_eq!(r.verdict(0.05), Verdict::Worse);
    }
}
