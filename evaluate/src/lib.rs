//! Evaluation for MartianZero: the [`Player`] interface and simple players
//! (including the alpha-beta baseline [`AlphaBetaPlayer`]), matches with
//! paired openings ([`play_match`], [`play_match_book`], [`gauntlet`]) from a
//! stored [`OpeningBook`], Elo with a 95% interval ([`elo_estimate`]),
//! Bradley-Terry ratings over a whole run ([`fit_ratings`]) and the SPRT
//! ([`SprtParams`], as in fishtest).
#![warn(missing_docs)]

mod arena;
mod batched;
mod book;
mod elo;
mod player;
mod ratings;
mod spec;
mod sprt;

pub use arena::{gauntlet, play_game, play_match, play_match_book, random_opening, GameResult, MatchResult};
pub use batched::{play_match_mcts, summarize_games, MctsSide};
pub use book::{OpeningBook, BALANCED_SCORE};
pub use elo::{elo_estimate, elo_from_score, wilson_interval, EloEstimate};
pub use player::{AlphaBetaPlayer, GreedyPlayer, MctsPlayer, Player, PlayerError, RandomPlayer};
pub use ratings::{fit_ratings, rate_against_fixed, FixedAnchorRating, PairResult, Rating, Ratings};
pub use spec::{MctsParts, PlayerSpec, SpecError};
pub use sprt::{expected_score, llr_logistic, SprtDecision, SprtParams, SprtState};
