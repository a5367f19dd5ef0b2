//! Convergence stops: a run ends before its generation limit when its population's
//! values have converged (SciPy's `tol` and `atol`: the standard deviation of the values
//! at most `atol + tol·|mean|`) or its best value has stagnated (no improvement in the
//! last `stagnation` generations).
//!
//! The stops are looked at every [`Stops::every`] generations (32 unless set), the
//! same generations on both engines: the GPU engine ends its launches there and reads
//! the values back (see `cuda/entries.rs`), the CPU engine looks at them in its loop.
//! Both compute the decision here, in f64 from the same values in the same order, so a
//! run stops at the same generation with the same bits on either engine, and a run
//! resumed from a checkpoint stops where the run that never stopped does (the
//! stagnation is read from the run's history, which a job with a stagnation stop keeps).

use crate::error::{Error, Result, num};
use crate::job::config::Job;
use crate::run::result::Termination;
use serde::{Deserialize, Serialize};

/// The generations between two looks at the stops unless set.
pub const DEFAULT_EVERY: u32 = 32;

/// When a run stops before its limit, beside its target.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Stops {
    /// Relative tolerance of the values' spread (SciPy's `tol`).
    pub tol: Option<f64>,
    /// Absolute tolerance of the values' spread (SciPy's `atol`).
    pub atol: Option<f64>,
    /// Generations without an improvement of the best that end a run.
    pub stagnation: Option<u32>,
    /// The stops are looked at after every generation that is a multiple of this.
    pub every: u32,
}

impl Default for Stops {
    fn default() -> Self {
        Stops {
            tol: None,
            atol: None,
            stagnation: None,
            every: DEFAULT_EVERY,
        }
    }
}

impl Stops {
    /// Is any stop set?
    pub fn any(&self) -> bool {
        self.spread() || self.stagnation.is_some()
    }

    /// Is the values' spread looked at (`tol` or `atol` set)?
    pub fn spread(&self) -> bool {
        self.tol.is_some() || self.atol.is_some()
    }

    /// Are the stops looked at after generation `g`?
    pub fn at(&self, g: u32) -> bool {
        self.any() && g > 0 && g.is_multiple_of(self.every)
    }

    /// The next generation after `g` at which the stops are looked at, if any stop is
    /// set (saturating).
    pub fn next_after(&self, g: u32) -> Option<u32> {
        self.any().then(|| {
            (g / self.every)
                .saturating_add(1)
                .saturating_mul(self.every)
        })
    }

    /// Refuses tolerances that are not finite numbers ≥ 0, a stagnation of 0
    /// generations and an interval outside 1 ..= 2³¹.
    pub fn check(&self) -> Result<()> {
        for (what, v) in [("tol", self.tol), ("atol", self.atol)] {
            if let Some(v) = v
                && !(v.is_finite() && v >= 0.0)
            {
                return Err(Error::invalid(what, num(v), "a finite number ≥ 0"));
            }
        }
        if self.stagnation == Some(0) {
            return Err(Error::invalid(
                "stagnation",
                0,
                "1 or more generations (leave it out for no stagnation stop)",
            ));
        }
        if self.every == 0 || self.every > 1 << 31 {
            return Err(Error::invalid(
                "check-every",
                self.every,
                "1 ..= 2147483648 generations",
            ));
        }
        Ok(())
    }

    /// The stop that ends a run after generation `g`, whose population's values are
    /// `values` (in the population's order) and whose best after each generation from
    /// 0 is `history`: [`Termination::Converged`] before
    /// [`Termination::Stagnated`]; `None` when neither fires or `g` is not looked at.
    pub fn fired(&self, g: u32, values: &[f64], history: Option<&[f64]>) -> Option<Termination> {
        if !self.at(g) {
            return None;
        }
        if self.spread() && converged(values, self.tol.unwrap_or(0.0), self.atol.unwrap_or(0.0)) {
            return Some(Termination::Converged);
        }
        if let (Some(s), Some(h)) = (self.stagnation, history)
            && g.saturating_sub(improved_at(h, g)) >= s
        {
            return Some(Termination::Stagnated);
        }
        None
    }

    /// Refuses these stops, when any is set, on `engine`, which does not look at them.
    pub fn unsupported(&self, engine: &str) -> Result<()> {
        let (name, value) = match (self.tol, self.atol, self.stagnation) {
            (Some(v), _, _) => ("tol", num(v)),
            (_, Some(v), _) => ("atol", num(v)),
            (_, _, Some(s)) => ("stagnation", s.to_string()),
            _ => return Ok(()),
        };
        Err(Error::invalid(
            name,
            value,
            format!(
                "left out with {engine}: the convergence stops (tol, atol, stagnation) are not supported there yet"
            ),
        ))
    }
}

/// The stop that ends a run of `job` after generation `g`, from its state alone: the
/// population's values (in the population's order) and the history. `None` when the run
/// is at its generation limit or target there (those reasons come first), or when no
/// stop fires. Every engine decides here, and so does [`crate::run::checkpoint`]'s
/// result of a saved run.
pub fn stop_of(job: &Job, g: u32, values: &[f64], history: Option<&[f64]>) -> Option<Termination> {
    let stops = job.stops();
    if !stops.at(g) || g >= job.generations() {
        return None;
    }
    // The best value is at most the target exactly when some value is.
    if job
        .target_value()
        .is_some_and(|t| values.iter().any(|&v| v <= t))
    {
        return None;
    }
    stops.fired(g, values, history)
}

/// SciPy's test: the population standard deviation of `values` is at most
/// `atol + tol·|mean|` (never for values that are not all finite).
pub fn converged(values: &[f64], tol: f64, atol: f64) -> bool {
    if values.is_empty() {
        return false;
    }
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let var = values.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / n;
    let sd = var.sqrt();
    // NaN (a value not finite) never converges.
    sd <= atol + tol * mean.abs()
}

/// The last generation up to `g` whose best was lower than the one before it (0 when
/// none was), from the best after each generation (`history[i]`, i = 0 ..= g).
pub fn improved_at(history: &[f64], g: u32) -> u32 {
    let end = (g as usize).min(history.len().saturating_sub(1));
    (1..=end)
        .rev()
        .find(|&i| history[i] < history[i - 1])
        .unwrap_or(0) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spread_test_is_scipys() {
        // std of [1, 2, 3] = sqrt(2/3) ≈ 0.8165, mean 2.
        let v = [1.0, 2.0, 3.0];
        assert!(converged(&v, 0.0, 0.82));
        assert!(!converged(&v, 0.0, 0.81));
        assert!(converged(&v, 0.41, 0.0));
        assert!(!converged(&v, 0.40, 0.0));
        assert!(converged(&[5.0; 4], 0.0, 0.0), "no spread at all");
        assert!(!converged(&[1.0, f64::NAN], 1e9, 1e9));
        assert!(!converged(&[1.0, f64::INFINITY], 1e9, 1e9));
    }

    #[test]
    fn stagnation_counts_from_the_last_improvement() {
        let h = [9.0, 8.0, 8.0, 7.0, 7.0, 7.0, 7.0, 7.0];
        assert_eq!(improved_at(&h, 7), 3);
        assert_eq!(improved_at(&h, 2), 1);
        assert_eq!(improved_at(&[3.0, 3.0, 3.0], 2), 0);
        let s = Stops {
            stagnation: Some(4),
            every: 1,
            ..Stops::default()
        };
        assert_eq!(s.fired(6, &[], Some(&h)), None, "3 generations since");
        assert_eq!(s.fired(7, &[], Some(&h)), Some(Termination::Stagnated));
        // Looked at on multiples of `every` only.
        let s = Stops { every: 2, ..s };
        assert_eq!(s.fired(7, &[], Some(&h)), None);
    }

    #[test]
    fn the_spread_fires_before_the_stagnation_and_only_when_looked_at() {
        let s = Stops {
            atol: Some(1.0),
            stagnation: Some(1),
            every: 4,
            ..Stops::default()
        };
        let h = [1.0; 9];
        assert_eq!(
            s.fired(8, &[1.0, 1.5], Some(&h)),
            Some(Termination::Converged)
        );
        assert_eq!(
            s.fired(8, &[1.0, 5.0], Some(&h)),
            Some(Termination::Stagnated)
        );
        assert_eq!(s.fired(6, &[1.0, 1.5], Some(&h)), None);
        assert_eq!(
            s.fired(0, &[1.0, 1.5], Some(&h)),
            None,
            "not before a generation"
        );
        assert_eq!(s.next_after(0), Some(4));
        assert_eq!(s.next_after(4), Some(8));
        assert_eq!(s.next_after(5), Some(8));
        assert_eq!(Stops::default().next_after(5), None);
    }

    #[test]
    fn bad_settings_are_refused_by_name() {
        let bad = |s: Stops, what: &str| {
            let e = s.check().unwrap_err().to_string();
            assert!(e.contains(what), "{e}");
        };
        bad(
            Stops {
                tol: Some(-1.0),
                ..Stops::default()
            },
            "tol",
        );
        bad(
            Stops {
                atol: Some(f64::NAN),
                ..Stops::default()
            },
            "atol",
        );
        bad(
            Stops {
                stagnation: Some(0),
                ..Stops::default()
            },
            "stagnation",
        );
        bad(
            Stops {
                every: 0,
                ..Stops::default()
            },
            "check-every",
        );
        assert!(Stops::default().check().is_ok());
    }
}
