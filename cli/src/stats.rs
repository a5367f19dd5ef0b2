//! The statistics every report uses: quantiles, medians and the summary of a set of
//! final errors. One implementation, so that `run`, `batch`, `bench` and `reproduce`
//! agree on what a median is.

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
}
