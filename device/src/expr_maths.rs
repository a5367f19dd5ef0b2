//! The transcendental functions of objective expressions (`gpude-expr`), written once
//! for both engines.
//!
//! The CPU evaluator of an expression calls the functions below. The PTX generated for
//! an expression calls the same functions on the GPU under the symbols of
//! [`SYMBOLS`]: on `nvptx64` each function here also gets an exported wrapper,
//! `#[unsafe(no_mangle)] extern "C" fn gpude_expr_cos_f32(x: f32) -> f32`, which the
//! build script gathers into one PTX module that the CUDA engine links with the
//! expression's code. Both engines therefore run the same source, and since none of it
//! is approximate or contracted (explicit `fma` only, correctly rounded on both
//! targets), they round identically.
//!
//! `sin`/`cos` in f32 and `sinpi`/`cospi` are the device crate's own (as the built-in
//! functions use them); the rest is `libm`'s.

/// Defines each function and, on `nvptx64`, its exported wrapper; lists the symbols.
macro_rules! maths {
    ($($sym:ident = $name:ident($($a:ident),+ : $t:ty) => $body:expr;)*) => {
        $(
            #[doc = concat!("What `", stringify!($sym), "` computes.")]
            #[inline(always)]
            pub fn $name($($a: $t),+) -> $t {
                $body
            }
        )*

        /// Every exported symbol with its number of arguments (all of the symbol's
        /// precision; one result).
        pub const SYMBOLS: &[(&str, u32)] = &[$((stringify!($sym), maths!(@count $($a)+))),*];

        /// The wrappers the generated PTX calls (`.visible .func` in the device crate's
        /// PTX, gathered by the build script into the maths module).
        #[cfg(target_arch = "nvptx64")]
        mod exported {
            $(
                #[unsafe(no_mangle)]
                pub extern "C" fn $sym($($a: $t),+) -> $t {
                    super::$name($($a),+)
                }
            )*
        }
    };
    (@count $a:ident) => { 1u32 };
    (@count $a:ident $b:ident) => { 2u32 };
}

maths! {
    gpude_expr_sin_f32 = sin_f32(x: f32) => crate::math::sin_f32(x);
    gpude_expr_cos_f32 = cos_f32(x: f32) => crate::math::cos_f32(x);
    gpude_expr_tan_f32 = tan_f32(x: f32) => libm::tanf(x);
    gpude_expr_exp_f32 = exp_f32(x: f32) => libm::expf(x);
    gpude_expr_log_f32 = log_f32(x: f32) => libm::logf(x);
    gpude_expr_sinpi_f32 = sinpi_f32(x: f32) => crate::math::sinpi_f32(x);
    gpude_expr_cospi_f32 = cospi_f32(x: f32) => crate::math::cospi_f32(x);
    gpude_expr_expm1_f32 = expm1_f32(x: f32) => libm::expm1f(x);
    gpude_expr_log1p_f32 = log1p_f32(x: f32) => libm::log1pf(x);
    gpude_expr_pow_f32 = pow_f32(x, y: f32) => libm::powf(x, y);
    gpude_expr_sin_f64 = sin_f64(x: f64) => crate::math::sin_f64(x);
    gpude_expr_cos_f64 = cos_f64(x: f64) => crate::math::cos_f64(x);
    gpude_expr_tan_f64 = tan_f64(x: f64) => libm::tan(x);
    gpude_expr_exp_f64 = exp_f64(x: f64) => libm::exp(x);
    gpude_expr_log_f64 = log_f64(x: f64) => libm::log(x);
    gpude_expr_sinpi_f64 = sinpi_f64(x: f64) => crate::math::sinpi_f64(x);
    gpude_expr_cospi_f64 = cospi_f64(x: f64) => crate::math::cospi_f64(x);
    gpude_expr_expm1_f64 = expm1_f64(x: f64) => libm::expm1(x);
    gpude_expr_log1p_f64 = log1p_f64(x: f64) => libm::log1p(x);
    gpude_expr_pow_f64 = pow_f64(x, y: f64) => libm::pow(x, y);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Real;

    #[test]
    fn the_list_names_each_function_once() {
        assert_eq!(SYMBOLS.len(), 20);
        let mut names: Vec<&str> = SYMBOLS.iter().map(|s| s.0).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), SYMBOLS.len());
        for (name, args) in SYMBOLS {
            assert!(name.starts_with("gpude_expr_"), "{name}");
            assert_eq!(*args, if name.contains("_pow_") { 2 } else { 1 }, "{name}");
        }
    }

    #[test]
    fn the_functions_are_the_ones_the_builtins_use() {
        for k in -40..40 {
            let x = k as f32 * 0.37;
            assert_eq!(cos_f32(x).to_bits(), Real::cos(x).to_bits());
            assert_eq!(sin_f32(x).to_bits(), Real::sin(x).to_bits());
            assert_eq!(exp_f32(x).to_bits(), Real::exp(x).to_bits());
            assert_eq!(cospi_f32(x).to_bits(), x.cos_pi().to_bits());
            let y = x as f64;
            assert_eq!(cos_f64(y).to_bits(), Real::cos(y).to_bits());
            assert_eq!(sinpi_f64(y).to_bits(), y.sin_pi().to_bits());
            assert_eq!(expm1_f64(y).to_bits(), Real::expm1(y).to_bits());
        }
        assert_eq!(pow_f64(2.0, 10.0), 1024.0);
        assert_eq!(log1p_f32(0.0), 0.0);
    }
}
