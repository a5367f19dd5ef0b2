//! The arithmetic ceiling of the GPU, measured rather than taken from a datasheet
//! (`gpude bench --ceilings`; docs/PERFORMANCE.md puts it beside each case's floor),
//! and the cost of the whole-GPU kernels' grid barrier (`ceiling_barrier_f32`: nothing
//! but barriers, so that a generation's fixed cost has a floor of its own).
//!
//! Every thread runs [`CHAINS`] independent chains of fused multiply-adds. With that
//! many chains per thread and a full grid, the FMA pipe's issue rate bounds the kernel,
//! not the latency of one chain. The chains' sum is written out so that nothing can be
//! removed as dead code; the values themselves mean nothing.

/// Independent FMA chains per thread.
pub const CHAINS: u32 = 8;

/// One thread's chains: `iters` rounds of `CHAINS` FMAs, `x ← x·a + b` with `a` just
/// below 1 so that the values stay finite for any `iters`.
#[inline(always)]
pub fn chains<T: crate::Real>(iters: u32, seed: T) -> T {
    let a = T::of(0.999_999);
    let b = T::of(1e-7);
    let mut x = [seed; CHAINS as usize];
    let mut k = 0;
    while k < CHAINS as usize {
        x[k] = seed + T::of(k as f64);
        k += 1;
    }
    let mut it = 0;
    while it < iters {
        let mut k = 0;
        while k < CHAINS as usize {
            x[k] = x[k].mul_add(a, b);
            k += 1;
        }
        it += 1;
    }
    let mut s = T::ZERO;
    for v in x {
        s = s + v;
    }
    s
}

#[cfg(test)]
mod tests {
    #[test]
    fn chains_stay_finite_and_depend_on_the_seed() {
        let a = super::chains::<f32>(100_000, 1.0);
        let b = super::chains::<f32>(100_000, 2.0);
        assert!(a.is_finite() && b.is_finite());
        assert_ne!(a, b);
        assert!(super::chains::<f64>(1_000_000, 3.0).is_finite());
    }
}
