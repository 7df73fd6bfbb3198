//! The residual policy/value network (AlphaZero's architecture, with KataGo's
//! optional global pooling; He et al. 2016 for residual blocks).
//!
//! ```text
//! input [B, planes, H, W]
//!   -> stem: conv3x3(planes -> C) [-> BN] -> ReLU
//!   -> blocks x { conv3x3 [-> BN] -> ReLU [-> + gpool bias] -> conv3x3 [-> BN] -> + skip -> ReLU }
//!   -> policy head: conv1x1(C -> Pc) [-> BN] -> ReLU -> flatten -> linear(Pc*H*W -> NUM_ACTIONS)
//!   -> value head:  conv1x1(C -> 2) -> ReLU -> flatten -> linear(2*H*W -> hidden) -> ReLU -> linear(hidden -> 3)
//!      (with `model.value_players` = n > 2, the vector head: ... -> linear(hidden -> n) -> tanh)
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
use crate::precision::Precision;

/// Network outputs for a batch.
#[derive(Debug)]
pub struct PolicyValue {
    /// `[batch, NUM_ACTIONS]` float32 raw logits over the action encoding
    /// (canonical orientation of the side to move).
    pub policy_logits: Tensor,
    /// `[batch, 3]` float32 raw logits of (win, draw, loss) for the side to
    /// move; with a vector value head (`model.value_players` = n > 2)
    /// `[batch, n]` values in `[-1, 1]` (after the tanh), one per value
    /// player in mover-relative order (the mover first).
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

/// A convolution with stride 1 and zero padding `padding` (tch's `nn::conv2d`
/// variables, run by hand so that the pass can follow the precision rule).
#[derive(Debug)]
struct Conv {
    ws: Tensor,
    bs: Option<Tensor>,
    padding: i64,
}

impl Conv {
    fn new(p: nn::Path, cin: i64, cout: i64, k: i64, bias: bool) -> Conv {
        let padding = k / 2;
        let nn::Conv2D { ws, bs, .. } =
            nn::conv2d(p, cin, cout, k, nn::ConvConfig { padding, bias, ..Default::default() });
        Conv { ws, bs, padding }
    }

    /// `[B, cin, H, W]` -> `[B, cout, H, W]` float32; computed in `prec`'s kind
    /// (input, weight and bias cast to it, the output cast back).
    fn forward(&self, x: &Tensor, prec: Precision) -> Tensor {
        let k = prec.kind();
        let (s, pad) = ([1i64, 1], [self.padding, self.padding]);
        if k == Kind::Float && self.ws.kind() == Kind::Float {
            // The fp32 pass: tch's `Conv2D::forward`, call for call.
            return x.conv2d(&self.ws, self.bs.as_ref(), s, pad, [1, 1], 1);
        }
        let bs = self.bs.as_ref().map(|b| b.to_kind(k));
        x.to_kind(k).conv2d(&self.ws.to_kind(k), bs.as_ref(), s, pad, [1, 1], 1).to_kind(Kind::Float)
    }

    fn copy_as(&self, k: Kind) -> Conv {
        Conv { ws: cast_copy(&self.ws, k), bs: self.bs.as_ref().map(|b| cast_copy(b, k)), padding: self.padding }
    }
}

/// A linear layer (tch's `nn::linear` variables).
#[derive(Debug)]
struct Linear {
    ws: Tensor,
    bs: Option<Tensor>,
}

impl Linear {
    fn new(p: nn::Path, cin: i64, cout: i64) -> Linear {
        let nn::Linear { ws, bs } = nn::linear(p, cin, cout, Default::default());
        Linear { ws, bs }
    }

    /// `[B, cin]` -> `[B, cout]` float32, computed in `prec`'s kind.
    fn forward(&self, x: &Tensor, prec: Precision) -> Tensor {
        let k = prec.kind();
        if k == Kind::Float && self.ws.kind() == Kind::Float {
            return x.linear(&self.ws, self.bs.as_ref());
        }
        let bs = self.bs.as_ref().map(|b| b.to_kind(k));
        x.to_kind(k).linear(&self.ws.to_kind(k), bs.as_ref()).to_kind(Kind::Float)
    }

    fn copy_as(&self, k: Kind) -> Linear {
        Linear { ws: cast_copy(&self.ws, k), bs: self.bs.as_ref().map(|b| cast_copy(b, k)) }
    }
}

/// Batch normalisation (tch's `nn::batch_norm2d` variables and defaults:
/// eps 1e-5, momentum 0.1), always in float32.
#[derive(Debug)]
struct BatchNorm {
    ws: Option<Tensor>,
    bs: Option<Tensor>,
    running_mean: Tensor,
    running_var: Tensor,
}

impl BatchNorm {
    fn new(p: nn::Path, c: i64) -> BatchNorm {
        let nn::BatchNorm { ws, bs, running_mean, running_var, .. } = nn::batch_norm2d(p, c, Default::default());
        BatchNorm { ws, bs, running_mean, running_var }
    }

    fn forward_t(&self, x: &Tensor, train: bool) -> Tensor {
        // tch's `BatchNorm::forward_t`, call for call.
        Tensor::batch_norm(
            x,
            self.ws.as_ref(),
            self.bs.as_ref(),
            Some(&self.running_mean),
            Some(&self.running_var),
            train,
            0.1,
            1e-5,
            true,
        )
    }

    /// The same tensors (shared, not copied): batch norm stays fp32.
    fn share(&self) -> BatchNorm {
        BatchNorm {
            ws: self.ws.as_ref().map(Tensor::shallow_clone),
            bs: self.bs.as_ref().map(Tensor::shallow_clone),
            running_mean: self.running_mean.shallow_clone(),
            running_var: self.running_var.shallow_clone(),
        }
    }
}

/// A detached copy of `t` in kind `k` (a new tensor even when `t` is already `k`).
fn cast_copy(t: &Tensor, k: Kind) -> Tensor {
    let _g = tch::no_grad_guard();
    t.detach().to_kind(k).copy()
}

/// A scalar head shaped like the value head with one output (the auxiliary
/// heads): conv1x1(C -> 2, bias) -> ReLU -> flatten -> fc1 -> ReLU -> fc2 -> 1.
#[derive(Debug)]
struct ScalarHead {
    conv: Conv,
    fc1: Linear,
    fc2: Linear,
}

impl ScalarHead {
    fn new(p: nn::Path, c: i64, cells: i64, hidden: i64) -> ScalarHead {
        ScalarHead {
            conv: Conv::new(&p / "conv", c, 2, 1, true),
            fc1: Linear::new(&p / "fc1", 2 * cells, hidden),
            fc2: Linear::new(&p / "fc2", hidden, 1),
        }
    }

    /// `[batch]` outputs of the trunk features `h` `[batch, C, H, W]`.
    fn forward(&self, h: &Tensor, prec: Precision) -> Tensor {
        let y = self.conv.forward(h, prec).relu().flatten(1, -1);
        self.fc2.forward(&self.fc1.forward(&y, prec).relu(), prec).squeeze_dim(1)
    }

    fn copy_as(&self, k: Kind) -> ScalarHead {
        ScalarHead { conv: self.conv.copy_as(k), fc1: self.fc1.copy_as(k), fc2: self.fc2.copy_as(k) }
    }
}

#[derive(Debug)]
struct ConvBn {
    conv: Conv,
    bn: Option<BatchNorm>,
}

impl ConvBn {
    fn new(p: nn::Path, cin: i64, cout: i64, k: i64, batch_norm: bool) -> ConvBn {
        let conv = Conv::new(&p / "conv", cin, cout, k, !batch_norm);
        let bn = batch_norm.then(|| BatchNorm::new(&p / "bn", cout));
        ConvBn { conv, bn }
    }

    fn forward_t(&self, x: &Tensor, train: bool, prec: Precision) -> Tensor {
        let y = self.conv.forward(x, prec);
        match &self.bn {
            Some(bn) => bn.forward_t(&y, train),
            None => y,
        }
    }

    fn copy_as(&self, k: Kind) -> ConvBn {
        ConvBn { conv: self.conv.copy_as(k), bn: self.bn.as_ref().map(BatchNorm::share) }
    }
}

#[derive(Debug)]
struct ResBlock {
    a: ConvBn,
    b: ConvBn,
    gpool: Option<Linear>,
}

impl ResBlock {
    fn forward_t(&self, x: &Tensor, train: bool, prec: Precision) -> Tensor {
        let y = self.a.forward_t(x, train, prec).relu();
        // Global pooling: per-channel mean and max over the board -> linear -> channel bias.
        // (Out of place: autograd needs the ReLU output unchanged.)
        let y = match &self.gpool {
            Some(g) => {
                let mean = y.mean_dim(&[2i64, 3][..], false, Kind::Float);
                let max = y.amax(&[2i64, 3][..], false);
                let bias = g.forward(&Tensor::cat(&[mean, max], 1), prec);
                y + bias.unsqueeze(-1).unsqueeze(-1)
            }
            None => y,
        };
        (self.b.forward_t(&y, train, prec) + x).relu()
    }

    fn copy_as(&self, k: Kind) -> ResBlock {
        ResBlock { a: self.a.copy_as(k), b: self.b.copy_as(k), gpool: self.gpool.as_ref().map(|g| g.copy_as(k)) }
    }
}

/// The policy/value network. Variable names in checkpoints follow the field
/// names: `stem.conv.weight`, `blocks.3.a.bn.running_mean`, `policy.fc.weight`, ...
#[derive(Debug)]
pub struct PolicyValueNet {
    stem: ConvBn,
    blocks: Vec<ResBlock>,
    policy_conv: ConvBn,
    policy_fc: Linear,
    value_conv: Conv,
    value_fc1: Linear,
    value_fc2: Linear,
    /// Variables `moves_left.{conv,fc1,fc2}.*` when `model.moves_left_head` is on.
    moves_left: Option<ScalarHead>,
    /// Variables `score.{conv,fc1,fc2}.*` when `model.score_head` is on.
    score: Option<ScalarHead>,
    input_shape: [usize; 3],
    num_actions: usize,
    /// Value players of a vector value head; 0 for the (win, draw, loss) head.
    vector_players: usize,
    /// Precision of [`PolicyValueNet::forward`] and [`PolicyValueNet::forward_all`]:
    /// fp32 for a network built by [`PolicyValueNet::new`], `p` for
    /// [`PolicyValueNet::inference_copy`]`(p)`.
    precision: Precision,
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
                    gpool: (cfg.global_pooling && i % 2 == 1).then(|| Linear::new(&bp / "gpool", 2 * c, c)),
                }
            })
            .collect();
        let pc = cfg.policy_channels as i64;
        let policy_conv = ConvBn::new(p / "policy", c, pc, 1, bn);
        let policy_fc = Linear::new(p / "policy" / "fc", pc * rows * cols, num_actions as i64);
        let value_conv = Conv::new(p / "value" / "conv", c, 2, 1, true);
        let vh = cfg.value_hidden as i64;
        let value_fc1 = Linear::new(p / "value" / "fc1", 2 * rows * cols, vh);
        let value_fc2 = Linear::new(p / "value" / "fc2", vh, cfg.value_outputs() as i64);
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
            vector_players: if cfg.vector_value() { cfg.value_players as usize } else { 0 },
            precision: Precision::Fp32,
        }
    }

    /// A copy of the network for inference in precision `p`: the weights
    /// and biases of the convolutions and linear layers are cast to `p`'s
    /// kind once (new tensors, detached: no gradients reach the original),
    /// the batch-norm tensors are shared with this network (fp32), and its
    /// [`PolicyValueNet::forward`] runs in `p`. For `p` fp32 the copy holds
    /// fp32 copies of the weights and gives this network's outputs. Self-play
    /// and matches run such a copy ([`crate::NetBackend::with_precision`]),
    /// so that the weights are not cast again on every pass; the trainer
    /// casts the fp32 master weights on each pass instead
    /// ([`PolicyValueNet::forward_all_in`]). Weights changed in this network
    /// after the copy do not reach the copy (batch-norm statistics do).
    pub fn inference_copy(&self, p: Precision) -> PolicyValueNet {
        let k = p.kind();
        PolicyValueNet {
            stem: self.stem.copy_as(k),
            blocks: self.blocks.iter().map(|b| b.copy_as(k)).collect(),
            policy_conv: self.policy_conv.copy_as(k),
            policy_fc: self.policy_fc.copy_as(k),
            value_conv: self.value_conv.copy_as(k),
            value_fc1: self.value_fc1.copy_as(k),
            value_fc2: self.value_fc2.copy_as(k),
            moves_left: self.moves_left.as_ref().map(|h| h.copy_as(k)),
            score: self.score.as_ref().map(|h| h.copy_as(k)),
            input_shape: self.input_shape,
            num_actions: self.num_actions,
            vector_players: self.vector_players,
            precision: p,
        }
    }

    /// The precision of [`PolicyValueNet::forward`] (fp32 unless this is an
    /// [`PolicyValueNet::inference_copy`]).
    pub fn precision(&self) -> Precision {
        self.precision
    }

    /// Input shape `[planes, rows, cols]`.
    pub fn input_shape(&self) -> [usize; 3] {
        self.input_shape
    }

    /// Width of the policy head.
    pub fn num_actions(&self) -> usize {
        self.num_actions
    }

    /// Value players of the vector value head (`model.value_players` > 2),
    /// or `None` for the (win, draw, loss) head.
    pub fn vector_value_players(&self) -> Option<usize> {
        (self.vector_players > 0).then_some(self.vector_players)
    }

    /// Values per row of the value output: 3 (win, draw, loss) or the
    /// vector head's players.
    pub fn value_outputs(&self) -> usize {
        if self.vector_players > 0 {
            self.vector_players
        } else {
            3
        }
    }

    /// Whether the network has the moves-left head (`model.moves_left_head`).
    pub fn has_moves_left_head(&self) -> bool {
        self.moves_left.is_some()
    }

    /// Whether the network has the score head (`model.score_head`).
    pub fn has_score_head(&self) -> bool {
        self.score.is_some()
    }

    fn trunk(&self, x: &Tensor, train: bool, prec: Precision) -> Tensor {
        let mut h = self.stem.forward_t(x, train, prec).relu();
        for b in &self.blocks {
            h = b.forward_t(&h, train, prec);
        }
        h
    }

    fn main_heads(&self, h: &Tensor, train: bool, prec: Precision) -> (Tensor, Tensor) {
        let p = self.policy_conv.forward_t(h, train, prec).relu().flatten(1, -1);
        let policy_logits = self.policy_fc.forward(&p, prec);
        let v = self.value_conv.forward(h, prec).relu().flatten(1, -1);
        let value_logits = self.value_fc2.forward(&self.value_fc1.forward(&v, prec).relu(), prec);
        let value_logits = if self.vector_players > 0 { value_logits.tanh() } else { value_logits };
        (policy_logits, value_logits)
    }

    /// Forward pass of the policy and value heads (the auxiliary heads are
    /// not computed: `moves_left` and `score` are `None`). `x`: `[batch,
    /// planes, rows, cols]` float32 on the net's device. `train` selects
    /// batch-norm training behaviour. Runs in the network's precision
    /// ([`PolicyValueNet::precision`]); the outputs are float32 whatever it is.
    pub fn forward(&self, x: &Tensor, train: bool) -> PolicyValue {
        let h = self.trunk(x, train, self.precision);
        let (policy_logits, value_logits) = self.main_heads(&h, train, self.precision);
        PolicyValue { policy_logits, value_logits, moves_left: None, score: None }
    }

    /// [`PolicyValueNet::forward`] in inference mode plus the score head
    /// when the network has one (`score`: `[batch]`, the final point
    /// difference for the side to move / [`crate::SCORE_SCALE`]; `None`
    /// without the head); the moves-left head is not computed. The search's
    /// pass: the score lead and score utility of KataGo (Wu 2019, §4.2).
    pub fn forward_with_score(&self, x: &Tensor) -> PolicyValue {
        let h = self.trunk(x, false, self.precision);
        let (policy_logits, value_logits) = self.main_heads(&h, false, self.precision);
        let score = self.score.as_ref().map(|m| m.forward(&h, self.precision));
        PolicyValue { policy_logits, value_logits, moves_left: None, score }
    }

    /// [`PolicyValueNet::forward`] plus the auxiliary heads the network has
    /// (`moves_left`, `score`: `[batch]` each, `None` for a head it lacks).
    /// The trainer's pass; the policy and value outputs equal `forward`'s.
    pub fn forward_all(&self, x: &Tensor, train: bool) -> PolicyValue {
        self.forward_all_in(x, train, self.precision)
    }

    /// [`PolicyValueNet::forward_all`] in precision `prec` (the trainer's
    /// pass): the convolutions and linear layers compute in `prec`'s kind,
    /// their weights cast from the fp32 master weights on this pass (the cast
    /// is differentiable, so the gradients reach the fp32 variables); batch
    /// norm and the heads' outputs are float32 (the rule in
    /// [`crate::precision`]).
    pub fn forward_all_in(&self, x: &Tensor, train: bool, prec: Precision) -> PolicyValue {
        let h = self.trunk(x, train, prec);
        let (policy_logits, value_logits) = self.main_heads(&h, train, prec);
        PolicyValue {
            policy_logits,
            value_logits,
            moves_left: self.moves_left.as_ref().map(|m| m.forward(&h, prec)),
            score: self.score.as_ref().map(|m| m.forward(&h, prec)),
        }
    }
}

impl ModuleT for PolicyValueNet {
    /// Concatenation `[batch, NUM_ACTIONS + 3]` of policy and value logits
    /// (`NUM_ACTIONS + n` with a vector value head of `n` players)
    /// (the layout of the exported TorchScript module; the auxiliary heads
    /// are not part of it).
    fn forward_t(&self, xs: &Tensor, train: bool) -> Tensor {
        let out = self.forward(xs, train);
        Tensor::cat(&[out.policy_logits, out.value_logits], 1)
    }
}
