//! Output files: checked before the work starts, written whole or not at all.
//!
//! [`check_file`] and [`check_dir`] run before any work: the folder must exist and take
//! a new file, so that a bad path costs nothing. [`write`] writes a temporary file in
//! the same folder, flushes it to disk and renames it over the target: a reader (or a
//! failed run) sees the old file or the new one, never a part.

use super::input::name;
use super::{CliError, Result};
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

/// Numbers the temporary files of this process.
static COUNTER: AtomicU32 = AtomicU32::new(0);

/// Checks that `path` can be written later: not a folder or a device, in a folder that
/// exists and takes a new file. `what` names it in messages (`the history file`).
pub fn check_file(path: &Path, what: &str) -> Result<()> {
    let target = resolve(path);
    if let Ok(meta) = fs::metadata(&target)
        && !meta.is_file()
    {
        let kind = if meta.is_dir() {
            "a folder"
        } else {
            "not a regular file"
        };
        return Err(CliError::usage(format!(
            "{what} {} is {kind}: give a file name",
            name(path)
        )));
    }
    let dir = folder_of(&target);
    if !dir.is_dir() {
        return Err(CliError::usage(format!(
            "cannot write {what} {}: the folder {} does not exist",
            name(path),
            name(&dir)
        )));
    }
    probe(&dir).map_err(|e| {
        CliError::usage(format!(
            "cannot write {what} {}: the folder {} does not take new files ({e})",
            name(path),
            name(&dir)
        ))
    })
}

/// Checks that folder `dir` (made if missing) takes new files.
pub fn check_dir(dir: &Path, what: &str) -> Result<()> {
    fs::create_dir_all(dir)
        .map_err(|e| CliError::usage(format!("cannot create {what} {}: {e}", name(dir))))?;
    probe(dir).map_err(|e| {
        CliError::usage(format!(
            "{what} {} does not take new files ({e})",
            name(dir)
        ))
    })
}

/// Writes `bytes` to `path` through a temporary file in the same folder and a rename.
/// A symbolic link is followed: the file it names is replaced. An existing file keeps
/// its permissions.
pub fn write(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_with(path, |tmp| {
        OpenOptions::new()
            .write(true)
            .truncate(true)
            .open(tmp)?
            .write_all(bytes)
    })
}

/// Like [`write`], with `fill` writing the temporary file (its path is given; its name
/// ends as `path`'s does, for writers that choose a format by the extension).
pub fn write_with(
    path: &Path,
    fill: impl FnOnce(&Path) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let target = resolve(path);
    let tmp = temporary(&target)?;
    let done = fill(&tmp).and_then(|()| {
        if let Ok(meta) = fs::metadata(&target) {
            fs::set_permissions(&tmp, meta.permissions())?;
        }
        File::open(&tmp)?.sync_all()?;
        fs::rename(&tmp, &target)
    });
    if done.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    done
}

/// The file a path names: a symbolic link's target, else the path itself.
fn resolve(path: &Path) -> PathBuf {
    match fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => {
            fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
        }
        _ => path.to_path_buf(),
    }
}

/// The folder of a file path (`.` for a bare name).
fn folder_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// A new, empty temporary file beside `target`: `.NAME.PID.N.tmp.EXT`.
fn temporary(target: &Path) -> std::io::Result<PathBuf> {
    let dir = folder_of(target);
    let stem = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "output".into());
    let ext = target
        .extension()
        .map(|e| format!(".{}", e.to_string_lossy()))
        .unwrap_or_default();
    loop {
        let n = COUNTER.fetch_add(1, Ordering::Relaxed);
        let tmp = dir.join(format!(".{stem}.{}.{n}.tmp{ext}", std::process::id()));
        match OpenOptions::new().write(true).create_new(true).open(&tmp) {
            Ok(_) => return Ok(tmp),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

/// Makes and removes a temporary file in `dir`.
fn probe(dir: &Path) -> std::io::Result<()> {
    let tmp = temporary(&dir.join("gpude-probe"))?;
    fs::remove_file(tmp)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("gpude-output-{}", std::process::id()));
        fs::create_dir_all(&dir).expect("scratch folder");
        dir.join(name)
    }

    #[test]
    fn write_replaces_whole_files_and_leaves_no_temporary() {
        let p = scratch("a.txt");
        write(&p, b"first").expect("write");
        write(&p, b"second").expect("write");
        assert_eq!(fs::read(&p).expect("read"), b"second");
        let failed = write_with(&p, |_| Err(std::io::Error::other("no")));
        assert!(failed.is_err());
        assert_eq!(fs::read(&p).expect("read"), b"second");
        let dir = p.parent().expect("folder");
        let left: Vec<_> = fs::read_dir(dir)
            .expect("list")
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().contains(".tmp"))
            .collect();
        assert!(left.is_empty(), "{left:?}");
    }

    #[test]
    fn checks_refuse_missing_folders_and_folders_as_files() {
        let p = scratch("missing-folder").join("x.csv");
        let e = check_file(&p, "the history file").expect_err("missing folder");
        assert!(e.message.contains("does not exist"), "{}", e.message);
        let d = scratch("a-folder");
        fs::create_dir_all(&d).expect("folder");
        let e = check_file(&d, "the history file").expect_err("a folder");
        assert!(e.message.contains("is a folder"), "{}", e.message);
        check_file(&scratch("fine.csv"), "the history file").expect("writable");
        let file = scratch("plain-file");
        fs::write(&file, b"x").expect("write");
        assert!(check_dir(&file.join("sub"), "the output folder").is_err());
    }
}
