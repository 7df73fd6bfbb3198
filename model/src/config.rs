//! Network architecture settings (the `[model]` table of a run config).

use martian_rules::GameState;
use serde::{Deserialize, Serialize};

use crate::precision::Precision;

/// Residual policy/value network shape.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ModelConfig {
    /// Residual blocks in the tower (AlphaZero 19-39, KataGo 6-40). Range 1..=64.
    pub blocks: u32,
    /// Channels of every tower convolution (3x3). Range 8..=1024.
    pub channels: u32,
    /// Batch normalisation after each convolution. Without it the convolutions
    /// get biases (KataGo's later nets drop batch norm).
    pub batch_norm: bool,
    /// KataGo-style global pooling: in every second block, the mean and max of
    /// the first convolution's channels feed a linear layer whose output is
    /// added as a per-channel bias, so the whole board informs every square.
    pub global_pooling: bool,
    /// Channels of the 1x1 convolution of the policy head. Range 1..=256.
    pub policy_channels: u32,
    /// Hidden units of the value head's fully connected layer (and of the
    /// auxiliary heads' own). Range 1..=4096.
    pub value_hidden: u32,
    /// Auxiliary moves-left head (lc0's MLH): predicts the plies left until
    /// the game ends, divided by [`MOVES_LEFT_SCALE`]; trained with a Huber
    /// loss weighted by `train.moves_left_loss_weight`. A training signal
    /// only: search does not read it. Default false.
    pub moves_left_head: bool,
    /// Auxiliary score head (KataGo's score): predicts the final point
    /// difference (the side to move's points minus the opponent's, divided by
    /// [`SCORE_SCALE`]); trained with a Huber loss weighted by
    /// `train.score_loss_weight`. Only for games with points (Martian Chess;
    /// a Jetan config with it is an error). A training signal only. Default false.
    pub score_head: bool,
    /// Precision of the convolutions and linear layers in self-play and
    /// training (`"fp32"`, `"bf16"`, `"fp16"`; [`Precision`], whose module
    /// documents the rule). Not an architecture field: the weights are fp32
    /// whatever the precision, a checkpoint's sidecar never records it
    /// ([`ModelConfig::architecture`]), and a run may change it between
    /// generations. Default `"fp32"` (written only when it differs).
    #[serde(skip_serializing_if = "Precision::is_fp32")]
    pub precision: Precision,
    /// Value players of the value head (`GameState::num_players` of the
    /// game under its rules). 2 (the default, written only when it differs):
    /// the (win, draw, loss) head of the side to move. More (4 for
    /// four-player free-for-all, `[rules] teams = false`): a **vector value
    /// head** of that many outputs, tanh, the expected result of every player
    /// in mover-relative order (the mover first, then the players after it in
    /// index order), trained with a mean squared error against the game's
    /// per-player result (`train.value_loss_weight`). Must equal the game's
    /// number ([`ModelConfig::validate_for_players`]).
    #[serde(skip_serializing_if = "is_two")]
    pub value_players: u32,
}

fn is_two(n: &u32) -> bool {
    *n == 2
}

/// Plies per unit of the moves-left head's output and target (lc0's scale:
/// 20 plies = 1.0), so that the target is of the order of the other losses'
/// quantities (a 300-ply Martian Chess cap is 15, a 500-ply Jetan cap 25).
pub const MOVES_LEFT_SCALE: f32 = 20.0;

/// Points per unit of the score head's output and target (10 pips = 1.0;
/// a Martian Chess set holds 36 pips, so a final difference is within ±3.6).
pub const SCORE_SCALE: f32 = 10.0;

impl Default for ModelConfig {
    fn default() -> Self {
        ModelConfig {
            blocks: 6,
            channels: 64,
            batch_norm: true,
            global_pooling: true,
            policy_channels: 8,
            value_hidden: 64,
            moves_left_head: false,
            score_head: false,
            precision: Precision::Fp32,
            value_players: 2,
        }
    }
}

impl ModelConfig {
    /// Checks ranges; the error names the field.
    ///
    /// # Errors
    /// `model.<field> ...` for the first value out of range.
    pub fn validate(&self) -> Result<(), String> {
        let check = |name: &str, v: u32, lo: u32, hi: u32| {
            if (lo..=hi).contains(&v) {
                Ok(())
            } else {
                Err(format!("model.{name} must be in {lo}..={hi}, got {v}"))
            }
        };
        check("blocks", self.blocks, 1, 64)?;
        check("channels", self.channels, 8, 1024)?;
        check("policy_channels", self.policy_channels, 1, 256)?;
        check("value_hidden", self.value_hidden, 1, 4096)?;
        check("value_players", self.value_players, 2, martian_rules::MAX_PLAYERS as u32)
    }

    /// Whether the value head is the vector head ([`ModelConfig::value_players`] > 2).
    pub fn vector_value(&self) -> bool {
        self.value_players > 2
    }

    /// Values per row of the value head's output: 3 (win, draw, loss logits)
    /// for two value players, else [`ModelConfig::value_players`].
    pub fn value_outputs(&self) -> usize {
        if self.vector_value() {
            self.value_players as usize
        } else {
            3
        }
    }

    /// [`ModelConfig::validate_for`], and that the value head fits a game of
    /// `players` value players (`GameState::num_players` under the run's
    /// rules).
    ///
    /// # Errors
    /// As [`ModelConfig::validate_for`], or `model.value_players ...` naming
    /// both numbers.
    pub fn validate_for_players<G: GameState>(&self, players: usize) -> Result<(), String> {
        self.validate_for::<G>()?;
        if self.value_players as usize != players {
            let hint = if players > 2 {
                format!("set model.value_players = {players} (a vector value head)")
            } else {
                "remove model.value_players (or set it to 2)".to_string()
            };
            return Err(format!(
                "model.value_players = {} does not fit {} under these rules, which has {players} value players \
                 (free-for-all has one per seat, teams two): {hint}",
                self.value_players,
                G::KIND
            ));
        }
        Ok(())
    }

    /// [`ModelConfig::validate`], and that the heads fit game `G`: the score
    /// head needs a game with points ([`GameState::HAS_SCORE`]).
    ///
    /// # Errors
    /// As [`ModelConfig::validate`], or `model.score_head ...` naming the game.
    pub fn validate_for<G: GameState>(&self) -> Result<(), String> {
        self.validate()?;
        if self.score_head && !G::HAS_SCORE {
            return Err(format!(
                "model.score_head = true needs a game with points (martian-chess); {} has none: \
                 remove the key or set it to false",
                G::KIND
            ));
        }
        Ok(())
    }

    /// The architecture alone: this config with `precision` reset to fp32
    /// (what checkpoints record and compare; the precision is a run setting).
    pub fn architecture(&self) -> ModelConfig {
        ModelConfig { precision: Precision::Fp32, ..self.clone() }
    }

    /// Whether any auxiliary head (moves left, score) is on.
    pub fn has_aux_heads(&self) -> bool {
        self.moves_left_head || self.score_head
    }
}
