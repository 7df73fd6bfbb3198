//! The training loss (AlphaZero, with a win/draw/loss value head as in lc0):
//!
//! ```text
//! loss = policy_ce + value_loss_weight * value_ce   (+ L2 through the optimizer's weight decay)
//! policy_ce = -sum_a pi(a) * log softmax_legal(policy_logits)(a)   pi = root visit shares; softmax over legal moves
//! value_ce  = -log softmax(value_logits)(z)                      z = win / draw / loss class
//! ```
//!
//! L2 regularisation `c * ||theta||^2` is applied as weight decay in the
//! optimizer (for SGD the two are the same update).

use tch::{Kind, Tensor};

/// Loss terms of a batch (scalar tensors, mean over the batch).
#[derive(Debug)]
pub struct Losses {
    /// Policy cross-entropy, in nats.
    pub policy: Tensor,
    /// Value (WDL) cross-entropy, in nats.
    pub value: Tensor,
    /// `policy + value_weight * value`.
    pub total: Tensor,
}

/// Value target (+1 / 0 / -1 for the side to move) as a WDL class: 0 win, 1 draw, 2 loss.
pub fn value_class(z: f32) -> i64 {
    if z > 0.5 {
        0
    } else if z < -0.5 {
        2
    } else {
        1
    }
}

/// Policy logits with illegal actions set to -1e9, so the softmax (and the
/// cross-entropy) runs over the legal moves only, as the search uses the
/// policy (lc0 masks illegal moves in its policy loss the same way).
/// Without the mask a small network spends its training on pushing down the
/// thousands of illegal actions and got *worse* at ranking the legal ones
/// (measured: cross-entropy over legal moves 4.34 -> 5.10 nats after a generation).
/// `legal` `[B, A]` bool.
pub fn masked_logits(policy_logits: &Tensor, legal: &Tensor) -> Tensor {
    policy_logits.masked_fill(&legal.logical_not(), -1e9)
}

/// Computes the losses.
///
/// * `policy_logits` `[B, A]`, `policy_target` `[B, A]` (rows sum to 1);
/// * `value_logits` `[B, 3]`, `value_class` `[B]` int64 in {0, 1, 2}.
pub fn losses(
    policy_logits: &Tensor,
    value_logits: &Tensor,
    policy_target: &Tensor,
    value_class: &Tensor,
    value_weight: f64,
) -> Losses {
    let policy = -(policy_target * policy_logits.log_softmax(-1, Kind::Float))
        .sum_dim_intlist(-1, false, Kind::Float)
        .mean(Kind::Float);
    let value = value_logits.cross_entropy_for_logits(value_class);
    let total = &policy + &value * value_weight;
    Losses { policy, value, total }
}
