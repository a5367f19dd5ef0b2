//! Cosine and sine for `f32` that stay accurate and inline well on the GPU.
//!
//! For |x| < 2¹⁹·π/2 the argument is reduced in double precision with a two-part π/2
//! (the high part has 33 significant bits, so `n·hi` is exact for n < 2²⁰ and
//! `x − n·hi` is exact by Sterbenz's lemma), then the Taylor polynomials of cos and sin
//! to degree 14/15 are evaluated in double on |y| ≤ π/4 (truncation below 1.1e-15).
//! The result is rounded once to `f32`: within one ulp always, and correctly rounded
//! except when the true value lies within ~1e-15 (relative) of a rounding boundary.
//! Larger arguments are reduced exactly à la Payne–Hanek: the f32 input is an integer
//! m·2^e, multiplied by a 96-bit window of the bits of 2/π in 128-bit integer arithmetic,
//! which leaves the quadrant and a 64-bit fraction (error below 2⁻⁶⁶). Everything stays
//! inline: no call, so the kernels keep their registers.

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

/// The bits of 2/π after the binary point, 32 to a word, behind one zero word.
const TWO_OVER_PI: [u32; 12] = [
    0x00000000, 0xa2f9836e, 0x4e441529, 0xfc2757d1, 0xf534ddc0, 0xdb629599, 0x3c439041, 0xfe5163ab,
    0xdebbc561, 0xb7246e3a, 0x424dd2e0, 0x06492eea,
];

/// Reduction of a finite `x` with |x| ≥ FAST_LIMIT: (y, quadrant), |y| ≤ π/4.
#[inline(always)]
fn reduce_far(x: f32) -> (f64, u32) {
    let bits = x.to_bits();
    let e = ((bits >> 23) & 0xff) as i32 - 150; // x = m·2^e
    let m = ((bits & 0x7f_ffff) | 0x80_0000) as u128;
    // The window holds the bits of 2/π after position k0 = e − 2 (earlier bits only add
    // multiples of 4); word 0 of the table stands for positions −31..0.
    let s = (e - 2 + 32) as u32;
    let w = (s / 32) as usize;
    let sh = s % 32;
    let mut win: u128 = 0;
    let mut k = 0;
    while k < 4 {
        win = (win << 32) | TWO_OVER_PI[w + k] as u128;
        k += 1;
    }
    let win = (win << sh) >> 32; // 96 bits
    let p = m * win; // x·2/π mod 4, with the binary point at bit 94
    let f = (p >> 30) as u64; // the fraction, 64 bits
    let q = ((p >> 94) as u32).wrapping_add((f >> 63) as u32) & 3;
    let r = (f as i64) as f64 * (1.0 / 18_446_744_073_709_551_616.0);
    let y = r * (PIO2_HI + PIO2_LO);
    // The window reduced |x|; x < 0 reduces to the negated pair.
    if x < 0.0 { (-y, q.wrapping_neg() & 3) } else { (y, q) }
}

/// cos(x) for `f32`.
#[inline(always)]
pub fn cos_f32(x: f32) -> f32 {
    if !x.is_finite() {
        return f32::NAN;
    }
    let (y, q) = if x.abs() < FAST_LIMIT { reduce(x) } else { reduce_far(x) };
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
    if !x.is_finite() {
        return f32::NAN;
    }
    let (y, q) = if x.abs() < FAST_LIMIT { reduce(x) } else { reduce_far(x) };
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
        // Far arguments against libm's (correctly reduced) results, within one ulp.
        let mut v = 823_000.0f32;
        while v < 3e38 {
            for x in [v, -v, v * 1.000_123, v * 0.999_97] {
                assert!(ulps(cos_f32(x), libm::cosf(x)) <= 1, "cos({x}) = {} libm {}", cos_f32(x), libm::cosf(x));
                assert!(ulps(sin_f32(x), libm::sinf(x)) <= 1, "sin({x}) = {} libm {}", sin_f32(x), libm::sinf(x));
            }
            v *= 1.37;
        }
        // Near a multiple of π/2 (the hardest case for reduction).
        for x in [1.0e22f32, 8.0e7, 2.0e6, 5.678_9e9] {
            assert!(ulps(cos_f32(x), libm::cosf(x)) <= 1, "cos({x})");
        }
    }
}
