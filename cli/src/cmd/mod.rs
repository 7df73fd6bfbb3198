//! One module per subcommand; each exposes `Args` and `run`.

pub mod analyse;
pub mod bench;
pub mod engine;
pub mod evaluate;
pub mod export;
pub mod perft;
pub mod pipeline;
pub mod play;
pub mod report;
pub mod selfplay;
pub mod show;
pub mod train;

use anyhow::Result;
use martian_rules::GameState;
use tch::Device;

use crate::config::RunConfig;

/// `--game` and `--position`, shared by the commands that look at one position.
#[derive(clap::Args)]
pub struct PositionArgs {
    /// Which game.
    #[arg(long, value_enum)]
    pub game: crate::GameArg,
    /// Position string (default: the initial position).
    #[arg(long)]
    pub position: Option<String>,
}

/// Sets thread counts and picks the device; prints the start-up line.
pub fn setup_runtime(cfg: &RunConfig) -> Result<Device> {
    let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let pick = |n: usize| if n == 0 { cores } else { n };
    tch::set_num_threads(pick(cfg.torch_threads) as i32);
    let _ = rayon::ThreadPoolBuilder::new().num_threads(pick(cfg.threads)).build_global();
    let device = martian_model::parse_device(&cfg.device)?;
    eprintln!("martian-zero: {}", martian_model::describe_device(device));
    Ok(device)
}

/// Parses a position string or returns the initial position.
pub fn position<G: GameState>(text: Option<&str>, rules: &G::Rules) -> Result<G> {
    Ok(match text {
        Some(t) => G::from_position(t, rules)?,
        None => G::new_game(rules)?,
    })
}
