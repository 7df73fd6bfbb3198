//! The residual policy/value network (AlphaZero's architecture, with KataGo's
//! optional global pooling; He et al. 2016 for residual blocks).
//!
//! ```text
//! input [B, planes, H, W]
//!   -> stem: conv3x3(planes -> C) [-> BN] -> ReLU
//!   -> blocks x { conv3x3 [-> BN] -> ReLU [-> + gpool bias] -> conv3x3 [-> BN] -> + skip -> ReLU }
//!   -> policy head: conv1x1(C -> Pc) [-> BN] -> ReLU -> flatten -> linear(Pc*H*W -> NUM_ACTIONS)
//!   -> value head:  conv1x1(C -> 2) -> ReLU -> flatten -> linear(2*H*W -> hidden) -> ReLU -> linear(hidden -> 3)
//!   -> optional auxiliary heads (`model.moves_left_head`, `model.score_head`), each shaped like the value head
//!      with one output: conv1x1(C -> 2) -> ReLU -> flatten -> linear(2*H*W -> hidden) -> ReLU -> linear(hidden -> 1)
//! ```
//!
//! The auxiliary heads are training signals (KataGo's auxiliary targets, Wu
//! 2019, arXiv 1902.10565; lc0's moves-left head): only
//! [`PolicyValueNet::forward_all`], used by the trainer, computes them; the
//! search's forward pass ([`PolicyValueNet::forward`]) and the exported module
//! leave them out, so they cost nothing at play time.

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
    /// `[batch]` float32 predicted plies left until the game ends, divided by
    /// [`crate::MOVES_LEFT_SCALE`]; only from [`PolicyValueNet::forward_all`]
    /// with `model.moves_left_head` on, else `None`.
    pub moves_left: Option<Tensor>,
    /// `[batch]` float32 predicted final point difference for the side to
    /// move, divided by [`crate::SCORE_SCALE`]; only from
    /// [`PolicyValueNet::forward_all`] with `model.score_head` on, else `None`.
    pub score: Option<Tensor>,
}

/// A scalar head shaped like the value head with one output (the auxiliary
/// heads): conv1x1(C -> 2, bias) -> ReLU -> flatten -> fc1 -> ReLU -> fc2 -> 1.
#[derive(Debug)]
struct ScalarHead {
    conv: nn::Conv2D,
    fc1: nn::Linear,
    fc2: nn::Linear,
}

impl ScalarHead {
    fn new(p: nn::Path, c: i64, cells: i64, hidden: i64) -> ScalarHead {
        ScalarHead {
            conv: nn::conv2d(&p / "conv", c, 2, 1, nn::ConvConfig { bias: true, ..Default::default() }),
            fc1: nn::linear(&p / "fc1", 2 * cells, hidden, Default::default()),
            fc2: nn::linear(&p / "fc2", hidden, 1, Default::default()),
        }
    }

    /// `[batch]` outputs of the trunk features `h` `[batch, C, H, W]`.
    fn forward(&self, h: &Tensor) -> Tensor {
        h.apply(&self.conv).relu().flatten(1, -1).apply(&self.fc1).relu().apply(&self.fc2).squeeze_dim(1)
    }
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
    /// Variables `moves_left.{conv,fc1,fc2}.*` when `model.moves_left_head` is on.
    moves_left: Option<ScalarHead>,
    /// Variables `score.{conv,fc1,fc2}.*` when `model.score_head` is on.
    score: Option<ScalarHead>,
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
        // Created after the main heads, so that turning them on leaves the
        // initial weights of every other layer (same seed) unchanged.
        let moves_left = cfg.moves_left_head.then(|| ScalarHead::new(p / "moves_left", c, rows * cols, vh));
        let score = cfg.score_head.then(|| ScalarHead::new(p / "score", c, rows * cols, vh));
        PolicyValueNet {
            stem,
            blocks,
            policy_conv,
            policy_fc,
            value_conv,
            value_fc1,
            value_fc2,
            moves_left,
            score,
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

    /// Whether the network has the moves-left head (`model.moves_left_head`).
    pub fn has_moves_left_head(&self) -> bool {
        self.moves_left.is_some()
    }

    /// Whether the network has the score head (`model.score_head`).
    pub fn has_score_head(&self) -> bool {
        self.score.is_some()
    }

    fn trunk(&self, x: &Tensor, train: bool) -> Tensor {
        let mut h = self.stem.forward_t(x, train).relu();
        for b in &self.blocks {
            h = b.forward_t(&h, train);
        }
        h
    }

    fn main_heads(&self, h: &Tensor, train: bool) -> (Tensor, Tensor) {
        let policy_logits = self.policy_conv.forward_t(h, train).relu().flatten(1, -1).apply(&self.policy_fc);
        let value_logits =
            h.apply(&self.value_conv).relu().flatten(1, -1).apply(&self.value_fc1).relu().apply(&self.value_fc2);
        (policy_logits, value_logits)
    }

    /// Forward pass of the policy and value heads (the auxiliary heads are
    /// not computed: `moves_left` and `score` are `None`). `x`: `[batch,
    /// planes, rows, cols]` float32 on the net's device. `train` selects
    /// batch-norm training behaviour.
    pub fn forward(&self, x: &Tensor, train: bool) -> PolicyValue {
        let h = self.trunk(x, train);
        let (policy_logits, value_logits) = self.main_heads(&h, train);
        PolicyValue { policy_logits, value_logits, moves_left: None, score: None }
    }

    /// [`PolicyValueNet::forward`] plus the auxiliary heads the network has
    /// (`moves_left`, `score`: `[batch]` each, `None` for a head it lacks).
    /// The trainer's pass; the policy and value outputs equal `forward`'s.
    pub fn forward_all(&self, x: &Tensor, train: bool) -> PolicyValue {
        let h = self.trunk(x, train);
        let (policy_logits, value_logits) = self.main_heads(&h, train);
        PolicyValue {
            policy_logits,
            value_logits,
            moves_left: self.moves_left.as_ref().map(|m| m.forward(&h)),
            score: self.score.as_ref().map(|m| m.forward(&h)),
        }
    }
}

impl ModuleT for PolicyValueNet {
    /// Concatenation `[batch, NUM_ACTIONS + 3]` of policy and value logits
    /// (the layout of the exported TorchScript module; the auxiliary heads
    /// are not part of it).
    fn forward_t(&self, xs: &Tensor, train: bool) -> Tensor {
        let out = self.forward(xs, train);
        Tensor::cat(&[out.policy_logits, out.value_logits], 1)
    }
}
