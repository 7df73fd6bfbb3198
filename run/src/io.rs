//! The run's file primitives, a leaf every other module may use: atomic
//! writes and line appends (what a kill or a full disk leaves is the old file
//! or the whole new one, never a mix), bounded reads, setting a damaged file
//! aside, and how a message names a path of a working copy
//! ([`crate::mirror`]). Nothing here knows a file's kind or name.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use anyhow::{Context, Result};

/// Sets aside what stands at `path` when it is not a regular file (a
/// directory or a special file put there by damage), with a warning, so that
/// a record file can be written there again.
///
/// # Errors
/// The rename failed.
pub fn make_way(path: &Path) -> Result<()> {
    if let Ok(m) = fs::symlink_metadata(path) {
        if !m.is_file() {
            let aside = set_aside(path)?;
            eprintln!("warning: {} is not a file; set aside as {}", path.display(), aside.display());
        }
    }
    Ok(())
}

/// Writes `bytes` to `path` through a temporary file and a rename (what
/// stands at `path` that is not a file is set aside first: [`make_way`]).
///
/// # Errors
/// I/O errors, with the path.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let _writing = crate::interrupt::writing();
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    let tmp = dir.join(format!(".tmp-{}-{name}", std::process::id()));
    make_way(path)?;
    // A write that fails part-way (a full disk) leaves the previous file as it was and no temporary.
    let written = fs::write(&tmp, bytes).with_context(|| format!("writing {}", tmp.display())).and_then(|()| {
        fs::rename(&tmp, path).with_context(|| format!("renaming {} to {}", tmp.display(), path.display()))
    });
    if written.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    written
}

/// Appends one line to a JSONL file (what stands at `path` that is not a
/// file, or a file that cannot be opened, is set aside first, with a warning).
///
/// # Errors
/// I/O errors, with the path.
pub fn append_line(path: &Path, line: &str) -> Result<()> {
    use std::io::{Read, Seek, SeekFrom};
    make_way(path)?;
    let open = || fs::OpenOptions::new().create(true).read(true).append(true).open(path);
    let mut f = match open() {
        Ok(f) => f,
        // A file that cannot be opened (its permissions damaged) is set aside, and a new one begun.
        Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            let aside = set_aside(path)?;
            eprintln!("warning: {} cannot be opened ({e}); set aside as {}", path.display(), aside.display());
            open().with_context(|| format!("opening {}", path.display()))?
        }
        Err(e) => return Err(e).with_context(|| format!("opening {}", path.display())),
    };
    // A line cut by an earlier failed append (a full disk) is ended first, so
    // that it does not swallow this one: readers skip it alone.
    let mut last = [b'\n'];
    if f.seek(SeekFrom::End(0)).with_context(|| format!("reading {}", path.display()))? > 0 {
        f.seek(SeekFrom::End(-1))
            .and_then(|_| f.read_exact(&mut last))
            .with_context(|| format!("reading {}", path.display()))?;
    }
    let text = if last[0] == b'\n' { format!("{line}\n") } else { format!("\n{line}\n") };
    f.write_all(text.as_bytes()).with_context(|| format!("appending to {}", path.display()))
}

/// Largest whole-file record read (gate, ladder, evaluation records, the
/// opening book): real ones are a few KiB to a few MiB.
pub const MAX_RECORD_BYTES: u64 = 64 << 20;

/// Largest line file read (game records of a shard, the run's logs).
pub const MAX_LINE_FILE_BYTES: u64 = 1 << 30;

/// Reads `path` whole, refusing what is not a regular file (a device such as
/// `/dev/zero` behind a link, which never ends; a directory) and a file over
/// `limit` bytes, before reading it.
///
/// # Errors
/// The [`std::io::Error`] of a missing or unreadable file (kind kept, so
/// `NotFound` can be told apart), or an `InvalidData` one naming the problem.
pub fn read_limited(path: &Path, limit: u64) -> std::io::Result<Vec<u8>> {
    use std::io::{Error, ErrorKind, Read};
    let m = fs::metadata(path)?;
    if !m.is_file() {
        let what = if m.is_dir() { "a directory" } else { "not a regular file (a device or a pipe)" };
        return Err(Error::new(ErrorKind::InvalidData, format!("it is {what}")));
    }
    if m.len() > limit {
        return Err(Error::new(ErrorKind::InvalidData, format!("it holds {} bytes, more than {limit}", m.len())));
    }
    let mut bytes = Vec::new();
    fs::File::open(path)?.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(Error::new(ErrorKind::InvalidData, format!("it holds more than {limit} bytes")));
    }
    Ok(bytes)
}

/// Moves the damaged file `path` aside to `<name>.damaged` (or
/// `<name>.damaged-2`, ...) in the same folder and returns the new path, so
/// that what it held is played or written again and the bytes stay for a look.
///
/// # Errors
/// The rename failed (naming both paths).
pub fn set_aside(path: &Path) -> Result<PathBuf> {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    let mut k = 1;
    let to = loop {
        let candidate =
            path.with_file_name(if k == 1 { format!("{name}.damaged") } else { format!("{name}.damaged-{k}") });
        if !candidate.exists() {
            break candidate;
        }
        k += 1;
    };
    fs::rename(path, &to).with_context(|| format!("setting aside {} as {}", path.display(), to.display()))?;
    Ok(to)
}

/// The working copies of this process and the URLs they stand for, so that
/// messages name `s3://bucket/run/report.html` rather than a private
/// directory that is removed when the process ends ([`shown`]).
static SHOWN: Mutex<Vec<(PathBuf, String)>> = Mutex::new(Vec::new());

/// A registration in [`SHOWN`] ([`show_as`]), removed on drop.
pub struct Shown(PathBuf);

/// Registers the working copy `local` as standing for `url` in messages
/// ([`shown`]) until the returned guard is dropped.
pub fn show_as(local: &Path, url: &str) -> Shown {
    SHOWN.lock().unwrap_or_else(|e| e.into_inner()).push((local.to_path_buf(), url.to_string()));
    Shown(local.to_path_buf())
}

/// Whether `local` is a working copy of this process registered by [`show_as`].
pub fn is_shown(local: &Path) -> bool {
    SHOWN.lock().unwrap_or_else(|e| e.into_inner()).iter().any(|(l, _)| l == local)
}

impl Drop for Shown {
    fn drop(&mut self) {
        SHOWN.lock().unwrap_or_else(|e| e.into_inner()).retain(|(p, _)| p != &self.0);
    }
}

/// How a message names `path`: under a working copy of this process, the
/// object's URL (`<run URL>/<name>`); else the path as it is.
pub fn shown(path: &Path) -> String {
    let copies = SHOWN.lock().unwrap_or_else(|e| e.into_inner());
    for (local, url) in copies.iter() {
        if let Ok(rel) = path.strip_prefix(local) {
            let rel = rel.to_string_lossy();
            return if rel.is_empty() { url.clone() } else { format!("{url}/{rel}") };
        }
    }
    path.display().to_string()
}

/// Unix time now, seconds.
pub fn now_unix_s() -> f64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs_f64()).unwrap_or(0.0)
}
