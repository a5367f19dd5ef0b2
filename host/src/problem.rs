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
    /// The smallest dimension the function is defined for (2 for pair terms).
    pub min_dim: u32,
}

/// Expands to [`FUNCTIONS`] from the registry's list ([`gpude_device::registry`]).
macro_rules! function_table {
    ($($(#[$doc:meta])* $variant:ident = $num:literal, $key:ident, $name:literal,
        $formula:literal, ($lo:expr, $hi:expr), $argmin:expr, $min:expr, $min_dim:literal;)*) => {
        /// Every function, in the order `gpude functions` lists them.
        pub const FUNCTIONS: [FunctionInfo; Function::ALL.len()] = [$(
            FunctionInfo {
                function: Function::$variant,
                name: $name,
                formula: $formula,
                domain: ($lo, $hi),
                argmin: $argmin,
                min: $min,
                min_dim: $min_dim,
            },
        )*];
    };
}
gpude_device::builtin_functions!(function_table);

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
