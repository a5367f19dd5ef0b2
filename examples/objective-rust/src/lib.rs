//! An objective for gpude written in Rust, as a user writes one: a plain function of one
//! point, which the CPU runs as it is and which, compiled for `nvptx64-nvidia-cuda`, gpude
//! links into its GPU kernels (`gpude run --objective-ptx`).
//!
//! The GPU calls the objective through one symbol per precision, with this signature
//! (`x` points to the `d` components of one point):
//!
//! ```text
//! #[unsafe(no_mangle)] pub unsafe extern "C" fn gpude_objective_f32(x: *const f32, d: u32) -> f32
//! #[unsafe(no_mangle)] pub unsafe extern "C" fn gpude_objective_f64(x: *const f64, d: u32) -> f64
//! ```
//!
//! The example is Rosenbrock's function, `Σ_{j<D} (1 − x_j)² + 100 (x_{j+1} − x_j²)²`,
//! written with the operations in the order of gpude's expression
//! `sum((1 - x[j-1])^2 + 100*(x - x[j-1]^2)^2)`, so that the two give the same bits (the
//! GPU tests check it). Rust never fuses a multiply and an add on its own, so the GPU
//! rounds as the CPU does. Replace the body with your function.
//!
//! The module may also call gpude's own maths, which the engine links beside it:
//! declare `unsafe extern "C" { fn gpude_expr_cos_f32(x: f32) -> f32; }` (and the others
//! of `gpude_device::expr_maths`) for the GPU build, and call
//! `gpude_device::expr_maths::cos_f32` on the CPU.
#![cfg_attr(not(test), no_std)]
#![cfg_attr(target_arch = "nvptx64", feature(stdarch_nvptx))]

macro_rules! objective {
    ($t:ty, $name:ident, $symbol:ident) => {
        /// Rosenbrock's function of `x` (0 for fewer than two components).
        pub fn $name(x: &[$t]) -> $t {
            let mut acc: $t = 0.0;
            for w in x.windows(2) {
                let (q, v) = (w[0], w[1]);
                let u = 1.0 - q;
                let r = v - q * q;
                acc += u * u + 100.0 * (r * r);
            }
            acc
        }

        /// The GPU's entry to the objective.
        ///
        /// # Safety
        /// `x .. x + d` must be readable (gpude's kernels pass a row of the population).
        #[cfg(target_arch = "nvptx64")]
        #[unsafe(no_mangle)]
        pub unsafe extern "C" fn $symbol(x: *const $t, d: u32) -> $t {
            // SAFETY: the caller passes d readable values.
            $name(unsafe { core::slice::from_raw_parts(x, d as usize) })
        }
    };
}

objective!(f32, rosenbrock_f32, gpude_objective_f32);
objective!(f64, rosenbrock_f64, gpude_objective_f64);

#[cfg(target_arch = "nvptx64")]
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    // SAFETY: `trap` aborts the kernel; nothing runs after it.
    unsafe { core::arch::nvptx::trap() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_by_hand() {
        assert_eq!(rosenbrock_f64(&[1.0; 10]), 0.0);
        assert_eq!(rosenbrock_f64(&[0.0, 0.0]), 1.0);
        // (1 − 2)² + 100 (3 − 4)² = 101, then (1 − 3)² + 100 (0 − 9)² = 8104.
        assert_eq!(rosenbrock_f64(&[2.0, 3.0, 0.0]), 101.0 + 8104.0);
        assert_eq!(rosenbrock_f32(&[2.0, 3.0, 0.0]), 8205.0);
        assert_eq!(rosenbrock_f32(&[5.0]), 0.0);
    }

    /// The order of the operations is the expression's: each term rounded as written,
    /// added from the left.
    #[test]
    fn the_order_of_the_expression() {
        let x: Vec<f32> = (0..37)
            .map(|k| ((k * 7919) % 97) as f32 / 13.0 - 3.5)
            .collect();
        let mut acc = 0.0f32;
        for j in 1..x.len() {
            let (q, v) = (x[j - 1], x[j]);
            let (u, r) = (1.0 - q, v - q * q);
            acc += u * u + 100.0 * (r * r);
        }
        assert_eq!(rosenbrock_f32(&x).to_bits(), acc.to_bits());
    }
}
