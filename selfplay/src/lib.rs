//! Self-play for MartianZero: many games in flight with batched evaluation
//! ([`play_games`], lockstep with any evaluator; [`play_games_on_devices`],
//! game groups overlapping the CPU work with one or several devices), replay
//! shards ([`shard`]) and game records ([`record`]).
//!
//! This crate does not link libtorch; it is generic over
//! [`martian_search::Evaluator`] and [`martian_search::Backend`].
#![warn(missing_docs)]

mod config;
mod driver;
mod overlap;
pub mod record;
pub mod shard;

pub use config::{PolicyTarget, SelfplayConfig};
pub use driver::{play_games, surprise_weights, FinishedGame, PlayParams, Sample, SelfplayStats, TargetStats};
pub use overlap::play_games_on_devices;
pub use record::GameRecord;
pub use shard::{check_samples, read_shard, shard_len, write_shard, SampleCheck, ShardData, ShardError};

/// Packs samples into shard arrays (dense policy targets).
///
/// `game_ids[i]` is the game of `samples[i]`.
///
/// # Panics
/// If a sample's planes length differs from the product of `input_shape`.
pub fn pack_samples(samples: &[(u64, &Sample)], input_shape: [usize; 3], num_actions: usize) -> ShardData {
    let [c, h, w] = input_shape;
    let n = samples.len();
    let mut planes = ndarray::Array4::<f32>::zeros((n, c, h, w));
    let mut policy = ndarray::Array2::<f32>::zeros((n, num_actions));
    let mut legal = ndarray::Array2::<u8>::zeros((n, num_actions));
    let mut value = ndarray::Array1::<f32>::zeros(n);
    let mut game_id = ndarray::Array1::<i64>::zeros(n);
    let mut ply = ndarray::Array1::<i32>::zeros(n);
    let mut weight = ndarray::Array1::<f32>::ones(n);
    for (i, (gid, s)) in samples.iter().enumerate() {
        let flat = planes.as_slice_mut().expect("standard layout");
        flat[i * c * h * w..(i + 1) * c * h * w].copy_from_slice(&s.planes);
        for &a in &s.legal {
            legal[[i, a as usize]] = 1;
        }
        for &(a, p) in &s.policy {
            policy[[i, a as usize]] = p;
        }
        value[i] = s.value;
        game_id[i] = *gid as i64;
        ply[i] = s.ply as i32;
        weight[i] = s.weight;
    }
    ShardData { planes, policy, legal, value, game_id, ply, weight }
}
