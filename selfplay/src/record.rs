//! Game records: one JSON line per finished game (`games/*.jsonl`).
//!
//! Layout versions:
//!
//! * 1: game, id, start position, moves, result, plies, samples, model.
//! * 2: adds `rules`, the game's rules switches (the game's `Rules` struct as
//!   JSON, every switch written out), so a record replays under the rules it
//!   was played with. Version 1 records still read; they carry no rules.
//!
//! # The winner
//! `winner` names who won, as [`winner_name`] writes it: the winning side's
//! name in a two-sided game (`Orange`, `South`; in the four-player team game
//! the team, `SW+NE` or `NW+SE`), `null` for a draw. In four-player
//! free-for-all (martian-chess §14.7, `teams = false`) every game has
//! winners: the seat that won (`NW`), or the seats that shared the win, in
//! seat order and separated by commas (`SW,NE`; `SW,NW,NE,SE` when all four
//! share it). Records written before the seats were named (the same layout
//! versions 1 and 2) hold the free-for-all games' team view there instead
//! (`SW+NE`, `NW+SE` or `null`, [`martian_rules::Outcome`]'s winner); they
//! still read and replay ([`GameRecord::replay`] accepts either), and a
//! reader tells them apart by the `+` or the `null`, which seat names never
//! have.

use martian_rules::{describe_differences, value_differences, EndReason, GameKind, GameState};
use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Version of the game-record layout written by this program.
pub const RECORD_FORMAT_VERSION: u32 = 2;

/// The oldest record layout that still reads (version 1, without `rules`).
pub const OLDEST_RECORD_FORMAT_VERSION: u32 = 1;

/// One self-play game: enough to replay it and regenerate its training data.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GameRecord {
    /// Layout version ([`RECORD_FORMAT_VERSION`]; version 1 still reads).
    pub format_version: u32,
    /// Which game.
    pub game: GameKind,
    /// The rules switches the game was played under (the game's `Rules` as
    /// JSON); absent in version 1 records.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rules: Option<serde_json::Value>,
    /// Id of the game, unique within a run (worker-qualified by the file name).
    pub game_id: u64,
    /// The start position string.
    pub start: String,
    /// Moves played, `<from><to>`.
    pub moves: Vec<String>,
    /// Who won ([`winner_name`], module docs): the side's name (e.g.
    /// "Orange"), in four-player free-for-all the seat or seats (`NW`,
    /// `SW,NE`); `None` for a draw.
    pub winner: Option<String>,
    /// What ended the game.
    pub reason: EndReason,
    /// Plies played.
    pub plies: u32,
    /// Moves that got a full search and became training samples.
    pub samples: u32,
    /// The model that played (checkpoint file name, or "uniform").
    pub model: String,
    /// The game's contempt (`search.contempt`, drawn per game): the side for
    /// which the search valued a draw at `-value`; absent when off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contempt: Option<Contempt>,
    /// The game's draw aversion (`search.draw_aversion`, drawn per game from
    /// `[0, draw_aversion]`): both sides' search valued a draw at minus this;
    /// absent when off.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub draw_aversion: Option<f32>,
    /// The alpha-beta scores of the samples' positions (centi-units, side to
    /// move, one per sample in ply order) when self-play labelled them
    /// (`selfplay.label_depth`, the `label` module); absent otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub label_scores: Vec<i32>,
}

/// The draw utility one self-play game searched with ([`GameRecord::contempt`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Contempt {
    /// The side that valued a draw at `-value` (e.g. "Black"; the other
    /// valued it at `+value`), or `"material"`: in each position the side
    /// ahead on material (`search.contempt_mode = "material"`).
    pub side: String,
    /// The contempt, in `0..=0.5` (units of the value: a win is 1).
    pub value: f32,
}

/// What is wrong with a game record. Every message names the record's game id
/// (or the line) and the problem.
#[derive(Debug, Error, PartialEq)]
pub enum RecordError {
    /// The line is not a record of a layout this program reads.
    #[error("game record: {0}")]
    Parse(String),
    /// The record is for another game.
    #[error("game record {game_id}: it is a {found} game, expected {expected}")]
    Game {
        /// The record's id.
        game_id: u64,
        /// Its game.
        found: GameKind,
        /// The game asked for.
        expected: GameKind,
    },
    /// The record's rules differ from the rules asked for.
    #[error("game record {game_id}: {differences}")]
    Rules {
        /// The record's id.
        game_id: u64,
        /// `rules differ (record vs expected): max_plies 300 vs 500; ...`.
        differences: String,
    },
    /// The record does not replay: bad start, illegal move, or another result.
    #[error("game record {game_id}: {message}")]
    Replay {
        /// The record's id.
        game_id: u64,
        /// What failed.
        message: String,
    },
}

impl GameRecord {
    /// Parses one line of a `games/*.jsonl` file (layout version 1 or 2).
    ///
    /// # Errors
    /// [`RecordError::Parse`] naming the JSON problem or an unknown version.
    pub fn from_json_line(line: &str) -> Result<GameRecord, RecordError> {
        let r: GameRecord = serde_json::from_str(line).map_err(|e| RecordError::Parse(e.to_string()))?;
        if !(OLDEST_RECORD_FORMAT_VERSION..=RECORD_FORMAT_VERSION).contains(&r.format_version) {
            return Err(RecordError::Parse(format!(
                "format_version {} is not supported (expected {OLDEST_RECORD_FORMAT_VERSION} to {RECORD_FORMAT_VERSION})",
                r.format_version
            )));
        }
        Ok(r)
    }

    /// Checks that the record is a game of `G` played under `rules`. A
    /// version 1 record carries no rules; only its game is checked.
    ///
    /// # Errors
    /// [`RecordError::Game`], or [`RecordError::Rules`] naming each differing
    /// switch (`rules differ (record vs expected): max_plies 300 vs 500`).
    pub fn check<G: GameState>(&self, rules: &G::Rules) -> Result<(), RecordError> {
        if self.game != G::KIND {
            return Err(RecordError::Game { game_id: self.game_id, found: self.game, expected: G::KIND });
        }
        let Some(recorded) = &self.rules else { return Ok(()) };
        let expected =
            serde_json::to_value(rules).map_err(|e| RecordError::Parse(format!("rules not serializable: {e}")))?;
        let d = value_differences(recorded, &expected);
        if d.is_empty() {
            Ok(())
        } else {
            Err(RecordError::Rules {
                game_id: self.game_id,
                differences: describe_differences("rules", ("record", "expected"), &d),
            })
        }
    }

    /// The rules recorded with the game, as `G`'s rules (`None` for a version
    /// 1 record).
    ///
    /// # Errors
    /// [`RecordError::Game`] for another game; [`RecordError::Parse`] if the
    /// recorded rules are not valid rules of `G`.
    pub fn recorded_rules<G: GameState>(&self) -> Result<Option<G::Rules>, RecordError> {
        if self.game != G::KIND {
            return Err(RecordError::Game { game_id: self.game_id, found: self.game, expected: G::KIND });
        }
        self.rules
            .as_ref()
            .map(|v| {
                serde_json::from_value(v.clone()).map_err(|e| {
                    RecordError::Parse(format!("record {}: rules are not valid {} rules: {e}", self.game_id, G::KIND))
                })
            })
            .transpose()
    }

    /// Replays the record under `rules` (checked first with
    /// [`GameRecord::check`]) and returns the final state, after checking
    /// that it is finished with the recorded winner and reason.
    ///
    /// # Errors
    /// As [`GameRecord::check`], or [`RecordError::Replay`] for a bad start
    /// position, an illegal move, or a different result.
    pub fn replay<G: GameState>(&self, rules: &G::Rules) -> Result<G, RecordError> {
        self.check::<G>(rules)?;
        let fail = |message: String| RecordError::Replay { game_id: self.game_id, message };
        let mut g = G::from_position(&self.start, rules).map_err(|e| fail(format!("start position: {e}")))?;
        for (i, m) in self.moves.iter().enumerate() {
            let mv = g.parse_move(m).map_err(|e| fail(format!("move {} ({m}): {e}", i + 1)))?;
            g.play_unchecked(mv);
        }
        let Some(o) = g.outcome() else {
            return Err(fail(format!("the game is not over after its moves (recorded: {:?})", self.reason)));
        };
        // A record written before free-for-all winners were seats holds the
        // team view (module docs); both name the same result.
        let team_view = o.winner.map(|w| G::side_name(w).to_string());
        if o.reason != self.reason || (self.winner != winner_name(&g) && self.winner != team_view) {
            return Err(fail(format!(
                "replayed result ({:?}, {:?}) differs from the recorded ({:?}, {:?})",
                winner_name(&g),
                o.reason,
                self.winner,
                self.reason
            )));
        }
        Ok(g)
    }
}

/// Who won the finished game `end`, as game records write it (module docs):
/// [`GameState::winner_name`], the one rule of records and match results.
pub fn winner_name<G: GameState>(end: &G) -> Option<String> {
    end.winner_name()
}

#[cfg(test)]
mod tests {
    use super::*;
    use martian_rules::martian::{MartianChess, MartianRules};

    #[test]
    fn version_1_records_still_read() {
        let line = r#"{"format_version":1,"game":"martian-chess","game_id":7,"start":"QQD1/QDP1/DPP1/4/4/1PPD/1PDQ/1DQQ S 0 0 - - 0 0","moves":[],"winner":null,"reason":"MoveCap","plies":0,"samples":0,"model":"uniform"}"#;
        let r = GameRecord::from_json_line(line).unwrap();
        assert_eq!((r.format_version, r.rules.clone()), (1, None));
        assert_eq!(r.recorded_rules::<MartianChess>().unwrap(), None);
        r.check::<MartianChess>(&MartianRules::default()).unwrap();
        let bad = line.replace("\"format_version\":1", "\"format_version\":9");
        let e = GameRecord::from_json_line(&bad).unwrap_err().to_string();
        assert!(e.contains("format_version 9"), "{e}");
    }
}
