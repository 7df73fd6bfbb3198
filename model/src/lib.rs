//! The policy/value network of MartianZero (libtorch through `tch`):
//! a residual tower ([`PolicyValueNet`]), checkpoints ([`checkpoint`]) and the
//! MCTS evaluator backed by the network ([`NetEvaluator`], and [`NetBackend`]
//! for the device side of self-play, one [`NetReplica`] per device).
//!
//! Tensor conventions:
//! * input `[batch, planes, rows, cols]` float32, planes as written by
//!   `GameState::encode` (side to move at the bottom);
//! * `policy_logits` `[batch, NUM_ACTIONS]`, raw logits over the game's action encoding;
//! * `value_logits` `[batch, 3]`, raw logits of (win, draw, loss) for the side to move;
//! * with the auxiliary heads on and [`PolicyValueNet::forward_all`]: `moves_left`
//!   `[batch]` (plies left / [`MOVES_LEFT_SCALE`]) and `score` `[batch]` (final
//!   point difference for the side to move / [`SCORE_SCALE`]).
#![warn(missing_docs)]

pub mod checkpoint;
mod config;
mod device;
mod error;
mod evaluator;
pub mod export;
pub mod precision;
mod resnet;

pub use checkpoint::{Checkpoint, CheckpointMeta, ConfigModel, NetReplica};
pub use config::{ModelConfig, MOVES_LEFT_SCALE, SCORE_SCALE};
pub use device::{describe_device, parse_device, parse_devices};
pub use error::ModelError;
pub use evaluator::{expand_packed, packed_to_device, NetBackend, NetEvaluator};
pub use precision::{compare_outputs, OutputDifference, Precision};
pub use resnet::{PolicyValue, PolicyValueNet};
