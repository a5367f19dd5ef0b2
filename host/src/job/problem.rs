//! Problems: an objective function, a dimension and the initial domain.

use crate::error::{Error, Result, num};
use crate::job::objective::Objective;
// The built-in functions' table, where callers found it before it had a file.
pub use crate::job::functions::{FUNCTIONS, FunctionInfo};
use gpude_device::{Function, Real};
use std::fmt;
use std::sync::Arc;

/// An objective, a dimension and the initial domain (per component), checked on
/// construction: every bound finite, lower < upper with a finite width, and at least the
/// objective's smallest dimension. The bounds are shared, so cloning a problem (or a job)
/// does not copy them.
#[derive(Clone, Debug)]
pub struct Problem {
    objective: Objective,
    lower: Arc<[f64]>,
    upper: Arc<[f64]>,
}

impl PartialEq for Problem {
    fn eq(&self, o: &Self) -> bool {
        // Bounds are never NaN, so shared bounds are equal bounds.
        let same = |a: &Arc<[f64]>, b: &Arc<[f64]>| Arc::ptr_eq(a, b) || a == b;
        self.objective == o.objective && same(&self.lower, &o.lower) && same(&self.upper, &o.upper)
    }
}

/// Are two slices the same values, bit for bit (0 and -0 differ)?
pub(crate) fn same_bits(a: &[f64], b: &[f64]) -> bool {
    std::ptr::eq(a, b)
        || (a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits()))
}

/// Lower and upper bounds held by several problems.
pub(crate) type SharedBounds = (Arc<[f64]>, Arc<[f64]>);

// The largest dimension, where callers found it before the limits had a file.
pub use crate::job::limits::MAX_DIM;

impl Problem {
    /// The function on its usual domain.
    pub fn new(function: Function, dim: u32) -> Result<Self> {
        let (lo, hi) = FunctionInfo::of(function).domain;
        Self::with_bounds(function, dim, lo, hi)
    }

    /// The same interval in every component.
    pub fn with_bounds(function: Function, dim: u32, lo: f64, hi: f64) -> Result<Self> {
        check_dim(function, dim)?;
        Self::with_box(function, vec![lo; dim as usize], vec![hi; dim as usize])
    }

    /// One interval per component.
    pub fn with_box(
        function: Function,
        lower: impl Into<Arc<[f64]>>,
        upper: impl Into<Arc<[f64]>>,
    ) -> Result<Self> {
        Self::of_objective(Objective::Builtin(function), lower, upper)
    }

    /// Any objective, one interval per component.
    pub fn of_objective(
        objective: Objective,
        lower: impl Into<Arc<[f64]>>,
        upper: impl Into<Arc<[f64]>>,
    ) -> Result<Self> {
        let p = Problem {
            objective,
            lower: lower.into(),
            upper: upper.into(),
        };
        p.check()?;
        Ok(p)
    }

    /// Checks what [`Problem::with_box`] promises (for engines that re-check a job).
    pub fn check(&self) -> Result<()> {
        check_dim_of(&self.objective, self.lower.len() as u64)?;
        if self.lower.len() != self.upper.len() {
            return Err(Error::invalid(
                "upper bounds",
                format!("{} values", self.upper.len()),
                format!("one per component ({})", self.lower.len()),
            ));
        }
        for (j, (&lo, &hi)) in self.lower.iter().zip(self.upper.iter()).enumerate() {
            if !lo.is_finite() {
                return Err(Error::invalid(
                    "lower bound",
                    format!("{} (component {j})", num(lo)),
                    "a finite number",
                ));
            }
            if !hi.is_finite() {
                return Err(Error::invalid(
                    "upper bound",
                    format!("{} (component {j})", num(hi)),
                    "a finite number",
                ));
            }
            if lo >= hi {
                return Err(Error::invalid(
                    "bounds",
                    format!("[{}, {}] (component {j})", num(lo), num(hi)),
                    "lower < upper",
                ));
            }
        }
        Ok(())
    }

    /// Checks that the domain survives rounding to `T`: every bound representable,
    /// lower < upper after rounding, and a finite width `hi − lo` (the mutation's
    /// differences span it).
    pub fn check_in<T: Real + fmt::Display + fmt::LowerExp + Into<f64>>(&self) -> Result<()> {
        for (j, (&lo, &hi)) in self.lower.iter().zip(self.upper.iter()).enumerate() {
            let (l, h) = (T::of(lo), T::of(hi));
            for (name, v, r) in [("lower bound", lo, l), ("upper bound", hi, h)] {
                if !r.to_f64().is_finite() {
                    return Err(Error::invalid(
                        name,
                        format!("{} (component {j})", num(v)),
                        format!(
                            "a number representable in {} (magnitude at most {})",
                            T::NAME,
                            num(T::MAX)
                        ),
                    ));
                }
            }
            // Rounding is monotonic, so l ≤ h; equal means the interval collapsed.
            if l >= h {
                return Err(Error::invalid(
                    "bounds",
                    format!("[{}, {}] (component {j})", num(lo), num(hi)),
                    format!(
                        "an interval that stays non-empty in {} (it rounds to [{}, {}])",
                        T::NAME,
                        num(l),
                        num(h)
                    ),
                ));
            }
            if !(h - l).to_f64().is_finite() {
                return Err(Error::invalid(
                    "bounds",
                    format!("[{}, {}] (component {j})", num(lo), num(hi)),
                    format!(
                        "an interval whose width upper − lower is finite in {} (at most {})",
                        T::NAME,
                        num(T::MAX)
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Same function and the very same (shared) bounds: no need to compare them.
    pub(crate) fn shares_bounds(&self, o: &Problem) -> bool {
        self.objective == o.objective
            && Arc::ptr_eq(&self.lower, &o.lower)
            && Arc::ptr_eq(&self.upper, &o.upper)
    }

    /// The built-in function.
    ///
    /// # Panics
    /// When the objective is not a built-in (see [`Problem::builtin`]).
    pub fn function(&self) -> Function {
        self.builtin().unwrap_or_else(|| {
            panic!(
                "the objective {} is not a built-in function: use builtin() or objective()",
                self.objective.name()
            )
        })
    }

    /// The built-in function, when the objective is one.
    pub fn builtin(&self) -> Option<Function> {
        self.objective.builtin()
    }

    /// What the problem minimises.
    pub fn objective(&self) -> &Objective {
        &self.objective
    }

    pub fn dim(&self) -> u32 {
        self.lower.len() as u32
    }

    /// The lower bound of every component.
    pub fn lower(&self) -> &[f64] {
        &self.lower
    }

    /// The upper bound of every component.
    pub fn upper(&self) -> &[f64] {
        &self.upper
    }

    /// The lower and upper bounds, shared (not copied).
    pub(crate) fn shared_bounds(&self) -> SharedBounds {
        (self.lower.clone(), self.upper.clone())
    }

    /// Takes `other`'s lower and upper bounds where they are this problem's, bit for bit
    /// (so that the two hold one copy).
    pub(crate) fn share_bounds(&mut self, other: &Problem) {
        if same_bits(&self.lower, &other.lower) {
            self.lower = other.lower.clone();
        }
        if same_bits(&self.upper, &other.upper) {
            self.upper = other.upper.clone();
        }
    }

    /// What gpude knows of the built-in function.
    ///
    /// # Panics
    /// When the objective is not a built-in (see [`Problem::builtin`]).
    pub fn info(&self) -> &'static FunctionInfo {
        FunctionInfo::of(self.function())
    }

    /// True when every component has the same interval.
    pub fn uniform_bounds(&self) -> Option<(f64, f64)> {
        let (lo, hi) = (self.lower[0], self.upper[0]);
        (self.lower.iter().all(|&l| l == lo) && self.upper.iter().all(|&u| u == hi))
            .then_some((lo, hi))
    }
}

/// Checks a dimension against gpude's limit and the function's smallest dimension.
pub(crate) fn check_dim(function: Function, dim: impl Into<u64>) -> Result<()> {
    check_dim_of(&Objective::Builtin(function), dim)
}

/// Checks a dimension against gpude's limit and the objective's dimensions.
pub(crate) fn check_dim_of(objective: &Objective, dim: impl Into<u64>) -> Result<()> {
    let dim = dim.into();
    let min_dim = objective.min_dim();
    if dim < min_dim as u64 || dim > MAX_DIM as u64 {
        let why = if min_dim > 1 {
            format!(
                " ({} needs at least {min_dim} components)",
                objective.name()
            )
        } else {
            String::new()
        };
        return Err(Error::invalid(
            "dimension",
            dim,
            format!("{min_dim} ..= {MAX_DIM}{why}"),
        ));
    }
    objective.check_dim(dim)
}
