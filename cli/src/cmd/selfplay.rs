//! `martian-zero selfplay`: plays games and writes shards and records.
//!
//! With `--run-dir`, the worker plays for the run's current generation with
//! its `best` checkpoint, in chunks of `games_per_shard` games, and re-reads
//! `best` between chunks (KataGo-style shared directory; any number of
//! workers with distinct `--worker` ids may run at once).

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use martian_model::{Checkpoint, ConfigModel};
use martian_rules::GameState;

use crate::checkpoints::load_checkpoint;
use crate::config::RunConfig;
use crate::ops::selfplay_games;
use crate::rundir::RunDir;
use crate::spool::SelfplayOut;
use crate::with_game;

/// Arguments of `selfplay`.
#[derive(clap::Args)]
pub struct Args {
    /// Run configuration (TOML).
    #[arg(long)]
    config: PathBuf,
    /// Checkpoint (`.safetensors`), `uniform` (no network) or `best` (the run's best; needs --run-dir).
    #[arg(long, default_value = "best")]
    model: String,
    /// Games to play.
    #[arg(long)]
    games: u64,
    /// Run directory to write into (shards/, games/). Without it, use --out.
    #[arg(long)]
    run_dir: Option<PathBuf>,
    /// Output directory when not writing into a run directory.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Worker id, part of every file name and game id. One process per id at
    /// a time (`workers/w<id>.lock`); the pipeline is worker `0`.
    #[arg(long, default_value = "0")]
    worker: String,
    /// Generation the games count for (default: 1 + the newest trained generation).
    #[arg(long)]
    generation: Option<u32>,
}

/// Runs `selfplay`.
pub fn run(a: Args) -> Result<()> {
    let cfg = RunConfig::load(&a.config)?;
    if !a.worker.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') || a.worker.is_empty() {
        bail!("--worker must be letters, digits or '_', got {:?}", a.worker);
    }
    with_game!(cfg.game, G => run_game::<G>(&a, &cfg))
}

fn latest_generation(run: &RunDir) -> u32 {
    (0..10_000).take_while(|&g| RunDir::complete(&run.checkpoint(g))).last().unwrap_or(0)
}

fn run_game<G: GameState>(a: &Args, cfg: &RunConfig) -> Result<()> {
    let rules = cfg.rules::<G>()?;
    let (out_root, run) = match (&a.run_dir, &a.out) {
        (Some(r), _) => {
            // With the run's best network the worker continues a run: a
            // mistyped directory must not become a new one.
            let run = if a.model == "best" { RunDir::open_existing(r, cfg)? } else { RunDir::open(r, cfg)? };
            (r.clone(), Some(run))
        }
        (None, Some(o)) => {
            std::fs::create_dir_all(o.join("shards"))?;
            std::fs::create_dir_all(o.join("games"))?;
            (o.clone(), None)
        }
        (None, None) => bail!("give --run-dir or --out"),
    };
    let device = super::setup_runtime(cfg)?;
    let sp_devices = super::selfplay_devices(cfg)?;
    let out_root = out_root.as_path();
    let _worker = crate::spool::WorkerLock::acquire(out_root, &a.worker)?;
    let shards = out_root.join("shards");
    let gen = a.generation.unwrap_or_else(|| run.as_ref().map(|r| latest_generation(r) + 1).unwrap_or(1));
    let mut remaining = a.games;
    let mut loaded: Option<(PathBuf, Checkpoint)> = None;
    let chunk = if run.is_some() { cfg.selfplay.games_per_shard as u64 } else { a.games };
    let t0 = std::time::Instant::now();
    let (mut games, mut moves) = (0u64, 0u64);
    while remaining > 0 {
        let path: Option<PathBuf> = match a.model.as_str() {
            "uniform" => None,
            "best" => {
                let r = run.as_ref().context("--model best needs --run-dir")?;
                Some(r.best().with_context(|| {
                    let pointer = r.root().join("best");
                    match std::fs::read_to_string(&pointer) {
                        Ok(name) => format!(
                            "{} names {:?}, which is not a complete checkpoint in {}",
                            pointer.display(),
                            name.trim(),
                            r.models().display()
                        ),
                        Err(_) => {
                            format!("{} has no promoted checkpoint yet (run `pipeline` first)", r.root().display())
                        }
                    }
                })?)
            }
            p => Some(PathBuf::from(p)),
        };
        if let Some(p) = &path {
            if loaded.as_ref().map(|(lp, _)| lp != p).unwrap_or(true) {
                // Writing into a run directory: its config fixes the architecture.
                let arch =
                    if run.is_some() { ConfigModel::Fixed(&cfg.model) } else { ConfigModel::Default(&cfg.model) };
                let ck = load_checkpoint::<G>(p, &rules, arch, device)
                    .with_context(|| format!("loading model {}", p.display()))?;
                eprintln!("self-play model: {}", p.display());
                loaded = Some((p.clone(), ck));
            }
        }
        let n = remaining.min(chunk);
        let out = SelfplayOut::new(out_root, gen, &a.worker);
        let name = path.as_ref().and_then(|p| p.file_name()).and_then(|n| n.to_str()).unwrap_or("uniform").to_string();
        let model = loaded.as_ref().filter(|_| path.is_some()).map(|(_, c)| (c, name.as_str()));
        let st = selfplay_games::<G>(cfg, &rules, model, &sp_devices, n, &out, false)?;
        games += st.games;
        moves += st.moves;
        remaining -= n;
    }
    let s = t0.elapsed().as_secs_f64();
    println!(
        "self-play: {games} games, {moves} positions in {s:.1} s ({:.2} games/s, {:.1} positions/s); shards in {}",
        games as f64 / s,
        moves as f64 / s,
        shards.display()
    );
    Ok(())
}
