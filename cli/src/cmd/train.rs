//! `martian-zero train`: trains the next generation of a run on its replay window.

use std::path::PathBuf;

use anyhow::Result;
use martian_model::Checkpoint;
use martian_rules::GameState;

use crate::with_game;
use martian_run::config::RunConfig;
use martian_run::ops::train_generation;
use martian_run::rundir::RunDir;

/// Arguments of `train`.
#[derive(clap::Args)]
pub struct Args {
    /// Run configuration (TOML).
    #[arg(long)]
    config: PathBuf,
    /// Run directory of an existing run (its shards/ are the replay buffer;
    /// models/ gets the checkpoint). A directory that is not a run is refused.
    #[arg(long, value_parser = martian_run::store::parse_local_run_dir)]
    run_dir: PathBuf,
}

/// Runs `train`.
pub fn run(a: Args) -> Result<()> {
    let cfg = RunConfig::load(&a.config)?;
    with_game!(cfg.game, G => run_game::<G>(&a, &cfg))
}

fn run_game<G: GameState>(a: &Args, cfg: &RunConfig) -> Result<()> {
    let rules = cfg.rules::<G>()?;
    // `train` continues a run: a mistyped directory must not become a new one.
    let run = RunDir::open_existing(&a.run_dir, cfg)?;
    // One process trains a run: the pipeline's trainer claim (`workers/wtrainer.lock`).
    let _claim = martian_run::spool::WorkerLock::acquire(run.root(), martian_run::spool::TRAINER)?;
    let device = martian_run::runtime::setup_runtime(cfg)?;
    if !RunDir::complete(&run.checkpoint(0)) {
        let ck = Checkpoint::new_random::<G>(&rules, &cfg.model, device, cfg.seed as i64)?;
        let _writing = martian_run::interrupt::writing();
        ck.save(&run.checkpoint(0))?;
        run.set_best(&run.checkpoint(0))?;
    }
    // The generation after the newest trained one (a damaged or deleted older
    // checkpoint is history: it is not trained again).
    let g = run.newest_complete().map_or(1, |n| n + 1);
    let p = train_generation::<G>(cfg, &rules, &run, g, device)?;
    println!("trained {}", p.display());
    Ok(())
}
