//! gpude's device maths, shared by the CPU engine and the CUDA kernels.
//!
//! Every function here is a plain `pub fn` that builds for the host (where the CPU
//! engine and the tests call it) and for `nvptx64-nvidia-cuda` (where the kernels in
//! [`kernels`] call it). One seed therefore gives the same trajectory on both.
#![cfg_attr(target_arch = "nvptx64", no_std)]
#![cfg_attr(
    target_arch = "nvptx64",
    feature(abi_ptx, stdarch_nvptx, asm_experimental_arch)
)]
#![feature(core_float_math)]

pub mod de;
pub mod functions;
pub mod lanes;
pub mod math;
pub mod migration;
pub mod philox;
pub mod pso;
pub mod real;

#[cfg(target_arch = "nvptx64")]
pub mod kernels;

pub use de::{BoundPolicy, Crossover, Strategy};
pub use functions::Function;
pub use philox::{Philox4x32, philox4x32_10};
pub use real::Real;

#[cfg(target_arch = "nvptx64")]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    // SAFETY: `trap` aborts the kernel; nothing runs after it.
    unsafe { core::arch::nvptx::trap() }
}
