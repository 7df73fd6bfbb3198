//! PUCT Monte-Carlo tree search (AlphaZero), driven one batch at a time so that
//! a caller can evaluate the leaves of many trees in one network call.
//!
//! # Driving a search
//!
//! ```text
//! tree.begin_search(noise, sims, rng)    // once per move
//! loop {
//!     tree.gather(k, rng)                // select up to k leaves (virtual loss)
//!     evaluate tree.pending_leaves()     // one batch, possibly shared by many trees
//!     tree.apply_evaluations(&evals)     // expand + back up
//! }
//! tree.result() / tree.choose_move(..) / tree.advance(mv)
//! ```
//!
//! [`Mcts::search`] wraps that loop for a single tree and evaluator.
//!
//! # Perspective
//! * An evaluator's value is for the side to move in the evaluated position.
//! * [`Node::value_sum`] is for the side that *chose the edge into* the node
//!   (the side to move at its parent), so a parent maximises its children's Q.
//! * Back-up negates exactly once per ply.
//!
//! # Arena layout
//! ```text
//! nodes[0] = root
//! nodes[n].first_child .. first_child + num_children   children of n, contiguous
//! ```
//! [`Mcts::advance`] keeps the subtree of the played move (tree reuse) by
//! copying it into a second arena, so memory stays bounded by one search tree.
//!
//! # Files
//! One `impl Mcts` per concern, as KataGo splits its search across files:
//! * `tree`: the arena, the search's state and the public API (begin,
//!   gather, evaluate, result, the move to play, [`Mcts::search`]);
//! * `select`: selection by PUCT with first-play urgency and virtual loss;
//! * `expand`: queueing a leaf, expanding it with its evaluation, the
//!   terminal checks and trap proofs of its children;
//! * `backup`: back-up (negamax, max^n) and the solver's proven values;
//! * `root`: root noise, Gumbel root search, forced playouts, the policy
//!   targets ([`Mcts::improved_policy`], [`Mcts::pruned_visits`]);
//! * `reuse`: [`Mcts::advance`];
//! * `node` ([`Node`]) and `result` ([`SearchResult`], [`Gather`],
//!   [`tie_rank`]): the types the others share, importing none of them;
//! * `prove`: the shallow exact proofs (a game-interface search of its own).

mod backup;
mod expand;
mod node;
mod prove;
mod result;
mod reuse;
mod root;
#[cfg(test)]
mod score_tests;
mod select;
mod tree;

pub use node::{game_value, Node, NodeKind};
pub use result::{tie_rank, Gather, SearchResult};
pub use root::QRescale;
pub use tree::{Mcts, MoveFilter};
