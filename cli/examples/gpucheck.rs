//! Runs the benchmark cases (optionally for several register caps of the kernels) and
//! prints JSON lines and a table per cap.
//!
//! usage: gpucheck [--quick] [--caps 0,64,96] [--only SUBSTRING] [--ptx-dir DIR]
//! (cap 0: no cap; 1: the engine's default). `--ptx-dir` runs the kernel modules
//! `DIR/kernel_*.ptx` of another build (its build script's output folder) instead of
//! the embedded ones, so that two builds' kernels are timed on the same machine; their
//! parameters must be a prefix of this build's (the driver reads only those).
fn main() -> gpude::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let quick = args.iter().any(|a| a == "--quick");
    let opt = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|k| args.get(k + 1))
            .cloned()
    };
    let caps: Vec<u32> = opt("--caps")
        .map(|s| s.split(',').filter_map(|c| c.parse().ok()).collect())
        .unwrap_or_else(|| vec![1]);
    let only = opt("--only");
    let mut tables = String::new();
    for cap in caps {
        // SAFETY-free: the variable is read when kernels are first loaded by a new engine.
        if cap == 1 {
            unsafe_env::remove("GPUDE_MAXNREG");
        } else {
            unsafe_env::set("GPUDE_MAXNREG", &cap.to_string());
        }
        let engine = match opt("--ptx-dir") {
            Some(dir) => Some(engine_from(&dir)?),
            None => gpude::cuda_engine(0, 4).ok(),
        };
        let mut recs = Vec::new();
        for c in gpude_cli::lab::bench_cases::standard_cases(engine.is_some(), quick) {
            if only.as_deref().is_some_and(|o| !c.name.contains(o))
                || (cap != 1 && c.backend == "cpu")
            {
                continue;
            }
            let r = gpude_cli::lab::bench_cases::measure(&c, engine.as_ref(), 3)?;
            println!("{}", serde_json::to_string(&r).expect("json"));
            recs.push(r);
        }
        tables += &format!(
            "-- register cap: {}\n{}",
            match cap {
                0 => "none".to_string(),
                1 => "default".to_string(),
                c => c.to_string(),
            },
            gpude_cli::lab::bench_cases::table(&recs)
        );
    }
    print!("{tables}");
    Ok(())
}

/// An engine with the kernel modules of `dir` (`kernel_NAME.ptx`, one per kernel).
fn engine_from(dir: &str) -> gpude::Result<gpude::CudaEngine> {
    let mut kernels: Vec<(&'static str, &'static str)> = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        let file = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if let Some(name) = file
            .strip_prefix("kernel_")
            .and_then(|n| n.strip_suffix(".ptx"))
        {
            let ptx = std::fs::read_to_string(&path)?;
            // The engine keeps the modules for the whole run, as it does the embedded ones.
            kernels.push((
                Box::leak(name.to_string().into_boxed_str()),
                Box::leak(ptx.into_boxed_str()),
            ));
        }
    }
    eprintln!("gpucheck: {} kernel modules from {dir}", kernels.len());
    gpude::host::CudaEngine::new(Box::leak(kernels.into_boxed_slice()), 0, 4)
}

mod unsafe_env {
    pub fn set(k: &str, v: &str) {
        // SAFETY: single-threaded at this point (no engine or worker threads are running).
        unsafe { std::env::set_var(k, v) }
    }
    pub fn remove(k: &str) {
        // SAFETY: as above.
        unsafe { std::env::remove_var(k) }
    }
}
