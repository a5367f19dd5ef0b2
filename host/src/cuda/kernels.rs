//! Which kernel runs a job, and how the driver compiles it: the kernel's key, the real
//! types the kernels exist for, and the register cap of each kernel.

use crate::job::config::Job;
use cudarc::driver::{DeviceRepr, ValidAsZeroBits};
use gpude_device::Real;
use gpude_device::abi::ParamReal;
use gpude_device::registry::{
    Family, KERNEL_NAME_MAX, KernelKey, KernelPrecision, Layout, PIPELINED_SUFFIX,
};

/// The name of a job's kernel in `layout` ([`KernelKey`]): the thesis strategy with
/// init-only bounds has its own specialised family, and one more for the alternatives of
/// a [`gpude_device::ThesisVariant`] that change the trials.
pub(crate) fn kernel_name<T: Real>(layout: Layout, job: &Job) -> String {
    let thesis = job.strategy() == gpude_device::Strategy::Thesis
        && job.bounds() == gpude_device::BoundPolicy::InitOnly;
    let key = KernelKey {
        layout,
        family: match (thesis, job.thesis_variant().changes_trials()) {
            (true, false) => Family::Thesis,
            (true, true) => Family::ThesisVariant,
            (false, _) => Family::Classic,
        },
        // Host callbacks run in the host-callback family; objectives with a separable
        // form in the job's precision in the separable family, the others than
        // built-ins in the external family (both linked in).
        function: match job.builtin() {
            Some(f) => f.key(),
            None if job.objective().is_host_callback() => gpude_device::registry::HOST,
            None if job
                .objective()
                .separable_flags(precision_of::<T>())
                .is_some() =>
            {
                gpude_device::registry::SEPARABLE
            }
            None => gpude_device::registry::EXTERNAL,
        },
        precision: if T::NAME == "f32" {
            KernelPrecision::F32
        } else {
            KernelPrecision::F64
        },
    };
    let mut buf = [0u8; KERNEL_NAME_MAX];
    key.name_into(&mut buf).to_string()
}

/// The precision of the real type `T`.
pub(crate) fn precision_of<T: Real>() -> crate::Precision {
    if T::NAME == "f32" {
        crate::Precision::F32
    } else {
        crate::Precision::F64
    }
}

/// A floating type the kernels exist for.
pub trait GpuReal: Real + ParamReal + DeviceRepr + ValidAsZeroBits + Unpin {}

impl GpuReal for f32 {}

impl GpuReal for f64 {}

/// The register cap of a kernel: `GPUDE_MAXNREG` (16 ..= 255; 0 for none) when set,
/// else the cap measured fastest for its layout on an H100 (`GPUDE_MAXNREG` swept over
/// 64, 72, 80, 96 and 128; docs/PERFORMANCE.md, version 12). Below the cap that lets a
/// block have 1 024 threads (64), ptxas spills; above it, fewer warps hide the latency.
/// - whole-GPU kernels (`de_grid_…`), both precisions: 128 (Np = 8 192: 11.2 µs per
///   generation against 13.9 at 64, and 18.4 against 23.5 uncapped in f64);
/// - resident batch kernels (`de_batch_f32_…_shared`): 80;
/// - pipelined batch kernels (`de_batch_…_pipelined`), both precisions: 96 (132 × 2048
///   Griewank: 152.6 µs per generation against 163.6 at 64 and 159.7 at 72; version 17);
/// - the other batch kernels: 72 (f64: 708 µs against 976 uncapped), but 64 for the
///   single-precision kernels of linked objectives, which 72 slowed;
/// - every other single-precision DE kernel: 64; the rest: none (double precision spills
///   under a low cap).
pub(crate) fn register_cap(name: &str) -> Option<u32> {
    if let Ok(v) = std::env::var("GPUDE_MAXNREG") {
        return v.trim().parse().ok().filter(|n| (16..=255).contains(n));
    }
    default_register_cap(name)
}

/// [`register_cap`] without the environment.
pub(crate) fn default_register_cap(name: &str) -> Option<u32> {
    let f32 = name.contains("_f32_");
    let linked = name.contains("_external") || name.contains("_separable");
    if name.starts_with("de_grid_") {
        Some(128)
    } else if name.starts_with("de_batch_") && name.ends_with("_shared") {
        f32.then_some(80)
    } else if name.starts_with("de_batch_") && name.ends_with(PIPELINED_SUFFIX) {
        Some(96)
    } else if name.starts_with("de_batch_") {
        Some(if f32 && linked { 64 } else { 72 })
    } else {
        (name.starts_with("de_") && f32).then_some(64)
    }
}

/// The module with a `.maxnreg` directive before its entry's body.
pub(crate) fn with_register_cap(ptx: &str, cap: u32) -> String {
    let at = ptx
        .find(".entry")
        .and_then(|e| ptx[e..].find("\n{\n").map(|p| e + p + 1));
    match at {
        Some(pos) => format!("{}.maxnreg {cap}\n{}", &ptx[..pos], &ptx[pos..]),
        None => ptx.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each layout gets the cap its measurements chose, and the kernels the sweep did not
    /// cover keep theirs.
    #[test]
    fn register_caps_follow_the_layout() {
        let cap = default_register_cap;
        assert_eq!(cap("de_grid_f32_griewank_thesis"), Some(128));
        assert_eq!(cap("de_grid_f64_external_thesis"), Some(128));
        assert_eq!(cap("de_batch_f32_griewank_thesis_shared"), Some(80));
        assert_eq!(cap("de_batch_f64_griewank_thesis_shared"), None);
        assert_eq!(cap("de_batch_f32_griewank_thesis"), Some(72));
        assert_eq!(cap("de_batch_f64_griewank_thesis"), Some(72));
        assert_eq!(cap("de_batch_f32_external_thesis"), Some(64));
        assert_eq!(cap("de_batch_f32_separable_thesis"), Some(64));
        assert_eq!(cap("de_batch_f64_external_thesis"), Some(72));
        assert_eq!(cap("de_step_f32_griewank_thesis"), Some(64));
        assert_eq!(cap("de_step_f64_griewank_thesis"), None);
        assert_eq!(cap("adaptive_batch_f32_griewank"), None);
    }

    #[test]
    fn the_cap_goes_before_the_entrys_body() {
        let ptx = ".visible .entry k(\n.param .u32 a\n)\n{\nret;\n}\n";
        let capped = with_register_cap(ptx, 72);
        assert!(capped.contains(")\n.maxnreg 72\n{\n"), "{capped}");
    }
}
