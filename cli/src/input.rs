//! Reading input files with bounded resources, and messages that never echo them.
//!
//! A file must be a regular file (not a FIFO, a device such as `/dev/zero`, or a
//! folder) and at most a given size; stdin is read up to that size plus one byte. The
//! text is never quoted in a message: parsers report where (line, column, value number)
//! and what kind of problem, and [`clip`] bounds anything else a message shows.

use super::{CliError, Result};
use std::fs::File;
use std::io::Read;
use std::path::Path;

/// The most characters of one word that a message shows.
pub const MAX_TOKEN: usize = 60;

/// One MiB.
pub const MIB: u64 = 1 << 20;

/// `s` cut to [`MAX_TOKEN`] characters (with `…` where cut), control characters shown
/// as `?`. A path (a word with a `/`) keeps its end, where the file's name is; any
/// other word keeps its start.
pub fn clip(s: &str) -> String {
    let shown = |c: char| if c.is_control() { '?' } else { c };
    let n = s.chars().count();
    if n <= MAX_TOKEN {
        return s.chars().map(shown).collect();
    }
    if s.contains('/') {
        let tail: String = s.chars().skip(n - (MAX_TOKEN - 1)).map(shown).collect();
        format!("…{tail}")
    } else {
        let head: String = s.chars().take(MAX_TOKEN - 1).map(shown).collect();
        format!("{head}…")
    }
}

/// A message with every whitespace-separated word cut to [`MAX_TOKEN`] characters and
/// control characters other than line breaks shown as `?`: what is printed of any
/// error.
pub fn sanitize(message: &str) -> String {
    message
        .split('\n')
        .map(|line| {
            line.split(' ')
                .map(|w| {
                    if w.chars().count() > MAX_TOKEN || w.chars().any(char::is_control) {
                        clip(w)
                    } else {
                        w.to_string()
                    }
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A parser's message with what it quotes from the input left out: text between
/// backquotes or double quotes stays only when it is punctuation of at most three
/// characters (`expected `=``); anything else becomes `…`.
pub fn redact_quoted(message: &str) -> String {
    let first = message.lines().next().unwrap_or("");
    let mut out = String::new();
    let mut rest = first;
    while let Some(open) = rest.find(['`', '"']) {
        let q = rest[open..].chars().next().unwrap_or('"');
        out.push_str(&rest[..open + 1]);
        let after = &rest[open + 1..];
        match after.find(q) {
            Some(close) => {
                let inner = &after[..close];
                let keep = inner.chars().count() <= 3
                    && inner.chars().all(|c| c.is_ascii_punctuation() || c == ' ');
                out.push_str(if keep { inner } else { "…" });
                out.push(q);
                rest = &after[close + 1..];
            }
            None => {
                out.push('…');
                rest = "";
            }
        }
    }
    out.push_str(rest);
    clip_message(&out)
}

/// A one-line message cut to 200 characters.
fn clip_message(s: &str) -> String {
    if s.chars().count() > 200 {
        format!("{}…", s.chars().take(199).collect::<String>())
    } else {
        s.to_string()
    }
}

/// A file's name for messages: its path as given, clipped.
pub fn name(path: &Path) -> String {
    clip(&path.display().to_string())
}

/// Reads the text of `path` (`-` or `None`: stdin), refusing anything that is not a
/// regular file or is larger than `cap` bytes. `what` names the input in messages
/// (`points`, `a job file`). Returns the text and a name for it in messages.
pub fn read_text(path: Option<&Path>, cap: u64, what: &str) -> Result<(String, String)> {
    let limit = describe_size(cap);
    match path {
        Some(p) if p.as_os_str() != "-" => {
            let shown = name(p);
            let file = open_regular(p, &shown, what)?;
            let len = file.metadata().map(|m| m.len()).unwrap_or(0);
            if len > cap {
                return Err(CliError::usage(format!(
                    "{shown} is {len} bytes: the limit for {what} is {limit}"
                )));
            }
            let bytes = read_capped(file, cap)
                .map_err(|e| CliError::usage(format!("cannot read {shown}: {e}")))?;
            if bytes.len() as u64 > cap {
                return Err(CliError::usage(format!(
                    "{shown}: more than the limit for {what} ({limit})"
                )));
            }
            Ok((text_of(bytes, &shown)?, shown))
        }
        _ => {
            let bytes = read_capped(std::io::stdin().lock(), cap)
                .map_err(|e| CliError::usage(format!("cannot read stdin: {e}")))?;
            if bytes.len() as u64 > cap {
                return Err(CliError::usage(format!(
                    "stdin: more than the limit for {what} ({limit})"
                )));
            }
            Ok((text_of(bytes, "stdin")?, "stdin".to_string()))
        }
    }
}

/// Reads the bytes of `path`, a regular file of at most `cap` bytes.
pub fn read_bytes(path: &Path, cap: u64, what: &str) -> Result<Vec<u8>> {
    let shown = name(path);
    let file = open_regular(path, &shown, what)?;
    let bytes =
        read_capped(file, cap).map_err(|e| CliError::usage(format!("cannot read {shown}: {e}")))?;
    if bytes.len() as u64 > cap {
        return Err(CliError::usage(format!(
            "{shown}: more than the limit for {what} ({})",
            describe_size(cap)
        )));
    }
    Ok(bytes)
}

/// Opens `path` without blocking (a FIFO would wait for a writer) and checks that it is
/// a regular file.
fn open_regular(path: &Path, shown: &str, what: &str) -> Result<File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NONBLOCK);
    }
    let file = options
        .open(path)
        .map_err(|e| CliError::usage(format!("cannot read {shown}: {e}")))?;
    let meta = file
        .metadata()
        .map_err(|e| CliError::usage(format!("cannot read {shown}: {e}")))?;
    if !meta.is_file() {
        return Err(CliError::usage(format!(
            "{shown} is {}, not a regular file ({what} must be read from a file)",
            kind_of(&meta)
        )));
    }
    Ok(file)
}

/// What a file that is not a regular file is.
fn kind_of(meta: &std::fs::Metadata) -> &'static str {
    let t = meta.file_type();
    if t.is_dir() {
        return "a folder";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_char_device() || t.is_block_device() {
            return "a device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    "something else"
}

/// At most `cap + 1` bytes of `r` (one more than allowed tells that it is too large).
fn read_capped(r: impl Read, cap: u64) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    r.take(cap.saturating_add(1)).read_to_end(&mut bytes)?;
    Ok(bytes)
}

fn text_of(bytes: Vec<u8>, shown: &str) -> Result<String> {
    String::from_utf8(bytes).map_err(|e| {
        CliError::usage(format!(
            "{shown} is not UTF-8 text (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        ))
    })
}

/// `64 MiB`, `1 MiB`, `512 bytes`.
pub fn describe_size(bytes: u64) -> String {
    if bytes >= MIB && bytes.is_multiple_of(MIB) {
        format!("{} MiB", bytes / MIB)
    } else {
        format!("{bytes} bytes")
    }
}

/// Line and column (from 1) of byte `offset` in `text`.
pub fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let mut at = offset.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let column = before
        .rfind('\n')
        .map_or(before.chars().count(), |n| before[n + 1..].chars().count())
        + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clip_cuts_long_words() {
        assert_eq!(clip("short"), "short");
        let long = "x".repeat(100);
        let c = clip(&long);
        assert_eq!(c.chars().count(), MAX_TOKEN);
        assert!(c.ends_with('…'));
        assert_eq!(clip("a\u{1b}[31mb"), "a?[31mb");
        let m = sanitize(&format!("bad {long} here\nnext"));
        assert!(m.starts_with("bad xxx"), "{m}");
        assert!(m.contains("… here\nnext"), "{m}");
        // A long path keeps its end: the file's name and the folders nearest it.
        let path = format!("/{}/data/input_data/shift_data_5.txt,", "deep/".repeat(20));
        let c = clip(&path);
        assert_eq!(c.chars().count(), MAX_TOKEN);
        assert!(
            c.starts_with('…') && c.ends_with("data/input_data/shift_data_5.txt,"),
            "{c}"
        );
    }

    #[test]
    fn redact_keeps_punctuation_only() {
        assert_eq!(redact_quoted("expected `=`"), "expected `=`");
        assert_eq!(
            redact_quoted("duplicate key `password` in table"),
            "duplicate key `…` in table"
        );
        assert_eq!(redact_quoted("string \"secret\" here"), "string \"…\" here");
        assert_eq!(redact_quoted("open `secret"), "open `…");
        assert_eq!(redact_quoted("one\nsecond line"), "one");
    }

    #[test]
    fn line_and_column() {
        assert_eq!(line_column("ab\ncd", 0), (1, 1));
        assert_eq!(line_column("ab\ncd", 4), (2, 2));
        assert_eq!(line_column("é\nx", 1), (1, 1));
        assert_eq!(line_column("ab", 99), (1, 3));
    }
}
