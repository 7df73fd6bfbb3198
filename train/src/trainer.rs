//! The optimizer loop over batches from the replay window.

use martian_model::{Checkpoint, MOVES_LEFT_SCALE, SCORE_SCALE};
use martian_rules::GameKind;
use rand::Rng;
use serde::{Deserialize, Serialize};
use std::path::Path;

use tch::{Device, Kind, Tensor};

use crate::config::TrainConfig;
use crate::loss::{losses, masked_huber, masked_logits, value_wdl, MOVES_LEFT_HUBER_DELTA, SCORE_HUBER_DELTA};
use crate::optim::{OptimError, Optimizer};
use crate::replay::{Batch, ReplayWindow};

/// One line of `train.jsonl`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    /// Global optimizer step after this update.
    pub step: u64,
    /// Generation of the pipeline (0 for a stand-alone `train`).
    pub generation: u32,
    /// Learning rate used.
    pub lr: f64,
    /// Policy cross-entropy (nats), mean over the logged steps.
    pub policy_loss: f64,
    /// Value WDL cross-entropy (nats), mean over the logged steps.
    pub value_loss: f64,
    /// Total loss, mean over the logged steps.
    pub total_loss: f64,
    /// Share of samples whose policy argmax equals the target's argmax.
    pub policy_accuracy: f64,
    /// Mean squared error of `P(win) - P(loss)` against the +1/0/-1 target.
    pub value_mse: f64,
    /// Moves-left Huber loss (head units, before its weight), mean over the
    /// logged steps; only when `model.moves_left_head` is on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moves_left_loss: Option<f64>,
    /// Score Huber loss (head units, before its weight), mean over the logged
    /// steps; only when `model.score_head` is on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score_loss: Option<f64>,
    /// Training throughput, samples per second.
    pub samples_per_s: f64,
    /// Positions in the replay window.
    pub window: usize,
}

/// Errors of a training step.
#[derive(Debug, thiserror::Error)]
pub enum TrainError {
    /// A libtorch error.
    #[error("libtorch: {0}")]
    Torch(#[from] tch::TchError),
    /// An optimizer error (including a bad state file).
    #[error(transparent)]
    Optim(#[from] OptimError),
    /// `train.mirror_augmentation` for a game whose rules have no left-right
    /// symmetry (`martian_rules::GameState::mirror_action` is `None`).
    #[error("train.mirror_augmentation = true, but {0}'s rules are not left-right symmetric; set it to false")]
    NoMirrorSymmetry(martian_rules::GameKind),
    /// The loss of a batch is NaN or infinite; the weights were not updated.
    #[error(
        "the training loss became {loss} at step {step} (policy {policy}, value {value}{auxiliary}); \
         the weights of this step were not applied (lower train.learning_rate or check the shards)"
    )]
    NonFiniteLoss {
        /// Global step that would have been taken.
        step: u64,
        /// Total loss.
        loss: f64,
        /// Policy loss.
        policy: f64,
        /// Value loss.
        value: f64,
        /// The auxiliary heads' losses as text, e.g. `, moves left 0.12, score NaN`;
        /// empty without the heads.
        auxiliary: String,
    },
}

/// Optimizer state bound to a checkpoint's variables.
pub struct Trainer {
    opt: Optimizer,
    /// Variables that are not trained by gradients (batch-norm running
    /// statistics), restored when a step's loss is not finite.
    buffers: Vec<Tensor>,
    cfg: TrainConfig,
    device: Device,
    game: GameKind,
    input_shape: [usize; 3],
    num_actions: usize,
    batch: Batch,
}

/// Statistics of one step.
#[derive(Clone, Copy, Debug, Default)]
pub struct StepStats {
    /// Policy cross-entropy.
    pub policy_loss: f64,
    /// Value cross-entropy.
    pub value_loss: f64,
    /// Total loss.
    pub total_loss: f64,
    /// Policy top-1 agreement with the target.
    pub policy_accuracy: f64,
    /// Value mean squared error.
    pub value_mse: f64,
    /// Moves-left Huber loss (before its weight); `None` without the head.
    pub moves_left_loss: Option<f64>,
    /// Score Huber loss (before its weight); `None` without the head.
    pub score_loss: Option<f64>,
}

impl Trainer {
    /// An optimizer with zero state over `ckpt`'s trainable variables.
    ///
    /// # Errors
    /// A libtorch error building the optimizer; [`TrainError::NoMirrorSymmetry`]
    /// for mirror augmentation in a game without the symmetry.
    pub fn new(ckpt: &Checkpoint, cfg: &TrainConfig, device: Device) -> Result<Trainer, TrainError> {
        if cfg.mirror_augmentation && ckpt.meta.game.mirror_action(0).is_none() {
            return Err(TrainError::NoMirrorSymmetry(ckpt.meta.game));
        }
        let opt = Optimizer::new(&ckpt.vs, cfg)?;
        let mut named: Vec<(String, Tensor)> =
            ckpt.vs.variables().into_iter().filter(|(_, t)| !t.requires_grad()).collect();
        named.sort_by(|a, b| a.0.cmp(&b.0));
        let buffers = named.into_iter().map(|(_, t)| t).collect();
        Ok(Trainer {
            opt,
            buffers,
            cfg: cfg.clone(),
            device,
            game: ckpt.meta.game,
            input_shape: ckpt.meta.input_shape,
            num_actions: ckpt.meta.num_actions,
            batch: Batch::default(),
        })
    }

    /// Writes the optimizer state (momentum or Adam moments, update count).
    ///
    /// # Errors
    /// I/O or libtorch errors.
    pub fn save_state(&self, path: &Path) -> Result<(), TrainError> {
        Ok(self.opt.save(path)?)
    }

    /// Restores the optimizer state written by [`Trainer::save_state`].
    ///
    /// # Errors
    /// A state file that does not fit this network and optimizer.
    pub fn load_state(&mut self, path: &Path) -> Result<(), TrainError> {
        Ok(self.opt.load(path)?)
    }

    /// One optimizer step at learning rate `lr` on a batch drawn from `window`.
    /// A NaN or infinite loss leaves the weights untouched and returns
    /// [`TrainError::NonFiniteLoss`].
    ///
    /// # Errors
    /// A libtorch error (e.g. out of memory on the device), or a non-finite loss.
    pub fn step<R: Rng>(
        &mut self,
        ckpt: &mut Checkpoint,
        window: &ReplayWindow,
        lr: f64,
        rng: &mut R,
    ) -> Result<StepStats, TrainError> {
        let b = self.cfg.batch_size as usize;
        let mirror = self.cfg.mirror_augmentation.then_some(self.game);
        window.fill_batch(rng, b, mirror, &mut self.batch);
        let [c, h, w] = self.input_shape.map(|x| x as i64);
        let x = Tensor::f_from_slice(&self.batch.planes)?.f_view([b as i64, c, h, w])?.f_to_device(self.device)?;
        let pt = Tensor::f_from_slice(&self.batch.policy)?
            .f_view([b as i64, self.num_actions as i64])?
            .f_to_device(self.device)?;
        let legal = Tensor::f_from_slice(&self.batch.legal)?
            .f_view([b as i64, self.num_actions as i64])?
            .f_to_device(self.device)?
            .f_to_kind(Kind::Bool)?;
        let wdl: Vec<f32> = self.batch.value.iter().flat_map(|&z| value_wdl(z)).collect();
        let vc = Tensor::f_from_slice(&wdl)?.f_view([-1, 3])?.f_to_device(self.device)?;
        let z = Tensor::f_from_slice(&self.batch.value)?.f_to_device(self.device)?;
        let saved: Vec<Tensor> = self.buffers.iter().map(|t| t.copy()).collect();
        let out = ckpt.net.forward_all(&x, true);
        let policy_logits = masked_logits(&out.policy_logits, &legal);
        let l = losses(&policy_logits, &out.value_logits, &pt, &vc, self.cfg.value_loss_weight);
        // The auxiliary heads' terms, masked to the rows that have targets.
        let device = self.device;
        let aux = |pred: &Option<Tensor>, target: &[f32], mask: &[f32], scale: f32, delta: f64| {
            pred.as_ref()
                .map(|p| -> Result<Tensor, tch::TchError> {
                    let t =
                        (Tensor::f_from_slice(target)?.f_to_device(device)? / scale as f64).f_to_kind(Kind::Float)?;
                    let m = Tensor::f_from_slice(mask)?.f_to_device(device)?;
                    Ok(masked_huber(p, &t, &m, delta))
                })
                .transpose()
        };
        let ml = aux(
            &out.moves_left,
            &self.batch.moves_left,
            &self.batch.moves_left_mask,
            MOVES_LEFT_SCALE,
            MOVES_LEFT_HUBER_DELTA,
        )?;
        let sc = aux(&out.score, &self.batch.score, &self.batch.score_mask, SCORE_SCALE, SCORE_HUBER_DELTA)?;
        let weighted = [(&ml, self.cfg.moves_left_loss_weight), (&sc, self.cfg.score_loss_weight)];
        let total_t =
            weighted.iter().filter_map(|(t, w)| t.as_ref().map(|t| t * *w)).fold(l.total, |acc, term| acc + term);
        let moves_left_loss = ml.map(|t| t.f_double_value(&[])).transpose()?;
        let score_loss = sc.map(|t| t.f_double_value(&[])).transpose()?;
        let (total, policy, value) =
            (total_t.f_double_value(&[])?, l.policy.f_double_value(&[])?, l.value.f_double_value(&[])?);
        if !total.is_finite() {
            let _g = tch::no_grad_guard();
            for (b, s) in self.buffers.iter_mut().zip(&saved) {
                b.f_copy_(s)?;
            }
            let auxiliary = [("moves left", moves_left_loss), ("score", score_loss)]
                .iter()
                .filter_map(|(name, v)| v.map(|v| format!(", {name} {v}")))
                .collect();
            return Err(TrainError::NonFiniteLoss { step: ckpt.meta.step + 1, loss: total, policy, value, auxiliary });
        }
        self.opt.zero_grad();
        total_t.f_backward()?;
        self.opt.step(lr, self.cfg.grad_clip)?;
        let _g = tch::no_grad_guard();
        let acc =
            policy_logits.argmax(-1, false).eq_tensor(&pt.argmax(-1, false)).to_kind(Kind::Float).mean(Kind::Float);
        let probs = out.value_logits.softmax(-1, Kind::Float);
        let v = probs.select(1, 0) - probs.select(1, 2);
        let mse = (v - z).square().mean(Kind::Float);
        ckpt.meta.step += 1;
        Ok(StepStats {
            policy_loss: policy,
            value_loss: value,
            total_loss: total,
            policy_accuracy: acc.f_double_value(&[])?,
            value_mse: mse.f_double_value(&[])?,
            moves_left_loss,
            score_loss,
        })
    }
}
