//! `gpude info`: what this build contains, which GPU it would use, and every GPU of the
//! host with how each pair is linked (what `--gpus` can use).

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
    /// Every GPU of the host (empty without a driver).
    gpus: Vec<HostGpu>,
    /// How each ordered pair of GPUs is linked.
    links: Vec<Link>,
}

#[derive(Serialize)]
struct HostGpu {
    device: usize,
    name: String,
    memory_bytes: u64,
    compute_capability: String,
    multiprocessors: u32,
}

#[derive(Serialize)]
struct Link {
    from: usize,
    to: usize,
    /// NVLink, PCIe or none (see `gpude::host::cuda::PeerLink::kind`).
    kind: &'static str,
    peer_access: bool,
    native_atomics: bool,
    performance_rank: i32,
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
    let (gpus, links) = if driver {
        host_gpus()
    } else {
        (Vec::new(), Vec::new())
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
        gpus,
        links,
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
    if info.gpus.len() > 1 {
        for g in &info.gpus {
            line(
                &format!("GPU {}", g.device),
                format!(
                    "{}, {:.1} GiB, {} SMs, sm_{}",
                    g.name,
                    g.memory_bytes as f64 / (1u64 << 30) as f64,
                    g.multiprocessors,
                    g.compute_capability.replace('.', "")
                ),
            );
        }
        for l in &info.links {
            line(
                &format!("link {}->{}", l.from, l.to),
                if l.peer_access {
                    format!("{}, peer access, rank {}", l.kind, l.performance_rank)
                } else {
                    "no peer access".to_string()
                },
            );
        }
    }
    Ok(s)
}

/// Every GPU of the host and their links; empty (with a warning) when the driver
/// cannot say.
fn host_gpus() -> (Vec<HostGpu>, Vec<Link>) {
    let gpus = match gpude::host::cuda::gpus() {
        Ok(list) => list
            .into_iter()
            .map(|g| HostGpu {
                device: g.index,
                name: g.name,
                memory_bytes: g.memory,
                compute_capability: format!("{}.{}", g.capability.0, g.capability.1),
                multiprocessors: g.multiprocessors,
            })
            .collect(),
        Err(e) => {
            eprintln!("warning: cannot list the GPUs: {e}");
            Vec::new()
        }
    };
    let links = match gpude::host::cuda::peer_links() {
        Ok(list) => list
            .into_iter()
            .map(|l| Link {
                from: l.from,
                to: l.to,
                kind: l.kind(),
                peer_access: l.access,
                native_atomics: l.native_atomics,
                performance_rank: l.rank,
            })
            .collect(),
        Err(e) => {
            eprintln!("warning: cannot read the GPUs' links: {e}");
            Vec::new()
        }
    };
    (gpus, links)
}
