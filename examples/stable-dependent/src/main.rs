//! gpude as a dependency of a project on stable Rust: a run on the CPU engine, its
//! result as the re-exported `nalgebra` vector, and whether this build has GPU kernels.
//! Exits 1 when the run does not find Sphere's minimum.

use gpude::nalgebra::DVector;
use gpude::{Backend, Function, Job, Solver, SolverOptions};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let job = Job::builder(Function::Sphere, 5)
        .pop(40)
        .generations(300)
        .seed(7)
        .build()?;
    let solver = Solver::new(&SolverOptions {
        backend: Backend::Cpu,
        ..SolverOptions::default()
    })?;
    let r = solver.run(&job, None)?;
    let best: DVector<f64> = r.best_x.clone();
    println!(
        "sphere, D = 5: best f = {:e} at |x| = {:e}; GPU kernels in this build: {} (PTX for {})",
        r.best_f,
        best.norm(),
        gpude::KERNELS.len(),
        gpude::PTX_ARCH
    );
    if !(r.verified_error < 1e-6) {
        eprintln!("the run missed the minimum: error {}", r.verified_error);
        std::process::exit(1);
    }
    Ok(())
}
