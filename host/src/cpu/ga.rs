//! The genetic algorithm on the CPU engine (the rules and random words of
//! [`gpude_device::ga`]): a generational GA with elitism, tournaments of two, BLX-α
//! crossover and the breeder GA's mutation, on all cores with rayon. Every offspring
//! reads only the old population, so the bits do not depend on the number of threads.

use crate::cpu::{Population, chunk4, evaluate_fast};
use crate::error::{Error, Result};
use crate::job::config::Job;
use gpude_device::Real;
use gpude_device::de::{RESAMPLE_SLOT, block, subsequence};
use gpude_device::ga::{
    ALPHA, BITS_SLOT, BLEND_SLOT, CROSSOVER, DECIDE_SLOT, GaParams, MUTATION, RANGE, SELECT_SLOT,
    child_chunk, plan,
};
use gpude_device::philox::{block_words, key_of};
use rayon::prelude::*;

/// The settings of the GA: crossover probability p_c, mutation probability p_m (per
/// offspring), BLX-α's α, and the mutation's range r (a fraction of the domain's width).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Ga {
    pub crossover: f64,
    pub mutation: f64,
    pub alpha: f64,
    pub range: f64,
}

impl Default for Ga {
    /// Castro Liera et al.'s p_c = 0.16 and p_m = 0.7; α = 0.5, r = 0.1.
    fn default() -> Self {
        Ga {
            crossover: CROSSOVER,
            mutation: MUTATION,
            alpha: ALPHA,
            range: RANGE,
        }
    }
}

impl Ga {
    /// Checks the ranges: p_c and p_m in [0, 1], α in [0, 2], r in (0, 1].
    pub fn validate(&self) -> Result<()> {
        for (name, v) in [
            ("crossover probability", self.crossover),
            ("mutation probability", self.mutation),
        ] {
            if !(v.is_finite() && (0.0..=1.0).contains(&v)) {
                return Err(Error::invalid(name, v, "a number in [0, 1]"));
            }
        }
        if !(self.alpha.is_finite() && (0.0..=2.0).contains(&self.alpha)) {
            return Err(Error::invalid(
                "BLX alpha",
                self.alpha,
                "a number in [0, 2]",
            ));
        }
        if !(self.range.is_finite() && self.range > 0.0 && self.range <= 1.0) {
            return Err(Error::invalid(
                "mutation range",
                self.range,
                "a number in (0, 1] (a fraction of the domain's width)",
            ));
        }
        Ok(())
    }

    /// The settings in precision `T`.
    pub fn params<T: Real>(&self) -> GaParams<T> {
        GaParams {
            crossover: T::of(self.crossover),
            mutation: T::of(self.mutation),
            alpha: T::of(self.alpha),
            range: T::of(self.range),
        }
    }
}

/// One generation `g ≥ 1` of `pop`, whose best is `best`: the new population (the old
/// best first, then the offspring), evaluated; returns its best.
pub fn generation<T: Real>(
    job: &Job,
    params: &GaParams<T>,
    pop: &mut Population<T>,
    best: usize,
    g: u32,
) -> usize {
    let d = pop.dim;
    let np = pop.fit.len();
    let key = key_of(job.seed());
    let f = job.builtin();
    let bounds = job.bounds();
    let mut x = vec![T::ZERO; np * d];
    let mut fit = vec![T::ZERO; np];
    x[..d].copy_from_slice(pop.row(best));
    fit[0] = pop.fit[best];
    let old = &*pop;
    x[d..]
        .par_chunks_mut(d)
        .zip(fit[1..].par_iter_mut())
        .enumerate()
        .for_each(|(k, (row, fx))| {
            let i = k as u32 + 1;
            let sub = subsequence(job.stream(), i);
            let words = |slot: u32| block_words(key, sub, block(g, slot));
            let p = plan(
                params,
                np as u32,
                d as u32,
                &words(SELECT_SLOT),
                &words(DECIDE_SLOT),
                || words(BITS_SLOT),
                |c| old.fit[c as usize],
            );
            let (a, b) = (old.row(p.a as usize), old.row(p.b as usize));
            for j0 in (0..d).step_by(4) {
                let n = (d - j0).min(4);
                let q = (j0 / 4) as u32;
                let c = child_chunk(
                    params,
                    &p,
                    bounds,
                    j0 as u32,
                    n as u32,
                    &chunk4(a, j0),
                    &chunk4(b, j0),
                    &chunk4(&old.lo, j0),
                    &chunk4(&old.hi, j0),
                    || words(BLEND_SLOT + q),
                    || words(RESAMPLE_SLOT + q),
                );
                row[j0..j0 + n].copy_from_slice(&c[..n]);
            }
            if let Some(f) = f {
                *fx = evaluate_fast(f, job.formula(), row);
            }
        });
    if f.is_none() {
        // Other objectives: every offspring in one batch.
        let mut vals = vec![T::ZERO; np - 1];
        job.objective()
            .evaluate_rows(job.formula(), &x[d..], d, &mut vals);
        fit[1..].copy_from_slice(&vals);
    }
    pop.x = x;
    pop.fit = fit;
    pop.best()
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpude_device::{BoundPolicy, Function};

    #[test]
    fn parameters_are_checked() {
        assert!(Ga::default().validate().is_ok());
        let e = Ga {
            crossover: 1.5,
            ..Ga::default()
        }
        .validate()
        .unwrap_err();
        assert!(e.to_string().contains("crossover probability"), "{e}");
        let e = Ga {
            range: 0.0,
            ..Ga::default()
        }
        .validate()
        .unwrap_err();
        assert!(e.to_string().contains("mutation range"), "{e}");
        let e = Ga {
            alpha: f64::NAN,
            ..Ga::default()
        }
        .validate()
        .unwrap_err();
        assert!(e.to_string().contains("alpha"), "{e}");
    }

    #[test]
    fn the_best_survives_and_the_rest_are_offspring() {
        let job = Job::builder(Function::Rastrigin, 6)
            .pop(16)
            .seed(4)
            .bounds(BoundPolicy::Clip)
            .build()
            .unwrap();
        let p = Ga::default().params::<f64>();
        let mut pop = crate::cpu::initial::<f64>(&job);
        let b0 = pop.best();
        let (row0, f0) = (pop.row(b0).to_vec(), pop.fit[b0]);
        let old = pop.clone();
        let b1 = generation(&job, &p, &mut pop, b0, 1);
        assert_eq!(pop.row(0), &row0[..]);
        assert_eq!(pop.fit[0], f0);
        // Never worse than the old best (elitism), inside the domain (clip).
        assert!(pop.fit[b1] <= f0);
        assert!(pop.x.iter().all(|v| (-5.12..=5.12).contains(v)));
        // Offspring 3 recomputed from its words by the rule: its parents, then the
        // child of a copy or a blend.
        let key = key_of(4);
        let sub = subsequence(0, 3);
        let w = |slot| block_words(key, sub, block(1, slot));
        let pl = plan(
            &p,
            16,
            6,
            &w(SELECT_SLOT),
            &w(DECIDE_SLOT),
            || w(BITS_SLOT),
            |c| old.fit[c as usize],
        );
        for j in 0..6 {
            let (a, b) = (old.row(pl.a as usize)[j], old.row(pl.b as usize)[j]);
            let mut c = if pl.cross {
                let u = f64::uniform(w(BLEND_SLOT + (j / 4) as u32)[j % 4]);
                let m = a.min(b);
                let width = a.max(b) - m;
                (m - 0.5 * width) + u * (2.0 * width)
            } else {
                a
            };
            if let Some((k, step)) = pl.mutation
                && k == j as u32
            {
                c += step * 10.24;
            }
            assert_eq!(
                pop.row(3)[j].to_bits(),
                c.clamp(-5.12, 5.12).to_bits(),
                "component {j}"
            );
        }
    }
}
