//! Network architecture settings (the `[model]` table of a run config).

use serde::{Deserialize, Serialize};

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
    /// Hidden units of the value head's fully connected layer. Range 1..=4096.
    pub value_hidden: u32,
}

impl Default for ModelConfig {
    fn default() -> Self {
        ModelConfig {
            blocks: 6,
            channels: 64,
            batch_norm: true,
            global_pooling: true,
            policy_channels: 8,
            value_hidden: 64,
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
        check("value_hidden", self.value_hidden, 1, 4096)
    }
}
