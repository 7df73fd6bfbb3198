//! The engine of `play` and `analyse` as the command line names it
//! ([`EngineKind`]), made into a [`martian_search::Session`]: MCTS with the
//! loaded network or uniform priors, the alpha-beta baseline, random and
//! greedy moves. The session searches and reports ([`Info`]); this module only
//! plugs in what the search crate cannot name (the network, the players of
//! `martian-evaluate`) and the words both commands print.
//!
//! Scores are in the units of the engine protocol (`docs/protocol.md`,
//! [`martian_search::Score`]), so `analyse`, `play` and `engine` print the same
//! numbers for the same search.

use anyhow::{anyhow, Result};
use martian_evaluate::{GreedyPlayer, Player, RandomPlayer};
use martian_model::{Checkpoint, NetEvaluator};
use martian_rules::{GameState, Move};
use martian_search::{
    AbGame, AlphaBeta, AlphaBetaConfig, End, EvalError, Evaluation, Evaluator, Info, MctsConfig, SearchLimits, Session,
    UniformEvaluator,
};
use tch::Device;

/// Which engine, with its limits.
#[derive(Clone, Debug, PartialEq)]
pub enum EngineKind {
    /// MCTS with the loaded network (uniform priors and value 0 without one).
    Mcts {
        /// Simulations per search (at least 1).
        visits: u32,
        /// Move-choice temperature (a strength level's; 0 = the best move).
        temperature: f32,
        /// Plies of the play-time tactical check of the chosen move
        /// ([`martian_search::Veto`], `--veto-depth`); 0 = none.
        veto_depth: u32,
    },
    /// The alpha-beta baseline.
    AlphaBeta {
        /// Depth, time or node limits (at least one set).
        limits: SearchLimits,
        /// Transposition table, MiB.
        tt_mib: usize,
    },
    /// Uniformly random legal moves.
    Random,
    /// One-ply greedy moves.
    Greedy,
}

impl EngineKind {
    /// The limits of each search.
    pub fn limits(&self) -> SearchLimits {
        match self {
            EngineKind::Mcts { visits, .. } => SearchLimits::visits((*visits).max(1)),
            EngineKind::AlphaBeta { limits, .. } => *limits,
            EngineKind::Random | EngineKind::Greedy => SearchLimits::default(),
        }
    }

    /// A short description: `mcts (network, 200 visits)`, `alphabeta (depth 4)`.
    pub fn describe(&self, with_net: bool) -> String {
        match self {
            EngineKind::Mcts { visits, temperature, veto_depth } => {
                let net = if with_net { "network" } else { "uniform priors, no network" };
                let mut parts = vec![net.to_string(), format!("{visits} visit{}", if *visits == 1 { "" } else { "s" })];
                if *temperature > 0.0 {
                    parts.push(format!("move temperature {temperature}"));
                }
                if *veto_depth > 0 {
                    parts.push(format!("veto depth {veto_depth}"));
                }
                format!("mcts ({})", parts.join(", "))
            }
            EngineKind::AlphaBeta { limits, .. } => {
                let mut parts = Vec::new();
                if let Some(d) = limits.depth {
                    parts.push(format!("depth {d}"));
                }
                if let Some(t) = limits.movetime {
                    parts.push(format!("{} ms per move", t.as_millis()));
                }
                if let Some(n) = limits.nodes {
                    parts.push(format!("{n} nodes"));
                }
                format!("alphabeta ({})", parts.join(", "))
            }
            EngineKind::Random => "random".into(),
            EngineKind::Greedy => "greedy".into(),
        }
    }
}

/// The MCTS engine's evaluator: the network, or equal priors and value 0.
pub enum Priors<'a, G> {
    /// The loaded network.
    Net(NetEvaluator<'a, G>),
    /// [`UniformEvaluator`].
    Uniform,
}

impl<G: GameState> Evaluator<G> for Priors<'_, G> {
    fn evaluate(&mut self, positions: &[&G], moves: &[&[Move]], out: &mut Vec<Evaluation>) -> Result<(), EvalError> {
        match self {
            Priors::Net(n) => n.evaluate(positions, moves, out),
            Priors::Uniform => UniformEvaluator.evaluate(positions, moves, out),
        }
    }

    fn max_batch(&self) -> usize {
        match self {
            Priors::Net(n) => Evaluator::<G>::max_batch(n),
            Priors::Uniform => usize::MAX,
        }
    }
}

/// The session of `play` and `analyse`.
pub type PlaySession<'a, G> = Session<'a, G, Priors<'a, G>>;

/// Leaves per network batch of the MCTS engine (as `engine --batch`'s default).
const LEAVES_PER_BATCH: u32 = 8;

/// A session searching `pos` with the engine `kind`; MCTS uses `net` on
/// `device` when given, and checks its moves with the play-time check of
/// `veto_depth` plies ([`Session::with_veto`]). Random and greedy moves are
/// seeded (seed 1).
///
/// # Errors
/// Alpha-beta's transposition table of `tt_mib` MiB cannot be allocated; a
/// veto depth out of range or in a game of more than two value players.
pub fn session<'a, G: AbGame>(
    kind: &EngineKind,
    net: Option<&'a Checkpoint>,
    device: Device,
    pos: G,
) -> Result<PlaySession<'a, G>> {
    let pick =
        |mut p: Box<dyn Player<G>>| martian_search::Engine::Chooser(Box::new(move |s: &G| p.choose_move(s).ok()));
    let engine = match kind {
        EngineKind::Mcts { .. } => martian_search::Engine::Mcts {
            config: MctsConfig { leaves_per_batch: LEAVES_PER_BATCH, ..MctsConfig::default() },
            evaluator: match net {
                Some(ck) => Priors::Net(NetEvaluator::new(&ck.net, device, LEAVES_PER_BATCH as usize)),
                None => Priors::Uniform,
            },
        },
        EngineKind::AlphaBeta { tt_mib, .. } => {
            let cfg = AlphaBetaConfig { tt_mib: *tt_mib, ..AlphaBetaConfig::default() };
            let ab = AlphaBeta::try_with_eval(cfg, G::Eval::default()).map_err(|e| anyhow!("{e} (--tt-mib)"))?;
            martian_search::Engine::AlphaBeta(Box::new(ab))
        }
        EngineKind::Random => pick(Box::new(RandomPlayer::new(1))),
        EngineKind::Greedy => pick(Box::new(GreedyPlayer::new(1))),
    };
    Ok(match kind {
        EngineKind::Mcts { temperature, veto_depth, .. } => {
            let s = Session::new(engine, pos);
            let s = if *temperature > 0.0 { s.with_temperature(*temperature, 1) } else { s };
            s.with_veto(*veto_depth).map_err(|e| anyhow!("--veto-depth: {e}"))?
        }
        _ => Session::new(engine, pos),
    })
}

/// Searches `pos` within `limits` (see [`Session::go`]): the move to play and
/// the last info.
///
/// # Errors
/// A finished game, or a failed network evaluation.
pub fn think<G: AbGame, E: Evaluator<G>>(
    session: &mut Session<'_, G, E>,
    pos: &G,
    limits: &SearchLimits,
    on_info: impl FnMut(&Info),
) -> Result<(Move, Info)> {
    session.set_position(pos.clone());
    let info = session.go(limits, on_info)?;
    match (&info.end, info.best_move) {
        (Some(End::EvalError(e)), _) => Err(anyhow!("search: {e}")),
        (_, Some(best)) => Ok((best, info)),
        (_, None) => Err(anyhow!("no legal move")),
    }
}

/// The size of a search: `200 visits, 1531 nodes`, `depth 4, 5120 nodes`, `one ply`.
pub fn effort(info: &Info) -> String {
    match (info.visits, info.depth) {
        (Some(v), _) => format!("{v} visit{}, {} nodes", if v == 1 { "" } else { "s" }, info.nodes),
        (None, Some(d)) => format!("depth {d}, {} nodes", info.nodes),
        (None, None) => "one ply".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use martian_rules::martian::{MartianChess, MartianRules};
    use martian_search::Score;

    #[test]
    fn sessions_of_every_engine_kind() {
        let pos = MartianChess::new_game(&MartianRules::default()).expect("start");
        let mcts = EngineKind::Mcts { visits: 64, temperature: 0.0, veto_depth: 0 };
        let (_, t) = think(&mut session(&mcts, None, Device::Cpu, pos).unwrap(), &pos, &mcts.limits(), |_| {}).unwrap();
        assert_eq!(effort(&t), format!("64 visits, {} nodes", t.nodes));
        assert!(matches!(t.score, Some(Score::Value(v)) if (-1.0..=1.0).contains(&v)));
        let ab = EngineKind::AlphaBeta { limits: SearchLimits::depth(2), tt_mib: 1 };
        assert_eq!(ab.describe(false), "alphabeta (depth 2)");
        let (_, t) = think(&mut session(&ab, None, Device::Cpu, pos).unwrap(), &pos, &ab.limits(), |_| {}).unwrap();
        assert!(effort(&t).starts_with("depth 2, "), "{}", effort(&t));
        for kind in [EngineKind::Random, EngineKind::Greedy] {
            let mut s = session(&kind, None, Device::Cpu, pos).unwrap();
            let (best, t) = think(&mut s, &pos, &kind.limits(), |_| {}).unwrap();
            assert_eq!((effort(&t), t.score, t.best_move), ("one ply".to_string(), None, Some(best)));
        }
    }
}
