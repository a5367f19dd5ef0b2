//! Which kernel runs a job, and how the driver compiles it: the kernel's typed key,
//! from which its name and its register cap follow (nothing reads a name back), and the
//! real types the kernels exist for.

use crate::job::config::Job;
use crate::job::precision::Precision;
use cudarc::driver::{DeviceRepr, ValidAsZeroBits};
use gpude_device::Real;
use gpude_device::abi::ParamReal;
use gpude_device::registry::{
    AdaptiveKey, EXTERNAL, Family, HOST, KERNEL_NAME_MAX, KernelKey, KernelPrecision, Layout,
    SEPARABLE,
};
use gpude_expr::Precision as ExprPrecision;
use std::fmt;

/// A kernel the engine loads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kernel {
    /// A DE kernel of the classic and thesis families, in any layout.
    De(KernelKey),
    /// An adaptive kernel (`gpude_device::kernels_adaptive`).
    Adaptive(AdaptiveKey),
    /// The evaluation kernel of the built-in functions.
    Evaluate(KernelPrecision),
    /// The fused multiply-add kernel of the ceilings' measurements.
    CeilingFma(KernelPrecision),
    /// The grid-barrier kernel of the ceilings' measurements.
    CeilingBarrier,
    /// The particle-swarm kernel of the built-in functions (`gpude_device::islands`).
    Swarm(KernelPrecision),
    /// The genetic algorithm's kernel of the built-in functions (`gpude_device::islands`).
    Genetic(KernelPrecision),
    /// The migration kernel of the islands (`gpude_device::islands`).
    Migrate(KernelPrecision),
    /// An expression's evaluation kernel, linked in at run time
    /// ([`gpude_expr::Expr::ptx_eval_kernel`]).
    ExprEval(ExprPrecision),
}

impl Kernel {
    /// The entry point's name, as the PTX defines it and the build's table of modules
    /// lists it.
    pub fn name(&self) -> String {
        let mut buf = [0u8; KERNEL_NAME_MAX];
        match self {
            Kernel::De(k) => k.name_into(&mut buf).to_string(),
            Kernel::Adaptive(k) => k.name_into(&mut buf).to_string(),
            Kernel::Evaluate(p) => format!("evaluate_{}", word(*p)),
            Kernel::CeilingFma(p) => format!("ceiling_fma_{}", word(*p)),
            Kernel::CeilingBarrier => "ceiling_barrier_f32".to_string(),
            Kernel::Swarm(p) => format!("pso_batch_{}", word(*p)),
            Kernel::Genetic(p) => format!("ga_batch_{}", word(*p)),
            Kernel::Migrate(p) => format!("migrate_{}", word(*p)),
            Kernel::ExprEval(p) => p.kernel_name().to_string(),
        }
    }

    /// The register cap the driver compiles the kernel with: `GPUDE_MAXNREG` (16 ..= 255;
    /// anything else for none) when set, else the one its key carries
    /// ([`KernelKey::register_cap`]; the other kernels have none).
    pub fn register_cap(&self) -> Option<u32> {
        if let Ok(v) = std::env::var("GPUDE_MAXNREG") {
            return v.trim().parse().ok().filter(|n| (16..=255).contains(n));
        }
        self.default_register_cap()
    }

    /// [`Kernel::register_cap`] without the environment.
    fn default_register_cap(&self) -> Option<u32> {
        match self {
            Kernel::De(k) => k.register_cap(),
            Kernel::Adaptive(k) => k.register_cap(),
            _ => None,
        }
    }
}

impl fmt::Display for Kernel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name())
    }
}

/// The word of a precision in the names of the kernels outside the registry.
fn word(p: KernelPrecision) -> &'static str {
    match p {
        KernelPrecision::F32 => "f32",
        KernelPrecision::F64 => "f64",
    }
}

/// A job's DE kernel in `layout`: the thesis strategy with init-only bounds has its own
/// specialised family, and one more for the alternatives of a
/// [`gpude_device::ThesisVariant`] that change the trials.
pub(crate) fn de_kernel<T: GpuReal>(layout: Layout, job: &Job) -> Kernel {
    let thesis = job.strategy() == gpude_device::Strategy::Thesis
        && job.bounds() == gpude_device::BoundPolicy::InitOnly;
    Kernel::De(KernelKey {
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
            None if job.objective().is_host_callback() => HOST,
            None if job.objective().separable_flags(T::PRECISION).is_some() => SEPARABLE,
            None => EXTERNAL,
        },
        precision: T::KERNEL,
    })
}

/// A floating type the kernels exist for, with its precision in each of the crates'
/// words for it.
pub trait GpuReal: Real + ParamReal + DeviceRepr + ValidAsZeroBits + Unpin {
    /// The job's precision of this type.
    const PRECISION: Precision;
    /// The kernels' precision of this type.
    const KERNEL: KernelPrecision;
    /// The expressions' precision of this type.
    const EXPR: ExprPrecision;
}

impl GpuReal for f32 {
    const PRECISION: Precision = Precision::F32;
    const KERNEL: KernelPrecision = KernelPrecision::F32;
    const EXPR: ExprPrecision = ExprPrecision::F32;
}

impl GpuReal for f64 {
    const PRECISION: Precision = Precision::F64;
    const KERNEL: KernelPrecision = KernelPrecision::F64;
    const EXPR: ExprPrecision = ExprPrecision::F64;
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
    use gpude_device::registry::{CEC2017, for_each_kernel_key};

    fn de(layout: Layout, precision: KernelPrecision, function: &'static str) -> Kernel {
        Kernel::De(KernelKey {
            layout,
            family: Family::Thesis,
            function,
            precision,
        })
    }

    /// Each layout gets the cap its measurements chose, and the kernels the sweep did not
    /// cover keep theirs.
    #[test]
    fn register_caps_follow_the_layout() {
        use KernelPrecision::{F32, F64};
        let cap = |k: Kernel| k.default_register_cap();
        assert_eq!(cap(de(Layout::Grid, F32, "griewank")), Some(128));
        assert_eq!(cap(de(Layout::Grid, F64, EXTERNAL)), Some(128));
        assert_eq!(cap(de(Layout::BatchShared, F32, "griewank")), Some(80));
        assert_eq!(cap(de(Layout::BatchShared, F64, "griewank")), None);
        assert_eq!(
            cap(de(Layout::BatchSharedControlled, F32, "griewank")),
            Some(80)
        );
        assert_eq!(cap(de(Layout::BatchPipelined, F64, "griewank")), Some(96));
        assert_eq!(
            cap(de(Layout::BatchPipelinedControlled, F32, "griewank")),
            Some(96)
        );
        assert_eq!(cap(de(Layout::Batch, F32, "griewank")), Some(72));
        assert_eq!(cap(de(Layout::Batch, F64, "griewank")), Some(72));
        assert_eq!(cap(de(Layout::BatchControlled, F32, "griewank")), Some(72));
        assert_eq!(cap(de(Layout::Batch, F32, EXTERNAL)), Some(64));
        assert_eq!(cap(de(Layout::Batch, F32, SEPARABLE)), Some(64));
        assert_eq!(cap(de(Layout::Batch, F64, EXTERNAL)), Some(72));
        assert_eq!(cap(de(Layout::Step, F32, "griewank")), Some(64));
        assert_eq!(cap(de(Layout::Step, F32, HOST)), Some(64));
        assert_eq!(cap(de(Layout::Step, F64, "griewank")), None);
        let adaptive = AdaptiveKey {
            layout: Layout::Batch,
            function: CEC2017,
            precision: F32,
        };
        assert_eq!(cap(Kernel::Adaptive(adaptive)), None);
        assert_eq!(cap(Kernel::Evaluate(F32)), None);
    }

    /// The names are the registry's, and the kernels outside it keep theirs.
    #[test]
    fn kernels_are_named_by_their_keys() {
        let mut n = 0;
        for_each_kernel_key(|key| {
            let mut buf = [0u8; KERNEL_NAME_MAX];
            assert_eq!(Kernel::De(key).name(), key.name_into(&mut buf));
            n += 1;
        });
        assert!(n > 0);
        assert_eq!(
            de(Layout::BatchShared, KernelPrecision::F32, "griewank").name(),
            "de_batch_f32_griewank_thesis_shared"
        );
        assert_eq!(
            de(
                Layout::BatchSharedControlled,
                KernelPrecision::F64,
                "griewank"
            )
            .name(),
            "de_batch_f64_griewank_thesis_shared_ctl"
        );
        assert_eq!(
            Kernel::Evaluate(KernelPrecision::F64).to_string(),
            "evaluate_f64"
        );
        assert_eq!(
            Kernel::CeilingFma(KernelPrecision::F32).name(),
            "ceiling_fma_f32"
        );
        assert_eq!(Kernel::Swarm(KernelPrecision::F64).name(), "pso_batch_f64");
        assert_eq!(Kernel::Migrate(KernelPrecision::F32).name(), "migrate_f32");
        assert_eq!(Kernel::Genetic(KernelPrecision::F32).name(), "ga_batch_f32");
        assert_eq!(
            Kernel::ExprEval(ExprPrecision::F32).name(),
            "gpude_objective_eval_f32"
        );
    }

    #[test]
    fn the_cap_goes_before_the_entrys_body() {
        let ptx = ".visible .entry k(\n.param .u32 a\n)\n{\nret;\n}\n";
        let capped = with_register_cap(ptx, 72);
        assert!(capped.contains(")\n.maxnreg 72\n{\n"), "{capped}");
    }
}
