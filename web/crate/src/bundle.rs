//! Checks a bundle's `model.json` (docs/model-format.md) against the rules
//! compiled into the page: format and version, game, rules switches, rules
//! specification version, input shape and policy width. A bundle that fails
//! any of them is refused with a message that names the field and both values.

use martian_rules::{GameKind, GameState};
use serde::Serialize;
use serde_json::Value;

use crate::games::web_game_names;
use crate::with_web_game;

/// `format` of a bundle description (as `martian_model::export::MODEL_FORMAT`).
pub const MODEL_FORMAT: &str = "martian-zero-model";
/// The `format_version` this page reads (as `martian_model::export::MODEL_FORMAT_VERSION`).
pub const MODEL_FORMAT_VERSION: u64 = 1;

/// What the page needs of an accepted bundle.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct BundleInfo {
    /// `jetan` or `martian-chess`.
    pub game: String,
    /// The rules switches, as JSON text (for [`crate::WebSession::new`]).
    pub rules: String,
    /// `[planes, rows, cols]` of one input row.
    pub input_shape: [usize; 3],
    /// Policy width.
    pub num_actions: usize,
    /// Width of one output row (`num_actions + 3`).
    pub output_width: usize,
    /// The ONNX input and output names.
    pub onnx_names: [String; 2],
    /// The ONNX file name in the bundle.
    pub onnx_file: String,
    /// A one-line description: architecture, training step, last evaluation.
    pub summary: String,
    /// The ONNX file's CRC-64/ECMA-182 as `model.json` records it (16
    /// lowercase hex digits; `tools/export_onnx.py` adds it), checked by the
    /// page against the file it loads; `None` in bundles without it.
    pub onnx_crc64: Option<String>,
}

fn field<'a>(v: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(v, |v, k| v.get(*k))
}

/// Checks `model_json` and returns what the page needs.
///
/// # Errors
/// A message for the page: not JSON, not a MartianZero bundle, another format
/// version, a game the page does not play, rules it cannot parse, another
/// rules specification version, or an input/policy shape that differs from
/// the compiled rules'.
pub fn check_bundle(model_json: &str) -> Result<BundleInfo, String> {
    let v: Value = serde_json::from_str(model_json).map_err(|e| format!("model.json is not valid JSON: {e}"))?;
    let format = v.get("format").and_then(Value::as_str).unwrap_or("");
    if format != MODEL_FORMAT {
        return Err(format!(
            "model.json is not a MartianZero model description (format {format:?}, expected {MODEL_FORMAT:?})"
        ));
    }
    let version = v.get("format_version").and_then(Value::as_u64);
    if version != Some(MODEL_FORMAT_VERSION) {
        return Err(format!(
            "the bundle's format version is {}, this page reads version {MODEL_FORMAT_VERSION}: export the model \
             again with a matching martian-zero, or build the page from the matching repository version",
            version.map_or("missing".to_string(), |x| x.to_string())
        ));
    }
    let game = v.get("game").and_then(Value::as_str).unwrap_or("");
    let other = || Err(format!("the bundle is for the game {game:?}; this page plays {}", web_game_names(" and ")));
    match game.parse::<GameKind>() {
        Ok(kind) => with_web_game!(kind, G => check_game::<G>(&v), _ => other()),
        Err(_) => other(),
    }
}

fn check_game<G: GameState>(v: &Value) -> Result<BundleInfo, String> {
    let name = G::KIND.name();
    let rules_value = v.get("rules").cloned().unwrap_or(Value::Null);
    let rules: G::Rules = serde_json::from_value(rules_value.clone())
        .map_err(|e| format!("the bundle's {name} rules are not rules this page knows: {e}"))?;
    G::new_game(&rules).map_err(|e| format!("the bundle's {name} rules cannot be played here: {e}"))?;
    let enc = G::ENCODING;
    let doc = field(v, &["rules_spec", "document"]).and_then(Value::as_str).unwrap_or("missing");
    let ver = field(v, &["rules_spec", "version"]).and_then(Value::as_str).unwrap_or("missing");
    if doc != enc.rules_document || ver != enc.rules_version {
        return Err(format!(
            "the bundle was trained under the rules specification {doc} version {ver}; this page implements {} \
             version {}",
            enc.rules_document, enc.rules_version
        ));
    }
    let shape: Option<Vec<usize>> = field(v, &["input", "shape"])
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(|x| x.as_u64().map(|x| x as usize)).collect());
    if shape.as_deref() != Some(&G::INPUT_SHAPE[..]) {
        return Err(format!(
            "the bundle's input shape is {shape:?}, the {name} rules of this page encode {:?}",
            G::INPUT_SHAPE
        ));
    }
    let size = field(v, &["policy", "size"]).and_then(Value::as_u64);
    if size != Some(G::NUM_ACTIONS as u64) {
        return Err(format!(
            "the bundle's policy size is {size:?}, the {name} rules of this page have {}",
            G::NUM_ACTIONS
        ));
    }
    let width = G::NUM_ACTIONS + 3;
    let out_width = field(v, &["output", "shape"]).and_then(|s| s.get(0)).and_then(Value::as_u64);
    if out_width.is_some_and(|w| w != width as u64) {
        return Err(format!("the bundle's output width is {out_width:?}, expected {width}"));
    }
    let names = field(v, &["output", "onnx_names"]).and_then(Value::as_array);
    let onnx_names = match names.map(|a| a.iter().filter_map(Value::as_str).collect::<Vec<_>>()) {
        Some(n) if n.len() == 2 => [n[0].to_string(), n[1].to_string()],
        _ => ["input".to_string(), "output".to_string()],
    };
    let onnx_file = field(v, &["files", "onnx"]).and_then(Value::as_str).unwrap_or("model.onnx").to_string();
    let onnx_crc64 = match v.get("onnx_crc64") {
        None | Some(Value::Null) => None,
        Some(Value::String(c)) if c.len() == 16 && c.bytes().all(|b| b.is_ascii_hexdigit()) => {
            Some(c.to_ascii_lowercase())
        }
        Some(other) => return Err(format!("the bundle's onnx_crc64 is {other}, not 16 hexadecimal digits")),
    };
    let arch = |k: &str| field(v, &["architecture", k]).and_then(Value::as_u64).unwrap_or(0);
    let step = field(v, &["training", "step"]).and_then(Value::as_u64).unwrap_or(0);
    let mut summary = format!("{name}, {} blocks x {} channels, step {step}", arch("blocks"), arch("channels"));
    if let Some(e) = v.get("elo").filter(|e| !e.is_null()) {
        let g = |k: &str| e.get(k).and_then(Value::as_u64).unwrap_or(0);
        let opp = e.get("opponent").and_then(Value::as_str).unwrap_or("?");
        summary.push_str(&format!(", vs {opp}: +{} ={} -{}", g("wins"), g("draws"), g("losses")));
    }
    Ok(BundleInfo {
        game: name.to_string(),
        rules: serde_json::to_string(&rules).map_err(|e| e.to_string())?,
        input_shape: G::INPUT_SHAPE,
        num_actions: G::NUM_ACTIONS,
        output_width: width,
        onnx_names,
        onnx_file,
        summary,
        onnx_crc64,
    })
}
