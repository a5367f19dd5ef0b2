//! The evaluation kernel: the built-in functions' values in both formulas against the
//! CPU's, bit for bit.

use crate::Test;
use crate::common::{compare, uniform};
use gpude::{CudaEngine, Formula, Precision};

pub fn tests() -> Vec<Test> {
    tests![evaluate_kernel_matches_cpu_bit_for_bit]
}

fn evaluate_kernel_matches_cpu_bit_for_bit(e: &CudaEngine) {
    let mut next = uniform(0x9e3779b97f4a7c15);
    for info in gpude::FUNCTIONS {
        for dim in [1u32, 2, 3, 5, 30, 128, 130, 300] {
            let (lo, hi) = info.domain;
            // Points over the domain, and points 1e-1 … 1e-20 from the optimum, where
            // the exact formulas differ most from the textbook ones.
            let mut pts: Vec<f64> = (0..dim as usize * 37)
                .map(|_| lo + next() * (hi - lo))
                .collect();
            for k in 1..=20 {
                let r = 10f64.powi(-k);
                pts.extend((0..dim).map(|_| info.argmin + r * (2.0 * next() - 1.0)));
            }
            for p in [Precision::F32, Precision::F64] {
                for formula in Formula::ALL {
                    let gpu = match p {
                        Precision::F32 => e.evaluate::<f32>(info.function, formula, dim, &pts),
                        Precision::F64 => e.evaluate::<f64>(info.function, formula, dim, &pts),
                    }
                    .expect("evaluate");
                    let cpu: Vec<f64> = pts
                        .chunks(dim as usize)
                        .map(|x| gpude::evaluate_as(info.function, p, formula, x).unwrap())
                        .collect();
                    let (worst, same) = compare(&gpu, &cpu);
                    assert_eq!(
                        same,
                        cpu.len(),
                        "{} D={dim} {p:?} {formula:?}: {same}/{} equal, worst rel {worst:e}",
                        info.name,
                        cpu.len()
                    );
                }
            }
        }
    }
}
