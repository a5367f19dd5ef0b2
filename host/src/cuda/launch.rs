//! A launch's parameters: the run settings every DE kernel takes, and the fields of a
//! parameter struct handed to the driver one by one.

use super::kernels::GpuReal;
use crate::job::config::Job;
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DeviceRepr, LaunchArgs, PushKernelArg};
use gpude_device::abi::{KernelParams, Run};

/// A job's run settings, as every DE kernel takes them (the first field of each family's
/// parameter struct).
pub(crate) fn run_params<T: GpuReal>(job: &Job) -> Run<T> {
    Run {
        f: T::of(job.f()),
        cr: T::of(job.cr()),
        // No target: NaN, which no value reaches (−∞ would be reached by an objective
        // that overflows to −∞, ending the run early where the CPU engine goes on).
        target: T::of(job.target_value().unwrap_or(f64::NAN)),
        strategy: job.strategy() as u32,
        crossover: job.crossover() as u32,
        bounds: job.bounds() as u32,
        // The separable family reads its objective's flags here (see
        // `gpude_device::abi::Run::formula`).
        formula: match job.objective().separable_flags(T::PRECISION) {
            Some(flags) if job.builtin().is_none() => flags.bits(),
            _ => job.formula() as u32,
        },
        dim: job.dim(),
        np: job.pop(),
        gens: job.generations(),
        variant: job.thesis_variant().bits(),
    }
}

/// The device address of a buffer, for a pointer field of a parameter struct.
pub(crate) fn dev<T>(buf: &CudaSlice<T>, stream: &CudaStream) -> *mut T {
    // The engine turns cudarc's event tracking off (see `CudaEngine::new`), so the
    // returned guard records nothing and may go at once.
    let (ptr, _guard) = buf.device_ptr(stream);
    ptr as *mut T
}

/// The device address of an optional buffer; null without one.
pub(crate) fn dev_opt<T>(buf: Option<&CudaSlice<T>>, stream: &CudaStream) -> *mut T {
    buf.map_or(std::ptr::null_mut(), |b| dev(b, stream))
}

/// A byte of a parameter struct, as cudarc hands a kernel parameter to the driver: by
/// the address of its first byte (the driver copies the parameter's declared size).
#[repr(transparent)]
struct ParamByte(u8);

// SAFETY: only the address of a `ParamByte` reaches the driver; `push_params` makes it the
// first byte of a field whose size is the kernel parameter's size (checked against the
// PTX by the build script), and the field outlives the launch builder.
unsafe impl DeviceRepr for ParamByte {}

/// Pushes the fields of `p` as the kernel's parameters, one each, in order: the entry
/// points take their parameter struct's fields (see `gpude_device::abi`).
pub(crate) fn push_params<'a, P: KernelParams>(b: &mut LaunchArgs<'a>, p: &'a P) {
    let base = (p as *const P).cast::<u8>();
    for field in P::FIELDS {
        // SAFETY: `field.offset` is the offset of a field of `P` (the contract of
        // `KernelParams`), so the byte lies inside `*p`, is initialised, and is borrowed
        // for as long as the builder.
        let byte = unsafe { &*base.add(field.offset).cast::<ParamByte>() };
        b.arg(byte);
    }
}

/// Bounds converted to `T` and padded to the row stride.
pub(crate) fn padded<T: GpuReal>(v: &[f64], st: usize) -> Vec<T> {
    let mut out: Vec<T> = v.iter().map(|&x| T::of(x)).collect();
    out.resize(st, T::ZERO);
    out
}
