//! Problems: an objective function, a dimension and the initial domain.

use crate::error::{Error, Result};
use gpude_device::Function;

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
    },
    FunctionInfo {
        function: Function::Griewank,
        name: "griewank",
        formula: "sum x_j^2/4000 - prod cos(x_j/sqrt(j)) + 1",
        domain: (-600.0, 600.0),
        argmin: 0.0,
        min: 0.0,
    },
    FunctionInfo {
        function: Function::Rosenbrock,
        name: "rosenbrock",
        formula: "sum_{j<D} (1 - x_j)^2 + 100 (x_{j+1} - x_j^2)^2",
        domain: (-600.0, 600.0),
        argmin: 1.0,
        min: 0.0,
    },
    FunctionInfo {
        function: Function::Ackley,
        name: "ackley",
        formula: "-20 exp(-0.2 sqrt(sum x_j^2 / D)) - exp(sum cos(2 pi x_j) / D) + 20 + e",
        domain: (-32.0, 32.0),
        argmin: 0.0,
        min: 0.0,
    },
    FunctionInfo {
        function: Function::Penalized,
        name: "f4",
        formula: "0.1 {sin^2(3 pi x_1) + sum_{j<D} (x_j - 1)^2 [1 + sin^2(3 pi x_{j+1})] + (x_D - 1)^2 [1 + sin^2(2 pi x_D)]} + sum u(x_j, 5, 100, 4)",
        domain: (-600.0, 600.0),
        argmin: 1.0,
        min: 0.0,
    },
    FunctionInfo {
        function: Function::Rastrigin,
        name: "rastrigin",
        formula: "10 D + sum (x_j^2 - 10 cos(2 pi x_j))",
        domain: (-5.12, 5.12),
        argmin: 0.0,
        min: 0.0,
    },
    FunctionInfo {
        function: Function::Schwefel12,
        name: "schwefel12",
        formula: "sum_i (sum_{j<=i} x_j)^2",
        domain: (-100.0, 100.0),
        argmin: 0.0,
        min: 0.0,
    },
    FunctionInfo {
        function: Function::Weierstrass,
        name: "weierstrass",
        formula: "sum_j sum_{k=0}^{20} 0.5^k cos(2 pi 3^k (x_j + 0.5)) - D sum_k 0.5^k cos(pi 3^k)",
        domain: (-0.5, 0.5),
        argmin: 0.0,
        min: 0.0,
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
            name: name.to_string(),
            known: FUNCTIONS
                .iter()
                .map(|i| i.name)
                .collect::<Vec<_>>()
                .join(", "),
        })
    }
}

/// A function, a dimension and the initial domain (per component).
#[derive(Clone, Debug, PartialEq)]
pub struct Problem {
    pub function: Function,
    pub lower: Vec<f64>,
    pub upper: Vec<f64>,
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
        check_dim(dim)?;
        Self::with_box(function, vec![lo; dim as usize], vec![hi; dim as usize])
    }

    /// One interval per component.
    pub fn with_box(function: Function, lower: Vec<f64>, upper: Vec<f64>) -> Result<Self> {
        check_dim(lower.len() as u64)?;
        if lower.len() != upper.len() {
            return Err(Error::invalid(
                "upper bounds",
                format!("{} values", upper.len()),
                format!("one per component ({})", lower.len()),
            ));
        }
        for (j, (&lo, &hi)) in lower.iter().zip(&upper).enumerate() {
            if !lo.is_finite() {
                return Err(Error::invalid(
                    "lower bound",
                    format!("{lo} (component {j})"),
                    "a finite number",
                ));
            }
            if !hi.is_finite() {
                return Err(Error::invalid(
                    "upper bound",
                    format!("{hi} (component {j})"),
                    "a finite number",
                ));
            }
            if lo >= hi {
                return Err(Error::invalid(
                    "bounds",
                    format!("[{lo}, {hi}] (component {j})"),
                    "lower < upper",
                ));
            }
        }
        Ok(Problem {
            function,
            lower,
            upper,
        })
    }

    pub fn dim(&self) -> u32 {
        self.lower.len() as u32
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

fn check_dim(dim: impl Into<u64>) -> Result<()> {
    let dim = dim.into();
    if dim == 0 || dim > MAX_DIM as u64 {
        return Err(Error::invalid("dimension", dim, format!("1 ..= {MAX_DIM}")));
    }
    Ok(())
}
