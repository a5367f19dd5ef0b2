//! The published numbers of Castro Liera et al. 2012 (GA and PSO on a GeForce GTX 460,
//! one CUDA block per island): tables 1 and 2.

use gpude::Function;

/// Islands (CUDA blocks) and particles per island of the paper's PSO.
pub const ISLANDS: u32 = 21;
pub const PARTICLES: u32 = 128;
pub const DIM: u32 = 30;
/// Runs ("muestras") per case in the paper.
pub const RUNS: u32 = 1500;
/// The GA's islands and their size, its tournament, crossover and mutation
/// probabilities, and its migration: the best 2 of the next island replace the worst 2
/// every 10 % of the generations.
pub const GA_ISLANDS: u32 = 14;
pub const GA_SIZE: u32 = 64;
pub const GA_MIGRANTS: u32 = 2;
pub const GA_INTERVAL_PCT: u32 = 10;

/// One row of the paper's tables: generations, success in %, time in s.
#[derive(Clone, Copy, Debug)]
pub struct Row {
    pub generations: u32,
    pub success_pct: Option<f64>,
    pub time_s: f64,
}

/// One function of the experiment.
#[derive(Clone, Copy, Debug)]
pub struct Case {
    pub function: Function,
    /// The paper's search interval (CEC'05).
    pub domain: (f64, f64),
    /// The largest error counted as a success ("ErrMax").
    pub target: f64,
    /// PSO (table 1): the row with 100 % success, then the shorter one.
    pub pso: [Row; 2],
    /// The GA (table 2), on 14 islands of 64 (its operators are unstated: gpude's
    /// rerun chooses BLX-α crossover and the breeder GA's mutation).
    pub ga: Row,
}

const fn row(generations: u32, success_pct: Option<f64>, time_s: f64) -> Row {
    Row {
        generations,
        success_pct,
        time_s,
    }
}

/// Tables 1 and 2 of the paper, in its order.
pub const CASES: [Case; 4] = [
    Case {
        function: Function::Ackley,
        domain: (-32.0, 32.0),
        target: 2e-6,
        pso: [row(13000, Some(100.0), 1.02), row(12000, Some(99.93), 0.95)],
        ga: row(55000, Some(100.0), 22.99),
    },
    Case {
        function: Function::Rastrigin,
        domain: (-5.0, 5.0),
        target: 1e-6,
        pso: [row(76000, Some(100.0), 5.90), row(74000, Some(99.60), 5.75)],
        ga: row(8000, Some(100.0), 4.33),
    },
    Case {
        function: Function::Schwefel12,
        domain: (-100.0, 100.0),
        target: 1e-6,
        pso: [row(42000, Some(100.0), 5.8), row(41000, Some(99.80), 5.24)],
        ga: row(20000, None, 46.59),
    },
    Case {
        function: Function::Weierstrass,
        domain: (-0.5, 0.5),
        target: 5.7e-6,
        pso: [row(3100, Some(100.0), 5.53), row(3000, Some(99.20), 5.37)],
        ga: row(6000, None, 320.68),
    },
];
