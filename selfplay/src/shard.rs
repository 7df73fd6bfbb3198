//! Replay shards: `.npz` files (NumPy zip archives, readable with
//! `numpy.load`) of training samples. Layout, version 2:
//!
//! | array            | dtype   | shape                  | meaning |
//! |------------------|---------|------------------------|---------|
//! | `format_version` | int32   | `[1]`                  | 2 |
//! | `planes`         | float32 | `[N, planes, rows, cols]` | network input (`GameState::encode`) |
//! | `policy`         | float32 | `[N, NUM_ACTIONS]`     | root visit distribution (policy target), sums to 1 |
//! | `legal`          | uint8   | `[N, NUM_ACTIONS]`     | 1 for the action of every legal move (the policy loss is a softmax over these) |
//! | `value`          | float32 | `[N]`                  | value target for the side to move, in [-1, 1]: the final result (+1 win, 0 draw, -1 loss), the proven value, or the result mixed with the search value (`selfplay.value_target_q_weight`) |
//! | `game_id`        | int64   | `[N]`                  | game id (see the game records) |
//! | `ply`            | int32   | `[N]`                  | ply of the sample within its game |
//! | `weight`         | float32 | `[N]`                  | replay sampling weight (policy surprise weighting; 1 = ordinary); optional: shards without it read as all ones |
//! | `moves_left`     | float32 | `[N]`                  | plies from this position to the end of the game (>= 1), the moves-left head's target; optional: shards written before it lack it, and the moves-left loss then skips their rows |
//! | `score`          | float32 | `[N]`                  | final point difference for the side to move (its points minus the opponent's at the end, in points), the score head's target; only for games with points (Martian Chess); optional like `moves_left` |
//! | `values`         | float32 | `[N, P]`               | per-player value targets of a game of `P > 2` value players (four-player free-for-all, `GameState::num_players`), in mover-relative order (column `k` is player `(mover + k) % P`'s; column 0 equals `value`), the vector value head's target; each the result value (martian-chess §14.7) or mixed like `value`; optional: only such games write it |
//!
//! Shards are written to a temporary name and renamed, so a reader never sees
//! a partial file; a file that still fails to parse (truncated copy, disk
//! error) is reported by [`read_shard`] and skipped by the trainer.

use std::fs::{self, File};
use std::io::Write;
use std::path::Path;

use ndarray::{Array1, Array2, Array4};
use ndarray_npy::{NpzReader, NpzWriter};
use thiserror::Error;

/// Version of the shard layout.
pub const SHARD_FORMAT_VERSION: i32 = 2;

/// Error reading or writing a shard; names the file.
#[derive(Debug, Error)]
pub enum ShardError {
    /// I/O failure.
    #[error("shard {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The error.
        source: std::io::Error,
    },
    /// The arrays could not be encoded (a bug, not the disk).
    #[error("shard {path}: encoding failed: {message}")]
    Encode {
        /// The file.
        path: String,
        /// What failed.
        message: String,
    },
    /// Not a valid shard (corrupt, truncated, wrong shapes or version).
    #[error("shard {path} is corrupt or incompatible: {message}")]
    Corrupt {
        /// The file.
        path: String,
        /// What is wrong.
        message: String,
    },
}

/// The samples of one shard.
#[derive(Clone, Debug, PartialEq)]
pub struct ShardData {
    /// `[N, planes, rows, cols]` network inputs.
    pub planes: Array4<f32>,
    /// `[N, NUM_ACTIONS]` policy targets.
    pub policy: Array2<f32>,
    /// `[N, NUM_ACTIONS]` legal-move mask (1 = legal).
    pub legal: Array2<u8>,
    /// `[N]` value targets in `[-1, 1]` for the side to move (see the table above).
    pub value: Array1<f32>,
    /// `[N]` game ids.
    pub game_id: Array1<i64>,
    /// `[N]` plies.
    pub ply: Array1<i32>,
    /// `[N]` sampling weights of the replay window (policy surprise weighting,
    /// `selfplay.policy_surprise_weight`); 1 = ordinary. Shards written before
    /// this array existed read as all ones.
    pub weight: Array1<f32>,
    /// `[N]` moves-left targets (plies to the end of the game), or `None`
    /// for a shard written before they existed (the loss skips its rows).
    pub moves_left: Option<Array1<f32>>,
    /// `[N]` score targets (final point difference for the side to move, in
    /// points), or `None` for a game without points or an older shard.
    pub score: Option<Array1<f32>>,
    /// `[N, P]` per-player value targets in mover-relative order, for a game
    /// of `P > 2` value players (the vector value head); `None` for
    /// two-player games and older shards.
    pub values: Option<Array2<f32>>,
}

impl ShardData {
    /// Number of samples.
    pub fn len(&self) -> usize {
        self.value.len()
    }

    /// True when the shard holds no sample.
    pub fn is_empty(&self) -> bool {
        self.value.is_empty()
    }

    /// The rows of `parts`, in order, as one shard. An optional array
    /// (`moves_left`, `score`) is kept when every part with rows has it, and
    /// left out otherwise (a part without it has no such targets).
    ///
    /// # Errors
    /// [`ShardError::Corrupt`] (path `"<concatenation>"`) when `parts` is
    /// empty or the parts' plane or action shapes differ.
    pub fn concat(parts: &[&ShardData]) -> Result<ShardData, ShardError> {
        use ndarray::{concatenate, Axis};
        let err =
            |e: ndarray::ShapeError| ShardError::Corrupt { path: "<concatenation>".into(), message: e.to_string() };
        if parts.is_empty() {
            return Err(ShardError::Corrupt { path: "<concatenation>".into(), message: "no shard to join".into() });
        }
        Ok(ShardData {
            planes: concatenate(Axis(0), &parts.iter().map(|p| p.planes.view()).collect::<Vec<_>>()).map_err(err)?,
            policy: concatenate(Axis(0), &parts.iter().map(|p| p.policy.view()).collect::<Vec<_>>()).map_err(err)?,
            legal: concatenate(Axis(0), &parts.iter().map(|p| p.legal.view()).collect::<Vec<_>>()).map_err(err)?,
            value: concatenate(Axis(0), &parts.iter().map(|p| p.value.view()).collect::<Vec<_>>()).map_err(err)?,
            game_id: concatenate(Axis(0), &parts.iter().map(|p| p.game_id.view()).collect::<Vec<_>>()).map_err(err)?,
            ply: concatenate(Axis(0), &parts.iter().map(|p| p.ply.view()).collect::<Vec<_>>()).map_err(err)?,
            weight: concatenate(Axis(0), &parts.iter().map(|p| p.weight.view()).collect::<Vec<_>>()).map_err(err)?,
            moves_left: concat_optional(parts, |p| p.moves_left.as_ref()).map_err(err)?,
            score: concat_optional(parts, |p| p.score.as_ref()).map_err(err)?,
            values: concat_values(parts).map_err(err)?,
        })
    }
}

/// The `values` arrays of the parts with rows, joined; `None` when one of
/// them lacks it (as [`concat_optional`]).
fn concat_values(parts: &[&ShardData]) -> Result<Option<Array2<f32>>, ndarray::ShapeError> {
    let with_rows: Vec<&ShardData> = parts.iter().copied().filter(|p| !p.is_empty()).collect();
    let views: Option<Vec<_>> = with_rows.iter().map(|p| p.values.as_ref().map(|a| a.view())).collect();
    match views {
        Some(v) if !v.is_empty() => ndarray::concatenate(ndarray::Axis(0), &v).map(Some),
        _ => Ok(parts.iter().find_map(|p| p.values.as_ref()).filter(|_| with_rows.is_empty()).cloned()),
    }
}

/// The optional array `get` of every part with rows, joined; `None` when one
/// of them lacks it (or no part has rows and none has it).
fn concat_optional(
    parts: &[&ShardData],
    get: impl Fn(&ShardData) -> Option<&Array1<f32>>,
) -> Result<Option<Array1<f32>>, ndarray::ShapeError> {
    let with_rows: Vec<&ShardData> = parts.iter().copied().filter(|p| !p.is_empty()).collect();
    let views: Option<Vec<_>> = with_rows.iter().map(|p| get(p).map(|a| a.view())).collect();
    match views {
        Some(v) if !v.is_empty() => ndarray::concatenate(ndarray::Axis(0), &v).map(Some),
        _ if with_rows.is_empty() && parts.iter().all(|p| get(p).is_some()) => Ok(Some(Array1::zeros(0))),
        _ => Ok(None),
    }
}

/// Writes `data` to `path` atomically (temporary file + rename).
///
/// # Errors
/// [`ShardError::Io`] or [`ShardError::Corrupt`] (npz encoding failure).
pub fn write_shard(path: &Path, data: &ShardData) -> Result<(), ShardError> {
    let p = path.display().to_string();
    let io = |source| ShardError::Io { path: p.clone(), source };
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    fs::create_dir_all(dir).map_err(io)?;
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("shard.npz");
    let tmp = dir.join(format!(".tmp-{}-{name}", std::process::id()));
    // The archive is built in memory, then written in one go: a write that fails (a full disk)
    // is one I/O error, and the temporary is removed.
    let enc = |e: ndarray_npy::WriteNpzError| ShardError::Encode { path: p.clone(), message: e.to_string() };
    let mut npz = NpzWriter::new_compressed(std::io::Cursor::new(Vec::new()));
    npz.add_array("format_version", &Array1::from_elem(1, SHARD_FORMAT_VERSION)).map_err(enc)?;
    npz.add_array("planes", &data.planes).map_err(enc)?;
    npz.add_array("policy", &data.policy).map_err(enc)?;
    npz.add_array("legal", &data.legal).map_err(enc)?;
    npz.add_array("value", &data.value).map_err(enc)?;
    npz.add_array("game_id", &data.game_id).map_err(enc)?;
    npz.add_array("ply", &data.ply).map_err(enc)?;
    npz.add_array("weight", &data.weight).map_err(enc)?;
    if let Some(a) = &data.moves_left {
        npz.add_array("moves_left", a).map_err(enc)?;
    }
    if let Some(a) = &data.score {
        npz.add_array("score", a).map_err(enc)?;
    }
    if let Some(a) = &data.values {
        npz.add_array("values", a).map_err(enc)?;
    }
    let bytes = npz.finish().map_err(enc)?.into_inner();
    let written = File::create(&tmp)
        .and_then(|mut f| {
            f.write_all(&bytes)?;
            f.sync_all()
        })
        .and_then(|()| fs::rename(&tmp, path));
    if written.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    written.map_err(io)
}

/// The number of samples in a shard, read from its `value` array alone
/// (cheap: for counting the positions a run has produced).
///
/// # Errors
/// [`ShardError`] naming the file and what is wrong.
pub fn shard_len(path: &Path) -> Result<usize, ShardError> {
    Ok(read_array::<f32>(path, "value")?.len())
}

/// The game id of every sample of a shard, read from its `game_id` array
/// alone: cheap (8 bytes per sample), and it finds a truncated file (its zip
/// directory is at the end) and a damaged `game_id` array; damage elsewhere
/// in the file is found when the trainer reads it ([`read_shard`]).
///
/// # Errors
/// [`ShardError`] naming the file and what is wrong.
pub fn shard_game_ids(path: &Path) -> Result<Vec<i64>, ShardError> {
    Ok(read_array::<i64>(path, "game_id")?.to_vec())
}

/// Checks, before any array is read, that the `.npy` header of every entry
/// of the shard at `path` claims no more bytes than its entry holds: a
/// damaged header (a shape of 10^12 rows) would otherwise make the reader
/// allocate what it claims and abort the process.
///
/// # Errors
/// [`ShardError::Corrupt`] naming the array and both sizes; [`ShardError::Io`].
fn check_array_sizes(path: &Path) -> Result<(), ShardError> {
    use std::io::Read;
    let p = path.display().to_string();
    let corrupt = |message: String| ShardError::Corrupt { path: p.clone(), message };
    let file = File::open(path).map_err(|source| ShardError::Io { path: p.clone(), source })?;
    let mut zip = zip::ZipArchive::new(file).map_err(|e| corrupt(e.to_string()))?;
    for i in 0..zip.len() {
        let mut entry = zip.by_index(i).map_err(|e| corrupt(e.to_string()))?;
        let name = entry.name().trim_end_matches(".npy").to_string();
        let holds = entry.size();
        // Magic (6), version (2), header length (2 in version 1, 4 after), then the header text.
        let mut head = [0u8; 12];
        entry.read_exact(&mut head[..10]).map_err(|e| corrupt(format!("{name}: {e}")))?;
        if &head[..6] != b"\x93NUMPY" {
            return Err(corrupt(format!("{name}: not a .npy array")));
        }
        let (len, start) = if head[6] == 1 {
            (u64::from(u16::from_le_bytes([head[8], head[9]])), 10)
        } else {
            entry.read_exact(&mut head[10..12]).map_err(|e| corrupt(format!("{name}: {e}")))?;
            (u64::from(u32::from_le_bytes([head[8], head[9], head[10], head[11]])), 12)
        };
        if len > 64 * 1024 || start + len > holds {
            return Err(corrupt(format!("{name}: its .npy header length {len} does not fit its {holds} bytes")));
        }
        let mut text = vec![0u8; len as usize];
        entry.read_exact(&mut text).map_err(|e| corrupt(format!("{name}: {e}")))?;
        let text = String::from_utf8_lossy(&text);
        let field = |key: &str| -> Option<String> {
            let at = text.find(&format!("'{key}'"))? + key.len() + 2;
            let rest = text[at..].trim_start().strip_prefix(':')?.trim_start();
            Some(rest.to_string())
        };
        let item: u64 = field("descr")
            .and_then(|d| d.trim_start_matches(['\'', '<', '>', '|', '=']).get(1..).map(str::to_string))
            .and_then(|d| d.chars().take_while(char::is_ascii_digit).collect::<String>().parse().ok())
            .ok_or_else(|| corrupt(format!("{name}: its .npy header has no readable 'descr'")))?;
        let shape = field("shape")
            .and_then(|s| Some(s.strip_prefix('(')?.split(')').next()?.to_string()))
            .ok_or_else(|| corrupt(format!("{name}: its .npy header has no readable 'shape'")))?;
        let mut bytes = Some(item);
        for d in shape.split(',').map(str::trim).filter(|d| !d.is_empty()) {
            let d: u64 = d.parse().map_err(|_| corrupt(format!("{name}: shape ({shape}) is not a list of sizes")))?;
            bytes = bytes.and_then(|b| b.checked_mul(d));
        }
        // A zip entry's declared size can lie too: deflate expands at most about 1032 times.
        let plausible = entry.compressed_size().saturating_mul(1100).saturating_add(1 << 20);
        match bytes {
            Some(b) if b <= holds - start - len && b <= plausible => {}
            _ => {
                return Err(corrupt(format!(
                    "{name}: its header claims shape ({shape}), more than the {} bytes its entry holds",
                    holds - start - len
                )))
            }
        }
    }
    Ok(())
}

/// One one-dimensional array of a shard, by name (without `.npy`).
fn read_array<T: ndarray_npy::ReadableElement>(path: &Path, name: &str) -> Result<Array1<T>, ShardError> {
    let p = path.display().to_string();
    let corrupt = |message: String| ShardError::Corrupt { path: p.clone(), message };
    check_array_sizes(path)?;
    let file = File::open(path).map_err(|source| ShardError::Io { path: p.clone(), source })?;
    let mut npz = NpzReader::new(file).map_err(|e| corrupt(e.to_string()))?;
    npz.by_name(&format!("{name}.npy")).map_err(|e| corrupt(format!("{name}: {e}")))
}

/// Reads a shard for a game with `input_shape` and `num_actions` and checks
/// its structure (arrays, version, shapes). The content of each sample is
/// checked by [`check_samples`].
///
/// # Errors
/// [`ShardError::Corrupt`] naming what is wrong (unreadable zip, missing
/// array, wrong version or shape); [`ShardError::Io`].
pub fn read_shard(path: &Path, input_shape: [usize; 3], num_actions: usize) -> Result<ShardData, ShardError> {
    let p = path.display().to_string();
    let corrupt = |message: String| ShardError::Corrupt { path: p.clone(), message };
    check_array_sizes(path)?;
    let file = File::open(path).map_err(|source| ShardError::Io { path: p.clone(), source })?;
    let mut npz = NpzReader::new(file).map_err(|e| corrupt(e.to_string()))?;
    let version: Array1<i32> =
        npz.by_name("format_version.npy").map_err(|e| corrupt(format!("format_version: {e}")))?;
    if version.first() != Some(&SHARD_FORMAT_VERSION) {
        return Err(corrupt(format!("format_version {version} is not {SHARD_FORMAT_VERSION}")));
    }
    let planes: Array4<f32> = npz.by_name("planes.npy").map_err(|e| corrupt(format!("planes: {e}")))?;
    let policy: Array2<f32> = npz.by_name("policy.npy").map_err(|e| corrupt(format!("policy: {e}")))?;
    let legal: Array2<u8> = npz.by_name("legal.npy").map_err(|e| corrupt(format!("legal: {e}")))?;
    let value: Array1<f32> = npz.by_name("value.npy").map_err(|e| corrupt(format!("value: {e}")))?;
    let game_id: Array1<i64> = npz.by_name("game_id.npy").map_err(|e| corrupt(format!("game_id: {e}")))?;
    let ply: Array1<i32> = npz.by_name("ply.npy").map_err(|e| corrupt(format!("ply: {e}")))?;
    // The number of samples is the planes' first dimension; every other
    // array is checked against it, so a shortened one is named itself.
    let n = planes.shape()[0];
    if value.len() != n {
        return Err(corrupt(format!("value length {}, expected {n} (the samples in planes)", value.len())));
    }
    let names = npz.names().map_err(|e| corrupt(e.to_string()))?;
    let has = |name: &str| names.iter().any(|x| x == name); // `names` strips the ".npy" suffix
    let (has_weight, has_moves_left, has_score) = (has("weight"), has("moves_left"), has("score"));
    // Optional arrays (added after the layout's first shards), each `[N]` float32.
    let mut optional = |name: &str, present: bool| -> Result<Option<Array1<f32>>, ShardError> {
        if !present {
            return Ok(None);
        }
        let a: Array1<f32> = npz.by_name(&format!("{name}.npy")).map_err(|e| corrupt(format!("{name}: {e}")))?;
        if a.len() != n {
            return Err(corrupt(format!("{name} length {}, expected {n}", a.len())));
        }
        Ok(Some(a))
    };
    // Weights read as all ones when absent.
    let weight = optional("weight", has_weight)?.unwrap_or_else(|| Array1::ones(n));
    let moves_left = optional("moves_left", has_moves_left)?;
    let score = optional("score", has_score)?;
    let values: Option<Array2<f32>> = if has("values") {
        let a: Array2<f32> = npz.by_name("values.npy").map_err(|e| corrupt(format!("values: {e}")))?;
        if a.nrows() != n || !(3..=martian_rules::MAX_PLAYERS).contains(&a.ncols()) {
            return Err(corrupt(format!(
                "values shape {:?}, expected [{n}, P] with P in 3..={}",
                a.shape(),
                martian_rules::MAX_PLAYERS
            )));
        }
        Some(if a.is_standard_layout() { a } else { a.as_standard_layout().into_owned() })
    } else {
        None
    };
    let [c, h, w] = input_shape;
    if planes.shape() != [n, c, h, w] {
        return Err(corrupt(format!("planes shape {:?}, expected {:?}", planes.shape(), [n, c, h, w])));
    }
    if policy.shape() != [n, num_actions] {
        return Err(corrupt(format!("policy shape {:?}, expected {:?}", policy.shape(), [n, num_actions])));
    }
    if legal.shape() != policy.shape() {
        return Err(corrupt(format!("legal shape {:?}, expected {:?}", legal.shape(), policy.shape())));
    }
    if game_id.len() != n || ply.len() != n {
        return Err(corrupt(format!(
            "game_id length {} / ply length {}, expected {n} (the samples in planes)",
            game_id.len(),
            ply.len()
        )));
    }
    // A hand-made file may be in Fortran order; readers index rows of the standard (C) layout.
    let planes = if planes.is_standard_layout() { planes } else { planes.as_standard_layout().into_owned() };
    let policy = if policy.is_standard_layout() { policy } else { policy.as_standard_layout().into_owned() };
    let legal = if legal.is_standard_layout() { legal } else { legal.as_standard_layout().into_owned() };
    Ok(ShardData { planes, policy, legal, value, game_id, ply, weight, moves_left, score, values })
}

/// Tolerance on the sum of a policy target (it must be 1 within this).
pub const POLICY_SUM_TOLERANCE: f32 = 1e-3;

/// The result of [`check_samples`]: which rows of a shard are fit for training.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SampleCheck {
    /// `ok[i]` is true when row `i` passed every check.
    pub ok: Vec<bool>,
    /// Count of rows failing each check, by a short description.
    pub problems: std::collections::BTreeMap<&'static str, usize>,
    /// Set when the whole shard is unfit (e.g. every row has the same planes).
    pub shard_problem: Option<String>,
}

impl SampleCheck {
    /// Rows that failed.
    pub fn bad(&self) -> usize {
        self.ok.iter().filter(|o| !**o).count()
    }

    /// One line describing the failures, e.g. `3 of 120 samples skipped (2 policy
    /// target does not sum to 1, 1 non-finite planes)`; `None` when all passed.
    pub fn describe(&self) -> Option<String> {
        if let Some(p) = &self.shard_problem {
            return Some(format!("shard skipped: {p}"));
        }
        let bad = self.bad();
        (bad > 0).then(|| {
            let list: Vec<String> = self.problems.iter().map(|(k, v)| format!("{v} {k}")).collect();
            format!("{bad} of {} samples skipped ({})", self.ok.len(), list.join(", "))
        })
    }
}

/// Checks the content of every sample of a shard, so that training never
/// sees a target it cannot learn from:
///
/// * planes: finite, and not one constant value (a real position has pieces);
/// * policy: finite, non-negative, zero on actions not marked legal, summing
///   to 1 within [`POLICY_SUM_TOLERANCE`]; at least one legal action;
/// * value: finite and in `[-1, 1]` (so are the per-player `values`); weight:
///   finite and >= 0;
/// * moves left (when the shard has them): finite and >= 0; score (when the
///   shard has them): finite;
/// * the shard: with two or more rows, not every row with identical planes
///   (an encoder that wrote one position everywhere).
pub fn check_samples(d: &ShardData) -> SampleCheck {
    let n = d.len();
    let mut c = SampleCheck { ok: vec![true; n], ..Default::default() };
    fn fail(c: &mut SampleCheck, i: usize, what: &'static str) {
        if c.ok[i] {
            c.ok[i] = false;
            *c.problems.entry(what).or_insert(0) += 1;
        }
    }
    if n == 0 {
        return c;
    }
    let mut all_same = n >= 2;
    let first = d.planes.index_axis(ndarray::Axis(0), 0);
    for i in 0..n {
        let planes = d.planes.index_axis(ndarray::Axis(0), i);
        if planes.iter().any(|v| !v.is_finite()) {
            fail(&mut c, i, "non-finite planes");
        } else if let Some(&v0) = planes.iter().next() {
            if planes.iter().all(|&v| v == v0) {
                fail(&mut c, i, "constant planes");
            }
        }
        if all_same && i > 0 && planes != first {
            all_same = false;
        }
        let pol = d.policy.index_axis(ndarray::Axis(0), i);
        let legal = d.legal.index_axis(ndarray::Axis(0), i);
        if pol.iter().any(|v| !v.is_finite() || *v < 0.0) {
            fail(&mut c, i, "non-finite or negative policy target");
        } else if pol.iter().zip(legal.iter()).any(|(&p, &l)| p > 0.0 && l == 0) {
            fail(&mut c, i, "policy target on an illegal action");
        } else if (pol.sum() - 1.0).abs() > POLICY_SUM_TOLERANCE {
            fail(&mut c, i, "policy target does not sum to 1");
        }
        if !legal.iter().any(|&l| l != 0) {
            fail(&mut c, i, "no legal action");
        }
        let v = d.value[i];
        if !(v.is_finite() && (-1.0..=1.0).contains(&v)) {
            fail(&mut c, i, "value target not finite or outside [-1, 1]");
        }
        if d.values.as_ref().is_some_and(|a| a.row(i).iter().any(|v| !(v.is_finite() && (-1.0..=1.0).contains(v)))) {
            fail(&mut c, i, "per-player value target not finite or outside [-1, 1]");
        }
        let w = d.weight[i];
        if !(w.is_finite() && w >= 0.0) {
            fail(&mut c, i, "sampling weight not finite or negative");
        }
        if let Some(m) = d.moves_left.as_ref().map(|a| a[i]) {
            if !(m.is_finite() && m >= 0.0) {
                fail(&mut c, i, "moves-left target not finite or negative");
            }
        }
        if d.score.as_ref().is_some_and(|a| !a[i].is_finite()) {
            fail(&mut c, i, "score target not finite");
        }
    }
    if all_same {
        c.shard_problem = Some(format!("all {n} samples have identical input planes"));
        c.ok.iter_mut().for_each(|o| *o = false);
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A shard whose `planes` header claims 10^12 rows (the bytes of 26) is
    /// refused naming the array, before anything is allocated (it aborted
    /// the process with a failed allocation of 1.4 PB before).
    #[test]
    fn a_header_that_claims_more_than_its_bytes_is_refused() {
        use std::io::{Read, Write};
        let dir = tempfile::tempdir().unwrap();
        let good = dir.path().join("good.npz");
        let n = 3;
        let data = ShardData {
            planes: Array4::zeros((n, 2, 3, 3)),
            policy: Array2::from_elem((n, 4), 0.25),
            legal: Array2::ones((n, 4)),
            value: Array1::zeros(n),
            game_id: Array1::zeros(n),
            ply: Array1::zeros(n),
            weight: Array1::ones(n),
            moves_left: None,
            score: None,
            values: None,
        };
        write_shard(&good, &data).unwrap();
        let mut zin = zip::ZipArchive::new(File::open(&good).unwrap()).unwrap();
        let bad = dir.path().join("bad.npz");
        let mut zout = zip::ZipWriter::new(File::create(&bad).unwrap());
        let opts = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
        for i in 0..zin.len() {
            let mut e = zin.by_index(i).unwrap();
            let name = e.name().to_string();
            let mut bytes = Vec::new();
            e.read_to_end(&mut bytes).unwrap();
            if name == "planes.npy" {
                let hl = usize::from(u16::from_le_bytes([bytes[8], bytes[9]]));
                let text = std::str::from_utf8(&bytes[10..10 + hl]).unwrap();
                let edited =
                    text.replacen("(3, 2, 3, 3)", "(1000000000000, 2, 3, 3)", 1).replacen("            ", "", 1);
                assert_eq!(edited.len(), text.len(), "the header keeps its length: {text:?}");
                bytes = [&bytes[..10], edited.as_bytes(), &bytes[10 + hl..]].concat();
            }
            zout.start_file(name, opts).unwrap();
            zout.write_all(&bytes).unwrap();
        }
        zout.finish().unwrap();
        assert!(read_shard(&good, [2, 3, 3], 4).is_ok());
        let e = read_shard(&bad, [2, 3, 3], 4).unwrap_err().to_string();
        assert!(e.contains("bad.npz") && e.contains("planes") && e.contains("1000000000000"), "{e}");
        assert!(shard_game_ids(&bad).is_err());
    }

    /// An array one sample short is named itself (a shortened `value` was
    /// blamed on `weight`, the first array checked against it).
    #[test]
    fn a_shortened_array_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let n = 3;
        for short in ["value", "weight", "game_id", "ply", "moves_left"] {
            let len = |name: &str| if name == short { n - 1 } else { n };
            let data = ShardData {
                planes: Array4::zeros((n, 2, 3, 3)),
                policy: Array2::from_elem((n, 4), 0.25),
                legal: Array2::ones((n, 4)),
                value: Array1::zeros(len("value")),
                game_id: Array1::zeros(len("game_id")),
                ply: Array1::zeros(len("ply")),
                weight: Array1::ones(len("weight")),
                moves_left: Some(Array1::ones(len("moves_left"))),
                score: None,
                values: None,
            };
            let path = dir.path().join(format!("{short}.npz"));
            write_shard(&path, &data).unwrap();
            let e = read_shard(&path, [2, 3, 3], 4).unwrap_err().to_string();
            assert!(e.contains(&format!("{short} length 2")) && e.contains("expected 3"), "{short}: {e}");
        }
    }
}
