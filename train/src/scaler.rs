//! Dynamic loss scaling for fp16 training (Micikevicius et al. 2018, "Mixed
//! Precision Training", section 3.2; the rule and defaults of PyTorch's
//! `torch.cuda.amp.GradScaler`):
//!
//! ```text
//! backward of loss * scale; grads /= scale
//! grads not all finite -> skip the step, scale *= 0.5, good = 0
//! else                 -> take the step, good += 1; good == 2000 -> scale *= 2, good = 0
//! ```
//!
//! fp16 has 5 exponent bits: gradients below about 6e-8 underflow to zero in
//! its backward pass, so the loss is multiplied by a large scale before it
//! (2^16 at first) and the gradients divided by it after; a scale that
//! overflows a gradient to infinity is halved and that step is skipped. bf16
//! has fp32's exponent range and needs none.

/// The first scale (PyTorch's `init_scale`, 2^16).
pub const INITIAL_LOSS_SCALE: f64 = 65536.0;
/// Factor applied after [`LOSS_SCALE_GROWTH_INTERVAL`] good steps (PyTorch's `growth_factor`).
pub const LOSS_SCALE_GROWTH: f64 = 2.0;
/// Factor applied when a step's gradients are not finite (PyTorch's `backoff_factor`).
pub const LOSS_SCALE_BACKOFF: f64 = 0.5;
/// Good steps in a row before the scale grows (PyTorch's `growth_interval`).
pub const LOSS_SCALE_GROWTH_INTERVAL: u32 = 2000;
/// The scale never goes below this (a floor so that a run of bad steps cannot
/// drive it to zero; PyTorch has none, its scale reaches 0 only after ~1000
/// bad steps in a row, a broken run either way).
pub const MIN_LOSS_SCALE: f64 = 1.0 / 65536.0;

/// The state of dynamic loss scaling: the current scale and the good steps
/// since it last changed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LossScaler {
    scale: f64,
    good_steps: u32,
    growth_interval: u32,
}

impl Default for LossScaler {
    fn default() -> Self {
        LossScaler::new()
    }
}

impl LossScaler {
    /// Scale [`INITIAL_LOSS_SCALE`], growth every [`LOSS_SCALE_GROWTH_INTERVAL`] good steps.
    pub fn new() -> LossScaler {
        LossScaler { scale: INITIAL_LOSS_SCALE, good_steps: 0, growth_interval: LOSS_SCALE_GROWTH_INTERVAL }
    }

    /// As [`LossScaler::new`] with another growth interval (>= 1).
    pub fn with_growth_interval(interval: u32) -> LossScaler {
        LossScaler { growth_interval: interval.max(1), ..LossScaler::new() }
    }

    /// A scaler restored from `(scale, good_steps)` ([`LossScaler::state`]);
    /// `None` when the scale is not a positive finite number.
    pub fn from_state(scale: f64, good_steps: u32) -> Option<LossScaler> {
        (scale.is_finite() && scale > 0.0).then(|| LossScaler { scale, good_steps, ..LossScaler::new() })
    }

    /// `(scale, good_steps)`, what a resume needs.
    pub fn state(&self) -> (f64, u32) {
        (self.scale, self.good_steps)
    }

    /// The factor to multiply the loss by before the backward pass.
    pub fn scale(&self) -> f64 {
        self.scale
    }

    /// Records a backward pass whose unscaled gradients were all finite
    /// (`grads_finite`) or not, and returns whether the optimizer step is to
    /// be taken: not finite -> `false`, the scale halves; finite -> `true`,
    /// and after the growth interval of such steps in a row the scale doubles.
    pub fn update(&mut self, grads_finite: bool) -> bool {
        if !grads_finite {
            self.scale = (self.scale * LOSS_SCALE_BACKOFF).max(MIN_LOSS_SCALE);
            self.good_steps = 0;
            return false;
        }
        self.good_steps += 1;
        if self.good_steps >= self.growth_interval {
            self.scale *= LOSS_SCALE_GROWTH;
            self.good_steps = 0;
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inf_gradients_skip_the_step_and_halve_the_scale_good_ones_grow_it() {
        let mut s = LossScaler::with_growth_interval(3);
        assert_eq!(s.scale(), 65536.0);
        assert!(!s.update(false), "inf grads: the step is skipped");
        assert_eq!(s.scale(), 32768.0);
        assert!(s.update(true) && s.update(true));
        assert_eq!(s.scale(), 32768.0, "two good steps of three: no growth yet");
        assert!(!s.update(false));
        assert_eq!(s.state(), (16384.0, 0), "a bad step resets the count");
        for _ in 0..3 {
            assert!(s.update(true));
        }
        assert_eq!(s.state(), (32768.0, 0), "three good steps in a row double it");
        for _ in 0..100 {
            s.update(false);
        }
        assert_eq!(s.scale(), MIN_LOSS_SCALE);
        assert_eq!(LossScaler::from_state(8.0, 5).unwrap().state(), (8.0, 5));
        assert!(LossScaler::from_state(f64::NAN, 0).is_none() && LossScaler::from_state(0.0, 0).is_none());
        assert_eq!(LossScaler::default().state(), (INITIAL_LOSS_SCALE, 0));
    }
}
