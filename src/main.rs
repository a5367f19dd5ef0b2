fn main() {
    let job = gpude::Job::builder(gpude::Function::Griewank, 30).pop(256).generations(500).seed(1).build().unwrap();
    let s = gpude::Solver::new(&gpude::SolverOptions::default()).unwrap();
    let r = s.run(&job, None).unwrap();
    println!("{} {} {:?} {}", s.backend_name(), r.best_f, r.elapsed, r.generations);
}
