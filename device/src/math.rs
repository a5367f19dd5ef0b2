//! Cosine and sine for `f32` that stay accurate and inline well on the GPU.
//!
//! For |x| < 2¹⁹·π/2 the argument is reduced in double precision with a two-part π/2
//! (the high part has 33 significant bits, so `n·hi` is exact for n < 2²⁰ and
//! `x − n·hi` is exact by Sterbenz's lemma), then the Taylor polynomials of cos and sin
//! to degree 14/15 are evaluated in double on |y| ≤ π/4 (truncation below 1.1e-15).
//! The result is rounded once to `f32`: within one ulp always, and correctly rounded
//! except when the true value lies within ~1e-15 (relative) of a rounding boundary.
//! Larger or non-finite arguments go to `libm` out of line (its large-argument
//! reduction would otherwise be inlined into every kernel).

const FRAC_2_PI: f64 = 0.636_619_772_367_581_4;
const PIO2_HI: f64 = 1.570_796_326_734_125_6;
const PIO2_LO: f64 = 6.077_100_506_506_192e-11;
const FAST_LIMIT: f32 = 823_549.6;

/// `1/k!` for the even and odd terms.
const C: [f64; 8] = [
    1.0,
    -1.0 / 2.0,
    1.0 / 24.0,
    -1.0 / 720.0,
    1.0 / 40_320.0,
    -1.0 / 3_628_800.0,
    1.0 / 479_001_600.0,
    -1.0 / 87_178_291_200.0,
];
const S: [f64; 8] = [
    1.0,
    -1.0 / 6.0,
    1.0 / 120.0,
    -1.0 / 5_040.0,
    1.0 / 362_880.0,
    -1.0 / 39_916_800.0,
    1.0 / 6_227_020_800.0,
    -1.0 / 1_307_674_368_000.0,
];

#[inline(always)]
fn poly(c: &[f64; 8], z: f64) -> f64 {
    let mut r = c[7];
    let mut k = 7;
    while k > 0 {
        k -= 1;
        r = r * z + c[k];
    }
    r
}

/// Reduced argument and quadrant.
#[inline(always)]
fn reduce(x: f32) -> (f64, u32) {
    let r = x as f64;
    let n = round_half_even(r * FRAC_2_PI);
    let y = (r - n * PIO2_HI) - n * PIO2_LO;
    (y, (n as i64 & 3) as u32)
}

#[inline(always)]
fn round_half_even(v: f64) -> f64 {
    // |v| < 2^20 here: adding and subtracting 1.5·2^52 rounds to an integer.
    const SHIFT: f64 = 6_755_399_441_055_744.0;
    (v + SHIFT) - SHIFT
}

#[inline(always)]
fn cos_core(y: f64) -> f64 {
    poly(&C, y * y)
}

#[inline(always)]
fn sin_core(y: f64) -> f64 {
    y * poly(&S, y * y)
}

#[inline(never)]
fn cosf_far(x: f32) -> f32 {
    libm::cosf(x)
}

#[inline(never)]
fn sinf_far(x: f32) -> f32 {
    libm::sinf(x)
}

/// cos(x) for `f32`.
#[inline(always)]
pub fn cos_f32(x: f32) -> f32 {
    if !(x.abs() < FAST_LIMIT) {
        return cosf_far(x);
    }
    let (y, q) = reduce(x);
    let v = match q {
        0 => cos_core(y),
        1 => -sin_core(y),
        2 => -cos_core(y),
        _ => sin_core(y),
    };
    v as f32
}

/// sin(x) for `f32`.
#[inline(always)]
pub fn sin_f32(x: f32) -> f32 {
    if !(x.abs() < FAST_LIMIT) {
        return sinf_far(x);
    }
    let (y, q) = reduce(x);
    let v = match q {
        0 => sin_core(y),
        1 => cos_core(y),
        2 => -sin_core(y),
        _ => -cos_core(y),
    };
    v as f32
}

/// cos(x) for `f64`, out of line (libm).
#[inline(never)]
pub fn cos_f64(x: f64) -> f64 {
    libm::cos(x)
}

/// sin(x) for `f64`, out of line (libm).
#[inline(never)]
pub fn sin_f64(x: f64) -> f64 {
    libm::sin(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ulps(a: f32, b: f32) -> u32 {
        let ia = a.to_bits() as i32;
        let ib = b.to_bits() as i32;
        if (ia < 0) != (ib < 0) {
            return if a == b { 0 } else { u32::MAX };
        }
        (ia - ib).unsigned_abs()
    }

    #[test]
    fn within_one_ulp_of_the_correctly_rounded_value() {
        // The reference: std's f64 cos/sin (≤ 1 ulp of f64) rounded to f32 is the
        // correctly rounded f32 value except at near-ties, which the 1-ulp bound covers.
        let mut x = -1000.0f32;
        let mut worst = 0;
        while x < 1000.0 {
            for v in [x, x * 713.25, x * 1e-3, x * 1e-30] {
                let rc = (v as f64).cos() as f32;
                let rs = (v as f64).sin() as f32;
                let (c, s) = (cos_f32(v), sin_f32(v));
                worst = worst.max(ulps(c, rc)).max(ulps(s, rs));
                assert!(ulps(c, rc) <= 1, "cos({v}) = {c}, want {rc}");
                assert!(ulps(s, rs) <= 1 || (s - rs).abs() < 1e-37, "sin({v}) = {s}, want {rs}");
            }
            x += 0.0137;
        }
        assert!(worst <= 1);
    }

    #[test]
    fn far_and_special_arguments() {
        assert_eq!(cos_f32(0.0), 1.0);
        assert_eq!(sin_f32(0.0), 0.0);
        assert!(cos_f32(f32::NAN).is_nan());
        assert!(sin_f32(f32::INFINITY).is_nan());
        for v in [1e6f32, -3.5e7, 1e30] {
            assert_eq!(cos_f32(v), libm::cosf(v));
            assert_eq!(sin_f32(v), libm::sinf(v));
        }
    }
}
