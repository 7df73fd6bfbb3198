//! Rules core for the "Martian chess" games played by MartianZero:
//!
//! * [`jetan`]: Jetan, the 10x10 game of E. R. Burroughs' *The Chessmen of Mars*
//!   (`docs/rules/jetan.md` in the repository is the specification);
//! * [`martian`]: Andrew Looney's Martian Chess, two players on 4x8
//!   (`docs/rules/martian-chess.md`);
//! * [`martian4`]: the same game for four players on 8x8, in teams or
//!   free-for-all (`docs/rules/martian-chess.md` §14).
//!
//! All implement [`GameState`], the one interface that search, self-play and
//! training use without knowing which game they play.
//!
//! ```
//! use martian_rules::martian::MartianChess;
//! use martian_rules::GameState;
//!
//! // The start position under the standard rules, its 10 legal moves, one played.
//! let mut game = MartianChess::new_game(&Default::default())?;
//! let mut moves = Vec::new();
//! game.legal_moves(&mut moves);
//! assert_eq!(moves.len(), 10);
//! game.play(moves[0])?;
//! assert_eq!(game.ply(), 1);
//! assert!(game.outcome().is_none());
//! # Ok::<(), martian_rules::RulesError>(())
//! ```
//!
#![warn(missing_docs)]

pub mod ab;
mod diff;
mod error;
mod game;
pub mod jetan;
pub mod martian;
pub mod martian4;
mod perft;
mod planes;
mod pyramids;
mod registry;

pub use diff::{describe_differences, field_differences, value_differences};
pub use error::{PositionErrorKind, RulesError};
pub use game::{
    has_winning_move_by_play, mix64, EncodingDescription, EndReason, GameKind, GameState, Move, Outcome, Side,
    MAX_PLAYERS,
};
pub use perft::{divide, perft};
pub use planes::{pack_planes, unpack_planes, PackedPlane, MAX_INPUT_PLANES, MAX_PLANE_CELLS};
