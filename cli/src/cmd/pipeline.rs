//! `martian-zero pipeline`: the options of a pipeline process; the generation
//! loop and its roles are [`martian_run::pipeline`].

use std::path::PathBuf;

use anyhow::Result;
use martian_run::pipeline::{PipelineOptions, Role};

/// What a `pipeline` process does.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum RoleArg {
    /// Self-play, training, gating and promotion in one process.
    All,
    /// Training, gating and promotion on the games of separate workers.
    Trainer,
    /// A self-play worker (needs a worker index).
    Selfplay,
}

/// Arguments of `pipeline`.
#[derive(clap::Args)]
pub struct Args {
    /// Run configuration (TOML).
    #[arg(long)]
    config: PathBuf,
    /// Run directory (created, or resumed if it exists): a path, or a URL
    /// (`s3://bucket/prefix`, `gs://`, `az://`, `file:///abs/path`; credentials
    /// and endpoint from the environment, e.g. `AWS_*`).
    #[arg(long, value_parser = martian_run::store::parse_run_dir)]
    run_dir: PathBuf,
    /// What this process does: everything, only training, or only self-play.
    #[arg(long, value_enum, default_value_t = RoleArg::All)]
    role: RoleArg,
    #[command(flatten)]
    dist: super::selfplay::WorkerArgs,
    /// Stop after this many generations of this invocation (for tests and
    /// staged runs; the config's `pipeline.generations` is the total).
    #[arg(long)]
    stop_after: Option<u32>,
}

/// Runs `pipeline`.
pub fn run(a: Args) -> Result<()> {
    let role = match a.role {
        RoleArg::All => Role::All,
        RoleArg::Trainer => Role::Trainer,
        RoleArg::Selfplay => Role::Selfplay,
    };
    martian_run::pipeline::pipeline(PipelineOptions {
        config: a.config,
        run_dir: a.run_dir,
        role,
        dist: a.dist.into(),
        stop_after: a.stop_after,
    })
}
