//! Training settings (the `[train]` table of a run config).

use serde::{Deserialize, Serialize};

/// Optimizer choice.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OptimizerKind {
    /// SGD with momentum (AlphaZero: momentum 0.9); `weight_decay` is L2.
    Sgd,
    /// AdamW (decoupled weight decay; Loshchilov & Hutter 2019).
    Adamw,
}

/// Learning-rate schedule over the steps of one `train` call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LrSchedule {
    /// `learning_rate` throughout.
    Constant,
    /// Cosine decay from `learning_rate` to `learning_rate * lr_final_fraction`
    /// over all steps of the run (`generations * steps_per_generation`).
    Cosine,
}

/// Trainer settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct TrainConfig {
    /// Samples per optimizer step. Range 1..=65536. Default 256.
    pub batch_size: u32,
    /// Optimizer steps per generation (per `train` call in the pipeline). Default 200.
    pub steps_per_generation: u32,
    /// Replay window: the newest this many positions are sampled from. Default 100000.
    pub replay_window: u32,
    /// Optimizer. Default `sgd`.
    pub optimizer: OptimizerKind,
    /// Peak learning rate. Range (0, 10]. Default 0.02.
    pub learning_rate: f64,
    /// Schedule. Default `constant`.
    pub lr_schedule: LrSchedule,
    /// Final learning rate as a fraction of the peak (cosine). Range 0..=1. Default 0.1.
    pub lr_final_fraction: f64,
    /// Steps of linear warm-up from 0 at the start of the run. Default 0.
    pub warmup_steps: u32,
    /// SGD momentum. Range 0..1. Default 0.9.
    pub momentum: f64,
    /// Weight decay: L2 coefficient for SGD, decoupled decay for AdamW.
    /// AlphaZero 1e-4. Range 0..=1. Default 1e-4.
    pub weight_decay: f64,
    /// Weight of the value loss relative to the policy loss. Default 1.0.
    pub value_loss_weight: f64,
    /// Weight of the moves-left head's Huber loss (used when
    /// `model.moves_left_head` is on; `docs/training.md`, "Loss"). Range
    /// 0..=100. Default 0.1.
    pub moves_left_loss_weight: f64,
    /// Weight of the score head's Huber loss (used when `model.score_head` is
    /// on). Range 0..=100. Default 0.1.
    pub score_loss_weight: f64,
    /// Gradient-norm clip (0 = off). Default 10.
    pub grad_clip: f64,
    /// Write a metrics line every this many steps. Default 20.
    pub log_every: u32,
    /// Write a checkpoint every this many steps (and at the end). Default 500.
    pub checkpoint_every: u32,
    /// Left-right mirror augmentation (see `docs/training.md`: both games'
    /// rules are mirror-symmetric, their setups are not). Default false.
    pub mirror_augmentation: bool,
    /// Cap on training per new position (KataGo's "max train samples per new
    /// data row", 4 in its runs): a generation trains
    /// `min(steps_per_generation, ceil(new positions * this / batch_size))`
    /// steps, where the new positions are the newest generation's in the
    /// replay window, so that a generation with few new games is not trained
    /// on many times over (overfitting) and the time goes to self-play
    /// instead. 0 = off (always `steps_per_generation`). Range 0..=1000.
    /// Default 0.
    pub samples_per_new_position: f64,
    /// KataGo's power-law replay window (Wu 2019, section 4; KataGo's
    /// `shuffle.py`): with `c = replay_window_min` > 0 and `N` positions
    /// produced so far, the window holds
    /// `c * (1 + beta * ((N / c)^alpha - 1) / alpha)` positions (`alpha` 0.75,
    /// `beta` 0.4; all of them while `N <= c`), at most `replay_window`: it
    /// grows with the run, so early, weak games leave the window sooner than
    /// with a fixed size. 0 = off (a fixed window of `replay_window`).
    /// Default 0.
    pub replay_window_min: u32,
}

impl TrainConfig {
    /// The replay window after `produced` positions (see
    /// [`TrainConfig::replay_window_min`]).
    pub fn window_for(&self, produced: usize) -> usize {
        let cap = self.replay_window as usize;
        if self.replay_window_min == 0 {
            return cap;
        }
        let c = self.replay_window_min as f64;
        let n = produced as f64;
        let w = if n <= c { c } else { c * (1.0 + 0.4 * ((n / c).powf(0.75) - 1.0) / 0.75) };
        (w.floor() as usize).min(cap)
    }

    /// Optimizer steps of a generation whose replay window holds
    /// `new_positions` positions of the newest generation (see
    /// [`TrainConfig::samples_per_new_position`]); at least 1.
    pub fn steps_for(&self, new_positions: usize) -> u32 {
        if self.samples_per_new_position <= 0.0 {
            return self.steps_per_generation;
        }
        let want = (new_positions as f64 * self.samples_per_new_position / self.batch_size.max(1) as f64).ceil();
        (want.min(self.steps_per_generation as f64) as u32).max(1)
    }
}

impl Default for TrainConfig {
    fn default() -> Self {
        TrainConfig {
            batch_size: 256,
            steps_per_generation: 200,
            samples_per_new_position: 0.0,
            replay_window_min: 0,
            replay_window: 100_000,
            optimizer: OptimizerKind::Sgd,
            learning_rate: 0.02,
            lr_schedule: LrSchedule::Constant,
            lr_final_fraction: 0.1,
            warmup_steps: 0,
            momentum: 0.9,
            weight_decay: 1e-4,
            value_loss_weight: 1.0,
            moves_left_loss_weight: 0.1,
            score_loss_weight: 0.1,
            grad_clip: 10.0,
            log_every: 20,
            checkpoint_every: 500,
            mirror_augmentation: false,
        }
    }
}

impl TrainConfig {
    /// Checks ranges; the error names the field.
    ///
    /// # Errors
    /// `train.<field> ...` for the first value out of range.
    pub fn validate(&self) -> Result<(), String> {
        if !(1..=65_536).contains(&self.batch_size) {
            return Err(format!("train.batch_size must be in 1..=65536, got {}", self.batch_size));
        }
        if self.steps_per_generation == 0 {
            return Err("train.steps_per_generation must be >= 1".into());
        }
        if self.replay_window < self.batch_size {
            return Err(format!(
                "train.replay_window ({}) must be at least train.batch_size ({})",
                self.replay_window, self.batch_size
            ));
        }
        if !(self.learning_rate > 0.0 && self.learning_rate <= 10.0) {
            return Err(format!("train.learning_rate must be in (0, 10], got {}", self.learning_rate));
        }
        if !(0.0..=1.0).contains(&self.lr_final_fraction) {
            return Err(format!("train.lr_final_fraction must be in 0..=1, got {}", self.lr_final_fraction));
        }
        if !(0.0..1.0).contains(&self.momentum) {
            return Err(format!("train.momentum must be in 0..1, got {}", self.momentum));
        }
        if !(0.0..=1.0).contains(&self.weight_decay) {
            return Err(format!("train.weight_decay must be in 0..=1, got {}", self.weight_decay));
        }
        if !(self.value_loss_weight >= 0.0 && self.value_loss_weight.is_finite()) {
            return Err(format!("train.value_loss_weight must be >= 0, got {}", self.value_loss_weight));
        }
        for (name, w) in
            [("moves_left_loss_weight", self.moves_left_loss_weight), ("score_loss_weight", self.score_loss_weight)]
        {
            if !(0.0..=100.0).contains(&w) {
                return Err(format!("train.{name} must be in 0..=100, got {w}"));
            }
        }
        if !(self.grad_clip >= 0.0 && self.grad_clip.is_finite()) {
            return Err(format!("train.grad_clip must be >= 0, got {}", self.grad_clip));
        }
        if self.log_every == 0 || self.checkpoint_every == 0 {
            return Err("train.log_every and train.checkpoint_every must be >= 1".into());
        }
        if self.replay_window_min > self.replay_window {
            return Err(format!(
                "train.replay_window_min ({}) must be at most train.replay_window ({})",
                self.replay_window_min, self.replay_window
            ));
        }
        if !(0.0..=1000.0).contains(&self.samples_per_new_position) {
            return Err(format!(
                "train.samples_per_new_position must be in 0..=1000, got {}",
                self.samples_per_new_position
            ));
        }
        Ok(())
    }

    /// Learning rate at global step `step` of a run of `total_steps` steps.
    pub fn lr_at(&self, step: u64, total_steps: u64) -> f64 {
        let base = match self.lr_schedule {
            LrSchedule::Constant => self.learning_rate,
            LrSchedule::Cosine => {
                let t = (step as f64 / total_steps.max(1) as f64).min(1.0);
                let min = self.learning_rate * self.lr_final_fraction;
                min + 0.5 * (self.learning_rate - min) * (1.0 + (std::f64::consts::PI * t).cos())
            }
        };
        if step < self.warmup_steps as u64 {
            base * (step + 1) as f64 / self.warmup_steps as f64
        } else {
            base
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn steps_follow_the_new_positions_up_to_the_cap() {
        let c = super::TrainConfig {
            samples_per_new_position: 4.0,
            batch_size: 256,
            steps_per_generation: 200,
            ..Default::default()
        };
        assert_eq!(c.steps_for(6400), 100); // 6400 * 4 / 256
        assert_eq!(c.steps_for(100), 2); // ceil(1.56)
        assert_eq!(c.steps_for(0), 1);
        assert_eq!(c.steps_for(1_000_000), 200);
        let off = super::TrainConfig { samples_per_new_position: 0.0, ..c };
        assert_eq!(off.steps_for(10), 200);
        assert!(super::TrainConfig { samples_per_new_position: -1.0, ..Default::default() }.validate().is_err());
    }

    #[test]
    fn power_law_window_grows_from_its_minimum_to_the_cap() {
        let c = super::TrainConfig { replay_window_min: 10_000, replay_window: 100_000, ..Default::default() };
        assert_eq!(c.window_for(0), 10_000);
        assert_eq!(c.window_for(10_000), 10_000);
        // N = 16 c: c * (1 + 0.4 * (16^0.75 - 1) / 0.75) = c * (1 + 0.4 * 7 / 0.75) = 47333
        assert_eq!(c.window_for(160_000), 47_333);
        assert!(c.window_for(200_000) > c.window_for(160_000));
        assert_eq!(c.window_for(100_000_000), 100_000);
        let off = super::TrainConfig { replay_window_min: 0, replay_window: 5000, ..Default::default() };
        assert_eq!(off.window_for(1_000_000), 5000);
    }
}
