//! `martian-zero analyse`: search one position with the alpha-beta engine and
//! print each iteration's depth, score, nodes and principal variation.

use std::time::Duration;

use anyhow::{bail, Context, Result};
use martian_rules::{GameKind, GameState, Move};
use martian_search::alphabeta::score_text;
use martian_search::{AbGame, AlphaBeta, AlphaBetaConfig, Limits};

use crate::with_game;

/// Arguments of `analyse`.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    pos: super::PositionArgs,
    /// Engine (only `alphabeta`).
    #[arg(long, default_value = "alphabeta")]
    engine: String,
    /// Search depth in plies (default 6 without --movetime/--nodes).
    #[arg(long)]
    depth: Option<u32>,
    /// Time limit in milliseconds.
    #[arg(long)]
    movetime: Option<u64>,
    /// Node limit.
    #[arg(long)]
    nodes: Option<u64>,
    /// Transposition table size in MiB (1..=65536).
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..=65_536))]
    tt_mib: u32,
}

/// Runs `analyse`.
pub fn run(a: Args) -> Result<()> {
    if a.engine != "alphabeta" {
        bail!("unknown engine {:?}: analyse supports only alphabeta", a.engine);
    }
    with_game!(GameKind::from(a.pos.game), G => run_game::<G>(&a))
}

/// `m1 m2 ...` text of a line of moves from `root`.
pub fn line_text<G: GameState>(root: &G, pv: &[Move]) -> String {
    let mut s = root.clone();
    let mut out = Vec::new();
    for &m in pv {
        out.push(s.move_to_string(m));
        s.play_unchecked(m);
    }
    out.join(" ")
}

fn run_game<G: AbGame>(a: &Args) -> Result<()> {
    let rules = G::Rules::default();
    let pos: G = super::position(a.pos.position.as_deref(), &rules).context("bad --position")?;
    if let Some(o) = pos.outcome() {
        println!("{}", pos.board_text());
        println!("the game is over: {} ({})", o.winner.map(G::side_name).unwrap_or("draw"), o.reason);
        return Ok(());
    }
    let mut limits = Limits { depth: a.depth, nodes: a.nodes, movetime: a.movetime.map(Duration::from_millis) };
    if limits == Limits::default() {
        limits.depth = Some(6);
    }
    if limits.depth == Some(0) {
        bail!("--depth must be >= 1");
    }
    println!("{}", pos.board_text());
    println!("{} to move; score from its point of view", G::side_name(pos.side_to_move()));
    let mut engine: AlphaBeta<G> =
        AlphaBeta::new(AlphaBetaConfig { tt_mib: a.tt_mib as usize, ..AlphaBetaConfig::default() });
    let r = engine.search_with(&pos, &limits, |it| {
        println!(
            "depth {:>2} seldepth {:>2} score {:>10} nodes {:>10} nps {:>9.0} time {:>6} ms pv {}",
            it.depth,
            it.seldepth,
            score_text(it.score),
            it.nodes,
            it.nps(),
            it.elapsed.as_millis(),
            line_text(&pos, &it.pv)
        );
    });
    match r.best_move {
        Some(m) => println!(
            "bestmove {} score {} (depth {}, {} nodes)",
            pos.move_to_string(m),
            score_text(r.score),
            r.depth,
            r.nodes
        ),
        None => println!("no legal move"),
    }
    Ok(())
}
