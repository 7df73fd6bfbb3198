//! One engine searching one position and saying what it found: the engines of
//! `play` and `analyse` (MCTS with a network or uniform priors, the alpha-beta
//! baseline, random and greedy moves), built on what `martian_search` exposes.
//!
//! Scores use the units of the engine protocol (`docs/protocol.md`), so that
//! `analyse`, `play` and `engine` print the same numbers for the same search:
//! alpha-beta `cp N` (hundredths of the evaluation's unit, side to move) or
//! `win N` / `loss N` (a forced result in N plies); MCTS `value V` (expected
//! result for the side to move, -1 loss .. +1 win).

use std::time::{Duration, Instant};

use anyhow::{anyhow, Result};
use martian_evaluate::{GreedyPlayer, Player, RandomPlayer};
use martian_model::{Checkpoint, NetEvaluator};
use martian_rules::{GameState, Move};
use martian_search::alphabeta::{MATE, MATE_BOUND};
use martian_search::{
    AbGame, AbResult, AlphaBeta, AlphaBetaConfig, Limits, Mcts, MctsConfig, SearchResult, UniformEvaluator,
};
use rand::rngs::StdRng;
use rand::SeedableRng;
use tch::Device;

/// An alpha-beta score as the engine protocol writes it: `cp N`, `win N` or `loss N`.
pub fn score_text(score: i32) -> String {
    if score > MATE_BOUND {
        format!("win {}", MATE - score)
    } else if score < -MATE_BOUND {
        format!("loss {}", MATE + score)
    } else {
        format!("cp {score}")
    }
}

/// An MCTS value as the engine protocol writes it (four decimals).
pub fn value_text(v: f32) -> String {
    // No `-0.0000`: a value that rounds to zero is printed as zero.
    let v = if v.abs() < 5e-5 { 0.0 } else { v };
    format!("{v:.4}")
}

/// `m1 m2 ...`: the moves of `line` played from `root`.
pub fn line_text<G: GameState>(root: &G, line: &[Move]) -> String {
    let mut s = root.clone();
    let mut out = Vec::with_capacity(line.len());
    for &m in line {
        out.push(s.move_to_string(m));
        s.play_unchecked(m);
    }
    out.join(" ")
}

/// Which engine, with its limits.
#[derive(Clone, Debug, PartialEq)]
pub enum EngineKind {
    /// MCTS with the loaded network (uniform priors and value 0 without one).
    Mcts {
        /// Simulations per search.
        visits: u32,
    },
    /// The alpha-beta baseline.
    AlphaBeta {
        /// Depth, time or node limits (at least one set).
        limits: Limits,
        /// Transposition table, MiB.
        tt_mib: usize,
    },
    /// Uniformly random legal moves.
    Random,
    /// One-ply greedy moves.
    Greedy,
}

/// The engine's opinion of the position it searched.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Eval {
    /// MCTS root value for the side to move, in `[-1, 1]`.
    Value(f32),
    /// Alpha-beta score for the side to move (see [`score_text`]).
    Score(i32),
}

impl std::fmt::Display for Eval {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Eval::Value(v) => write!(f, "value {}", value_text(*v)),
            Eval::Score(s) => write!(f, "score {}", score_text(*s)),
        }
    }
}

/// One root move of an MCTS search.
#[derive(Clone, Debug, PartialEq)]
pub struct RootMove {
    /// The move.
    pub mv: Move,
    /// Completed simulations through it.
    pub visits: u32,
    /// Its prior (the network's probability; uniform without a network).
    pub prior: f32,
    /// Its mean value for the side to move at the root; `None` when unvisited.
    pub value: Option<f32>,
}

/// What one search found.
#[derive(Clone, Debug)]
pub struct Thought {
    /// The move to play.
    pub best: Move,
    /// The evaluation of the position (none for random and greedy moves).
    pub eval: Option<Eval>,
    /// The principal variation, starting with `best` (empty for random and greedy).
    pub pv: Vec<Move>,
    /// MCTS: every root move, most visited first; empty for the other engines.
    pub root_moves: Vec<RootMove>,
    /// The size of the search: `200 visits, 1531 nodes`, `depth 4, 5120 nodes`.
    pub effort: String,
    /// Wall time of the search.
    pub elapsed: Duration,
}

/// An engine for a game `G`, ready to search positions.
pub struct Engine<'a, G: AbGame> {
    kind: EngineKind,
    net: Option<&'a Checkpoint>,
    device: Device,
    ab: Option<AlphaBeta<G>>,
    simple: Option<Box<dyn Player<G>>>,
}

/// Leaves per network batch of the MCTS engine (as `engine --batch`'s default).
const LEAVES_PER_BATCH: u32 = 8;

impl<'a, G: AbGame> Engine<'a, G> {
    /// An engine of `kind`; MCTS uses `net` on `device` when given.
    ///
    /// # Errors
    /// Alpha-beta's transposition table of `tt_mib` MiB cannot be allocated.
    pub fn new(kind: EngineKind, net: Option<&'a Checkpoint>, device: Device) -> anyhow::Result<Self> {
        let ab = match &kind {
            EngineKind::AlphaBeta { tt_mib, .. } => Some(
                AlphaBeta::try_with_eval(
                    AlphaBetaConfig { tt_mib: *tt_mib, ..AlphaBetaConfig::default() },
                    G::Eval::default(),
                )
                .map_err(|e| anyhow::anyhow!("{e} (--tt-mib)"))?,
            ),
            _ => None,
        };
        let simple: Option<Box<dyn Player<G>>> = match kind {
            EngineKind::Random => Some(Box::new(RandomPlayer::new(1))),
            EngineKind::Greedy => Some(Box::new(GreedyPlayer::new(1))),
            _ => None,
        };
        Ok(Engine { kind, net, device, ab, simple })
    }

    /// A short description: `mcts (gen0010.safetensors, 200 visits)`, `alphabeta (depth 4)`.
    pub fn describe(&self) -> String {
        match &self.kind {
            EngineKind::Mcts { visits } => {
                let net = self.net.map_or("uniform priors, no network".to_string(), |_| "network".to_string());
                format!("mcts ({net}, {visits} visits)")
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

    /// Searches `pos` (whose game is not over). `on_iteration` sees each
    /// completed alpha-beta iteration (the other engines do not call it).
    ///
    /// # Errors
    /// A position without legal moves, or a failed network evaluation.
    pub fn think(&mut self, pos: &G, mut on_iteration: impl FnMut(&AbResult)) -> Result<Thought> {
        let t0 = Instant::now();
        if let Some(p) = self.simple.as_mut() {
            let best = p.choose_move(pos).map_err(|e| anyhow!("{e}"))?;
            return Ok(Thought {
                best,
                eval: None,
                pv: Vec::new(),
                root_moves: Vec::new(),
                effort: "one ply".into(),
                elapsed: t0.elapsed(),
            });
        }
        if let (Some(ab), EngineKind::AlphaBeta { limits, .. }) = (self.ab.as_mut(), &self.kind) {
            let r = ab.search_with(pos, limits, |it| on_iteration(it));
            let best = r.best_move.ok_or_else(|| anyhow!("no legal move"))?;
            return Ok(Thought {
                best,
                eval: Some(Eval::Score(r.score)),
                pv: r.pv.clone(),
                root_moves: Vec::new(),
                effort: format!("depth {}, {} nodes", r.depth, r.nodes),
                elapsed: t0.elapsed(),
            });
        }
        let (tree, res) = self.mcts(pos)?;
        let best = res.best_move().ok_or_else(|| anyhow!("no legal move"))?;
        let mut root_moves: Vec<RootMove> = res
            .visits
            .iter()
            .enumerate()
            .map(|(i, &(mv, v))| RootMove {
                mv,
                visits: v,
                prior: res.priors.get(i).copied().unwrap_or(0.0),
                value: res.q.get(i).copied().flatten(),
            })
            .collect();
        // Most visited first; the move to play leads among equals.
        root_moves.sort_by_key(|m| std::cmp::Reverse((m.visits, m.mv == best)));
        Ok(Thought {
            best,
            eval: Some(Eval::Value(res.root_value)),
            pv: tree.principal_variation(64),
            root_moves,
            effort: format!("{} visits, {} nodes", tree.child_visits(), tree.num_nodes()),
            elapsed: t0.elapsed(),
        })
    }

    /// The MCTS search of `pos`: fixed seed, no root noise, so the same
    /// network on the same device builds the same tree every time.
    fn mcts(&self, pos: &G) -> Result<(Mcts<G>, SearchResult)> {
        let EngineKind::Mcts { visits } = self.kind else {
            return Err(anyhow!("engine {} has no tree search", self.describe()));
        };
        let cfg = MctsConfig { leaves_per_batch: LEAVES_PER_BATCH, ..MctsConfig::default() };
        let mut tree = Mcts::new(cfg, pos.clone());
        let mut rng = StdRng::seed_from_u64(0);
        let res = match self.net {
            Some(ck) => {
                let mut ev = NetEvaluator::<G>::new(&ck.net, self.device, LEAVES_PER_BATCH as usize);
                tree.search(&mut ev, visits.max(1), false, &mut rng)
            }
            None => tree.search(&mut UniformEvaluator, visits.max(1), false, &mut rng),
        }
        .map_err(|e| anyhow!("search: {e}"))?;
        Ok((tree, res))
    }

    /// The line the MCTS search of `pos` expects after each of `moves` (root
    /// moves): the move, then the principal variation of its subtree. The
    /// search is repeated for each move (it is deterministic, see
    /// [`Engine::think`]) and its tree advanced to the move, so this costs one
    /// search per move. (Children tied on visits, prior and value are ordered
    /// by the tie rank of the advanced root, so such ties can break otherwise
    /// than in [`Thought::pv`].)
    ///
    /// # Errors
    /// Not the MCTS engine, or a failed network evaluation.
    pub fn move_lines(&self, pos: &G, moves: &[Move], max_len: usize) -> Result<Vec<Vec<Move>>> {
        let mut lines = Vec::with_capacity(moves.len());
        for &mv in moves {
            let (mut tree, _) = self.mcts(pos)?;
            tree.advance(mv);
            let mut line = vec![mv];
            line.extend(tree.principal_variation(max_len.saturating_sub(1)));
            lines.push(line);
        }
        Ok(lines)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use martian_rules::martian::{MartianChess, MartianRules};

    #[test]
    fn scores_in_protocol_units() {
        assert_eq!(score_text(125), "cp 125");
        assert_eq!(score_text(-7), "cp -7");
        assert_eq!(score_text(MATE - 3), "win 3");
        assert_eq!(score_text(-(MATE - 2)), "loss 2");
        assert_eq!(value_text(0.25), "0.2500");
        assert_eq!(value_text(-0.0), "0.0000");
        assert_eq!(Eval::Score(40).to_string(), "score cp 40");
        assert_eq!(Eval::Value(-0.5).to_string(), "value -0.5000");
    }

    #[test]
    fn mcts_thought_lists_root_moves_by_visits() {
        let pos = MartianChess::new_game(&MartianRules::default()).expect("start");
        let mut e = Engine::<MartianChess>::new(EngineKind::Mcts { visits: 64 }, None, Device::Cpu).unwrap();
        let t = e.think(&pos, |_| {}).expect("search");
        let total: u32 = t.root_moves.iter().map(|m| m.visits).sum();
        assert_eq!(total, 64);
        assert!(t.root_moves.windows(2).all(|w| w[0].visits >= w[1].visits));
        assert_eq!(t.root_moves[0].mv, t.best);
        assert_eq!(t.pv.first(), Some(&t.best));
        assert!(matches!(t.eval, Some(Eval::Value(v)) if (-1.0..=1.0).contains(&v)));
        // Each line starts with its move and follows visited nodes (uniform
        // priors tie everywhere, so later plies may break ties differently
        // from the principal variation).
        let moves: Vec<Move> = t.root_moves.iter().take(3).map(|m| m.mv).collect();
        let lines = e.move_lines(&pos, &moves, 64).expect("lines");
        for (l, m) in lines.iter().zip(&moves) {
            assert_eq!(l.first(), Some(m));
            assert!(l.len() > 1, "a move with 1/10 of 64 visits has a reply: {l:?}");
        }
    }

    #[test]
    fn alphabeta_thought_has_score_and_pv() {
        let pos = MartianChess::new_game(&MartianRules::default()).expect("start");
        let kind = EngineKind::AlphaBeta { limits: Limits::depth(2), tt_mib: 1 };
        let mut e = Engine::<MartianChess>::new(kind, None, Device::Cpu).unwrap();
        let mut iterations = 0;
        let t = e.think(&pos, |_| iterations += 1).expect("search");
        assert_eq!(iterations, 2);
        assert!(matches!(t.eval, Some(Eval::Score(_))));
        assert_eq!(t.pv.first(), Some(&t.best));
        assert!(t.effort.starts_with("depth 2"), "{}", t.effort);
    }
}
