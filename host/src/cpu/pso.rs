//! Particle swarm optimization on the CPU engine: one swarm (island) per population
//! stream, the rules and random words of [`gpude_device::pso`], on all cores with rayon.
//! Every particle's arithmetic reads only the generation's snapshot, so the bits do not
//! depend on the number of threads.

use crate::cpu::{chunk4, evaluate_fast};
use crate::error::{Error, Result};
use crate::job::config::Job;
use gpude_device::Real;
use gpude_device::de::{RESAMPLE_SLOT, accepts, better, block, init_chunk, subsequence};
use gpude_device::philox::{block_words, key_of};
use gpude_device::pso::{
    C1, C2, INERTIA, PsoParams, VELOCITY_SLOT, init_velocity_chunk, r1_slot, r2_slot, step_chunk,
};
use rayon::prelude::*;

/// The settings of PSO: inertia weight w and the confidence constants c1 (own best)
/// and c2 (the swarm's best).
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Pso {
    pub inertia: f64,
    pub c1: f64,
    pub c2: f64,
}

impl Default for Pso {
    /// Seed 001's values: w = 0.8, c1 = c2 = 1.62.
    fn default() -> Self {
        Pso {
            inertia: INERTIA,
            c1: C1,
            c2: C2,
        }
    }
}

impl Pso {
    /// Checks the ranges: w in [0, 2], c1 and c2 in [0, 4].
    pub fn validate(&self) -> Result<()> {
        if !(self.inertia.is_finite() && (0.0..=2.0).contains(&self.inertia)) {
            return Err(Error::invalid(
                "inertia weight w",
                self.inertia,
                "a number in [0, 2]",
            ));
        }
        for (name, c) in [("c1", self.c1), ("c2", self.c2)] {
            if !(c.is_finite() && (0.0..=4.0).contains(&c)) {
                return Err(Error::invalid(name, c, "a number in [0, 4]"));
            }
        }
        Ok(())
    }

    /// The constants in precision `T`.
    pub fn params<T: Real>(&self) -> PsoParams<T> {
        PsoParams {
            inertia: T::of(self.inertia),
            c1: T::of(self.c1),
            c2: T::of(self.c2),
        }
    }
}

/// One swarm, row-major like [`crate::cpu::Population`].
#[derive(Clone, Debug)]
pub struct Swarm<T> {
    pub dim: usize,
    pub x: Vec<T>,
    pub v: Vec<T>,
    /// Personal bests: positions and values.
    pub pbest: Vec<T>,
    pub pfit: Vec<T>,
    pub lo: Vec<T>,
    pub hi: Vec<T>,
    /// Index of the swarm's best personal best.
    pub gbest: usize,
}

impl<T: Real> Swarm<T> {
    /// The swarm of `job` with these positions, velocities and personal bests (from a
    /// checkpoint).
    pub fn from_parts(job: &Job, x: Vec<T>, v: Vec<T>, pbest: Vec<T>, pfit: Vec<T>) -> Swarm<T> {
        let mut s = Swarm {
            dim: job.dim() as usize,
            x,
            v,
            pbest,
            pfit,
            lo: job.lower().iter().map(|&v| T::of(v)).collect(),
            hi: job.upper().iter().map(|&v| T::of(v)).collect(),
            gbest: 0,
        };
        s.gbest = s.best();
        s
    }

    pub fn pbest_row(&self, i: usize) -> &[T] {
        &self.pbest[i * self.dim..(i + 1) * self.dim]
    }

    /// The best personal best (lowest value, then lowest index).
    pub fn best(&self) -> usize {
        let mut b = 0;
        for i in 1..self.pfit.len() {
            if better(self.pfit[i], i as u32, self.pfit[b], b as u32) {
                b = i;
            }
        }
        b
    }

    /// Particle `i` takes `row` (value `f`) as its position and personal best; its
    /// velocity stays (migration).
    pub fn replace(&mut self, i: usize, row: &[T], f: T) {
        let d = self.dim;
        self.x[i * d..(i + 1) * d].copy_from_slice(row);
        self.pbest[i * d..(i + 1) * d].copy_from_slice(row);
        self.pfit[i] = f;
    }
}

/// The initial swarm of `job` (generation 0 of its streams): positions as DE's initial
/// population, velocities `(u − ½)(hi − lo)`, personal bests = positions.
pub fn initial<T: Real>(job: &Job) -> Swarm<T> {
    let d = job.dim() as usize;
    let np = job.pop() as usize;
    let key = key_of(job.seed());
    let lo: Vec<T> = job.lower().iter().map(|&v| T::of(v)).collect();
    let hi: Vec<T> = job.upper().iter().map(|&v| T::of(v)).collect();
    let f = job.builtin();
    let mut x = vec![T::ZERO; np * d];
    let mut v = vec![T::ZERO; np * d];
    let mut pfit = vec![T::ZERO; np];
    x.par_chunks_mut(d)
        .zip(v.par_chunks_mut(d))
        .zip(pfit.par_iter_mut())
        .enumerate()
        .for_each(|(i, ((xr, vr), fx))| {
            let sub = subsequence(job.stream(), i as u32);
            for j0 in (0..d).step_by(4) {
                let n = (d - j0).min(4);
                let q = (j0 / 4) as u32;
                let (l, h) = (chunk4(&lo, j0), chunk4(&hi, j0));
                let ux = block_words(key, sub, block(0, q));
                let uv = block_words(key, sub, block(0, VELOCITY_SLOT + q));
                xr[j0..j0 + n].copy_from_slice(&init_chunk(&ux, n as u32, &l, &h)[..n]);
                vr[j0..j0 + n].copy_from_slice(&init_velocity_chunk(&uv, n as u32, &l, &h)[..n]);
            }
            if let Some(f) = f {
                *fx = evaluate_fast(f, job.formula(), xr);
            }
        });
    if f.is_none() {
        // Other objectives: the whole swarm in one batch.
        job.objective()
            .evaluate_rows(job.formula(), &x, d, &mut pfit);
    }
    let mut s = Swarm {
        dim: d,
        pbest: x.clone(),
        x,
        v,
        pfit,
        lo,
        hi,
        gbest: 0,
    };
    s.gbest = s.best();
    s
}

/// One synchronous generation `g ≥ 1`: every particle moves against the snapshot of
/// the swarm's best, is evaluated and updates its personal best; then the swarm's best
/// is recomputed.
pub fn generation<T: Real>(job: &Job, params: &PsoParams<T>, s: &mut Swarm<T>, g: u32) {
    let d = s.dim;
    let key = key_of(job.seed());
    let f = job.builtin();
    let bounds = job.bounds();
    let gb: Vec<T> = s.pbest_row(s.gbest).to_vec();
    let (lo, hi) = (&s.lo, &s.hi);
    s.x.par_chunks_mut(d)
        .zip(s.v.par_chunks_mut(d))
        .zip(s.pbest.par_chunks_mut(d))
        .zip(s.pfit.par_iter_mut())
        .enumerate()
        .for_each(|(i, (((xr, vr), pr), pf))| {
            let sub = subsequence(job.stream(), i as u32);
            for j0 in (0..d).step_by(4) {
                let n = (d - j0).min(4);
                let q = (j0 / 4) as u32;
                let (nx, nv) = step_chunk(
                    params,
                    bounds,
                    n as u32,
                    &chunk4(xr, j0),
                    &chunk4(vr, j0),
                    &chunk4(pr, j0),
                    &chunk4(&gb, j0),
                    &chunk4(lo, j0),
                    &chunk4(hi, j0),
                    &block_words(key, sub, block(g, r1_slot(q))),
                    &block_words(key, sub, block(g, r2_slot(q))),
                    || block_words(key, sub, block(g, RESAMPLE_SLOT + q)),
                );
                xr[j0..j0 + n].copy_from_slice(&nx[..n]);
                vr[j0..j0 + n].copy_from_slice(&nv[..n]);
            }
            if let Some(f) = f {
                let fx = evaluate_fast(f, job.formula(), xr);
                if accepts(fx, *pf) {
                    pr.copy_from_slice(xr);
                    *pf = fx;
                }
            }
        });
    if f.is_none() {
        // Other objectives: every particle's new position in one batch, then the
        // personal bests.
        let mut fit = vec![T::ZERO; s.pfit.len()];
        job.objective()
            .evaluate_rows(job.formula(), &s.x, d, &mut fit);
        s.x.par_chunks(d)
            .zip(s.pbest.par_chunks_mut(d))
            .zip(s.pfit.par_iter_mut())
            .zip(fit.par_iter())
            .for_each(|(((xr, pr), pf), &fx)| {
                if accepts(fx, *pf) {
                    pr.copy_from_slice(xr);
                    *pf = fx;
                }
            });
    }
    s.gbest = s.best();
}

#[cfg(test)]
mod tests {
    use super::*;
    use gpude_device::{BoundPolicy, Function};

    #[test]
    fn parameters_are_checked() {
        assert!(Pso::default().validate().is_ok());
        let bad = Pso {
            inertia: -0.1,
            ..Pso::default()
        };
        assert!(bad.validate().unwrap_err().to_string().contains("inertia"));
        let bad = Pso {
            c2: f64::NAN,
            ..Pso::default()
        };
        assert!(bad.validate().unwrap_err().to_string().contains("c2"));
    }

    #[test]
    fn first_generation_follows_the_rule_by_hand() {
        // Recompute generation 1 of particle 3 from its words with the rule written out.
        let job = Job::builder(Function::Sphere, 5)
            .pop(8)
            .seed(11)
            .bounds(BoundPolicy::InitOnly)
            .build()
            .unwrap();
        let p = Pso::default().params::<f64>();
        let s0 = initial::<f64>(&job);
        let mut s1 = s0.clone();
        generation(&job, &p, &mut s1, 1);
        let key = key_of(11);
        let sub = subsequence(0, 3);
        let gb = s0.pbest_row(s0.gbest);
        for j in 0..5 {
            let (q, k) = ((j / 4) as u32, j % 4);
            let r1 = f64::uniform(block_words(key, sub, block(1, 2 * q))[k]);
            let r2 = f64::uniform(block_words(key, sub, block(1, 2 * q + 1))[k]);
            let (x, v) = (s0.x[3 * 5 + j], s0.v[3 * 5 + j]);
            let want_v = 0.8 * v + (1.62 * r1) * (x - x) + (1.62 * r2) * (gb[j] - x);
            let want_v = want_v.clamp(-200.0, 200.0);
            assert_eq!(s1.v[3 * 5 + j].to_bits(), want_v.to_bits(), "component {j}");
            assert_eq!(s1.x[3 * 5 + j].to_bits(), (x + want_v).to_bits());
        }
        // The personal best moved only if the new point is better.
        let f_new = evaluate_fast(
            Function::Sphere,
            gpude_device::Formula::Exact,
            &s1.x[15..20],
        );
        if f_new < s0.pfit[3] {
            assert_eq!(&s1.pbest[15..20], &s1.x[15..20]);
        } else {
            assert_eq!(&s1.pbest[15..20], &s0.pbest[15..20]);
        }
        assert_eq!(s1.gbest, s1.best());
    }
}
