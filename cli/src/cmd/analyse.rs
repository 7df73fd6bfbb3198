//! `martian-zero analyse`: search one position and print what the engine found.
//!
//! * `--engine alphabeta`: each iteration's depth, score, nodes and principal
//!   variation, then `bestmove`;
//! * `--engine mcts` (the default unless an alpha-beta limit is given; with
//!   `--model`, else the game's bundled network, as `play` and `engine` use
//!   it; `--model none`: uniform priors): the root value, the top moves with
//!   their visits, priors and values, the principal variation, then `bestmove`.
//!
//! Scores are in the units of the engine protocol ([`martian_search::Score`]). With
//! `--model`, the position is read and searched under the network's rules.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use martian_rules::GameKind;
use martian_search::{line_text, AbGame, Score, SearchLimits};

use crate::think::{effort, session, think, EngineKind};
use crate::with_game;
use martian_run::checkpoints::{model_and_game, model_rules, LoadedModel};

/// Arguments of `analyse`.
#[derive(clap::Args)]
pub struct Args {
    /// Which game (default: the model's game; required without --model).
    #[arg(long, value_parser = crate::game_parser())]
    game: Option<GameKind>,
    /// Position string (default: the initial position).
    #[arg(long)]
    position: Option<String>,
    /// Engine: `alphabeta` or `mcts` (default: alphabeta when --depth,
    /// --movetime, --nodes or --tt-mib is given, else mcts).
    #[arg(long)]
    engine: Option<String>,
    /// Network for `--engine mcts`: a checkpoint `.safetensors`, an exported
    /// bundle directory or a run directory (its promoted checkpoint); its rules
    /// are used. Default: the game's bundled network (`models/README.md`);
    /// `none`: no network (uniform priors).
    #[arg(long)]
    model: Option<PathBuf>,
    /// Device for the network (with --model): auto, cpu, cuda, cuda:N.
    #[arg(long, default_value = "auto", requires = "model")]
    device: String,
    /// MCTS simulations (`--engine mcts`; default 800).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    visits: Option<u32>,
    /// Root moves listed with their line (`--engine mcts`; default 3); each
    /// after the first repeats the search once to read its line.
    #[arg(long, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=1000))]
    top: Option<usize>,
    /// Search depth in plies (alpha-beta; default 6 without --movetime/--nodes).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=64))]
    depth: Option<u32>,
    /// Time limit in milliseconds (alpha-beta).
    #[arg(long)]
    movetime: Option<u64>,
    /// Node limit (alpha-beta).
    #[arg(long)]
    nodes: Option<u64>,
    #[command(flatten)]
    rules: super::RulesArgs,
    #[command(flatten)]
    search: super::SearchArgs,
    /// Transposition table size in MiB (1..=65536; alpha-beta; default 64).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=65_536))]
    tt_mib: Option<u32>,
}

/// Runs `analyse`.
pub fn run(a: Args) -> Result<()> {
    // Alpha-beta's limits without --engine ask for alpha-beta; otherwise the
    // network's search, as `play` and `engine --game` default to.
    let ab_flags = a.depth.is_some() || a.movetime.is_some() || a.nodes.is_some() || a.tt_mib.is_some();
    let engine =
        a.engine.clone().unwrap_or_else(|| if ab_flags && a.model.is_none() { "alphabeta" } else { "mcts" }.into());
    let kind = match engine.as_str() {
        "mcts" => {
            if a.depth.is_some() || a.movetime.is_some() || a.nodes.is_some() || a.tt_mib.is_some() {
                bail!("--depth, --movetime, --nodes and --tt-mib are the alphabeta engine's; mcts takes --visits");
            }
            EngineKind::Mcts { visits: a.visits.unwrap_or(800), temperature: 0.0, veto_depth: a.search.veto_depth }
        }
        "alphabeta" => {
            if a.model.is_some() {
                bail!("--model is used by the mcts engine; --engine alphabeta takes no model");
            }
            if a.visits.is_some() || a.top.is_some() || a.search.veto_depth > 0 {
                bail!(
                    "--visits, --top and --veto-depth are the mcts engine's; alphabeta takes --depth, --movetime, --nodes"
                );
            }
            let movetime = a.movetime.map(Duration::from_millis);
            let mut limits = SearchLimits { depth: a.depth, nodes: a.nodes, movetime, visits: None };
            if limits == SearchLimits::default() {
                limits.depth = Some(6);
            }
            EngineKind::AlphaBeta { limits, tt_mib: a.tt_mib.unwrap_or(64) as usize }
        }
        e => bail!("unknown engine {e:?}: analyse supports alphabeta and mcts"),
    };
    let mcts = matches!(kind, EngineKind::Mcts { .. });
    let (model, device, game) = model_and_game(a.model.as_deref(), &a.device, a.game, mcts, a.rules.rules.as_deref())?;
    with_game!(game, G => run_game::<G>(&a, kind, model.as_ref(), device))
}

fn run_game<G: AbGame>(a: &Args, kind: EngineKind, model: Option<&LoadedModel>, device: tch::Device) -> Result<()> {
    let rules: G::Rules = model_rules::<G>(model, a.rules.rules.as_deref())?;
    let pos: G = match a.position.as_deref() {
        Some(t) => G::from_position(t, &rules).context("bad --position")?,
        None => G::new_game(&rules).context("the model's rules give no starting position")?,
    };
    println!("{}", pos.board_text());
    if pos.outcome().is_some() {
        return Ok(());
    }
    martian_run::runtime::ready_network(model.map(|m| &m.ck.net), device, a.search.threads as usize, &pos)?;
    let mut engine = session(&kind, model.map(|m| &m.ck), device, pos.clone())?;
    match model {
        Some(m) => println!("{} with {}", kind.describe(true), m.source.display()),
        None => println!("{}", kind.describe(false)),
    }
    // The seat in the four-player games (§14.3), whose values are its team's
    // (or, in the free-for-all, its own).
    println!("{} to move; scores and values are for the side to move", pos.mover_name());
    let limits = kind.limits();
    let (best, t) = think(&mut engine, &pos, &limits, |it| {
        // Alpha-beta's completed iterations (MCTS is printed once, below).
        let (None, Some(depth), Some(seldepth), Some(score)) = (&it.end, it.depth, it.seldepth, it.score) else {
            return;
        };
        println!(
            "depth {depth:>2} seldepth {seldepth:>2} score {:>9} nodes {:>10} nps {:>9.0} time {:>6} ms pv {}",
            score.text(),
            it.nodes,
            it.nps(),
            it.elapsed.as_millis(),
            line_text(&pos, &it.pv)
        );
    })?;
    if let Some(Score::Value(v)) = t.score {
        let secs = t.elapsed.as_secs_f64();
        println!("value {} ({}, {secs:.2} s)", Score::Value(v).text(), effort(&t));
        let total: u32 = t.root_moves.iter().map(|m| m.visits).sum::<u32>().max(1);
        let top: Vec<_> = t.root_moves.iter().take(a.top.unwrap_or(3)).collect();
        // The best move's line is the principal variation; the others' come
        // from repeated searches (deterministic), one per move.
        let others: Vec<_> = top.iter().skip(1).map(|m| m.mv).collect();
        let mut lines = vec![t.pv.clone()];
        lines.extend(engine.move_lines(&limits, &others, 16)?);
        println!("{:<8} {:>7} {:>6} {:>7} {:>8}  line", "move", "visits", "share", "prior", "value");
        for (m, line) in top.iter().zip(&lines) {
            println!(
                "{:<8} {:>7} {:>5.1}% {:>7.3} {:>8}  {}",
                pos.move_to_string(m.mv),
                m.visits,
                100.0 * m.visits as f64 / total as f64,
                m.prior,
                m.value.map_or("-".to_string(), |v| Score::Value(v).text()),
                line_text(&pos, &line[..line.len().min(16)])
            );
        }
        println!("pv {}", line_text(&pos, &t.pv));
    }
    if let Some(v) = t.vetoed {
        println!(
            "veto {}: a forced loss within {} plies (the play-time check)",
            pos.move_to_string(v),
            a.search.veto_depth
        );
    }
    match t.score {
        Some(e) => println!("bestmove {} {e} ({})", pos.move_to_string(best), effort(&t)),
        None => println!("bestmove {}", pos.move_to_string(best)),
    }
    Ok(())
}
