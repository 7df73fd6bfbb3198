//! `martian-zero play`: a person against an engine in the terminal.

use std::io::{BufRead, Write};
use std::path::PathBuf;

use anyhow::{bail, Result};
use martian_evaluate::{AlphaBetaPlayer, GreedyPlayer, MctsPlayer, Player, RandomPlayer};
use martian_model::{ConfigModel, NetEvaluator};
use martian_rules::{GameKind, Side};
use martian_search::{AbGame, AlphaBetaConfig, Limits, MctsConfig, UniformEvaluator};

use crate::checkpoints::load_checkpoint;
use crate::{with_game, GameArg};

/// Arguments of `play`.
#[derive(clap::Args)]
pub struct Args {
    /// Which game.
    #[arg(long, value_enum)]
    game: GameArg,
    /// Engine: `mcts` (with --model, or uniform priors without), `alphabeta`
    /// (with --depth or --movetime), `random` or `greedy`.
    #[arg(long, default_value = "mcts")]
    engine: String,
    /// Checkpoint for `--engine mcts`.
    #[arg(long)]
    model: Option<PathBuf>,
    /// MCTS simulations per engine move.
    #[arg(long, default_value_t = 200)]
    visits: u32,
    /// Alpha-beta search depth in plies (`--engine alphabeta`; default 4 without --movetime).
    #[arg(long)]
    depth: Option<u32>,
    /// Alpha-beta time per move in milliseconds (`--engine alphabeta`).
    #[arg(long)]
    movetime: Option<u64>,
    /// Play the side that moves second (default: you move first).
    #[arg(long)]
    second: bool,
    /// Start position string.
    #[arg(long)]
    position: Option<String>,
}

/// Runs `play`.
pub fn run(a: Args) -> Result<()> {
    with_game!(GameKind::from(a.game), G => run_game::<G>(&a))
}

fn run_game<G: AbGame>(a: &Args) -> Result<()> {
    let rules = G::Rules::default();
    let mut pos: G = super::position(a.position.as_deref(), &rules)?;
    let ck = match &a.model {
        Some(p) => Some(load_checkpoint::<G>(p, &rules, ConfigModel::Absent, tch::Device::cuda_if_available())?),
        None => None,
    };
    let mut engine: Box<dyn Player<G>> = match (a.engine.as_str(), &ck) {
        ("mcts", Some(c)) => Box::new(MctsPlayer::new(
            "mcts".into(),
            NetEvaluator::<G>::new(&c.net, tch::Device::cuda_if_available(), 64),
            MctsConfig::default(),
            a.visits,
            1,
        )),
        ("mcts", None) => {
            Box::new(MctsPlayer::new("mcts".into(), UniformEvaluator, MctsConfig::default(), a.visits, 1))
        }
        ("alphabeta", _) => {
            if a.depth == Some(0) {
                bail!("--depth must be >= 1");
            }
            let mut limits =
                Limits { depth: a.depth, movetime: a.movetime.map(std::time::Duration::from_millis), nodes: None };
            if limits == Limits::default() {
                limits.depth = Some(4);
            }
            Box::new(AlphaBetaPlayer::<G>::new(AlphaBetaConfig::default(), limits))
        }
        ("random", _) => Box::new(RandomPlayer::new(1)),
        ("greedy", _) => Box::new(GreedyPlayer::new(1)),
        (e, _) => bail!("unknown engine {e:?}: expected mcts, alphabeta, random or greedy"),
    };
    let human: Side = if a.second { pos.side_to_move().opponent() } else { pos.side_to_move() };
    println!("You play {}. Enter moves as <from><to>; 'quit' to stop.", G::side_name(human));
    let stdin = std::io::stdin();
    // Lines as bytes, decoded leniently: invalid UTF-8 is an unparsable move, not the end of the game.
    let mut lines = stdin.lock().split(b'\n');
    while pos.outcome().is_none() {
        println!("{}", pos.board_text());
        if pos.side_to_move() == human {
            print!("your move> ");
            std::io::stdout().flush()?;
            let Some(line) = lines.next() else { return Ok(()) };
            let line = String::from_utf8_lossy(&line?).into_owned();
            let t = line.trim();
            if t == "quit" {
                return Ok(());
            }
            match pos.parse_move(t) {
                Ok(m) => pos.play_unchecked(m),
                Err(e) => println!("{e}"),
            }
        } else {
            let m = engine.choose_move(&pos)?;
            println!("engine plays {}", pos.move_to_string(m));
            pos.play_unchecked(m);
        }
    }
    println!("{}", pos.board_text());
    if let Some(o) = pos.outcome() {
        match o.winner {
            Some(w) => println!("{} wins ({})", G::side_name(w), o.reason),
            None => println!("draw ({})", o.reason),
        }
    }
    Ok(())
}
