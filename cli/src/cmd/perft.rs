//! `martian-zero perft`.

use anyhow::Result;
use martian_rules::{divide, perft, GameState};

use crate::with_game;

/// Arguments of `perft`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    pos: super::PositionArgs,
    /// Depth in plies.
    #[arg(long)]
    depth: u32,
    /// Print the count of each root move's subtree.
    #[arg(long)]
    divide: bool,
}

/// Runs `perft`.
pub fn run(a: Args) -> Result<()> {
    with_game!(a.pos.game, G => run_game::<G>(&a))
}

fn run_game<G: GameState>(a: &Args) -> Result<()> {
    let pos: G = super::position(a.pos.position.as_deref(), &G::Rules::default())?;
    let t = std::time::Instant::now();
    let total = if a.divide {
        let d = divide(&pos, a.depth);
        for (m, n) in &d {
            println!("{} {n}", pos.move_to_string(*m));
        }
        d.iter().map(|x| x.1).sum::<u64>()
    } else {
        perft(&pos, a.depth)
    };
    let s = t.elapsed().as_secs_f64();
    println!("perft({}) = {total}", a.depth);
    eprintln!("{:.3} s, {:.1} M leaves/s", s, total as f64 / s.max(1e-9) / 1e6);
    Ok(())
}
