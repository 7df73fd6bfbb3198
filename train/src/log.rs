//! The training log: step statistics averaged over the steps between two
//! lines of `train.jsonl` ([`Metrics`]).

use std::time::Instant;

use crate::trainer::{Metrics, StepStats};

/// Sums of [`StepStats`] since the last logged line, turned into one
/// [`Metrics`] line by [`MetricsLog::take`] (means over the steps, samples per
/// second since the previous line).
#[derive(Clone, Debug)]
pub struct MetricsLog {
    /// Policy, value, total loss, accuracy, value MSE.
    sums: [f64; 5],
    /// Moves-left and score losses, when the network has those heads.
    aux: [Option<f64>; 2],
    /// fp16: steps the loss scaler skipped.
    skipped: u32,
    /// Steps summed.
    steps: u32,
    /// The loss scale of the last step (fp16).
    loss_scale: Option<f64>,
    since: Instant,
}

impl Default for MetricsLog {
    fn default() -> Self {
        MetricsLog { sums: [0.0; 5], aux: [None; 2], skipped: 0, steps: 0, loss_scale: None, since: Instant::now() }
    }
}

impl MetricsLog {
    /// Adds one step.
    pub fn add(&mut self, st: &StepStats) {
        for (a, v) in
            self.sums.iter_mut().zip([st.policy_loss, st.value_loss, st.total_loss, st.policy_accuracy, st.value_mse])
        {
            *a += v;
        }
        for (a, v) in self.aux.iter_mut().zip([st.moves_left_loss, st.score_loss]) {
            if let Some(v) = v {
                *a = Some(a.unwrap_or(0.0) + v);
            }
        }
        self.skipped += u32::from(st.skipped);
        self.loss_scale = st.loss_scale;
        self.steps += 1;
    }

    /// Steps added since the last [`MetricsLog::take`].
    pub fn steps(&self) -> u32 {
        self.steps
    }

    /// The line for the steps added since the last call (means over them;
    /// `samples_per_s` from `batch_size` and the time since then), and a fresh
    /// start. `step`, `generation`, `lr` and `window` describe the last step.
    pub fn take(&mut self, step: u64, generation: u32, lr: f64, batch_size: u32, window: usize) -> Metrics {
        let n = f64::from(self.steps.max(1));
        let s = self.sums;
        let m = Metrics {
            step,
            generation,
            lr,
            policy_loss: s[0] / n,
            value_loss: s[1] / n,
            total_loss: s[2] / n,
            policy_accuracy: s[3] / n,
            value_mse: s[4] / n,
            moves_left_loss: self.aux[0].map(|x| x / n),
            score_loss: self.aux[1].map(|x| x / n),
            loss_scale: self.loss_scale,
            skipped_steps: self.loss_scale.map(|_| self.skipped),
            samples_per_s: f64::from(self.steps) * f64::from(batch_size) / self.since.elapsed().as_secs_f64().max(1e-9),
            window,
        };
        *self = MetricsLog::default();
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stats(total: f64, aux: Option<f64>, scale: Option<f64>, skipped: bool) -> StepStats {
        StepStats {
            policy_loss: total - 1.0,
            value_loss: 1.0,
            total_loss: total,
            policy_accuracy: 0.5,
            value_mse: 0.25,
            moves_left_loss: aux,
            score_loss: None,
            loss_scale: scale,
            skipped,
        }
    }

    #[test]
    fn a_line_is_the_mean_of_its_steps_and_starts_afresh() {
        let mut log = MetricsLog::default();
        log.add(&stats(3.0, Some(0.2), None, false));
        log.add(&stats(2.0, Some(0.4), None, false));
        assert_eq!(log.steps(), 2);
        let m = log.take(20, 1, 0.002, 64, 1000);
        assert_eq!((m.step, m.generation, m.window), (20, 1, 1000));
        assert!((m.total_loss - 2.5).abs() < 1e-12 && (m.policy_loss - 1.5).abs() < 1e-12);
        assert!((m.moves_left_loss.unwrap() - 0.3).abs() < 1e-12);
        assert_eq!((m.score_loss, m.loss_scale, m.skipped_steps), (None, None, None));
        assert!(m.samples_per_s > 0.0);
        assert_eq!(log.steps(), 0);
        // fp16: the last scale and the skipped steps of the line.
        log.add(&stats(1.0, None, Some(1024.0), true));
        log.add(&stats(1.0, None, Some(512.0), false));
        let m = log.take(22, 1, 0.002, 64, 1000);
        assert_eq!((m.loss_scale, m.skipped_steps, m.moves_left_loss), (Some(512.0), Some(1), None));
    }
}
