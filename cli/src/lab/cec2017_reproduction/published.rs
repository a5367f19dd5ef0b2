//! The published results: mean ± sd tables and per-run final errors.

use super::REFERENCE_DIR;
use crate::CliError;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The file of the mean ± sd tables.
pub const MARKDOWN: &str = "cec2017-published.md";
/// The file of the per-run final errors.
pub const CSV: &str = "cec2017-runs.csv";

/// (algorithm, D, function number).
pub type Key = (String, u32, u32);

/// Mean and sample standard deviation of the final errors.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Summary {
    pub mean: f64,
    pub sd: f64,
}

/// Everything read from the reference folder.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Published {
    pub summaries: BTreeMap<Key, Summary>,
    pub runs: BTreeMap<Key, Vec<f64>>,
}

impl Published {
    pub fn summary(&self, algorithm: &str, dim: u32, f: u32) -> Option<Summary> {
        self.summaries.get(&(algorithm.into(), dim, f)).copied()
    }
    pub fn runs(&self, algorithm: &str, dim: u32, f: u32) -> Option<&[f64]> {
        self.runs
            .get(&(algorithm.into(), dim, f))
            .map(Vec::as_slice)
    }
}

/// `F12` → 12.
fn function_number(s: &str) -> Option<u32> {
    s.trim()
        .strip_prefix('F')?
        .parse()
        .ok()
        .filter(|n| (1..=30).contains(n))
}

/// `1.76 ± 0.76` → (1.76, 0.76); a footnote mark after the number (`100 ± 1e-13 (a)`)
/// is left out.
fn mean_sd(cell: &str) -> Option<Summary> {
    let (m, s) = cell.split_once('±')?;
    let s = match s.trim().split_once('(') {
        Some((number, mark)) if mark.ends_with(')') => number,
        _ => s,
    };
    let (mean, sd) = (m.trim().parse::<f64>().ok()?, s.trim().parse::<f64>().ok()?);
    (mean.is_finite() && sd.is_finite() && mean >= 0.0 && sd >= 0.0).then_some(Summary { mean, sd })
}

fn cells(line: &str) -> Vec<&str> {
    let t = line.trim();
    let t = t.strip_prefix('|').unwrap_or(t);
    let t = t.strip_suffix('|').unwrap_or(t);
    t.split('|').map(str::trim).collect()
}

/// Reads the tables of `cec2017-published.md`: under each heading `### D = <n> …`, a
/// table whose header is `| F | Function | <algorithm> | … |` and whose rows are
/// `| F<k> | <name> | <mean> ± <sd> | … |`. Errors name the line.
pub fn parse_markdown(text: &str) -> Result<BTreeMap<Key, Summary>, String> {
    let mut out = BTreeMap::new();
    let mut dim: Option<u32> = None;
    let mut header: Option<Vec<String>> = None;
    for (k, line) in text.lines().enumerate() {
        let at = |what: &str| format!("line {}: {what}", k + 1);
        let t = line.trim();
        if let Some(rest) = t.strip_prefix("### D = ") {
            let n: String = rest.chars().take_while(char::is_ascii_digit).collect();
            dim = Some(n.parse().map_err(|_| at("no dimension after \"D = \""))?);
            header = None;
            continue;
        }
        if t.starts_with('#') {
            dim = None;
            header = None;
            continue;
        }
        let Some(d) = dim else { continue };
        if !t.starts_with('|') {
            header = None;
            continue;
        }
        let c = cells(t);
        match &header {
            None => {
                if c.len() < 3 || c[0] != "F" {
                    return Err(at("a table header | F | Function | … | was expected"));
                }
                header = Some(c.iter().map(|s| s.to_string()).collect());
            }
            Some(h) => {
                if c.iter().all(|s| s.chars().all(|ch| ch == '-' || ch == ':')) {
                    continue;
                }
                if c.len() != h.len() {
                    return Err(at(&format!(
                        "{} cells where the header has {}",
                        c.len(),
                        h.len()
                    )));
                }
                let f = function_number(c[0])
                    .ok_or_else(|| at(&format!("{:?} is not a function F1 … F30", c[0])))?;
                for (alg, cell) in h.iter().zip(&c).skip(2) {
                    let s = mean_sd(cell)
                        .ok_or_else(|| at(&format!("{cell:?} is not \"mean ± sd\"")))?;
                    if out.insert((alg.clone(), d, f), s).is_some() {
                        return Err(at(&format!("F{f}, D = {d}, {alg} appears twice")));
                    }
                }
            }
        }
    }
    if out.is_empty() {
        return Err("no table under a \"### D = …\" heading".into());
    }
    Ok(out)
}

/// Reads `cec2017-runs.csv`: `#` comment lines, the header `algorithm,function,dim,
/// run1,…`, then one row per algorithm, function (`F<k>`) and D with the final errors.
/// Every row must hold as many runs as the header names.
pub fn parse_csv(text: &str) -> Result<BTreeMap<Key, Vec<f64>>, String> {
    let mut out = BTreeMap::new();
    let mut runs: Option<usize> = None;
    for (k, line) in text.lines().enumerate() {
        let at = |what: &str| format!("line {}: {what}", k + 1);
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = t.split(',').map(str::trim).collect();
        let Some(n) = runs else {
            if fields.len() < 4 || fields[..3] != ["algorithm", "function", "dim"] {
                return Err(at("the header algorithm,function,dim,run1,… was expected"));
            }
            runs = Some(fields.len() - 3);
            continue;
        };
        if fields.len() != n + 3 {
            return Err(at(&format!(
                "{} runs where the header names {n}",
                fields.len().saturating_sub(3)
            )));
        }
        let f = function_number(fields[1])
            .ok_or_else(|| at(&format!("{:?} is not a function F1 … F30", fields[1])))?;
        let d: u32 = fields[2]
            .parse()
            .map_err(|_| at(&format!("{:?} is not a dimension", fields[2])))?;
        let errors = fields[3..]
            .iter()
            .map(|v| v.parse::<f64>().ok().filter(|e| e.is_finite() && *e >= 0.0))
            .collect::<Option<Vec<f64>>>()
            .ok_or_else(|| at("a final error is not a non-negative number"))?;
        if out.insert((fields[0].to_string(), d, f), errors).is_some() {
            return Err(at(&format!("{}, F{f}, D = {d} appears twice", fields[0])));
        }
    }
    if out.is_empty() {
        return Err("no runs".into());
    }
    Ok(out)
}

/// Reads both files from the reference folder.
pub fn load(dir: &std::path::Path) -> Result<Published, String> {
    let read = |name: &str| {
        let p = dir.join(name);
        std::fs::read_to_string(&p).map_err(|e| format!("reading {}: {e}", p.display()))
    };
    let md = read(MARKDOWN)?;
    let csv = read(CSV)?;
    Ok(Published {
        summaries: parse_markdown(&md).map_err(|e| format!("{MARKDOWN}: {e}"))?,
        runs: parse_csv(&csv).map_err(|e| format!("{CSV}: {e}"))?,
    })
}
/// The reference folder: `explicit` when given, else `shared/reference` beside the
/// repository (where the binary was built from) or beside or under the working folder.
/// The error names every place looked at.
pub fn locate_reference(explicit: Option<&Path>) -> crate::Result<PathBuf> {
    let mut candidates = Vec::new();
    match explicit {
        Some(p) => candidates.push(p.to_path_buf()),
        None => {
            let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
            candidates.push(repo.join("..").join(REFERENCE_DIR));
            if let Ok(cwd) = std::env::current_dir() {
                candidates.push(cwd.join("..").join(REFERENCE_DIR));
                candidates.push(cwd.join(REFERENCE_DIR));
            }
        }
    }
    if let Some(found) = candidates.iter().find(|c| c.join(MARKDOWN).is_file()) {
        return Ok(found.clone());
    }
    let looked: Vec<String> = candidates.iter().map(|c| c.display().to_string()).collect();
    Err(CliError::usage(format!(
        "the published CEC 2017 results ({} and {}) are not in {}: give the reference folder with --reference",
        MARKDOWN,
        CSV,
        looked.join(", ")
    )))
}

#[cfg(test)]
mod tests {
    use super::super::{DIMS, REFERENCE_DIR, REQUIRE_ENV};
    use super::*;
    use crate::stats;
    use gpude::cec2017::FunctionId;

    const MD: &str = "# Title\n\n## Tables\n\n### D = 10 (MaxFES = 100,000)\n\n\
| F | Function | jSO | LSHADE-cnEpSin |\n|---|---|---|---|\n\
| F1 | Bent Cigar | 0 ± 0 | 0 ± 0 |\n\
| F22 | Composition 2 | 100 ± 0 | 100 ± 1e-13 (a) |\n\
| F30 | Composition 10 | 395 ± 0.0449 | 1.76e+04 ± 8.61e+04 |\n\n\
### D = 30 (MaxFES = 300,000)\n\n| F | Function | jSO | LSHADE-cnEpSin |\n|---|---|---|---|\n\
| F6 | Schaffer | 6.04e-09 ± 2.71e-08 | 0 ± 0 |\n\n## Other\n\n| not | a | table |\n";

    fn get_sd(t: &BTreeMap<Key, Summary>, a: &str, d: u32, f: u32) -> f64 {
        t[&(a.to_string(), d, f)].sd
    }

    #[test]
    fn markdown_tables_are_read_per_dimension_algorithm_and_function() {
        let t = parse_markdown(MD).expect("parses");
        assert_eq!(t.len(), 8);
        assert_eq!(
            get_sd(&t, "LSHADE-cnEpSin", 10, 22),
            1e-13,
            "the footnote mark is left out"
        );
        let get = |a: &str, d: u32, f: u32| t[&(a.to_string(), d, f)];
        assert_eq!(get("jSO", 10, 30).mean, 395.0);
        assert_eq!(get("jSO", 10, 30).sd, 0.0449);
        assert_eq!(get("LSHADE-cnEpSin", 10, 30).mean, 1.76e4);
        assert_eq!(get("LSHADE-cnEpSin", 10, 30).sd, 8.61e4);
        assert_eq!(get("jSO", 30, 6).mean, 6.04e-9);
        assert_eq!(get("jSO", 10, 1).sd, 0.0);
        assert!(!t.contains_key(&("jSO".to_string(), 30, 1)));
    }

    #[test]
    fn malformed_markdown_cells_are_refused_with_the_line() {
        let bad = MD.replace("395 ± 0.0449", "395");
        let e = parse_markdown(&bad).expect_err("no ±");
        assert!(e.starts_with("line 11:") && e.contains("mean ± sd"), "{e}");
        let bad = MD.replace("1e-13 (a)", "1e-13 (a");
        assert!(parse_markdown(&bad).is_err(), "an unclosed mark");
        let bad = MD.replace("| F30 |", "| X30 |");
        assert!(parse_markdown(&bad).expect_err("no F").contains("X30"));
        let bad = MD.replace(
            "| F1 | Bent Cigar | 0 ± 0 | 0 ± 0 |",
            "| F1 | Bent Cigar | 0 ± 0 |",
        );
        assert!(
            parse_markdown(&bad)
                .expect_err("short")
                .contains("3 cells where the header has 4")
        );
        assert!(parse_markdown("# nothing\n").is_err());
    }

    const CSV: &str = "# comment\nalgorithm,function,dim,run1,run2,run3\n\
jSO,F1,10,0.0,0.0,0.0\njSO,F5,10,1.5,2.0,3.5e-1\nEBOwithCMAR,F5,30,0.0,1.0,2.0\n";

    #[test]
    fn csv_runs_are_read_per_algorithm_function_and_dimension() {
        let r = parse_csv(CSV).expect("parses");
        assert_eq!(r.len(), 3);
        assert_eq!(r[&("jSO".to_string(), 10, 5)], vec![1.5, 2.0, 0.35]);
        assert_eq!(r[&("EBOwithCMAR".to_string(), 30, 5)], vec![0.0, 1.0, 2.0]);
        let e = parse_csv(&CSV.replace("1.5,2.0,", "1.5,")).expect_err("short row");
        assert!(e.starts_with("line 4:") && e.contains("2 runs"), "{e}");
        assert!(parse_csv(&CSV.replace("0.0,1.0", "-1.0,1.0")).is_err());
        assert!(parse_csv(&CSV.replace("F5,30", "F5,x")).is_err());
        assert!(parse_csv(&CSV.replace("algorithm,", "alg,")).is_err());
        let twice = format!("{CSV}jSO,F1,10,0.0,0.0,0.0\n");
        assert!(parse_csv(&twice).expect_err("twice").contains("twice"));
    }

    /// The reference folder beside the repository, or None (with a SKIPPED line) when it
    /// is absent and not required.
    fn reference() -> Option<PathBuf> {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../..")
            .join(REFERENCE_DIR);
        if dir.join(MARKDOWN).is_file() {
            return Some(dir);
        }
        if std::env::var(REQUIRE_ENV).is_ok_and(|v| v == "1") {
            panic!("{REQUIRE_ENV}=1 but {} is missing", dir.display());
        }
        eprintln!(
            "SKIPPED: {} is absent (set {REQUIRE_ENV}=1 to require it)",
            dir.display()
        );
        None
    }

    #[test]
    fn the_published_files_agree_with_each_other() {
        let Some(dir) = reference() else { return };
        let p = load(&dir).expect("the reference files parse");
        // 29 functions × 4 D × 4 algorithms in the tables; 3 algorithms × 30 × 4 runs.
        assert_eq!(p.summaries.len(), 29 * 4 * 4);
        assert_eq!(p.runs.len(), 3 * 30 * 4);
        assert!(p.runs.values().all(|v| v.len() == 51));
        assert_eq!(p.summary("jSO", 10, 5).expect("F5").mean, 1.76);
        assert_eq!(p.summary("LSHADE-cnEpSin", 10, 30).expect("F30").sd, 8.61e4);
        assert!(p.summary("jSO", 10, 2).is_none(), "F2 has no published row");
        // Mean and sd of the runs are the tables' to the 3 significant digits printed.
        let agrees = |exact: f64, printed: f64| {
            if printed == 0.0 {
                return exact == 0.0;
            }
            let unit = 10f64.powi(printed.abs().log10().floor() as i32 - 2);
            (exact - printed).abs() <= 0.5001 * unit
        };
        for alg in ["jSO", "EBOwithCMAR", "LSHADE_SPACMA"] {
            for d in DIMS {
                for f in FunctionId::competition().map(FunctionId::number) {
                    let runs = p.runs(alg, d, f).expect("runs");
                    let t = p.summary(alg, d, f).expect("table");
                    let (m, sd) = (stats::mean(runs), stats::std_dev(runs));
                    assert!(
                        agrees(m, t.mean),
                        "{alg} F{f} D = {d}: mean {m} vs {}",
                        t.mean
                    );
                    assert!(agrees(sd, t.sd), "{alg} F{f} D = {d}: sd {sd} vs {}", t.sd);
                }
            }
        }
    }
}
