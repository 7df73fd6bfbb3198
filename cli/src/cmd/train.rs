//! `martian-zero train`: trains the next generation of a run on its replay window.

use std::path::PathBuf;

use anyhow::Result;
use martian_model::Checkpoint;
use martian_rules::GameState;

use crate::config::RunConfig;
use crate::ops::train_generation;
use crate::rundir::RunDir;
use crate::with_game;

/// Arguments of `train`.
#[derive(clap::Args)]
pub struct Args {
    /// Run configuration (TOML).
    #[arg(long)]
    config: PathBuf,
    /// Run directory (its shards/ are the replay buffer; models/ gets the checkpoint).
    #[arg(long)]
    run_dir: PathBuf,
}

/// Runs `train`.
pub fn run(a: Args) -> Result<()> {
    let cfg = RunConfig::load(&a.config)?;
    with_game!(cfg.game, G => run_game::<G>(&a, &cfg))
}

fn run_game<G: GameState>(a: &Args, cfg: &RunConfig) -> Result<()> {
    let device = super::setup_runtime(cfg)?;
    let rules = cfg.rules::<G>()?;
    let run = RunDir::open(&a.run_dir, cfg)?;
    if !RunDir::complete(&run.checkpoint(0)) {
        let ck = Checkpoint::new_random::<G>(&rules, &cfg.model, device, cfg.seed as i64)?;
        ck.save(&run.checkpoint(0))?;
        run.set_best(&run.checkpoint(0))?;
    }
    let g = (1..10_000).find(|&g| !RunDir::complete(&run.checkpoint(g))).unwrap_or(1);
    let p = train_generation::<G>(cfg, &rules, &run, g, device)?;
    println!("trained {}", p.display());
    Ok(())
}
