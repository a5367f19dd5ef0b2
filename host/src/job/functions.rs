//! The built-in functions: what gpude knows of each (name, formula, usual domain,
//! optimum), from the registry's list.

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
            name: crate::error::clip(name),
            known: FUNCTIONS
                .iter()
                .map(|i| i.name)
                .collect::<Vec<_>>()
                .join(", "),
        })
    }
}
