//! The host's GPUs as the driver reports them, without opening a context on any: their
//! names, memory and multiprocessors, and how each pair is linked.

use super::engine::{cuda_err, driver_present};
use crate::error::{Error, Result};
use cudarc::driver::result::device;
use cudarc::driver::sys::{self, CUdevice_P2PAttribute_enum as P, CUdevice_attribute_enum as A};

/// One GPU of the host.
#[derive(Clone, Debug, PartialEq)]
pub struct GpuInfo {
    pub index: usize,
    pub name: String,
    /// Its memory in bytes.
    pub memory: u64,
    pub capability: (i32, i32),
    pub multiprocessors: u32,
}

/// How GPU `from` reaches GPU `to`'s memory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PeerLink {
    pub from: usize,
    pub to: usize,
    /// Can `from` read and write `to`'s memory directly (peer access)?
    pub access: bool,
    /// Are atomics on `to`'s memory native from `from`? The driver reports this for
    /// NVLink (and NVSwitch) links, not for PCIe: gpude names such a link NVLink.
    pub native_atomics: bool,
    /// The driver's relative performance rank of the link (lower is faster; 0 when it
    /// gives none).
    pub rank: i32,
}

impl PeerLink {
    /// `NVLink`, `PCIe` or `none`, as [`PeerLink::native_atomics`] says.
    pub fn kind(&self) -> &'static str {
        match (self.access, self.native_atomics) {
            (true, true) => "NVLink",
            (true, false) => "PCIe",
            (false, _) => "none",
        }
    }
}

/// How many GPUs the driver reports (an error without a driver).
pub fn gpu_count() -> Result<usize> {
    if !driver_present() {
        return Err(Error::CudaUnavailable(
            "no NVIDIA driver library (libcuda.so) was found".into(),
        ));
    }
    cudarc::driver::result::init().map_err(cuda_err("starting the driver"))?;
    let n = device::get_count().map_err(cuda_err("counting the GPUs"))?;
    Ok(n.max(0) as usize)
}

/// Every GPU of the host, in the driver's order.
pub fn gpus() -> Result<Vec<GpuInfo>> {
    let n = gpu_count()?;
    (0..n)
        .map(|index| {
            let dev = device::get(index as i32).map_err(cuda_err("finding a GPU"))?;
            // SAFETY: `dev` is a device handle the driver just gave for this index, and
            // these queries only read its properties.
            let attr = |a: A| unsafe { device::get_attribute(dev, a) };
            let read = |a: A, what: &str| {
                attr(a).map_err(cuda_err(format!("reading GPU {index}'s {what}")))
            };
            Ok(GpuInfo {
                index,
                name: device::get_name(dev).unwrap_or_else(|_| "unknown GPU".into()),
                // SAFETY: as above.
                memory: unsafe { device::total_mem(dev) }
                    .map_err(cuda_err(format!("reading GPU {index}'s memory")))?
                    as u64,
                capability: (
                    read(
                        A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                        "capability",
                    )?,
                    read(
                        A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                        "capability",
                    )?,
                ),
                multiprocessors: read(
                    A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                    "multiprocessors",
                )?
                .max(0) as u32,
            })
        })
        .collect()
}

/// How every ordered pair of distinct GPUs is linked.
pub fn peer_links() -> Result<Vec<PeerLink>> {
    let n = gpu_count()?;
    let mut out = Vec::new();
    for from in 0..n {
        for to in (0..n).filter(|&t| t != from) {
            let get = |i: usize| device::get(i as i32).map_err(cuda_err("finding a GPU"));
            let (a, b) = (get(from)?, get(to)?);
            let p2p = |attr: P| -> Result<i32> {
                let mut v = 0;
                // SAFETY: `a` and `b` are distinct device handles from the driver, and
                // `v` receives one integer.
                unsafe { sys::cuDeviceGetP2PAttribute(&mut v, attr, a, b) }
                    .result()
                    .map_err(cuda_err(format!(
                        "reading the link from GPU {from} to {to}"
                    )))?;
                Ok(v)
            };
            out.push(PeerLink {
                from,
                to,
                access: p2p(P::CU_DEVICE_P2P_ATTRIBUTE_ACCESS_SUPPORTED)? != 0,
                native_atomics: p2p(P::CU_DEVICE_P2P_ATTRIBUTE_NATIVE_ATOMIC_SUPPORTED)? != 0,
                rank: p2p(P::CU_DEVICE_P2P_ATTRIBUTE_PERFORMANCE_RANK)?,
            });
        }
    }
    Ok(out)
}
