//! The rules switches of martian-chess spec §15 for the two-player game.

use serde::{Deserialize, Serialize};

use crate::error::RulesError;
use crate::game::Side;
use crate::pyramids::{ClockMode, EmptyZoneTie, Switches};

/// Rules configuration of two-player Martian Chess (spec §15). `Default` is the
/// standard rule set. Read from TOML/JSON with serde; unknown keys are rejected
/// and missing keys take their default.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MartianRules {
    /// `players` (spec §15): only 2 is implemented; 4 (spec §14) is
    /// [`RulesError::Unsupported`].
    pub players: u8,
    /// `first_player` (spec §3): who moves first in [`crate::GameState::new_game`].
    pub first_player: Side,
    /// `field_promotion` (spec §7): Drone + Pawn -> Queen and Pawn + Pawn -> Drone merges.
    pub field_promotion: bool,
    /// `promotion_supply_check` (spec §7): only `false` is implemented.
    pub promotion_supply_check: bool,
    /// `no_undo` (spec §8): the move undoing the opponent's last ply is banned for one turn.
    pub no_undo: bool,
    /// `clock` (spec §9.2): `Auto` or `Off`; `Manual` is [`RulesError::Unsupported`].
    pub clock: ClockMode,
    /// `tie_on_empty_zone` (spec §9.1).
    pub tie_on_empty_zone: EmptyZoneTie,
    /// `max_plies` (spec §9.3): the game is scored once this many plies were played
    /// (ties on the cap are draws, spec §15 `tie_on_clock_or_cap`).
    pub max_plies: u32,
}

impl Default for MartianRules {
    fn default() -> Self {
        MartianRules {
            players: 2,
            first_player: Side::South,
            field_promotion: true,
            promotion_supply_check: false,
            no_undo: true,
            clock: ClockMode::Auto,
            tie_on_empty_zone: EmptyZoneTie::LastMoverWins,
            max_plies: 300,
        }
    }
}

impl MartianRules {
    /// Checks that every switch has an implemented value.
    ///
    /// # Errors
    /// [`RulesError::Unsupported`] for `players != 2`, `promotion_supply_check = true`
    /// or `clock = Manual`.
    pub fn validate(&self) -> Result<(), RulesError> {
        if self.players != 2 {
            return Err(RulesError::Unsupported { option: "players", value: self.players.to_string() });
        }
        if self.promotion_supply_check {
            return Err(RulesError::Unsupported { option: "promotion_supply_check", value: "true".into() });
        }
        if self.clock == ClockMode::Manual {
            return Err(RulesError::Unsupported { option: "clock", value: "Manual".into() });
        }
        Ok(())
    }

    /// The switches the shared code of both games reads.
    pub(crate) fn switches(&self) -> Switches {
        Switches { field_promotion: self.field_promotion, clock: self.clock, max_plies: self.max_plies }
    }
}
