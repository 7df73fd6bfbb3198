//! Evaluation for MartianZero: the [`Player`] interface and simple players,
//! matches with paired openings ([`play_match`]), and Elo with a 95% interval
//! ([`elo_estimate`]).
#![warn(missing_docs)]

mod arena;
mod elo;
mod player;

pub use arena::{play_game, play_match, random_opening, GameResult, MatchResult};
pub use elo::{elo_estimate, elo_from_score, EloEstimate};
pub use player::{GreedyPlayer, MctsPlayer, Player, PlayerError, RandomPlayer};
