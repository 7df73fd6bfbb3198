//! The run directory: all state of a training run, so that running the same
//! command again resumes, and several self-play workers can share it.
//!
//! ```text
//! R/config.toml              resolved config, written at the first start (marks a run directory)
//! R/pipeline.log             one line per finished generation, end of invocation, Ctrl-C
//! R/best                     file name of the promoted checkpoint (atomic rewrite)
//! R/models/gen0000.safetensors + gen0000.json        checkpoints (gen 0 = untrained)
//! R/models/gen0003-partial-000000450.safetensors     training in progress (resume point),
//!                                                    + .json sidecar, + .optim (optimizer state)
//! R/spool/gen0001-w<worker>/<game id>.npz + .json    finished games not yet in a shard
//! R/shards/gen0001-w<worker>-000000.npz              replay shards (temp name + rename)
//! R/games/gen0001-w<worker>-000000.jsonl             game records of that shard
//! R/train.jsonl              training metrics, one line per log interval
//! R/eval/gen0001.json        gate match of generation 1; R/evals.jsonl one line per match
//! R/final-eval.json          last generation vs the untrained network and vs random
//! R/openings.json            opening book of every match of the run (made on first use)
//! R/report.md, R/report.html, R/report/*.svg   the report (`martian-zero report`)
//! ```
//!
//! Readers only look at complete files: every write goes through a temporary
//! name and a rename, and a shard's record file is written after the shard.

use crate::io::write_atomic;
use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use martian_rules::{describe_differences, field_differences, value_differences};
use martian_selfplay::names::{generation_prefix, parse_generation_prefix};

use crate::config::RunConfig;

/// Handle on a run directory.
pub struct RunDir {
    root: PathBuf,
}

/// Refuses a path given for an output (`flag`, e.g. `--out`) that could not
/// be written, before the work whose result goes there rather than after it:
/// a directory, a file in a folder that does not exist (a typo is not made
/// into a new folder), or in one where no file can be created (checked by
/// creating and removing a hidden probe file there).
///
/// # Errors
/// A message naming the flag, the path and the problem.
pub fn check_output_path(flag: &str, p: &Path) -> Result<()> {
    anyhow::ensure!(!p.is_dir(), "{flag} {} is a directory; give the path of a file", p.display());
    let dir = p.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    anyhow::ensure!(
        dir.is_dir(),
        "{flag} {}: {} {}",
        p.display(),
        dir.display(),
        if dir.exists() { "is not a directory" } else { "does not exist" }
    );
    tempfile::Builder::new()
        .prefix(".probe-")
        .tempfile_in(dir)
        .map(drop)
        .with_context(|| format!("{flag} {}: no file can be created in {}", p.display(), dir.display()))
}

impl RunDir {
    /// Opens `root`, creating it (and writing `config.toml`) on first use. An
    /// existing run must have been made with the same game, rules and
    /// architecture; the other tables may change (so a run can be extended or
    /// tuned). Rules are compared resolved (a switch left at its default equals
    /// the default written out).
    ///
    /// # Errors
    /// I/O errors, or a config that differs from the run's, naming each
    /// differing rules switch and `[model]` field
    /// (`[rules] switches differ (run directory vs config): max_plies 500 vs 300`).
    pub fn open(root: &Path, cfg: &RunConfig) -> Result<RunDir> {
        Self::open_with(root, cfg, true)
    }

    /// Checks, without creating or writing anything, that `root` may hold a
    /// run: a run directory, or a new or empty directory.
    ///
    /// # Errors
    /// `root` is a file, or a non-empty directory without `config.toml` (naming
    /// the first entries).
    pub fn check_target(root: &Path) -> Result<()> {
        // A new run goes into a new or empty directory: never turn an existing
        // folder (a mistyped `--run-dir .`) into a run.
        if root.exists() && !root.is_dir() {
            bail!("--run-dir {} is a file, not a directory", root.display());
        }
        if root.is_dir() && !root.join(crate::layout::CONFIG).exists() {
            let foreign: Vec<String> = fs::read_dir(root)
                .with_context(|| format!("reading {}", root.display()))?
                .filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().to_string())
                .filter(|n| !crate::layout::SUBDIRS.contains(&n.as_str()))
                .collect();
            if !foreign.is_empty() {
                bail!(
                    "--run-dir {} is not a run directory (no {}) and is not empty ({}): \
                     give a new or empty directory for a new run",
                    root.display(),
                    crate::layout::CONFIG,
                    foreign.iter().take(5).cloned().collect::<Vec<_>>().join(", ")
                );
            }
        }
        Ok(())
    }

    /// [`RunDir::open`]; `write_config` false leaves an existing
    /// `config.toml` as it is (processes that join a run: workers, `train`).
    fn open_with(root: &Path, cfg: &RunConfig, write_config: bool) -> Result<RunDir> {
        Self::check_target(root)?;
        let _writing = crate::interrupt::writing();
        for sub in [crate::layout::MODELS, crate::layout::SHARDS, crate::layout::GAMES, crate::layout::EVAL] {
            fs::create_dir_all(root.join(sub)).with_context(|| format!("creating {}", root.join(sub).display()))?;
        }
        Self::check_config(root, cfg)?;
        let path = root.join(crate::layout::CONFIG);
        if write_config || !path.exists() {
            write_atomic(&path, cfg.to_toml().as_bytes())?;
        }
        Ok(RunDir { root: root.to_path_buf() })
    }

    /// Checks, without writing anything, that `cfg` may continue the run at
    /// `root` (see [`RunDir::open`]); nothing to check when `root` has no
    /// `config.toml` yet.
    ///
    /// # Errors
    /// An unreadable `config.toml`, or a different game, rules or
    /// architecture (naming each difference).
    pub fn check_config(root: &Path, cfg: &RunConfig) -> Result<()> {
        let path = root.join(crate::layout::CONFIG);
        if path.exists() {
            let old = RunConfig::load(&path)
                .with_context(|| format!("the run directory's {} is unreadable", crate::layout::CONFIG))?;
            let labels = ("run directory", "config");
            let mut diffs = Vec::new();
            if old.game != cfg.game {
                diffs.push(format!("game differs (run directory vs config): {} vs {}", old.game, cfg.game));
            } else {
                let d = value_differences(&old.rules_json()?, &cfg.rules_json()?);
                if !d.is_empty() {
                    diffs.push(describe_differences("[rules] switches", labels, &d));
                }
            }
            // The architecture; `model.precision` is a run setting that may change.
            let d = field_differences(&old.model.architecture(), &cfg.model.architecture());
            if !d.is_empty() {
                diffs.push(describe_differences("[model] fields", labels, &d));
            }
            if !diffs.is_empty() {
                bail!(
                    "run directory {} was created with a different config: {}; use a new --run-dir",
                    root.display(),
                    diffs.join("; ")
                );
            }
        }
        Ok(())
    }

    /// Opens the existing run at `root` for a command that joins a run
    /// (`train`, `selfplay --model best`): as [`RunDir::open`], but a directory
    /// that is not a run (no `config.toml`, e.g. a mistyped path) is refused
    /// before anything is created in it, and the run's `config.toml` is not
    /// rewritten (only the pipeline, which owns the run, updates it).
    ///
    /// # Errors
    /// Not a run directory (naming the path and how to start a run), or those of [`RunDir::open`].
    pub fn open_existing(root: &Path, cfg: &RunConfig) -> Result<RunDir> {
        Self::check_is_run(root)?;
        Self::open_with(root, cfg, false)
    }

    /// Checks that `root` is a run directory (it has the `config.toml` written
    /// when a run starts).
    ///
    /// # Errors
    /// Naming the path: missing, not a directory, or without `config.toml`.
    pub fn check_is_run(root: &Path) -> Result<()> {
        let how = "check the path; `martian-zero pipeline --config C --run-dir DIR` starts a new run";
        if !root.exists() {
            bail!("run directory {} does not exist ({how})", root.display());
        }
        if !root.is_dir() {
            bail!("{} is not a directory, so not a run directory ({how})", root.display());
        }
        let config = root.join(crate::layout::CONFIG);
        if config.exists() && !config.is_file() {
            bail!(
                "{} is not a file: a run's {} must be one (restore it from your config file)",
                config.display(),
                crate::layout::CONFIG
            );
        }
        if !config.is_file() {
            bail!("{} is not a run directory: it has no {} ({how})", root.display(), crate::layout::CONFIG);
        }
        Ok(())
    }

    /// Opens an existing run directory without a config check.
    pub fn existing(root: &Path) -> Result<RunDir> {
        if !root.join(crate::layout::MODELS).is_dir() {
            bail!("{} is not a run directory (no models/)", root.display());
        }
        Ok(RunDir { root: root.to_path_buf() })
    }

    /// The root path.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `models/`.
    pub fn models(&self) -> PathBuf {
        self.root.join(crate::layout::MODELS)
    }

    /// `shards/`.
    pub fn shards(&self) -> PathBuf {
        self.root.join(crate::layout::SHARDS)
    }

    /// Checkpoint of generation `g`.
    pub fn checkpoint(&self, g: u32) -> PathBuf {
        self.models().join(format!("{}.safetensors", generation_prefix(g)))
    }

    /// In-progress training checkpoint of generation `g` at global step `step`;
    /// its optimizer state is [`RunDir::optimizer_state`] of the same path.
    pub fn partial_checkpoint(&self, g: u32, step: u64) -> PathBuf {
        self.models().join(format!("{}-partial-{step:09}.safetensors", generation_prefix(g)))
    }

    /// The optimizer state file written beside a partial checkpoint.
    pub fn optimizer_state(partial: &Path) -> PathBuf {
        partial.with_extension("optim")
    }

    /// Partial checkpoints of generation `g` (any state), as `(step, path)`, oldest first.
    pub fn partial_checkpoints(&self, g: u32) -> Vec<(u64, PathBuf)> {
        let prefix = format!("{}-partial-", generation_prefix(g));
        let Ok(rd) = fs::read_dir(self.models()) else { return Vec::new() };
        let mut v: Vec<(u64, PathBuf)> = rd
            .filter_map(|e| e.ok())
            .filter_map(|e| {
                let n = e.file_name().to_str()?.to_string();
                let step = n.strip_prefix(&prefix)?.strip_suffix(".safetensors")?.parse().ok()?;
                Some((step, e.path()))
            })
            .collect();
        v.sort();
        v
    }

    /// What keeps training from resuming at the partial checkpoint `p` of
    /// step `step` (the step in its name, [`RunDir::partial_checkpoints`]),
    /// in words naming the file (`None` when its weights, sidecar and
    /// optimizer state are all there, their headers read, the sidecar records
    /// `step` and the weights match its checksum). A check of the files'
    /// framing and bytes, not of every value: loading can still fail.
    pub fn partial_problem(p: &Path, step: u64) -> Option<String> {
        let side = p.with_extension("json");
        let optim = Self::optimizer_state(p);
        if !p.exists() {
            return Some(format!("its weights {} are missing", p.display()));
        }
        if !side.exists() {
            return Some(format!("its sidecar {} is missing (its write was interrupted)", side.display()));
        }
        match martian_model::Checkpoint::read_meta(p) {
            Err(e) => return Some(e.to_string()),
            // Resuming counts on from the sidecar's step: it must be the name's.
            Ok(meta) if meta.step != step => {
                return Some(format!("its sidecar {} records step {}, its name step {step}", side.display(), meta.step))
            }
            Ok(_) => {}
        }
        if let Err(e) = martian_model::checkpoint::read_safetensors_shapes(p) {
            return Some(e.to_string());
        }
        if let Err(e) = martian_model::checkpoint::verify_checksum(p) {
            return Some(e.to_string());
        }
        if !optim.exists() {
            return Some(format!("its optimizer state {} is missing", optim.display()));
        }
        if let Err(e) = martian_model::checkpoint::read_safetensors_shapes(&optim) {
            return Some(format!("optimizer state {}", e.to_string().trim_start_matches("checkpoint weights ")));
        }
        None
    }

    /// The partial checkpoint of generation `g` that training resumes from, as
    /// `(step, path)`: the newest one without a [`RunDir::partial_problem`].
    pub fn resume_point(&self, g: u32) -> Option<(u64, PathBuf)> {
        self.partial_checkpoints(g).into_iter().rev().find(|(step, p)| Self::partial_problem(p, *step).is_none())
    }

    /// The newest generation the run holds beyond `generations`, with the
    /// file that shows it (its gate record or its complete checkpoint), or
    /// `None` when it holds none: a config whose `pipeline.generations` is
    /// lower than what the run already has.
    pub fn generation_beyond(&self, generations: u32) -> Option<(u32, PathBuf)> {
        let number = |dir: &Path, suffix: &str| -> Vec<u32> {
            let Ok(rd) = fs::read_dir(dir) else { return Vec::new() };
            rd.filter_map(|e| e.ok())
                .filter_map(|e| {
                    let n = e.file_name().to_str()?.to_string();
                    parse_generation_prefix(&n).filter(|&(_, rest)| rest == suffix).map(|(g, _)| g)
                })
                .collect()
        };
        let gated = number(&self.root.join(crate::layout::EVAL), ".json").into_iter().map(|g| (g, self.gate_result(g)));
        let trained = number(&self.models(), ".safetensors")
            .into_iter()
            .map(|g| (g, self.checkpoint(g)))
            .filter(|(_, p)| Self::complete(p));
        gated.chain(trained).filter(|&(g, _)| g > generations).max_by_key(|&(g, _)| g)
    }

    /// The newest generation with a complete checkpoint (weights and
    /// sidecar), by the file names in `models/`; `None` when there is none.
    /// A generation missing below it (a deleted file) does not count: history
    /// is not trained again.
    pub fn newest_complete(&self) -> Option<u32> {
        let rd = fs::read_dir(self.models()).ok()?;
        rd.filter_map(|e| e.ok())
            .filter_map(|e| {
                let n = e.file_name().to_str()?.to_string();
                parse_generation_prefix(&n).filter(|&(_, rest)| rest == ".safetensors").map(|(g, _)| g)
            })
            .filter(|&g| Self::complete(&self.checkpoint(g)))
            .max()
    }

    /// Removes every file of the partial checkpoint at `p` (weights, sidecar, optimizer state).
    pub fn remove_partial(p: &Path) {
        let _ = fs::remove_file(p.with_extension("json"));
        let _ = fs::remove_file(Self::optimizer_state(p));
        let _ = fs::remove_file(p);
    }

    /// Rewrites `train.jsonl` without the lines of steps after `step` (left by
    /// a run killed after logging them but before their checkpoint), so that
    /// every step is logged once after any resume. A file with damaged lines
    /// is set aside (`train.jsonl.damaged`, with a warning) and rewritten with
    /// its readable lines.
    ///
    /// # Errors
    /// I/O errors.
    pub fn truncate_train_log(&self, step: u64) -> Result<()> {
        let path = self.train_log();
        let lines = crate::records::read_json_lines_or_set_aside::<serde_json::Value>(&path, "a training log line")?;
        let mut kept = String::new();
        let mut dropped = 0;
        for (_, v) in &lines.records {
            match v.get("step").and_then(|s| s.as_u64()) {
                Some(s) if s <= step => {
                    kept.push_str(&serde_json::to_string(v)?);
                    kept.push('\n');
                }
                _ => dropped += 1,
            }
        }
        if !lines.bad.is_empty() {
            let mut s = crate::records::Skipped::default();
            s.lines(&path, &lines.bad);
            let aside = crate::io::set_aside(&path)?;
            eprintln!("warning: {}; the file is set aside as {}", s.notes()[0], aside.display());
        }
        if dropped > 0 || !lines.bad.is_empty() {
            write_atomic(&path, kept.as_bytes())?;
        }
        Ok(())
    }

    /// True when the checkpoint at `p` is complete (its sidecar exists).
    pub fn complete(p: &Path) -> bool {
        p.exists() && p.with_extension("json").exists()
    }

    /// `best`: the file naming the promoted checkpoint.
    pub fn best_file(&self) -> PathBuf {
        self.root.join(crate::layout::BEST)
    }

    /// What is wrong with an existing `best` file, in words naming it (`None`
    /// when it names a complete checkpoint, or when there is no such file).
    pub fn best_problem(&self) -> Option<String> {
        let path = self.best_file();
        if !path.exists() || self.best().is_some() {
            return None;
        }
        let shown = path.display();
        let text = match crate::io::read_limited(&path, 4096) {
            Ok(b) => String::from_utf8_lossy(&b).into_owned(),
            Err(e) => return Some(format!("{shown} is unreadable: {e}")),
        };
        let name = text.trim();
        if name.is_empty() {
            return Some(format!("{shown} is empty"));
        }
        let quoted: String = name.chars().take(60).collect();
        if name.contains(['/', '\\', '\n']) || name.starts_with('.') || !name.ends_with(".safetensors") {
            return Some(format!("{shown} holds {quoted:?}, not a checkpoint file name like gen0003.safetensors"));
        }
        let p = self.models().join(name);
        if !p.exists() {
            return Some(format!("{shown} names {name}, which is not in {}", self.models().display()));
        }
        if !Self::complete(&p) {
            return Some(format!(
                "{shown} names {name}, whose sidecar {} is missing",
                p.with_extension("json").display()
            ));
        }
        None
    }

    /// The error of a command that needs the promoted checkpoint of a run
    /// without one: what is wrong with `best`, or that it is missing.
    pub fn no_best_error(&self) -> anyhow::Error {
        match self.best_problem() {
            Some(problem) => anyhow::anyhow!(
                "run directory {} has no usable best checkpoint: {problem} (running the run's `pipeline` \
                 command again rebuilds it from the gate records)",
                self.root.display()
            ),
            None => anyhow::anyhow!(
                "run directory {} has no promoted checkpoint yet ({} is missing; the pipeline writes it)",
                self.root.display(),
                self.best_file().display()
            ),
        }
    }

    /// The promoted checkpoint, if any.
    pub fn best(&self) -> Option<PathBuf> {
        let bytes = crate::io::read_limited(&self.best_file(), 4096).ok()?;
        let name = String::from_utf8(bytes).ok()?;
        let name = name.trim();
        if name.is_empty() || name.contains('/') || name.contains('\\') || name.starts_with('.') {
            return None;
        }
        let p = self.models().join(name);
        Self::complete(&p).then_some(p)
    }

    /// Points `best` at `checkpoint` (a path inside `models/`).
    ///
    /// # Errors
    /// I/O errors.
    pub fn set_best(&self, checkpoint: &Path) -> Result<()> {
        let name = checkpoint.file_name().and_then(|n| n.to_str()).context("checkpoint has no file name")?;
        write_atomic(&self.best_file(), name.as_bytes())
    }

    /// Games finished for generation `g` by all workers (records and spools).
    pub fn games_done(&self, g: u32) -> u64 {
        crate::spool::games_done(&self.root, g)
    }

    /// Self-play output of worker `worker` for generation `g`.
    pub fn selfplay_out(&self, g: u32, worker: &str) -> crate::spool::SelfplayOut {
        crate::spool::SelfplayOut::new(&self.root, g, worker)
    }

    /// `train.jsonl`.
    pub fn train_log(&self) -> PathBuf {
        self.root.join(crate::layout::TRAIN_LOG)
    }

    /// `eval/gen<g>.json`.
    pub fn gate_result(&self, g: u32) -> PathBuf {
        self.root.join(crate::layout::EVAL).join(format!("{}.json", generation_prefix(g)))
    }

    /// `evals.jsonl`.
    pub fn eval_log(&self) -> PathBuf {
        self.root.join(crate::layout::EVAL_LOG)
    }

    /// `openings.json`: the run's opening book.
    pub fn openings(&self) -> PathBuf {
        self.root.join(crate::layout::OPENINGS)
    }

    /// `final-eval.json`.
    pub fn final_eval(&self) -> PathBuf {
        self.root.join(crate::layout::FINAL_EVAL)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use martian_model::{Checkpoint, ModelConfig};
    use martian_rules::jetan::{Jetan, JetanRules};

    /// A partial checkpoint whose sidecar records another step than its name
    /// is not resumed from: resuming counts on from the sidecar's step, and
    /// the next partial would be written under a name that does not sort.
    #[test]
    fn a_partial_whose_step_differs_from_its_name_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("gen0003-partial-000000012.safetensors");
        let cfg = ModelConfig { blocks: 1, channels: 8, value_hidden: 8, ..ModelConfig::default() };
        let mut ck = Checkpoint::new_random::<Jetan>(&JetanRules::default(), &cfg, tch::Device::Cpu, 1).unwrap();
        ck.meta.step = 11;
        ck.save(&p).unwrap();
        let problem = RunDir::partial_problem(&p, 12).expect("a problem");
        assert!(problem.contains("records step 11, its name step 12"), "{problem}");
        ck.meta.step = 12;
        ck.save(&p).unwrap();
        let problem = RunDir::partial_problem(&p, 12).expect("the optimizer state is missing");
        assert!(problem.contains("optimizer state") && !problem.contains("its name step"), "{problem}");
    }
}
