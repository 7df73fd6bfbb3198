//! The evaluator interface: what MCTS asks of a policy/value network.
//!
//! Batch-first (as lc0's backend and KataGo's NN interface): the search hands a
//! batch of positions and gets back, per position, priors over the legal moves
//! and a value. The network-backed evaluator lives in the `martian-model` crate;
//! this crate ships [`UniformEvaluator`] (no network) for tests and benchmarks.

use martian_rules::{GameState, Move};
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
    /// Expected result in `[-1, 1]` for the side to move (+1 = win).
    pub value: f32,
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
        }
        Ok(())
    }
}
