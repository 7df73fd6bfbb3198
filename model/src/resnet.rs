//! The residual policy/value network (AlphaZero's architecture, with KataGo's
//! optional global pooling; He et al. 2016 for residual blocks).
//!
//! ```text
//! input [B, planes, H, W]
//!   -> stem: conv3x3(planes -> C) [-> BN] -> ReLU
//!   -> blocks x { conv3x3 [-> BN] -> ReLU [-> + gpool bias] -> conv3x3 [-> BN] -> + skip -> ReLU }
//!   -> policy head: conv1x1(C -> Pc) [-> BN] -> ReLU -> flatten -> linear(Pc*H*W -> NUM_ACTIONS)
//!   -> value head:  conv1x1(C -> 2) -> ReLU -> flatten -> linear(2*H*W -> hidden) -> ReLU -> linear(hidden -> 3)
//! ```

use tch::nn::{self, ModuleT};
use tch::{Kind, Tensor};

use crate::config::ModelConfig;

/// Network outputs for a batch.
#[derive(Debug)]
pub struct PolicyValue {
    /// `[batch, NUM_ACTIONS]` float32 raw logits over the action encoding
    /// (canonical orientation of the side to move).
    pub policy_logits: Tensor,
    /// `[batch, 3]` float32 raw logits of (win, draw, loss) for the side to move.
    pub value_logits: Tensor,
}

#[derive(Debug)]
struct ConvBn {
    conv: nn::Conv2D,
    bn: Option<nn::BatchNorm>,
}

impl ConvBn {
    fn new(p: nn::Path, cin: i64, cout: i64, k: i64, batch_norm: bool) -> ConvBn {
        let cfg = nn::ConvConfig { padding: k / 2, bias: !batch_norm, ..Default::default() };
        let conv = nn::conv2d(&p / "conv", cin, cout, k, cfg);
        let bn = batch_norm.then(|| nn::batch_norm2d(&p / "bn", cout, Default::default()));
        ConvBn { conv, bn }
    }

    fn forward_t(&self, x: &Tensor, train: bool) -> Tensor {
        let y = x.apply(&self.conv);
        match &self.bn {
            Some(bn) => y.apply_t(bn, train),
            None => y,
        }
    }
}

#[derive(Debug)]
struct ResBlock {
    a: ConvBn,
    b: ConvBn,
    gpool: Option<nn::Linear>,
}

impl ResBlock {
    fn forward_t(&self, x: &Tensor, train: bool) -> Tensor {
        let y = self.a.forward_t(x, train).relu();
        // Global pooling: per-channel mean and max over the board -> linear -> channel bias.
        // (Out of place: autograd needs the ReLU output unchanged.)
        let y = match &self.gpool {
            Some(g) => {
                let mean = y.mean_dim(&[2i64, 3][..], false, Kind::Float);
                let max = y.amax(&[2i64, 3][..], false);
                let bias = Tensor::cat(&[mean, max], 1).apply(g);
                y + bias.unsqueeze(-1).unsqueeze(-1)
            }
            None => y,
        };
        (self.b.forward_t(&y, train) + x).relu()
    }
}

/// The policy/value network. Variable names in checkpoints follow the field
/// names: `stem.conv.weight`, `blocks.3.a.bn.running_mean`, `policy.fc.weight`, ...
#[derive(Debug)]
pub struct PolicyValueNet {
    stem: ConvBn,
    blocks: Vec<ResBlock>,
    policy_conv: ConvBn,
    policy_fc: nn::Linear,
    value_conv: nn::Conv2D,
    value_fc1: nn::Linear,
    value_fc2: nn::Linear,
    input_shape: [usize; 3],
    num_actions: usize,
}

impl PolicyValueNet {
    /// Builds the network's variables under `p` for inputs of shape
    /// `input_shape = [planes, rows, cols]` and `num_actions` policy outputs.
    pub fn new(p: &nn::Path, cfg: &ModelConfig, input_shape: [usize; 3], num_actions: usize) -> PolicyValueNet {
        let [planes, rows, cols] = input_shape.map(|x| x as i64);
        let c = cfg.channels as i64;
        let bn = cfg.batch_norm;
        let stem = ConvBn::new(p / "stem", planes, c, 3, bn);
        let blocks = (0..cfg.blocks as usize)
            .map(|i| {
                let bp = p / "blocks" / i;
                ResBlock {
                    a: ConvBn::new(&bp / "a", c, c, 3, bn),
                    b: ConvBn::new(&bp / "b", c, c, 3, bn),
                    gpool: (cfg.global_pooling && i % 2 == 1)
                        .then(|| nn::linear(&bp / "gpool", 2 * c, c, Default::default())),
                }
            })
            .collect();
        let pc = cfg.policy_channels as i64;
        let policy_conv = ConvBn::new(p / "policy", c, pc, 1, bn);
        let policy_fc = nn::linear(p / "policy" / "fc", pc * rows * cols, num_actions as i64, Default::default());
        let value_conv = nn::conv2d(p / "value" / "conv", c, 2, 1, nn::ConvConfig { bias: true, ..Default::default() });
        let vh = cfg.value_hidden as i64;
        let value_fc1 = nn::linear(p / "value" / "fc1", 2 * rows * cols, vh, Default::default());
        let value_fc2 = nn::linear(p / "value" / "fc2", vh, 3, Default::default());
        PolicyValueNet {
            stem,
            blocks,
            policy_conv,
            policy_fc,
            value_conv,
            value_fc1,
            value_fc2,
            input_shape,
            num_actions,
        }
    }

    /// Input shape `[planes, rows, cols]`.
    pub fn input_shape(&self) -> [usize; 3] {
        self.input_shape
    }

    /// Width of the policy head.
    pub fn num_actions(&self) -> usize {
        self.num_actions
    }

    /// Forward pass. `x`: `[batch, planes, rows, cols]` float32 on the net's device.
    /// `train` selects batch-norm training behaviour.
    pub fn forward(&self, x: &Tensor, train: bool) -> PolicyValue {
        let mut h = self.stem.forward_t(x, train).relu();
        for b in &self.blocks {
            h = b.forward_t(&h, train);
        }
        let policy_logits = self.policy_conv.forward_t(&h, train).relu().flatten(1, -1).apply(&self.policy_fc);
        let value_logits =
            h.apply(&self.value_conv).relu().flatten(1, -1).apply(&self.value_fc1).relu().apply(&self.value_fc2);
        PolicyValue { policy_logits, value_logits }
    }
}

impl ModuleT for PolicyValueNet {
    /// Concatenation `[batch, NUM_ACTIONS + 3]` of policy and value logits
    /// (the layout of the exported TorchScript module).
    fn forward_t(&self, xs: &Tensor, train: bool) -> Tensor {
        let out = self.forward(xs, train);
        Tensor::cat(&[out.policy_logits, out.value_logits], 1)
    }
}
