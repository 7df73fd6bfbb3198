//! The layout of a run directory: every file and folder name a run uses, in
//! one place (`docs/usage.md`, "The run directory"). Paths are built from these
//! names by [`crate::rundir::RunDir`] and by the storage modules that list a
//! run's objects by their first path component ([`crate::mirror`]).
//!
//! ```
//! use martian_run::layout;
//! let root = std::path::Path::new("runs/jetan-quick");
//! assert_eq!(root.join(layout::TRAIN_LOG), std::path::Path::new("runs/jetan-quick/train.jsonl"));
//! assert!(layout::SUBDIRS.contains(&layout::MODELS));
//! ```

/// The resolved config, written at the first start; it marks a run directory.
pub const CONFIG: &str = "config.toml";
/// One line per finished generation, end of invocation and interrupt.
pub const PIPELINE_LOG: &str = "pipeline.log";
/// The file name of the promoted checkpoint (rewritten atomically).
pub const BEST: &str = "best";
/// Checkpoints (`gen0003.safetensors` + `.json` sidecars, partial checkpoints, optimizer states).
pub const MODELS: &str = "models";
/// Replay shards (`gen0001-w<worker>-000000.npz`).
pub const SHARDS: &str = "shards";
/// Game records of each shard (`gen0001-w<worker>-000000.jsonl`).
pub const GAMES: &str = "games";
/// Gate records (`gen0001.json`), ladder records and calibration, gauntlets.
pub const EVAL: &str = "eval";
/// Finished games not yet in a shard (`gen0001-w<worker>/<game id>.npz` + `.json`).
pub const SPOOL: &str = "spool";
/// Worker claims (`w<worker>.lock`, `wi<N>.lease` on a store).
pub const WORKERS: &str = "workers";
/// The report's SVG charts.
pub const REPORT_DIR: &str = "report";
/// The report as Markdown.
pub const REPORT_MD: &str = "report.md";
/// The report as one self-contained HTML page.
pub const REPORT_HTML: &str = "report.html";
/// Training metrics, one JSON line per log interval.
pub const TRAIN_LOG: &str = "train.jsonl";
/// Per-generation summaries, one JSON line per generation.
pub const GENERATIONS: &str = "generations.jsonl";
/// One JSON line per evaluation match.
pub const EVAL_LOG: &str = "evals.jsonl";
/// The opening book of every match of the run (made on first use).
pub const OPENINGS: &str = "openings.json";
/// The last generation against the untrained network and random moves.
pub const FINAL_EVAL: &str = "final-eval.json";
/// The trainer's claim on a run directory on an object store.
pub const TRAINER_LEASE: &str = "trainer.lease";
/// TensorBoard event files.
pub const TENSORBOARD: &str = "tensorboard";
/// Prefix of the ladder's records in [`EVAL`] (`ladder-gen0005.json`).
pub const LADDER_PREFIX: &str = "ladder-gen";
/// The ladder's calibration (its rungs' ratings), under [`EVAL`].
pub const LADDER_CALIBRATION: &str = "ladder-calibration.json";
/// The subdirectories a run creates before its [`CONFIG`] (a run killed in
/// between is still resumed).
pub const SUBDIRS: [&str; 7] = [MODELS, SHARDS, GAMES, EVAL, SPOOL, WORKERS, REPORT_DIR];

/// The rest of the object name `name` under the folder `dir`
/// (`under("shards/x.npz", SHARDS) == Some("x.npz")`), `None` elsewhere.
pub fn under<'a>(name: &'a str, dir: &str) -> Option<&'a str> {
    name.strip_prefix(dir)?.strip_prefix('/')
}

/// The object name of `file` in the folder `dir`: `dir/file`.
pub fn object(dir: &str, file: &str) -> String {
    format!("{dir}/{file}")
}
