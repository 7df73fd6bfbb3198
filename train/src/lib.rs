//! Training for MartianZero: a replay window over self-play shards
//! ([`ReplayWindow`]), the loss ([`loss`]), the optimizer loop ([`Trainer`]), fp16 loss scaling ([`LossScaler`]),
//! and mirror augmentation ([`symmetry`]).
#![warn(missing_docs)]

mod config;
mod log;
pub mod loss;
pub mod optim;
mod replay;
pub mod scaler;
pub mod symmetry;
mod trainer;

pub use config::{LrSchedule, OptimizerKind, TrainConfig};
pub use log::MetricsLog;
pub use replay::{list_shards, shard_generation, total_positions, Batch, ReplayWindow};
pub use scaler::LossScaler;
pub use trainer::{Metrics, StepStats, TrainError, Trainer};
