//! The optimizer loop over batches from the replay window.

use martian_model::Checkpoint;
use martian_rules::GameKind;
use rand::Rng;
use serde::{Deserialize, Serialize};
use tch::nn::{self, OptimizerConfig};
use tch::{Device, Kind, Tensor};

use crate::config::{OptimizerKind, TrainConfig};
use crate::loss::{losses, masked_logits, value_class};
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
    /// Training throughput, samples per second.
    pub samples_per_s: f64,
    /// Positions in the replay window.
    pub window: usize,
}

/// Optimizer state bound to a checkpoint's variables.
pub struct Trainer {
    opt: nn::Optimizer,
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
}

impl Trainer {
    /// An optimizer over `ckpt`'s variables.
    ///
    /// # Errors
    /// A libtorch error building the optimizer.
    pub fn new(ckpt: &Checkpoint, cfg: &TrainConfig, device: Device) -> Result<Trainer, tch::TchError> {
        let opt = match cfg.optimizer {
            OptimizerKind::Sgd => {
                nn::Sgd { momentum: cfg.momentum, dampening: 0.0, wd: cfg.weight_decay, nesterov: true }
                    .build(&ckpt.vs, cfg.learning_rate)?
            }
            OptimizerKind::Adamw => {
                nn::AdamW { wd: cfg.weight_decay, ..Default::default() }.build(&ckpt.vs, cfg.learning_rate)?
            }
        };
        Ok(Trainer {
            opt,
            cfg: cfg.clone(),
            device,
            game: ckpt.meta.game,
            input_shape: ckpt.meta.input_shape,
            num_actions: ckpt.meta.num_actions,
            batch: Batch::default(),
        })
    }

    /// One optimizer step at learning rate `lr` on a batch drawn from `window`.
    ///
    /// # Errors
    /// A libtorch error (e.g. out of memory on the device).
    pub fn step<R: Rng>(
        &mut self,
        ckpt: &mut Checkpoint,
        window: &ReplayWindow,
        lr: f64,
        rng: &mut R,
    ) -> Result<StepStats, tch::TchError> {
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
        let classes: Vec<i64> = self.batch.value.iter().map(|&z| value_class(z)).collect();
        let vc = Tensor::f_from_slice(&classes)?.f_to_device(self.device)?;
        let z = Tensor::f_from_slice(&self.batch.value)?.f_to_device(self.device)?;
        let out = ckpt.net.forward(&x, true);
        let policy_logits = masked_logits(&out.policy_logits, &legal);
        let l = losses(&policy_logits, &out.value_logits, &pt, &vc, self.cfg.value_loss_weight);
        self.opt.set_lr(lr);
        if self.cfg.grad_clip > 0.0 {
            self.opt.backward_step_clip_norm(&l.total, self.cfg.grad_clip);
        } else {
            self.opt.backward_step(&l.total);
        }
        let _g = tch::no_grad_guard();
        let acc =
            policy_logits.argmax(-1, false).eq_tensor(&pt.argmax(-1, false)).to_kind(Kind::Float).mean(Kind::Float);
        let probs = out.value_logits.softmax(-1, Kind::Float);
        let v = probs.select(1, 0) - probs.select(1, 2);
        let mse = (v - z).square().mean(Kind::Float);
        ckpt.meta.step += 1;
        Ok(StepStats {
            policy_loss: l.policy.f_double_value(&[])?,
            value_loss: l.value.f_double_value(&[])?,
            total_loss: l.total.f_double_value(&[])?,
            policy_accuracy: acc.f_double_value(&[])?,
            value_mse: mse.f_double_value(&[])?,
        })
    }
}
