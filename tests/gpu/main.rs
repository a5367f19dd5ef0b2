//! GPU tests: parity of the CUDA kernels with the CPU engine, and the CUDA engine's
//! behaviour. They need an NVIDIA driver and GPU; without one every test is reported as
//! skipped (this test binary has its own harness so that the message is always shown).
//!
//! The tests are grouped by kernel family, a module each; a module's `tests()` lists its
//! tests under their functions' names. Arguments that do not start with `-` select the
//! tests whose names contain one of them.

use gpude::CudaEngine;
use std::panic::{AssertUnwindSafe, catch_unwind};

/// A test: its name and its function.
type Test = (&'static str, fn(&CudaEngine));

/// The tests `$name, …`, each under its function's name.
macro_rules! tests {
    ($($name:ident),* $(,)?) => {
        vec![$((stringify!($name), $name as fn(&gpude::CudaEngine))),*]
    };
}

mod adaptive;
mod batch;
mod callbacks;
mod common;
mod control;
mod evaluate;
mod expressions;
mod gpus;
mod islands;
mod layouts;
mod pipelined;
mod ptx;
mod resident;
mod variants;

fn main() {
    let tests: Vec<Test> = [
        evaluate::tests(),
        layouts::tests(),
        batch::tests(),
        control::tests(),
        expressions::tests(),
        ptx::tests(),
        variants::tests(),
        resident::tests(),
        pipelined::tests(),
        adaptive::tests(),
        callbacks::tests(),
        islands::tests(),
        gpus::tests(),
    ]
    .concat();
    let mut names: Vec<&str> = tests.iter().map(|t| t.0).collect();
    names.sort_unstable();
    if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
        panic!("two tests are named {}", w[0]);
    }
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let t0 = std::time::Instant::now();
    let engine = match gpude::cuda_engine(0, 4) {
        Ok(e) => e,
        Err(e) => {
            println!(
                "gpu tests: SKIPPED all {} — no usable GPU: {e}",
                tests.len()
            );
            println!(
                "test result: ok. 0 passed; 0 failed; {} ignored",
                tests.len()
            );
            return;
        }
    };
    println!(
        "gpu tests on {} (sm_{}{}, {} SMs); module loaded in {:.2} s",
        engine.device_name(),
        engine.compute_capability().0,
        engine.compute_capability().1,
        engine.multiprocessors(),
        t0.elapsed().as_secs_f64()
    );
    // A skipped test's panic (common::skip) is reported by the harness, not the hook.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if info.payload().downcast_ref::<common::Skip>().is_none() {
            hook(info)
        }
    }));
    let (mut passed, mut failed, mut skipped) = (0, 0, 0);
    for (name, t) in tests {
        if !filter.is_empty() && !filter.iter().any(|f| name.contains(f.as_str())) {
            continue;
        }
        let start = std::time::Instant::now();
        match catch_unwind(AssertUnwindSafe(|| t(&engine))) {
            Ok(()) => {
                passed += 1;
                println!(
                    "test {name} ... ok ({:.2} s)",
                    start.elapsed().as_secs_f64()
                );
            }
            Err(payload) => match payload.downcast_ref::<common::Skip>() {
                Some(common::Skip(why)) => {
                    skipped += 1;
                    println!("test {name} ... SKIPPED: {why}");
                }
                None => {
                    failed += 1;
                    println!("test {name} ... FAILED");
                }
            },
        }
    }
    println!(
        "test result: {}. {passed} passed; {failed} failed; {skipped} ignored",
        if failed == 0 { "ok" } else { "FAILED" }
    );
    if failed > 0 {
        std::process::exit(1);
    }
}
