//! Problems: an objective function, a dimension and the initial domain.

use crate::error::{Error, Result, num};
use gpude_device::{Function, Real};
use std::fmt;
use std::sync::Arc;

/// What gpude knows of a function: its name, formula, usual domain and optimum.
#[derive(Clone, Copy, Debug)]
pub struct FunctionInfo {
    pub function: Function,
    pub name: &'static str,
    pub formula: &'static str,
    /// The usual initial domain [lo, hi] in every component.
    pub domain: (f64, f64),
    /// The minimiser's components (all equal) and the minimum value.
    pub argmin: f64,
    pub min: f64,
    /// The smallest dimension the function is defined for (Rosenbrock couples
    /// neighbours: with one component it is 0 everywhere).
    pub min_dim: u32,
}

/// Every function, in the order `gpude functions` lists them.
pub const FUNCTIONS: [FunctionInfo; 8] = [
    FunctionInfo {
        function: Function::Sphere,
        name: "sphere",
        formula: "sum x_j^2",
        domain: (-100.0, 100.0),
        argmin: 0.0,
        min: 0.0,
        min_dim: 1,
    },
    FunctionInfo {
        function: Function::Griewank,
        name: "griewank",
        formula: "sum x_j^2/4000 - prod cos(x_j/sqrt(j)) + 1",
        domain: (-600.0, 600.0),
        argmin: 0.0,
        min: 0.0,
        min_dim: 1,
    },
    FunctionInfo {
        function: Function::Rosenbrock,
        name: "rosenbrock",
        formula: "sum_{j<D} (1 - x_j)^2 + 100 (x_{j+1} - x_j^2)^2",
        domain: (-600.0, 600.0),
        argmin: 1.0,
        min: 0.0,
        min_dim: 2,
    },
    FunctionInfo {
        function: Function::Ackley,
        name: "ackley",
        formula: "-20 exp(-0.2 sqrt(sum x_j^2 / D)) - exp(sum cos(2 pi x_j) / D) + 20 + e",
        domain: (-32.0, 32.0),
        argmin: 0.0,
        min: 0.0,
        min_dim: 1,
    },
    FunctionInfo {
        function: Function::Penalized,
        name: "f4",
        formula: "0.1 {sin^2(3 pi x_1) + sum_{j<D} (x_j - 1)^2 [1 + 10 sin^2(3 pi x_{j+1})] + (x_D - 1)^2 [1 + sin^2(2 pi x_D)]} + sum u(x_j, 5, 100, 4)",
        domain: (-600.0, 600.0),
        argmin: 1.0,
        min: 0.0,
        min_dim: 1,
    },
    FunctionInfo {
        function: Function::Rastrigin,
        name: "rastrigin",
        formula: "10 D + sum (x_j^2 - 10 cos(2 pi x_j))",
        domain: (-5.12, 5.12),
        argmin: 0.0,
        min: 0.0,
        min_dim: 1,
    },
    FunctionInfo {
        function: Function::Schwefel12,
        name: "schwefel12",
        formula: "sum_i (sum_{j<=i} x_j)^2",
        domain: (-100.0, 100.0),
        argmin: 0.0,
        min: 0.0,
        min_dim: 1,
    },
    FunctionInfo {
        function: Function::Weierstrass,
        name: "weierstrass",
        formula: "sum_j sum_{k=0}^{20} 0.5^k cos(2 pi 3^k (x_j + 0.5)) - D sum_k 0.5^k cos(pi 3^k)",
        domain: (-0.5, 0.5),
        argmin: 0.0,
        min: 0.0,
        min_dim: 1,
    },
];

/// Aliases accepted on input besides the names above.
const ALIASES: [(&str, Function); 3] = [
    ("penalized", Function::Penalized),
    ("schwefel1.2", Function::Schwefel12),
    ("schwefel-1.2", Function::Schwefel12),
];

impl FunctionInfo {
    pub fn of(f: Function) -> &'static FunctionInfo {
        FUNCTIONS
            .iter()
            .find(|i| i.function == f)
            .expect("every function has an entry")
    }

    /// Looks a function up by name (case-insensitive).
    pub fn parse(name: &str) -> Result<&'static FunctionInfo> {
        let n = name.trim().to_ascii_lowercase();
        if let Some(i) = FUNCTIONS.iter().find(|i| i.name == n) {
            return Ok(i);
        }
        if let Some((_, f)) = ALIASES.iter().find(|(a, _)| *a == n) {
            return Ok(Self::of(*f));
        }
        Err(Error::UnknownName {
            kind: "function",
            name: crate::error::clip(name),
            known: FUNCTIONS
                .iter()
                .map(|i| i.name)
                .collect::<Vec<_>>()
                .join(", "),
        })
    }
}

/// A function, a dimension and the initial domain (per component), checked on
/// construction: every bound finite, lower < upper with a finite width, and at least the
/// function's smallest dimension. The bounds are shared, so cloning a problem (or a job)
/// does not copy them.
#[derive(Clone, Debug)]
pub struct Problem {
    function: Function,
    lower: Arc<[f64]>,
    upper: Arc<[f64]>,
}

impl PartialEq for Problem {
    fn eq(&self, o: &Self) -> bool {
        // Bounds are never NaN, so shared bounds are equal bounds.
        let same = |a: &Arc<[f64]>, b: &Arc<[f64]>| Arc::ptr_eq(a, b) || a == b;
        self.function == o.function && same(&self.lower, &o.lower) && same(&self.upper, &o.upper)
    }
}

/// The largest dimension gpude accepts (the GPU's per-individual indices are 32-bit).
pub const MAX_DIM: u32 = 1 << 20;

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
        let p = Problem {
            function,
            lower: lower.into(),
            upper: upper.into(),
        };
        p.check()?;
        Ok(p)
    }

    /// Checks what [`Problem::with_box`] promises (for engines that re-check a job).
    pub fn check(&self) -> Result<()> {
        check_dim(self.function, self.lower.len() as u64)?;
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
        self.function == o.function
            && Arc::ptr_eq(&self.lower, &o.lower)
            && Arc::ptr_eq(&self.upper, &o.upper)
    }

    pub fn function(&self) -> Function {
        self.function
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

    pub fn info(&self) -> &'static FunctionInfo {
        FunctionInfo::of(self.function)
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
    let dim = dim.into();
    let info = FunctionInfo::of(function);
    if dim < info.min_dim as u64 || dim > MAX_DIM as u64 {
        let why = if info.min_dim > 1 {
            format!(
                " ({} needs at least {} components)",
                info.name, info.min_dim
            )
        } else {
            String::new()
        };
        return Err(Error::invalid(
            "dimension",
            dim,
            format!("{} ..= {MAX_DIM}{why}", info.min_dim),
        ));
    }
    Ok(())
}
