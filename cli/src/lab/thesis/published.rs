//! The thesis's published figures: S. J. Domínguez González, MSc thesis, UMSNH 2011,
//! chapter 5 (the GPU version "EDCP" on a Tesla C2050, single precision, D = 128,
//! 35 runs per case, success = final error ≤ 1e-10).

use gpude::Function;

/// The dimension of every experiment.
pub const DIM: u32 = 128;
/// Independent runs per case.
pub const RUNS: u32 = 35;
/// A run succeeds when its final error is at most this.
pub const SUCCESS_ERROR: f64 = 1e-10;

/// One population size of one function.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Case {
    pub np: u32,
    /// Mean total time of one run in seconds (section 5.1, Figures 5.1(a)–5.4(a)).
    pub time_s: f64,
    /// Mean final error over the 35 runs, where the text states it (Figures 5.9,
    /// 5.14, 5.18 and 5.23 are described only at some sizes).
    pub mean_error: Option<f64>,
    /// Runs with error ≤ 1e-10, in percent (Figures 5.8, 5.13, 5.22; Ackley: 0 % in
    /// every case, section 5.2.4).
    pub success_pct: f64,
}

/// One function's rows of Table 5.6: the original DE against EDCP.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Comparison {
    /// The population size of the comparison (the function's largest).
    pub np: u32,
    /// The evaluations as Table 5.6 prints them (for Griewank 8,299,192, where
    /// Np + Np·g_max gives 8,200,192).
    pub evaluations_printed: u64,
    pub original_time_s: f64,
    pub original_error: f64,
    pub edcp_time_s: f64,
    pub edcp_error: f64,
}

/// One test function of chapter 5.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Experiment {
    pub function: Function,
    /// The name in titles.
    pub title: &'static str,
    pub g_max: u32,
    /// The initial domain, the same interval in every component.
    pub domain: (f64, f64),
    pub cases: &'static [Case],
    pub table56: Comparison,
}

const fn case(np: u32, time_s: f64, mean_error: Option<f64>, success_pct: f64) -> Case {
    Case {
        np,
        time_s,
        mean_error,
        success_pct,
    }
}

/// The four experiments in the thesis's order (sections 5.2.2 – 5.2.5).
pub const EXPERIMENTS: [Experiment; 4] = [
    Experiment {
        function: Function::Griewank,
        title: "Griewank",
        g_max: 1000,
        domain: (-600.0, 600.0),
        cases: &[
            case(2048, 1.192, Some(0.000986), 85.71),
            case(4096, 2.030, None, 94.29),
            case(8192, 4.071, Some(0.000211), 97.14),
        ],
        table56: Comparison {
            np: 8192,
            evaluations_printed: 8_299_192,
            original_time_s: 5.43684,
            original_error: 0.04316,
            edcp_time_s: 5.14613,
            edcp_error: 0.00041,
        },
    },
    Experiment {
        function: Function::Rosenbrock,
        title: "Rosenbrock",
        g_max: 18000,
        domain: (-600.0, 600.0),
        cases: &[
            case(2048, 25.607, Some(0.569521), 82.86),
            case(4096, 40.107, Some(0.569520), 82.86),
            case(8192, 74.375, Some(0.341711), 91.43),
        ],
        table56: Comparison {
            np: 8192,
            evaluations_printed: 147_464_192,
            original_time_s: 92.017630,
            original_error: 114.25053,
            edcp_time_s: 79.20554,
            edcp_error: 0.35437,
        },
    },
    Experiment {
        function: Function::Ackley,
        title: "Ackley",
        g_max: 3000,
        domain: (-32.0, 32.0),
        cases: &[
            case(2048, 3.105, Some(0.000017), 0.0),
            case(4096, 5.267, None, 0.0),
            case(8192, 10.723, None, 0.0),
            case(16384, 22.761, None, 0.0),
            case(32768, 46.352, None, 0.0),
            case(65535, 93.452, Some(0.000007), 0.0),
        ],
        table56: Comparison {
            np: 65535,
            evaluations_printed: 196_670_535,
            original_time_s: 152.13696,
            original_error: 21.11168,
            edcp_time_s: 139.83214,
            edcp_error: 0.000007,
        },
    },
    Experiment {
        function: Function::Penalized,
        title: "f4",
        g_max: 2000,
        domain: (-600.0, 600.0),
        cases: &[
            case(2048, 2.382, Some(3.784998e-13), 100.0),
            case(4096, 4.032, Some(2.144040e-13), 100.0),
            case(8192, 8.061, Some(2.144040e-13), 100.0),
        ],
        table56: Comparison {
            np: 8192,
            evaluations_printed: 16_392_192,
            original_time_s: 11.29543,
            original_error: 4.00148,
            edcp_time_s: 9.53449,
            edcp_error: 0.00024,
        },
    },
];

/// Table 5.5: the 35 GPU errors of Ackley at Np = 65535: (Np, best, median, worst).
pub const ACKLEY_TABLE_5_5: (u32, f64, f64, f64) = (65535, 6.68e-6, 6.68e-6, 1.05e-5);

/// The experiment of a function, if the thesis has one.
pub fn experiment(f: Function) -> Option<&'static Experiment> {
    EXPERIMENTS.iter().find(|e| e.function == f)
}
