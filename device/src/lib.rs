//! gpude's device maths, shared by the CPU engine and the CUDA kernels.
//!
//! Every function here is a plain `pub fn` that builds for the host (where the CPU
//! engine and the tests call it) and for `nvptx64-nvidia-cuda` (where the kernels in
//! [`kernels`] call it). One seed therefore gives the same trajectory on both.
#![cfg_attr(target_arch = "nvptx64", no_std)]
#![cfg_attr(
    target_arch = "nvptx64",
    feature(
        abi_ptx,
        stdarch_nvptx,
        asm_experimental_arch,
        macro_metavar_expr_concat,
        core_intrinsics,
        gpu_intrinsics,
        gpu_launch_sized_workgroup_mem,
        core_float_math
    )
)]
// `core::intrinsics::gpu` (the dynamic shared memory of `resident.rs`) is reached
// through `core::intrinsics`, whose feature is marked internal.
#![cfg_attr(target_arch = "nvptx64", allow(internal_features))]

/// The kernels' parameters: one `#[repr(C)]` struct per kernel family, declared once.
///
/// Each family's fields are listed once (`batch_params!`, `step_params!`,
/// `grid_params!`, `eval_params!`); from that list come the struct ([`abi::BatchParams`],
/// [`abi::StepParams`], [`abi::GridParams`], [`abi::EvalParams`], generic over the real
/// type), its table of fields ([`abi::KernelParams::FIELDS`]) and the entry points'
/// signatures in `entries.rs`: one kernel parameter per field, in the same order, so the
/// kernel's parameter space holds the struct's fields (loose scalars and pointers, as
/// before: no global load). The host fills one struct per launch, in one place per
/// family, and passes its fields by address.
///
/// Why not the struct as one `.param .b8[N]` aggregate: rustc passes an aggregate kernel
/// argument as an integer array, so LLVM no longer knows that the pointers read from it
/// address global memory. It then emits generic loads and stores, and ptxas needs up to
/// 36 more registers per kernel. Pointer parameters are marked global by LLVM.
///
/// **Layout rule.** `#[repr(C)]`: fields in declaration order, each at the next offset
/// that is a multiple of its alignment. Device pointers are raw pointer fields
/// (`*const T` for what the kernel only reads, `*mut T` for what it writes), 8 bytes:
/// the device address, null for an absent optional buffer. Reals are `T`, codes `u32`;
/// [`abi::Run`] (no pointers) is one parameter. With parameters aligned as PTX aligns
/// them, the struct's offsets are the parameter buffer's offsets. The build script
/// checks, for every entry point in the PTX, that its parameters are the fields of its
/// family's struct: same count, same sizes, same offsets. A divergence is a build error.
///
/// This file is also `include!`d by the build script: it uses nothing outside `core`.
pub mod abi;
pub mod adaptive;
pub mod adaptive_gen;
pub mod cec2017;
pub mod ceiling;
pub mod control;
pub mod de;
pub mod exact;
pub mod expr_maths;
pub mod functions;
pub mod ga;
pub mod lanes;
pub mod math;
pub mod migration;
pub mod philox;
/// The pipelined batch kernels (rows staged with `cp.async`) and their shared-memory
/// layout (its functions build for the host too).
pub mod pipelined;
pub mod pso;
pub mod real;
/// The one list of built-in objective functions, and the typed names of the kernels.
///
/// [`builtin_functions!`] declares every built-in function once: its variant and number,
/// its kernel key, its name, formula, usual domain, optimum and smallest dimension. Every
/// place that needs the list expands the macro with a callback of its own:
/// - the [`Function`](crate::Function) enum (`functions.rs`);
/// - one batch, step and grid kernel per function, precision and family (`entries.rs`);
/// - the CPU engine's compile-time dispatch (`host/src/cpu.rs`);
/// - the host's table of [`FunctionInfo`](../../gpude_host/problem/struct.FunctionInfo.html)
///   (`host/src/problem.rs`);
/// - the build script, which checks that the PTX defines every [`KernelKey`]'s entry
///   point, so that a missing kernel is a build error rather than a run-time one.
///
/// Adding a built-in function is one line here, its terms in `functions.rs` (the
/// compiler then asks for every `match` that must handle it), and its tests.
///
/// This file is also `include!`d by the build script: it uses nothing outside `core`.
pub mod registry;
/// The shared-memory-resident batch kernels and their shared-memory layout (the layout's
/// functions build for the host too: the CUDA engine sizes the launch with them).
pub mod resident;
pub mod separable;
pub mod variant;

#[cfg(target_arch = "nvptx64")]
pub mod kernels;

/// The batch layout's one body, generic over where the rows live and over control.
#[cfg(target_arch = "nvptx64")]
pub mod batch;

/// Every kernel entry point, apart from the algorithms.
#[cfg(target_arch = "nvptx64")]
pub mod entries;

#[cfg(target_arch = "nvptx64")]
pub mod external;

#[cfg(target_arch = "nvptx64")]
pub mod callback;

#[cfg(target_arch = "nvptx64")]
pub mod kernels_adaptive;

#[cfg(target_arch = "nvptx64")]
pub mod kernels_separable;

#[cfg(target_arch = "nvptx64")]
pub mod islands;

pub use de::{BoundPolicy, Crossover, Strategy};
pub use functions::{Formula, Function};
pub use philox::{Philox4x32, philox4x32_10};
pub use real::Real;
pub use variant::ThesisVariant;

#[cfg(target_arch = "nvptx64")]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    // SAFETY: `trap` aborts the kernel; nothing runs after it.
    unsafe { core::arch::nvptx::trap() }
}
