//! `gpude bench`: the standard benchmark cases (thesis variant, Griewank, D = 128),
//! as a table or JSON.

use crate::{CliError, Result};
use clap::Args as ClapArgs;
use serde::Serialize;

#[derive(Debug, ClapArgs)]
pub struct Args {
    /// Fewer generations per case (a quick look; not for recorded numbers).
    #[arg(long)]
    pub quick: bool,

    /// Only the cases whose name contains this text.
    #[arg(long, value_name = "TEXT")]
    pub only: Option<String>,

    /// Timed repetitions per case and generation count (the median is kept).
    #[arg(long, default_value_t = 3, value_name = "N")]
    pub repeats: usize,

    /// Where to run: auto (GPU cases when a GPU is there, CPU cases always), cpu.
    #[arg(long, default_value = "auto", value_name = "B")]
    pub backend: String,

    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,

    /// Also measure the GPU's ceilings first: HBM and L2 copy bandwidth, FMA issue rate,
    /// the whole-GPU kernels' grid barrier.
    #[arg(long)]
    pub ceilings: bool,

    /// Instead of the standard cases, the multi-GPU ones: the same lists on the first GPU
    /// of LIST (`all`, or indices such as `0,1`) and on all of them.
    #[arg(long, value_name = "LIST")]
    pub gpus: Option<String>,

    /// Also write the JSON to this file (checked before the cases run, written at the end).
    #[arg(long, value_name = "FILE")]
    pub out: Option<std::path::PathBuf>,
}

#[derive(Serialize)]
struct Report<'a> {
    gpude: &'static str,
    ptx_arch: &'static str,
    device: Option<String>,
    multiprocessors: Option<u32>,
    cpu_threads: usize,
    command: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    ceilings: Option<gpude::Ceilings>,
    records: &'a [super::bench_cases::Record],
}

/// A report as JSON, also written to `out` when given.
fn report_json(report: &impl Serialize, out: Option<&std::path::Path>) -> Result<String> {
    let json = serde_json::to_string_pretty(report)
        .map_err(|e| CliError::runtime(format!("cannot write JSON: {e}")))?;
    if let Some(path) = out {
        crate::output::write(path, format!("{json}\n").as_bytes())
            .map_err(|e| CliError::runtime(format!("writing {}: {e}", crate::input::name(path))))?;
    }
    Ok(json)
}

pub fn run(args: Args) -> Result<String> {
    if args.repeats == 0 || args.repeats > 100 {
        return Err(CliError::usage(format!(
            "--repeats = {} is not allowed: 1 ..= 100",
            args.repeats
        )));
    }
    if let Some(path) = &args.out {
        crate::output::check_file(path, "the output file")?;
    }
    if let Some(list) = &args.gpus {
        return scaling(&args, list);
    }
    let engine = match args.backend.trim().to_ascii_lowercase().as_str() {
        "auto" => gpude::cuda_engine(0, 4).ok(),
        "cpu" => None,
        "cuda" | "gpu" => Some(gpude::cuda_engine(0, 4)?),
        other => {
            return Err(CliError::usage(format!(
                "unknown backend {other:?}; known: auto, cpu, cuda"
            )));
        }
    };
    let cases: Vec<_> = super::bench_cases::standard_cases(engine.is_some(), args.quick)
        .into_iter()
        .filter(|c| args.only.as_deref().is_none_or(|o| c.name.contains(o)))
        .collect();
    if cases.is_empty() {
        return Err(CliError::usage(format!(
            "no benchmark case matches --only {:?}",
            args.only.unwrap_or_default()
        )));
    }
    let ceilings = match (&engine, args.ceilings) {
        (Some(e), true) => {
            if !args.json {
                eprintln!("bench: ceilings …");
            }
            Some(e.ceilings()?)
        }
        (None, true) => {
            return Err(CliError::usage(
                "--ceilings measures the GPU, and no GPU was found (or --backend cpu was given)",
            ));
        }
        (_, false) => None,
    };
    let mut records = Vec::new();
    for c in &cases {
        if !args.json {
            eprintln!("bench: {} …", c.name);
        }
        records.push(super::bench_cases::measure(
            c,
            engine.as_ref(),
            args.repeats,
        )?);
    }
    let report = Report {
        gpude: env!("CARGO_PKG_VERSION"),
        ptx_arch: gpude::PTX_ARCH,
        device: engine.as_ref().map(|e| e.device_name().to_string()),
        multiprocessors: engine.as_ref().map(|e| e.multiprocessors()),
        cpu_threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
        command: std::env::args().collect::<Vec<_>>().join(" "),
        ceilings,
        records: &records,
    };
    let json = report_json(&report, args.out.as_deref())?;
    if args.json {
        Ok(json + "\n")
    } else {
        let mut head = match &report.device {
            Some(d) => format!("device: {d}\n"),
            None => "device: none (CPU cases only)\n".to_string(),
        };
        if let Some(c) = &report.ceilings {
            head += &format!(
                "ceilings: HBM copy {:.0} GB/s, L2 copy {:.0} GB/s, FMA f32 {:.2} T/s \
                 ({:.0} G warp instructions/s), FMA f64 {:.2} T/s, grid barrier {:.2} µs \
                 ({} blocks of {} threads)\n",
                c.hbm_gb_per_s,
                c.l2_gb_per_s,
                c.fma_f32_per_s / 1e12,
                c.warp_fma_f32_per_s / 1e9,
                c.fma_f64_per_s / 1e12,
                c.grid_barrier_us,
                c.grid_barrier_blocks,
                c.grid_barrier_threads
            );
        }
        Ok(head + &super::bench_cases::table(&records))
    }
}

#[derive(Serialize)]
struct ScalingReport<'a> {
    gpude: &'static str,
    ptx_arch: &'static str,
    devices: Vec<String>,
    command: String,
    records: &'a [super::bench_gpus::ScalingRecord],
}

/// `gpude bench --gpus LIST`: the multi-GPU cases.
fn scaling(args: &Args, list: &str) -> Result<String> {
    let gpus = gpude::Gpus::parse(list)?;
    let cases: Vec<_> = super::bench_gpus::cases(args.quick)
        .into_iter()
        .filter(|c| args.only.as_deref().is_none_or(|o| c.name.contains(o)))
        .collect();
    if cases.is_empty() {
        return Err(CliError::usage(format!(
            "no multi-GPU case matches --only {:?}",
            args.only.clone().unwrap_or_default()
        )));
    }
    let records = super::bench_gpus::measure(&gpus, &cases, args.repeats)?;
    let devices = gpude::host::cuda::gpus()?
        .into_iter()
        .filter(|g| records.first().is_none_or(|r| r.gpus.contains(&g.index)))
        .map(|g| format!("{}: {}", g.index, g.name))
        .collect();
    let report = ScalingReport {
        gpude: env!("CARGO_PKG_VERSION"),
        ptx_arch: gpude::PTX_ARCH,
        devices,
        command: std::env::args().collect::<Vec<_>>().join(" "),
        records: &records,
    };
    let json = report_json(&report, args.out.as_deref())?;
    if args.json {
        Ok(json + "\n")
    } else {
        Ok(super::bench_gpus::table(&records))
    }
}
