//! Several GPUs of one host: which ones a solver uses ([`Gpus`]) and how a list of
//! independent runs is shared out among them ([`spread`]).
//!
//! Every run's bits depend on its job alone (its seed and stream, never on the runs
//! beside it or on the GPU), so a list spread over several GPUs gives each run the
//! result that one GPU gives it.

use crate::error::{Error, Result};

/// The GPUs a solver uses.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum Gpus {
    /// The one GPU that [`crate::SolverOptions::device`] names.
    #[default]
    Device,
    /// Every GPU the driver reports.
    All,
    /// These GPUs, by index (at least one, each once).
    List(Vec<usize>),
}

/// The most GPUs a list names (far above any host's).
pub const MAX_GPUS: usize = 64;

impl Gpus {
    /// `all`, or indices separated by commas (`0,2`).
    pub fn parse(s: &str) -> Result<Gpus> {
        let t = s.trim();
        if t.eq_ignore_ascii_case("all") {
            return Ok(Gpus::All);
        }
        let bad = |why: &str| Error::invalid("gpus", crate::error::clip(s), why.to_string());
        let mut list = Vec::new();
        for part in t.split(',') {
            let i: usize = part
                .trim()
                .parse()
                .map_err(|_| bad("all, or GPU indices separated by commas (0,2)"))?;
            if list.contains(&i) {
                return Err(bad("each GPU once"));
            }
            list.push(i);
        }
        if list.len() > MAX_GPUS {
            return Err(bad("at most 64 GPUs"));
        }
        Ok(Gpus::List(list))
    }

    /// The indices these name, on a host with `count` GPUs, where `device` is the one
    /// [`Gpus::Device`] names: refused when one is not there.
    pub fn resolve(&self, device: usize, count: usize) -> Result<Vec<usize>> {
        let list = match self {
            Gpus::Device => vec![device],
            Gpus::All => (0..count).collect(),
            Gpus::List(l) => l.clone(),
        };
        if list.is_empty() {
            return Err(Error::invalid("gpus", "none", "at least one GPU"));
        }
        if let Some(&bad) = list.iter().find(|&&i| i >= count) {
            let name = if matches!(self, Gpus::Device) {
                "device"
            } else {
                "gpus"
            };
            return Err(Error::invalid(
                name,
                bad,
                match count {
                    0 => "a GPU, and the driver reports none".to_string(),
                    n => format!("0 ..= {} ({n} GPUs)", n - 1),
                },
            ));
        }
        Ok(list)
    }
}

/// Shares `n` runs out among `gpus` GPUs. Runs that can share a launch (`together`
/// says which: an equivalence over the runs) are cut into `gpus` contiguous pieces of
/// near-equal size, and the pieces go, most work first, each to the GPU with the least
/// work so far (`work(k)`: run `k`'s; the lower index on a tie), so that every GPU gets
/// a share of every large set and launches stay wide. Each GPU's runs come in the
/// list's order; every run goes to exactly one GPU.
pub fn spread(
    n: usize,
    gpus: usize,
    together: impl Fn(usize, usize) -> bool,
    work: impl Fn(usize) -> f64,
) -> Vec<Vec<usize>> {
    let gpus = gpus.max(1);
    let mut sets: Vec<Vec<usize>> = Vec::new();
    for k in 0..n {
        match sets.iter_mut().find(|s| together(s[0], k)) {
            Some(s) => s.push(k),
            None => sets.push(vec![k]),
        }
    }
    let mut pieces: Vec<(f64, Vec<usize>)> = Vec::new();
    for s in sets {
        let (q, r) = (s.len() / gpus, s.len() % gpus);
        let mut at = 0;
        for i in 0..gpus {
            let len = q + usize::from(i < r);
            if len == 0 {
                break;
            }
            let piece = s[at..at + len].to_vec();
            at += len;
            pieces.push((piece.iter().map(|&k| work(k)).sum(), piece));
        }
    }
    // Most work first; the earlier piece first on a tie (a stable sort).
    pieces.sort_by(|a, b| b.0.total_cmp(&a.0));
    let mut load = vec![0.0f64; gpus];
    let mut out: Vec<Vec<usize>> = vec![Vec::new(); gpus];
    for (w, piece) in pieces {
        let g = (0..gpus)
            .min_by(|&a, &b| load[a].total_cmp(&load[b]).then(a.cmp(&b)))
            .unwrap_or(0);
        load[g] += w;
        out[g].extend(piece);
    }
    for o in &mut out {
        o.sort_unstable();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpus_parse_all_and_lists_and_refuse_the_rest() {
        assert_eq!(Gpus::parse(" ALL ").unwrap(), Gpus::All);
        assert_eq!(Gpus::parse("0, 2").unwrap(), Gpus::List(vec![0, 2]));
        for bad in ["", "0,,1", "-1", "1,1", "x", "0;1"] {
            let e = Gpus::parse(bad).unwrap_err().to_string();
            assert!(e.contains("gpus"), "{bad:?}: {e}");
        }
    }

    #[test]
    fn resolve_names_the_gpu_that_is_not_there() {
        assert_eq!(Gpus::Device.resolve(1, 2).unwrap(), vec![1]);
        assert_eq!(Gpus::All.resolve(0, 3).unwrap(), vec![0, 1, 2]);
        assert_eq!(Gpus::List(vec![1, 0]).resolve(0, 2).unwrap(), vec![1, 0]);
        let e = Gpus::List(vec![0, 4])
            .resolve(0, 2)
            .unwrap_err()
            .to_string();
        assert!(e.contains('4') && e.contains("0 ..= 1"), "{e}");
        let e = Gpus::Device.resolve(2, 2).unwrap_err().to_string();
        assert!(e.contains("device"), "{e}");
        assert!(Gpus::All.resolve(0, 0).is_err(), "no GPU at all");
    }

    #[test]
    fn spread_cuts_every_set_over_the_gpus_and_balances_the_work() {
        // Two sets of launch partners: 10 runs of work 1, 3 runs of work 10; and one
        // run of work 7 on its own.
        let set = |k: usize| match k {
            0..10 => 0,
            10..13 => 1,
            _ => 2,
        };
        let work = |k: usize| [1.0, 10.0, 7.0][set(k)];
        let s = spread(14, 2, |a, b| set(a) == set(b), work);
        let mut all: Vec<usize> = s.iter().flatten().copied().collect();
        all.sort_unstable();
        assert_eq!(all, (0..14).collect::<Vec<_>>(), "every run exactly once");
        for g in &s {
            assert!(g.windows(2).all(|w| w[0] < w[1]), "in the list's order");
            // Each GPU holds part of the large set (wide launches on both).
            assert_eq!(g.iter().filter(|&&k| set(k) == 0).count(), 5);
        }
        let loads: Vec<f64> = s.iter().map(|g| g.iter().map(|&k| work(k)).sum()).collect();
        // 47 in all: 20 + 5 against 10 + 7 + 5.
        assert_eq!(loads, vec![25.0, 22.0]);

        // One GPU: everything, in order.
        assert_eq!(
            spread(5, 1, |_, _| true, |_| 1.0),
            vec![vec![0, 1, 2, 3, 4]]
        );
        // More GPUs than runs: some get none.
        let s = spread(2, 4, |_, _| true, |_| 1.0);
        assert_eq!(s.iter().filter(|g| g.is_empty()).count(), 2);
    }
}
