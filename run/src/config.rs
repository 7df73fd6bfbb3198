//! The run configuration: one TOML file with `game`, `device`, `seed`,
//! `threads` and the tables `[rules] [model] [search] [selfplay] [train]
//! [evaluate] [pipeline]`. Every table rejects unknown keys (the error names
//! the key); `validate` checks ranges and names the field. See `configs/README.md`.

use std::path::Path;

use anyhow::{bail, Context, Result};
use martian_model::ModelConfig;
use martian_rules::{GameKind, GameState};
use martian_search::MctsConfig;
use martian_selfplay::SelfplayConfig;
use martian_train::TrainConfig;
use serde::{Deserialize, Serialize};

/// Match settings for `evaluate` and the pipeline's promotion gate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct EvaluateConfig {
    /// Game pairs per match (each pair: both colours from one opening). Default 10.
    pub pairs: u32,
    /// Random plies of each pair's opening. Default 4.
    pub opening_plies: u32,
    /// MCTS simulations per move for network players (no noise). Default 32.
    pub simulations: u32,
    /// Score (wins + draws/2, share of games) the candidate needs against the
    /// best network to be promoted. Range 0..=1. Default 0.55; 0 promotes always
    /// (AlphaZero's no-gating).
    pub gate_score: f64,
    /// Game pairs of the final report: trained best vs the untrained network
    /// and vs the random player. 0 skips it. Default 10.
    pub final_pairs: u32,
    /// Promotion gate: `score` (fixed number of pairs, promote if the score
    /// reaches `gate_score`; default) or `sprt` (play pairs until the SPRT
    /// `[sprt_elo0, sprt_elo1]` decides, at most `pairs`; promote on H1).
    pub gate: GateKind,
    /// SPRT H0 Elo difference. Default 0.
    pub sprt_elo0: f64,
    /// SPRT H1 Elo difference (> `sprt_elo0`). Default 50.
    pub sprt_elo1: f64,
    /// SPRT false-positive rate. Default 0.05.
    pub sprt_alpha: f64,
    /// SPRT false-negative rate. Default 0.05.
    pub sprt_beta: f64,
    /// The strength ladder: fixed alpha-beta players (`alphabeta:...` specs)
    /// that the promoted network plays every `ladder_every` generations and
    /// after the last one. Empty = the game's default
    /// ([`EvaluateConfig::ladder_specs`]).
    pub ladder: Vec<String>,
    /// Play the ladder every this many generations (and after the last);
    /// 0 = never. Default 5.
    pub ladder_every: u32,
    /// Game pairs per ladder match (and per calibration match between ladder
    /// players). Default 10.
    pub ladder_pairs: u32,
}

/// The pipeline's promotion gate (see [`EvaluateConfig::gate`]).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum GateKind {
    /// Fixed number of pairs and a score threshold.
    #[default]
    Score,
    /// Sequential probability ratio test (fishtest).
    Sprt,
}

impl EvaluateConfig {
    /// The ladder's player specs: `ladder`, or the default for `game`
    /// (Jetan: alpha-beta depths 1 and 2; Martian Chess: depths 1, 2, 3 — the
    /// depths its quick runs reach within an hour on 2 cores).
    pub fn ladder_specs(&self, game: GameKind) -> Vec<String> {
        if !self.ladder.is_empty() {
            return self.ladder.clone();
        }
        let depths: &[u32] = crate::with_game!(game, G => <G as martian_search::AbGame>::LADDER_DEPTHS);
        depths.iter().map(|d| format!("alphabeta:depth={d}")).collect()
    }

    /// The SPRT parameters of the gate.
    pub fn sprt(&self) -> martian_evaluate::SprtParams {
        martian_evaluate::SprtParams {
            elo0: self.sprt_elo0,
            elo1: self.sprt_elo1,
            alpha: self.sprt_alpha,
            beta: self.sprt_beta,
        }
    }
}

impl Default for EvaluateConfig {
    fn default() -> Self {
        EvaluateConfig {
            pairs: 10,
            opening_plies: 4,
            simulations: 32,
            gate_score: 0.55,
            final_pairs: 10,
            gate: GateKind::Score,
            sprt_elo0: 0.0,
            sprt_elo1: 50.0,
            sprt_alpha: 0.05,
            sprt_beta: 0.05,
            ladder: Vec::new(),
            ladder_every: 5,
            ladder_pairs: 10,
        }
    }
}

/// Generation loop settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PipelineConfig {
    /// Generations (self-play -> train -> gate). Default 4.
    pub generations: u32,
    /// Self-play games per generation. Default 64.
    pub games_per_generation: u32,
    /// Stop starting new generations after this many minutes (0 = no limit);
    /// the newest generation then gets the final evaluation and the ladder,
    /// as at the end of a run. Default 0.
    pub max_minutes: f64,
    /// A bootstrap from the baseline (**not zero**: off by default
    /// and reported separately): this many of generation 1's games are played
    /// by `bootstrap_player` against itself instead of by the untrained
    /// network, after `evaluate.opening_plies` random plies (seeded by the game
    /// id), with the teacher's move as a one-hot policy target and the result
    /// as the value target (worker `boot` in the shard and record names). Up
    /// to `games_per_generation`; 0 = off. Default 0.
    pub bootstrap_games: u32,
    /// The teacher of `bootstrap_games`: a fixed alpha-beta player spec
    /// (`alphabeta:depth=N` or `nodes=N`). Default `alphabeta:depth=2`.
    pub bootstrap_player: String,
    /// A curriculum of rules: when > 0, only generations `1..=N` play their
    /// self-play under `[selfplay_rules]`; later generations play under
    /// `[rules]`, the network carrying over (e.g. Jetan's decisive Zillions
    /// rule first, then the standard rule: only the Chief-capture result
    /// differs, spec §8.2). 0 = every generation under `[selfplay_rules]`.
    /// Default 0.
    pub selfplay_rules_generations: u32,
}

impl Default for PipelineConfig {
    fn default() -> Self {
        PipelineConfig {
            generations: 4,
            games_per_generation: 64,
            max_minutes: 0.0,
            bootstrap_games: 0,
            bootstrap_player: "alphabeta:depth=2".into(),
            selfplay_rules_generations: 0,
        }
    }
}

/// The whole run configuration.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunConfig {
    /// A name of the game registry (`jetan`, `martian-chess`, `martian-chess-4p`).
    pub game: GameKind,
    /// `auto` (CUDA if available), `cpu`, `cuda` or `cuda:N`; for self-play on
    /// several devices `cuda:all` or a list, written `"cuda:0,cuda:1"` or as a
    /// TOML array `["cuda:0", "cuda:1"]` (kept as the comma-separated text):
    /// one network replica per device, each fed by its own game groups
    /// (`selfplay.groups`); training and matches use the first device.
    /// `"cpu,cpu"` gives two CPU replicas (tests). Default `auto`.
    #[serde(default = "default_device", deserialize_with = "device_text")]
    pub device: String,
    /// Seed of every random choice (network init, noise, openings). Default 1.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// CPU threads for rayon: the search and game phases of self-play and
    /// matches (0 = all cores). Default 0.
    #[serde(default)]
    pub threads: usize,
    /// libtorch intra-op threads for the network on the CPU (0 = all cores).
    /// Default 1: libtorch's OpenMP threads spin while they wait, so when the
    /// cores are shared (rayon workers, other processes) more threads made
    /// small-batch inference about 10x slower here (see BENCHMARKS.md).
    /// Raise it on an idle machine with large batches.
    #[serde(default = "default_torch_threads")]
    pub torch_threads: usize,
    /// The game's rules switches (see `docs/rules/`); empty = standard rules.
    #[serde(default = "empty_table")]
    pub rules: toml::Table,
    /// Rules switches for the self-play games only, on top of `[rules]`
    /// (empty = self-play under `[rules]`): a training curriculum in the way
    /// KataGo varies its rules in self-play. Matches, the promotion gate,
    /// the ladder and the final evaluation always play `[rules]`. Jetan's
    /// `chief_captured_by_non_chief = "RemoveAndContinue"` (spec §8.2) lets a
    /// game go on after a Chief is taken, so that it ends by the Princess
    /// (spec §8.2's variant; `docs/experiments/2026-12-02-jetan-continue-after-chief.md`). May change between
    /// sittings of a run; the number of players may not differ from `[rules]`'.
    #[serde(default = "empty_table", skip_serializing_if = "toml::Table::is_empty")]
    pub selfplay_rules: toml::Table,
    /// Network architecture.
    #[serde(default)]
    pub model: ModelConfig,
    /// MCTS settings.
    #[serde(default)]
    pub search: MctsConfig,
    /// Self-play settings.
    #[serde(default)]
    pub selfplay: SelfplayConfig,
    /// Training settings.
    #[serde(default)]
    pub train: TrainConfig,
    /// Evaluation settings.
    #[serde(default)]
    pub evaluate: EvaluateConfig,
    /// Generation loop settings.
    #[serde(default)]
    pub pipeline: PipelineConfig,
}

fn default_device() -> String {
    "auto".into()
}

/// `device` as a string or an array of strings (joined with commas).
fn device_text<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Text {
        One(String),
        List(Vec<String>),
    }
    match Text::deserialize(d)? {
        Text::One(s) => Ok(s),
        Text::List(v) if v.is_empty() => Err(serde::de::Error::custom("device: the list is empty")),
        Text::List(v) => Ok(v.join(",")),
    }
}
fn default_torch_threads() -> usize {
    1
}
fn default_seed() -> u64 {
    1
}
fn empty_table() -> toml::Table {
    toml::Table::new()
}

impl RunConfig {
    /// Reads and validates a config file.
    ///
    /// # Errors
    /// Unreadable file, TOML syntax, unknown key (named), or value out of range (named).
    pub fn load(path: &Path) -> Result<RunConfig> {
        let text = read_config_text(path)?;
        Self::parse(&text).with_context(|| format!("in config {}", path.display()))
    }

    /// Reads a config file, applies `KEY=VALUE` overrides (the `--set`
    /// option of `bench`) and validates the result. A key is a dotted path
    /// (`model.precision`, `train.batch_size`, `seed`); a value is read as a
    /// TOML value (`512`, `0.5`, `true`, `"text"`, `["cpu", "cpu"]`), and as
    /// a string when it is not one (`bf16`).
    ///
    /// # Errors
    /// As [`RunConfig::load`]; an override that is not `KEY=VALUE`, a key
    /// below a value that is not a table, or an unknown key or bad value
    /// (named by the config's own checks, with the overrides listed).
    pub fn load_with_overrides(path: &Path, sets: &[String]) -> Result<RunConfig> {
        if sets.is_empty() {
            return Self::load(path);
        }
        let text = read_config_text(path)?;
        let mut table: toml::Table = toml::from_str(&text)
            .map_err(|e| anyhow::anyhow!("{e}"))
            .with_context(|| format!("in config {}", path.display()))?;
        for set in sets {
            apply_override(&mut table, set)?;
        }
        let text = toml::to_string(&table).context("writing the overridden config")?;
        Self::parse(&text).with_context(|| format!("in config {} with --set {}", path.display(), sets.join(" --set ")))
    }

    /// Parses and validates config text.
    ///
    /// # Errors
    /// As [`RunConfig::load`].
    pub fn parse(text: &str) -> Result<RunConfig> {
        let cfg: RunConfig = toml::from_str(text).map_err(|e| anyhow::anyhow!("{e}"))?;
        cfg.validate()?;
        Ok(cfg)
    }

    /// Range checks of every table, and that `[rules]` fits the game.
    ///
    /// # Errors
    /// The first problem found, naming the field.
    pub fn validate(&self) -> Result<()> {
        let devices = martian_model::parse_devices(&self.device).map_err(|e| anyhow::anyhow!("device: {e}"))?;
        for d in devices {
            self.model.precision.check_device(d).map_err(|e| anyhow::anyhow!("{e} (device = {:?})", self.device))?;
        }
        for (name, n) in [("threads", self.threads), ("torch_threads", self.torch_threads)] {
            if n > 1024 {
                bail!("{name} must be in 0..=1024 (0 = all cores), got {n}");
            }
        }
        // Ranges, and that the heads fit the game (a score head needs points).
        crate::with_game!(self.game, G => self.model.validate_for::<G>()).map_err(anyhow::Error::msg)?;
        self.search.validate().map_err(anyhow::Error::msg)?;
        self.selfplay.validate().map_err(anyhow::Error::msg)?;
        self.selfplay.validate_with_search(&self.search).map_err(anyhow::Error::msg)?;
        self.train.validate().map_err(anyhow::Error::msg)?;
        let e = &self.evaluate;
        if !(0.0..=1.0).contains(&e.gate_score) {
            bail!("evaluate.gate_score must be in 0..=1, got {}", e.gate_score);
        }
        e.sprt().validate().map_err(|m| anyhow::anyhow!("evaluate.{m}"))?;
        if e.simulations == 0 {
            bail!("evaluate.simulations must be >= 1");
        }
        if e.pairs == 0 {
            bail!("evaluate.pairs must be >= 1 (the promotion gate needs games)");
        }
        for spec in &e.ladder {
            match martian_evaluate::PlayerSpec::parse(spec) {
                Ok(martian_evaluate::PlayerSpec::AlphaBeta { limits, .. }) if limits.movetime.is_none() => {}
                Ok(_) => bail!(
                    "evaluate.ladder: {spec:?} is not a fixed alpha-beta player (use alphabeta:depth=N or nodes=N; \
                     a time limit is not reproducible)"
                ),
                Err(err) => bail!("evaluate.ladder: {err}"),
            }
        }
        if e.ladder_pairs == 0 && e.ladder_every > 0 {
            bail!("evaluate.ladder_pairs must be >= 1 when evaluate.ladder_every > 0");
        }
        if e.opening_plies > 40 {
            bail!("evaluate.opening_plies must be in 0..=40, got {}", e.opening_plies);
        }
        if self.pipeline.generations == 0 {
            bail!("pipeline.generations must be >= 1");
        }
        // The rules allow a cap of 0 plies (a loaded position is then over), but
        // a run whose every game ends before its first move has nothing to learn.
        if self.rules_json()?.get("max_plies").and_then(|v| v.as_u64()) == Some(0) {
            bail!("rules.max_plies = 0 ends every game before its first move: give a cap of at least 1 ply");
        }
        if self.selfplay_rules.get("max_plies").and_then(|v| v.as_integer()) == Some(0) {
            bail!(
                "selfplay_rules.max_plies = 0 ends every self-play game before its first move: give a cap of \
                 at least 1 ply"
            );
        }
        if self.pipeline.games_per_generation == 0 {
            bail!("pipeline.games_per_generation must be >= 1");
        }
        if self.pipeline.bootstrap_games > self.pipeline.games_per_generation {
            bail!(
                "pipeline.bootstrap_games ({}) must be at most pipeline.games_per_generation ({})",
                self.pipeline.bootstrap_games,
                self.pipeline.games_per_generation
            );
        }
        match martian_evaluate::PlayerSpec::parse(&self.pipeline.bootstrap_player) {
            Ok(martian_evaluate::PlayerSpec::AlphaBeta { limits, .. }) if limits.movetime.is_none() => {}
            Ok(_) => bail!(
                "pipeline.bootstrap_player: {:?} is not a fixed alpha-beta player (use alphabeta:depth=N or nodes=N)",
                self.pipeline.bootstrap_player
            ),
            Err(err) => bail!("pipeline.bootstrap_player: {err}"),
        }
        if self.pipeline.max_minutes.is_nan() || self.pipeline.max_minutes < 0.0 {
            bail!("pipeline.max_minutes must be >= 0");
        }
        crate::with_game!(self.game, G => self.check_players::<G>())
    }

    /// That `[rules]` are supported and that the value head and the search
    /// fit the game's number of value players under them
    /// (`GameState::num_players`: free-for-all needs `model.value_players =
    /// 4` and no two-player search proofs).
    fn check_players<G: GameState>(&self) -> Result<()> {
        let players = G::new_game(&self.rules::<G>()?).map_err(|e| anyhow::anyhow!("[rules]: {e}"))?.num_players();
        let sp = G::new_game(&self.selfplay_rules::<G>()?).map_err(|e| anyhow::anyhow!("[selfplay_rules]: {e}"))?;
        if sp.num_players() != players {
            bail!(
                "[selfplay_rules] make a game of {} value players, [rules] one of {players}: the network \
                 trained in self-play must be the one matches play",
                sp.num_players()
            );
        }
        self.model.validate_for_players::<G>(players).map_err(anyhow::Error::msg)?;
        if players > 2 && self.evaluate.gate == GateKind::Sprt {
            bail!(
                "[evaluate] gate = \"sprt\" needs pair results, which a game of {players} value players \
                 (free-for-all) does not have; use gate = \"score\""
            );
        }
        self.search.validate_for_players(players).map_err(anyhow::Error::msg)
    }

    /// The `[rules]` table as game `G`'s rules (and checks that they are supported).
    ///
    /// # Errors
    /// Unknown switch or value (named), or a switch value not implemented.
    pub fn rules<G: GameState>(&self) -> Result<G::Rules> {
        let rules: G::Rules = toml::Value::Table(self.rules.clone())
            .try_into()
            .map_err(|e| anyhow::anyhow!("[rules] for {}: {e}", G::KIND))?;
        G::new_game(&rules).map_err(|e| anyhow::anyhow!("[rules]: {e}"))?;
        Ok(rules)
    }

    /// The rules of the self-play games: `[rules]` with `[selfplay_rules]`
    /// on top (the field `selfplay_rules` says what they are for).
    ///
    /// # Errors
    /// Unknown switch or value in either table (named, with its table), or a
    /// switch value not implemented.
    pub fn selfplay_rules<G: GameState>(&self) -> Result<G::Rules> {
        self.selfplay_rules_at::<G>(1)
    }

    /// The rules of generation `g`'s self-play games: [`Self::selfplay_rules`]
    /// up to `pipeline.selfplay_rules_generations` (all generations when it is
    /// 0), `[rules]` after.
    ///
    /// # Errors
    /// As [`Self::selfplay_rules`].
    pub fn selfplay_rules_at<G: GameState>(&self, g: u32) -> Result<G::Rules> {
        let n = self.pipeline.selfplay_rules_generations;
        if n > 0 && g > n {
            return self.rules::<G>();
        }
        if self.selfplay_rules.is_empty() {
            return self.rules::<G>();
        }
        let mut merged = self.rules.clone();
        merged.extend(self.selfplay_rules.clone());
        let rules: G::Rules = toml::Value::Table(merged)
            .try_into()
            .map_err(|e| anyhow::anyhow!("[selfplay_rules] for {}: {e}", G::KIND))?;
        G::new_game(&rules).map_err(|e| anyhow::anyhow!("[selfplay_rules]: {e}"))?;
        Ok(rules)
    }

    /// The resolved rules of the config's game as JSON (every switch, defaults
    /// filled in), for comparisons that name the differing switches.
    ///
    /// # Errors
    /// As [`RunConfig::rules`].
    pub fn rules_json(&self) -> Result<serde_json::Value> {
        Ok(crate::with_game!(self.game, G => serde_json::to_value(self.rules::<G>()?))?)
    }

    /// The config as TOML text (for the run directory's copy). Values held as
    /// `f32` are written in their shortest form (`0.2`, not the `f64` widening
    /// `0.20000000298023224`); reading the text back gives the same config.
    pub fn to_toml(&self) -> String {
        let Ok(mut value) = toml::Value::try_from(self) else {
            return toml::to_string_pretty(self).unwrap_or_default();
        };
        shorten_f32_floats(&mut value);
        toml::to_string_pretty(&value).unwrap_or_default()
    }
}

/// Sets the dotted key of `set` (`KEY=VALUE`) in `table`, creating tables on the way.
///
/// # Errors
/// Not `KEY=VALUE`, an empty key part, or a key part below a value that is not a table.
fn apply_override(table: &mut toml::Table, set: &str) -> Result<()> {
    let (key, value) =
        set.split_once('=').with_context(|| format!("--set {set:?}: expected KEY=VALUE, e.g. model.precision=bf16"))?;
    let (key, value) = (key.trim(), value.trim());
    let parts: Vec<&str> = key.split('.').map(str::trim).collect();
    if parts.iter().any(|p| p.is_empty()) {
        bail!("--set {set:?}: the key {key:?} has an empty part");
    }
    // A TOML value when it parses as one, else the text as a string.
    let value = toml::from_str::<toml::Table>(&format!("v = {value}"))
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| toml::Value::String(value.to_string()));
    let (last, path) = parts.split_last().expect("split gives at least one part");
    let mut t = table;
    for (i, part) in path.iter().enumerate() {
        let entry = t.entry(part.to_string()).or_insert_with(|| toml::Value::Table(toml::Table::new()));
        t = entry
            .as_table_mut()
            .with_context(|| format!("--set {set:?}: {} is a value, not a table", parts[..=i].join(".")))?;
    }
    t.insert(last.to_string(), value);
    Ok(())
}

/// Rewrites every float of a TOML tree that is exactly an `f32` as the `f64`
/// nearest to the `f32`'s shortest decimal form, so that `0.2f32` prints as
/// `0.2`. A float that is not exactly an `f32` (a true `f64` setting) is kept.
fn shorten_f32_floats(value: &mut toml::Value) {
    match value {
        toml::Value::Float(x) => {
            let single = *x as f32;
            if single.is_finite() && f64::from(single) == *x {
                if let Ok(short) = single.to_string().parse::<f64>() {
                    *x = short;
                }
            }
        }
        toml::Value::Array(items) => items.iter_mut().for_each(shorten_f32_floats),
        toml::Value::Table(table) => table.iter_mut().for_each(|(_, v)| shorten_f32_floats(v)),
        _ => {}
    }
}

/// The text of the config file `path`: a regular file of at most 16 MiB in UTF-8.
///
/// # Errors
/// Naming the file: missing, unreadable, a device or directory, too large, not UTF-8.
fn read_config_text(path: &Path) -> Result<String> {
    let bytes =
        crate::io::read_limited(path, 16 << 20).with_context(|| format!("reading config {}", path.display()))?;
    String::from_utf8(bytes).map_err(|e| {
        anyhow::anyhow!("config {} is not UTF-8 text (at byte {})", path.display(), e.utf8_error().valid_up_to())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn to_toml_writes_f32_values_in_short_form_and_round_trips() {
        let text = "game = \"martian-chess\"\n[selfplay]\nfinal_temperature = 0.2\n[search]\ngumbel_c_scale = 0.1\n";
        let config: RunConfig = toml::from_str(text).unwrap();
        let written = config.to_toml();
        assert!(written.contains("final_temperature = 0.2\n"), "{written}");
        assert!(written.contains("gumbel_c_scale = 0.1\n"), "{written}");
        assert!(!written.contains("0000000"), "{written}");
        let back: RunConfig = toml::from_str(&written).unwrap();
        assert_eq!(back.to_toml(), written);
        assert_eq!(back.selfplay.final_temperature, config.selfplay.final_temperature);
    }

    #[test]
    fn every_shipped_config_parses_and_validates() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs");
        let mut names = Vec::new();
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().and_then(|e| e.to_str()) != Some("toml") {
                continue;
            }
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            let cfg = RunConfig::load(&path).unwrap_or_else(|e| panic!("{name}: {e:#}"));
            assert_eq!(cfg.device, "auto", "{name}");
            // The copy written into a run directory reads back the same.
            assert_eq!(RunConfig::parse(&cfg.to_toml()).unwrap(), cfg, "{name}");
            names.push(name);
        }
        for want in ["jetan-quick.toml", "martian-chess-quarter-hour.toml", "jetan-zillions-quick.toml"] {
            assert!(names.iter().any(|n| n == want), "{want} not among {names:?}");
        }
    }

    #[test]
    fn device_lists_read_as_text_and_round_trip() {
        for (text, want) in [
            ("device = \"cpu,cpu\"", "cpu,cpu"),
            ("device = [\"cpu\", \"cpu\"]", "cpu,cpu"),
            ("device = [\"cpu\"]", "cpu"),
        ] {
            let cfg = RunConfig::parse(&format!("game = \"jetan\"\n{text}\n[selfplay]\ngroups = 2\n")).unwrap();
            assert_eq!((cfg.device.as_str(), cfg.selfplay.groups), (want, 2), "{text}");
            assert_eq!(RunConfig::parse(&cfg.to_toml()).unwrap(), cfg, "{text}");
        }
    }

    #[test]
    fn forced_playouts_pruning_and_threat_check_keys_parse() {
        let text = "game = \"jetan\"\n[search]\nforced_playouts_k = 2\nleaf_threat_check = true\n\
                    [selfplay]\npolicy_target_pruning = true\n";
        let cfg = RunConfig::parse(text).unwrap();
        assert_eq!(cfg.search.forced_playouts_k, 2.0);
        assert!(cfg.search.leaf_threat_check && cfg.selfplay.policy_target_pruning);
        assert_eq!(RunConfig::parse(&cfg.to_toml()).unwrap(), cfg);
        // Off by default.
        let cfg = RunConfig::parse("game = \"jetan\"\n").unwrap();
        assert_eq!(cfg.search.forced_playouts_k, 0.0);
        assert!(!cfg.search.leaf_threat_check && !cfg.selfplay.policy_target_pruning);
    }

    #[test]
    fn precision_parses_round_trips_and_is_not_written_in_fp32() {
        let cfg = RunConfig::parse("game = \"jetan\"\ndevice = \"cpu\"\n[model]\nprecision = \"bf16\"\n").unwrap();
        assert_eq!(cfg.model.precision, martian_model::Precision::Bf16);
        assert!(cfg.to_toml().contains("precision = \"bf16\""), "{}", cfg.to_toml());
        assert_eq!(RunConfig::parse(&cfg.to_toml()).unwrap(), cfg);
        let plain = RunConfig::parse("game = \"jetan\"\n").unwrap();
        assert_eq!(plain.model.precision, martian_model::Precision::Fp32);
        assert!(!plain.to_toml().contains("precision"), "fp32 configs are written as before");
    }

    #[test]
    fn overrides_set_keys_and_name_their_errors() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.toml");
        std::fs::write(&path, "game = \"jetan\"\ndevice = \"cpu\"\n[train]\nbatch_size = 64\n").unwrap();
        let sets = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let cfg = RunConfig::load_with_overrides(
            &path,
            &sets(&["model.precision=bf16", "train.batch_size=512", "seed=7", "selfplay.root_noise=false"]),
        )
        .unwrap();
        assert_eq!(cfg.model.precision, martian_model::Precision::Bf16);
        assert_eq!((cfg.train.batch_size, cfg.seed, cfg.selfplay.root_noise), (512, 7, false));
        assert_eq!(RunConfig::load_with_overrides(&path, &[]).unwrap(), RunConfig::load(&path).unwrap());
        for (set, needle) in [
            ("model.precison=bf16", "precison"),
            ("model.precision=fp8", "model.precision must be one of"),
            ("train.batch_size=many", "--set train.batch_size=many"),
            ("train.batch_size=0", "train.batch_size"),
            ("precision", "expected KEY=VALUE"),
            ("model..blocks=2", "empty part"),
            ("device.x=1", "device is a value, not a table"),
            ("colour=1", "colour"),
        ] {
            let e = format!("{:#}", RunConfig::load_with_overrides(&path, &sets(&[set])).unwrap_err());
            assert!(e.contains(needle), "--set {set}: {e}");
        }
    }

    #[test]
    fn unknown_and_invalid_fields_are_named() {
        let base = "game = \"jetan\"\n";
        let cases = [
            (format!("{base}[train]\nbatch_sise = 3\n"), "batch_sise"),
            (format!("{base}[search]\nnoise_fraction = 3.0\n"), "search.noise_fraction"),
            (format!("{base}[model]\nblocks = 0\n"), "model.blocks"),
            (format!("{base}[rules]\nthoat = \"Flying\"\n"), "Flying"),
            (format!("{base}[rules]\nescape = \"StraightLineUpTo9\"\n"), "escape"),
            (format!("{base}colour = 1\n"), "colour"),
            ("game = \"chess\"\n".to_string(), "chess"),
            (format!("{base}device = \"tpu\"\n"), "tpu"),
            (format!("{base}device = \"cpu,,cpu\"\n"), "empty item"),
            (format!("{base}device = []\n"), "device"),
            (format!("{base}device = [\"cpu\", \"tpu\"]\n"), "tpu"),
            (format!("{base}[selfplay]\ngroups = 0\n"), "selfplay.groups"),
            (format!("{base}[selfplay]\ngroups = 65\n"), "selfplay.groups"),
            (format!("{base}[selfplay]\ncheap_simulations = 500\n"), "selfplay.cheap_simulations"),
            (format!("{base}[train]\nreplay_window = 10\n"), "train.replay_window"),
            (format!("{base}threads = 100000\n"), "threads"),
            (format!("{base}torch_threads = 5000\n"), "torch_threads"),
            (format!("{base}[evaluate]\npairs = 0\n"), "evaluate.pairs"),
            (format!("{base}[evaluate]\nopening_plies = 1000\n"), "evaluate.opening_plies"),
            (format!("{base}[pipeline]\ngenerations = 0\n"), "pipeline.generations"),
            (format!("{base}[evaluate]\nladder = [\"random\"]\n"), "evaluate.ladder"),
            (format!("{base}[evaluate]\nladder = [\"alphabeta:movetime=50\"]\n"), "not reproducible"),
            (format!("{base}[evaluate]\nladder = [\"alphabeta:depth=x\"]\n"), "depth"),
            (format!("{base}[evaluate]\nladder = [\"alphabeta:depth=5,horizon=2\"]\n"), "unknown key \"horizon\""),
            (format!("{base}[search]\nstatic_score_utility = 2\n"), "search.static_score_utility"),
            (format!("{base}[search]\nscore_utility_scale = 0\n"), "search.score_utility_scale"),
            (format!("{base}[evaluate]\nladder_pairs = 0\n"), "evaluate.ladder_pairs"),
            (format!("{base}[rules]\nmax_plies = 0\n"), "max_plies"),
            ("game = \"martian-chess\"\n[rules]\nmax_plies = 0\n".to_string(), "rules.max_plies = 0"),
            (format!("{base}[search]\ngumbel_considered = 0\n"), "search.gumbel_considered"),
            (format!("{base}[selfplay]\nvalue_target_q_weight = 2\n"), "selfplay.value_target_q_weight"),
            (format!("{base}[selfplay]\ndraw_value = -0.5\n"), "selfplay.draw_value"),
            (format!("{base}[selfplay]\npolicy_surprise_weight = -1\n"), "selfplay.policy_surprise_weight"),
            (format!("{base}[train]\nreplay_window_min = 200000\n"), "train.replay_window_min"),
            (format!("{base}[train]\nsamples_per_new_position = -1\n"), "train.samples_per_new_position"),
            (format!("{base}[pipeline]\nbootstrap_games = 1000\n"), "pipeline.bootstrap_games"),
            (format!("{base}[search]\nforced_playouts_k = 11\n"), "search.forced_playouts_k"),
            (format!("{base}[search]\nforced_playouts_k = -1\n"), "search.forced_playouts_k"),
            (
                format!("{base}[search]\nforced_playouts_k = 2\nroot_selection = \"gumbel\"\n"),
                "search.root_selection",
            ),
            (
                format!("{base}[search]\nleaf_threat_check = true\nterminal_children = false\n"),
                "search.leaf_threat_check",
            ),
            (format!("{base}[search]\nterminal_children = false\n"), "search.trap_plies"),
            (format!("{base}[search]\ntrap_plies = 2\n"), "search.trap_plies"),
            (format!("{base}[search]\ntrap_visits = 0\n"), "search.trap_visits"),
            (format!("{base}[search]\ndraw_penalty = 0.7\n"), "search.draw_penalty"),
            (format!("{base}[selfplay]\npolicy_target_pruning = true\n"), "search.forced_playouts_k"),
            (
                format!(
                    "{base}[search]\nforced_playouts_k = 2\n[selfplay]\npolicy_target_pruning = true\n\
                     policy_target = \"completed_q\"\n"
                ),
                "selfplay.policy_target",
            ),
            (
                format!(
                    "{base}[search]\nforced_playouts_k = 2\n[selfplay]\npolicy_target_pruning = true\nroot_noise = false\n"
                ),
                "selfplay.root_noise",
            ),
            (format!("{base}[model]\nscore_head = true\n"), "model.score_head"),
            (format!("{base}[model]\nprecision = \"fp8\"\n"), "model.precision must be one of \"fp32\", \"bf16\", \"fp16\""),
            (format!("{base}[model]\nprecision = 16\n"), "model.precision"),
            (format!("{base}device = \"cpu\"\n[model]\nprecision = \"fp16\"\n"), "needs a CUDA device"),
            (format!("{base}[model]\nmoves_left_head = 1\n"), "moves_left_head"),
            (format!("{base}[train]\nmoves_left_loss_weight = -1\n"), "train.moves_left_loss_weight"),
            (format!("{base}[train]\nscore_loss_weight = 1000\n"), "train.score_loss_weight"),
            (
                format!("{base}[pipeline]\nbootstrap_games = 1\nbootstrap_player = \"greedy\"\n"),
                "pipeline.bootstrap_player",
            ),
        ];
        for (text, needle) in cases {
            let e = format!("{:#}", RunConfig::parse(&text).unwrap_err());
            assert!(e.contains(needle), "error for {text:?} should name {needle:?}: {e}");
        }
        // The heads themselves are accepted where they fit: both for Martian
        // Chess, moves left for Jetan.
        let mc =
            RunConfig::parse("game = \"martian-chess\"\n[model]\nscore_head = true\nmoves_left_head = true\n").unwrap();
        assert!(mc.model.score_head && mc.model.moves_left_head && mc.train.score_loss_weight == 0.1);
        RunConfig::parse(&format!("{base}[model]\nmoves_left_head = true\n")).unwrap();
        // Deeper ladder rungs and a node budget (the reproducible stand-in for
        // a time rung, `docs/evaluation.md`) are fixed alpha-beta players.
        let deep = "game = \"martian-chess\"\n[evaluate]\nladder = [\"alphabeta:depth=1\", \"alphabeta:depth=3\", \
                    \"alphabeta:depth=5\", \"alphabeta:depth=7\", \"alphabeta:nodes=500000\"]\n";
        assert_eq!(RunConfig::parse(deep).unwrap().evaluate.ladder.len(), 5);
        let scored = "game = \"martian-chess\"\n[search]\nstatic_score_utility = 0.1\ndynamic_score_utility = 0.3\n";
        assert_eq!(RunConfig::parse(scored).unwrap().search.dynamic_score_utility, 0.3);
    }

    /// `[selfplay_rules]` changes the self-play games' rules only, on top of
    /// `[rules]`; it survives the run directory's copy; bad switches and a
    /// different number of players are named.
    #[test]
    fn selfplay_rules_override_rules_for_self_play_only() {
        use martian_rules::jetan::{ChiefCapture, Jetan};
        let text = "game = \"jetan\"\n[rules]\nmax_plies = 300\n\
                    [selfplay_rules]\nchief_captured_by_non_chief = \"RemoveAndContinue\"\n";
        let cfg = RunConfig::parse(text).unwrap_or_else(|e| panic!("{e:#}"));
        let (play, sp) = (cfg.rules::<Jetan>().unwrap(), cfg.selfplay_rules::<Jetan>().unwrap());
        assert_eq!(play.chief_captured_by_non_chief, ChiefCapture::Draw);
        assert_eq!(sp.chief_captured_by_non_chief, ChiefCapture::RemoveAndContinue);
        assert_eq!((play.max_plies, sp.max_plies), (300, 300), "[rules] stay under the override");
        assert_eq!(RunConfig::parse(&cfg.to_toml()).unwrap(), cfg);
        // Without the table: the same rules, and the copy has no empty table.
        let plain = RunConfig::parse("game = \"jetan\"\n").unwrap();
        assert_eq!(plain.selfplay_rules::<Jetan>().unwrap(), plain.rules::<Jetan>().unwrap());
        assert!(!plain.to_toml().contains("[selfplay_rules]"));
        for (text, needles) in [
            ("game = \"jetan\"\n[selfplay_rules]\nchief_capture = 1\n", ["[selfplay_rules]", "chief_capture"]),
            (
                "game = \"jetan\"\n[selfplay_rules]\nchief_captured_by_non_chief = \"Lot\"\n",
                ["[selfplay_rules]", "Lot"],
            ),
            (
                "game = \"martian-chess-4p\"\n[selfplay_rules]\nteams = false\n",
                ["[selfplay_rules] make a game of 4 value players", "[rules] one of 2"],
            ),
        ] {
            let e = format!("{:#}", RunConfig::parse(text).unwrap_err());
            for n in needles {
                assert!(e.contains(n), "error for {text:?} should contain {n:?}: {e}");
            }
        }
    }

    /// Free-for-all needs the vector value head and no two-player proofs; the
    /// errors name the key and the fix.
    #[test]
    fn free_for_all_config_validates_and_inconsistent_heads_are_named() {
        let text = include_str!("../../configs/martian-chess-4p-ffa-quick.toml");
        let cfg = RunConfig::parse(text).unwrap_or_else(|e| panic!("{e:#}"));
        assert_eq!(cfg.model.value_players, 4);
        assert_eq!(RunConfig::parse(&cfg.to_toml()).unwrap(), cfg);
        let base = "game = \"martian-chess-4p\"\n";
        let e = RunConfig::parse(&format!("{base}[rules]\nteams = false\n")).unwrap_err().to_string();
        assert!(e.contains("model.value_players = 2") && e.contains("set model.value_players = 4"), "{e}");
        let e = RunConfig::parse(&format!("{base}[model]\nvalue_players = 4\n")).unwrap_err().to_string();
        assert!(e.contains("2 value players"), "{e}");
        let e = RunConfig::parse(&format!(
            "{base}[rules]\nteams = false\n[model]\nvalue_players = 4\n[search]\nleaf_threat_check = true\n"
        ))
        .unwrap_err()
        .to_string();
        assert!(e.contains("search.leaf_threat_check") && e.contains("4 value players"), "{e}");
        // The solver and the trap proofs are on by default and turned off by the tree there.
        RunConfig::parse(&format!(
            "{base}[rules]\nteams = false\n[model]\nvalue_players = 4\n[search]\nsolver = true\n"
        ))
        .unwrap();
        RunConfig::parse(&format!("{base}[rules]\nteams = false\n[model]\nvalue_players = 4\n")).unwrap();
        let e = RunConfig::parse(&format!(
            "{base}[rules]\nteams = false\n[model]\nvalue_players = 4\n[evaluate]\ngate = \"sprt\"\n"
        ))
        .unwrap_err()
        .to_string();
        assert!(e.contains("gate = \"sprt\"") && e.contains("use gate = \"score\""), "{e}");
    }
}
