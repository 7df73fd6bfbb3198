//! Model bundles for other frontends (`martian-zero export`).
//!
//! A bundle is a directory with
//!
//! ```text
//! model.safetensors   the weights, named as the tch VarStore names them
//!                     (stem.conv.weight, blocks.0.a.bn.running_mean, policy.fc.weight, ...)
//! model.json          ModelDescription: game, rules, architecture, input planes,
//!                     action encoding, value head, training step, evaluations
//! model.pt            TorchScript module traced from the network:
//!                     input [batch, planes, rows, cols] float32 -> [batch, NUM_ACTIONS + 3]
//!                     (policy and value only: the auxiliary heads, when the
//!                     network has them, are in the weights but not in the output)
//! model.onnx          (optional) written by tools/export_onnx.py from the two first files
//! ```
//!
//! `docs/model-format.md` documents the bundle for frontend authors. The
//! description is written last, so a directory whose `model.json` exists holds
//! a complete bundle.

use std::fs;
use std::path::{Path, PathBuf};

use martian_rules::{GameKind, GameState};
use serde::{Deserialize, Serialize};
use tch::nn::{self, ModuleT};
use tch::{CModule, Device, Kind, Tensor};

use crate::checkpoint::{
    check_checksum, check_tensors, io, now_s, tensor_shapes, torch, weights_checksum, write_atomic, Checkpoint,
    CheckpointMeta, TensorShapes, CHECKPOINT_FORMAT_VERSION,
};
use crate::config::{ModelConfig, MOVES_LEFT_SCALE, SCORE_SCALE};
use crate::error::ModelError;
use crate::resnet::PolicyValueNet;

/// `format` field of every `model.json`.
pub const MODEL_FORMAT: &str = "martian-zero-model";
/// Layout version of `model.json`.
pub const MODEL_FORMAT_VERSION: u32 = 1;
/// File names inside a bundle.
pub const WEIGHTS_FILE: &str = "model.safetensors";
/// The description.
pub const DESCRIPTION_FILE: &str = "model.json";
/// The traced TorchScript module.
pub const TORCHSCRIPT_FILE: &str = "model.pt";
/// The ONNX model written by `tools/export_onnx.py`.
pub const ONNX_FILE: &str = "model.onnx";
/// Largest absolute difference accepted between the Rust network and the
/// traced module when the export checks itself.
pub const EXPORT_TOLERANCE: f32 = 1e-4;
/// Batch sizes the traced module is checked with after export.
pub const CHECK_BATCH_SIZES: [i64; 2] = [1, 64];

/// `model.json`: everything a frontend needs to use the network.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelDescription {
    /// Always [`MODEL_FORMAT`].
    pub format: String,
    /// [`MODEL_FORMAT_VERSION`].
    pub format_version: u32,
    /// The exporting program and its version.
    pub exporter: String,
    /// Seconds since the Unix epoch when exported.
    pub exported_unix_s: u64,
    /// Which game (`jetan` or `martian-chess`).
    pub game: GameKind,
    /// The rules configuration the network was trained under (the game's rules switches).
    pub rules: serde_json::Value,
    /// The rules specification the engine implements.
    pub rules_spec: RulesSpec,
    /// Network architecture.
    pub architecture: Architecture,
    /// Name and shape of every tensor in `model.safetensors` (e.g.
    /// `"stem.conv.weight": [64, 24, 3, 3]`), written from the exported
    /// network. Absent in bundles written before it was added; loading checks
    /// the weights against the architecture either way.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tensors: Option<TensorShapes>,
    /// CRC-64/ECMA-182 of `model.safetensors` as written (16 lowercase hex
    /// digits, as a checkpoint sidecar's `weights_crc64`); [`load_bundle`]
    /// refuses weights that do not match it. Absent in bundles written
    /// before it was added (their weights load unchecked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weights_crc64: Option<String>,
    /// CRC-64/ECMA-182 of `model.onnx` (16 lowercase hex digits), added by
    /// `tools/export_onnx.py` once the ONNX file passes its checks; the web
    /// page refuses an ONNX file that does not match it. Absent before then,
    /// and in bundles written before it was added.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub onnx_crc64: Option<String>,
    /// Input tensor layout.
    pub input: InputSpec,
    /// Policy head: action encoding.
    pub policy: PolicySpec,
    /// Value head.
    pub value: ValueSpec,
    /// Output of the TorchScript / ONNX module.
    pub output: OutputSpec,
    /// Files of the bundle.
    pub files: BundleFiles,
    /// Where the weights come from.
    pub training: TrainingInfo,
    /// Matches this network played in its run (oldest first), empty if unknown.
    pub evaluations: Vec<EvalInfo>,
    /// Elo from the last of `evaluations`, if any.
    pub elo: Option<EvalInfo>,
}

/// The rules specification document and its version.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RulesSpec {
    /// Path of the specification in the repository.
    pub document: String,
    /// Its version (`Status:` line).
    pub version: String,
}

/// The network's shape (see `model/src/resnet.rs`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Architecture {
    /// Always `"resnet-policy-value"`.
    pub kind: String,
    /// Residual blocks.
    pub blocks: u32,
    /// Channels of the tower's 3x3 convolutions.
    pub channels: u32,
    /// Batch normalisation after each convolution (else convolutions have biases).
    pub batch_norm: bool,
    /// Batch-norm epsilon.
    pub batch_norm_eps: f64,
    /// Global pooling in every second block.
    pub global_pooling: bool,
    /// Indices of the blocks that carry global pooling.
    pub global_pooling_blocks: Vec<u32>,
    /// Channels of the policy head's 1x1 convolution.
    pub policy_channels: u32,
    /// Hidden units of the value head.
    pub value_hidden: u32,
    /// The auxiliary moves-left head is in the weights (`moves_left.*`); it is
    /// not an output of the TorchScript / ONNX module. Absent (false) in
    /// bundles written before it existed.
    #[serde(default)]
    pub moves_left_head: bool,
    /// The auxiliary score head is in the weights (`score.*`); not an output
    /// of the module either. Absent (false) in older bundles.
    #[serde(default)]
    pub score_head: bool,
    /// Value players of a vector value head (`model.value_players` > 2,
    /// four-player free-for-all); absent for the (win, draw, loss) head.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_players: Option<u32>,
    /// Layer-by-layer description.
    pub layers: Vec<String>,
}

impl Architecture {
    fn from_config(cfg: &ModelConfig) -> Architecture {
        let bn = if cfg.batch_norm { " -> BN" } else { "" };
        let conv_bias = if cfg.batch_norm { "no bias" } else { "with bias" };
        Architecture {
            kind: "resnet-policy-value".into(),
            blocks: cfg.blocks,
            channels: cfg.channels,
            batch_norm: cfg.batch_norm,
            batch_norm_eps: 1e-5,
            global_pooling: cfg.global_pooling,
            global_pooling_blocks: (0..cfg.blocks).filter(|i| cfg.global_pooling && i % 2 == 1).collect(),
            policy_channels: cfg.policy_channels,
            value_hidden: cfg.value_hidden,
            moves_left_head: cfg.moves_left_head,
            score_head: cfg.score_head,
            value_players: cfg.vector_value().then_some(cfg.value_players),
            layers: vec![
                format!("stem: conv3x3(planes -> {c}, padding 1, {conv_bias}){bn} -> ReLU", c = cfg.channels),
                format!(
                    "blocks.i (i < {}): y = ReLU(conv3x3 a{bn}(x)); [global-pooling blocks: y += gpool(cat(mean_hw(y), max_hw(y))) per channel]; \
                     out = ReLU(conv3x3 b{bn}(y) + x)",
                    cfg.blocks
                ),
                format!(
                    "policy: conv1x1(C -> {}, {conv_bias}){bn} -> ReLU -> flatten -> fc(linear -> NUM_ACTIONS)",
                    cfg.policy_channels
                ),
                if cfg.vector_value() {
                    format!(
                        "value: conv1x1(C -> 2, with bias) -> ReLU -> flatten -> fc1(linear -> {}) -> ReLU -> \
                         fc2(linear -> {}) -> tanh",
                        cfg.value_hidden, cfg.value_players
                    )
                } else {
                    format!(
                        "value: conv1x1(C -> 2, with bias) -> ReLU -> flatten -> fc1(linear -> {}) -> ReLU -> fc2(linear -> 3)",
                        cfg.value_hidden
                    )
                },
                "flatten order: channel-major, then row, then column (PyTorch's flatten(1))".into(),
            ],
        }
        .with_aux_layers(cfg)
    }

    fn with_aux_layers(mut self, cfg: &ModelConfig) -> Architecture {
        let head = |name: &str, what: &str| {
            format!(
                "{name} (auxiliary, training only; in the weights, not in the module's output): conv1x1(C -> 2, with bias) \
                 -> ReLU -> flatten -> fc1(linear -> {}) -> ReLU -> fc2(linear -> 1) = {what}",
                cfg.value_hidden
            )
        };
        if cfg.moves_left_head {
            self.layers.push(head("moves_left", &format!("plies left until the game ends / {MOVES_LEFT_SCALE}")));
        }
        if cfg.score_head {
            self.layers.push(head("score", &format!("final point difference for the side to move / {SCORE_SCALE}")));
        }
        self
    }

    /// The architecture as a [`ModelConfig`].
    pub fn model_config(&self) -> ModelConfig {
        ModelConfig {
            blocks: self.blocks,
            channels: self.channels,
            batch_norm: self.batch_norm,
            global_pooling: self.global_pooling,
            policy_channels: self.policy_channels,
            value_hidden: self.value_hidden,
            moves_left_head: self.moves_left_head,
            score_head: self.score_head,
            precision: crate::Precision::Fp32,
            value_players: self.value_players.unwrap_or(2),
        }
    }
}

/// One input plane.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlaneSpec {
    /// Plane index.
    pub index: usize,
    /// Short name.
    pub name: String,
    /// Meaning.
    pub description: String,
}

/// The input tensor.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct InputSpec {
    /// `[planes, rows, cols]` (the tensor is `[batch, planes, rows, cols]`).
    pub shape: [usize; 3],
    /// Always `"float32"`.
    pub dtype: String,
    /// Memory layout and the meaning of rows and columns.
    pub layout: String,
    /// Orientation rule for the side to move.
    pub orientation: String,
    /// Every plane, in order.
    pub planes: Vec<PlaneSpec>,
}

/// The policy head.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PolicySpec {
    /// Number of actions (`NUM_ACTIONS`).
    pub size: usize,
    /// Square numbering of moves (`<from><to>` text).
    pub squares: String,
    /// `(from, to) -> index`.
    pub formula: String,
    /// How to turn logits into move probabilities.
    pub usage: String,
}

/// The value head.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ValueSpec {
    /// 3 for the (win, draw, loss) head; the number of value players of a
    /// vector value head (4 in four-player free-for-all).
    pub size: usize,
    /// `["win", "draw", "loss"]`, or for a vector head `["mover", "mover+1",
    /// ...]` (value player `(mover + k) % size` in column `k`).
    pub order: Vec<String>,
    /// What the numbers mean.
    pub semantics: String,
}

/// The module output.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OutputSpec {
    /// `[NUM_ACTIONS + value.size]` per position.
    pub shape: [usize; 1],
    /// Columns `[start, end)` of the policy logits.
    pub policy_logits: [usize; 2],
    /// Columns `[start, end)` of the value outputs: the (win, draw, loss)
    /// logits, or a vector head's per-player values.
    pub value_logits: [usize; 2],
    /// Input and output names in the ONNX model.
    pub onnx_names: [String; 2],
}

/// File names inside the bundle.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BundleFiles {
    /// Weights (safetensors).
    pub weights: String,
    /// TorchScript module.
    pub torchscript: String,
    /// ONNX model (written by `tools/export_onnx.py`; may be absent).
    pub onnx: String,
}

/// Provenance of the weights.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrainingInfo {
    /// Optimizer steps taken to produce the weights.
    pub step: u64,
    /// The checkpoint file exported.
    pub source_checkpoint: String,
    /// The checkpoint it was trained from, if any.
    pub parent: Option<String>,
    /// When the checkpoint was written (seconds since the Unix epoch).
    pub created_unix_s: u64,
}

/// One evaluation match of the exported network.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EvalInfo {
    /// The file the result was read from (relative to the run directory).
    pub source: String,
    /// The opponent.
    pub opponent: String,
    /// Wins of the exported network.
    pub wins: u32,
    /// Draws.
    pub draws: u32,
    /// Losses.
    pub losses: u32,
    /// Score per game in `[0, 1]`.
    pub score: Option<f64>,
    /// Elo relative to the opponent.
    pub elo: Option<f64>,
    /// Lower end of the 95% interval.
    pub elo_low: Option<f64>,
    /// Upper end of the 95% interval.
    pub elo_high: Option<f64>,
}

/// What the export measured.
#[derive(Clone, Debug, PartialEq)]
pub struct ExportReport {
    /// Bundle directory.
    pub dir: PathBuf,
    /// `(batch size, max |Rust - TorchScript|)` for each checked batch size.
    pub checks: Vec<(i64, f32)>,
    /// An ONNX file of an earlier export was in the directory and was
    /// removed: it holds another network (`tools/export_onnx.py` writes the
    /// new one).
    pub removed_onnx: bool,
}

/// The game-specific parts of the description, from the game's own
/// [`GameState::ENCODING`] (the rules crate is the one place that knows them).
fn game_parts<G: GameState>() -> (RulesSpec, InputSpec, PolicySpec) {
    let [planes, rows, cols] = G::INPUT_SHAPE;
    let layout = format!(
        "[batch, {planes}, {rows}, {cols}] float32, row-major [plane][row][col]; row 0 is the side to move's back rank, \
         column = file in the canonical orientation, so cell (row, col) is canonical square row * {cols} + col"
    );
    let e = G::ENCODING;
    let (input_shape, num_actions) = (G::INPUT_SHAPE, G::NUM_ACTIONS);
    let (doc, version, orientation, descs, formula, squares) =
        (e.rules_document, e.rules_version, e.orientation, e.planes, e.action_encoding, e.squares);
    let planes = descs
        .iter()
        .enumerate()
        .map(|(index, (name, d))| PlaneSpec { index, name: (*name).into(), description: (*d).into() })
        .collect();
    (
        RulesSpec { document: doc.into(), version: version.into() },
        InputSpec { shape: input_shape, dtype: "float32".into(), layout, orientation: orientation.into(), planes },
        PolicySpec {
            size: num_actions,
            squares: squares.into(),
            formula: formula.into(),
            usage: "logits over all actions; for a position, take the logits at the indices of its legal moves \
                    (computed with the formula in the canonical orientation), apply a softmax over those only; \
                    indices of illegal moves carry no meaning"
                .into(),
        },
    )
}

/// Builds the description of checkpoint `meta` for game `G`.
///
/// # Errors
/// [`ModelError::Mismatch`] if the checkpoint was made for another game or shape.
pub fn describe<G: GameState>(
    meta: &CheckpointMeta,
    source_checkpoint: &str,
    evaluations: Vec<EvalInfo>,
) -> Result<ModelDescription, ModelError> {
    if meta.game != G::KIND || meta.input_shape != G::INPUT_SHAPE || meta.num_actions != G::NUM_ACTIONS {
        return Err(ModelError::Mismatch {
            path: source_checkpoint.into(),
            differences: format!(
                "checkpoint is for {} {:?}/{}, exporter for {} {:?}/{}",
                meta.game,
                meta.input_shape,
                meta.num_actions,
                G::KIND,
                G::INPUT_SHAPE,
                G::NUM_ACTIONS
            ),
        });
    }
    let (rules_spec, input, policy) = game_parts::<G>();
    let n = G::NUM_ACTIONS;
    Ok(ModelDescription {
        format: MODEL_FORMAT.into(),
        format_version: MODEL_FORMAT_VERSION,
        exporter: format!("martian-zero {}", env!("CARGO_PKG_VERSION")),
        exported_unix_s: now_s(),
        game: G::KIND,
        rules: meta.rules.clone(),
        rules_spec,
        architecture: Architecture::from_config(&meta.model),
        tensors: meta.tensors.clone(),
        weights_crc64: None,
        onnx_crc64: None,
        input,
        policy,
        value: value_spec(&meta.model),
        output: OutputSpec {
            shape: [n + meta.model.value_outputs()],
            policy_logits: [0, n],
            value_logits: [n, n + meta.model.value_outputs()],
            onnx_names: ["input".into(), "output".into()],
        },
        files: BundleFiles {
            weights: WEIGHTS_FILE.into(),
            torchscript: TORCHSCRIPT_FILE.into(),
            onnx: ONNX_FILE.into(),
        },
        training: TrainingInfo {
            step: meta.step,
            source_checkpoint: source_checkpoint.into(),
            parent: meta.parent.clone(),
            created_unix_s: meta.created_unix_s,
        },
        elo: evaluations.last().cloned(),
        evaluations,
    })
}

/// The value head's description for `model.json`.
fn value_spec(cfg: &ModelConfig) -> ValueSpec {
    if cfg.vector_value() {
        let n = cfg.value_players as usize;
        ValueSpec {
            size: n,
            order: (0..n).map(|k| if k == 0 { "mover".to_string() } else { format!("mover+{k}") }).collect(),
            semantics: format!(
                "expected result in [-1, 1] (tanh) of each of the {n} value players (free-for-all seats), in \
                 mover-relative order: column k is player (mover + k) % {n} in index order (SW 0, NW 1, NE 2, SE 3); \
                 column 0 is the side to move's value. Results per docs/rules/martian-chess.md §14.7: a sole winner \
                 +1, the others -1/3; k seats sharing the win (4/k - 1)/3 each"
            ),
        }
    } else {
        ValueSpec {
            size: 3,
            order: vec!["win".into(), "draw".into(), "loss".into()],
            semantics: "raw logits of (win, draw, loss) for the side to move; softmax gives the probabilities and \
                        value = P(win) - P(loss) in [-1, 1] (+1 = the side to move wins)"
                .into(),
        }
    }
}

fn max_abs_diff(a: &Tensor, b: &Tensor) -> Result<f32, ModelError> {
    if a.size() != b.size() {
        return Err(ModelError::Config(format!("output shapes differ: {:?} vs {:?}", a.size(), b.size())));
    }
    let d = (a - b).abs().max().to_kind(Kind::Float);
    d.f_double_value(&[]).map(|v| v as f32).map_err(torch("reading a difference"))
}

/// Writes the bundle of `ck` (on the CPU) for game `G` into `dir`: weights,
/// the traced TorchScript module (checked against the Rust network at batch
/// sizes [`CHECK_BATCH_SIZES`]) and, last, `model.json` (`description`, with
/// its `tensors` and `weights_crc64` set from the weights written). An
/// earlier export's `model.onnx` in `dir` is removed first
/// ([`ExportReport::removed_onnx`]): it would be another network's. `ck`'s variables are frozen
/// (they stop requiring gradients) for tracing.
///
/// # Errors
/// I/O or libtorch errors with the path; [`ModelError::Config`] if the checkpoint
/// is not on the CPU or the traced module disagrees with the network by more
/// than [`EXPORT_TOLERANCE`].
pub fn export_bundle<G: GameState>(
    ck: &mut Checkpoint,
    description: &ModelDescription,
    dir: &Path,
) -> Result<ExportReport, ModelError> {
    if ck.vs.device() != Device::Cpu {
        return Err(ModelError::Config("export needs the checkpoint loaded on the CPU".into()));
    }
    fs::create_dir_all(dir).map_err(io(format!("creating {}", dir.display())))?;
    // An ONNX file of an earlier export into this directory is another network's:
    // it goes first, so that no moment has new weights beside it.
    let onnx = dir.join(ONNX_FILE);
    let removed_onnx = onnx.exists();
    if removed_onnx {
        fs::remove_file(&onnx).map_err(io(format!("removing the earlier {}", onnx.display())))?;
    }
    let pid = std::process::id();
    // Weights: through a temporary name that keeps the .safetensors suffix (it selects the format).
    let weights = dir.join(WEIGHTS_FILE);
    let tmp = dir.join(format!(".tmp-{pid}-{WEIGHTS_FILE}"));
    ck.vs.save(&tmp).map_err(torch(format!("writing {}", tmp.display())))?;
    fs::rename(&tmp, &weights).map_err(io(format!("renaming {} to {}", tmp.display(), weights.display())))?;

    // TorchScript: trace the evaluation-mode forward pass. The tracer stores the
    // weights as constants, which must not require gradients.
    ck.vs.freeze();
    let [c, h, w] = G::INPUT_SHAPE.map(|x| x as i64);
    let _guard = tch::no_grad_guard();
    let example = Tensor::rand([2, c, h, w], (Kind::Float, Device::Cpu));
    let net = &ck.net;
    let mut closure = |inputs: &[Tensor]| vec![net.forward_t(&inputs[0], false)];
    let module = CModule::create_by_tracing("MartianZeroNet", "forward", &[example], &mut closure)
        .map_err(torch("tracing the network"))?;
    let pt = dir.join(TORCHSCRIPT_FILE);
    let tmp = dir.join(format!(".tmp-{pid}-{TORCHSCRIPT_FILE}"));
    module.save(&tmp).map_err(torch(format!("writing {}", tmp.display())))?;
    fs::rename(&tmp, &pt).map_err(io(format!("renaming {} to {}", tmp.display(), pt.display())))?;

    // Check the saved module, loaded back, against the network.
    let loaded = CModule::load(&pt).map_err(torch(format!("loading {} back", pt.display())))?;
    let mut checks = Vec::new();
    for b in CHECK_BATCH_SIZES {
        let x = Tensor::rand([b, c, h, w], (Kind::Float, Device::Cpu));
        let want = net.forward_t(&x, false);
        let got = loaded.forward_ts(&[&x]).map_err(torch(format!("running {} at batch {b}", pt.display())))?;
        let width = G::NUM_ACTIONS + net.value_outputs();
        if got.size() != [b, width as i64] {
            return Err(ModelError::Config(format!(
                "traced module returned shape {:?} at batch {b}, expected [{b}, {width}]",
                got.size()
            )));
        }
        let d = max_abs_diff(&want, &got)?;
        if d.is_nan() || d > EXPORT_TOLERANCE {
            return Err(ModelError::Config(format!(
                "traced module differs from the network by {d} at batch {b} (tolerance {EXPORT_TOLERANCE})"
            )));
        }
        checks.push((b, d));
    }

    let mut description = description.clone();
    description.tensors = Some(tensor_shapes(&ck.vs));
    let bytes = fs::read(&weights).map_err(io(format!("reading {} back", weights.display())))?;
    description.weights_crc64 = Some(weights_checksum(&bytes));
    let json = serde_json::to_string_pretty(&description).map_err(|e| ModelError::Config(e.to_string()))?;
    write_atomic(&dir.join(DESCRIPTION_FILE), json.as_bytes())?;
    Ok(ExportReport { dir: dir.to_path_buf(), checks, removed_onnx })
}

/// Reads `dir/model.json`.
///
/// # Errors
/// [`ModelError::Io`] if missing, [`ModelError::BadMetadata`] if it is not a
/// description this version understands.
pub fn read_description(dir: &Path) -> Result<ModelDescription, ModelError> {
    let path = dir.join(DESCRIPTION_FILE);
    let text = crate::checkpoint::read_metadata_text(&path)?;
    let d: ModelDescription = serde_json::from_str(&text)
        .map_err(|e| ModelError::BadMetadata { path: path.display().to_string(), message: e.to_string() })?;
    if d.format != MODEL_FORMAT || d.format_version != MODEL_FORMAT_VERSION {
        return Err(ModelError::BadMetadata {
            path: path.display().to_string(),
            message: format!(
                "format {} version {} is not supported (expected {MODEL_FORMAT} version {MODEL_FORMAT_VERSION})",
                d.format, d.format_version
            ),
        });
    }
    Ok(d)
}

/// Loads the network of the bundle in `dir` for game `G` on `device`, after
/// checking `model.safetensors` (and the `tensors` list of `model.json`, when
/// present) against the network that the described architecture builds.
///
/// # Errors
/// [`ModelError::Mismatch`] if the bundle is for another game or shape, or
/// naming every missing, unexpected and mis-shaped tensor;
/// [`ModelError::BadMetadata`] if its rules are not valid rules of `G`; I/O,
/// metadata or libtorch errors with the path.
pub fn load_bundle<G: GameState>(dir: &Path, device: Device) -> Result<(Checkpoint, ModelDescription), ModelError> {
    let d = read_description(dir)?;
    let mut diffs = Vec::new();
    if d.game != G::KIND {
        diffs.push(format!("game: bundle {}, expected {}", d.game, G::KIND));
    }
    if d.input.shape != G::INPUT_SHAPE {
        diffs.push(format!("input shape: bundle {:?}, game {:?}", d.input.shape, G::INPUT_SHAPE));
    }
    if d.policy.size != G::NUM_ACTIONS {
        diffs.push(format!("policy size: bundle {}, game {}", d.policy.size, G::NUM_ACTIONS));
    }
    if !diffs.is_empty() {
        return Err(ModelError::Mismatch { path: dir.display().to_string(), differences: diffs.join("; ") });
    }
    if let Err(e) = serde_json::from_value::<G::Rules>(d.rules.clone()) {
        return Err(ModelError::BadMetadata {
            path: dir.join(DESCRIPTION_FILE).display().to_string(),
            message: format!("\"rules\" are not valid {} rules: {e}", G::KIND),
        });
    }
    let cfg = d.architecture.model_config();
    cfg.validate_for::<G>().map_err(|message| ModelError::BadMetadata {
        path: dir.join(DESCRIPTION_FILE).display().to_string(),
        message,
    })?;
    let mut vs = nn::VarStore::new(device);
    let net = PolicyValueNet::new(&vs.root(), &cfg, G::INPUT_SHAPE, G::NUM_ACTIONS);
    let weights = dir.join(WEIGHTS_FILE);
    let tensors = check_tensors(&weights, d.tensors.as_ref(), &vs, &cfg)?;
    if let Some(want) = &d.weights_crc64 {
        check_checksum(&weights, want, &dir.join(DESCRIPTION_FILE))?;
    }
    vs.load(&weights).map_err(torch(format!("loading {}", weights.display())))?;
    crate::checkpoint::check_finite(&vs, &weights)?;
    let meta = CheckpointMeta {
        format_version: CHECKPOINT_FORMAT_VERSION,
        game: d.game,
        rules: d.rules.clone(),
        model: cfg,
        input_shape: G::INPUT_SHAPE,
        num_actions: G::NUM_ACTIONS,
        step: d.training.step,
        created_unix_s: d.training.created_unix_s,
        parent: d.training.parent.clone(),
        tensors: Some(tensors),
        weights_crc64: None,
    };
    Ok((Checkpoint { vs, net, meta }, d))
}

/// Loads the bundle in `dir` for game `G` as [`Checkpoint::load_with`] loads
/// a checkpoint, so that a bundle is a model wherever a checkpoint is: its
/// rules must equal `rules`, the architecture rule `model` applies
/// ([`ConfigModel`]; the notice for a [`ConfigModel::Default`] config that
/// differs is returned), and the value head must fit the players of `rules`.
///
/// # Errors
/// Those of [`load_bundle`]; [`ModelError::Mismatch`] naming every differing
/// rules switch and, with [`ConfigModel::Fixed`], every differing
/// architecture field.
pub fn load_bundle_with<G: GameState>(
    dir: &Path,
    rules: &G::Rules,
    model: crate::checkpoint::ConfigModel<'_>,
    device: Device,
) -> Result<(Checkpoint, ModelDescription, Option<String>), ModelError> {
    use crate::checkpoint::{architecture_notice, model_differences, ConfigModel};
    let (ck, d) = load_bundle::<G>(dir, device)?;
    let mut diffs = Vec::new();
    let want = serde_json::to_value(rules).map_err(|e| ModelError::Config(e.to_string()))?;
    let r = martian_rules::value_differences(&ck.meta.rules, &want);
    if !r.is_empty() {
        diffs.push(martian_rules::describe_differences("rules", ("bundle", "config"), &r));
    }
    if let ConfigModel::Fixed(m) = model {
        let a = model_differences(&ck.meta.model, m);
        if !a.is_empty() {
            diffs.push(martian_rules::describe_differences("[model] fields", ("bundle", "config"), &a));
        }
    }
    if let Ok(g) = G::new_game(rules) {
        if let Err(message) = ck.meta.model.validate_for_players::<G>(g.num_players()) {
            diffs.push(message);
        }
    }
    if !diffs.is_empty() {
        return Err(ModelError::Mismatch { path: dir.display().to_string(), differences: diffs.join("; ") });
    }
    let notice = match model {
        ConfigModel::Default(m) => architecture_notice(dir, &ck.meta.model, m),
        _ => None,
    };
    Ok((ck, d, notice))
}
