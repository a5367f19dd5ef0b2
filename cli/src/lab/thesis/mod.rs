//! Reruns the experiments of the thesis's chapter 5 (S. J. Domínguez González, MSc thesis,
//! UMSNH 2011) and writes them beside the thesis's published numbers
//! (`gpude reproduce thesis`).
//!
//! The cases: the thesis variant ("EDCP": [`gpude::Strategy::Thesis`], the domain used
//! only for the initial population) at D = 128 on Griewank, Rosenbrock and f4 with
//! Np ∈ {2048, 4096, 8192} and on Ackley with Np up to 65535, 35 independent runs each
//! (one seed, random streams 0 … 34, all in one batch); and Table 5.6, the original DE
//! (rand/1/bin, F = 0.3, Cr = 0.5) against the variant at each function's largest Np with
//! the same number of evaluations.
//!
//! [`published`] holds the thesis's figures, `cases` what to rerun, `runner` runs it
//! ([`reproduce`]) and classifies the failing runs with [`minima`]; [`write`] (`files`)
//! writes `runs.json`, `histories.json`, one convergence plot per function and
//! `REPORT.md` (`report`); `command` holds the flags.

mod cases;
pub mod command;
mod files;
pub mod minima;
pub mod published;
mod report;
mod runner;

pub use cases::{
    Arithmetic, Case, HISTORY_POINTS, MAX_RUNS, ORIGINAL_CR, ORIGINAL_F, Options, QUICK_DIM,
    QUICK_GEN_DIVISOR, QUICK_NP, QUICK_RUNS, Scheme,
};
pub use files::{Written, write};
pub use runner::{
    CaseResult, Context, Curve, Failures, Reproduction, RunRecord, Stats, Trapped, reproduce,
    run_case, sample_generations, utc_now,
};
