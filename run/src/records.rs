//! Reading the record files of a run directory, whatever damage they carry.
//!
//! A run directory can be damaged by more than a kill: a disk that fills, a
//! file copied half-way, a sync tool, a line written by another version. Every
//! reader of a record file goes through this module, so that each file kind
//! has one policy (the table in `docs/training.md`, "Damaged files", checked by
//! `cli/tests/it/damage.rs`):
//!
//! * line files (`games/*.jsonl`, `train.jsonl`, `generations.jsonl`,
//!   `evals.jsonl`): [`read_json_lines`] keeps every line that parses and
//!   names each one it skips (bad UTF-8, not JSON, not a record of the kind);
//!   a reader never fails because one line of history is bad;
//! * whole-file records (gate, ladder and final-evaluation records, sidecars,
//!   the opening book): [`read_json`] answers an error that names the file
//!   and what is wrong; a reader of history skips the file and says so
//!   ([`Skipped`]), a command that needs it stops with that error, and the
//!   pipeline sets a damaged record of its own aside ([`set_aside`]) and plays
//!   what it held again.
//!
//! Nothing here panics on any bytes.

use std::path::Path;

use anyhow::{Context, Result};
use martian_selfplay::GameRecord;
use serde::de::DeserializeOwned;

use crate::io::{read_limited, set_aside, MAX_LINE_FILE_BYTES, MAX_RECORD_BYTES};

/// A line of a line file that was not read, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BadLine {
    /// 1-based line number.
    pub line: usize,
    /// What is wrong: `invalid UTF-8`, `not JSON (...)`, `not a game record (...)`.
    pub why: String,
}

/// The records of a line file, in file order, and the lines left out.
#[derive(Debug)]
pub struct JsonLines<T> {
    /// `(1-based line number, record)` of every line that parsed.
    pub records: Vec<(usize, T)>,
    /// The non-blank lines that did not.
    pub bad: Vec<BadLine>,
}

impl<T> JsonLines<T> {
    /// The records without their line numbers.
    pub fn into_records(self) -> Vec<T> {
        self.records.into_iter().map(|(_, r)| r).collect()
    }
}

/// Parses `bytes` as one JSON record `T` a line (`what` names the kind in
/// messages, with its article: `a game record`). Blank lines are ignored; a last line without
/// its newline counts like any other (it is whole when it parses).
pub fn parse_json_lines<T: DeserializeOwned>(bytes: &[u8], what: &str) -> JsonLines<T> {
    parse_lines_with(bytes, |text| {
        serde_json::from_str::<T>(text).map_err(|e| {
            if serde_json::from_str::<serde_json::Value>(text).is_ok() {
                format!("not {what} ({e})")
            } else {
                format!("not JSON ({e})")
            }
        })
    })
}

/// [`parse_json_lines`] with the parser of one (non-blank, UTF-8) line given:
/// `parse` answers the record or why the line is not one.
pub fn parse_lines_with<T>(bytes: &[u8], parse: impl Fn(&str) -> Result<T, String>) -> JsonLines<T> {
    let mut out = JsonLines { records: Vec::new(), bad: Vec::new() };
    for (i, raw) in bytes.split(|&b| b == b'\n').enumerate() {
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        let Ok(text) = std::str::from_utf8(raw) else {
            out.bad.push(BadLine { line: i + 1, why: "invalid UTF-8".into() });
            continue;
        };
        if text.trim().is_empty() {
            continue;
        }
        match parse(text) {
            Ok(r) => out.records.push((i + 1, r)),
            Err(why) => out.bad.push(BadLine { line: i + 1, why }),
        }
    }
    out
}

/// The game records of `games/<prefix>-<seq>.jsonl` (or a spool record),
/// damaged lines left out and named (a line of an unknown record format
/// version is one).
///
/// # Errors
/// As [`read_json_lines`].
pub fn read_game_records(path: &Path) -> Result<JsonLines<GameRecord>> {
    let bytes = read_line_file(path)?;
    Ok(parse_lines_with(&bytes, |l| {
        GameRecord::from_json_line(l).map_err(|e| match serde_json::from_str::<serde_json::Value>(l) {
            Ok(_) => format!("not a game record ({e})"),
            Err(e) => format!("not JSON ({e})"),
        })
    }))
}

/// Reads the line file `path` with [`parse_json_lines`]; a file that does not
/// exist reads as empty.
///
/// # Errors
/// A file that exists but cannot be read (permissions, a directory in its
/// place), naming it.
pub fn read_json_lines<T: DeserializeOwned>(path: &Path, what: &str) -> Result<JsonLines<T>> {
    Ok(parse_json_lines(&read_line_file(path)?, what))
}

/// The bytes of the line file `path` ([`read_limited`] to
/// [`MAX_LINE_FILE_BYTES`]); a file that does not exist reads as empty.
fn read_line_file(path: &Path) -> Result<Vec<u8>> {
    match read_limited(path, MAX_LINE_FILE_BYTES) {
        Ok(bytes) => Ok(bytes),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
    }
}

/// [`read_json_lines`] for a file about to be rewritten: one that cannot be
/// read at all (a directory in its place, its permissions damaged) is set
/// aside with a warning and reads as empty.
///
/// # Errors
/// The rename failed.
pub fn read_json_lines_or_set_aside<T: DeserializeOwned>(path: &Path, what: &str) -> Result<JsonLines<T>> {
    match read_json_lines(path, what) {
        Ok(l) => Ok(l),
        Err(e) => {
            let aside = set_aside(path)?;
            eprintln!("warning: {e:#}; set aside as {}", aside.display());
            Ok(JsonLines { records: Vec::new(), bad: Vec::new() })
        }
    }
}

/// Reads the whole-file JSON record `path` as a `T` (`what` names the kind, with its article).
///
/// # Errors
/// One line naming the file and the problem: missing, unreadable, empty,
/// invalid UTF-8, not JSON (truncated, garbage), or JSON that is not a `what`.
pub fn read_json<T: DeserializeOwned>(path: &Path, what: &str) -> Result<T> {
    let bytes = read_limited(path, MAX_RECORD_BYTES).with_context(|| format!("reading {}", path.display()))?;
    parse_json(&bytes, what).with_context(|| format!("{} is damaged", path.display()))
}

/// [`read_json`] on bytes already read.
///
/// # Errors
/// As [`read_json`], without the path.
pub fn parse_json<T: DeserializeOwned>(bytes: &[u8], what: &str) -> Result<T> {
    anyhow::ensure!(!bytes.iter().all(u8::is_ascii_whitespace), "it is empty");
    let text = std::str::from_utf8(bytes).map_err(|e| anyhow::anyhow!("invalid UTF-8 at byte {}", e.valid_up_to()))?;
    // serde_path_to_error names the field at fault (`result.wins: invalid
    // value ...`), which serde_json's own message leaves to a line and column.
    match serde_path_to_error::deserialize::<_, T>(&mut serde_json::Deserializer::from_str(text)) {
        Ok(r) => Ok(r),
        Err(e) if serde_json::from_str::<serde_json::Value>(text).is_ok() => {
            let path = e.path().to_string();
            let inner = e.into_inner();
            if path.is_empty() || path == "." {
                Err(anyhow::anyhow!("it is JSON but not {what} ({inner})"))
            } else {
                Err(anyhow::anyhow!("it is JSON but not {what} (field {path}: {inner})"))
            }
        }
        Err(e) => Err(anyhow::anyhow!("it is not JSON ({})", e.into_inner())),
    }
}

/// What a reader of history left out: damaged lines and whole files, each
/// named. Printed as warnings and shown in the report.
#[derive(Debug, Default)]
pub struct Skipped {
    notes: Vec<String>,
}

impl Skipped {
    /// Notes the bad lines of `path` (nothing when there are none).
    pub fn lines(&mut self, path: &Path, bad: &[BadLine]) {
        if bad.is_empty() {
            return;
        }
        let shown: Vec<String> = bad.iter().take(3).map(|b| format!("line {}: {}", b.line, b.why)).collect();
        let more = if bad.len() > 3 { format!("; and {} more", bad.len() - 3) } else { String::new() };
        self.notes.push(format!(
            "{}: {} damaged line{} skipped ({}{more})",
            path.display(),
            bad.len(),
            if bad.len() == 1 { "" } else { "s" },
            shown.join("; ")
        ));
    }

    /// Notes a whole file left out, with the error that says why.
    pub fn file(&mut self, e: &anyhow::Error) {
        self.notes.push(format!("{e:#}; left out"));
    }

    /// The notes, one per damaged file.
    pub fn notes(&self) -> &[String] {
        &self.notes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[derive(serde::Deserialize, Debug, PartialEq)]
    struct R {
        a: u32,
    }

    #[test]
    fn lines_keep_what_parses_and_name_the_rest() {
        let bytes = b"{\"a\":1}\n\xff\xfe\n\nnot json\n{\"b\":2}\r\n{\"a\":3}\r\n{\"a\":";
        let l: JsonLines<R> = parse_json_lines(bytes, "a thing");
        assert_eq!(l.records, vec![(1, R { a: 1 }), (6, R { a: 3 })]);
        let lines: Vec<usize> = l.bad.iter().map(|b| b.line).collect();
        assert_eq!(lines, vec![2, 4, 5, 7]);
        assert_eq!(l.bad[0].why, "invalid UTF-8");
        assert!(l.bad[1].why.starts_with("not JSON"), "{}", l.bad[1].why);
        assert!(l.bad[2].why.starts_with("not a thing"), "{}", l.bad[2].why);
        assert!(l.bad[3].why.starts_with("not JSON"), "{}", l.bad[3].why);
    }

    #[test]
    fn whole_records_say_what_is_wrong() {
        let e = |b: &[u8]| format!("{:#}", parse_json::<R>(b, "a thing").unwrap_err());
        assert_eq!(e(b""), "it is empty");
        assert_eq!(e(b" \n"), "it is empty");
        assert_eq!(e(b"{\"a\":1}\xff"), "invalid UTF-8 at byte 7");
        assert!(e(b"{\"a\":").starts_with("it is not JSON"));
        assert!(e(b"{\"b\":1}").starts_with("it is JSON but not a thing"));
        // A number out of range is named by its field.
        let out = e(b"{\"a\":-1}");
        assert!(out.starts_with("it is JSON but not a thing (field a: invalid value: integer `-1`"), "{out}");
        assert_eq!(parse_json::<R>(b"{\"a\":4}", "a thing").unwrap(), R { a: 4 });
    }

    #[test]
    fn missing_line_files_read_empty_and_unreadable_ones_fail() {
        let dir = tempfile::tempdir().unwrap();
        let l: JsonLines<R> = read_json_lines(&dir.path().join("none.jsonl"), "a thing").unwrap();
        assert!(l.records.is_empty() && l.bad.is_empty());
        // A directory where the file should be.
        let e = read_json_lines::<R>(dir.path(), "a thing").unwrap_err();
        assert!(format!("{e:#}").contains(&dir.path().display().to_string()));
    }

    #[test]
    fn devices_and_oversized_files_are_refused_before_reading() {
        // /dev/zero never ends: reading it whole would hang and fill memory.
        let e = read_json::<R>(Path::new("/dev/zero"), "a thing").unwrap_err();
        assert!(format!("{e:#}").contains("not a regular file"), "{e:#}");
        assert!(read_json_lines::<R>(Path::new("/dev/zero"), "a thing").is_err());
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big.json");
        fs::File::create(&big).unwrap().set_len(MAX_RECORD_BYTES + 1).unwrap();
        let e = read_json::<R>(&big, "a thing").unwrap_err();
        assert!(format!("{e:#}").contains("more than"), "{e:#}");
    }

    #[test]
    fn set_aside_never_overwrites() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("gen0001.json");
        for k in 0..3 {
            fs::write(&p, format!("{k}")).unwrap();
            set_aside(&p).unwrap();
        }
        assert!(!p.exists());
        assert_eq!(fs::read_to_string(dir.path().join("gen0001.json.damaged")).unwrap(), "0");
        assert_eq!(fs::read_to_string(dir.path().join("gen0001.json.damaged-3")).unwrap(), "2");
    }

    #[test]
    fn skipped_names_file_lines_and_count() {
        let mut s = Skipped::default();
        let bad: Vec<BadLine> = (1..=5).map(|i| BadLine { line: i, why: "invalid UTF-8".into() }).collect();
        s.lines(Path::new("R/games/x.jsonl"), &bad);
        s.lines(Path::new("R/other.jsonl"), &[]);
        assert_eq!(s.notes().len(), 1);
        assert_eq!(
            s.notes()[0],
            "R/games/x.jsonl: 5 damaged lines skipped (line 1: invalid UTF-8; line 2: invalid UTF-8; \
             line 3: invalid UTF-8; and 2 more)"
        );
    }
}
