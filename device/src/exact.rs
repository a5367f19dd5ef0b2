//! The correctly rounded operations of the device maths: square root, fused
//! multiply–add and rounding half to even, in f32 and f64. On the GPU they come from
//! `core` (the kernels have no `std`; `core`'s versions are a nightly feature, which the
//! kernels' build has); on the host from `std`, so that the host crates build on stable
//! Rust. Each is exact by IEEE 754, so both give the same bits.

macro_rules! exact {
    ($t:ident, $sqrt:ident, $fma:ident, $round:ident) => {
        #[doc = concat!("√x in ", stringify!($t), ", correctly rounded.")]
        #[inline(always)]
        pub fn $sqrt(x: $t) -> $t {
            #[cfg(target_arch = "nvptx64")]
            {
                core::$t::math::sqrt(x)
            }
            #[cfg(not(target_arch = "nvptx64"))]
            {
                x.sqrt()
            }
        }

        #[doc = concat!("a·b + c in ", stringify!($t), " with one rounding.")]
        #[inline(always)]
        pub fn $fma(a: $t, b: $t, c: $t) -> $t {
            #[cfg(target_arch = "nvptx64")]
            {
                core::$t::math::mul_add(a, b, c)
            }
            #[cfg(not(target_arch = "nvptx64"))]
            {
                a.mul_add(b, c)
            }
        }

        #[doc = concat!("x rounded to the nearest integer in ", stringify!($t), ", ties to even.")]
        #[inline(always)]
        pub fn $round(x: $t) -> $t {
            #[cfg(target_arch = "nvptx64")]
            {
                core::$t::math::round_ties_even(x)
            }
            #[cfg(not(target_arch = "nvptx64"))]
            {
                x.round_ties_even()
            }
        }
    };
}

exact!(f32, sqrt_f32, fma_f32, round_even_f32);
exact!(f64, sqrt_f64, fma_f64, round_even_f64);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_operations_round_as_ieee_says() {
        assert_eq!(sqrt_f32(2.0), core::f32::consts::SQRT_2);
        assert_eq!(sqrt_f64(2.0), core::f64::consts::SQRT_2);
        // (1 + 2⁻²³)² = 1 + 2⁻²² + 2⁻⁴⁶: fused, the last term survives the subtraction.
        let e = f32::EPSILON;
        assert_eq!(fma_f32(1.0 + e, 1.0 + e, -(1.0 + 2.0 * e)), e * e);
        let e = f64::EPSILON;
        assert_eq!(fma_f64(1.0 + e, 1.0 + e, -(1.0 + 2.0 * e)), e * e);
        assert_eq!(round_even_f32(2.5), 2.0);
        assert_eq!(round_even_f32(3.5), 4.0);
        assert_eq!(round_even_f64(-0.5), -0.0);
        assert_eq!(
            round_even_f64(4_503_599_627_370_497.0),
            4_503_599_627_370_497.0
        );
    }
}
