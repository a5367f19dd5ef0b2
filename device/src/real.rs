//! The floating-point types the engines run in: `f32` and `f64`.
//!
//! The transcendental functions are the same code on every target ([`crate::math`] and
//! the `libm` crate), so the CPU and the GPU round alike; the GPU build never switches
//! to PTX's approximate instructions. `sqrt` is IEEE's correctly rounded
//! square root on both.

use core::ops::{Add, Div, Mul, Neg, Sub};

/// A floating-point type an optimization can run in.
pub trait Real:
    Copy
    + PartialOrd
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
    + Default
    + core::fmt::Debug
    + Send
    + Sync
    + 'static
{
    const ZERO: Self;
    const ONE: Self;
    const INFINITY: Self;
    /// A quiet NaN: the identity of the reductions that look for the best (under
    /// [`crate::de::better`] it loses to every value and to every NaN of lower index).
    const NAN: Self;
    /// The largest finite value.
    const MAX: Self;
    const PI: Self;
    const E: Self;
    /// Name for messages and files: `f32` or `f64`.
    const NAME: &'static str;

    /// Rounds an `f64` constant to this type.
    fn of(x: f64) -> Self;
    fn of_u32(x: u32) -> Self;
    fn to_f64(self) -> f64;
    /// A uniform number in (0, 1] from one Philox word.
    fn uniform(w: u32) -> Self;
    /// A uniform number in [0, 1) from one Philox word.
    fn uniform_closed_open(w: u32) -> Self;
    fn sqrt(self) -> Self;
    fn cos(self) -> Self;
    fn sin(self) -> Self;
    /// Whether the kernels' straight-line forms pay in this precision: a lane's chunk
    /// computed four components at a time (Griewank's four sines by [`Real::sin4`]
    /// before the components; every component of a trial chunk computed, those past its
    /// length dropped by a select), and a full warp's butterfly levels without their
    /// branches. They do for `f32`; not for `f64`, whose sine is a call and whose values
    /// take two registers each: the values held across the calls spill.
    const STRAIGHT: bool = false;
    /// `sin` of four values (the same bits as four calls); single precision tests the
    /// four for its fast reduction at once ([`crate::math::sin4_f32`]).
    #[inline(always)]
    fn sin4(x: [Self; 4]) -> [Self; 4] {
        [x[0].sin(), x[1].sin(), x[2].sin(), x[3].sin()]
    }
    fn exp(self) -> Self;
    /// `self` to the power `e` (`libm`'s `pow`).
    fn powf(self, e: Self) -> Self;
    /// The largest integer not above `self`.
    fn floor(self) -> Self;
    /// The remainder of `self / m` with the sign of `self` (C's `fmod`, exact).
    fn fmod(self, m: Self) -> Self;
    /// `e^x − 1`, accurate also for tiny x (libm).
    fn expm1(self) -> Self;
    /// sin(πx) with exact argument reduction ([`crate::math`]).
    fn sin_pi(self) -> Self;
    /// cos(πx) with exact argument reduction ([`crate::math`]).
    fn cos_pi(self) -> Self;
    /// `self · a + b` with one rounding.
    fn mul_add(self, a: Self, b: Self) -> Self;
    /// The nearest integer, ties to even (exact).
    fn round_even(self) -> Self;
    /// Weierstrass's per-component sum without cancellation
    /// ([`crate::math::weierstrass_terms_f32`]).
    fn weierstrass_terms(self) -> Self;
    /// The natural logarithm.
    fn ln(self) -> Self;
    fn tan(self) -> Self;
    fn abs(self) -> Self;
    fn is_nan(self) -> bool;
    /// The bits, for exact comparisons in tests and reductions.
    fn to_bits64(self) -> u64;
    #[inline(always)]
    fn min(self, o: Self) -> Self {
        if o < self { o } else { self }
    }
    #[inline(always)]
    fn max(self, o: Self) -> Self {
        if o > self { o } else { self }
    }
}

impl Real for f32 {
    const ZERO: Self = 0.0;
    const ONE: Self = 1.0;
    const INFINITY: Self = f32::INFINITY;
    const NAN: Self = f32::NAN;
    const MAX: Self = f32::MAX;
    const PI: Self = core::f32::consts::PI;
    const E: Self = core::f32::consts::E;
    const NAME: &'static str = "f32";
    #[inline(always)]
    fn of(x: f64) -> Self {
        x as f32
    }
    #[inline(always)]
    fn of_u32(x: u32) -> Self {
        x as f32
    }
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self as f64
    }
    #[inline(always)]
    fn uniform(w: u32) -> Self {
        crate::philox::uniform_f32(w)
    }
    #[inline(always)]
    fn uniform_closed_open(w: u32) -> Self {
        crate::philox::uniform_closed_open_f32(w)
    }
    #[inline(always)]
    fn sqrt(self) -> Self {
        crate::exact::sqrt_f32(self)
    }
    #[inline(always)]
    fn cos(self) -> Self {
        crate::math::cos_f32(self)
    }
    #[inline(always)]
    fn sin(self) -> Self {
        crate::math::sin_f32(self)
    }
    const STRAIGHT: bool = true;
    #[inline(always)]
    fn sin4(x: [Self; 4]) -> [Self; 4] {
        crate::math::sin4_f32(x)
    }
    #[inline(always)]
    fn exp(self) -> Self {
        libm::expf(self)
    }
    #[inline(always)]
    fn powf(self, e: Self) -> Self {
        libm::powf(self, e)
    }
    #[inline(always)]
    fn floor(self) -> Self {
        libm::floorf(self)
    }
    #[inline(always)]
    fn fmod(self, m: Self) -> Self {
        libm::fmodf(self, m)
    }
    #[inline(always)]
    fn expm1(self) -> Self {
        libm::expm1f(self)
    }
    #[inline(always)]
    fn sin_pi(self) -> Self {
        crate::math::sinpi_f32(self)
    }
    #[inline(always)]
    fn cos_pi(self) -> Self {
        crate::math::cospi_f32(self)
    }
    #[inline(always)]
    fn mul_add(self, a: Self, b: Self) -> Self {
        crate::exact::fma_f32(self, a, b)
    }
    #[inline(always)]
    fn round_even(self) -> Self {
        crate::exact::round_even_f32(self)
    }
    #[inline(always)]
    fn weierstrass_terms(self) -> Self {
        crate::math::weierstrass_terms_f32(self)
    }
    #[inline(always)]
    fn ln(self) -> Self {
        libm::logf(self)
    }
    #[inline(always)]
    fn tan(self) -> Self {
        libm::tanf(self)
    }
    #[inline(always)]
    fn abs(self) -> Self {
        f32::from_bits(self.to_bits() & 0x7fff_ffff)
    }
    #[inline(always)]
    fn is_nan(self) -> bool {
        Self::is_nan(self)
    }
    #[inline(always)]
    fn to_bits64(self) -> u64 {
        self.to_bits() as u64
    }
}

impl Real for f64 {
    const ZERO: Self = 0.0;
    const ONE: Self = 1.0;
    const INFINITY: Self = f64::INFINITY;
    const NAN: Self = f64::NAN;
    const MAX: Self = f64::MAX;
    const PI: Self = core::f64::consts::PI;
    const E: Self = core::f64::consts::E;
    const NAME: &'static str = "f64";
    #[inline(always)]
    fn of(x: f64) -> Self {
        x
    }
    #[inline(always)]
    fn of_u32(x: u32) -> Self {
        x as f64
    }
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self
    }
    #[inline(always)]
    fn uniform(w: u32) -> Self {
        crate::philox::uniform_f64(w)
    }
    #[inline(always)]
    fn uniform_closed_open(w: u32) -> Self {
        crate::philox::uniform_closed_open_f64(w)
    }
    #[inline(always)]
    fn sqrt(self) -> Self {
        crate::exact::sqrt_f64(self)
    }
    #[inline(always)]
    fn cos(self) -> Self {
        crate::math::cos_f64(self)
    }
    #[inline(always)]
    fn sin(self) -> Self {
        crate::math::sin_f64(self)
    }
    #[inline(always)]
    fn exp(self) -> Self {
        libm::exp(self)
    }
    #[inline(always)]
    fn powf(self, e: Self) -> Self {
        libm::pow(self, e)
    }
    #[inline(always)]
    fn floor(self) -> Self {
        libm::floor(self)
    }
    #[inline(always)]
    fn fmod(self, m: Self) -> Self {
        libm::fmod(self, m)
    }
    #[inline(always)]
    fn expm1(self) -> Self {
        libm::expm1(self)
    }
    #[inline(always)]
    fn sin_pi(self) -> Self {
        crate::math::sinpi_f64(self)
    }
    #[inline(always)]
    fn cos_pi(self) -> Self {
        crate::math::cospi_f64(self)
    }
    #[inline(always)]
    fn mul_add(self, a: Self, b: Self) -> Self {
        crate::exact::fma_f64(self, a, b)
    }
    #[inline(always)]
    fn round_even(self) -> Self {
        crate::exact::round_even_f64(self)
    }
    #[inline(always)]
    fn weierstrass_terms(self) -> Self {
        crate::math::weierstrass_terms_f64(self)
    }
    #[inline(always)]
    fn ln(self) -> Self {
        libm::log(self)
    }
    #[inline(always)]
    fn tan(self) -> Self {
        libm::tan(self)
    }
    #[inline(always)]
    fn abs(self) -> Self {
        f64::from_bits(self.to_bits() & 0x7fff_ffff_ffff_ffff)
    }
    #[inline(always)]
    fn is_nan(self) -> bool {
        Self::is_nan(self)
    }
    #[inline(always)]
    fn to_bits64(self) -> u64 {
        self.to_bits()
    }
}
