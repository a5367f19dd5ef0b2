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
        macro_metavar_expr_concat
    )
)]
#![feature(core_float_math)]

pub mod adaptive;
pub mod cec2017;
pub mod de;
pub mod functions;
pub mod lanes;
pub mod math;
pub mod migration;
pub mod philox;
pub mod pso;
pub mod real;
/// The one list of built-in objective functions, and the typed names of the kernels.
///
/// [`builtin_functions!`] declares every built-in function once: its variant and number,
/// its kernel key, its name, formula, usual domain, optimum and smallest dimension. Every
/// place that needs the list expands the macro with a callback of its own:
/// - the [`Function`](crate::Function) enum (`functions.rs`);
/// - one batch, step and grid kernel per function, precision and family (`kernels.rs`);
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
pub mod variant;

#[cfg(target_arch = "nvptx64")]
pub mod kernels;

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
