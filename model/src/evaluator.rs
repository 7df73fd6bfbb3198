//! [`NetEvaluator`]: the network as an MCTS [`Evaluator`].
//!
//! Encodes a batch of positions into one `[batch, planes, rows, cols]` tensor,
//! runs one forward pass without gradients, then per position takes the
//! policy logits of the legal moves (by `GameState::action_index`), applies a
//! softmax over them (legal-move masking), and turns the (win, draw, loss)
//! logits into `value = P(win) - P(loss)` for the side to move.

use std::marker::PhantomData;

use martian_rules::{GameState, Move};
use martian_search::{EvalError, Evaluation, Evaluator};
use tch::{Device, Kind, Tensor};

use crate::resnet::PolicyValueNet;

/// The network as a batched evaluator for game `G`.
pub struct NetEvaluator<'a, G> {
    net: &'a PolicyValueNet,
    device: Device,
    input: Vec<f32>,
    policy: Vec<f32>,
    value: Vec<f32>,
    max_batch: usize,
    fixed: bool,
    /// Forward passes run.
    pub batches: u64,
    /// Positions evaluated.
    pub positions: u64,
    /// Seconds spent in forward passes (including host/device copies).
    pub forward_seconds: f64,
    _game: PhantomData<G>,
}

impl<'a, G: GameState> NetEvaluator<'a, G> {
    /// An evaluator running `net` on `device`, at most `max_batch` positions per pass.
    pub fn new(net: &'a PolicyValueNet, device: Device, max_batch: usize) -> Self {
        NetEvaluator {
            net,
            device,
            input: Vec::new(),
            policy: Vec::new(),
            value: Vec::new(),
            max_batch: max_batch.max(1),
            fixed: false,
            batches: 0,
            positions: 0,
            forward_seconds: 0.0,
            _game: PhantomData,
        }
    }

    /// An evaluator whose every forward pass has exactly `batch` rows: a call
    /// is split into chunks of `batch` positions and the last chunk is padded
    /// with zero planes. On the CPU with a fixed thread count libtorch then
    /// gives each position bit-identical outputs whatever the other rows hold
    /// or where the position sits in the batch (`model/tests/batch_invariance.rs`);
    /// with passes of varying size the outputs differ in the last bits. Self-play
    /// uses it so that a game's moves depend only on its seed, id and network.
    pub fn fixed(net: &'a PolicyValueNet, device: Device, batch: usize) -> Self {
        NetEvaluator { fixed: true, ..Self::new(net, device, batch) }
    }

    fn run_chunk(&mut self, positions: &[&G], moves: &[&[Move]], out: &mut [Evaluation]) -> Result<(), EvalError> {
        let [c, h, w] = G::INPUT_SHAPE;
        let plane = c * h * w;
        let n = positions.len();
        let b = if self.fixed { self.max_batch } else { n };
        self.input.resize(b * plane, 0.0);
        for (i, p) in positions.iter().enumerate() {
            p.encode(&mut self.input[i * plane..(i + 1) * plane]);
        }
        self.input[n * plane..].fill(0.0);
        let t0 = std::time::Instant::now();
        {
            let _guard = tch::no_grad_guard();
            let x = Tensor::f_from_slice(&self.input)
                .and_then(|t| t.f_view([b as i64, c as i64, h as i64, w as i64]))
                .and_then(|t| t.f_to_device(self.device))
                .map_err(|e| EvalError(e.to_string()))?;
            let out_t = self.net.forward(&x, false);
            let pl = out_t.policy_logits.to_device(Device::Cpu).to_kind(Kind::Float).contiguous();
            let vl = out_t.value_logits.softmax(-1, Kind::Float).to_device(Device::Cpu).contiguous();
            self.policy.resize(b * G::NUM_ACTIONS, 0.0);
            self.value.resize(b * 3, 0.0);
            pl.f_copy_data(&mut self.policy, b * G::NUM_ACTIONS).map_err(|e| EvalError(e.to_string()))?;
            vl.f_copy_data(&mut self.value, b * 3).map_err(|e| EvalError(e.to_string()))?;
        }
        self.forward_seconds += t0.elapsed().as_secs_f64();
        self.batches += 1;
        self.positions += n as u64;
        for (i, (p, ms)) in positions.iter().zip(moves).enumerate() {
            let logits = &self.policy[i * G::NUM_ACTIONS..(i + 1) * G::NUM_ACTIONS];
            let e = &mut out[i];
            e.priors.clear();
            let mut max = f32::NEG_INFINITY;
            for &m in ms.iter() {
                let l = logits[p.action_index(m)];
                e.priors.push(l);
                max = max.max(l);
            }
            let mut sum = 0.0;
            for x in e.priors.iter_mut() {
                *x = (*x - max).exp();
                sum += *x;
            }
            if sum > 0.0 && sum.is_finite() {
                e.priors.iter_mut().for_each(|x| *x /= sum);
            } else {
                let u = 1.0 / ms.len().max(1) as f32;
                e.priors.iter_mut().for_each(|x| *x = u);
            }
            let wdl = &self.value[i * 3..i * 3 + 3];
            e.value = (wdl[0] - wdl[2]).clamp(-1.0, 1.0);
        }
        Ok(())
    }
}

impl<G: GameState> Evaluator<G> for NetEvaluator<'_, G> {
    fn evaluate(&mut self, positions: &[&G], moves: &[&[Move]], out: &mut Vec<Evaluation>) -> Result<(), EvalError> {
        out.resize_with(positions.len(), Evaluation::default);
        let mut start = 0;
        while start < positions.len() {
            let end = (start + self.max_batch).min(positions.len());
            self.run_chunk(&positions[start..end], &moves[start..end], &mut out[start..end])?;
            start = end;
        }
        Ok(())
    }

    fn max_batch(&self) -> usize {
        self.max_batch
    }
}
