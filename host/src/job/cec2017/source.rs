//! Where the CEC 2017 data come from and how their files are read: the organisers' zip
//! archive or a folder of its files ([`DataSource`]), and the numbers of a data file
//! (reals, rows of a matrix, permutations), each error naming the file, the line and
//! what was wrong, never the file's contents.

use super::*;
use std::collections::HashMap;
use std::fs::File;
use std::io::Read;

/// Where the official data files are: the organisers' zip archive, or a folder with the
/// files: directly, in an `input_data` subfolder, or in the `input_data` folder of a
/// subfolder (`CEC17_fast_pow/input_data`, where the archive was unpacked).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DataSource {
    Zip(PathBuf),
    Dir(PathBuf),
}

impl DataSource {
    /// The data at `path`: a folder, or a file read as a zip archive.
    pub fn open(path: &Path) -> Result<DataSource> {
        if path.is_dir() {
            Ok(DataSource::Dir(path.to_path_buf()))
        } else if path.is_file() {
            Ok(DataSource::Zip(path.to_path_buf()))
        } else {
            Err(not_found("the CEC 2017 data", path.display()))
        }
    }

    /// Finds the data: `explicit` when given; else the path in the environment variable
    /// [`DATA_ENV`]; else [`DEFAULT_ARCHIVE`] beside the repository (where the crate was
    /// built from) or beside the working folder, or under the working folder. The error
    /// names every place it looked.
    pub fn locate(explicit: Option<&Path>) -> Result<DataSource> {
        if let Some(p) = explicit {
            return Self::open(p);
        }
        if let Some(v) = std::env::var_os(DATA_ENV).filter(|v| !v.is_empty()) {
            let looked = format!("{} (from {DATA_ENV})", Path::new(&v).display());
            return Self::open(Path::new(&v)).map_err(|_| not_found("the CEC 2017 data", looked));
        }
        let candidates = default_candidates();
        for c in &candidates {
            if c.is_file() {
                return Ok(DataSource::Zip(c.clone()));
            }
        }
        let looked: Vec<String> = candidates.iter().map(|c| c.display().to_string()).collect();
        Err(not_found(
            format!("the CEC 2017 data ({DATA_ENV} is not set)"),
            looked.join(", "),
        ))
    }

    /// The archive's or the folder's path.
    pub fn path(&self) -> &Path {
        match self {
            DataSource::Zip(p) | DataSource::Dir(p) => p,
        }
    }

    /// The bytes of the file named `name` (a bare file name such as `M_5_D10.txt`):
    /// in a zip, the entry with that name (one under `input_data/` first); in a folder,
    /// the first of `name`, `input_data/name`, `S/input_data/name` and `S/name` for each
    /// subfolder `S` that holds an `input_data` folder (in name order), and `../name`.
    pub fn read_file(&self, name: &str) -> Result<Vec<u8>> {
        self.open_reader()?.read(name)
    }

    pub(super) fn open_reader(&self) -> Result<Reader> {
        match self {
            DataSource::Dir(p) => Ok(Reader::Dir(folders(p))),
            DataSource::Zip(p) => {
                let bad = |e: zip::result::ZipError| Error::Input {
                    what: p.display().to_string(),
                    message: format!("not a readable zip archive ({e})"),
                };
                let file = File::open(p)?;
                let archive = zip::ZipArchive::new(file).map_err(bad)?;
                let mut names: HashMap<String, String> = HashMap::new();
                for full in archive.file_names() {
                    let full = full.map_err(bad)?.into_owned();
                    let base = full.rsplit('/').next().unwrap_or(&full).to_string();
                    if base.is_empty() {
                        continue;
                    }
                    let preferred = full.contains("input_data/");
                    match names.get(&base) {
                        Some(old) if old.contains("input_data/") || !preferred => {}
                        _ => {
                            names.insert(base, full);
                        }
                    }
                }
                Ok(Reader::Zip {
                    path: p.clone(),
                    archive,
                    names,
                })
            }
        }
    }
}

/// Data that are not where gpude looked (the message names every place).
fn not_found(what: impl Into<String>, looked: impl std::fmt::Display) -> Error {
    Error::Input {
        what: what.into(),
        message: format!("not found; looked in: {looked}"),
    }
}

fn default_candidates() -> Vec<PathBuf> {
    let mut v = Vec::new();
    // The repository: this crate's folder's parent.
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    v.push(repo.join("..").join(DEFAULT_ARCHIVE));
    if let Ok(cwd) = std::env::current_dir() {
        v.push(cwd.join("..").join(DEFAULT_ARCHIVE));
        v.push(cwd.join(DEFAULT_ARCHIVE));
    }
    let mut seen = Vec::new();
    v.retain(|p| {
        let key = p.canonicalize().unwrap_or_else(|_| p.clone());
        let new = !seen.contains(&key);
        seen.push(key);
        new
    });
    v
}

/// The folders where the files of data folder `dir` may lie, in the order they are
/// looked in: `dir`, `dir/input_data`, then `S/input_data` and `S` for each subfolder
/// `S` of `dir` that holds an `input_data` folder, in name order (the archive unpacks
/// into `CEC17_fast_pow/input_data`), then `dir/..` (the reference code lies beside
/// `input_data`).
fn folders(dir: &Path) -> Vec<PathBuf> {
    let mut v = vec![dir.to_path_buf(), dir.join("input_data")];
    let mut subs: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|p| {
                    p.join("input_data").is_dir()
                        && p.file_name().is_some_and(|n| n != "input_data")
                })
                .collect()
        })
        .unwrap_or_default();
    subs.sort();
    for s in subs {
        v.push(s.join("input_data"));
        v.push(s);
    }
    v.push(dir.join(".."));
    v
}

/// An opened source.
pub(super) enum Reader {
    /// The folders looked in, in order (see [`folders`]).
    Dir(Vec<PathBuf>),
    Zip {
        path: PathBuf,
        archive: zip::ZipArchive<File>,
        names: HashMap<String, String>,
    },
}

impl Reader {
    fn read(&mut self, name: &str) -> Result<Vec<u8>> {
        match self {
            Reader::Dir(folders) => {
                let candidates: Vec<PathBuf> = folders.iter().map(|f| f.join(name)).collect();
                for c in &candidates {
                    if c.is_file() {
                        return Ok(std::fs::read(c)?);
                    }
                }
                Err(not_found(
                    name,
                    candidates
                        .iter()
                        .map(|c| c.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", "),
                ))
            }
            Reader::Zip {
                path,
                archive,
                names,
            } => {
                let full = names.get(name).ok_or_else(|| {
                    not_found(name, format!("the zip archive {}", path.display()))
                })?;
                let mut entry = archive.by_name(full).map_err(|e| Error::Input {
                    what: format!("{full} in {}", path.display()),
                    message: format!("cannot be read ({e})"),
                })?;
                let mut bytes = Vec::new();
                entry.read_to_end(&mut bytes).map_err(|e| Error::Input {
                    what: format!("{full} in {}", path.display()),
                    message: format!("cannot be unpacked ({e})"),
                })?;
                Ok(bytes)
            }
        }
    }

    pub(super) fn describe(&self, name: &str) -> String {
        match self {
            Reader::Dir(folders) => match folders.iter().find(|f| f.join(name).is_file()) {
                Some(f) => format!("{name} in {}", f.display()),
                None => format!("{name} in {}", folders[0].display()),
            },
            Reader::Zip { path, .. } => format!("{name} in {}", path.display()),
        }
    }

    pub(super) fn text(&mut self, name: &str) -> Result<String> {
        let bytes = self.read(name)?;
        String::from_utf8(bytes).map_err(|e| Error::Input {
            what: self.describe(name),
            message: format!(
                "is not text (invalid UTF-8 at byte {})",
                e.utf8_error().valid_up_to()
            ),
        })
    }
}

/// The numbers of a data file, each with its line (from 1).
fn tokens(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .flat_map(|(i, l)| l.split_ascii_whitespace().map(move |t| (i + 1, t)))
}

fn parse_error(what: &str, line: usize, kind: &str) -> Error {
    Error::Input {
        what: format!("{what}, line {line}"),
        message: format!("expected {kind}"),
    }
}

fn short_error(what: &str, have: usize, need: usize, why: &str) -> Error {
    Error::Input {
        what: what.into(),
        message: format!("has {have} numbers where {why} needs {need}"),
    }
}

/// The first `count` reals of `text`.
pub(super) fn reals(text: &str, count: usize, what: &str, why: &str) -> Result<Vec<f64>> {
    let mut v = Vec::with_capacity(count);
    for (line, t) in tokens(text).take(count) {
        let x: f64 = t.parse().map_err(|_| parse_error(what, line, "a number"))?;
        if !x.is_finite() {
            return Err(parse_error(what, line, "a finite number"));
        }
        v.push(x);
    }
    if v.len() < count {
        return Err(short_error(what, v.len(), count, why));
    }
    Ok(v)
}

/// The first `dim` reals of each of the first `rows` non-empty lines of `text`.
pub(super) fn rows(text: &str, rows: usize, dim: usize, what: &str, why: &str) -> Result<Vec<f64>> {
    let mut v = Vec::with_capacity(rows * dim);
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    for r in 0..rows {
        let Some((i, l)) = lines.next() else {
            return Err(Error::Input {
                what: what.into(),
                message: format!("has {r} rows where {why} needs {rows}"),
            });
        };
        let before = v.len();
        for t in l.split_ascii_whitespace().take(dim) {
            let x: f64 = t
                .parse()
                .map_err(|_| parse_error(what, i + 1, "a number"))?;
            if !x.is_finite() {
                return Err(parse_error(what, i + 1, "a finite number"));
            }
            v.push(x);
        }
        if v.len() - before < dim {
            return Err(short_error(
                &format!("{what}, line {}", i + 1),
                v.len() - before,
                dim,
                why,
            ));
        }
    }
    Ok(v)
}

/// `count` permutations of 1..=dim, made zero-based.
pub(super) fn permutations(
    text: &str,
    count: usize,
    dim: usize,
    what: &str,
    why: &str,
) -> Result<Vec<u32>> {
    let mut v = Vec::with_capacity(count * dim);
    let mut seen = vec![false; dim];
    for (line, t) in tokens(text).take(count * dim) {
        let k: usize = t
            .parse()
            .map_err(|_| parse_error(what, line, "a whole number"))?;
        if !(1..=dim).contains(&k) {
            return Err(parse_error(
                what,
                line,
                &format!("an index from 1 to {dim}"),
            ));
        }
        if v.len() % dim == 0 {
            seen.fill(false);
        }
        if std::mem::replace(&mut seen[k - 1], true) {
            return Err(Error::Input {
                what: format!("{what}, line {line}"),
                message: format!("permutation {} repeats an index", v.len() / dim + 1),
            });
        }
        v.push((k - 1) as u32);
    }
    if v.len() < count * dim {
        return Err(short_error(what, v.len(), count * dim, why));
    }
    Ok(v)
}
