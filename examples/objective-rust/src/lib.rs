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
//! # The separable form
//!
//! A sum of terms that each read a component and the one before it is *separable* in
//! gpude's sense (`gpude_device::separable`): the GPU can then spread a point over a group
//! of lanes and keep the trial in registers, as it does for its built-in functions, which
//! is much faster than a call per point. The module exports that form too, per precision:
//!
//! ```text
//! gpude_sep_a_T(acc, x0, x1, x2, x3, prev, base, j0, n, d) -> acc + the terms of j0 .. j0 + n
//! gpude_sep_finish_T(a, b, d) -> the value (here a)
//! static gpude_sep_flags_T: u32 = 4   (bit 2: the terms read prev, x[j0 − 1])
//! ```
//!
//! with the term of component j ≥ 1 `(1 − x[j−1])² + 100 (x[j] − x[j−1]²)²`, in the same
//! order of operations as the whole-vector form. Where a module defines both forms, the
//! engine runs the separable one; the CPU side ([`SeparableRosenbrock`], gpude's
//! `Separable<T>`) has the same terms, so the CPU engine gives the GPU's bits
//! (`Objective::ptx_separable`).
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

/// The flags of the separable form: the terms read `prev` (`SepFlags::bits`).
pub const SEPARABLE_FLAGS: u32 = 4;

macro_rules! separable {
    ($t:ty, $a:ident, $finish:ident, $sym_a:ident, $sym_finish:ident, $sym_flags:ident) => {
        /// `acc` plus the terms of components `j0 .. j0 + n` (the term of component
        /// j ≥ 1, `(1 − x[j−1])² + 100 (x[j] − x[j−1]²)²`, added one at a time in
        /// ascending order; component 0 has none). `prev` is component `j0 − 1`.
        pub fn $a(mut acc: $t, v: [$t; 4], prev: $t, j0: u32, n: u32) -> $t {
            // A loop of four with constant indices (the compiler unrolls it and keeps `v`
            // in registers); components past `n` add nothing.
            let mut q = prev;
            let mut k = 0;
            while k < 4 {
                if k < n as usize {
                    let x = v[k];
                    if j0 + k as u32 > 0 {
                        let u = 1.0 - q;
                        let r = x - q * q;
                        acc += u * u + 100.0 * (r * r);
                    }
                    q = x;
                }
                k += 1;
            }
            acc
        }

        /// The value from the combined sum.
        pub fn $finish(a: $t, _b: $t, _d: u32) -> $t {
            a
        }

        /// The GPU's a-terms (see the module documentation).
        #[cfg(target_arch = "nvptx64")]
        #[unsafe(no_mangle)]
        #[allow(clippy::too_many_arguments)]
        pub extern "C" fn $sym_a(
            acc: $t,
            x0: $t,
            x1: $t,
            x2: $t,
            x3: $t,
            prev: $t,
            _base: $t,
            j0: u32,
            n: u32,
            _d: u32,
        ) -> $t {
            $a(acc, [x0, x1, x2, x3], prev, j0, n)
        }

        /// The GPU's finish.
        #[cfg(target_arch = "nvptx64")]
        #[unsafe(no_mangle)]
        pub extern "C" fn $sym_finish(a: $t, b: $t, d: u32) -> $t {
            $finish(a, b, d)
        }

        /// The flags the GPU kernels run the form with.
        #[cfg(target_arch = "nvptx64")]
        #[unsafe(no_mangle)]
        pub static $sym_flags: u32 = SEPARABLE_FLAGS;
    };
}

separable!(
    f32,
    rosenbrock_a_f32,
    rosenbrock_finish_f32,
    gpude_sep_a_f32,
    gpude_sep_finish_f32,
    gpude_sep_flags_f32
);
separable!(
    f64,
    rosenbrock_a_f64,
    rosenbrock_finish_f64,
    gpude_sep_a_f64,
    gpude_sep_finish_f64,
    gpude_sep_flags_f64
);

/// The separable form on the CPU: gpude's `Separable<T>` with the GPU's terms.
#[cfg(not(target_arch = "nvptx64"))]
pub struct SeparableRosenbrock;

#[cfg(not(target_arch = "nvptx64"))]
macro_rules! separable_cpu {
    ($t:ty, $a:ident, $finish:ident) => {
        impl gpude_device::separable::Separable<$t> for SeparableRosenbrock {
            fn flags(&self) -> gpude_device::separable::SepFlags {
                gpude_device::separable::SepFlags::from_bits(SEPARABLE_FLAGS).unwrap_or_default()
            }
            fn a(&self, acc: $t, v: [$t; 4], prev: $t, _base: $t, j0: u32, n: u32, _d: u32) -> $t {
                $a(acc, v, prev, j0, n)
            }
            fn b(&self, acc: $t, _v: [$t; 4], _p: $t, _base: $t, _j0: u32, _n: u32, _d: u32) -> $t {
                acc
            }
            fn finish(&self, a: $t, b: $t, d: u32) -> $t {
                $finish(a, b, d)
            }
        }
    };
}

#[cfg(not(target_arch = "nvptx64"))]
separable_cpu!(f32, rosenbrock_a_f32, rosenbrock_finish_f32);
#[cfg(not(target_arch = "nvptx64"))]
separable_cpu!(f64, rosenbrock_a_f64, rosenbrock_finish_f64);

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

    /// The separable form, evaluated in the order of the GPU's lanes, is gpude's
    /// built-in Rosenbrock in the textbook formula (the same terms, the same order) bit
    /// for bit, and close to the whole-vector form (a different order of the sum).
    #[test]
    fn the_separable_form_is_the_builtin_textbook_rosenbrock() {
        use gpude_device::lanes::{evaluate, evaluate_of};
        use gpude_device::separable::{SepFlags, SepLanes};
        use gpude_device::{Formula, Function};
        assert_eq!(
            SepFlags::from_bits(SEPARABLE_FLAGS).map(|f| f.prev),
            Some(true)
        );
        for dim in [2u32, 3, 5, 31, 64, 100, 129, 1000] {
            let x: Vec<f64> = (0..dim)
                .map(|k| ((k * 7919) % 97) as f64 / 13.0 - 3.5)
                .collect();
            let sep = evaluate_of(SepLanes::new::<f64>(&SeparableRosenbrock), &x);
            let builtin = evaluate(Function::Rosenbrock, Formula::Textbook, &x);
            assert_eq!(sep.to_bits(), builtin.to_bits(), "D = {dim}");
            let whole = rosenbrock_f64(&x);
            assert!((sep - whole).abs() <= 1e-12 * whole.abs(), "D = {dim}");
            let x32: Vec<f32> = x.iter().map(|&v| v as f32).collect();
            let sep = evaluate_of(SepLanes::new::<f32>(&SeparableRosenbrock), &x32);
            let builtin = evaluate(Function::Rosenbrock, Formula::Textbook, &x32);
            assert_eq!(sep.to_bits(), builtin.to_bits(), "f32 D = {dim}");
        }
    }
}
