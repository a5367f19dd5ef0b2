//! The checkpoint file: a list of runs (their jobs and, when started, their states).
//!
//! # Format (version 5)
//! | bytes | content |
//! | --- | --- |
//! | 8 | `GPUDECKP` |
//! | 4 | format version, little-endian `u32` |
//! | 8 | payload length in bytes, little-endian `u64` |
//! | 4 | CRC-32 (IEEE) of the payload, little-endian `u32` |
//! | … | payload: the runs in `postcard` encoding |
//!
//! A binary payload keeps every float's exact bits (NaN and infinities included) in 4 or
//! 8 bytes; postcard is a stable, documented serde format. Each run holds its job (every
//! setting), and when started, the generations done, the population and its values in
//! the job's precision, the history and the time spent. A job whose bounds are those of
//! the run before it, bit for bit (the runs of one `--runs N` differ in their stream
//! alone), stores them once: its own are left empty and marked as the previous run's.
//!
//! [`encoded_size`] gives a file's exact size without encoding it, and [`encode_parts`]
//! refuses a file larger than the memory available before it allocates any of it.

use super::*;

/// The first bytes of a checkpoint file.
pub const MAGIC: [u8; 8] = *b"GPUDECKP";
/// The format version this build writes and reads.
/// Version 2 added the objective (an expression or a CEC 2017 function), version 3 the
/// thesis variant, version 4 the convergence stops, version 5 bounds stored once for
/// runs that share them; files of versions 1 (built-in functions only) to 4 are still
/// read (their jobs have the default variant where it is missing, and no stops).
pub const VERSION: u32 = 5;
/// Header bytes: magic, version, length, CRC.
const HEADER: usize = 8 + 4 + 8 + 4;

/// Every setting of a job, as stored. The bounds are borrowed from the job when
/// encoding and owned when decoding.
#[derive(Serialize, Deserialize)]
struct JobRecord<'a> {
    function: u32,
    lower: Cow<'a, [f64]>,
    upper: Cow<'a, [f64]>,
    /// Bounds held by another job, which replace `lower` and `upper` (empty then) when
    /// the job is built; never stored.
    #[serde(skip)]
    shared: Option<crate::job::problem::SharedBounds>,
    strategy: u32,
    crossover: u32,
    bounds: u32,
    f: f64,
    cr: f64,
    pop: u32,
    generations: u32,
    budget_from_evaluations: bool,
    target: Option<f64>,
    seed: u64,
    stream: u32,
    precision_f64: bool,
    formula: u32,
    history: bool,
}

/// The objective, as stored (version 2).
#[derive(Serialize, Deserialize)]
enum ObjectiveRecord {
    /// The built-in function of [`JobRecord::function`].
    Builtin,
    Expr {
        source: String,
        min: Option<f64>,
    },
    /// CEC 2017 F_n at the job's dimension, its data read again on loading.
    Cec2017 {
        number: u32,
    },
}

/// A job as version 2 stores it: the settings, then the objective.
#[derive(Serialize, Deserialize)]
struct JobRecordV2<'a> {
    base: JobRecord<'a>,
    objective: ObjectiveRecord,
}

impl<'a> JobRecordV2<'a> {
    fn of(job: &'a Job) -> JobRecordV2<'a> {
        use crate::job::objective::Objective as O;
        let objective = match job.objective() {
            O::Builtin(_) => ObjectiveRecord::Builtin,
            O::Expr(e) => ObjectiveRecord::Expr {
                source: e.expr.source().to_string(),
                min: e.min,
            },
            O::Cec2017(c) => ObjectiveRecord::Cec2017 {
                number: c.data().id().number(),
            },
            // `savable` refuses callbacks before anything is encoded.
            O::Callback(_) => ObjectiveRecord::Builtin,
        };
        JobRecordV2 {
            base: JobRecord::of(job),
            objective,
        }
    }

    fn job(self) -> Result<Job> {
        self.job_with(ThesisVariant::DEFAULT, Stops::default())
    }

    /// The job, with thesis variant `variant` and `stops`.
    fn job_with(self, variant: ThesisVariant, stops: Stops) -> Result<Job> {
        use crate::job::objective::Objective;
        let objective = match self.objective {
            ObjectiveRecord::Builtin => None,
            ObjectiveRecord::Expr { source, min } => Some(Objective::expr(&source, min)?),
            ObjectiveRecord::Cec2017 { number } => {
                let id = crate::job::cec2017::FunctionId::new(number)?;
                let source = crate::job::cec2017::DataSource::locate(None)?;
                let dim = u32::try_from(self.base.dim()).unwrap_or(u32::MAX);
                Some(Objective::cec2017(&source, id, dim)?)
            }
        };
        self.base.job_of(objective, variant, stops)
    }
}

/// A job as version 3 stores it: version 2's record, then the thesis variant
/// ([`ThesisVariant::bits`]). The record's generations are [`Job::g_max`].
#[derive(Serialize, Deserialize)]
struct JobRecordV3<'a> {
    v2: JobRecordV2<'a>,
    thesis_variant: u32,
}

impl<'a> JobRecordV3<'a> {
    fn of(job: &'a Job) -> JobRecordV3<'a> {
        JobRecordV3 {
            v2: JobRecordV2::of(job),
            thesis_variant: job.thesis_variant().bits(),
        }
    }

    fn job(self) -> Result<Job> {
        self.job_with(Stops::default())
    }

    /// The job, with `stops`.
    fn job_with(self, stops: Stops) -> Result<Job> {
        let variant =
            ThesisVariant::from_bits(self.thesis_variant).ok_or_else(|| Error::Input {
                what: "checkpoint".into(),
                message: format!("unknown thesis variant bits {:#x}", self.thesis_variant),
            })?;
        self.v2.job_with(variant, stops)
    }
}

/// A job as version 4 stores it: version 3's record, then the convergence stops.
#[derive(Serialize, Deserialize)]
struct JobRecordV4<'a> {
    v3: JobRecordV3<'a>,
    stops: Stops,
}

impl<'a> JobRecordV4<'a> {
    fn of(job: &'a Job) -> JobRecordV4<'a> {
        JobRecordV4 {
            v3: JobRecordV3::of(job),
            stops: *job.stops(),
        }
    }

    fn job(self) -> Result<Job> {
        self.v3.job_with(self.stops)
    }
}

/// A job as version 5 stores it: version 4's record, whose bounds are empty when they
/// are those of the previous run's job.
#[derive(Serialize, Deserialize)]
pub(super) struct JobRecordV5<'a> {
    v4: JobRecordV4<'a>,
    /// The bounds are the previous run's.
    same_bounds: bool,
}

impl<'a> JobRecordV5<'a> {
    /// The record of `job`, which follows a run with job `previous`, if any.
    pub(super) fn of(job: &'a Job, previous: Option<&Job>) -> JobRecordV5<'a> {
        let mut v4 = JobRecordV4::of(job);
        let same_bounds = previous.is_some_and(|p| {
            same_bits(p.lower(), job.lower()) && same_bits(p.upper(), job.upper())
        });
        if same_bounds {
            v4.v3.v2.base.lower = Cow::Borrowed(&[]);
            v4.v3.v2.base.upper = Cow::Borrowed(&[]);
        }
        JobRecordV5 { v4, same_bounds }
    }

    /// The job; `previous` is the job of the run before it, whose bounds it may share.
    pub(super) fn job_after(mut self, previous: Option<&Job>) -> Result<Job> {
        if self.same_bounds {
            let base = &mut self.v4.v3.v2.base;
            let p = previous.ok_or_else(|| Error::Input {
                what: "checkpoint".into(),
                message: "its bounds are said to be the previous run's, but it is the first run"
                    .into(),
            })?;
            if !base.lower.is_empty() || !base.upper.is_empty() {
                return Err(Error::Input {
                    what: "checkpoint".into(),
                    message: "it holds bounds and also says they are the previous run's".into(),
                });
            }
            base.shared = Some(p.shared_bounds());
        }
        self.v4.job()
    }
}

impl<'a> JobRecord<'a> {
    fn of(job: &'a Job) -> JobRecord<'a> {
        JobRecord {
            function: job.builtin().map_or(0, |f| f as u32),
            lower: Cow::Borrowed(job.lower()),
            upper: Cow::Borrowed(job.upper()),
            shared: None,
            strategy: job.strategy() as u32,
            crossover: job.crossover() as u32,
            bounds: job.bounds() as u32,
            f: job.f(),
            cr: job.cr(),
            pop: job.pop(),
            generations: job.g_max(),
            budget_from_evaluations: job.budget_from_evaluations(),
            target: job.target(),
            seed: job.seed(),
            stream: job.stream(),
            precision_f64: job.precision() == Precision::F64,
            formula: job.formula() as u32,
            history: job.history(),
        }
    }

    /// The job, built (and so checked) as any other.
    fn job(self) -> Result<Job> {
        self.job_of(None, ThesisVariant::DEFAULT, Stops::default())
    }

    /// The job's dimension: its number of bounds.
    fn dim(&self) -> usize {
        self.shared
            .as_ref()
            .map_or(self.lower.len(), |(l, _)| l.len())
    }

    /// The job with `objective`, or with the built-in function of the record, thesis
    /// variant `variant` and `stops`.
    fn job_of(
        self,
        objective: Option<crate::job::objective::Objective>,
        variant: ThesisVariant,
        stops: Stops,
    ) -> Result<Job> {
        let unknown = |what: &str, v: u32| Error::Input {
            what: "checkpoint".into(),
            message: format!("unknown {what} number {v}"),
        };
        let function =
            Function::from_u32(self.function).ok_or_else(|| unknown("function", self.function))?;
        let strategy =
            Strategy::from_u32(self.strategy).ok_or_else(|| unknown("strategy", self.strategy))?;
        let crossover = Crossover::from_u32(self.crossover)
            .ok_or_else(|| unknown("crossover", self.crossover))?;
        let bounds = BoundPolicy::from_u32(self.bounds)
            .ok_or_else(|| unknown("bound policy", self.bounds))?;
        let formula =
            Formula::from_u32(self.formula).ok_or_else(|| unknown("formula", self.formula))?;
        let dim = u32::try_from(self.dim()).unwrap_or(u32::MAX);
        let objective = objective.unwrap_or(crate::job::objective::Objective::Builtin(function));
        let (lower, upper) = match self.shared {
            Some(bounds) => bounds,
            None => (
                self.lower.into_owned().into(),
                self.upper.into_owned().into(),
            ),
        };
        let mut b = Job::builder_for(objective, dim)
            .domain_shared(lower, upper)
            .strategy(strategy)
            .crossover(crossover)
            .bounds(bounds)
            .f(self.f)
            .cr(self.cr)
            .pop(self.pop)
            .seed(self.seed)
            .stream(self.stream)
            .precision(if self.precision_f64 {
                Precision::F64
            } else {
                Precision::F32
            })
            .formula(formula)
            .history(self.history)
            .thesis_variant(variant)
            .stops(stops);
        b = if self.budget_from_evaluations {
            b.max_evaluations(self.pop as u64 * (1 + self.generations as u64))
        } else {
            b.generations(self.generations)
        };
        if let Some(t) = self.target {
            b = b.target(t);
        }
        let job = b.build()?;
        if job.g_max() != self.generations {
            return Err(Error::Input {
                what: "checkpoint".into(),
                message: "the job's generation limit does not read back".into(),
            });
        }
        Ok(job)
    }
}

#[derive(Serialize)]
struct RunRef<'a> {
    generation: u32,
    state: &'a State,
    history: Option<&'a [f64]>,
    elapsed: Duration,
}

#[derive(Deserialize)]
struct RunRecord {
    generation: u32,
    state: State,
    history: Option<Vec<f64>>,
    elapsed: Duration,
}

#[derive(Serialize)]
struct EntryRef<'a> {
    job: JobRecordV5<'a>,
    run: Option<RunRef<'a>>,
}

#[derive(Deserialize)]
struct EntryRecord<J> {
    job: J,
    run: Option<RunRecord>,
}

/// A job of any version, read; `previous` is the job of the run before it (version 5
/// stores bounds equal to the previous job's once).
trait StoredJob: Sized {
    fn into_job(self, previous: Option<&Job>) -> Result<Job>;
}

/// The versions before 5: each record holds its whole job.
macro_rules! whole_job_records {
    ($($record:ident),*) => {$(
        impl StoredJob for $record<'_> {
            fn into_job(self, _: Option<&Job>) -> Result<Job> {
                self.job()
            }
        }
    )*};
}
whole_job_records!(JobRecord, JobRecordV2, JobRecordV3, JobRecordV4);

impl StoredJob for JobRecordV5<'_> {
    fn into_job(self, previous: Option<&Job>) -> Result<Job> {
        self.job_after(previous)
    }
}

/// The bytes of a checkpoint file holding `entries`.
pub fn encode(entries: &[Entry]) -> Result<Vec<u8>> {
    encode_parts(entries.iter().map(Entry::part))
}

/// The records of these runs, borrowing their bounds and populations; each job's
/// bounds are stored once when the run before it has the same.
fn records<'a>(parts: &[Part<'a>]) -> Result<Vec<EntryRef<'a>>> {
    let mut previous: Option<&Job> = None;
    let mut records = Vec::with_capacity(parts.len());
    for &part in parts {
        let job = part.job();
        savable(job)?;
        records.push(EntryRef {
            job: JobRecordV5::of(job, previous),
            run: match part {
                Part::Pending(_) => None,
                Part::Started(c) => Some(RunRef {
                    generation: c.generation,
                    state: &c.state,
                    history: c.history.as_deref(),
                    elapsed: c.elapsed,
                }),
            },
        });
        previous = Some(job);
    }
    Ok(records)
}

fn encoding_error(e: postcard::Error) -> Error {
    Error::Io(std::io::Error::other(format!("encoding a checkpoint: {e}")))
}

/// The size of the payload of these records, computed as postcard encodes them
/// (nothing is allocated for it).
fn payload_size(records: &[EntryRef]) -> Result<u64> {
    postcard::experimental::serialized_size(records)
        .map(|n| n as u64)
        .map_err(encoding_error)
}

/// The exact size in bytes of the checkpoint file that [`encode_parts`] makes of these
/// runs (header included), computed without encoding them: the same records go through
/// postcard's size computation, which counts the bytes and keeps none. It takes time in
/// proportion to the size, and no memory. Runs that no checkpoint can hold are refused
/// as [`encode_parts`] refuses them.
pub fn encoded_size<'a>(parts: impl IntoIterator<Item = Part<'a>>) -> Result<u64> {
    let parts: Vec<Part> = parts.into_iter().collect();
    Ok(HEADER as u64 + payload_size(&records(&parts)?)?)
}

/// The bytes of a checkpoint file holding these runs. The file's size is computed first
/// (see [`encoded_size`]) and checked against the host's available memory
/// ([`crate::run::memory::check_memory`]): a file that does not fit is refused with
/// [`Error::OutOfMemory`] before any of it is allocated.
pub fn encode_parts<'a>(parts: impl IntoIterator<Item = Part<'a>>) -> Result<Vec<u8>> {
    encode_within(parts, crate::run::memory::check_memory)
}

/// [`encode_parts`] with `room` deciding whether a file of that many bytes may be
/// allocated.
fn encode_within<'a>(
    parts: impl IntoIterator<Item = Part<'a>>,
    room: impl Fn(u64) -> Result<()>,
) -> Result<Vec<u8>> {
    let parts: Vec<Part> = parts.into_iter().collect();
    let records = records(&parts)?;
    frame(MAGIC, VERSION, &records, room)
}

/// A file of `payload` in postcard encoding behind the header (`magic`, `version`,
/// length, CRC-32): its size is computed first and given to `room`, which may refuse
/// it before any of it is allocated.
pub(super) fn frame<P: Serialize + ?Sized>(
    magic: [u8; 8],
    version: u32,
    payload: &P,
    room: impl Fn(u64) -> Result<()>,
) -> Result<Vec<u8>> {
    let len = postcard::experimental::serialized_size(payload)
        .map(|n| n as u64)
        .map_err(encoding_error)?;
    let total = HEADER as u64 + len;
    room(total)?;
    let too_large = || Error::OutOfMemory {
        memory: "host",
        needed: total,
        free: crate::run::memory::available_memory().unwrap_or(0),
    };
    let mut out = Vec::new();
    out.try_reserve_exact(usize::try_from(total).map_err(|_| too_large())?)
        .map_err(|_| too_large())?;
    out.extend_from_slice(&magic);
    out.extend_from_slice(&version.to_le_bytes());
    out.extend_from_slice(&len.to_le_bytes());
    // The checksum, once the payload is there.
    out.extend_from_slice(&[0; 4]);
    let mut out = postcard::to_extend(payload, out).map_err(encoding_error)?;
    if out.len() as u64 != total {
        return Err(Error::Io(std::io::Error::other(format!(
            "encoding a checkpoint: {} bytes where {total} were computed",
            out.len()
        ))));
    }
    let crc = crc32fast::hash(&out[HEADER..]);
    out[HEADER - 4..HEADER].copy_from_slice(&crc.to_le_bytes());
    Ok(out)
}

/// The version and the checked payload of a file framed by [`frame`] with `magic`, of
/// versions 1 ..= `newest`; `bad` makes the errors (none shows the file's bytes).
pub(super) fn unframe(
    bytes: &[u8],
    magic: [u8; 8],
    newest: u32,
    bad: impl Fn(String) -> Error,
) -> Result<(u32, &[u8])> {
    if bytes.len() < magic.len() || bytes[..magic.len()] != magic {
        return Err(bad(format!(
            "not a {} (its first bytes differ)",
            kind_of(magic)
        )));
    }
    if bytes.len() < HEADER {
        return Err(bad(format!(
            "truncated: {} bytes, shorter than the {HEADER}-byte header",
            bytes.len()
        )));
    }
    let word =
        |at: usize| u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
    let version = word(8);
    if !(1..=newest).contains(&version) {
        return Err(bad(format!(
            "format version {version}; this gpude reads versions 1 to {newest}"
        )));
    }
    let mut len = [0u8; 8];
    len.copy_from_slice(&bytes[12..20]);
    let len = u64::from_le_bytes(len);
    let crc = word(20);
    let payload = &bytes[HEADER..];
    if (payload.len() as u64) < len {
        return Err(bad(format!(
            "truncated: the header announces {len} bytes of data, the file holds {}",
            payload.len()
        )));
    }
    if payload.len() as u64 > len {
        return Err(bad(format!(
            "{} bytes follow the announced {len} bytes of data",
            payload.len() as u64 - len
        )));
    }
    if crc32fast::hash(payload) != crc {
        return Err(bad("corrupt: the checksum does not match the data".into()));
    }
    Ok((version, payload))
}

/// What a file with these first bytes is, for messages.
fn kind_of(magic: [u8; 8]) -> &'static str {
    if magic == MAGIC {
        "gpude checkpoint"
    } else {
        "gpude archipelago checkpoint"
    }
}

/// The runs of a checkpoint file. A file that is not a checkpoint, of another version,
/// cut short, altered (checksum) or inconsistent is an [`Error::Input`] saying which;
/// no message shows the file's bytes.
pub fn decode(bytes: &[u8]) -> Result<Vec<Entry>> {
    let bad = |m: String| Error::Input {
        what: "checkpoint".into(),
        message: m,
    };
    let (version, payload) = unframe(bytes, MAGIC, VERSION, bad)?;
    match version {
        1 => entries::<JobRecord>(payload, bad),
        2 => entries::<JobRecordV2>(payload, bad),
        3 => entries::<JobRecordV3>(payload, bad),
        4 => entries::<JobRecordV4>(payload, bad),
        _ => entries::<JobRecordV5>(payload, bad),
    }
}

/// The runs of a checked payload whose jobs are stored as `J`.
fn entries<J: StoredJob + serde::de::DeserializeOwned>(
    payload: &[u8],
    bad: impl Fn(String) -> Error,
) -> Result<Vec<Entry>> {
    let (records, rest): (Vec<EntryRecord<J>>, &[u8]) = postcard::take_from_bytes(payload)
        .map_err(|_| bad("corrupt: the data cannot be decoded".into()))?;
    if !rest.is_empty() {
        return Err(bad("corrupt: data past the last run".into()));
    }
    if records.is_empty() {
        return Err(bad("it holds no run".into()));
    }
    let mut out: Vec<Entry> = Vec::with_capacity(records.len());
    for (k, r) in records.into_iter().enumerate() {
        let in_run = |e: Error| match e {
            Error::Input { message, .. } => bad(format!("run {k}: {message}")),
            other => bad(format!("run {k}: {other}")),
        };
        let previous = out.last().map(Entry::job);
        let mut job = r.job.into_job(previous).map_err(in_run)?;
        // Runs with the same bounds hold one copy of them, as the runs of `--runs N` do.
        if let Some(p) = previous {
            job.share_bounds(p);
        }
        out.push(match r.run {
            None => Entry::Pending(job),
            Some(run) => {
                let c = Checkpoint {
                    job,
                    generation: run.generation,
                    state: run.state,
                    history: run.history,
                    elapsed: run.elapsed,
                };
                c.check().map_err(in_run)?;
                Entry::Started(c)
            }
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file as version `version` wrote it, its job records made by `record`.
    fn written_as<'e, J: Serialize>(
        entries: &'e [Entry],
        version: u32,
        record: impl Fn(&'e Job) -> J,
    ) -> Vec<u8> {
        #[derive(Serialize)]
        struct Old<'a, J> {
            job: J,
            run: Option<RunRef<'a>>,
        }
        let records: Vec<Old<J>> = entries
            .iter()
            .map(|e| Old {
                job: record(e.job()),
                run: match e {
                    Entry::Pending(_) => None,
                    Entry::Started(c) => Some(RunRef {
                        generation: c.generation,
                        state: &c.state,
                        history: c.history.as_deref(),
                        elapsed: c.elapsed,
                    }),
                },
            })
            .collect();
        let payload = postcard::to_allocvec(&records).unwrap();
        let mut out = MAGIC.to_vec();
        out.extend_from_slice(&version.to_le_bytes());
        out.extend_from_slice(&(payload.len() as u64).to_le_bytes());
        out.extend_from_slice(&crc32fast::hash(&payload).to_le_bytes());
        out.extend_from_slice(&payload);
        out
    }

    /// A file as version 2 wrote it: its job records have no variant.
    fn version2(entries: &[Entry]) -> Vec<u8> {
        written_as(entries, 2, JobRecordV2::of)
    }

    /// A file as version 3 wrote it: its job records have no stops.
    fn version3(entries: &[Entry]) -> Vec<u8> {
        written_as(entries, 3, JobRecordV3::of)
    }

    /// A file as version 4 wrote it: every job holds its bounds.
    fn version4(entries: &[Entry]) -> Vec<u8> {
        written_as(entries, 4, JobRecordV4::of)
    }

    /// The version of a file's bytes.
    fn version_of(bytes: &[u8]) -> u32 {
        u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]])
    }

    #[test]
    fn version_2_files_are_read_with_the_default_variant() {
        let job = Job::builder(Function::Rosenbrock, 6)
            .pop(12)
            .generations(9)
            .seed(3)
            .history(true)
            .build()
            .unwrap();
        // A started run: any population of the job's size will do.
        let (np, d) = (job.pop() as usize, job.dim() as usize);
        let started = Checkpoint {
            job: job.clone(),
            generation: 9,
            state: State::F32 {
                x: (0..np * d).map(|v| v as f32 * 0.25).collect(),
                fit: (0..np).map(|v| v as f32).collect(),
            },
            history: Some((0..10).map(|g| 10.0 - g as f64).collect()),
            elapsed: Duration::from_millis(3),
        };
        let entries = vec![
            Entry::Started(started),
            Entry::Pending(job.clone().with_stream(4)),
        ];
        let old = decode(&version2(&entries)).unwrap();
        assert_eq!(old, entries);
        assert!(old.iter().all(|e| e.job().thesis_variant().is_default()));
        // This build writes version 5, which reads back the same.
        let new = encode(&entries).unwrap();
        assert_eq!(version_of(&new), 5);
        assert_eq!(decode(&new).unwrap(), entries);
    }

    #[test]
    fn version_3_files_are_read_without_stops_and_version_4_keeps_them() {
        let job = Job::builder(Function::Rastrigin, 5)
            .pop(10)
            .generations(64)
            .seed(8)
            .thesis_variant(crate::job::config::parse_variant("indices=rejection").unwrap())
            .build()
            .unwrap();
        let entries = vec![Entry::Pending(job.clone())];
        let old = decode(&version3(&entries)).unwrap();
        assert_eq!(old, entries);
        assert_eq!(*old[0].job().stops(), Stops::default());
        assert!(!old[0].job().thesis_variant().is_default());
        // Every stop round-trips, the interval included; the stagnation keeps the history.
        let stopped = Job::builder(Function::Rastrigin, 5)
            .pop(10)
            .generations(64)
            .tol(0.25)
            .atol(1e-9)
            .stagnation(7)
            .check_every(4)
            .build()
            .unwrap();
        assert!(stopped.history());
        let (np, d) = (stopped.pop() as usize, stopped.dim() as usize);
        let started = Checkpoint {
            job: stopped.clone(),
            generation: 3,
            state: State::F32 {
                x: vec![0.5; np * d],
                fit: (0..np).map(|v| v as f32).collect(),
            },
            history: Some(vec![4.0, 3.0, 2.0, 1.0]),
            elapsed: Duration::from_millis(1),
        };
        let entries = vec![Entry::Started(started), Entry::Pending(stopped.clone())];
        let bytes = encode(&entries).unwrap();
        assert_eq!(version_of(&bytes), VERSION);
        let back = decode(&bytes).unwrap();
        assert_eq!(back, entries);
        assert_eq!(back[1].job().stops(), stopped.stops());
        assert_eq!(back[1].job().stops().every, 4);
    }

    #[test]
    fn a_checkpoint_where_a_stop_fires_is_finished_with_that_stop() {
        let job = |b: crate::job::config::JobBuilder| {
            b.pop(8).generations(100).check_every(4).build().unwrap()
        };
        let at = |job: Job, generation: u32, fit: Vec<f32>, history: Option<Vec<f64>>| {
            let d = job.dim() as usize;
            Checkpoint {
                state: State::F32 {
                    x: vec![0.0; fit.len() * d],
                    fit,
                },
                job,
                generation,
                history,
                elapsed: Duration::ZERO,
            }
        };
        let spread = job(Job::builder(Function::Sphere, 2).atol(0.5).target(1.0));
        let flat = vec![3.0f32; 8];
        // Converged at a generation looked at; not in between; the target first.
        let c = at(spread.clone(), 8, flat.clone(), None);
        assert!(c.finished());
        assert_eq!(c.result().termination, Termination::Converged);
        let c = at(spread.clone(), 9, flat.clone(), None);
        assert!(!c.finished());
        assert_eq!(c.result().termination, Termination::Stopped);
        let c = at(spread.clone(), 8, vec![0.5; 8], None);
        assert_eq!(c.result().termination, Termination::TargetReached);
        // The limit before the stop.
        let c = at(spread, 100, flat.clone(), None);
        assert_eq!(c.result().termination, Termination::MaxGenerations);
        // Stagnation from the history: no improvement since generation 2.
        let still = job(Job::builder(Function::Sphere, 2).stagnation(6));
        let mut h = vec![9.0, 8.0, 3.0];
        h.resize(9, 3.0);
        let c = at(still.clone(), 8, flat.clone(), Some(h.clone()));
        assert_eq!(c.result().termination, Termination::Stagnated);
        h[8] = 2.0;
        let c = at(still, 8, flat, Some(h));
        assert!(!c.finished());
        assert_eq!(c.result().termination, Termination::Stopped);
    }

    /// A started run of `job` at generation 3 with any population of its size.
    fn started(job: &Job) -> Checkpoint {
        let (np, d) = (job.pop() as usize, job.dim() as usize);
        let state = match job.precision() {
            Precision::F32 => State::F32 {
                x: (0..np * d).map(|v| v as f32 * 0.5 - 1.0).collect(),
                fit: (0..np).map(|v| v as f32 + 0.25).collect(),
            },
            Precision::F64 => State::F64 {
                x: (0..np * d).map(|v| v as f64 * 0.125 - 2.0).collect(),
                fit: (0..np).map(|v| v as f64 + 0.5).collect(),
            },
        };
        Checkpoint {
            job: job.clone(),
            generation: 3,
            state,
            history: job.history().then(|| vec![4.0, 3.0, 2.0, 1.0]),
            elapsed: Duration::from_millis(7),
        }
    }

    /// Pending and started runs in f32 and f64, with and without a history, with bounds
    /// shared, equal, different and differing in the sign of a zero only.
    fn mixed_entries() -> Vec<Entry> {
        let f32_job = Job::builder(Function::Rastrigin, 7)
            .pop(9)
            .generations(50)
            .seed(11)
            .history(true)
            .build()
            .unwrap();
        let f64_job = Job::builder(Function::Sphere, 5)
            .pop(6)
            .generations(20)
            .precision(Precision::F64)
            .domain_box(
                vec![-1.0, -0.0, -3.0, -4.0, -5.0],
                vec![1.0, 2.0, 3.0, 4.0, 5.0],
            )
            .target(1e-6)
            .build()
            .unwrap();
        // The same values in another allocation, and one whose -0 is +0.
        let f64_equal = Job::builder(Function::Sphere, 5)
            .pop(6)
            .generations(20)
            .precision(Precision::F64)
            .domain_box(
                vec![-1.0, -0.0, -3.0, -4.0, -5.0],
                vec![1.0, 2.0, 3.0, 4.0, 5.0],
            )
            .build()
            .unwrap();
        let f64_plus_zero = Job::builder(Function::Sphere, 5)
            .pop(6)
            .generations(20)
            .precision(Precision::F64)
            .domain_box(
                vec![-1.0, 0.0, -3.0, -4.0, -5.0],
                vec![1.0, 2.0, 3.0, 4.0, 5.0],
            )
            .build()
            .unwrap();
        let expr = Job::builder_for(
            crate::job::objective::Objective::expr("sum(x^2) + 1", Some(1.0)).unwrap(),
            3,
        )
        .domain(-2.0, 2.0)
        .pop(8)
        .generations(10)
        .build()
        .unwrap();
        vec![
            Entry::Started(started(&f32_job)),
            Entry::Pending(f32_job.clone().with_stream(1)),
            Entry::Pending(f32_job.clone().with_stream(2)),
            Entry::Started(started(&f32_job.clone().with_stream(3))),
            Entry::Pending(f64_job.clone()),
            Entry::Started(started(&f64_job.clone().with_stream(1))),
            Entry::Pending(f64_equal),
            Entry::Pending(f64_plus_zero),
            Entry::Started(started(&f64_job)),
            Entry::Pending(expr.clone()),
            Entry::Started(started(&expr.with_stream(5))),
        ]
    }

    #[test]
    fn the_size_estimate_is_the_encoded_length() {
        let all = mixed_entries();
        // Every run alone, and every stretch of runs (each run after each other one).
        for a in 0..all.len() {
            for b in a + 1..=all.len() {
                let entries = &all[a..b];
                let bytes = encode(entries).unwrap();
                let size = encoded_size(entries.iter().map(Entry::part)).unwrap();
                assert_eq!(size, bytes.len() as u64, "runs {a}..{b}");
                assert_eq!(decode(&bytes).unwrap(), entries, "runs {a}..{b}");
            }
        }
    }

    #[test]
    fn runs_with_the_same_bounds_store_them_once_and_share_them_when_read() {
        let job = Job::builder(Function::Sphere, 1000)
            .pop(4)
            .generations(10)
            .build()
            .unwrap();
        let entries: Vec<Entry> = (0..10)
            .map(|s| Entry::Pending(job.clone().with_stream(s)))
            .collect();
        let bytes = encode(&entries).unwrap();
        // One copy of 2 × 1000 bounds, not ten.
        assert!(
            bytes.len() < 2 * 1000 * 8 + 10 * 200,
            "{} bytes",
            bytes.len()
        );
        let old = version4(&entries);
        assert!(old.len() > 10 * 2 * 1000 * 8, "{} bytes", old.len());
        for file in [bytes, old] {
            let back = decode(&file).unwrap();
            assert_eq!(back, entries);
            let first = back[0].job().lower().as_ptr();
            assert!(back.iter().all(|e| e.job().lower().as_ptr() == first));
            assert!(
                back.iter()
                    .all(|e| e.job().upper().as_ptr() == back[0].job().upper().as_ptr())
            );
        }
        // A zero of another sign is other bounds: kept bit for bit.
        let all = mixed_entries();
        let back = decode(&encode(&all).unwrap()).unwrap();
        assert_eq!(back[6].job().lower()[1].to_bits(), (-0.0f64).to_bits());
        assert_eq!(back[7].job().lower()[1].to_bits(), 0.0f64.to_bits());
    }

    #[test]
    fn a_file_larger_than_the_memory_is_refused_before_it_is_allocated() {
        let entries = mixed_entries();
        let size = encoded_size(entries.iter().map(Entry::part)).unwrap();
        let room = |limit: u64| {
            move |n: u64| {
                if n > limit {
                    Err(Error::OutOfMemory {
                        memory: "host",
                        needed: n,
                        free: limit,
                    })
                } else {
                    Ok(())
                }
            }
        };
        match encode_within(entries.iter().map(Entry::part), room(size - 1)) {
            Err(Error::OutOfMemory { needed, .. }) => assert_eq!(needed, size),
            other => panic!("not refused: {other:?}"),
        }
        let bytes = encode_within(entries.iter().map(Entry::part), room(size)).unwrap();
        assert_eq!(bytes.len() as u64, size);
    }

    #[test]
    fn version_4_files_are_read_and_bad_shared_bounds_are_refused() {
        let entries = mixed_entries();
        assert_eq!(decode(&version4(&entries)).unwrap(), entries);
        // A first run that says its bounds are the previous run's.
        let job = Job::builder(Function::Sphere, 3).pop(8).build().unwrap();
        let lone = [Entry::Pending(job.clone())];
        let bytes = written_as(&lone, 5, |j| {
            let r = JobRecordV5::of(j, Some(j));
            assert!(r.same_bounds);
            r
        });
        match decode(&bytes) {
            Err(Error::Input { message, .. }) => {
                assert!(
                    message.contains("run 0") && message.contains("first run"),
                    "{message}"
                )
            }
            other => panic!("not refused: {other:?}"),
        }
        // Bounds given and also said to be the previous run's.
        let two = [
            Entry::Pending(job.clone()),
            Entry::Pending(job.with_stream(1)),
        ];
        let bytes = written_as(&two, 5, |j| JobRecordV5 {
            v4: JobRecordV4::of(j),
            same_bounds: j.stream() == 1,
        });
        match decode(&bytes) {
            Err(Error::Input { message, .. }) => {
                assert!(
                    message.contains("run 1") && message.contains("also"),
                    "{message}"
                )
            }
            other => panic!("not refused: {other:?}"),
        }
    }

    #[test]
    fn unknown_variant_bits_are_refused() {
        let job = Job::builder(Function::Sphere, 4).pop(8).build().unwrap();
        let mut record = JobRecordV3::of(&job);
        record.thesis_variant = 1 << 20;
        match record.job() {
            Err(Error::Input { message, .. }) => {
                assert_eq!(message, "unknown thesis variant bits 0x100000")
            }
            other => panic!("not refused: {other:?}"),
        }
    }
}
