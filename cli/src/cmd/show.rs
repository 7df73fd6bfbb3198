//! `martian-zero show`.

use anyhow::{Context, Result};
use martian_rules::GameState;

use crate::with_game;

/// Arguments of `show`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    pos: super::PositionArgs,
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
    let mut pos: G = super::position(a.pos.position.as_deref(), &G::Rules::default())?;
    for (i, m) in a.moves.iter().flat_map(|m| m.split_whitespace()).enumerate() {
        let mv = pos.parse_move(m).with_context(|| format!("move {} ({m})", i + 1))?;
        pos.play_unchecked(mv);
    }
    println!("{}", pos.board_text());
    println!("position: {}", pos.to_position());
    println!("to move: {}", G::side_name(pos.side_to_move()));
    let mut moves = Vec::new();
    pos.legal_moves(&mut moves);
    let list: Vec<String> = moves.iter().map(|&m| pos.move_to_string(m)).collect();
    println!("legal moves ({}): {}", list.len(), list.join(" "));
    if let Some(o) = pos.outcome() {
        match o.winner {
            Some(w) => println!("result: {} wins ({})", G::side_name(w), o.reason),
            None => println!("result: draw ({})", o.reason),
        }
    }
    Ok(())
}
