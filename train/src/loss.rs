//! The training loss (AlphaZero, with a win/draw/loss value head as in lc0):
//!
//! ```text
//! loss = policy_ce + value_loss_weight * value_ce   (+ L2 through the optimizer's weight decay)
//! policy_ce = -sum_a pi(a) * log softmax_legal(policy_logits)(a)   pi = root visit shares; softmax over legal moves
//! value_ce  = -sum_k t_k * log softmax(value_logits)(k)          t = wdl(z), k = win / draw / loss
//! wdl(z)    = (max(z, 0), 1 - |z|, max(-z, 0))                   z in [-1, 1]
//! ```
//!
//! With the auxiliary heads on (`model.moves_left_head`, `model.score_head`),
//! two more terms (KataGo's auxiliary targets, Wu 2019; lc0's moves-left head):
//!
//! ```text
//!   + moves_left_loss_weight * huber_0.5(m, plies_left / 20)     masked mean over rows with a target
//!   + score_loss_weight      * huber_1.0(s, points_diff / 10)    masked mean over rows with a target
//! huber_d(x, y) = (x - y)^2 / 2 if |x - y| <= d, else d * (|x - y| - d / 2)
//! ```
//!
//! `m`, `s` are the heads' outputs (scaled units, [`martian_model::MOVES_LEFT_SCALE`],
//! [`martian_model::SCORE_SCALE`]); the moves-left scale and delta are lc0's
//! (20 plies per unit, quadratic within 10 plies). Rows of shards without the
//! targets (written before they existed; a game without points for the score)
//! have mask 0 and add nothing; a batch without any target adds 0.
//!
//! With a vector value head (`model.value_players` = P > 2, four-player
//! free-for-all) the value term is instead the mean squared error over the
//! batch and the players of the head's tanh outputs `v` `[B, P]` against the
//! per-player targets `u` `[B, P]` (mover-relative order, shards' `values`):
//!
//! ```text
//! value_mse_vec = mean_{b,k} (v[b,k] - u[b,k])^2                 u = per-player results, martian-chess §14.7
//! ```
//!
//! For a game result (z = +1, 0, -1) `t` is one class, so the value term is
//! the usual WDL cross-entropy; a value target mixed with the search's value
//! (`selfplay.value_target_q_weight`) gives a soft target with the same
//! expected value `t_win - t_loss = z`.
//!
//! L2 regularisation `c * ||theta||^2` is applied as weight decay in the
//! optimizer (for SGD the two are the same update).

use tch::{Kind, Tensor};

/// Loss terms of a batch (scalar tensors, mean over the batch).
#[derive(Debug)]
pub struct Losses {
    /// Policy cross-entropy, in nats.
    pub policy: Tensor,
    /// Value (WDL) cross-entropy, in nats; with a vector value head the mean
    /// squared error over the players ([`value_terms`]).
    pub value: Tensor,
    /// `policy + value_weight * value`.
    pub total: Tensor,
}

/// Huber delta of the moves-left loss, in the head's units (0.5 x 20 = 10 plies; lc0's).
pub const MOVES_LEFT_HUBER_DELTA: f64 = 0.5;

/// Huber delta of the score loss, in the head's units (1.0 x 10 = 10 points).
pub const SCORE_HUBER_DELTA: f64 = 1.0;

/// Mean Huber loss with `delta` of `pred` `[B]` against `target` `[B]` over
/// the rows where `mask` `[B]` is 1 (0 = no target); a zero scalar when no row
/// has a target. All float32 on one device.
pub fn masked_huber(pred: &Tensor, target: &Tensor, mask: &Tensor, delta: f64) -> Tensor {
    let per_row = pred.huber_loss(target, tch::Reduction::None, delta);
    (per_row * mask).sum(Kind::Float) / mask.sum(Kind::Float).clamp_min(1.0)
}

/// Value target `z` in `[-1, 1]` (for the side to move) as a WDL
/// distribution `[win, draw, loss] = [max(z, 0), 1 - |z|, max(-z, 0)]`: one
/// class for a result, soft for a mixed target; `t_win - t_loss = z`.
pub fn value_wdl(z: f32) -> [f32; 3] {
    let z = z.clamp(-1.0, 1.0);
    [z.max(0.0), 1.0 - z.abs(), (-z).max(0.0)]
}

/// The value term of the loss and the mover's predicted value, for either
/// value head ([`martian_model::PolicyValueNet::value_outputs`]):
///
/// * a `[B, 3]` (win, draw, loss) head: the cross-entropy against
///   [`value_wdl`] of `value` (`[B]`), and `P(win) - P(loss)`;
/// * a `[B, P]` vector head (P != 3, or `values` given with `P` columns): the
///   mean squared error against `values` (`[B * P]`, mover-relative; an
///   empty slice means the zero-sum completion of `value`: the mover `z`,
///   the others `-z / (P - 1)`), and the head's column 0.
///
/// Returns `(loss, mover_value)`: a scalar and a `[B]` tensor on `device`.
///
/// # Errors
/// A libtorch error, or `values` of a length other than `B * P`.
pub fn value_terms(
    value_out: &Tensor,
    value: &[f32],
    values: &[f32],
    vector: bool,
    device: tch::Device,
) -> Result<(Tensor, Tensor), tch::TchError> {
    let b = value.len();
    if !vector {
        let wdl: Vec<f32> = value.iter().flat_map(|&z| value_wdl(z)).collect();
        let vt = Tensor::f_from_slice(&wdl)?.f_view([b as i64, 3])?.f_to_device(device)?;
        let loss = -(vt * value_out.f_log_softmax(-1, Kind::Float)?).f_sum_dim_intlist(-1, false, Kind::Float)?;
        let probs = value_out.f_softmax(-1, Kind::Float)?;
        let v = probs.f_select(1, 0)? - probs.f_select(1, 2)?;
        return Ok((loss.f_mean(Kind::Float)?, v));
    }
    let p = value_out.size().get(1).copied().unwrap_or(1).max(1) as usize;
    let target: Vec<f32> = if values.is_empty() {
        value.iter().flat_map(|&z| (0..p).map(move |k| if k == 0 { z } else { -z / (p - 1).max(1) as f32 })).collect()
    } else if values.len() == b * p {
        values.to_vec()
    } else {
        return Err(tch::TchError::Shape(format!(
            "{} per-player value targets for a batch of {b} rows and a value head of {p} outputs",
            values.len()
        )));
    };
    let t = Tensor::f_from_slice(&target)?.f_view([b as i64, p as i64])?.f_to_device(device)?;
    let loss = (value_out - t).f_square()?.f_mean(Kind::Float)?;
    Ok((loss, value_out.f_select(1, 0)?))
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
/// * `value_logits` `[B, 3]`, `value_target` `[B, 3]` WDL rows from [`value_wdl`].
pub fn losses(
    policy_logits: &Tensor,
    value_logits: &Tensor,
    policy_target: &Tensor,
    value_target: &Tensor,
    value_weight: f64,
) -> Losses {
    let value = -(value_target * value_logits.log_softmax(-1, Kind::Float))
        .sum_dim_intlist(-1, false, Kind::Float)
        .mean(Kind::Float);
    losses_with_value(policy_logits, policy_target, value, value_weight)
}

/// [`losses`] with the value term computed by the caller (e.g. by
/// [`value_terms`] for either value head).
pub fn losses_with_value(policy_logits: &Tensor, policy_target: &Tensor, value: Tensor, value_weight: f64) -> Losses {
    let policy = -(policy_target * policy_logits.log_softmax(-1, Kind::Float))
        .sum_dim_intlist(-1, false, Kind::Float)
        .mean(Kind::Float);
    let total = &policy + &value * value_weight;
    Losses { policy, value, total }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_give_one_class_and_mixed_targets_keep_their_value() {
        assert_eq!(value_wdl(1.0), [1.0, 0.0, 0.0]);
        assert_eq!(value_wdl(0.0), [0.0, 1.0, 0.0]);
        assert_eq!(value_wdl(-1.0), [0.0, 0.0, 1.0]);
        let t = value_wdl(0.4);
        assert!((t[0] - t[2] - 0.4).abs() < 1e-6 && (t.iter().sum::<f32>() - 1.0).abs() < 1e-6);
        let t = value_wdl(-0.7);
        assert!((t[0] - t[2] + 0.7).abs() < 1e-6 && t.iter().all(|&x| x >= 0.0));
    }

    #[test]
    fn vector_value_term_is_the_mean_squared_error_over_rows_and_players() {
        let out = Tensor::from_slice(&[0.5f32, -0.5, 0.0, 0.0, 1.0, 0.0, -0.5, -0.5]).view([2, 4]);
        let values = [1.0f32, -1.0 / 3.0, -1.0 / 3.0, -1.0 / 3.0, 0.0, 0.0, 0.0, 0.0];
        let (loss, mover) = value_terms(&out, &[1.0, 0.0], &values, true, tch::Device::Cpu).unwrap();
        // By hand: row 0 (0.25 + 1/36 + 1/9 + 1/9), row 1 (1 + 0 + 0.25 + 0.25); mean over 8.
        let want = (0.25 + 1.0 / 36.0 + 2.0 / 9.0 + 1.5) / 8.0;
        assert!((loss.double_value(&[]) - want).abs() < 1e-6, "{}", loss.double_value(&[]));
        assert_eq!(Vec::<f32>::try_from(&mover).unwrap(), vec![0.5, 1.0]);
        // Without per-player targets: the zero-sum completion of `value`.
        let (l2, _) = value_terms(&out, &[1.0, 0.0], &[], true, tch::Device::Cpu).unwrap();
        assert!((l2.double_value(&[]) - want).abs() < 1e-6);
        assert!(value_terms(&out, &[1.0, 0.0], &values[..5], true, tch::Device::Cpu).is_err());
        // The (win, draw, loss) head: the cross-entropy of `losses`.
        let wdl = Tensor::from_slice(&[0.3f32, -1.0, 2.0]).view([1, 3]);
        let (ce, v) = value_terms(&wdl, &[1.0], &[], false, tch::Device::Cpu).unwrap();
        let want = -wdl.log_softmax(-1, Kind::Float).double_value(&[0, 0]);
        assert!((ce.double_value(&[]) - want).abs() < 1e-6);
        let p = wdl.softmax(-1, Kind::Float);
        assert!((v.double_value(&[0]) - (p.double_value(&[0, 0]) - p.double_value(&[0, 2]))).abs() < 1e-6);
    }

    #[test]
    fn masked_huber_is_the_mean_over_rows_with_a_target() {
        let pred = Tensor::from_slice(&[0.0f32, 1.0, 5.0, 2.0]);
        let target = Tensor::from_slice(&[0.2f32, 3.0, 0.0, 100.0]);
        // Row 3 has no target: its huge error must not count.
        let mask = Tensor::from_slice(&[1.0f32, 1.0, 1.0, 0.0]);
        let got = masked_huber(&pred, &target, &mask, 0.5).double_value(&[]);
        // By hand, delta 0.5: |0.2| -> 0.02; |2| -> 0.5 * (2 - 0.25) = 0.875; |5| -> 0.5 * 4.75 = 2.375.
        let want = (0.02 + 0.875 + 2.375) / 3.0;
        assert!((got - want).abs() < 1e-6, "{got} vs {want}");
        let none = Tensor::zeros([4], (Kind::Float, tch::Device::Cpu));
        assert_eq!(masked_huber(&pred, &target, &none, 0.5).double_value(&[]), 0.0);
    }

    #[test]
    fn value_term_is_the_class_cross_entropy_for_results() {
        let logits = Tensor::from_slice(&[0.3f32, -1.0, 2.0, 1.5, 0.2, -0.4]).view([2, 3]);
        let policy = Tensor::from_slice(&[1.0f32, 0.0, 0.0, 1.0]).view([2, 2]);
        let pl = Tensor::from_slice(&[0.0f32, 0.0, 0.0, 0.0]).view([2, 2]);
        let z = [1.0f32, -1.0];
        let wdl: Vec<f32> = z.iter().flat_map(|&v| value_wdl(v)).collect();
        let l = losses(&pl, &logits, &policy, &Tensor::from_slice(&wdl).view([2, 3]), 1.0);
        let ce = logits.cross_entropy_for_logits(&Tensor::from_slice(&[0i64, 2]));
        assert!((l.value.double_value(&[]) - ce.double_value(&[])).abs() < 1e-6);
        // A soft target: -sum t log softmax, by hand.
        let t = value_wdl(0.5);
        let soft = Tensor::from_slice(&[t, t].concat()).view([2, 3]);
        let l = losses(&pl, &logits, &policy, &soft, 1.0);
        let ls = logits.log_softmax(-1, Kind::Float);
        let mut want = 0.0;
        for r in 0..2 {
            for (k, &tk) in t.iter().enumerate() {
                want -= tk as f64 * ls.double_value(&[r, k as i64]);
            }
        }
        assert!((l.value.double_value(&[]) - want / 2.0).abs() < 1e-5);
    }
}
