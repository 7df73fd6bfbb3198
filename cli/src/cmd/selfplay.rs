//! `martian-zero selfplay`: the options of a self-play process; the work is
//! [`martian_run::selfplay`] (module documentation there: run directories,
//! worker ids and indexes, run directories on a store).

use std::path::PathBuf;

use anyhow::Result;
use martian_run::selfplay::{parse_out_dir, parse_seconds, SelfplayOptions, WorkerOptions, MAX_WORKER_INDEX};

/// Arguments of `selfplay`.
#[derive(clap::Args)]
pub struct Args {
    /// Run configuration (TOML).
    #[arg(long)]
    config: PathBuf,
    /// Checkpoint (`.safetensors`), `uniform` (no network) or `best` (the run's best; needs --run-dir).
    #[arg(long, default_value = "best")]
    model: String,
    /// Games to play. Without it (a worker with --worker-index, or a run
    /// directory URL), play until the run's last generation is trained.
    #[arg(long)]
    games: Option<u64>,
    /// Run directory to write into (shards/, games/): a path, or a URL
    /// (`s3://bucket/prefix`, `gs://`, `az://`, `file:///abs/path`). Without it, use --out.
    #[arg(long, value_parser = martian_run::store::parse_run_dir)]
    run_dir: Option<PathBuf>,
    /// Output directory when not writing into a run directory (a local path).
    #[arg(long, value_parser = parse_out_dir, conflicts_with = "run_dir")]
    out: Option<PathBuf>,
    /// Worker id, part of every file name and game id. One process per id at
    /// a time (`workers/w<id>.lock`); the pipeline is worker `0`. Default `0`.
    #[arg(long, conflicts_with = "worker_index")]
    worker: Option<String>,
    #[command(flatten)]
    dist: WorkerArgs,
    /// Generation the games count for (default: 1 + the newest trained generation).
    #[arg(long)]
    generation: Option<u32>,
}

/// The options of a distributed self-play worker (shared with `pipeline --role selfplay`).
#[derive(clap::Args, Clone, Debug)]
pub struct WorkerArgs {
    /// Worker index (worker id `i<N>`, its own game ids and seeds). Default:
    /// `JOB_COMPLETION_INDEX` (Kubernetes Indexed Job) or `SLURM_ARRAY_TASK_ID`
    /// (Slurm array), when set and no --worker is given. At most 32767: each
    /// index has its own game-id tag (`spool::worker_tag`).
    #[arg(long, allow_negative_numbers = true, value_parser = clap::value_parser!(u32).range(0..=i64::from(MAX_WORKER_INDEX)))]
    pub worker_index: Option<u32>,
    /// Seconds between looks at the store for new shards, checkpoints and
    /// `best` (the listing cache's lifetime) and between waits.
    #[arg(long, default_value_t = 15.0, value_parser = parse_seconds)]
    pub poll_seconds: f64,
    /// Seconds after which a claim on a run directory URL (`trainer.lease`,
    /// `workers/wi<N>.lease`) not renewed is taken over; renewed every quarter
    /// of it.
    #[arg(long, default_value_t = 60.0, value_parser = parse_seconds)]
    pub lease_seconds: f64,
}

impl From<WorkerArgs> for WorkerOptions {
    fn from(a: WorkerArgs) -> WorkerOptions {
        WorkerOptions { worker_index: a.worker_index, poll_seconds: a.poll_seconds, lease_seconds: a.lease_seconds }
    }
}

/// Runs `selfplay`.
pub fn run(a: Args) -> Result<()> {
    martian_run::selfplay::selfplay(SelfplayOptions {
        config: a.config,
        model: a.model,
        games: a.games,
        run_dir: a.run_dir,
        out: a.out,
        worker: a.worker,
        dist: a.dist.into(),
        generation: a.generation,
    })
}
