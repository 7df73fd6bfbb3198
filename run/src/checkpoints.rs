//! Loading checkpoints: the one function every command uses, so that the
//! architecture rule is the same everywhere ([`ConfigModel`]).
//!
//! * Commands without a config (`play`, `analyse`, `export`, `engine`): the
//!   checkpoint's architecture ([`ConfigModel::Absent`]), and the rules it was
//!   trained with ([`load_model`]: a checkpoint, a bundle or a run directory).
//! * Commands with a config that do not train a run (`evaluate`, `selfplay
//!   --out`, the pipeline's matches): the checkpoint's architecture, and when the
//!   config's `[model]` differs, the notice `notice: <path>: the checkpoint's
//!   architecture is used; the config's [model] fields differ (checkpoint vs
//!   config): blocks 1 vs 6` on stderr ([`ConfigModel::Default`]).
//! * Commands that write into a run directory whose config fixes the
//!   architecture (`pipeline`, `train`, `selfplay --run-dir`): a different
//!   architecture is an error naming the fields ([`ConfigModel::Fixed`]).
//!
//! Every load also checks the weights file against the declared architecture
//! (every missing, unexpected or mis-shaped tensor is named) and the rules
//! (every differing switch is named); see `martian_model::checkpoint`.

use std::path::{Path, PathBuf};

use anyhow::Result;
use martian_model::{Checkpoint, ConfigModel};
use martian_rules::GameState;
use tch::Device;

/// What a model path names once resolved ([`resolve_source`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ModelSource {
    /// A checkpoint `.safetensors` file with its `.json` sidecar.
    Checkpoint(PathBuf),
    /// An exported bundle directory (`model.json` + `model.safetensors`,
    /// `docs/model-format.md`).
    Bundle(PathBuf),
}

impl ModelSource {
    /// The checkpoint file or the bundle directory.
    pub fn path(&self) -> &Path {
        match self {
            ModelSource::Checkpoint(p) | ModelSource::Bundle(p) => p,
        }
    }
}

/// Whether `dir/model.json` is a bundle's description (its `format` is the
/// bundle format's), rather than the sidecar of a checkpoint that happens to
/// be named `model.safetensors`.
fn is_bundle_dir(dir: &Path) -> bool {
    use martian_model::export::{DESCRIPTION_FILE, MODEL_FORMAT};
    let Ok(text) = std::fs::read_to_string(dir.join(DESCRIPTION_FILE)) else {
        return false;
    };
    serde_json::from_str::<serde_json::Value>(&text)
        .is_ok_and(|v| v.get("format").and_then(|f| f.as_str()) == Some(MODEL_FORMAT))
}

/// Where the network of `path` is: a checkpoint `.safetensors` file (with its
/// `.json` sidecar), an exported bundle directory (with `model.json`; its
/// `model.safetensors` or `model.json` named directly is the bundle too), or
/// a run directory (its promoted checkpoint, named by `R/best`).
///
/// # Errors
/// A missing path, a directory that is neither a bundle nor a run directory,
/// or a run directory without a promoted checkpoint; each names the path.
pub fn resolve_source(path: &Path) -> Result<ModelSource> {
    use martian_model::export::{DESCRIPTION_FILE, WEIGHTS_FILE};
    if !path.exists() {
        anyhow::bail!(
            "model {} does not exist (expected a checkpoint .safetensors, a bundle directory or a run directory)",
            path.display()
        );
    }
    if !path.is_dir() {
        let name = path.file_name().and_then(|n| n.to_str());
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        if matches!(name, Some(WEIGHTS_FILE | DESCRIPTION_FILE)) && is_bundle_dir(dir) {
            return Ok(ModelSource::Bundle(dir.to_path_buf()));
        }
        return Ok(ModelSource::Checkpoint(path.to_path_buf()));
    }
    if path.join(DESCRIPTION_FILE).exists() {
        return Ok(ModelSource::Bundle(path.to_path_buf()));
    }
    if !path.join(crate::layout::MODELS).is_dir() {
        anyhow::bail!(
            "{} is a directory but neither a model bundle (no {DESCRIPTION_FILE}) nor a run directory (no models/)",
            path.display()
        );
    }
    let run = crate::rundir::RunDir::existing(path)?;
    Ok(ModelSource::Checkpoint(run.best().ok_or_else(|| run.no_best_error())?))
}

/// The path [`resolve_source`] resolves `path` to: the checkpoint file or the
/// bundle directory.
///
/// # Errors
/// Those of [`resolve_source`].
pub fn resolve_model(path: &Path) -> Result<PathBuf> {
    Ok(resolve_source(path)?.path().to_path_buf())
}

/// Loads the model at `path` for game `G` under `rules` and the architecture
/// rule `model`, printing the architecture notice if there is one: the one
/// loader of every command. `path` is a checkpoint, a bundle or a run
/// directory ([`resolve_source`]); a path that does not exist is reported as
/// a missing checkpoint.
///
/// # Errors
/// Unreadable or inconsistent checkpoint or bundle, other game or rules
/// (naming each differing switch), or, with [`ConfigModel::Fixed`], another
/// architecture (naming each differing field).
pub fn load_checkpoint<G: GameState>(
    path: &Path,
    rules: &G::Rules,
    model: ConfigModel<'_>,
    device: Device,
) -> Result<Checkpoint> {
    let source = if path.exists() { resolve_source(path)? } else { ModelSource::Checkpoint(path.to_path_buf()) };
    let (ck, notice) = match &source {
        ModelSource::Checkpoint(p) => Checkpoint::load_with::<G>(p, rules, model, device)?,
        ModelSource::Bundle(d) => {
            let (ck, _, notice) = martian_model::export::load_bundle_with::<G>(d, rules, model, device)?;
            (ck, notice)
        }
    };
    if let Some(n) = notice {
        eprintln!("notice: {n}");
    }
    Ok(ck)
}

/// A network named on the command line, loaded under the rules it was trained
/// with (`play`, `analyse`, `engine`).
pub struct LoadedModel {
    /// The game the network plays.
    pub game: martian_rules::GameKind,
    /// The network and its metadata.
    pub ck: Checkpoint,
    /// The rules it was trained under (the game's `Rules` as JSON), from the
    /// checkpoint's sidecar or the bundle's `model.json`.
    pub rules: serde_json::Value,
    /// What was loaded: the checkpoint file or the bundle directory.
    pub source: PathBuf,
}

/// The game and rules (as JSON) that the model at `source` declares: the
/// checkpoint's sidecar or the bundle's `model.json`.
///
/// # Errors
/// An unreadable or unparsable sidecar or description.
pub fn declared_rules(source: &ModelSource) -> Result<(martian_rules::GameKind, serde_json::Value)> {
    Ok(match source {
        ModelSource::Checkpoint(p) => {
            let meta = Checkpoint::read_meta(p)?;
            (meta.game, meta.rules)
        }
        ModelSource::Bundle(d) => {
            let desc = martian_model::export::read_description(d)?;
            (desc.game, desc.rules)
        }
    })
}

/// Loads the network at `path` (see [`resolve_source`]) on `device` under the
/// rules it declares, with its own architecture, through [`load_checkpoint`].
///
/// # Errors
/// Those of [`resolve_source`], unreadable or inconsistent files, or rules that
/// are not valid rules of the declared game.
pub fn load_model(path: &Path, device: Device) -> Result<LoadedModel> {
    use anyhow::Context;
    let source = resolve_source(path)?;
    let (game, rules) = declared_rules(&source)?;
    let at = source.path();
    let ck = crate::with_game!(game, G => {
        let r: <G as GameState>::Rules = serde_json::from_value(rules.clone())
            .with_context(|| format!("the rules of {} are not valid rules of its game, {}", at.display(), G::KIND))?;
        load_checkpoint::<G>(at, &r, ConfigModel::Absent, device)?
    });
    Ok(LoadedModel { game, ck, rules, source: at.to_path_buf() })
}

/// The `--model` value that asks for no network (uniform priors, value 0)
/// where a bundled model would be used.
pub const NO_MODEL: &str = "none";

/// The environment variable naming a folder of bundled models (one bundle
/// directory per game, named by the game: `martian-chess/`), searched first.
pub const MODELS_ENV: &str = "MARTIAN_ZERO_MODELS";

/// The folders searched for bundled models, first found first:
/// `$MARTIAN_ZERO_MODELS`, `models/` beside the executable, and the
/// `models/` folder of the source tree this binary was built from.
fn model_roots() -> Vec<std::path::PathBuf> {
    let mut roots = Vec::new();
    if let Some(d) = std::env::var_os(MODELS_ENV) {
        roots.push(std::path::PathBuf::from(d));
    }
    if let Some(dir) = std::env::current_exe().ok().and_then(|e| e.parent().map(Path::to_path_buf)) {
        roots.push(dir.join("models"));
    }
    roots.push(Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join("models"));
    roots
}

/// The bundled model of `game` under its default rules (`models/README.md`):
/// the bundle directory `<game>/` (`model.json` + `model.safetensors`, as
/// `export` writes it) in the first of the [`model_roots`]; `None` when the
/// game has none (`models/README.md` lists them with their provenance and
/// measured Elo).
pub fn bundled_model(game: martian_rules::GameKind) -> Option<std::path::PathBuf> {
    model_roots()
        .into_iter()
        .map(|r| r.join(game.to_string()))
        .find(|d| d.join(martian_model::export::DESCRIPTION_FILE).is_file())
        .map(|d| std::fs::canonicalize(&d).unwrap_or(d))
}

/// The bundles of `game` for other rule sets: the directories
/// `<game>-<variant>/` of the [`model_roots`] (e.g. `jetan-zillions/`, a
/// network of Jetan's Zillions rule, spec §8.2 variant) whose `model.json`
/// names `game` (so `martian-chess-4p/` is not a Martian Chess variant), in
/// root order, then by name.
fn variant_bundles(game: martian_rules::GameKind) -> Vec<std::path::PathBuf> {
    let prefix = format!("{game}-");
    let mut out = Vec::new();
    for root in model_roots() {
        let Ok(rd) = std::fs::read_dir(&root) else { continue };
        let mut dirs: Vec<std::path::PathBuf> = rd
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_str().is_some_and(|n| n.starts_with(&prefix)))
            .map(|e| e.path())
            .filter(|d| d.join(martian_model::export::DESCRIPTION_FILE).is_file())
            .filter(|d| declared_rules(&ModelSource::Bundle(d.clone())).is_ok_and(|(g, _)| g == game))
            .collect();
        dirs.sort();
        out.extend(dirs.into_iter().map(|d| std::fs::canonicalize(&d).unwrap_or(d)));
    }
    out
}

/// The model to load for a `--model` of `path` and game `game`: `path`
/// itself; none for [`NO_MODEL`]; without a path and with `bundled`, the
/// game's bundled model ([`bundled_model`]), said on stderr. With `--rules`
/// switches `switches` the bundle is the first, of `<game>/` and then the
/// rule-set bundles `<game>-<variant>/`, whose rules agree with every
/// switch (so `--game jetan --rules chief_captured_by_non_chief="CapturerWins"`
/// picks `jetan-zillions/`); none when no bundle does (four-player
/// free-for-all with the team game's network), said on stderr.
pub fn chosen_model(
    path: Option<&Path>,
    game: Option<martian_rules::GameKind>,
    bundled: bool,
    switches: Option<&str>,
) -> Option<std::path::PathBuf> {
    match (path, game) {
        (Some(p), _) if p == Path::new(NO_MODEL) => None,
        (Some(p), _) => Some(p.to_path_buf()),
        (None, Some(g)) if bundled => {
            let differing = |p: &std::path::PathBuf| -> Vec<String> {
                let declared = declared_rules(&ModelSource::Bundle(p.clone())).map(|(_, r)| r);
                match (switches, &declared) {
                    (Some(s), Ok(r)) => switches_differing(r, s),
                    _ => Vec::new(),
                }
            };
            let default = bundled_model(g);
            let mut candidates: Vec<std::path::PathBuf> = default.iter().cloned().collect();
            if switches.is_some() {
                candidates.extend(variant_bundles(g));
            }
            if let Some(p) = candidates.iter().find(|p| differing(p).is_empty()) {
                eprintln!("using the bundled model {} (--model {NO_MODEL} plays without a network)", p.display());
                return Some(p.clone());
            }
            match &default {
                Some(p) => eprintln!(
                    "the bundled model {} plays under other rules ({}); playing without a network",
                    p.display(),
                    martian_rules::describe_differences("rules", ("--rules", "model"), &differing(p))
                ),
                None if switches.is_some() && !candidates.is_empty() => {
                    eprintln!("no bundled model of {g} plays under these --rules; playing without a network")
                }
                None => {}
            }
            None
        }
        (None, _) => None,
    }
}

/// The `--rules` switches of `switches` whose values differ from `rules` (a
/// model's, as JSON): `teams false vs true` each; none when the text does
/// not parse (the rules' resolution reports that).
fn switches_differing(rules: &serde_json::Value, switches: &str) -> Vec<String> {
    let Ok(table) = parse_rules_switches(switches) else { return Vec::new() };
    table
        .iter()
        .filter_map(|(k, v)| {
            let v = serde_json::to_value(v).ok()?;
            let have = rules.get(k);
            (have != Some(&v)).then(|| {
                let have = have.map_or("(absent)".to_string(), |h| h.to_string());
                format!("{k} {v} vs {have}")
            })
        })
        .collect()
}

/// For `play`, `analyse` and `analysis`: the network at `path` (if any) on
/// the device `device` names, and the game to play: `game` when given, else
/// the network's. Without a path and with `bundled`, the game's bundled
/// model ([`bundled_model`]) when it has one and the `--rules` switches
/// `switches` agree with its rules ([`chosen_model`]), said on stderr; a
/// path of [`NO_MODEL`] means no network.
///
/// # Errors
/// A bad device name, an unloadable model, or neither a game nor a model.
pub fn model_and_game(
    path: Option<&Path>,
    device: &str,
    game: Option<martian_rules::GameKind>,
    bundled: bool,
    switches: Option<&str>,
) -> Result<(Option<LoadedModel>, Device, martian_rules::GameKind)> {
    let (model, device) = match chosen_model(path, game, bundled, switches) {
        Some(p) => {
            let device = martian_model::parse_device(device)?;
            (Some(load_model(&p, device)?), device)
        }
        None => (None, Device::Cpu),
    };
    let game = match (game, &model) {
        (Some(g), _) => g,
        (None, Some(m)) => m.game,
        (None, None) => {
            anyhow::bail!("give --game {} (or --model, whose game is used)", martian_rules::GameKind::names().join("|"))
        }
    };
    Ok((model, device, game))
}

/// The rules of game `G` of a command that plays one game (`show`, `play`,
/// `analyse`, `analysis`): those `model` was trained under, or the default
/// rules without a model, with the `--rules` switches `switches` (text of
/// [`parse_rules_switches`]) on top; an error when the model plays another game.
///
/// # Errors
/// A model of another game, rules that do not parse as `G`'s, or switches
/// that [`rules_with_switches`] refuses.
pub fn model_rules<G: GameState>(model: Option<&LoadedModel>, switches: Option<&str>) -> Result<G::Rules> {
    let (base, source) = match model {
        None => (None, String::new()),
        Some(m) if m.game != G::KIND => {
            anyhow::bail!("--game {} but the model {} plays {}", G::KIND, m.source.display(), m.game)
        }
        Some(m) => (Some(&m.rules), format!("the model {}", m.source.display())),
    };
    rules_with_switches::<G>(base, &source, switches)
}

/// Reads the `--rules` text: switches of a config's `[rules]` table,
/// `key=value` pairs separated by commas, each value in TOML (`teams=false`,
/// `max_plies=300,chief_captured_by_non_chief="CapturerWins"`); the text
/// may also be a TOML inline table (`{teams=false}`).
///
/// # Errors
/// Text that is not such a list, naming `--rules`.
pub fn parse_rules_switches(text: &str) -> Result<toml::Table> {
    let t = text.trim();
    let inner = t.strip_prefix('{').and_then(|r| r.strip_suffix('}')).unwrap_or(t);
    let doc: toml::Table = format!("rules = {{ {inner} }}").parse().map_err(|e: toml::de::Error| {
        anyhow::anyhow!(
            "--rules {text:?}: expected key=value switches of [rules] separated by commas, \
             values in TOML (teams=false, chief_captured_by_non_chief=\"CapturerWins\"): {}",
            e.message()
        )
    })?;
    match doc.get("rules") {
        Some(toml::Value::Table(t)) => Ok(t.clone()),
        _ => anyhow::bail!("--rules {text:?}: expected key=value switches of [rules]"),
    }
}

/// Game `G`'s rules for a command: `base` (a network's rules as its
/// checkpoint stores them, from `source`; `None`: the game's defaults) with
/// the `--rules` switches (`switches`, [`parse_rules_switches`]) set. With a
/// network the switches must agree with its rules, which it was trained
/// under: a differing switch is an error naming it, as the checkpoint loader
/// names a config's differing switches.
///
/// # Errors
/// Unparsable switches, an unknown switch or value (named), rules the game
/// does not implement, or switches that differ from the network's.
pub fn rules_with_switches<G: GameState>(
    base: Option<&serde_json::Value>,
    source: &str,
    switches: Option<&str>,
) -> Result<G::Rules> {
    let base_rules: G::Rules = match base {
        Some(r) => serde_json::from_value(r.clone())
            .map_err(|e| anyhow::anyhow!("the rules of {source} are not valid {} rules: {e}", G::KIND))?,
        None => G::Rules::default(),
    };
    let Some(text) = switches else { return Ok(base_rules) };
    let table = parse_rules_switches(text)?;
    let mut merged = serde_json::to_value(&base_rules)?;
    let obj = merged.as_object_mut().ok_or_else(|| anyhow::anyhow!("{} rules are not a table", G::KIND))?;
    for (k, v) in &table {
        obj.insert(k.clone(), serde_json::to_value(v)?);
    }
    let rules: G::Rules =
        serde_json::from_value(merged).map_err(|e| anyhow::anyhow!("--rules for {}: {e}", G::KIND))?;
    G::new_game(&rules).map_err(|e| anyhow::anyhow!("--rules: {e}"))?;
    if base.is_some() {
        let diffs = martian_rules::field_differences(&rules, &base_rules);
        if !diffs.is_empty() {
            anyhow::bail!(
                "{}: {source} was trained under other rules; play it under its own (leave out --rules \
                 or give its values)",
                martian_rules::describe_differences("rules", ("--rules", "model"), &diffs)
            );
        }
    }
    Ok(rules)
}
