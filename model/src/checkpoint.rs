//! Checkpoints: weights in `<name>.safetensors` plus a JSON sidecar
//! `<name>.json` ([`CheckpointMeta`]: game, rules, architecture, step, time).
//!
//! Both files are written atomically (temporary file in the same directory,
//! then rename); the sidecar is written last, so a checkpoint whose `.json`
//! exists is complete. Loading compares the sidecar with the expected game,
//! rules and architecture and refuses a mismatch, naming every difference
//! (each differing rules switch and architecture field). It also checks the
//! weights file against the network that the declared architecture builds,
//! both ways: every missing tensor, every unexpected tensor and every shape
//! mismatch is named (format version 2 sidecars also list the tensors, which
//! are checked the same way). From format version 3 the sidecar carries the
//! weights file's CRC-64 ([`weights_checksum`]), so that a file changed after
//! it was written (a flipped bit, a partial copy, another network's weights
//! under this name) is refused, named, before it is loaded.
//!
//! Which architecture a command uses is decided in one place, [`ConfigModel`]:
//! the checkpoint's own architecture, with a notice naming the fields in which
//! a config's `[model]` table differs, except where the config fixes the
//! architecture (a run directory being trained), where a difference is an error.
//! The auxiliary heads (`moves_left_head`, `score_head`) are architecture
//! fields like the others: a run trained without them refuses a checkpoint
//! with them (and the reverse), naming the key; a command that only plays
//! uses the checkpoint's heads (the search never reads them). Sidecars
//! written before the heads existed read as both off.

use std::collections::BTreeMap;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use martian_rules::{describe_differences, field_differences, GameKind, GameState};
use serde::{Deserialize, Serialize};
use tch::{nn, Device};

use crate::config::ModelConfig;
use crate::error::ModelError;
use crate::resnet::PolicyValueNet;

/// Version of the checkpoint sidecar layout written by this program.
///
/// * 1: game, rules, architecture, shapes, step, time, parent.
/// * 2: adds `tensors`, the name and shape of every tensor in the weights file.
/// * 3: adds `weights_crc64`, the checksum of the weights file ([`weights_checksum`]).
pub const CHECKPOINT_FORMAT_VERSION: u32 = 3;

/// The first sidecar layout that must carry `weights_crc64`.
const FIRST_VERSION_WITH_CHECKSUM: u32 = 3;

/// CRC-64/ECMA-182 (the `crc` crate's `CRC_64_ECMA_182`), the checksum of a
/// checkpoint's weights file.
const WEIGHTS_CRC: crc::Crc<u64> = crc::Crc::<u64>::new(&crc::CRC_64_ECMA_182);

/// The oldest sidecar layout that still loads (version 1, without `tensors`:
/// the tensor list is then computed from the declared architecture).
pub const OLDEST_CHECKPOINT_FORMAT_VERSION: u32 = 1;

/// Tensor name -> shape, e.g. `"stem.conv.weight": [64, 24, 3, 3]`, in name order.
pub type TensorShapes = BTreeMap<String, Vec<i64>>;

/// The JSON sidecar of a checkpoint.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckpointMeta {
    /// Layout version ([`CHECKPOINT_FORMAT_VERSION`]; version 1 still loads).
    pub format_version: u32,
    /// Which game the network plays.
    pub game: GameKind,
    /// The rules configuration it was trained under (the game's `Rules` as JSON).
    pub rules: serde_json::Value,
    /// Architecture (`precision` always fp32, so not written: the weights
    /// are fp32 whatever precision trained them).
    pub model: ModelConfig,
    /// Input shape `[planes, rows, cols]`.
    pub input_shape: [usize; 3],
    /// Width of the policy head.
    pub num_actions: usize,
    /// Training steps (optimizer updates) taken to produce these weights.
    pub step: u64,
    /// Seconds since the Unix epoch when written.
    pub created_unix_s: u64,
    /// File name of the checkpoint this one was trained from, if any.
    pub parent: Option<String>,
    /// Name and shape of every tensor in the weights file (format version 2;
    /// absent in version 1 sidecars). Written from the network on save.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tensors: Option<TensorShapes>,
    /// The weights file's checksum as 16 lower-case hex digits
    /// ([`weights_checksum`]; format version 3, required there; absent in
    /// older sidecars, whose weights load unchecked). Written on save.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weights_crc64: Option<String>,
}

/// The checksum of a weights file's bytes: CRC-64/ECMA-182 as 16 lower-case
/// hex digits (the form of [`CheckpointMeta::weights_crc64`]).
pub fn weights_checksum(bytes: &[u8]) -> String {
    format!("{:016x}", WEIGHTS_CRC.checksum(bytes))
}

/// Checks the weights file of the checkpoint at `weights` against the
/// checksum its sidecar records (format version 3; older sidecars have none
/// and pass), without loading the network: for callers that judge a
/// checkpoint before using it (a run's resume). [`Checkpoint::load`] makes
/// the same check.
///
/// # Errors
/// The sidecar's errors ([`Checkpoint::read_meta`]); [`ModelError::Io`] if
/// the weights are unreadable; [`ModelError::BadWeights`] naming both
/// checksums when they differ.
pub fn verify_checksum(weights: &Path) -> Result<(), ModelError> {
    match Checkpoint::read_meta(weights)?.weights_crc64 {
        Some(want) => check_checksum(weights, &want, &sidecar_path(weights)),
        None => Ok(()),
    }
}

/// Reads the weights file at `weights` and checks it against the checksum
/// `want` (16 hex digits) that the description file `recorded_in` (a
/// checkpoint's sidecar, a bundle's `model.json`) records.
///
/// # Errors
/// [`ModelError::Io`] if unreadable; [`ModelError::BadWeights`] naming the
/// file, `recorded_in` and both checksums when they differ (the file was
/// changed or damaged after it was written).
pub(crate) fn check_checksum(weights: &Path, want: &str, recorded_in: &Path) -> Result<(), ModelError> {
    let bytes = fs::read(weights).map_err(io(format!("reading {}", weights.display())))?;
    let got = weights_checksum(&bytes);
    if got != want.to_ascii_lowercase() {
        return Err(ModelError::BadWeights {
            path: weights.display().to_string(),
            message: format!(
                "its CRC-64 is {got}, {} records {want}: the file is corrupt or was changed after it was written",
                recorded_in.display()
            ),
        });
    }
    Ok(())
}

/// What a command's configuration says about the network architecture when it
/// loads a checkpoint. One rule for every command: the checkpoint's
/// architecture is used, except where the config fixes it.
#[derive(Copy, Clone, Debug)]
pub enum ConfigModel<'a> {
    /// No configured architecture (`play`, `export`, `engine`): the checkpoint's is used.
    Absent,
    /// A config whose `[model]` table only shapes new networks (`evaluate`,
    /// `selfplay --out`): the checkpoint's architecture is used, and a notice
    /// names the fields in which the table differs.
    Default(&'a ModelConfig),
    /// The config of a run directory that the command writes into (`pipeline`,
    /// `train`, `selfplay --run-dir`): the architecture must be this one; a
    /// difference is an error naming the fields.
    Fixed(&'a ModelConfig),
}

/// The fields in which two architectures differ, `field checkpoint vs config`
/// (e.g. `blocks 1 vs 2`); empty when equal. `precision` is not compared
/// (a run setting, not part of the architecture: [`ModelConfig::architecture`]).
pub fn model_differences(checkpoint: &ModelConfig, config: &ModelConfig) -> Vec<String> {
    field_differences(&checkpoint.architecture(), &config.architecture())
}

/// The notice printed when a config's `[model]` differs from the architecture
/// of the checkpoint at `weights` that is used instead; `None` when they agree.
pub fn architecture_notice(weights: &Path, checkpoint: &ModelConfig, config: &ModelConfig) -> Option<String> {
    let d = model_differences(checkpoint, config);
    (!d.is_empty()).then(|| {
        format!(
            "{}: the checkpoint's architecture is used; {}",
            weights.display(),
            describe_differences("the config's [model] fields", ("checkpoint", "config"), &d)
        )
    })
}

/// Name and shape of every variable of `vs` (the tensors `vs.save` writes).
pub fn tensor_shapes(vs: &nn::VarStore) -> TensorShapes {
    vs.variables().into_iter().map(|(name, t)| (name, t.size())).collect()
}

/// Compares the tensors `found` (in a file, or listed in a sidecar) with the
/// tensors `expected` by the network of the declared architecture, both ways.
/// Returns one entry for the missing tensors, one for the unexpected ones (each
/// naming all of them) and one per shape mismatch; empty when they agree.
pub fn tensor_differences(expected: &TensorShapes, found: &TensorShapes) -> Vec<String> {
    let missing: Vec<&str> = expected.keys().filter(|k| !found.contains_key(*k)).map(String::as_str).collect();
    let unexpected: Vec<&str> = found.keys().filter(|k| !expected.contains_key(*k)).map(String::as_str).collect();
    let mut out = Vec::new();
    if !missing.is_empty() {
        out.push(format!("missing tensors ({}): {}", missing.len(), missing.join(", ")));
    }
    if !unexpected.is_empty() {
        out.push(format!("unexpected tensors ({}): {}", unexpected.len(), unexpected.join(", ")));
    }
    for (name, want) in expected {
        if let Some(got) = found.get(name).filter(|got| *got != want) {
            out.push(format!("tensor {name} has shape {got:?}, the architecture needs {want:?}"));
        }
    }
    out
}

/// Largest safetensors header accepted (bytes); real headers of these networks are a few KiB.
const MAX_SAFETENSORS_HEADER: u64 = 64 << 20;

/// One tensor of a safetensors header: its dtype (`F32`, `I64`, ...) and shape.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorEntry {
    /// The safetensors dtype name.
    pub dtype: String,
    /// The shape.
    pub shape: Vec<i64>,
}

/// Bytes per element of a safetensors dtype (`None`: not one this project reads).
fn dtype_size(dtype: &str) -> Option<u64> {
    Some(match dtype {
        "F64" | "I64" | "U64" => 8,
        "F32" | "I32" | "U32" => 4,
        "F16" | "BF16" | "I16" | "U16" => 2,
        "I8" | "U8" | "BOOL" => 1,
        _ => return None,
    })
}

/// The safetensors dtype of a libtorch kind (for the network's variables).
fn kind_dtype(kind: tch::Kind) -> &'static str {
    match kind {
        tch::Kind::Double => "F64",
        tch::Kind::Float => "F32",
        tch::Kind::Half => "F16",
        tch::Kind::BFloat16 => "BF16",
        tch::Kind::Int64 => "I64",
        tch::Kind::Int => "I32",
        _ => "?",
    }
}

/// Reads and checks the header of the safetensors file at `path` (8-byte
/// little-endian header length, then a JSON object `name -> {dtype, shape,
/// data_offsets}`) without reading the data: the header fits the file, is a
/// UTF-8 JSON object, and every tensor has a known dtype, a shape of
/// non-negative sizes, and a byte range `[begin, end)` inside the data
/// section whose length is the shape's element count times the dtype's size;
/// no two ranges overlap and together they cover the data section (the
/// format allows no holes). A file that passes cannot make libtorch read out of
/// bounds (the dtype against the network's is [`check_tensors`]' check).
///
/// # Errors
/// [`ModelError::Io`] if unreadable; [`ModelError::BadWeights`] naming the
/// file, the tensor and what is wrong.
pub fn read_safetensors_header(path: &Path) -> Result<BTreeMap<String, TensorEntry>, ModelError> {
    let bad = |message: String| ModelError::BadWeights { path: path.display().to_string(), message };
    let mut f = fs::File::open(path).map_err(io(format!("opening weights {}", path.display())))?;
    let len = f.metadata().map_err(io(format!("reading {}", path.display())))?.len();
    let mut n = [0u8; 8];
    f.read_exact(&mut n).map_err(|_| bad("not a safetensors file: shorter than its 8-byte header length".into()))?;
    let n = u64::from_le_bytes(n);
    if n > MAX_SAFETENSORS_HEADER || n > len.saturating_sub(8) {
        return Err(bad(format!("not a safetensors file: header length {n} does not fit in the file ({len} bytes)")));
    }
    let mut header = vec![0u8; n as usize];
    f.read_exact(&mut header).map_err(io(format!("reading {}", path.display())))?;
    let header = std::str::from_utf8(&header)
        .map_err(|e| bad(format!("safetensors header is not UTF-8 (at byte {})", e.valid_up_to())))?;
    let header: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(header).map_err(|e| bad(format!("safetensors header is not a JSON object: {e}")))?;
    let data_len = len - 8 - n;
    let mut out = BTreeMap::new();
    let mut ranges: Vec<(u64, u64, String)> = Vec::new();
    for (name, v) in header {
        if name == "__metadata__" {
            continue;
        }
        let dtype = v
            .get("dtype")
            .and_then(|d| d.as_str())
            .ok_or_else(|| bad(format!("tensor {name}: missing \"dtype\" in the safetensors header")))?;
        let size = dtype_size(dtype).ok_or_else(|| bad(format!("tensor {name}: unknown dtype {dtype:?}")))?;
        let shape = v
            .get("shape")
            .and_then(|s| s.as_array())
            .and_then(|a| a.iter().map(|d| d.as_i64().filter(|&d| d >= 0)).collect::<Option<Vec<i64>>>())
            .ok_or_else(|| bad(format!("tensor {name}: missing or bad \"shape\" in the safetensors header")))?;
        let offsets = v.get("data_offsets").and_then(|o| o.as_array()).filter(|o| o.len() == 2);
        let (begin, end) = match offsets.map(|o| (o[0].as_u64(), o[1].as_u64())) {
            Some((Some(b), Some(e))) => (b, e),
            _ => return Err(bad(format!("tensor {name}: missing or bad \"data_offsets\" in the safetensors header"))),
        };
        if begin > end {
            return Err(bad(format!("tensor {name}: its data_offsets [{begin}, {end}] are reversed")));
        }
        if end > data_len {
            return Err(bad(format!(
                "tensor {name}: its data would end at byte {end} of the data section, which holds only \
                 {data_len} bytes (the file is truncated)"
            )));
        }
        let elements = shape.iter().try_fold(1u64, |acc, &d| acc.checked_mul(d as u64));
        let want = elements.and_then(|e| e.checked_mul(size));
        if want != Some(end - begin) {
            return Err(bad(format!(
                "tensor {name}: shape {shape:?} of {dtype} needs {} bytes, its data_offsets give {}",
                want.map_or("more than 2^64".to_string(), |w| w.to_string()),
                end - begin
            )));
        }
        ranges.push((begin, end, name.clone()));
        out.insert(name, TensorEntry { dtype: dtype.to_string(), shape });
    }
    ranges.sort();
    for w in ranges.windows(2) {
        if w[1].0 < w[0].1 {
            return Err(bad(format!("tensors {} and {}: their data ranges overlap", w[0].2, w[1].2)));
        }
    }
    // The format indexes the whole data section without holes (a tensor's entry removed from the
    // header leaves one): bytes no tensor owns.
    let mut at = 0;
    for (begin, end, _) in &ranges {
        if *begin != at {
            return Err(bad(format!("bytes {at}..{begin} of the data section belong to no tensor")));
        }
        at = *end;
    }
    if at != data_len {
        return Err(bad(format!("bytes {at}..{data_len} of the data section belong to no tensor")));
    }
    Ok(out)
}

/// The tensor names and shapes of the safetensors file at `path`, its header
/// checked by [`read_safetensors_header`].
///
/// # Errors
/// Those of [`read_safetensors_header`].
pub fn read_safetensors_shapes(path: &Path) -> Result<TensorShapes, ModelError> {
    Ok(read_safetensors_header(path)?.into_iter().map(|(n, e)| (n, e.shape)).collect())
}

/// Checks that every value of every variable of `vs` (loaded from `weights`)
/// is finite: a NaN or an infinity in a weights file means a corrupt file (or
/// a diverged training), and a network with one plays nonsense.
///
/// # Errors
/// [`ModelError::BadWeights`] naming the first tensor with such a value.
pub(crate) fn check_finite(vs: &nn::VarStore, weights: &Path) -> Result<(), ModelError> {
    let mut vars: Vec<(String, tch::Tensor)> = vs.variables().into_iter().collect();
    vars.sort_by(|a, b| a.0.cmp(&b.0));
    for (name, t) in vars {
        let finite = t.isfinite().all().int64_value(&[]) != 0;
        if !finite {
            return Err(ModelError::BadWeights {
                path: weights.display().to_string(),
                message: format!(
                    "tensor {name} holds values that are not finite (NaN or infinity): the file is corrupt"
                ),
            });
        }
    }
    Ok(())
}

/// Checks the tensor list of a sidecar or description (`listed`, if any) and
/// the weights file at `weights` against the network `vs` built from the
/// declared architecture `model`.
///
/// # Errors
/// [`ModelError::Mismatch`] naming every missing, unexpected and mis-shaped
/// tensor; header errors of [`read_safetensors_shapes`].
pub(crate) fn check_tensors(
    weights: &Path,
    listed: Option<&TensorShapes>,
    vs: &nn::VarStore,
    model: &ModelConfig,
) -> Result<TensorShapes, ModelError> {
    let expected = tensor_shapes(vs);
    let arch = || format!("{model:?}").replace("ModelConfig ", "");
    let mut diffs = Vec::new();
    if let Some(listed) = listed {
        let d = tensor_differences(&expected, listed);
        if !d.is_empty() {
            diffs.push(format!(
                "the tensor list of the metadata does not fit its architecture {}: {}",
                arch(),
                d.join("; ")
            ));
        }
    }
    let header = read_safetensors_header(weights)?;
    // A tensor of another dtype than the network's variable (an I32 tensor with the bytes of
    // an F32 one) would reach libtorch's copy: refused here, named.
    let kinds: BTreeMap<String, tch::Kind> = vs.variables().into_iter().map(|(n, t)| (n, t.kind())).collect();
    for (name, e) in &header {
        if let Some(kind) = kinds.get(name) {
            if e.dtype != kind_dtype(*kind) {
                return Err(ModelError::BadWeights {
                    path: weights.display().to_string(),
                    message: format!("tensor {name} is stored as {}, the network needs {}", e.dtype, kind_dtype(*kind)),
                });
            }
        }
    }
    let found: TensorShapes = header.into_iter().map(|(n, e)| (n, e.shape)).collect();
    let d = tensor_differences(&expected, &found);
    if !d.is_empty() {
        diffs.push(format!("the weights file does not fit the declared architecture {}: {}", arch(), d.join("; ")));
    }
    if diffs.is_empty() {
        Ok(expected)
    } else {
        Err(ModelError::Mismatch { path: weights.display().to_string(), differences: diffs.join("; ") })
    }
}

/// A network with its variables and metadata.
pub struct Checkpoint {
    /// The variables (weights and batch-norm statistics).
    pub vs: nn::VarStore,
    /// The network built on `vs`.
    pub net: PolicyValueNet,
    /// Metadata written beside the weights.
    pub meta: CheckpointMeta,
}

/// An owned copy of a checkpoint's network on one device: its own variables
/// and the network built on them. Unlike a [`Checkpoint`] borrowed across
/// threads it can move to a device thread (libtorch tensors are `Send`, not
/// `Sync`), so self-play on several devices runs one replica per device
/// (`NetBackend<NetReplica>`).
pub struct NetReplica {
    vs: nn::VarStore,
    net: PolicyValueNet,
}

impl NetReplica {
    /// The device of the replica's variables.
    pub fn device(&self) -> Device {
        self.vs.device()
    }

    /// The network.
    pub fn net(&self) -> &PolicyValueNet {
        &self.net
    }
}

impl std::borrow::Borrow<PolicyValueNet> for NetReplica {
    fn borrow(&self) -> &PolicyValueNet {
        &self.net
    }
}

/// The sidecar path for a weights path: `x.safetensors` -> `x.json`.
pub fn sidecar_path(weights: &Path) -> PathBuf {
    weights.with_extension("json")
}

pub(crate) fn now_s() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

pub(crate) fn torch(context: impl Into<String>) -> impl FnOnce(tch::TchError) -> ModelError {
    let context = context.into();
    move |source| ModelError::Torch { context, source }
}

pub(crate) fn io(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> ModelError {
    let context = context.into();
    move |source| ModelError::Io { context, source }
}

impl Checkpoint {
    /// A freshly initialised network for game `G` (step 0). `seed` fixes the
    /// initial weights.
    ///
    /// # Errors
    /// [`ModelError::Config`] if `cfg` is out of range or its value head does
    /// not fit the game's value players under `rules`
    /// ([`ModelConfig::validate_for_players`]), or the rules are refused.
    pub fn new_random<G: GameState>(
        rules: &G::Rules,
        cfg: &ModelConfig,
        device: Device,
        seed: i64,
    ) -> Result<Checkpoint, ModelError> {
        let players = G::new_game(rules).map_err(|e| ModelError::Config(e.to_string()))?.num_players();
        cfg.validate_for_players::<G>(players).map_err(ModelError::Config)?;
        tch::manual_seed(seed);
        let vs = nn::VarStore::new(device);
        let net = PolicyValueNet::new(&vs.root(), cfg, G::INPUT_SHAPE, G::NUM_ACTIONS);
        let meta = CheckpointMeta {
            format_version: CHECKPOINT_FORMAT_VERSION,
            game: G::KIND,
            rules: serde_json::to_value(rules).map_err(|e| ModelError::Config(e.to_string()))?,
            model: cfg.architecture(),
            input_shape: G::INPUT_SHAPE,
            num_actions: G::NUM_ACTIONS,
            step: 0,
            created_unix_s: now_s(),
            parent: None,
            tensors: Some(tensor_shapes(&vs)),
            weights_crc64: None,
        };
        Ok(Checkpoint { vs, net, meta })
    }

    /// A copy of the network on `device` (weights and batch-norm statistics
    /// copied bit for bit, so its outputs equal the checkpoint's on the same
    /// device). Building it draws the discarded initial weights from
    /// libtorch's generator, as any new network does.
    ///
    /// # Errors
    /// [`ModelError::Torch`] when the copy fails (e.g. the device is out of memory).
    pub fn replica(&self, device: Device) -> Result<NetReplica, ModelError> {
        let mut vs = nn::VarStore::new(device);
        let net = PolicyValueNet::new(&vs.root(), &self.meta.model, self.meta.input_shape, self.meta.num_actions);
        vs.copy(&self.vs).map_err(torch(format!("copying the network to {device:?}")))?;
        Ok(NetReplica { vs, net })
    }

    /// Reads only the sidecar of the checkpoint at `weights` (`.safetensors` path).
    ///
    /// # Errors
    /// [`ModelError::Io`] if missing, [`ModelError::BadMetadata`] if unparsable.
    pub fn read_meta(weights: &Path) -> Result<CheckpointMeta, ModelError> {
        let side = sidecar_path(weights);
        let text = read_metadata_text(&side)?;
        let mut meta: CheckpointMeta = serde_json::from_str(&text)
            .map_err(|e| ModelError::BadMetadata { path: side.display().to_string(), message: e.to_string() })?;
        // The weights are fp32 whatever precision trained them.
        meta.model = meta.model.architecture();
        if !(OLDEST_CHECKPOINT_FORMAT_VERSION..=CHECKPOINT_FORMAT_VERSION).contains(&meta.format_version) {
            return Err(ModelError::BadMetadata {
                path: side.display().to_string(),
                message: format!(
                    "format_version {} is not supported (expected {OLDEST_CHECKPOINT_FORMAT_VERSION} to \
                     {CHECKPOINT_FORMAT_VERSION})",
                    meta.format_version
                ),
            });
        }
        match &meta.weights_crc64 {
            None if meta.format_version >= FIRST_VERSION_WITH_CHECKSUM => {
                return Err(ModelError::BadMetadata {
                    path: side.display().to_string(),
                    message: format!(
                        "format_version {} needs \"weights_crc64\", the weights file's checksum",
                        meta.format_version
                    ),
                })
            }
            Some(c) if c.len() != 16 || !c.bytes().all(|b| b.is_ascii_hexdigit()) => {
                return Err(ModelError::BadMetadata {
                    path: side.display().to_string(),
                    message: format!("\"weights_crc64\" is {c:?}, expected 16 hex digits"),
                })
            }
            _ => {}
        }
        if meta.step > MAX_STEP {
            return Err(ModelError::BadMetadata {
                path: side.display().to_string(),
                message: format!(
                    "\"step\" is {}, more training steps than any run takes (at most {MAX_STEP})",
                    meta.step
                ),
            });
        }
        Ok(meta)
    }

    /// Loads the checkpoint at `weights` for game `G` under the architecture
    /// rule `model` ([`ConfigModel`]); returns it with the notice to print
    /// when a [`ConfigModel::Default`] config differs from the checkpoint's
    /// architecture (see [`architecture_notice`]).
    ///
    /// # Errors
    /// As [`Checkpoint::load`]; with [`ConfigModel::Fixed`], a different
    /// architecture is a [`ModelError::Mismatch`] naming the fields.
    pub fn load_with<G: GameState>(
        weights: &Path,
        rules: &G::Rules,
        model: ConfigModel<'_>,
        device: Device,
    ) -> Result<(Checkpoint, Option<String>), ModelError> {
        match model {
            ConfigModel::Absent => Ok((Self::load::<G>(weights, rules, None, device)?, None)),
            ConfigModel::Fixed(m) => Ok((Self::load::<G>(weights, rules, Some(m), device)?, None)),
            ConfigModel::Default(m) => {
                let ck = Self::load::<G>(weights, rules, None, device)?;
                let notice = architecture_notice(weights, &ck.meta.model, m);
                Ok((ck, notice))
            }
        }
    }

    /// Loads the checkpoint at `weights` for game `G`, checking that its game
    /// and rules equal `rules` and, when given, its architecture equals `model`,
    /// and that the weights file holds exactly the tensors (names and shapes)
    /// of the declared architecture. Commands go through
    /// [`Checkpoint::load_with`] (one architecture rule for all).
    ///
    /// # Errors
    /// [`ModelError::Mismatch`] naming every differing rules switch and
    /// architecture field (`rules differ (checkpoint vs config): max_plies 500
    /// vs 100`) and every missing, unexpected or mis-shaped tensor; I/O,
    /// metadata or libtorch errors (e.g. a truncated weights file) with the path.
    pub fn load<G: GameState>(
        weights: &Path,
        rules: &G::Rules,
        model: Option<&ModelConfig>,
        device: Device,
    ) -> Result<Checkpoint, ModelError> {
        if !weights.exists() {
            return Err(ModelError::Config(format!(
                "no checkpoint {}: expected a .safetensors file with its .json sidecar",
                weights.display()
            )));
        }
        let meta = Self::read_meta(weights)?;
        let mut diffs = Vec::new();
        if meta.game != G::KIND {
            diffs.push(format!("game: checkpoint {}, config {}", meta.game, G::KIND));
        } else {
            let want = serde_json::to_value(rules).map_err(|e| ModelError::Config(e.to_string()))?;
            let d = martian_rules::value_differences(&meta.rules, &want);
            if !d.is_empty() {
                diffs.push(describe_differences("rules", ("checkpoint", "config"), &d));
            }
        }
        if let Some(m) = model {
            let d = model_differences(&meta.model, m);
            if !d.is_empty() {
                diffs.push(describe_differences("[model] fields", ("checkpoint", "config"), &d));
            }
        }
        if meta.input_shape != G::INPUT_SHAPE {
            diffs.push(format!("input_shape: checkpoint {:?}, game {:?}", meta.input_shape, G::INPUT_SHAPE));
        }
        if meta.num_actions != G::NUM_ACTIONS {
            diffs.push(format!("num_actions: checkpoint {}, game {}", meta.num_actions, G::NUM_ACTIONS));
        }
        if !diffs.is_empty() {
            return Err(ModelError::Mismatch { path: weights.display().to_string(), differences: diffs.join("; ") });
        }
        meta.model.validate_for::<G>().map_err(|message| ModelError::BadMetadata {
            path: sidecar_path(weights).display().to_string(),
            message,
        })?;
        // The value head must fit the value players of the rules it plays under.
        if let Ok(g) = G::new_game(rules) {
            meta.model.validate_for_players::<G>(g.num_players()).map_err(|message| ModelError::Mismatch {
                path: weights.display().to_string(),
                differences: message,
            })?;
        }
        let mut vs = nn::VarStore::new(device);
        let net = PolicyValueNet::new(&vs.root(), &meta.model, G::INPUT_SHAPE, G::NUM_ACTIONS);
        let mut meta = meta;
        meta.tensors = Some(check_tensors(weights, meta.tensors.as_ref(), &vs, &meta.model)?);
        if let Some(want) = &meta.weights_crc64 {
            check_checksum(weights, want, &sidecar_path(weights))?;
        }
        vs.load(weights).map_err(torch(format!("loading checkpoint weights {}", weights.display())))?;
        check_finite(&vs, weights)?;
        Ok(Checkpoint { vs, net, meta })
    }

    /// Writes `weights` (must end in `.safetensors`) and its sidecar atomically;
    /// the sidecar is written in the current layout ([`CHECKPOINT_FORMAT_VERSION`])
    /// with the tensor list of the variables saved and the checksum of the
    /// bytes written ([`weights_checksum`]).
    ///
    /// # Errors
    /// I/O or libtorch errors with the path.
    pub fn save(&self, weights: &Path) -> Result<(), ModelError> {
        if weights.extension().and_then(|e| e.to_str()) != Some("safetensors") {
            return Err(ModelError::Config(format!("checkpoint path {} must end in .safetensors", weights.display())));
        }
        let dir = weights.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
        fs::create_dir_all(dir).map_err(io(format!("creating {}", dir.display())))?;
        let name = weights.file_name().and_then(|n| n.to_str()).unwrap_or("checkpoint.safetensors");
        let tmp = dir.join(format!(".tmp-{}-{name}", std::process::id()));
        // A write that fails (a full disk) leaves no temporary behind.
        let written = (|| {
            self.vs.save(&tmp).map_err(torch(format!("writing {}", tmp.display())))?;
            let bytes = fs::read(&tmp).map_err(io(format!("reading back {}", tmp.display())))?;
            fs::rename(&tmp, weights).map_err(io(format!("renaming {} to {}", tmp.display(), weights.display())))?;
            Ok(weights_checksum(&bytes))
        })();
        if written.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        let checksum = written?;
        // The sidecar always describes the weights just written, in the current layout.
        let mut meta = self.meta.clone();
        meta.format_version = CHECKPOINT_FORMAT_VERSION;
        meta.tensors = Some(tensor_shapes(&self.vs));
        meta.weights_crc64 = Some(checksum);
        let json = serde_json::to_string_pretty(&meta).map_err(|e| ModelError::Config(e.to_string()))?;
        write_atomic(&sidecar_path(weights), json.as_bytes())
    }
}

/// The text of a JSON metadata file (a sidecar, a bundle's `model.json`):
/// refused before reading when it is not a regular file (a link to a device
/// such as `/dev/zero`, which never ends) or holds more than 64 MiB (real ones
/// hold a few KiB).
///
/// # Errors
/// [`ModelError::Io`] for a missing or unreadable file, [`ModelError::BadMetadata`]
/// for the rest, naming the file.
/// The most training steps a sidecar may claim (2^53, the largest integer
/// JSON readers hold exactly): a larger `step` is a damaged or crafted file,
/// and counting on from it would wrap.
pub const MAX_STEP: u64 = 1 << 53;

pub(crate) fn read_metadata_text(path: &Path) -> Result<String, ModelError> {
    const LIMIT: u64 = 64 << 20;
    let bad = |message: String| ModelError::BadMetadata { path: path.display().to_string(), message };
    let m = fs::metadata(path).map_err(io(format!("reading {}", path.display())))?;
    if !m.is_file() {
        return Err(bad("it is not a regular file (a directory, a device or a pipe)".into()));
    }
    if m.len() > LIMIT {
        return Err(bad(format!("it holds {} bytes, more than {LIMIT}", m.len())));
    }
    let bytes = fs::read(path).map_err(io(format!("reading {}", path.display())))?;
    String::from_utf8(bytes).map_err(|e| bad(format!("it is not UTF-8 (at byte {})", e.utf8_error().valid_up_to())))
}

/// Writes `bytes` to `path` through a temporary file and a rename (a write
/// that fails removes its temporary and leaves `path` as it was).
///
/// # Errors
/// [`ModelError::Io`] with the path.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), ModelError> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    let tmp = dir.join(format!(".tmp-{}-{name}", std::process::id()));
    let written = fs::write(&tmp, bytes)
        .map_err(io(format!("writing {}", tmp.display())))
        .and_then(|()| fs::rename(&tmp, path).map_err(io(format!("renaming {} to {}", tmp.display(), path.display()))));
    if written.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    written
}
