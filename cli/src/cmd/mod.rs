//! One module per subcommand; each exposes `Args` and `run`.

pub mod analyse;
pub mod analysis;
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

/// `--game` and `--position`, shared by the commands that look at one position.
#[derive(clap::Args)]
pub struct PositionArgs {
    /// Which game.
    #[arg(long, value_parser = crate::game_parser())]
    pub game: martian_rules::GameKind,
    /// Position string (default: the initial position).
    #[arg(long)]
    pub position: Option<String>,
}

/// `--threads` and `--veto-depth`, shared by the commands that search one
/// position for a user (`play`, `analyse`, `engine`): one torch thread policy
/// ([`martian_run::runtime`]) and one play-time check ([`martian_search::Veto`]).
#[derive(clap::Args, Clone, Debug)]
pub struct SearchArgs {
    /// libtorch intra-op CPU threads for the network (0 = all cores), as the
    /// pipeline's `torch_threads`: one thread is fastest for one search on
    /// shared cores (`BENCHMARKS.md`).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(0..=1024))]
    pub threads: u32,
    /// Play-time tactical check of the mcts engine's move, 0 (off, the
    /// default) to 8 plies: an alpha-beta search this deep after the chosen
    /// move; a proven loss is replaced by the most visited move not proven
    /// lost, and the output says which move it vetoed (`docs/usage.md`).
    #[arg(long, default_value_t = 0, value_parser = veto_depth_parser)]
    pub veto_depth: u32,
}

/// Parses `--veto-depth` within [`martian_search::check_veto_depth`]'s range.
fn veto_depth_parser(text: &str) -> std::result::Result<u32, String> {
    let depth: u32 = text.parse().map_err(|e| format!("{e}"))?;
    martian_search::check_veto_depth(depth)?;
    Ok(depth)
}

/// `--rules`, shared by every command that plays one game without a config
/// (`show`, `play`, `analyse`, `engine`, `analysis`); resolved in one place,
/// [`martian_run::checkpoints::rules_with_switches`].
#[derive(clap::Args, Clone, Debug, Default)]
pub struct RulesArgs {
    /// Rules switches, as in a config's `[rules]` table: `key=value` pairs
    /// separated by commas, values in TOML (`--rules teams=false` for
    /// four-player free-for-all, `--rules 'max_plies=300,no_capture_limit=80'`).
    /// Default: the model's rules, else the game's standard rules. A model's
    /// rules must agree (a differing switch is an error naming it).
    #[arg(long, value_name = "SWITCHES")]
    pub rules: Option<String>,
}

/// Parses a position string or returns the initial position.
pub fn position<G: GameState>(text: Option<&str>, rules: &G::Rules) -> Result<G> {
    Ok(match text {
        Some(t) => G::from_position(t, rules)?,
        None => G::new_game(rules)?,
    })
}
