//! The CEC 2017 bound-constrained suite on the host: the functions' names, the official
//! data files, and evaluation on the CPU with the device maths
//! ([`gpude_device::cec2017`], which documents the functions and where the organisers'
//! report and reference code differ).
//!
//! The data (shift vectors, rotation matrices, permutations) are not part of gpude: they
//! are read from the organisers' distribution, either the zip archive
//! `CEC17_fast_pow-C++.zip` itself or a folder with its files unpacked: the folder the
//! archive was unpacked into, its `CEC17_fast_pow` folder, or the `input_data` folder
//! itself. [`DataSource::locate`] finds it.
//!
//! The official data cover D = 2, 10, 20, 30, 50 and 100, but not every function at
//! every dimension: [`FunctionId::dimensions`] lists where each one is defined.
//!
//! ```no_run
//! use gpude_host::cec2017::{DataSource, FunctionId, Suite};
//! let suite = Suite::load(&DataSource::locate(None)?, 30)?;
//! let f5: FunctionId = "cec2017-f5".parse()?;
//! let x = vec![0.0; 30];
//! println!("{} = {}", f5, suite.evaluate(f5, &x));
//! # Ok::<(), gpude_host::Error>(())
//! ```

use crate::error::{Error, Result};
use gpude_device::cec2017 as dev;
use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

pub use dev::{BOUND, COUNT, DIMENSIONS};

mod source;
pub use source::DataSource;
use source::{Reader, permutations, reals, rows};

/// Every dimension of the official data: some functions are defined at a part of them
/// only (see [`FunctionId::dimensions`]); [`DIMENSIONS`] are those of every function.
pub const ALL_DIMENSIONS: [usize; 6] = [2, 10, 20, 30, 50, 100];

/// The environment variable that names the data (a zip archive or a folder).
pub const DATA_ENV: &str = "GPUDE_CEC2017_DATA";

/// Where the organisers' archive lies by default, relative to the folder that holds the
/// repository (the repository's parent).
pub const DEFAULT_ARCHIVE: &str = "shared/reference/cec2017/CEC17_fast_pow-C++.zip";

/// The prefix of the functions' names: `cec2017-f1` … `cec2017-f30`.
pub const NAME_PREFIX: &str = "cec2017-f";

/// One function of the suite, F1 to F30.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FunctionId(u32);

impl FunctionId {
    /// F_n, for n in 1..=30.
    pub fn new(n: u32) -> Result<FunctionId> {
        if (1..=COUNT).contains(&n) {
            Ok(FunctionId(n))
        } else {
            Err(Error::invalid("CEC 2017 function number", n, "1 to 30"))
        }
    }

    /// All thirty, F1 first.
    pub fn all() -> impl Iterator<Item = FunctionId> {
        (1..=COUNT).map(FunctionId)
    }

    /// The 29 functions of the competition: all but F2, which the organisers excluded.
    pub fn competition() -> impl Iterator<Item = FunctionId> {
        Self::all().filter(|f| f.in_competition())
    }

    /// Parses `cec2017-fN` (case-insensitive, N from 1 to 30).
    pub fn parse(s: &str) -> Result<FunctionId> {
        let unknown = || Error::UnknownName {
            kind: "CEC 2017 function",
            name: s.into(),
            known: format!("{NAME_PREFIX}1 to {NAME_PREFIX}30"),
        };
        let t = s.trim().to_ascii_lowercase();
        let digits = t.strip_prefix(NAME_PREFIX).ok_or_else(unknown)?;
        if digits.is_empty()
            || digits.starts_with('0')
            || !digits.bytes().all(|b| b.is_ascii_digit())
        {
            return Err(unknown());
        }
        digits
            .parse()
            .ok()
            .and_then(|n| Self::new(n).ok())
            .ok_or_else(unknown)
    }

    /// The number n of F_n.
    pub fn number(self) -> u32 {
        self.0
    }

    /// `cec2017-fN`.
    pub fn name(self) -> String {
        format!("{NAME_PREFIX}{}", self.0)
    }

    /// The optimum value F_n* = 100·n.
    pub fn f_star(self) -> f64 {
        dev::f_star(self.0)
    }

    /// Whether the function was part of the competition (all but F2).
    pub fn in_competition(self) -> bool {
        self.0 != 2
    }

    /// The function's group: unimodal (F1–F3), simple multimodal (F4–F10), hybrid
    /// (F11–F20) or composition (F21–F30).
    pub fn group(self) -> &'static str {
        match self.0 {
            1..=3 => "unimodal",
            4..=10 => "simple multimodal",
            11..=20 => "hybrid",
            _ => "composition",
        }
    }

    /// The function's title, as the technical report names it (with the reference's
    /// function where they differ).
    pub fn title(self) -> &'static str {
        const TITLES: [&str; 30] = [
            "Shifted and Rotated Bent Cigar",
            "Shifted and Rotated Sum of Different Power",
            "Shifted and Rotated Zakharov",
            "Shifted and Rotated Rosenbrock",
            "Shifted and Rotated Rastrigin",
            "Shifted Schaffer F7",
            "Shifted and Rotated Lunacek Bi-Rastrigin",
            "Shifted and Rotated Non-Continuous Rastrigin",
            "Shifted and Rotated Levy",
            "Shifted and Rotated Schwefel",
            "Hybrid Function 1 (N = 3)",
            "Hybrid Function 2 (N = 3)",
            "Hybrid Function 3 (N = 3)",
            "Hybrid Function 4 (N = 4)",
            "Hybrid Function 5 (N = 4)",
            "Hybrid Function 6 (N = 4)",
            "Hybrid Function 7 (N = 5)",
            "Hybrid Function 8 (N = 5)",
            "Hybrid Function 9 (N = 5)",
            "Hybrid Function 10 (N = 6)",
            "Composition Function 1 (N = 3)",
            "Composition Function 2 (N = 3)",
            "Composition Function 3 (N = 4)",
            "Composition Function 4 (N = 4)",
            "Composition Function 5 (N = 5)",
            "Composition Function 6 (N = 5)",
            "Composition Function 7 (N = 6)",
            "Composition Function 8 (N = 6)",
            "Composition Function 9 (N = 3)",
            "Composition Function 10 (N = 3)",
        ];
        TITLES[self.0 as usize - 1]
    }

    /// How many shift vectors and rotation matrices the function uses.
    pub fn components(self) -> usize {
        dev::components(self.0)
    }

    /// How many permutations the function uses.
    pub fn shuffles(self) -> usize {
        dev::shuffles(self.0)
    }

    /// The dimensions at which the organisers' code computes F_n with their data:
    /// 10, 30, 50 and 100 for every function; 20 for all but F11–F19, F29 and F30
    /// (whose D = 20 files are not in the data); 2 for F1–F10 and F23–F28 (the code
    /// refuses F17–F22, F29 and F30 at D = 2, and F11–F16 have no D = 2 files).
    pub fn dimensions(self) -> &'static [usize] {
        match self.0 {
            1..=10 | 23..=28 => &ALL_DIMENSIONS,
            20..=22 => &[10, 20, 30, 50, 100],
            _ => &DIMENSIONS,
        }
    }

    /// [`FunctionId::dimensions`] in words: `2, 10, 20, 30, 50 or 100`.
    pub fn dimensions_text(self) -> String {
        let d: Vec<String> = self.dimensions().iter().map(|d| d.to_string()).collect();
        match d.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
            _ => d.join(""),
        }
    }

    /// Refuses a dimension at which F_n is not defined (see
    /// [`FunctionId::dimensions`]), naming the function and the dimensions it has.
    pub fn check_dim(self, dim: usize) -> Result<()> {
        if self.dimensions().contains(&dim) {
            Ok(())
        } else {
            Err(Error::invalid(
                "CEC 2017 dimension",
                dim,
                format!(
                    "{} for {self} (the dimensions of the official data and code)",
                    self.dimensions_text()
                ),
            ))
        }
    }

    /// The names of the data files the function needs at dimension `dim`: shift, matrix
    /// and, for the hybrid functions and F29–F30, the permutation.
    pub fn file_names(self, dim: usize) -> Vec<String> {
        let n = self.0;
        let mut v = vec![format!("shift_data_{n}.txt"), format!("M_{n}_D{dim}.txt")];
        if self.shuffles() > 0 {
            v.push(format!("shuffle_data_{n}_D{dim}.txt"));
        }
        v
    }
}

impl fmt::Display for FunctionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{NAME_PREFIX}{}", self.0)
    }
}

impl FromStr for FunctionId {
    type Err = Error;
    fn from_str(s: &str) -> Result<FunctionId> {
        FunctionId::parse(s)
    }
}

/// Whether `name` is a CEC 2017 function's name (`cec2017-…`), valid or not: lets a
/// caller that also knows other functions pick the parser.
pub fn is_cec2017_name(name: &str) -> bool {
    name.trim().to_ascii_lowercase().starts_with("cec2017-")
}

/// Refuses a dimension at which some function is not defined (a whole suite is loaded at
/// the dimensions of every function only).
fn check_suite_dim(dim: usize) -> Result<()> {
    if DIMENSIONS.contains(&dim) {
        Ok(())
    } else {
        Err(Error::invalid(
            "CEC 2017 dimension of the whole suite",
            dim,
            "10, 30, 50 or 100 (the dimensions at which the official data hold every function)",
        ))
    }
}

/// One function's official data at one dimension, ready to evaluate.
#[derive(Clone, Debug)]
pub struct FunctionData {
    id: FunctionId,
    dim: usize,
    shift: Vec<f64>,
    rotation: Vec<f64>,
    shuffle: Vec<u32>,
}

impl FunctionData {
    /// Reads F_n's data at dimension `dim` (one of [`FunctionId::dimensions`]).
    pub fn load(source: &DataSource, id: FunctionId, dim: usize) -> Result<FunctionData> {
        id.check_dim(dim)?;
        let mut reader = source.open_reader()?;
        Self::read(&mut reader, id, dim)
    }

    fn read(reader: &mut Reader, id: FunctionId, dim: usize) -> Result<FunctionData> {
        let n = id.number();
        let k = id.components();
        let why = format!("{id} at D = {dim}");
        let names = id.file_names(dim);
        let shift = rows(
            &reader.text(&names[0])?,
            k,
            dim,
            &reader.describe(&names[0]),
            &why,
        )?;
        let rotation = reals(
            &reader.text(&names[1])?,
            k * dim * dim,
            &reader.describe(&names[1]),
            &why,
        )?;
        let shuffle = if id.shuffles() > 0 {
            permutations(
                &reader.text(&names[2])?,
                dev::shuffles(n),
                dim,
                &reader.describe(&names[2]),
                &why,
            )?
        } else {
            Vec::new()
        };
        Ok(FunctionData {
            id,
            dim,
            shift,
            rotation,
            shuffle,
        })
    }

    /// Builds the data from values in memory (the layout of
    /// [`gpude_device::cec2017::Data`], permutations zero-based).
    pub fn from_parts(
        id: FunctionId,
        dim: usize,
        shift: Vec<f64>,
        rotation: Vec<f64>,
        shuffle: Vec<u32>,
    ) -> Result<FunctionData> {
        let k = id.components();
        let want = |name: &'static str, have: usize, need: usize| {
            if have == need {
                Ok(())
            } else {
                Err(Error::invalid(
                    name,
                    have,
                    format!("{need} values for {id} at D = {dim}"),
                ))
            }
        };
        if dim < 2 {
            return Err(Error::invalid("CEC 2017 dimension", dim, "at least 2"));
        }
        want("shift length", shift.len(), k * dim)?;
        want("rotation length", rotation.len(), k * dim * dim)?;
        want("shuffle length", shuffle.len(), id.shuffles() * dim)?;
        for p in shuffle.chunks(dim) {
            let mut seen = vec![false; dim];
            for &i in p {
                if (i as usize) >= dim || std::mem::replace(&mut seen[i as usize], true) {
                    return Err(Error::invalid(
                        "shuffle",
                        i,
                        format!("permutations of 0..{dim}"),
                    ));
                }
            }
        }
        Ok(FunctionData {
            id,
            dim,
            shift,
            rotation,
            shuffle,
        })
    }

    pub fn id(&self) -> FunctionId {
        self.id
    }

    pub fn dim(&self) -> usize {
        self.dim
    }

    /// The global optimum's position `o` (the first shift vector).
    pub fn optimum(&self) -> &[f64] {
        &self.shift[..self.dim]
    }

    /// The shift vectors, one per component.
    pub fn shift(&self) -> &[f64] {
        &self.shift
    }

    /// The rotation matrices, one per component, row-major.
    pub fn rotation(&self) -> &[f64] {
        &self.rotation
    }

    /// The permutations, zero-based.
    pub fn shuffle(&self) -> &[u32] {
        &self.shuffle
    }

    /// The data as the device maths take them.
    pub fn data(&self) -> dev::Data<'_, f64> {
        dev::Data {
            shift: &self.shift,
            rotation: &self.rotation,
            shuffle: &self.shuffle,
        }
    }

    /// F_n(x), optimum value included. Panics when `x.len()` is not the dimension.
    pub fn evaluate(&self, x: &[f64]) -> f64 {
        let mut scratch = vec![0.0; dev::scratch_len(self.dim)];
        self.evaluate_with(x, &mut scratch)
    }

    /// [`evaluate`](Self::evaluate) with a caller's scratch buffer of at least
    /// [`gpude_device::cec2017::scratch_len`]`(dim)` values (no allocation).
    pub fn evaluate_with(&self, x: &[f64], scratch: &mut [f64]) -> f64 {
        assert_eq!(
            x.len(),
            self.dim,
            "{} was loaded for D = {}",
            self.id,
            self.dim
        );
        dev::evaluate(self.id.number(), x, &self.data(), scratch)
    }

    /// F_n(x) in `f32`, the data rounded to `f32` (allocates; for checks and tools).
    pub fn evaluate_f32(&self, x: &[f32]) -> f32 {
        assert_eq!(x.len(), self.dim);
        let shift: Vec<f32> = self.shift.iter().map(|&v| v as f32).collect();
        let rotation: Vec<f32> = self.rotation.iter().map(|&v| v as f32).collect();
        let data = dev::Data {
            shift: &shift,
            rotation: &rotation,
            shuffle: &self.shuffle,
        };
        let mut scratch = vec![0.0f32; dev::scratch_len(self.dim)];
        dev::evaluate(self.id.number(), x, &data, &mut scratch)
    }
}

/// All thirty functions' data at one dimension.
#[derive(Clone, Debug)]
pub struct Suite {
    dim: usize,
    functions: Vec<FunctionData>,
}

impl Suite {
    /// Reads every function's data at dimension `dim` (10, 30, 50 or 100: where the
    /// official data hold all thirty).
    pub fn load(source: &DataSource, dim: usize) -> Result<Suite> {
        check_suite_dim(dim)?;
        let mut reader = source.open_reader()?;
        let functions = FunctionId::all()
            .map(|id| FunctionData::read(&mut reader, id, dim))
            .collect::<Result<Vec<_>>>()?;
        Ok(Suite { dim, functions })
    }

    pub fn dim(&self) -> usize {
        self.dim
    }

    /// One function's data.
    pub fn function(&self, id: FunctionId) -> &FunctionData {
        &self.functions[id.number() as usize - 1]
    }

    /// F_n(x), optimum value included. Panics when `x.len()` is not the dimension.
    pub fn evaluate(&self, id: FunctionId, x: &[f64]) -> f64 {
        self.function(id).evaluate(x)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_bad_names_are_refused() {
        for f in FunctionId::all() {
            assert_eq!(FunctionId::parse(&f.name()).unwrap(), f);
            assert_eq!(f.to_string().parse::<FunctionId>().unwrap(), f);
        }
        assert_eq!(FunctionId::parse(" CEC2017-F5 ").unwrap().number(), 5);
        for bad in [
            "cec2017-f0",
            "cec2017-f31",
            "cec2017-f",
            "cec2017-f05",
            "cec2017-f+5",
            "cec2017-5",
            "f5",
            "cec2014-f5",
        ] {
            let e = FunctionId::parse(bad).unwrap_err().to_string();
            assert!(e.contains("cec2017-f1 to cec2017-f30"), "{bad}: {e}");
        }
        assert!(is_cec2017_name("cec2017-f99"));
        assert!(!is_cec2017_name("sphere"));
        assert_eq!(FunctionId::competition().count(), 29);
        assert_eq!(FunctionId::new(30).unwrap().f_star(), 3000.0);
        assert_eq!(FunctionId::new(11).unwrap().group(), "hybrid");
    }

    fn temp_dir(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("gpude-cec2017-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join("input_data")).unwrap();
        d
    }

    /// Writes F1's files at D = 10: shift (1, 2, …, 10) on a row of 12 numbers, and the
    /// identity matrix.
    fn write_f1(dir: &Path) {
        let shift: Vec<String> = (1..=12).map(|i| format!("{i}.0e+00")).collect();
        std::fs::write(
            dir.join("input_data/shift_data_1.txt"),
            shift.join("  ") + "\n",
        )
        .unwrap();
        let mut m = String::new();
        for i in 0..10 {
            for j in 0..10 {
                m += if i == j { " 1 " } else { " 0 " };
            }
            m += "\n";
        }
        std::fs::write(dir.join("input_data/M_1_D10.txt"), m).unwrap();
    }

    #[test]
    fn reads_a_folder_and_evaluates() {
        let dir = temp_dir("folder");
        write_f1(&dir);
        let src = DataSource::open(&dir).unwrap();
        let f = FunctionData::load(&src, FunctionId::new(1).unwrap(), 10).unwrap();
        assert_eq!(
            f.optimum(),
            &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0]
        );
        assert_eq!(f.evaluate(f.optimum()), 100.0);
        // x = o + (1, 1, 0, …): bent cigar 1 + 10⁶·1, plus F1* = 100.
        let mut x = f.optimum().to_vec();
        x[0] += 1.0;
        x[1] += 1.0;
        assert_eq!(f.evaluate(&x), 1_000_101.0);
        assert_eq!(
            f.evaluate_f32(&x.iter().map(|&v| v as f32).collect::<Vec<_>>()),
            1_000_101.0
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn reads_the_folder_an_archive_was_unpacked_into() {
        // root/CEC17_fast_pow/input_data/…, as `unzip` leaves the organisers' archive.
        let root =
            std::env::temp_dir().join(format!("gpude-cec2017-unpacked-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let top = root.join("CEC17_fast_pow");
        std::fs::create_dir_all(top.join("input_data")).unwrap();
        write_f1(&top);
        // Another folder first in name order, without the data.
        std::fs::create_dir_all(root.join("A_notes/input_data")).unwrap();
        let f1 = FunctionId::new(1).unwrap();
        for place in [root.clone(), top.clone(), top.join("input_data")] {
            let src = DataSource::open(&place).unwrap();
            let f = FunctionData::load(&src, f1, 10).unwrap();
            assert_eq!(f.evaluate(f.optimum()), 100.0, "{}", place.display());
        }
        // A bad file is named where it lies.
        std::fs::write(top.join("input_data/M_1_D10.txt"), "1 x\n").unwrap();
        let e = FunctionData::load(&DataSource::open(&root).unwrap(), f1, 10)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("CEC17_fast_pow/input_data") && e.contains("line 1"),
            "{e}"
        );
        // A missing file names every place looked.
        let e = FunctionData::load(
            &DataSource::open(&root).unwrap(),
            FunctionId::new(4).unwrap(),
            10,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("A_notes/input_data/shift_data_4.txt"), "{e}");
        assert!(
            e.contains("CEC17_fast_pow/input_data/shift_data_4.txt"),
            "{e}"
        );
        let _ = std::fs::remove_dir_all(&root);
    }

    #[test]
    fn each_function_has_its_dimensions() {
        let dims = |n: u32| FunctionId::new(n).unwrap().dimensions().to_vec();
        for n in (1..=10).chain(23..=28) {
            assert_eq!(dims(n), [2, 10, 20, 30, 50, 100], "F{n}");
        }
        for n in 20..=22 {
            assert_eq!(dims(n), [10, 20, 30, 50, 100], "F{n}");
        }
        for n in (11..=19).chain(29..=30) {
            assert_eq!(dims(n), [10, 30, 50, 100], "F{n}");
        }
        assert_eq!(
            FunctionId::new(1).unwrap().dimensions_text(),
            "2, 10, 20, 30, 50 or 100"
        );
        assert!(FunctionId::new(20).unwrap().check_dim(20).is_ok());
        let e = FunctionId::new(29)
            .unwrap()
            .check_dim(20)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("20") && e.contains("10, 30, 50 or 100 for cec2017-f29"),
            "{e}"
        );
    }

    #[test]
    fn bad_files_are_named_with_their_line_and_never_echoed() {
        let dir = temp_dir("bad");
        write_f1(&dir);
        let src = DataSource::open(&dir).unwrap();
        let f1 = FunctionId::new(1).unwrap();
        // A non-number on line 3 of the matrix.
        let m = std::fs::read_to_string(dir.join("input_data/M_1_D10.txt")).unwrap();
        let mut lines: Vec<&str> = m.lines().collect();
        lines[2] = " 0 0 SECRETTOKEN 0 0 0 0 0 0 0";
        std::fs::write(dir.join("input_data/M_1_D10.txt"), lines.join("\n")).unwrap();
        let e = FunctionData::load(&src, f1, 10).unwrap_err().to_string();
        assert!(e.contains("M_1_D10.txt") && e.contains("line 3"), "{e}");
        assert!(!e.contains("SECRETTOKEN"), "{e}");
        // Too short a shift row.
        write_f1(&dir);
        std::fs::write(dir.join("input_data/shift_data_1.txt"), "1 2 3\n").unwrap();
        let e = FunctionData::load(&src, f1, 10).unwrap_err().to_string();
        assert!(
            e.contains("shift_data_1.txt") && e.contains("line 1"),
            "{e}"
        );
        assert!(e.contains("has 3 numbers") && e.contains("needs 10"), "{e}");
        // A missing file names where it looked.
        let e = FunctionData::load(&src, FunctionId::new(4).unwrap(), 10)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("shift_data_4.txt") && e.contains("input_data"),
            "{e}"
        );
        // A permutation with a repeated index.
        std::fs::write(dir.join("input_data/shift_data_11.txt"), "0 ".repeat(10)).unwrap();
        std::fs::write(dir.join("input_data/M_11_D10.txt"), "0 ".repeat(100)).unwrap();
        std::fs::write(
            dir.join("input_data/shuffle_data_11_D10.txt"),
            "1 2 3 4 5\n6 7 8 9 9\n",
        )
        .unwrap();
        let e = FunctionData::load(&src, FunctionId::new(11).unwrap(), 10)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("shuffle_data_11_D10.txt") && e.contains("line 2") && e.contains("repeats"),
            "{e}"
        );
        // Unsupported dimensions are refused before any file is read, with the
        // function's own dimensions.
        let e = FunctionData::load(&src, f1, 7).unwrap_err().to_string();
        assert!(e.contains("2, 10, 20, 30, 50 or 100 for cec2017-f1"), "{e}");
        let f11 = FunctionId::new(11).unwrap();
        let e = FunctionData::load(&src, f11, 20).unwrap_err().to_string();
        assert!(
            e.contains("20") && e.contains("10, 30, 50 or 100 for cec2017-f11"),
            "{e}"
        );
        let f21 = FunctionId::new(21).unwrap();
        let e = FunctionData::load(&src, f21, 2).unwrap_err().to_string();
        assert!(e.contains("10, 20, 30, 50 or 100 for cec2017-f21"), "{e}");
        let e = Suite::load(&src, 20).unwrap_err().to_string();
        assert!(e.contains("10, 30, 50 or 100"), "{e}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn missing_data_names_every_place_looked() {
        let e = DataSource::open(Path::new("/nonexistent/cec2017"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("/nonexistent/cec2017"), "{e}");
        let e = DataSource::locate(Some(Path::new("/nonexistent/x.zip")))
            .unwrap_err()
            .to_string();
        assert!(e.contains("/nonexistent/x.zip"), "{e}");
    }

    #[test]
    fn from_parts_checks_the_layout() {
        let f11 = FunctionId::new(11).unwrap();
        let ok =
            FunctionData::from_parts(f11, 10, vec![0.0; 10], vec![0.0; 100], (0..10).collect());
        assert!(ok.is_ok());
        let bad = FunctionData::from_parts(f11, 10, vec![0.0; 10], vec![0.0; 100], vec![0; 10]);
        assert!(bad.unwrap_err().to_string().contains("permutations"));
        let bad =
            FunctionData::from_parts(f11, 10, vec![0.0; 9], vec![0.0; 100], (0..10).collect());
        assert!(bad.unwrap_err().to_string().contains("shift length"));
    }
}
