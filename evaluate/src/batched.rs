//! Matches between two MCTS players with batched evaluation: many games in
//! flight, each player's leaves from all games evaluated in one call (the
//! same lockstep scheme as self-play, see `selfplay/src/driver.rs`). Gives the
//! same kind of [`MatchResult`] as [`crate::play_match_book`], many times faster
//! with a network on a CPU or GPU, since single-game MCTS makes batches of a
//! few positions only.

use martian_rules::{GameState, Move};
use martian_search::{EvalError, Evaluation, Evaluator, Mcts, MctsConfig};
use rand::rngs::StdRng;
use rand::SeedableRng;
use rayon::prelude::*;

use crate::arena::{game_result, seatings};
use crate::result::{summarize_games, GameResult, MatchResult};

/// One MCTS player of a batched match.
pub struct MctsSide<'e, E> {
    /// Name for reports.
    pub name: String,
    /// Its evaluator.
    pub evaluator: &'e mut E,
    /// Simulations per move (no noise; the most visited move is played).
    pub simulations: u32,
}

struct Slot<G: GameState> {
    state: G,
    trees: [Mcts<G>; 2],
    /// The value player A plays (`GameState::player_to_move`).
    a_player: usize,
    pair: u32,
    moves: Vec<String>,
    searching: bool,
    target: u32,
    rng: StdRng,
    done: bool,
}

impl<G: GameState> Slot<G> {
    /// Index of the tree of the player to move: 0 = A, 1 = B.
    fn mover(&self) -> usize {
        usize::from(self.state.player_to_move() != self.a_player)
    }

    fn step(&mut self, sims: [u32; 2], per_batch: usize) {
        loop {
            if self.state.outcome().is_some() {
                self.done = true;
                return;
            }
            let who = self.mover();
            let tree = &mut self.trees[who];
            if !self.searching {
                tree.reset(self.state.clone());
                tree.begin_search(false, sims[who], &mut self.rng);
                self.target = sims[who];
                self.searching = true;
            }
            let done = tree.child_visits();
            if done >= self.target && tree.root().kind == martian_search::mcts::NodeKind::Expanded {
                let m: Move = match tree.result().best_move() {
                    Some(m) => m,
                    None => {
                        let mut v = Vec::new();
                        self.state.legal_moves(&mut v);
                        v[0]
                    }
                };
                self.moves.push(self.state.move_to_string(m));
                self.state.play_unchecked(m);
                self.searching = false;
                continue;
            }
            tree.gather(per_batch.min((self.target - done).max(1) as usize), &mut self.rng);
            if tree.num_pending() > 0 {
                return;
            }
        }
    }
}

/// Plays `pairs` game pairs between two MCTS players, pair `p` from opening
/// `book[p % len]` (initial position if empty), A on North then South
/// (free-for-all: A in every seat against copies of B, [`crate::seatings`]),
/// with up to `in_flight` games at once.
///
/// # Errors
/// An evaluator's error.
#[allow(clippy::too_many_arguments)]
pub fn play_match_mcts<G, EA, EB>(
    start: &G,
    a: MctsSide<'_, EA>,
    b: MctsSide<'_, EB>,
    cfg: &MctsConfig,
    book: &[Vec<Move>],
    pairs: u32,
    in_flight: usize,
    mut on_game: impl FnMut(&GameResult),
) -> Result<MatchResult, EvalError>
where
    G: GameState,
    EA: Evaluator<G>,
    EB: Evaluator<G>,
{
    let sims = [a.simulations.max(1), b.simulations.max(1)];
    let per_batch = cfg.leaves_per_batch.max(1) as usize;
    let players = start.num_players();
    let jobs: Vec<(u32, usize)> = (0..pairs).flat_map(|p| seatings(players).into_iter().map(move |s| (p, s))).collect();
    let mut next = 0usize;
    let new_slot = |job: (u32, usize)| -> Slot<G> {
        let mut state = start.clone();
        let mut moves = Vec::new();
        if !book.is_empty() {
            for &m in &book[job.0 as usize % book.len()] {
                moves.push(state.move_to_string(m));
                state.play_unchecked(m);
            }
        }
        Slot {
            trees: [Mcts::new(cfg.clone(), state.clone()), Mcts::new(cfg.clone(), state.clone())],
            state,
            a_player: job.1,
            pair: job.0,
            moves,
            searching: false,
            target: 0,
            rng: StdRng::seed_from_u64(job.0 as u64 * players.max(2) as u64 + job.1 as u64),
            done: false,
        }
    };
    let mut slots: Vec<Slot<G>> = Vec::new();
    while slots.len() < in_flight.max(1) && next < jobs.len() {
        slots.push(new_slot(jobs[next]));
        next += 1;
    }
    let mut games: Vec<GameResult> = Vec::new();
    let (ea, eb) = (a.evaluator, b.evaluator);
    let mut out_a: Vec<Evaluation> = Vec::new();
    let mut out_b: Vec<Evaluation> = Vec::new();
    while !slots.is_empty() {
        slots.par_iter_mut().for_each(|s| s.step(sims, per_batch));
        let mut i = 0;
        while i < slots.len() {
            if slots[i].done {
                let s = slots.swap_remove(i);
                let g = game_result(&s.state, s.a_player, s.pair, s.moves);
                on_game(&g);
                games.push(g);
                if next < jobs.len() {
                    let mut ns = new_slot(jobs[next]);
                    next += 1;
                    ns.step(sims, per_batch);
                    slots.push(ns);
                }
            } else {
                i += 1;
            }
        }
        for (who, ev, out) in [(0usize, &mut *ea as &mut dyn EvalFn<G>, &mut out_a), (1, &mut *eb, &mut out_b)] {
            let mut pos: Vec<&G> = Vec::new();
            let mut mv: Vec<&[Move]> = Vec::new();
            for s in slots.iter().filter(|s| !s.done && s.mover() == who) {
                for (p, m) in s.trees[who].pending_leaves() {
                    pos.push(p);
                    mv.push(m);
                }
            }
            if !pos.is_empty() {
                ev.eval(&pos, &mv, out)?;
            }
        }
        let (oa, ob) = (&out_a, &out_b);
        let mut offs = [0usize; 2];
        let chunks: Vec<(usize, std::ops::Range<usize>)> = slots
            .iter()
            .map(|s| {
                let who = s.mover();
                let n = if s.done { 0 } else { s.trees[who].num_pending() };
                let r = offs[who]..offs[who] + n;
                offs[who] += n;
                (who, r)
            })
            .collect();
        slots.par_iter_mut().zip(chunks.into_par_iter()).for_each(|(s, (who, r))| {
            if !r.is_empty() {
                let evals = if who == 0 { &oa[r] } else { &ob[r] };
                let Slot { trees, rng, .. } = s;
                trees[who].apply_evaluations(evals, rng);
            }
        });
    }
    Ok(summarize_games(a.name, b.name, games))
}

/// Object-safe view of an evaluator, so both players' evaluators fit one loop.
trait EvalFn<G: GameState> {
    fn eval(&mut self, p: &[&G], m: &[&[Move]], out: &mut Vec<Evaluation>) -> Result<(), EvalError>;
}

impl<G: GameState, E: Evaluator<G>> EvalFn<G> for E {
    fn eval(&mut self, p: &[&G], m: &[&[Move]], out: &mut Vec<Evaluation>) -> Result<(), EvalError> {
        self.evaluate(p, m, out)
    }
}
