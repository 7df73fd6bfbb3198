//! The [`Player`] interface (the shape of OpenSpiel's `Bot`) and the simple players.

use martian_rules::{GameState, Move};
use martian_search::{
    AbGame, AlphaBeta, AlphaBetaConfig, EvalError, Evaluator, Limits, Mcts, MctsConfig, Veto, VetoOutcome,
};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use thiserror::Error;

/// A player failed to produce a move.
#[derive(Debug, Error)]
pub enum PlayerError {
    /// Its evaluator failed.
    #[error(transparent)]
    Eval(#[from] EvalError),
    /// It was asked to move in a finished game.
    #[error("no legal move: the game is over")]
    NoMove,
    /// A setting the game does not support (the message names it).
    #[error("{0}")]
    Unsupported(String),
}

/// Anything that picks moves: MCTS with a network, a baseline, a person.
pub trait Player<G: GameState> {
    /// Name used in reports, e.g. `mcts:model=gen3.safetensors,visits=64` or `random`.
    fn name(&self) -> String;
    /// Called before each game.
    fn new_game(&mut self, _start: &G) {}
    /// The move to play in `state` (the side to move is this player).
    ///
    /// # Errors
    /// [`PlayerError`] when no move can be chosen.
    fn choose_move(&mut self, state: &G) -> Result<Move, PlayerError>;
}

/// Plays uniformly random legal moves.
pub struct RandomPlayer {
    rng: StdRng,
    moves: Vec<Move>,
}

impl RandomPlayer {
    /// A random player with a fixed seed.
    pub fn new(seed: u64) -> Self {
        RandomPlayer { rng: StdRng::seed_from_u64(seed), moves: Vec::new() }
    }
}

impl<G: GameState> Player<G> for RandomPlayer {
    fn name(&self) -> String {
        "random".into()
    }
    fn choose_move(&mut self, state: &G) -> Result<Move, PlayerError> {
        state.legal_moves(&mut self.moves);
        self.moves.choose(&mut self.rng).copied().ok_or(PlayerError::NoMove)
    }
}

/// One-ply greedy player: plays a move that wins at once if there is one;
/// otherwise a random move after which the opponent has no winning reply;
/// otherwise any random move.
pub struct GreedyPlayer {
    rng: StdRng,
    moves: Vec<Move>,
    replies: Vec<Move>,
}

impl GreedyPlayer {
    /// A greedy player with a fixed seed (for its random choices).
    pub fn new(seed: u64) -> Self {
        GreedyPlayer { rng: StdRng::seed_from_u64(seed), moves: Vec::new(), replies: Vec::new() }
    }
}

fn wins_now<G: GameState>(state: &G, mv: Move, side: martian_rules::Side) -> Option<f32> {
    let mut s = state.clone();
    s.play_unchecked(mv);
    s.outcome().map(|o| o.value_for(side))
}

impl<G: GameState> Player<G> for GreedyPlayer {
    fn name(&self) -> String {
        "greedy".into()
    }
    fn choose_move(&mut self, state: &G) -> Result<Move, PlayerError> {
        let me = state.side_to_move();
        state.legal_moves(&mut self.moves);
        if self.moves.is_empty() {
            return Err(PlayerError::NoMove);
        }
        if let Some(&m) = self.moves.iter().find(|&&m| wins_now(state, m, me) == Some(1.0)) {
            return Ok(m);
        }
        let mut safe = Vec::new();
        for &m in &self.moves {
            let mut s = state.clone();
            s.play_unchecked(m);
            if let Some(o) = s.outcome() {
                if o.value_for(me) >= 0.0 {
                    safe.push(m);
                }
                continue;
            }
            s.legal_moves(&mut self.replies);
            let opp = s.side_to_move();
            if !self.replies.iter().any(|&r| wins_now(&s, r, opp) == Some(1.0)) {
                safe.push(m);
            }
        }
        let pool = if safe.is_empty() { &self.moves } else { &safe };
        pool.choose(&mut self.rng).copied().ok_or(PlayerError::NoMove)
    }
}

/// MCTS with a fixed number of simulations per move, no noise, most-visited move.
pub struct MctsPlayer<G: GameState, E> {
    name: String,
    evaluator: E,
    cfg: MctsConfig,
    simulations: u32,
    movetime: Option<std::time::Duration>,
    /// Move-choice temperature ([`MctsPlayer::with_temperature`]).
    temperature: f32,
    tree: Option<Mcts<G>>,
    /// The move this player last chose (from the tree's root), for tree reuse.
    last_move: Option<Move>,
    rng: StdRng,
    /// The play-time tactical check ([`MctsPlayer::with_veto`]).
    veto: Option<Box<dyn MoveCheck<G>>>,
    /// Moves the check replaced so far.
    vetoes: u64,
}

/// The play-time check of [`MctsPlayer`], behind a trait so that the player
/// itself needs no [`AbGame`] bound.
trait MoveCheck<G> {
    fn check(&mut self, root: &G, chosen: Move, ranked: &[(Move, Option<f32>)]) -> VetoOutcome;
}

impl<G: AbGame> MoveCheck<G> for Veto<G> {
    fn check(&mut self, root: &G, chosen: Move, ranked: &[(Move, Option<f32>)]) -> VetoOutcome {
        Veto::check(self, root, chosen, ranked)
    }
}

impl<G: AbGame, E: Evaluator<G>> MctsPlayer<G, E> {
    /// Checks each chosen move with the play-time tactical check
    /// ([`martian_search::Veto`], `veto_depth=D` of a player spec): a move an
    /// alpha-beta search `depth` plies deep after it proves lost is replaced
    /// by the most visited move that is not a proven loss, when there is one
    /// (after the temperature's draw, if any). 0 = no check (the default).
    /// For matches only: self-play's players never check.
    ///
    /// # Errors
    /// A depth above [`martian_search::VETO_MAX_DEPTH`].
    pub fn with_veto(mut self, depth: u32) -> Result<Self, String> {
        martian_search::check_veto_depth(depth)?;
        self.veto = match depth {
            0 => None,
            d => Some(Box::new(Veto::<G>::new(d)?)),
        };
        Ok(self)
    }
}

impl<G: GameState, E: Evaluator<G>> MctsPlayer<G, E> {
    /// With [`MctsConfig::play_tree_reuse`]: moves the tree's root along this
    /// player's last move and the opponent's reply to `state`, keeping the
    /// subtree; `false` (and nothing changed) when `state` is not reached that
    /// way (a new game, or a position set from outside).
    fn reuse_tree(tree: &mut Mcts<G>, last: Option<Move>, state: &G) -> bool {
        let Some(mine) = last else { return false };
        if tree.num_pending() > 0 || !tree.root_children().iter().any(|c| c.mv == mine) {
            return false;
        }
        let mut after = tree.root_state().clone();
        after.play_unchecked(mine);
        let mut replies = Vec::new();
        after.legal_moves(&mut replies);
        let reply = replies.into_iter().find(|&r| {
            let mut s = after.clone();
            s.play_unchecked(r);
            s.hash() == state.hash() && s.to_position() == state.to_position()
        });
        let Some(reply) = reply else { return false };
        tree.advance(mine);
        tree.advance(reply);
        true
    }

    /// Limits each move also by wall time: the search runs in batches of
    /// `leaves_per_batch` simulations and stops at the first batch boundary
    /// after `movetime` (or at `simulations`, whichever comes first; at least
    /// one batch). For matches at equal time per move against
    /// `alphabeta:movetime=MS` (the equal-time matches of `docs/evaluation.md`).
    pub fn with_movetime(mut self, movetime: std::time::Duration) -> Self {
        self.movetime = Some(movetime);
        self
    }

    /// Plays moves drawn at move-choice temperature `t` (a strength level,
    /// [`martian_search::SearchResult::sample_move`]) from the player's seeded
    /// generator; 0 (the default) plays the best move.
    pub fn with_temperature(mut self, t: f32) -> Self {
        self.temperature = t;
        self
    }

    /// An MCTS player named `name` using `evaluator`.
    pub fn new(name: String, evaluator: E, cfg: MctsConfig, simulations: u32, seed: u64) -> Self {
        MctsPlayer {
            name,
            evaluator,
            cfg,
            simulations: simulations.max(1),
            movetime: None,
            temperature: 0.0,
            tree: None,
            last_move: None,
            rng: StdRng::seed_from_u64(seed),
            veto: None,
            vetoes: 0,
        }
    }

    /// Moves the play-time check ([`MctsPlayer::with_veto`]) replaced so far.
    pub fn vetoes(&self) -> u64 {
        self.vetoes
    }

    /// The evaluator (e.g. to read its counters).
    pub fn evaluator(&self) -> &E {
        &self.evaluator
    }
}

impl<G: GameState, E: Evaluator<G>> Player<G> for MctsPlayer<G, E> {
    fn name(&self) -> String {
        self.name.clone()
    }
    fn choose_move(&mut self, state: &G) -> Result<Move, PlayerError> {
        if state.outcome().is_some() {
            return Err(PlayerError::NoMove);
        }
        let reuse = self.cfg.play_tree_reuse;
        let last = self.last_move.take();
        let tree = match &mut self.tree {
            Some(t) => {
                if !(reuse && Self::reuse_tree(t, last, state)) {
                    t.reset(state.clone());
                }
                t
            }
            None => self.tree.insert(Mcts::new(self.cfg.clone(), state.clone())),
        };
        // With reuse, the limit counts the reused visits (KataGo's visits):
        // only the playouts still missing are searched (at least one).
        let new = if reuse { self.simulations.saturating_sub(tree.child_visits()).max(1) } else { self.simulations };
        let res = match self.movetime {
            None => tree.search(&mut self.evaluator, new, false, &mut self.rng)?,
            Some(limit) => {
                let t0 = std::time::Instant::now();
                let chunk = self.cfg.leaves_per_batch.max(1);
                tree.begin_search(false, new, &mut self.rng);
                let cap = tree.child_visits() + new;
                let mut res = tree.search_more(&mut self.evaluator, chunk.min(new), &mut self.rng)?;
                while t0.elapsed() < limit && tree.child_visits() < cap {
                    let before = tree.child_visits();
                    let n = chunk.min(cap - before);
                    res = tree.search_more(&mut self.evaluator, n, &mut self.rng)?;
                    if tree.child_visits() == before {
                        break; // nothing left to search (every line proven)
                    }
                }
                res
            }
        };
        let mut mv = res.sample_move(self.temperature, &mut self.rng).ok_or(PlayerError::NoMove)?;
        if let Some(veto) = &mut self.veto {
            if state.num_players() != 2 {
                return Err(PlayerError::Unsupported(format!(
                    "player {}: veto_depth needs a two-player game; this one has {} value players",
                    self.name,
                    state.num_players()
                )));
            }
            let check = veto.check(state, mv, &res.ranked());
            if check.vetoed.is_some() {
                self.vetoes += 1;
                mv = check.played;
            }
        }
        self.last_move = Some(mv);
        Ok(mv)
    }
}

/// The alpha-beta baseline ([`martian_search::AlphaBeta`]) as a player: one
/// engine per player, reset at each new game (so every game is reproducible),
/// searching each move within fixed [`Limits`].
pub struct AlphaBetaPlayer<G: AbGame> {
    name: String,
    engine: AlphaBeta<G>,
    limits: Limits,
}

impl<G: AbGame> AlphaBetaPlayer<G> {
    /// A player with engine settings `cfg` and per-move `limits`, named after
    /// the limits (`alphabeta:depth=3`, `alphabeta:movetime=100`, `alphabeta:nodes=N`).
    ///
    /// # Panics
    /// If the transposition table cannot be allocated ([`AlphaBetaPlayer::try_with_eval`] does not).
    pub fn new(cfg: AlphaBetaConfig, limits: Limits) -> Self {
        Self::try_with_eval(cfg, limits, G::Eval::default()).unwrap_or_else(|e| panic!("{e}"))
    }

    /// A player with a custom evaluation (e.g. Jetan's seed-000 values).
    ///
    /// # Panics
    /// As [`AlphaBetaPlayer::new`].
    pub fn with_eval(cfg: AlphaBetaConfig, limits: Limits, eval: G::Eval) -> Self {
        Self::try_with_eval(cfg, limits, eval).unwrap_or_else(|e| panic!("{e}"))
    }

    /// [`AlphaBetaPlayer::with_eval`], or an error when the transposition
    /// table of `cfg.tt_mib` MiB cannot be allocated (a size a user gave).
    ///
    /// # Errors
    /// `martian_search`'s `TranspositionTable::try_new` message.
    pub fn try_with_eval(cfg: AlphaBetaConfig, limits: Limits, eval: G::Eval) -> Result<Self, String> {
        let mut parts = Vec::new();
        if let Some(d) = limits.depth {
            parts.push(format!("depth={d}"));
        }
        if let Some(t) = limits.movetime {
            parts.push(format!("movetime={}", t.as_millis()));
        }
        if let Some(n) = limits.nodes {
            parts.push(format!("nodes={n}"));
        }
        let name = format!("alphabeta:{}", parts.join(","));
        Ok(AlphaBetaPlayer { name, engine: AlphaBeta::try_with_eval(cfg, eval)?, limits })
    }

    /// Renames the player (for reports).
    pub fn with_name(mut self, name: String) -> Self {
        self.name = name;
        self
    }
}

impl<G: AbGame> Player<G> for AlphaBetaPlayer<G> {
    fn name(&self) -> String {
        self.name.clone()
    }
    fn new_game(&mut self, _start: &G) {
        self.engine.reset();
    }
    fn choose_move(&mut self, state: &G) -> Result<Move, PlayerError> {
        self.engine.search(state, &self.limits).best_move.ok_or(PlayerError::NoMove)
    }
}

#[cfg(test)]
mod movetime_tests {
    use super::*;
    use martian_rules::martian::{MartianChess, MartianRules};
    use martian_search::UniformEvaluator;
    use std::time::{Duration, Instant};

    /// An MCTS player with a movetime searches until the time is up (not one
    /// batch, not its visit cap) and stops soon after.
    #[test]
    fn movetime_limits_an_mcts_move_by_wall_time() {
        let start = MartianChess::new_game(&MartianRules::default()).unwrap();
        let cfg = MctsConfig { leaves_per_batch: 4, ..MctsConfig::default() };
        let mut p = MctsPlayer::new("t".into(), UniformEvaluator, cfg.clone(), u32::MAX, 1)
            .with_movetime(Duration::from_millis(40));
        let t0 = Instant::now();
        let mv = p.choose_move(&start).unwrap();
        let took = t0.elapsed();
        let visits = p.tree.as_ref().unwrap().child_visits();
        assert!(took >= Duration::from_millis(40), "stopped early: {took:?}");
        assert!(took < Duration::from_millis(40 + 500), "overran: {took:?}");
        assert!(visits > 100, "searched only {visits} visits in {took:?}");
        let mut legal = Vec::new();
        start.legal_moves(&mut legal);
        assert!(legal.contains(&mv));
        // With a visit cap below what the time allows, the cap ends the move.
        let mut q = MctsPlayer::new("t".into(), UniformEvaluator, cfg, 8, 1).with_movetime(Duration::from_secs(60));
        let t0 = Instant::now();
        q.choose_move(&start).unwrap();
        assert!(t0.elapsed() < Duration::from_secs(5));
        assert_eq!(q.tree.as_ref().unwrap().child_visits(), 8);
    }

    /// Counts the positions it evaluates (uniform priors, value 0).
    struct Counting(u64);
    impl<G: GameState> Evaluator<G> for Counting {
        fn evaluate(
            &mut self,
            states: &[&G],
            moves: &[&[Move]],
            out: &mut Vec<martian_search::Evaluation>,
        ) -> Result<(), EvalError> {
            self.0 += states.len() as u64;
            UniformEvaluator.evaluate(states, moves, out)
        }
    }

    /// With `play_tree_reuse`, the subtree after the player's move and the
    /// reply is kept and its visits count towards the limit: the next move
    /// evaluates fewer new positions and still ends with the limit's visits.
    /// A position not reached that way starts a fresh tree.
    #[test]
    fn tree_reuse_keeps_the_subtree_and_counts_its_visits() {
        let start = MartianChess::new_game(&MartianRules::default()).unwrap();
        let on = MctsConfig { leaves_per_batch: 4, play_tree_reuse: true, ..MctsConfig::default() };
        let off = MctsConfig { play_tree_reuse: false, ..on.clone() };
        let mut p = MctsPlayer::new("t".into(), Counting(0), on, 400, 1);
        let mine = p.choose_move(&start).unwrap();
        // The reply the player's own tree searched most (its principal
        // variation): its subtree is kept.
        let pv = p.tree.as_ref().unwrap().principal_variation(2);
        assert_eq!(pv.len(), 2);
        assert_eq!(pv[0], mine);
        let reply = pv[1];
        let mut s = start;
        s.play_unchecked(mine);
        s.play_unchecked(reply);
        let before = p.evaluator().0;
        p.choose_move(&s).unwrap();
        let used_with_reuse = p.evaluator().0 - before;
        let tree = p.tree.as_ref().unwrap();
        assert_eq!(tree.root_state().to_position(), s.to_position());
        assert_eq!(tree.child_visits(), 400, "the limit counts reused visits");
        // Without reuse the same move evaluates a full search's positions.
        let mut q = MctsPlayer::new("t".into(), Counting(0), off, 400, 1);
        q.choose_move(&start).unwrap();
        let before = q.evaluator().0;
        q.choose_move(&s).unwrap();
        let used_without = q.evaluator().0 - before;
        assert!(used_with_reuse < used_without, "reuse evaluated {used_with_reuse}, a fresh search {used_without}");
        // A position that is not the reply to the last move: a fresh tree.
        let other = MartianChess::new_game(&MartianRules::default()).unwrap();
        p.choose_move(&other).unwrap();
        assert_eq!(p.tree.as_ref().unwrap().root_state().to_position(), other.to_position());
        assert_eq!(p.tree.as_ref().unwrap().child_visits(), 400);
    }
}
