//! Game records: one JSON line per finished game (`games/*.jsonl`).

use martian_rules::{EndReason, GameKind};
use serde::{Deserialize, Serialize};

/// Version of the game-record layout.
pub const RECORD_FORMAT_VERSION: u32 = 1;

/// One self-play game: enough to replay it and regenerate its training data.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GameRecord {
    /// Layout version ([`RECORD_FORMAT_VERSION`]).
    pub format_version: u32,
    /// Which game.
    pub game: GameKind,
    /// Id of the game, unique within a run (worker-qualified by the file name).
    pub game_id: u64,
    /// The start position string.
    pub start: String,
    /// Moves played, `<from><to>`.
    pub moves: Vec<String>,
    /// Winner's side name (e.g. "Orange"), or `None` for a draw.
    pub winner: Option<String>,
    /// What ended the game.
    pub reason: EndReason,
    /// Plies played.
    pub plies: u32,
    /// Moves that got a full search and became training samples.
    pub samples: u32,
    /// The model that played (checkpoint file name, or "uniform").
    pub model: String,
}
