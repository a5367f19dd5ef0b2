//! Checkpoints of archipelagos: every island's state between two generations, from
//! which either engine goes on with the same bits as a run that never stopped, and
//! their file.
//!
//! Every random number of an island is keyed by (seed, stream, individual) with the
//! generation in the counter, and a migration event's draws by (seed, stream,
//! generation): so an island's members (and a swarm's positions and velocities), its
//! record ([`crate::cpu::islands`] says what that is) and the generation count are the
//! whole state. A checkpoint at generation g is taken after that generation's
//! migration event, if it had one.
//!
//! # File (version 1)
//! The frame of the runs' checkpoint file (first bytes, format version, payload length,
//! CRC-32 of the payload; see `file.rs`) with first bytes `GPUDEARC`, and as payload the
//! archipelagos in `postcard` encoding: each its template job (stored as the runs' file
//! stores a job), its islands, topology, interval, migrants, emigrant and replacement
//! rules and algorithm, and when started the generations done, the migration events
//! run, the time spent, the overall history and every island's state.

use super::file::{JobRecordV5, frame, unframe};
use super::{State, savable};
use crate::cpu::ga::Ga;
use crate::cpu::islands::{Algorithm, Archipelago, Emigrants, Replacement, Topology};
use crate::cpu::pso::Pso;
use crate::error::{Error, Result};
use crate::job::precision::Precision;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// The first bytes of an archipelago checkpoint file.
pub const MAGIC: [u8; 8] = *b"GPUDEARC";
/// The format version this build writes and reads.
pub const VERSION: u32 = 1;

/// Values in the precision of their job. Two are equal when their bits are (an empty
/// record's NaN equals itself).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum Rows {
    F32(Vec<f32>),
    F64(Vec<f64>),
}

impl PartialEq for Rows {
    fn eq(&self, other: &Rows) -> bool {
        match (self, other) {
            (Rows::F32(a), Rows::F32(b)) => a
                .iter()
                .map(|v| v.to_bits())
                .eq(b.iter().map(|v| v.to_bits())),
            (Rows::F64(a), Rows::F64(b)) => a
                .iter()
                .map(|v| v.to_bits())
                .eq(b.iter().map(|v| v.to_bits())),
            _ => false,
        }
    }
}

impl Rows {
    pub fn len(&self) -> usize {
        match self {
            Rows::F32(v) => v.len(),
            Rows::F64(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn precision(&self) -> Precision {
        match self {
            Rows::F32(_) => Precision::F32,
            Rows::F64(_) => Precision::F64,
        }
    }
}

/// The precision of a state.
fn precision_of(s: &State) -> Precision {
    match s {
        State::F32 { .. } => Precision::F32,
        State::F64 { .. } => Precision::F64,
    }
}

/// One island between two generations.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IslandState {
    /// DE and the GA: the population and its values; PSO: the personal bests and theirs.
    pub members: State,
    /// PSO: the positions and the velocities (each Np·D values, row-major); none for DE
    /// and the GA.
    pub motion: Option<(Rows, Rows)>,
    /// The island's record: its point (empty while the record is empty) and its value
    /// (one value, NaN while empty).
    pub record_x: Rows,
    pub record_f: Rows,
    /// The best value the island held after the initialisation and after each
    /// generation, when the job records a history.
    pub history: Option<Vec<f64>>,
}

/// An archipelago between two generations.
#[derive(Clone, Debug, PartialEq)]
pub struct ArchipelagoCheckpoint {
    pub archipelago: Archipelago,
    /// Generations done (0: the initial populations only).
    pub generation: u32,
    /// Migration events run.
    pub migrations: u32,
    /// Every island's state, in island order.
    pub islands: Vec<IslandState>,
    /// The best value over all islands after the initialisation and after each
    /// generation, when the job records a history.
    pub history: Option<Vec<f64>>,
    /// Time spent on the run so far.
    pub elapsed: Duration,
}

/// The lower of two values, a NaN losing to any number (the engines' order).
fn least(a: f64, b: f64) -> f64 {
    if gpude_device::de::better(b, 1, a, 0) {
        b
    } else {
        a
    }
}

fn bad(message: String) -> Error {
    Error::Input {
        what: "archipelago checkpoint".into(),
        message,
    }
}

impl ArchipelagoCheckpoint {
    /// Checks that the parts agree with the archipelago: islands, precision, sizes,
    /// history lengths.
    pub fn check(&self) -> Result<()> {
        let a = &self.archipelago;
        let job = a.template();
        let (np, d) = (job.pop() as usize, job.dim() as usize);
        let precision = job.precision();
        savable(job)?;
        if self.islands.len() != a.islands() as usize {
            return Err(bad(format!(
                "it holds {} islands for an archipelago of {}",
                self.islands.len(),
                a.islands()
            )));
        }
        if self.generation == u32::MAX {
            return Err(bad("the generation count is out of range".into()));
        }
        if self.migrations > self.generation / a.interval() {
            return Err(bad(format!(
                "{} migration events in {} generations, every {}",
                self.migrations,
                self.generation,
                a.interval()
            )));
        }
        let history = |h: &Option<Vec<f64>>, whose: &str| match h {
            Some(h) if h.len() != self.generation as usize + 1 => Err(bad(format!(
                "{whose} history has {} values for {} generations",
                h.len(),
                self.generation
            ))),
            None if job.history() => Err(bad(format!("{whose} history is missing"))),
            Some(_) if !job.history() => Err(bad(format!(
                "{whose} history is there but the job records none"
            ))),
            _ => Ok(()),
        };
        history(&self.history, "the archipelago's")?;
        let pso = matches!(a.algorithm(), Algorithm::Pso(_));
        for (k, s) in self.islands.iter().enumerate() {
            let island = |m: String| bad(format!("island {k}: {m}"));
            let (xs, fits) = match &s.members {
                State::F32 { x, fit } => (x.len(), fit.len()),
                State::F64 { x, fit } => (x.len(), fit.len()),
            };
            let mut precisions = vec![precision_of(&s.members), s.record_x.precision()];
            precisions.push(s.record_f.precision());
            if Some(xs) != np.checked_mul(d) || fits != np {
                return Err(island(format!(
                    "its members have {xs} components and {fits} values for Np = {np}, D = {d}"
                )));
            }
            match (&s.motion, pso) {
                (Some((x, v)), true) => {
                    if x.len() != np * d || v.len() != np * d {
                        return Err(island(format!(
                            "{} positions' and {} velocities' components for Np = {np}, D = {d}",
                            x.len(),
                            v.len()
                        )));
                    }
                    precisions.push(x.precision());
                    precisions.push(v.precision());
                }
                (None, false) => {}
                (Some(_), false) => {
                    return Err(island(format!(
                        "it holds a swarm's motion but the algorithm is {}",
                        a.algorithm().name()
                    )));
                }
                (None, true) => return Err(island("a swarm's motion is missing".into())),
            }
            if let Some(p) = precisions.iter().find(|&&p| p != precision) {
                return Err(island(format!(
                    "its values are in {} but the job runs in {}",
                    p.name(),
                    precision.name()
                )));
            }
            if s.record_f.len() != 1 || !(s.record_x.is_empty() || s.record_x.len() == d) {
                return Err(island(format!(
                    "its record has {} values and {} components (1, and 0 or D = {d})",
                    s.record_f.len(),
                    s.record_x.len()
                )));
            }
            history(&s.history, &format!("island {k}'s"))?;
        }
        Ok(())
    }

    /// The best value held over all islands (each island's record or current best).
    pub fn held(&self) -> f64 {
        self.islands
            .iter()
            .map(|s| {
                let fb = match &s.members {
                    State::F32 { fit, .. } => fit.iter().map(|&v| v as f64).fold(f64::NAN, least),
                    State::F64 { fit, .. } => fit.iter().copied().fold(f64::NAN, least),
                };
                let rec = match &s.record_f {
                    Rows::F32(v) => v.first().map_or(f64::NAN, |&r| r as f64),
                    Rows::F64(v) => v.first().copied().unwrap_or(f64::NAN),
                };
                least(fb, rec)
            })
            .fold(f64::NAN, least)
    }

    /// Whether the migration event of the checkpoint's generation is still to run: a
    /// run saved at its generation limit skips that generation's event, which a run
    /// with a higher limit (see [`Self::set_generations`]) has. Events are skipped only
    /// there and once the target is reached (the run ends), so the count of events
    /// tells.
    pub fn pending_event(&self) -> bool {
        let a = &self.archipelago;
        let g = self.generation;
        let job = a.template();
        let held = self.held();
        a.islands() > 1
            && a.incoming() > 0
            && g > 0
            && g.is_multiple_of(a.interval())
            && g < job.generations()
            && self.migrations < g / a.interval()
            && !job.target_value().is_some_and(|t| held <= t)
    }

    /// Raises or lowers the generation limit (a resumed archipelago then goes on to
    /// it); the migration interval stays.
    pub fn set_generations(&mut self, generations: u32) -> Result<()> {
        if generations < self.generation {
            return Err(Error::invalid(
                "generations",
                generations,
                format!("at least the {} generations done", self.generation),
            ));
        }
        self.archipelago = self.archipelago.with_generations(generations)?;
        Ok(())
    }
}

/// One archipelago of a checkpoint file: started (its state) or not yet.
#[derive(Clone, Debug, PartialEq)]
pub enum ArchipelagoEntry {
    Pending(Archipelago),
    Started(ArchipelagoCheckpoint),
}

impl ArchipelagoEntry {
    pub fn archipelago(&self) -> &Archipelago {
        match self {
            ArchipelagoEntry::Pending(a) => a,
            ArchipelagoEntry::Started(c) => &c.archipelago,
        }
    }

    /// Sets the generation limit (see [`ArchipelagoCheckpoint::set_generations`]).
    pub fn set_generations(&mut self, generations: u32) -> Result<()> {
        match self {
            ArchipelagoEntry::Started(c) => c.set_generations(generations),
            ArchipelagoEntry::Pending(a) => {
                *a = a.with_generations(generations)?;
                Ok(())
            }
        }
    }
}

/// The algorithm, as stored.
#[derive(Serialize, Deserialize)]
enum AlgorithmRecord {
    De,
    Pso(Pso),
    Ga(Ga),
}

#[derive(Serialize)]
struct RunRef<'a> {
    generation: u32,
    migrations: u32,
    history: Option<&'a [f64]>,
    elapsed: Duration,
    islands: &'a [IslandState],
}

#[derive(Deserialize)]
struct RunRecord {
    generation: u32,
    migrations: u32,
    history: Option<Vec<f64>>,
    elapsed: Duration,
    islands: Vec<IslandState>,
}

/// The settings of an archipelago, as stored.
#[derive(Serialize, Deserialize)]
struct Settings {
    islands: u32,
    topology: u32,
    interval: u32,
    migrants: u32,
    emigrants: u32,
    replace: u32,
    algorithm: AlgorithmRecord,
}

#[derive(Serialize)]
struct EntryRef<'a> {
    template: JobRecordV5<'a>,
    settings: Settings,
    run: Option<RunRef<'a>>,
}

#[derive(Deserialize)]
struct EntryRecord {
    template: JobRecordV5<'static>,
    settings: Settings,
    run: Option<RunRecord>,
}

impl Settings {
    fn of(a: &Archipelago) -> Settings {
        Settings {
            islands: a.islands(),
            topology: a.topology() as u32,
            interval: a.interval(),
            migrants: a.migrants(),
            emigrants: a.emigrants() as u32,
            replace: a.replacement() as u32,
            algorithm: match a.algorithm() {
                Algorithm::De => AlgorithmRecord::De,
                Algorithm::Pso(p) => AlgorithmRecord::Pso(p),
                Algorithm::Ga(g) => AlgorithmRecord::Ga(g),
            },
        }
    }

    /// The archipelago of `template` with these settings, built (and so checked) as any
    /// other.
    fn archipelago(self, template: crate::job::config::Job) -> Result<Archipelago> {
        let unknown = |what: &str, v: u32| bad(format!("unknown {what} number {v}"));
        let topology =
            Topology::from_u32(self.topology).ok_or_else(|| unknown("topology", self.topology))?;
        let emigrants = Emigrants::from_u32(self.emigrants)
            .ok_or_else(|| unknown("emigrant rule", self.emigrants))?;
        let replace = Replacement::from_u32(self.replace)
            .ok_or_else(|| unknown("replacement rule", self.replace))?;
        Archipelago::builder(template, self.islands)
            .topology(topology)
            .interval(self.interval)
            .migrants(self.migrants)
            .emigrants(emigrants)
            .replacement(replace)
            .algorithm(match self.algorithm {
                AlgorithmRecord::De => Algorithm::De,
                AlgorithmRecord::Pso(p) => Algorithm::Pso(p),
                AlgorithmRecord::Ga(g) => Algorithm::Ga(g),
            })
            .build()
    }
}

/// Whether these bytes start as an archipelago checkpoint file.
pub fn is_archipelago_file(bytes: &[u8]) -> bool {
    bytes.starts_with(&MAGIC)
}

/// The bytes of an archipelago checkpoint file holding `entries`. Its size is computed
/// first and checked against the host's available memory
/// ([`crate::run::memory::check_memory`]): a file that does not fit is refused with
/// [`Error::OutOfMemory`] before any of it is allocated.
pub fn encode_archipelagos(entries: &[ArchipelagoEntry]) -> Result<Vec<u8>> {
    let mut records = Vec::with_capacity(entries.len());
    for e in entries {
        let a = e.archipelago();
        savable(a.template())?;
        if let ArchipelagoEntry::Started(c) = e {
            c.check()?;
        }
        records.push(EntryRef {
            template: JobRecordV5::of(a.template(), None),
            settings: Settings::of(a),
            run: match e {
                ArchipelagoEntry::Pending(_) => None,
                ArchipelagoEntry::Started(c) => Some(RunRef {
                    generation: c.generation,
                    migrations: c.migrations,
                    history: c.history.as_deref(),
                    elapsed: c.elapsed,
                    islands: &c.islands,
                }),
            },
        });
    }
    frame(MAGIC, VERSION, &records, crate::run::memory::check_memory)
}

/// The archipelagos of a checkpoint file. A file that is not one, of another version,
/// cut short, altered (checksum) or inconsistent is an [`Error::Input`] saying which;
/// no message shows the file's bytes.
pub fn decode_archipelagos(bytes: &[u8]) -> Result<Vec<ArchipelagoEntry>> {
    let (_, payload) = unframe(bytes, MAGIC, VERSION, bad)?;
    let (records, rest): (Vec<EntryRecord>, &[u8]) = postcard::take_from_bytes(payload)
        .map_err(|_| bad("corrupt: the data cannot be decoded".into()))?;
    if !rest.is_empty() {
        return Err(bad("corrupt: data past the last archipelago".into()));
    }
    if records.is_empty() {
        return Err(bad("it holds no archipelago".into()));
    }
    let mut out = Vec::with_capacity(records.len());
    for (k, r) in records.into_iter().enumerate() {
        let at = |e: Error| match e {
            Error::Input { message, .. } => bad(format!("archipelago {k}: {message}")),
            other => bad(format!("archipelago {k}: {other}")),
        };
        let job = r.template.job_after(None).map_err(at)?;
        let archipelago = r.settings.archipelago(job).map_err(at)?;
        out.push(match r.run {
            None => ArchipelagoEntry::Pending(archipelago),
            Some(run) => {
                let c = ArchipelagoCheckpoint {
                    archipelago,
                    generation: run.generation,
                    migrations: run.migrations,
                    islands: run.islands,
                    history: run.history,
                    elapsed: run.elapsed,
                };
                c.check().map_err(at)?;
                ArchipelagoEntry::Started(c)
            }
        });
    }
    Ok(out)
}
