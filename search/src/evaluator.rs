//! The evaluator interface: what MCTS asks of a policy/value network.
//!
//! Batch-first (as lc0's backend and KataGo's NN interface): the search hands a
//! batch of positions and gets back, per position, priors over the legal moves
//! and a value. The network-backed evaluator lives in the `martian-model` crate;
//! this crate ships [`UniformEvaluator`] (no network) for tests and benchmarks.

use martian_rules::{GameState, Move, MAX_PLAYERS};
use thiserror::Error;

/// Error from an evaluator (e.g. a failed forward pass).
#[derive(Debug, Error)]
#[error("evaluation failed: {0}")]
pub struct EvalError(pub String);

/// Evaluation of one position, from the point of view of its side to move.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Evaluation {
    /// Prior per legal move, in the order of the `moves` slice given to the
    /// evaluator; non-negative, sums to 1.
    pub priors: Vec<f32>,
    /// Expected result in `[-1, 1]` for the side to move (+1 = win): win
    /// minus loss probability of a (win, draw, loss) value head.
    pub value: f32,
    /// Probability of a draw in `[0, 1]` from a (win, draw, loss) value head
    /// (the middle of its softmax); 0 when the evaluator has none (the
    /// uniform evaluator, a vector value head). The search values a leaf at
    /// `value + u * draw` for the side to move's draw utility `u`
    /// ([`MctsConfig::contempt`](crate::MctsConfig::contempt)), so a position
    /// the network rates drawish looks worse to the side that does not want a
    /// draw (lc0's WDL contempt).
    pub draw: f32,
    /// Games with more than two value players (`GameState::num_players`,
    /// four-player free-for-all): the expected result of every player in
    /// `[-1, 1]`, in mover-relative order: `values[k]` is player
    /// `(player_to_move + k) % num_players`'s, so `values[0]` is the mover's
    /// and equals `value`. Empty for two-player evaluations; an empty vector
    /// in a game of more players is read as the zero-sum completion of
    /// `value` (the mover `value`, every other player `-value / (n - 1)`).
    pub values: Vec<f32>,
    /// The expected final point difference for the side to move, in the
    /// game's points (its points minus the opponent's, as
    /// `GameState::final_score_difference` counts them): the output of a
    /// network's auxiliary score head (KataGo's score mean, Wu,
    /// "Accelerating Self-Play Learning in Go", arXiv:1902.10565, §4.2),
    /// scaled back to points. `None` when the evaluator has none (no score
    /// head, a game without points, the uniform evaluator). The search
    /// reports it as the score lead ([`crate::SearchResult::root_score`])
    /// and, with [`MctsConfig::static_score_utility`](crate::MctsConfig::static_score_utility)
    /// or [`MctsConfig::dynamic_score_utility`](crate::MctsConfig::dynamic_score_utility),
    /// adds its score utility to the leaf's value. A plain `Option<f32>`:
    /// nothing is allocated for it.
    pub score: Option<f32>,
}

impl Evaluation {
    /// The per-player values of this evaluation for a game of `n > 2` value
    /// players whose mover is player `mover`, indexed by player (absolute,
    /// not mover-relative; entries from `n` on are 0): [`Evaluation::values`]
    /// rotated, or the zero-sum completion of [`Evaluation::value`] when
    /// `values` does not hold `n` entries. Each entry is clamped to `[-1, 1]`.
    pub fn player_values(&self, mover: usize, n: usize) -> [f32; MAX_PLAYERS] {
        let mut out = [0.0; MAX_PLAYERS];
        let n = n.clamp(1, MAX_PLAYERS);
        if self.values.len() == n {
            for (k, &v) in self.values.iter().enumerate() {
                out[(mover + k) % n] = v.clamp(-1.0, 1.0);
            }
        } else {
            let v = self.value.clamp(-1.0, 1.0);
            let other = if n > 1 { -v / (n - 1) as f32 } else { 0.0 };
            for (p, x) in out.iter_mut().enumerate().take(n) {
                *x = if p == mover % n { v } else { other };
            }
        }
        out
    }
}

/// A batched position evaluator.
///
/// `evaluate` takes `&mut self`: network evaluators own tensors, which are not
/// `Sync`; the self-play driver calls it from one thread per batch.
pub trait Evaluator<G: GameState> {
    /// Evaluates `positions[i]` whose legal moves are `moves[i]`; writes one
    /// [`Evaluation`] per position into `out` (cleared first), reusing its
    /// allocations.
    ///
    /// # Errors
    /// [`EvalError`] when the backend fails; the search stops with that error.
    fn evaluate(&mut self, positions: &[&G], moves: &[&[Move]], out: &mut Vec<Evaluation>) -> Result<(), EvalError>;

    /// Largest batch the evaluator accepts in one call (`usize::MAX` if unlimited).
    fn max_batch(&self) -> usize {
        usize::MAX
    }
}

/// Equal priors over the legal moves and value 0: search without a network.
#[derive(Clone, Copy, Debug, Default)]
pub struct UniformEvaluator;

impl<G: GameState> Evaluator<G> for UniformEvaluator {
    fn evaluate(&mut self, positions: &[&G], moves: &[&[Move]], out: &mut Vec<Evaluation>) -> Result<(), EvalError> {
        out.resize_with(positions.len(), Evaluation::default);
        for (e, m) in out.iter_mut().zip(moves) {
            let p = if m.is_empty() { 0.0 } else { 1.0 / m.len() as f32 };
            e.priors.clear();
            e.priors.resize(m.len(), p);
            e.value = 0.0;
            e.draw = 0.0;
            e.values.clear();
            e.score = None;
        }
        Ok(())
    }
}

/// A hand-written evaluator from the game's alpha-beta evaluation `e`
/// ([`crate::AbGame::Eval`], in its own units: Jetan's are hundredths of a
/// Padwar's worth, Martian Chess's hundredths of a point): the value
/// `tanh(e / scale)` for the side to move, draw probability 0, and equal
/// priors, or with a policy temperature `t` the priors
/// `softmax(u_k / t)` over the legal moves, `u_k` the mover's evaluation
/// after move `k` (a finished game: ±10,000 for a win or loss, 0 for a
/// draw). A search with a hand-made value (and policy) and no network: the
/// `mcts:static=SCALE[,static_policy=T]` player, to measure what MCTS does
/// when its value knows material and its priors know one-ply tactics
/// (`docs/experiments/2026-12-05-jetan-static-evaluation.md`), and as a baseline. The policy clones the position
/// once per legal move: a diagnostic player, not a self-play evaluator.
#[derive(Clone, Debug)]
pub struct StaticValueEvaluator<G: crate::AbGame> {
    eval: G::Eval,
    scale: f32,
    policy_temperature: Option<f32>,
}

/// A finished game's worth in [`StaticValueEvaluator`]'s policy, in
/// evaluation units (more than any material count).
const STATIC_DECIDED: f32 = 10_000.0;

impl<G: crate::AbGame> StaticValueEvaluator<G> {
    /// The game's default evaluation, values `tanh(e / scale)`, priors
    /// equal or (`policy_temperature`) a softmax of the one-ply evaluations.
    ///
    /// # Errors
    /// A `scale` or temperature that is not a finite positive number.
    pub fn new(scale: f32, policy_temperature: Option<f32>) -> Result<Self, EvalError> {
        if !(scale.is_finite() && scale > 0.0) {
            return Err(EvalError(format!("static value scale must be a positive number, got {scale}")));
        }
        if let Some(t) = policy_temperature.filter(|t| !(t.is_finite() && *t > 0.0)) {
            return Err(EvalError(format!("static policy temperature must be a positive number, got {t}")));
        }
        Ok(StaticValueEvaluator { eval: G::Eval::default(), scale, policy_temperature })
    }
}

impl<G: crate::AbGame> Evaluator<G> for StaticValueEvaluator<G> {
    fn evaluate(&mut self, positions: &[&G], moves: &[&[Move]], out: &mut Vec<Evaluation>) -> Result<(), EvalError> {
        use crate::StaticEval;
        UniformEvaluator.evaluate(positions, moves, out)?;
        for ((e, &p), ms) in out.iter_mut().zip(positions).zip(moves) {
            e.value = (self.eval.evaluate(p) as f32 / self.scale).tanh();
            let Some(t) = self.policy_temperature else { continue };
            let mover = p.side_to_move();
            let mut top = f32::MIN;
            for (prior, &m) in e.priors.iter_mut().zip(ms.iter()) {
                let mut child = p.clone();
                child.play_unchecked(m);
                let u = match child.outcome() {
                    Some(o) => STATIC_DECIDED * o.value_for(mover),
                    None => -(self.eval.evaluate(&child) as f32),
                };
                *prior = u / t;
                top = top.max(*prior);
            }
            let mut sum = 0.0;
            for x in e.priors.iter_mut() {
                *x = (*x - top).exp();
                sum += *x;
            }
            for x in e.priors.iter_mut() {
                *x /= sum;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The zero-sum completion and the rotation of [`Evaluation::player_values`].
    #[test]
    fn evaluation_player_values_rotate_and_complete() {
        let e = Evaluation { priors: vec![], value: 0.3, draw: 0.0, values: vec![0.3, -0.1, 0.0, -0.2], score: None };
        assert_eq!(e.player_values(2, 4), [0.0, -0.2, 0.3, -0.1]);
        let e = Evaluation { priors: vec![], value: 0.6, draw: 0.0, values: vec![], score: None };
        let p = e.player_values(1, 4);
        assert_eq!(p[1], 0.6);
        assert!((p[0] + 0.2).abs() < 1e-6 && (p[2] + 0.2).abs() < 1e-6 && (p[3] + 0.2).abs() < 1e-6);
    }
}
