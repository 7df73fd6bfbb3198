//! Errors for user input: position strings, move text, rules options.

use std::fmt;

use thiserror::Error;

/// What is wrong with a position string.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PositionErrorKind {
    /// Wrong number of space-separated fields.
    FieldCount {
        /// Fields the format has.
        expected: usize,
        /// Fields found.
        found: usize,
    },
    /// Wrong number of `/`-separated ranks.
    RankCount {
        /// Ranks the board has.
        expected: usize,
        /// Ranks found.
        found: usize,
    },
    /// A character that is no piece letter or digit.
    BadPieceLetter(char),
    /// A rank describes more squares than the board is wide.
    RankTooLong {
        /// Rank number (1-based).
        rank: usize,
    },
    /// A rank describes fewer squares than the board is wide.
    RankTooShort {
        /// Rank number (1-based).
        rank: usize,
    },
    /// A run of empty squares that is not a valid number (e.g. `0`).
    BadEmptyRun(String),
    /// The side-to-move field is not one of the allowed letters.
    BadSide {
        /// Text found.
        text: String,
        /// The allowed values, e.g. `S or N`.
        expected: &'static str,
    },
    /// A field that must hold a number does not.
    BadNumber {
        /// Field name.
        field: &'static str,
        /// Text found.
        text: String,
    },
    /// A field with a fixed vocabulary holds something else.
    BadField {
        /// Field name.
        field: &'static str,
        /// Text found.
        text: String,
    },
    /// A number above the field's largest allowed value.
    NumberTooLarge {
        /// Field name.
        field: &'static str,
        /// Text found.
        text: String,
        /// The largest allowed value.
        max: u64,
    },
    /// A field holds something other than the values it allows.
    BadFieldExpected {
        /// Field name.
        field: &'static str,
        /// Text found.
        text: String,
        /// The allowed values, e.g. `- or a countdown 0..=14`.
        expected: String,
    },
    /// Too many or too few pieces of a kind.
    PieceCount {
        /// Piece name (as in the spec).
        piece: &'static str,
        /// Side name.
        side: &'static str,
        /// Count found.
        count: usize,
        /// Rule broken.
        rule: &'static str,
    },
    /// Any other violated validity rule.
    Invalid(String),
}

impl fmt::Display for PositionErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PositionErrorKind::FieldCount { expected, found } => {
                write!(f, "expected {expected} space-separated fields, found {found}")
            }
            PositionErrorKind::RankCount { expected, found } => {
                write!(f, "expected {expected} ranks separated by '/', found {found}")
            }
            PositionErrorKind::BadPieceLetter(c) => write!(f, "bad piece letter {c:?}"),
            PositionErrorKind::RankTooLong { rank } => write!(f, "rank {rank} has too many squares"),
            PositionErrorKind::RankTooShort { rank } => write!(f, "rank {rank} has too few squares"),
            PositionErrorKind::BadEmptyRun(s) => write!(f, "bad run of empty squares {s:?}"),
            PositionErrorKind::BadSide { text, expected } => {
                write!(f, "bad side to move {text:?} (expected {expected})")
            }
            PositionErrorKind::BadNumber { field, text } => write!(f, "field {field}: {text:?} is not a valid number"),
            PositionErrorKind::BadField { field, text } => write!(f, "field {field}: {text:?} is not allowed"),
            PositionErrorKind::NumberTooLarge { field, text, max } => {
                write!(f, "field {field}: {text:?} is above the largest allowed value, {max}")
            }
            PositionErrorKind::BadFieldExpected { field, text, expected } => {
                write!(f, "field {field}: {text:?} is not allowed (expected {expected})")
            }
            PositionErrorKind::PieceCount { piece, side, count, rule } => {
                write!(f, "{side} has {count} {piece}(s): {rule}")
            }
            PositionErrorKind::Invalid(s) => f.write_str(s),
        }
    }
}

/// Errors of the rules core. Every variant names the offending text.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum RulesError {
    /// A malformed or invalid position string.
    #[error("bad position string {text:?}: {kind}")]
    Position {
        /// What is wrong.
        kind: PositionErrorKind,
        /// The whole position string given.
        text: String,
    },
    /// Move text that is not `<from><to>` with valid squares.
    #[error("bad move text {text:?}: {reason}")]
    BadMoveText {
        /// The text given.
        text: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A well-formed move that is not legal in the position.
    #[error("illegal move {mv}; legal moves: {legal}")]
    IllegalMove {
        /// The move, as text.
        mv: String,
        /// All legal moves, space-separated (`none, the game is over` when it is).
        legal: String,
    },
    /// A game name that is not one of [`crate::GameKind::ALL`].
    #[error("unknown game {name:?}; the games are: {known}")]
    UnknownGame {
        /// The name given.
        name: String,
        /// The known names, comma-separated.
        known: String,
    },
    /// A rules switch value that is not implemented.
    #[error("rules option {option} = {value} is not implemented")]
    Unsupported {
        /// Switch name, as in the spec's switch table.
        option: &'static str,
        /// The value asked for.
        value: String,
    },
    /// A rules switch value outside the switch's valid range.
    #[error("rules option {option} = {value} is invalid: {reason}")]
    InvalidOption {
        /// Switch name, as in the spec's switch table.
        option: &'static str,
        /// The value given.
        value: String,
        /// The valid values.
        reason: &'static str,
    },
}
