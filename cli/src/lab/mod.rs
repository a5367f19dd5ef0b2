//! The experiments: `gpude reproduce` (the thesis's chapter 5, Castro Liera et al. 2012
//! and the CEC 2017 competition rerun beside their published numbers) and `gpude bench`
//! (the engines' speed on fixed cases). They use the library as any program would; the
//! product subcommands (`run`, `resume`, `batch`, `eval`, `functions`, `info`) do not
//! depend on them.

pub(crate) mod bench;
pub mod bench_cases;
pub mod castro2012;
pub mod cec2017_reproduction;
pub mod markdown;
pub mod plot;
pub(crate) mod reproduce;
pub mod thesis;
