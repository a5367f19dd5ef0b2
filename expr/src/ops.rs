//! The transcendental functions of the language, in one place: what the CPU evaluator
//! calls, and the PTX symbol the generated code calls for the same function.
//!
//! The GPU side does not reimplement these: the generated PTX declares each function it
//! uses as `.extern .func` under the symbol below, and the module that defines it is the
//! device crate's own maths compiled for `nvptx64` (plain `extern "C"` wrappers around
//! the functions listed here), linked by the driver's JIT linker. The CPU and the GPU then
//! run the same code and round identically.
//!
//! | language | f32 (CPU, and the GPU through the symbol) | f64 | symbol |
//! |---|---|---|---|
//! | `sin` | `gpude_device::math::sin_f32` | `gpude_device::math::sin_f64` | `gpude_expr_sin_f32` / `_f64` |
//! | `cos` | `gpude_device::math::cos_f32` | `gpude_device::math::cos_f64` | `gpude_expr_cos_…` |
//! | `tan` | `libm::tanf` | `libm::tan` | `gpude_expr_tan_…` |
//! | `exp` | `libm::expf` | `libm::exp` (both as `Real::exp`) | `gpude_expr_exp_…` |
//! | `log` | `libm::logf` | `libm::log` | `gpude_expr_log_…` |
//! | `pow`, `^` (not a small integer) | `libm::powf` | `libm::pow` | `gpude_expr_pow_…` (two arguments) |
//! | `expm1` | `libm::expm1f` | `libm::expm1` | `gpude_expr_expm1_…` |
//! | `log1p` | `libm::log1pf` | `libm::log1p` | `gpude_expr_log1p_…` |
//! | `sinpi` | [`sinpi_f32`] (device) | [`sinpi_f64`] | `gpude_expr_sinpi_…` |
//! | `cospi` | [`cospi_f32`] | [`cospi_f64`] | `gpude_expr_cospi_…` |
//!
//! Both sides call the functions of `gpude_device::expr_maths`, which holds the table in
//! code: the CPU evaluator calls them directly, and on `nvptx64` each has a wrapper
//! exported under its symbol, e.g.
//! `#[unsafe(no_mangle)] pub extern "C" fn gpude_expr_cos_f32(x: f32) -> f32 { cos_f32(x) }`,
//! so that the GPU runs exactly the function the CPU evaluator calls. The declarations
//! use untyped `.b32`/`.b64` parameters, as rustc's NVPTX backend writes them for
//! `f32`/`f64` (as in the device crate's own `cos_f64` in its PTX); the JIT linker needs
//! the definitions' parameter lists to match.
//!
//! `sqrt`, `abs`, `min`, `max` and the arithmetic are not calls: they are single IEEE
//! operations (`sqrt.rn`, `abs`, compare-and-select, `add.rn`, …) on both sides.
//!
//! `sinpi` and `cospi` are the device crate's (exact argument reduction, the same code
//! as the built-in functions use); `expm1` and `log1p` are libm's, as the device
//! crate's `Real::expm1` is.

use crate::Precision;
use crate::parser::Transcendental;
use gpude_device::Real;
use gpude_device::expr_maths as m;

/// The floating-point types expressions evaluate in: the device crate's [`Real`] plus
/// the functions the language adds.
pub trait ExprReal: Real {
    const PRECISION: Precision;
    /// A literal, already rounded once from its text to each precision.
    fn lit(v64: f64, v32: f32) -> Self;
    /// A transcendental of one argument.
    fn call(f: Transcendental, x: Self) -> Self;
    /// `x^y` for exponents that are not small integer literals.
    fn pow(x: Self, y: Self) -> Self;
}

impl ExprReal for f32 {
    const PRECISION: Precision = Precision::F32;
    #[inline]
    fn lit(_: f64, v32: f32) -> Self {
        v32
    }
    #[inline]
    fn call(f: Transcendental, x: f32) -> f32 {
        match f {
            Transcendental::Sin => m::sin_f32(x),
            Transcendental::Cos => m::cos_f32(x),
            Transcendental::Tan => m::tan_f32(x),
            Transcendental::Exp => m::exp_f32(x),
            Transcendental::Log => m::log_f32(x),
            Transcendental::Sinpi => m::sinpi_f32(x),
            Transcendental::Cospi => m::cospi_f32(x),
            Transcendental::Expm1 => m::expm1_f32(x),
            Transcendental::Log1p => m::log1p_f32(x),
        }
    }
    #[inline]
    fn pow(x: f32, y: f32) -> f32 {
        m::pow_f32(x, y)
    }
}

impl ExprReal for f64 {
    const PRECISION: Precision = Precision::F64;
    #[inline]
    fn lit(v64: f64, _: f32) -> Self {
        v64
    }
    #[inline]
    fn call(f: Transcendental, x: f64) -> f64 {
        match f {
            Transcendental::Sin => m::sin_f64(x),
            Transcendental::Cos => m::cos_f64(x),
            Transcendental::Tan => m::tan_f64(x),
            Transcendental::Exp => m::exp_f64(x),
            Transcendental::Log => m::log_f64(x),
            Transcendental::Sinpi => m::sinpi_f64(x),
            Transcendental::Cospi => m::cospi_f64(x),
            Transcendental::Expm1 => m::expm1_f64(x),
            Transcendental::Log1p => m::log1p_f64(x),
        }
    }
    #[inline]
    fn pow(x: f64, y: f64) -> f64 {
        m::pow_f64(x, y)
    }
}

/// The PTX symbol of a transcendental: `gpude_expr_<name>_<f32|f64>`, with the
/// signature `.func (.param .bN r) sym(.param .bN a)` (N = 32 or 64).
pub fn symbol(f: Transcendental, p: Precision) -> String {
    format!("gpude_expr_{}_{}", f.name(), p.name())
}

/// The PTX symbol of `pow`: `.func (.param .bN r) sym(.param .bN a, .param .bN b)`.
pub fn pow_symbol(p: Precision) -> String {
    format!("gpude_expr_pow_{}", p.name())
}

/// sin(πx) and cos(πx) with exact argument reduction: the device crate's, so that the
/// expressions and the built-in functions share them.
pub use gpude_device::math::{cospi_f32, cospi_f64, sinpi_f32, sinpi_f64};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_turns_are_exact_at_special_points() {
        for k in -50..50 {
            let x = k as f64;
            assert_eq!(sinpi_f64(x), 0.0, "sinpi({x})");
            assert_eq!(sinpi_f32(x as f32), 0.0, "sinpi({x})");
            assert_eq!(cospi_f64(x + 0.5), 0.0, "cospi({})", x + 0.5);
            assert_eq!(cospi_f32(x as f32 + 0.5), 0.0);
            let s = if k % 2 == 0 { 1.0 } else { -1.0 };
            assert_eq!(cospi_f64(x), s, "cospi({x})");
            assert_eq!(cospi_f32(x as f32), s as f32);
            assert_eq!(sinpi_f64(x + 0.5), s, "sinpi({})", x + 0.5);
        }
        // Huge values are even integers: sinpi = 0, cospi = 1.
        assert_eq!(sinpi_f32(3.0e9), 0.0);
        assert_eq!(cospi_f32(3.0e9), 1.0);
        assert_eq!(cospi_f64(1.0e300), 1.0);
        assert!(sinpi_f64(f64::INFINITY).is_nan() && cospi_f32(f32::NAN).is_nan());
    }

    #[test]
    fn half_turns_agree_with_sin_and_cos_of_pi_x() {
        // Against an f64 reference rounded to f32: the f32 versions within a few ulps,
        // except where the value is tiny compared with its argument's rounding.
        let mut x = -9.0f32;
        while x < 9.0 {
            let (s, c) = ((core::f64::consts::PI * x as f64).sin(), {
                (core::f64::consts::PI * x as f64).cos()
            });
            assert!(
                (sinpi_f32(x) as f64 - s).abs() <= 4e-7 * s.abs().max(1e-3),
                "{x}"
            );
            assert!(
                (cospi_f32(x) as f64 - c).abs() <= 4e-7 * c.abs().max(1e-3),
                "{x}"
            );
            let xd = x as f64 * 1.000_000_1;
            let (s, c) = (
                (core::f64::consts::PI * xd).sin(),
                (core::f64::consts::PI * xd).cos(),
            );
            assert!((sinpi_f64(xd) - s).abs() <= 1e-14, "{xd}");
            assert!((cospi_f64(xd) - c).abs() <= 1e-14, "{xd}");
            x += 0.001_37;
        }
    }

    /// The symbols the generated PTX calls are exactly those the device crate exports.
    #[test]
    fn every_symbol_is_exported_by_the_device_crate() {
        let mut want: Vec<(String, u32)> = Vec::new();
        for p in [Precision::F32, Precision::F64] {
            for f in Transcendental::ALL {
                want.push((symbol(f, p), 1));
            }
            want.push((pow_symbol(p), 2));
        }
        let mut have: Vec<(String, u32)> = m::SYMBOLS
            .iter()
            .map(|&(s, n)| (s.to_string(), n))
            .collect();
        want.sort();
        have.sort();
        assert_eq!(want, have);
    }

    #[test]
    fn symbols_name_function_and_precision() {
        assert_eq!(
            symbol(Transcendental::Log1p, Precision::F64),
            "gpude_expr_log1p_f64"
        );
        assert_eq!(pow_symbol(Precision::F32), "gpude_expr_pow_f32");
    }
}
