//! `gpude reproduce`: one subcommand per published experiment, each rerun and written
//! beside the published numbers; each experiment's flags and run are in its own folder.

use super::{castro2012, cec2017_reproduction, thesis};
use crate::Result;

#[derive(Debug, clap::Args)]
pub struct Args {
    #[command(subcommand)]
    pub what: What,
}

/// What to reproduce.
#[derive(Debug, clap::Subcommand)]
pub enum What {
    /// The thesis's chapter 5: the variant on Griewank, Rosenbrock, f4 and Ackley at
    /// D = 128, 35 runs per case, and Table 5.6 (original DE against the variant).
    Thesis(Box<thesis::command::Args>),
    /// Castro Liera et al. 2012: PSO on 21 islands × 128 particles with ring
    /// migration every 1 % of the generations, and gpude's DE on the same islands, on
    /// Rastrigin, Ackley, Schwefel 1.2 and Weierstrass at D = 30.
    Castro2012(Box<castro2012::command::Args>),
    /// The CEC 2017 suite under the competition's protocol (51 runs, 10 000·D evaluations,
    /// errors below 1e-8 counted as 0): gpude's jSO and L-SHADE beside the published jSO,
    /// LSHADE-cnEpSin and EBOwithCMAR, with a rank-sum test against the published jSO runs.
    Cec2017(Box<cec2017_reproduction::command::Args>),
}

pub fn run(args: Args) -> Result<String> {
    match args.what {
        What::Thesis(a) => thesis::command::run(*a),
        What::Castro2012(a) => castro2012::command::run(*a),
        What::Cec2017(a) => cec2017_reproduction::command::run(*a),
    }
}
