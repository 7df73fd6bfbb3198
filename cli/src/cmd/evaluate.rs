//! `martian-zero evaluate`: a match between two players.

use std::path::PathBuf;

use anyhow::Result;
use martian_rules::GameState;

use crate::config::RunConfig;
use crate::ops::{describe_match, run_match, PlayerSpec};
use crate::rundir::write_atomic;
use crate::with_game;

/// Arguments of `evaluate`.
#[derive(clap::Args)]
pub struct Args {
    /// Run configuration (TOML): game, rules, `[search]` and `[evaluate]`.
    #[arg(long)]
    config: PathBuf,
    /// Player A: checkpoint path, `uniform`, `random` or `greedy`.
    #[arg(long)]
    a: String,
    /// Player B: checkpoint path, `uniform`, `random` or `greedy`.
    #[arg(long)]
    b: String,
    /// Games to play (rounded up to an even number: pairs with colours swapped).
    #[arg(long)]
    games: u32,
    /// Write the full result (every game) as JSON here.
    #[arg(long)]
    out: Option<PathBuf>,
}

/// Runs `evaluate`.
pub fn run(a: Args) -> Result<()> {
    let cfg = RunConfig::load(&a.config)?;
    with_game!(cfg.game, G => run_game::<G>(&a, &cfg))
}

fn run_game<G: GameState>(a: &Args, cfg: &RunConfig) -> Result<()> {
    let device = super::setup_runtime(cfg)?;
    let rules = cfg.rules::<G>()?;
    let pairs = a.games.div_ceil(2).max(1);
    let m = run_match::<G>(cfg, &rules, &PlayerSpec::parse(&a.a), &PlayerSpec::parse(&a.b), pairs, device)?;
    println!("{}", describe_match(&m));
    println!("pentanomial (pair scores 0, 0.5, 1, 1.5, 2): {:?}", m.pentanomial);
    if let Some(p) = &a.out {
        write_atomic(p, serde_json::to_string_pretty(&m)?.as_bytes())?;
        println!("result written to {}", p.display());
    }
    Ok(())
}
