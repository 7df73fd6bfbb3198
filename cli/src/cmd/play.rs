//! `martian-zero play`: a person against an engine in the terminal, as a
//! small REPL: moves (`d3d5`, any case), `help`, `moves`, `hint`, `undo`,
//! `quit`; an empty line asks again. The board is drawn from the person's side;
//! after each engine move the engine's evaluation, time and line are printed.

use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Result};
use martian_rules::{GameKind, GameState, Side, MAX_PLAYERS};
use martian_search::{line_text, AbGame, Info, SearchLimits};

use crate::think::{effort, session, think, EngineKind};
use crate::with_game;
use martian_run::checkpoints::{model_and_game, model_rules, LoadedModel};

/// Arguments of `play`.
#[derive(clap::Args)]
pub struct Args {
    /// Which game (default: the model's game; required without --model).
    #[arg(long, value_parser = crate::game_parser())]
    game: Option<GameKind>,
    /// Engine: `mcts` (with --model, or uniform priors without), `alphabeta`
    /// (with --depth or --movetime), `random` or `greedy`.
    #[arg(long, default_value = "mcts")]
    engine: String,
    /// Network for `--engine mcts`: a checkpoint `.safetensors`, an exported
    /// bundle directory or a run directory (its promoted checkpoint). The game
    /// is played under the rules the network was trained with.
    #[arg(long)]
    model: Option<PathBuf>,
    /// Device for the network (with --model): auto, cpu, cuda, cuda:N.
    #[arg(long, default_value = "auto", requires = "model")]
    device: String,
    /// MCTS simulations per engine move (`--engine mcts`; default 200).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    visits: Option<u32>,
    /// Strength level of the mcts engine, 1 (weakest) to 6: fewer visits and a
    /// move-choice temperature (`docs/levels.md` gives each level's measured Elo).
    /// Instead of --visits.
    #[arg(long, conflicts_with = "visits")]
    level: Option<u32>,
    #[command(flatten)]
    rules: super::RulesArgs,
    #[command(flatten)]
    search: super::SearchArgs,
    /// Alpha-beta search depth in plies (`--engine alphabeta`; default 4 without --movetime).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=64))]
    depth: Option<u32>,
    /// Alpha-beta time per move in milliseconds (`--engine alphabeta`).
    #[arg(long)]
    movetime: Option<u64>,
    /// Play the side that moves second (in the four-player free-for-all the
    /// second seat, NW; default: you move first).
    #[arg(long)]
    second: bool,
    /// Start position string.
    #[arg(long)]
    position: Option<String>,
}

/// One line typed at the `your move>` prompt.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Input {
    /// Nothing (asks again).
    Empty,
    /// `help` or `?`.
    Help,
    /// `moves`: list the legal moves.
    Moves,
    /// `hint`: the engine's choice for you.
    Hint,
    /// `undo`: take back your last move and the engine's reply.
    Undo,
    /// `quit`, `exit` or `q`.
    Quit,
    /// Anything else: a move, in lower case.
    Move(String),
}

/// Reads one line typed at the prompt; commands and moves in any case.
pub fn parse_input(line: &str) -> Input {
    let t = line.trim().to_ascii_lowercase();
    match t.as_str() {
        "" => Input::Empty,
        "help" | "?" | "h" => Input::Help,
        "moves" | "legal" => Input::Moves,
        "hint" => Input::Hint,
        "undo" | "takeback" => Input::Undo,
        "quit" | "exit" | "q" => Input::Quit,
        _ => Input::Move(t),
    }
}

const HELP: &str = "\
commands (any case):
  <from><to>   play a move, e.g. d3d5 (also d3-d5, d3xd5)
  moves        list your legal moves
  hint         ask the engine which move it would play for you
  undo         take back your last move and the engine's reply
  help         this text
  quit         leave the game
an empty line asks again";

/// Runs `play`.
pub fn run(a: Args) -> Result<()> {
    let engine = engine_kind(&a)?;
    if a.model.is_some() && !matches!(engine, EngineKind::Mcts { .. }) {
        bail!("--model is used by the mcts engine; --engine {} takes no model", a.engine);
    }
    let (model, device, game) = model_and_game(
        a.model.as_deref(),
        &a.device,
        a.game,
        matches!(engine, EngineKind::Mcts { .. }),
        a.rules.rules.as_deref(),
    )?;
    with_game!(game, G => run_game::<G>(&a, engine, model.as_ref(), device))
}

/// The engine the arguments name, with its limits.
fn engine_kind(a: &Args) -> Result<EngineKind> {
    if a.engine != "alphabeta" && (a.depth.is_some() || a.movetime.is_some()) {
        bail!("--depth and --movetime limit the alphabeta engine; --engine {} does not use them", a.engine);
    }
    if a.engine != "mcts" && (a.visits.is_some() || a.level.is_some() || a.search.veto_depth > 0) {
        bail!(
            "--visits, --level and --veto-depth set the mcts engine's search; --engine {} does not use them",
            a.engine
        );
    }
    Ok(match a.engine.as_str() {
        "mcts" => match a.level {
            Some(n) => {
                let l = martian_search::Level::get(n).map_err(|e| anyhow::anyhow!("--level: {e}"))?;
                EngineKind::Mcts { visits: l.visits, temperature: l.temperature, veto_depth: a.search.veto_depth }
            }
            None => {
                EngineKind::Mcts { visits: a.visits.unwrap_or(200), temperature: 0.0, veto_depth: a.search.veto_depth }
            }
        },
        "alphabeta" => {
            let mut limits = SearchLimits {
                depth: a.depth,
                movetime: a.movetime.map(Duration::from_millis),
                ..SearchLimits::default()
            };
            if limits == SearchLimits::default() {
                limits.depth = Some(4);
            }
            EngineKind::AlphaBeta { limits, tt_mib: 64 }
        }
        "random" => EngineKind::Random,
        "greedy" => EngineKind::Greedy,
        e => bail!("unknown engine {e:?}: expected mcts, alphabeta, random or greedy"),
    })
}

/// The result line for the person playing value player `human`
/// ([`GameState::player_to_move`]'s index): the winner by
/// [`GameState::winner_name`] (a side, a team, or in four-player
/// free-for-all the seats sharing the win, martian-chess §14.7).
fn outcome_text<G: GameState>(pos: &G, human: usize) -> Option<String> {
    let o = pos.outcome()?;
    let values = pos.player_values()?;
    let top = values[..pos.num_players()].iter().copied().fold(f32::NEG_INFINITY, f32::max);
    Some(match pos.winner_name() {
        Some(w) if values[human] == top && w.contains(',') => format!("{w} share the win ({}): you share it", o.reason),
        Some(w) if values[human] == top => format!("{w} wins ({}): you win", o.reason),
        Some(w) => format!("{w} wins ({}): the engine wins", o.reason),
        None => format!("draw ({})", o.reason),
    })
}

/// `value 0.0000, 50 visits, 671 nodes, 0.00 s; line b3a2 c7d8 d3d4`.
fn thought_text<G: GameState>(pos: &G, t: &Info) -> String {
    let mut parts = Vec::new();
    if let Some(e) = t.score {
        parts.push(e.to_string());
    }
    parts.push(effort(t));
    parts.push(format!("{:.2} s", t.elapsed.as_secs_f64()));
    let mut s = parts.join(", ");
    if t.pv.len() > 1 {
        s.push_str(&format!("; line {}", line_text(pos, &t.pv[..t.pv.len().min(8)])));
    }
    s
}

fn run_game<G: AbGame>(a: &Args, kind: EngineKind, model: Option<&LoadedModel>, device: tch::Device) -> Result<()> {
    let rules: G::Rules = model_rules::<G>(model, a.rules.rules.as_deref())?;
    let mut pos: G = super::position(a.position.as_deref(), &rules)?;
    let limits = kind.limits();
    martian_run::runtime::ready_network(model.map(|m| &m.ck.net), device, a.search.threads as usize, &pos)?;
    let mut engine = session(&kind, model.map(|m| &m.ck), device, pos.clone())?;
    // The person is one value player: a side, a team of the four-player
    // team game (both its seats), or one seat of the free-for-all (the
    // engine plays the other three, martian-chess §14.1).
    let players = pos.num_players();
    let human = if a.second { (pos.player_to_move() + 1) % players } else { pos.player_to_move() };
    // Value players alternate between the two sides (seats SW, NW, NE, SE
    // belong to teams South, North, South, North): the board is seen from
    // the person's side.
    let human_side = Side::ALL[human % 2];
    let against = match model {
        Some(m) => format!("{} with {}", kind.describe(true), m.source.display()),
        None => kind.describe(false),
    };
    println!(
        "You play {} against {against}; your side is at the bottom. Type a move (e.g. {}), or help.",
        pos.player_name(human),
        example_move(&pos, human)
    );
    if model.is_some() && rules != G::Rules::default() {
        println!("Rules of the network: {}", serde_json::to_string(&rules)?);
    }
    let stdin = std::io::stdin();
    // Lines as bytes, decoded leniently: invalid UTF-8 is an unparsable move, not the end of the game.
    let mut lines = stdin.lock().split(b'\n');
    // Positions before each of the person's moves, for `undo`.
    let mut history: Vec<G> = Vec::new();
    let mut show_board = true;
    while pos.outcome().is_none() {
        if pos.player_to_move() != human {
            let (best, t) = think(&mut engine, &pos, &limits, |_| {})?;
            if let Some(v) = t.vetoed {
                println!("engine vetoed {}: a forced loss (the play-time check)", pos.move_to_string(v));
            }
            // The free-for-all's engine plays three seats: say which.
            let seat = if players > 2 { format!(" for {}", pos.mover_name()) } else { String::new() };
            println!("engine plays {}{seat}  ({})", pos.move_to_string(best), thought_text(&pos, &t));
            pos.play_unchecked(best);
            show_board = true;
            continue;
        }
        if show_board {
            println!("{}", pos.board_text_from(human_side));
            show_board = false;
        }
        print!("your move> ");
        std::io::stdout().flush()?;
        let Some(line) = lines.next() else {
            println!();
            println!("{}", goodbye(&pos, human));
            return Ok(());
        };
        let line = String::from_utf8_lossy(&line?).into_owned();
        if line.trim().len() > MAX_ECHO {
            println!(
                "a line of {} bytes is no move (type moves for the legal moves, help for the commands)",
                line.trim().len()
            );
            continue;
        }
        match parse_input(&line) {
            Input::Empty => {}
            Input::Help => println!("{HELP}"),
            Input::Quit => {
                println!("{}", goodbye(&pos, human));
                return Ok(());
            }
            Input::Moves => {
                let mut moves = Vec::new();
                pos.legal_moves(&mut moves);
                let text: Vec<String> = moves.iter().map(|&m| pos.move_to_string(m)).collect();
                println!("{} legal moves: {}", text.len(), text.join(" "));
            }
            Input::Hint => {
                let (best, t) = think(&mut engine, &pos, &limits, |_| {})?;
                println!("hint: {}  ({})", pos.move_to_string(best), thought_text(&pos, &t));
            }
            Input::Undo => match history.pop() {
                Some(p) => {
                    pos = p;
                    println!("took back your last move");
                    show_board = true;
                }
                None => println!("nothing to undo"),
            },
            Input::Move(m) => match pos.parse_move(&m) {
                Ok(mv) => {
                    history.push(pos.clone());
                    pos.play_unchecked(mv);
                    show_board = true;
                }
                Err(e) => println!("{e} (type moves for the legal moves, help for the commands)"),
            },
        }
    }
    println!("{}", pos.board_text_from(human_side));
    if let Some(t) = outcome_text(&pos, human) {
        println!("game over: {t}");
    }
    Ok(())
}

/// Longest input echoed back in a message: a longer line is no move, and is
/// not printed back whole.
const MAX_ECHO: usize = 64;

/// The line printed when the person leaves an unfinished game (`quit` or
/// the end of input): the plies played and who leads, by the game's own
/// measure (`GameState::material_leader`: Martian Chess's points, Jetan's
/// material in Seed 000's order).
fn goodbye<G: GameState>(pos: &G, human: usize) -> String {
    if pos.num_players() > 2 {
        // The free-for-all ranks four seats by points, shown on the board.
        return format!("goodbye: the game is left unfinished after {} plies", pos.ply());
    }
    let lead = match pos.material_leader() {
        Some(s) if s.index() == human => "you lead".to_string(),
        Some(s) => format!("{} leads", G::side_name(s)),
        None => "neither side leads".to_string(),
    };
    format!("goodbye: the game is left unfinished after {} plies; {lead}", pos.ply())
}

/// The first legal move of value player `human`, as an example of the
/// notation: in the position itself when `human` is to move, else after the
/// first legal moves of the players before it.
fn example_move<G: GameState>(pos: &G, human: usize) -> String {
    let mut moves = Vec::new();
    let mut p = pos.clone();
    for _ in 0..MAX_PLAYERS {
        if p.player_to_move() == human || p.outcome().is_some() {
            break;
        }
        p.legal_moves(&mut moves);
        match moves.first() {
            Some(&m) => p.play_unchecked(m),
            None => break,
        }
    }
    p.legal_moves(&mut moves);
    moves.first().map_or_else(|| "d3d5".to_string(), |&m| p.move_to_string(m))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_and_moves_in_any_case() {
        assert_eq!(parse_input(""), Input::Empty);
        assert_eq!(parse_input("   \r"), Input::Empty);
        assert_eq!(parse_input("HELP"), Input::Help);
        assert_eq!(parse_input(" Undo "), Input::Undo);
        assert_eq!(parse_input("moves"), Input::Moves);
        assert_eq!(parse_input("Hint"), Input::Hint);
        assert_eq!(parse_input("QUIT"), Input::Quit);
        assert_eq!(parse_input("D3D5\r"), Input::Move("d3d5".into()));
    }
}
