//! The optimizer loop over batches from the replay window.

use martian_model::{Checkpoint, ModelError, Precision, MOVES_LEFT_SCALE, SCORE_SCALE};
use martian_rules::GameKind;
use rand::Rng;
use serde::{Deserialize, Serialize};
use std::path::Path;

use tch::{Device, Kind, Tensor};

use crate::config::TrainConfig;
use crate::loss::{
    losses, losses_with_value, masked_huber, masked_logits, value_terms, value_wdl, MOVES_LEFT_HUBER_DELTA,
    SCORE_HUBER_DELTA,
};
use crate::optim::{OptimError, Optimizer};
use crate::replay::{Batch, ReplayWindow};
use crate::scaler::LossScaler;

/// Name of the loss scaler's state in the optimizer state file: a float64
/// tensor `[scale, good_steps]` (fp16 only).
const LOSS_SCALER_TENSOR: &str = "loss_scaler";

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
    /// fp16 (`model.precision`): the loss scale of the last logged step;
    /// absent in fp32 and bf16.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss_scale: Option<f64>,
    /// fp16: steps since the last line whose gradients overflowed and were
    /// skipped (the loss scaler halved its scale); absent in fp32 and bf16.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skipped_steps: Option<u32>,
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
    /// A model setting that cannot be used (e.g. fp16 on the CPU).
    #[error(transparent)]
    Model(#[from] ModelError),
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
    /// Precision of the forward and backward passes (`model.precision`).
    precision: Precision,
    /// Dynamic loss scaling, for fp16 only.
    scaler: Option<LossScaler>,
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
    /// fp16: the loss scale of this step's backward pass; `None` in fp32 and bf16.
    pub loss_scale: Option<f64>,
    /// fp16: the step's gradients overflowed, so the weights were not
    /// updated (the scale was halved); always false in fp32 and bf16.
    pub skipped: bool,
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
            precision: Precision::Fp32,
            scaler: None,
        })
    }

    /// Trains in precision `p` (`model.precision`): the passes follow the
    /// rule of [`martian_model::precision`] (convolutions and linear layers
    /// in `p`, the fp32 master weights cast on each pass), the optimizer and
    /// the weights stay fp32; fp16 adds dynamic loss scaling ([`LossScaler`]).
    ///
    /// # Errors
    /// [`TrainError::Model`] for fp16 on a device other than CUDA.
    pub fn with_precision(mut self, p: Precision) -> Result<Trainer, TrainError> {
        p.check_device(self.device)?;
        self.precision = p;
        self.scaler = p.needs_loss_scaling().then(LossScaler::new);
        Ok(self)
    }

    /// The precision of the passes.
    pub fn precision(&self) -> Precision {
        self.precision
    }

    /// The loss scaler (fp16 only).
    pub fn loss_scaler(&self) -> Option<&LossScaler> {
        self.scaler.as_ref()
    }

    /// Writes the optimizer state (momentum or Adam moments, update count).
    ///
    /// # Errors
    /// I/O or libtorch errors.
    pub fn save_state(&self, path: &Path) -> Result<(), TrainError> {
        let extra = self.scaler.map(|s| {
            let (scale, good) = s.state();
            (LOSS_SCALER_TENSOR, Tensor::from_slice(&[scale, f64::from(good)]))
        });
        Ok(self.opt.save_with(path, extra)?)
    }

    /// Restores the optimizer state written by [`Trainer::save_state`].
    ///
    /// # Errors
    /// A state file that does not fit this network and optimizer.
    pub fn load_state(&mut self, path: &Path) -> Result<(), TrainError> {
        let extra = self.opt.load_with(path, Some(LOSS_SCALER_TENSOR))?;
        // In fp16 the scaler continues where it was (a state written in
        // another precision has none: a fresh scaler); otherwise it is ignored.
        if let (Some(scaler), Some(t)) = (self.scaler.as_mut(), extra) {
            let v: Vec<f64> = Vec::<f64>::try_from(t.to_kind(Kind::Double).flatten(0, -1)).unwrap_or_default();
            if let [scale, good] = v[..] {
                if let Some(s) = LossScaler::from_state(scale, good.clamp(0.0, f64::from(u32::MAX)) as u32) {
                    *scaler = s;
                }
            }
        }
        Ok(())
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
        let z = Tensor::f_from_slice(&self.batch.value)?.f_to_device(self.device)?;
        let saved: Vec<Tensor> = self.buffers.iter().map(|t| t.copy()).collect();
        let out = ckpt.net.forward_all_in(&x, true, self.precision);
        let policy_logits = masked_logits(&out.policy_logits, &legal);
        // The vector value head (more than two value players): MSE against the
        // per-player targets, and the mover's output for the statistics.
        let vector = ckpt.net.vector_value_players().is_some();
        let (l, vector_mover) = if vector {
            let (value, mover) =
                value_terms(&out.value_logits, &self.batch.value, &self.batch.values, true, self.device)?;
            (losses_with_value(&policy_logits, &pt, value, self.cfg.value_loss_weight), Some(mover))
        } else {
            let wdl: Vec<f32> = self.batch.value.iter().flat_map(|&z| value_wdl(z)).collect();
            let vc = Tensor::f_from_slice(&wdl)?.f_view([-1, 3])?.f_to_device(self.device)?;
            (losses(&policy_logits, &out.value_logits, &pt, &vc, self.cfg.value_loss_weight), None)
        };
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
        let (loss_scale, skipped) =
            backward_and_step(&mut self.opt, self.scaler.as_mut(), &total_t, lr, self.cfg.grad_clip)?;
        let _g = tch::no_grad_guard();
        let acc =
            policy_logits.argmax(-1, false).eq_tensor(&pt.argmax(-1, false)).to_kind(Kind::Float).mean(Kind::Float);
        let v = match vector_mover {
            Some(v) => v.detach(),
            None => {
                let probs = out.value_logits.softmax(-1, Kind::Float);
                probs.select(1, 0) - probs.select(1, 2)
            }
        };
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
            loss_scale,
            skipped,
        })
    }
}

/// The backward pass of `loss` and the optimizer step: without a scaler,
/// plainly; with one (fp16), the backward pass of `loss * scale`, the
/// gradients divided by the scale, and the step taken only when they are all
/// finite ([`LossScaler::update`]). Returns the scale used (with a scaler)
/// and whether the step was skipped.
fn backward_and_step(
    opt: &mut Optimizer,
    scaler: Option<&mut LossScaler>,
    loss: &Tensor,
    lr: f64,
    clip: f64,
) -> Result<(Option<f64>, bool), TrainError> {
    opt.zero_grad();
    match scaler {
        None => {
            loss.f_backward()?;
            opt.step(lr, clip)?;
            Ok((None, false))
        }
        Some(scaler) => {
            let scale = scaler.scale();
            loss.f_mul_scalar(scale)?.f_backward()?;
            let finite = opt.unscale_grads(1.0 / scale)?;
            let take = scaler.update(finite);
            if take {
                opt.step(lr, clip)?;
            }
            Ok((Some(scale), !take))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::OptimizerKind;
    use tch::nn;

    /// One parameter `w = 1` under plain SGD (no momentum, no decay, no clip).
    fn one_param() -> (nn::VarStore, Tensor, Optimizer) {
        let vs = nn::VarStore::new(Device::Cpu);
        let w = vs.root().var("w", &[1], nn::Init::Const(1.0));
        let cfg = TrainConfig {
            optimizer: OptimizerKind::Sgd,
            momentum: 0.0,
            weight_decay: 0.0,
            grad_clip: 0.0,
            ..Default::default()
        };
        let opt = Optimizer::new(&vs, &cfg).unwrap();
        (vs, w, opt)
    }

    #[test]
    fn scaled_step_skips_overflowing_gradients_and_halves_the_scale() {
        let (_vs, w, mut opt) = one_param();
        let mut scaler = LossScaler::new();
        // d(loss)/dw = 1e35: times the scale 65536 it overflows float32.
        let loss = (&w * 1e35).sum(Kind::Float);
        let (scale, skipped) = backward_and_step(&mut opt, Some(&mut scaler), &loss, 0.1, 0.0).unwrap();
        assert_eq!((scale, skipped), (Some(65536.0), true));
        assert_eq!(scaler.scale(), 32768.0, "the scale halves");
        assert_eq!(w.double_value(&[0]), 1.0, "the weight is untouched");
        assert_eq!(opt.steps(), 0);
        // d(loss)/dw = 3: the step is taken with the unscaled gradient.
        let loss = (&w * 3.0).sum(Kind::Float);
        let (scale, skipped) = backward_and_step(&mut opt, Some(&mut scaler), &loss, 0.1, 0.0).unwrap();
        assert_eq!((scale, skipped), (Some(32768.0), false));
        assert!((w.double_value(&[0]) - (1.0 - 0.1 * 3.0)).abs() < 1e-6, "{}", w.double_value(&[0]));
        assert_eq!(scaler.state(), (32768.0, 1));
        // Without a scaler: the same plain step.
        let loss = (&w * 3.0).sum(Kind::Float);
        assert_eq!(backward_and_step(&mut opt, None, &loss, 0.1, 0.0).unwrap(), (None, false));
        assert!((w.double_value(&[0]) - 0.4).abs() < 1e-6);
    }

    #[test]
    fn the_scaler_state_survives_a_save_and_load_of_the_optimizer_state() {
        let dir = tempfile::tempdir().unwrap();
        let (_vs, _w, opt) = one_param();
        let path = dir.path().join("optim.safetensors");
        opt.save_with(&path, Some((LOSS_SCALER_TENSOR, Tensor::from_slice(&[1024.0f64, 7.0])))).unwrap();
        let (_vs2, _w2, mut opt2) = one_param();
        let t = opt2.load_with(&path, Some(LOSS_SCALER_TENSOR)).unwrap().unwrap();
        assert_eq!(Vec::<f64>::try_from(t).unwrap(), vec![1024.0, 7.0]);
        // A plain load refuses the extra tensor as unexpected; a state without it loads.
        assert!(opt2.load(&path).unwrap_err().to_string().contains("unexpected loss_scaler"));
        opt.save(&path).unwrap();
        assert!(opt2.load_with(&path, Some(LOSS_SCALER_TENSOR)).unwrap().is_none());
    }

    /// A damaged optimizer state is refused by name: NaN moments (they would
    /// make every later step NaN), and a header with a tensor's entry removed
    /// (libtorch's reader said `InvalidOffset(...)`).
    #[test]
    fn damaged_optimizer_states_are_refused_by_name() {
        let dir = tempfile::tempdir().unwrap();
        let (_vs, _w, opt) = one_param();
        let path = dir.path().join("optim.safetensors");
        opt.save(&path).unwrap();
        let tensors = Tensor::read_safetensors(&path).unwrap();
        let (_vs2, _w2, mut opt2) = one_param();
        opt2.load(&path).unwrap();
        // NaN moments.
        let nan: Vec<(String, Tensor)> = tensors
            .iter()
            .map(|(n, t)| (n.clone(), if n == "step" { t.shallow_clone() } else { t.full_like(f64::NAN) }))
            .collect();
        Tensor::write_safetensors(&nan, &path).unwrap();
        let e = opt2.load(&path).unwrap_err().to_string();
        assert!(e.contains("optim.safetensors") && e.contains("not finite"), "{e}");
        // A tensor's header entry removed, its bytes left: a hole in the data section.
        Tensor::write_safetensors(&tensors, &path).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let n = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
        let mut header: serde_json::Map<String, serde_json::Value> = serde_json::from_slice(&bytes[8..8 + n]).unwrap();
        let victim = header.keys().find(|k| k.as_str() != "step" && k.as_str() != "__metadata__").unwrap().clone();
        header.remove(&victim);
        let h = serde_json::to_vec(&header).unwrap();
        std::fs::write(&path, [&(h.len() as u64).to_le_bytes()[..], &h, &bytes[8 + n..]].concat()).unwrap();
        let e = opt2.load(&path).unwrap_err().to_string();
        assert!(e.contains("belong to no tensor") && !e.contains("InvalidOffset"), "{e}");
    }
}
