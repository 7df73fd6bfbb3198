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
mod result;
mod spec;
mod sprt;

pub use arena::{
    a_score_of, a_seating, games_per_group, gauntlet, groups_for_games, play_game, play_game_as, play_match,
    play_match_book, seatings,
};
pub use batched::{play_match_mcts, MctsSide};
pub use book::{random_opening, OpeningBook, BALANCED_SCORE};
pub use elo::{elo_estimate, elo_estimate_from_score, elo_from_score, wilson_interval, EloEstimate};
pub use player::{AlphaBetaPlayer, GreedyPlayer, MctsPlayer, Player, PlayerError, RandomPlayer};
pub use ratings::{fit_ratings, rate_against_fixed, FixedAnchorRating, PairResult, Rating, Ratings};
pub use result::{summarize_games, ColourScore, GameResult, MatchResult};
pub use spec::{MctsParts, PlayerSpec, SpecError, StaticValues};
pub use sprt::{expected_score, llr_logistic, SprtDecision, SprtParams, SprtState};
