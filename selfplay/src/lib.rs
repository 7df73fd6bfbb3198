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
pub mod label;
pub mod names;
mod overlap;
pub mod record;
pub mod shard;

pub use config::{PolicyTarget, SelfplayConfig};
pub use driver::{
    play_games, set_end_targets, surprise_weights, FinishedGame, PlayParams, Sample, SelfplayStats, TargetStats,
};
pub use label::{fit_score_scale, label_game, LabelParams};
pub use overlap::play_games_on_devices;
pub use record::{winner_name, Contempt, GameRecord};
pub use shard::{
    check_samples, read_shard, shard_game_ids, shard_len, write_shard, SampleCheck, ShardData, ShardError,
};

/// Packs samples into shard arrays (dense policy targets).
///
/// `game_ids[i]` is the game of `samples[i]`. The `moves_left` array is
/// always written; the `score` array only when every sample has a score
/// target (a game with points) and there is at least one sample; the
/// `values` array only when every sample has per-player targets of the same
/// length (a game of more than two value players).
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
    let mut moves_left = ndarray::Array1::<f32>::zeros(n);
    let has_score = n > 0 && samples.iter().all(|(_, s)| s.score.is_some());
    let mut score = ndarray::Array1::<f32>::zeros(if has_score { n } else { 0 });
    // Per-player targets when every sample has them (a game of more players).
    let players = samples.first().map_or(0, |(_, s)| s.values.len());
    let has_values = n > 0 && players > 2 && samples.iter().all(|(_, s)| s.values.len() == players);
    let mut values = ndarray::Array2::<f32>::zeros(if has_values { (n, players) } else { (0, 0) });
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
        moves_left[i] = s.moves_left;
        if has_score {
            score[i] = s.score.unwrap_or(0.0);
        }
        if has_values {
            for (k, &v) in s.values.iter().enumerate() {
                values[[i, k]] = v;
            }
        }
    }
    ShardData {
        planes,
        policy,
        legal,
        value,
        game_id,
        ply,
        weight,
        moves_left: Some(moves_left),
        score: has_score.then_some(score),
        values: has_values.then_some(values),
    }
}
