//! `martian-zero show`.

use anyhow::{Context, Result};
use martian_rules::GameState;

use crate::with_game;

/// Arguments of `show`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    pos: super::PositionArgs,
    #[command(flatten)]
    rules: super::RulesArgs,
    /// Moves to play first, `<from><to>` each: separate arguments, or one
    /// argument of moves separated by spaces (`--moves "d3d5 b6a5"`; an
    /// empty one is no move).
    #[arg(long, num_args = 0..)]
    moves: Vec<String>,
}

/// Runs `show`.
pub fn run(a: Args) -> Result<()> {
    with_game!(a.pos.game, G => run_game::<G>(&a))
}

fn run_game<G: GameState>(a: &Args) -> Result<()> {
    let rules = martian_run::checkpoints::rules_with_switches::<G>(None, "", a.rules.rules.as_deref())?;
    let mut pos: G = super::position(a.pos.position.as_deref(), &rules)?;
    for (i, m) in a.moves.iter().flat_map(|m| m.split_whitespace()).enumerate() {
        let mv = pos.parse_move(m).with_context(|| format!("move {} ({m})", i + 1))?;
        pos.play_unchecked(mv);
    }
    println!("{}", pos.board_text());
    println!("position: {}", pos.to_position());
    // Free-for-all: the seat to move (its team is no player).
    let to_move =
        if pos.num_players() > 2 { pos.player_name(pos.player_to_move()) } else { G::side_name(pos.side_to_move()) };
    println!("to move: {to_move}");
    let mut moves = Vec::new();
    pos.legal_moves(&mut moves);
    let list: Vec<String> = moves.iter().map(|&m| pos.move_to_string(m)).collect();
    println!("legal moves ({}): {}", list.len(), list.join(" "));
    if let Some(o) = pos.outcome() {
        // Free-for-all: the seats' result (a sole or shared win), not a team's.
        match (pos.num_players() > 2, o.winner, pos.winner_name()) {
            (true, _, Some(w)) if w.contains(',') => println!("result: {w} share the win ({})", o.reason),
            (true, _, Some(w)) => println!("result: {w} wins ({})", o.reason),
            (_, Some(w), _) => println!("result: {} wins ({})", G::side_name(w), o.reason),
            (_, None, _) => println!("result: draw ({})", o.reason),
        }
    }
    Ok(())
}
