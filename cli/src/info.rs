//! `gpude info`: what this build contains and which GPU it would use.

use super::Result;
use super::common;
use serde::Serialize;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// GPU index to describe.
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub device: usize,

    /// Print the information as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Serialize)]
struct Info {
    version: &'static str,
    ptx_arch: &'static str,
    ptx_bytes: usize,
    kernels: usize,
    cuda_driver: bool,
    gpu: Option<Gpu>,
    /// Why no GPU can be used, if none can.
    gpu_error: Option<String>,
}

#[derive(Serialize)]
struct Gpu {
    device: usize,
    name: String,
    compute_capability: String,
    multiprocessors: u32,
}

pub fn run(args: Args) -> Result<String> {
    let driver = gpude::host::cuda::driver_present();
    let (gpu, gpu_error) = if driver {
        match gpude::cuda_engine(args.device, 1) {
            Ok(e) => {
                let (major, minor) = e.compute_capability();
                let gpu = Gpu {
                    device: args.device,
                    name: e.device_name().to_string(),
                    compute_capability: format!("{major}.{minor}"),
                    multiprocessors: e.multiprocessors(),
                };
                (Some(gpu), None)
            }
            Err(e) => (None, Some(e.to_string())),
        }
    } else {
        (
            None,
            Some("no CUDA driver (libcuda.so) was found".to_string()),
        )
    };
    let info = Info {
        version: env!("CARGO_PKG_VERSION"),
        ptx_arch: gpude::PTX_ARCH,
        ptx_bytes: gpude::KERNELS.iter().map(|(_, m)| m.len()).sum(),
        kernels: gpude::KERNELS
            .iter()
            .filter(|(_, m)| m.contains(".entry"))
            .count(),
        cuda_driver: driver,
        gpu,
        gpu_error,
    };
    if args.json {
        return common::to_json(&info);
    }
    let mut s = String::new();
    let mut line = |k: &str, v: String| s.push_str(&format!("{k:<13}{v}\n"));
    line("gpude", info.version.to_string());
    line(
        "PTX",
        format!(
            "{}, {} bytes, {} kernels",
            info.ptx_arch, info.ptx_bytes, info.kernels
        ),
    );
    line(
        "CUDA driver",
        if info.cuda_driver {
            "present"
        } else {
            "not found"
        }
        .to_string(),
    );
    match (&info.gpu, &info.gpu_error) {
        (Some(g), _) => {
            line("GPU", format!("{}: {}", g.device, g.name));
            line("capability", g.compute_capability.clone());
            line("SMs", g.multiprocessors.to_string());
        }
        (None, why) => {
            let why = why.as_deref().unwrap_or("no GPU");
            line("GPU", format!("none, CPU only ({why})"));
        }
    }
    Ok(s)
}
