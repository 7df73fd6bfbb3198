//! TensorBoard event files written while a run goes on, so that
//! `tensorboard --logdir runs/` shows every run's metrics live (smoothing,
//! zoom, runs side by side).
//!
//! Each process that writes metrics of a run directory `R` appends to its own
//! file `R/tensorboard/events.out.tfevents.<unix time>.<host>.<pid>` (TensorBoard reads
//! every `*tfevents*` file of a directory, in name order, and picks up what is
//! appended). The format is TensorFlow's: a sequence of TFRecords
//!
//! ```text
//! u64 length (little-endian) | u32 masked CRC-32C of length | data | u32 masked CRC-32C of data
//! masked(c) = ((c >> 15) | (c << 17)) + 0xa282ead8
//! ```
//!
//! whose data are `Event` protocol buffers (`tensorflow/core/util/event.proto`):
//! `wall_time` (field 1, double), `step` (2, int64), `file_version` (3, string,
//! `"brain.Event:2"` in the first record) and `summary` (5) holding
//! `Summary.Value`s with `tag` (1, string) and `simple_value` (2, float).
//! The few fields are encoded here by hand; no published Rust crate for
//! TensorBoard is maintained (the CRC comes from the `crc` crate).
//!
//! Writing never stops a run: a failure prints one warning and the run goes on.

use std::collections::HashMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use anyhow::{Context, Result};

const CASTAGNOLI: crc::Crc<u32> = crc::Crc::<u32>::new(&crc::CRC_32_ISCSI);

/// The masked CRC-32C of TFRecords.
pub fn masked_crc(data: &[u8]) -> u32 {
    let c = CASTAGNOLI.checksum(data);
    c.rotate_right(15).wrapping_add(0xa282_ead8)
}

fn varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn len_field(field: u32, bytes: &[u8], out: &mut Vec<u8>) {
    varint(((field << 3) | 2) as u64, out);
    varint(bytes.len() as u64, out);
    out.extend_from_slice(bytes);
}

/// An `Event` with a `file_version`, or with scalar summaries.
fn event(wall_time: f64, step: i64, file_version: Option<&str>, scalars: &[(&str, f64)]) -> Vec<u8> {
    let mut e = Vec::new();
    e.push(0x09); // wall_time, fixed64
    e.extend_from_slice(&wall_time.to_le_bytes());
    e.push(0x10); // step, varint
    varint(step as u64, &mut e);
    if let Some(v) = file_version {
        len_field(3, v.as_bytes(), &mut e);
    }
    if !scalars.is_empty() {
        let mut summary = Vec::new();
        for (tag, x) in scalars {
            let mut value = Vec::new();
            len_field(1, tag.as_bytes(), &mut value);
            value.push(0x15); // simple_value, fixed32
            value.extend_from_slice(&(*x as f32).to_le_bytes());
            len_field(1, &value, &mut summary);
        }
        len_field(5, &summary, &mut e);
    }
    e
}

/// One TFRecord around `data`.
fn record(data: &[u8]) -> Vec<u8> {
    let len = (data.len() as u64).to_le_bytes();
    let mut r = Vec::with_capacity(data.len() + 16);
    r.extend_from_slice(&len);
    r.extend_from_slice(&masked_crc(&len).to_le_bytes());
    r.extend_from_slice(data);
    r.extend_from_slice(&masked_crc(data).to_le_bytes());
    r
}

/// The event file of this process for run directory `root` (created with its
/// version record on first use).
fn file_for(root: &Path) -> Result<PathBuf> {
    static FILES: OnceLock<Mutex<HashMap<PathBuf, PathBuf>>> = OnceLock::new();
    let mut files = FILES.get_or_init(Default::default).lock().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = files.get(root) {
        return Ok(p.clone());
    }
    let _writing = crate::interrupt::writing();
    let dir = root.join(crate::layout::TENSORBOARD);
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let now = crate::io::now_unix_s();
    let host = std::fs::read_to_string("/etc/hostname").map(|h| h.trim().to_string()).unwrap_or_default();
    let host = if host.is_empty() { "localhost".to_string() } else { host };
    let p = dir.join(format!("events.out.tfevents.{}.{host}.{}", now as u64, std::process::id()));
    let mut f = std::fs::OpenOptions::new().create(true).append(true).open(&p)?;
    f.write_all(&record(&event(now, 0, Some("brain.Event:2"), &[])))?;
    files.insert(root.to_path_buf(), p.clone());
    Ok(p)
}

/// Appends one event with `scalars` (tag, value) at `step` to the run's event file.
///
/// # Errors
/// I/O errors.
pub fn append(root: &Path, step: u64, scalars: &[(&str, f64)]) -> Result<()> {
    let scalars: Vec<(&str, f64)> = scalars.iter().copied().filter(|s| s.1.is_finite()).collect();
    if scalars.is_empty() {
        return Ok(());
    }
    let p = file_for(root)?;
    let mut f =
        std::fs::OpenOptions::new().append(true).open(&p).with_context(|| format!("opening {}", p.display()))?;
    f.write_all(&record(&event(crate::io::now_unix_s(), step as i64, None, &scalars)))
        .with_context(|| format!("writing {}", p.display()))?;
    Ok(())
}

/// [`append`], printing a warning (once per process) instead of failing.
pub fn log(root: &Path, step: u64, scalars: &[(&str, f64)]) {
    static WARNED: OnceLock<()> = OnceLock::new();
    if let Err(e) = append(root, step, scalars) {
        if WARNED.set(()).is_ok() {
            eprintln!("warning: TensorBoard events not written: {e:#}");
        }
    }
}

/// The scalars of one `train.jsonl` line, under `train/`.
pub fn train_metrics(root: &Path, m: &martian_train::Metrics) {
    let mut scalars = vec![
        ("train/total_loss", m.total_loss),
        ("train/policy_loss", m.policy_loss),
        ("train/value_loss", m.value_loss),
        ("train/policy_accuracy", m.policy_accuracy),
        ("train/value_mse", m.value_mse),
        ("train/learning_rate", m.lr),
        ("train/samples_per_s", m.samples_per_s),
        ("train/window_positions", m.window as f64),
        ("train/generation", m.generation as f64),
    ];
    // The auxiliary heads' losses, when the network has them.
    scalars.extend(m.moves_left_loss.map(|v| ("train/moves_left_loss", v)));
    scalars.extend(m.score_loss.map(|v| ("train/score_loss", v)));
    log(root, m.step, &scalars);
}

/// The scalars of an event file: `(wall time, step, tag, value)`, checking
/// every length and CRC (the tests read back what was written).
///
/// # Errors
/// A truncated record or a CRC mismatch (with its offset).
#[cfg(test)]
pub fn read_scalars(path: &Path) -> Result<Vec<(f64, i64, String, f32)>> {
    let bytes = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    let mut out = Vec::new();
    let mut i = 0;
    let u32_at = |b: &[u8], at: usize| u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]);
    while i < bytes.len() {
        anyhow::ensure!(i + 12 <= bytes.len(), "truncated record header at byte {i}");
        let len = u64::from_le_bytes(bytes[i..i + 8].try_into()?) as usize;
        anyhow::ensure!(masked_crc(&bytes[i..i + 8]) == u32_at(&bytes, i + 8), "length CRC mismatch at byte {i}");
        let d0 = i + 12;
        anyhow::ensure!(d0 + len + 4 <= bytes.len(), "truncated record at byte {i}");
        let data = &bytes[d0..d0 + len];
        anyhow::ensure!(masked_crc(data) == u32_at(&bytes, d0 + len), "data CRC mismatch at byte {i}");
        parse_event(data, &mut out).with_context(|| format!("event at byte {i}"))?;
        i = d0 + len + 4;
    }
    Ok(out)
}

#[cfg(test)]
fn read_varint(b: &[u8], i: &mut usize) -> Result<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *b.get(*i).context("truncated varint")?;
        *i += 1;
        v |= ((byte & 0x7f) as u64) << shift;
        if byte < 0x80 {
            return Ok(v);
        }
    }
    anyhow::bail!("varint too long")
}

/// A protocol-buffer field: number, wire type, varint value, bytes.
#[cfg(test)]
type Field<'a> = (u64, u8, u64, &'a [u8]);

/// Protocol-buffer fields `(number, wire type, varint or bytes)` of `b`.
#[cfg(test)]
fn fields(b: &[u8]) -> Result<Vec<Field<'_>>> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let key = read_varint(b, &mut i)?;
        let (num, wt) = (key >> 3, (key & 7) as u8);
        match wt {
            0 => out.push((num, wt, read_varint(b, &mut i)?, &b[0..0])),
            1 | 5 => {
                let n = if wt == 1 { 8 } else { 4 };
                anyhow::ensure!(i + n <= b.len(), "truncated fixed field");
                out.push((num, wt, 0, &b[i..i + n]));
                i += n;
            }
            2 => {
                let n = read_varint(b, &mut i)? as usize;
                anyhow::ensure!(i + n <= b.len(), "truncated field");
                out.push((num, wt, 0, &b[i..i + n]));
                i += n;
            }
            _ => anyhow::bail!("unsupported wire type {wt}"),
        }
    }
    Ok(out)
}

#[cfg(test)]
fn parse_event(data: &[u8], out: &mut Vec<(f64, i64, String, f32)>) -> Result<()> {
    let (mut wall, mut step) = (0f64, 0i64);
    let mut values = Vec::new();
    for (num, wt, v, bytes) in fields(data)? {
        match (num, wt) {
            (1, 1) => wall = f64::from_le_bytes(bytes.try_into()?),
            (2, 0) => step = v as i64,
            (5, 2) => {
                for (vn, _, _, value) in fields(bytes)? {
                    if vn != 1 {
                        continue;
                    }
                    let (mut tag, mut x) = (String::new(), f32::NAN);
                    for (n, w, _, b) in fields(value)? {
                        match (n, w) {
                            (1, 2) => tag = String::from_utf8(b.to_vec())?,
                            (2, 5) => x = f32::from_le_bytes(b.try_into()?),
                            _ => {}
                        }
                    }
                    values.push((tag, x));
                }
            }
            _ => {}
        }
    }
    out.extend(values.into_iter().map(|(t, x)| (wall, step, t, x)));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc_is_castagnoli_and_masked_as_tensorflow_does() {
        // The CRC-32C check value (RFC 3720, B.4) and the TFRecord masking.
        assert_eq!(CASTAGNOLI.checksum(b"123456789"), 0xE306_9283);
        assert_eq!(masked_crc(b"123456789"), 0xC78A_B0E5);
    }

    #[test]
    fn an_event_has_the_protobuf_bytes_tensorboard_reads() {
        // wall_time 1.5, step 3, one value "a" = 2.0, byte by byte.
        let e = event(1.5, 3, None, &[("a", 2.0)]);
        let mut want = vec![0x09];
        want.extend_from_slice(&1.5f64.to_le_bytes());
        want.extend_from_slice(&[0x10, 3, 0x2a, 10, 0x0a, 8, 0x0a, 1, b'a', 0x15]);
        want.extend_from_slice(&2.0f32.to_le_bytes());
        assert_eq!(e, want);
    }

    #[test]
    fn appended_scalars_read_back_and_corruption_is_detected() {
        let tmp = tempfile::tempdir().unwrap();
        append(tmp.path(), 10, &[("train/loss", 2.5), ("train/lr", 0.002), ("skip", f64::NAN)]).unwrap();
        append(tmp.path(), 300, &[("elo/ladder", -120.0)]).unwrap();
        let files: Vec<PathBuf> =
            std::fs::read_dir(tmp.path().join("tensorboard")).unwrap().map(|e| e.unwrap().path()).collect();
        assert_eq!(files.len(), 1, "one file per process and run");
        assert!(files[0].file_name().unwrap().to_str().unwrap().starts_with("events.out.tfevents."));
        let s = read_scalars(&files[0]).unwrap();
        let tags: Vec<(i64, &str, f32)> = s.iter().map(|x| (x.1, x.2.as_str(), x.3)).collect();
        assert_eq!(tags, vec![(10, "train/loss", 2.5), (10, "train/lr", 0.002), (300, "elo/ladder", -120.0)]);
        assert!(s[0].0 > 1.6e9, "wall time is Unix time");
        let mut bytes = std::fs::read(&files[0]).unwrap();
        let n = bytes.len();
        bytes[n - 6] ^= 1;
        std::fs::write(&files[0], &bytes).unwrap();
        assert!(read_scalars(&files[0]).unwrap_err().to_string().contains("CRC"));
    }
}
