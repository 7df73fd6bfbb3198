//! Replay shards: `.npz` files (NumPy zip archives, readable with
//! `numpy.load`) of training samples. Layout, version 2:
//!
//! | array            | dtype   | shape                  | meaning |
//! |------------------|---------|------------------------|---------|
//! | `format_version` | int32   | `[1]`                  | 1 |
//! | `planes`         | float32 | `[N, planes, rows, cols]` | network input (`GameState::encode`) |
//! | `policy`         | float32 | `[N, NUM_ACTIONS]`     | root visit distribution (policy target), sums to 1 |
//! | `legal`          | uint8   | `[N, NUM_ACTIONS]`     | 1 for the action of every legal move (the policy loss is a softmax over these) |
//! | `value`          | float32 | `[N]`                  | final result for the side to move at that ply: +1 win, 0 draw, -1 loss |
//! | `game_id`        | int64   | `[N]`                  | game id (see the game records) |
//! | `ply`            | int32   | `[N]`                  | ply of the sample within its game |
//!
//! Shards are written to a temporary name and renamed, so a reader never sees
//! a partial file; a file that still fails to parse (truncated copy, disk
//! error) is reported by [`read_shard`] and skipped by the trainer.

use std::fs::{self, File};
use std::io::BufWriter;
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
    /// `[N]` value targets (+1/0/-1 for the side to move).
    pub value: Array1<f32>,
    /// `[N]` game ids.
    pub game_id: Array1<i64>,
    /// `[N]` plies.
    pub ply: Array1<i32>,
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
    {
        let file = File::create(&tmp).map_err(io)?;
        let mut npz = NpzWriter::new_compressed(BufWriter::new(file));
        let enc = |e: ndarray_npy::WriteNpzError| ShardError::Corrupt { path: p.clone(), message: e.to_string() };
        npz.add_array("format_version", &Array1::from_elem(1, SHARD_FORMAT_VERSION)).map_err(enc)?;
        npz.add_array("planes", &data.planes).map_err(enc)?;
        npz.add_array("policy", &data.policy).map_err(enc)?;
        npz.add_array("legal", &data.legal).map_err(enc)?;
        npz.add_array("value", &data.value).map_err(enc)?;
        npz.add_array("game_id", &data.game_id).map_err(enc)?;
        npz.add_array("ply", &data.ply).map_err(enc)?;
        let w = npz.finish().map_err(enc)?;
        let f = w.into_inner().map_err(|e| ShardError::Io { path: p.clone(), source: e.into_error() })?;
        f.sync_all().map_err(io)?;
    }
    fs::rename(&tmp, path).map_err(io)
}

/// Reads and validates a shard for a game with `input_shape` and `num_actions`.
///
/// # Errors
/// [`ShardError::Corrupt`] naming what is wrong (unreadable zip, missing
/// array, wrong version or shape, non-finite values); [`ShardError::Io`].
pub fn read_shard(path: &Path, input_shape: [usize; 3], num_actions: usize) -> Result<ShardData, ShardError> {
    let p = path.display().to_string();
    let corrupt = |message: String| ShardError::Corrupt { path: p.clone(), message };
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
    let n = value.len();
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
    if policy.iter().zip(legal.iter()).any(|(&p, &l)| p > 0.0 && l == 0) {
        return Err(corrupt("policy target on an action marked illegal".into()));
    }
    if game_id.len() != n || ply.len() != n {
        return Err(corrupt("game_id/ply length differs from value".into()));
    }
    if value.iter().any(|v| !(-1.0..=1.0).contains(v)) {
        return Err(corrupt("value target outside [-1, 1]".into()));
    }
    if policy.iter().any(|v| !v.is_finite() || *v < 0.0) || planes.iter().any(|v| !v.is_finite()) {
        return Err(corrupt("non-finite or negative entries".into()));
    }
    // A hand-made file may be in Fortran order; readers index rows of the standard (C) layout.
    let planes = if planes.is_standard_layout() { planes } else { planes.as_standard_layout().into_owned() };
    let policy = if policy.is_standard_layout() { policy } else { policy.as_standard_layout().into_owned() };
    let legal = if legal.is_standard_layout() { legal } else { legal.as_standard_layout().into_owned() };
    Ok(ShardData { planes, policy, legal, value, game_id, ply })
}
