//! Checkpoints: weights in `<name>.safetensors` plus a JSON sidecar
//! `<name>.json` ([`CheckpointMeta`]: game, rules, architecture, step, time).
//!
//! Both files are written atomically (temporary file in the same directory,
//! then rename); the sidecar is written last, so a checkpoint whose `.json`
//! exists is complete. Loading compares the sidecar with the expected game,
//! rules and architecture and refuses a mismatch, naming every difference.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use martian_rules::{GameKind, GameState};
use serde::{Deserialize, Serialize};
use tch::{nn, Device};

use crate::config::ModelConfig;
use crate::error::ModelError;
use crate::resnet::PolicyValueNet;

/// Version of the checkpoint sidecar layout.
pub const CHECKPOINT_FORMAT_VERSION: u32 = 1;

/// The JSON sidecar of a checkpoint.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckpointMeta {
    /// Layout version ([`CHECKPOINT_FORMAT_VERSION`]).
    pub format_version: u32,
    /// Which game the network plays.
    pub game: GameKind,
    /// The rules configuration it was trained under (the game's `Rules` as JSON).
    pub rules: serde_json::Value,
    /// Architecture.
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
    /// [`ModelError::Config`] if `cfg` is out of range.
    pub fn new_random<G: GameState>(
        rules: &G::Rules,
        cfg: &ModelConfig,
        device: Device,
        seed: i64,
    ) -> Result<Checkpoint, ModelError> {
        cfg.validate().map_err(ModelError::Config)?;
        tch::manual_seed(seed);
        let vs = nn::VarStore::new(device);
        let net = PolicyValueNet::new(&vs.root(), cfg, G::INPUT_SHAPE, G::NUM_ACTIONS);
        let meta = CheckpointMeta {
            format_version: CHECKPOINT_FORMAT_VERSION,
            game: G::KIND,
            rules: serde_json::to_value(rules).map_err(|e| ModelError::Config(e.to_string()))?,
            model: cfg.clone(),
            input_shape: G::INPUT_SHAPE,
            num_actions: G::NUM_ACTIONS,
            step: 0,
            created_unix_s: now_s(),
            parent: None,
        };
        Ok(Checkpoint { vs, net, meta })
    }

    /// Reads only the sidecar of the checkpoint at `weights` (`.safetensors` path).
    ///
    /// # Errors
    /// [`ModelError::Io`] if missing, [`ModelError::BadMetadata`] if unparsable.
    pub fn read_meta(weights: &Path) -> Result<CheckpointMeta, ModelError> {
        let side = sidecar_path(weights);
        let text = fs::read_to_string(&side).map_err(io(format!("reading checkpoint metadata {}", side.display())))?;
        let meta: CheckpointMeta = serde_json::from_str(&text)
            .map_err(|e| ModelError::BadMetadata { path: side.display().to_string(), message: e.to_string() })?;
        if meta.format_version != CHECKPOINT_FORMAT_VERSION {
            return Err(ModelError::BadMetadata {
                path: side.display().to_string(),
                message: format!(
                    "format_version {} is not supported (expected {CHECKPOINT_FORMAT_VERSION})",
                    meta.format_version
                ),
            });
        }
        Ok(meta)
    }

    /// Loads the checkpoint at `weights` for game `G`, checking that its game
    /// and rules equal `rules` and, when given, its architecture equals `model`.
    ///
    /// # Errors
    /// [`ModelError::Mismatch`] naming every differing field; I/O, metadata or
    /// libtorch errors (e.g. a truncated weights file) with the path.
    pub fn load<G: GameState>(
        weights: &Path,
        rules: &G::Rules,
        model: Option<&ModelConfig>,
        device: Device,
    ) -> Result<Checkpoint, ModelError> {
        let meta = Self::read_meta(weights)?;
        let mut diffs = Vec::new();
        if meta.game != G::KIND {
            diffs.push(format!("game: checkpoint {}, config {}", meta.game, G::KIND));
        } else {
            let want = serde_json::to_value(rules).map_err(|e| ModelError::Config(e.to_string()))?;
            if meta.rules != want {
                diffs.push(format!("rules: checkpoint {}, config {}", meta.rules, want));
            }
        }
        if let Some(m) = model {
            if &meta.model != m {
                diffs.push(format!("model: checkpoint {:?}, config {:?}", meta.model, m));
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
        meta.model.validate().map_err(ModelError::Config)?;
        let mut vs = nn::VarStore::new(device);
        let net = PolicyValueNet::new(&vs.root(), &meta.model, G::INPUT_SHAPE, G::NUM_ACTIONS);
        vs.load(weights).map_err(torch(format!("loading checkpoint weights {}", weights.display())))?;
        Ok(Checkpoint { vs, net, meta })
    }

    /// Writes `weights` (must end in `.safetensors`) and its sidecar atomically.
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
        self.vs.save(&tmp).map_err(torch(format!("writing {}", tmp.display())))?;
        fs::rename(&tmp, weights).map_err(io(format!("renaming {} to {}", tmp.display(), weights.display())))?;
        let json = serde_json::to_string_pretty(&self.meta).map_err(|e| ModelError::Config(e.to_string()))?;
        write_atomic(&sidecar_path(weights), json.as_bytes())
    }
}

/// Writes `bytes` to `path` through a temporary file and a rename.
///
/// # Errors
/// [`ModelError::Io`] with the path.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), ModelError> {
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    let tmp = dir.join(format!(".tmp-{}-{name}", std::process::id()));
    fs::write(&tmp, bytes).map_err(io(format!("writing {}", tmp.display())))?;
    fs::rename(&tmp, path).map_err(io(format!("renaming {} to {}", tmp.display(), path.display())))
}
