//! The rules switches of martian-chess spec §15 that apply to the four-player
//! game (§14).

use serde::{Deserialize, Serialize};

use super::Seat;
use crate::error::RulesError;
use crate::pyramids::{ClockMode, EmptyZoneTie as EmptyQuadrantTie, Switches};

/// Turn order (spec §14.3, switch `turn_order`).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum TurnOrder {
    /// Standard: SW → NW → NE → SE → SW, clockwise seen from above with north
    /// at the top ("play passes to the left").
    #[default]
    Clockwise,
    /// SW → SE → NE → NW → SW.
    Counterclockwise,
}

/// Rules configuration of four-player Martian Chess (spec §14, switches of
/// §15). `Default` is the standard rule set. Read from TOML/JSON with serde;
/// unknown keys are rejected and missing keys take their default.
///
/// Switches of §15 that have only one value with four players are not
/// fields: `no_undo` is always off (§14.4) and `tie_on_clock_or_cap` is always
/// "draw" (free-for-all: the seats tied for the top share the win).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Martian4Rules {
    /// `first_seat` (§14.3): the mover of [`crate::GameState::new_game`]'s
    /// position. Position strings name their mover themselves.
    pub first_seat: Seat,
    /// `turn_order` (§14.3).
    pub turn_order: TurnOrder,
    /// `teams` (§14.7): on = SW + NE against NW + SE with added scores;
    /// off = free-for-all.
    pub teams: bool,
    /// `field_promotion` (§7, §14.4): Drone + Pawn -> Queen and Pawn + Pawn
    /// -> Drone merges inside the mover's quadrant.
    pub field_promotion: bool,
    /// `promotion_supply_check` (§7): only `false` is implemented.
    pub promotion_supply_check: bool,
    /// `clock` (§14.5).
    pub clock: ClockMode,
    /// `clock_plies` (§14.5): quiet plies (of all seats) that call the clock
    /// under `Auto`, and the countdown once it is called. At least 1.
    pub clock_plies: u32,
    /// `tie_on_empty_zone` (§14.7).
    pub tie_on_empty_zone: EmptyQuadrantTie,
    /// `max_plies` (§14.6): the game is scored once this many plies (of all
    /// seats together) were played; ties are draws (free-for-all: shared).
    pub max_plies: u32,
}

impl Default for Martian4Rules {
    fn default() -> Self {
        Martian4Rules {
            first_seat: Seat::SW,
            turn_order: TurnOrder::Clockwise,
            teams: true,
            field_promotion: true,
            promotion_supply_check: false,
            clock: ClockMode::Auto,
            clock_plies: 14,
            tie_on_empty_zone: EmptyQuadrantTie::LastMoverWins,
            max_plies: 300,
        }
    }
}

impl Martian4Rules {
    /// Checks that every switch has a valid, implemented value.
    ///
    /// # Errors
    /// [`RulesError::Unsupported`] for `promotion_supply_check = true`;
    /// [`RulesError::InvalidOption`] for `clock_plies = 0` or `u32::MAX`.
    pub fn validate(&self) -> Result<(), RulesError> {
        if self.promotion_supply_check {
            return Err(RulesError::Unsupported { option: "promotion_supply_check", value: "true".into() });
        }
        if self.clock_plies == 0 || self.clock_plies == u32::MAX {
            return Err(RulesError::InvalidOption {
                option: "clock_plies",
                value: self.clock_plies.to_string(),
                reason: "must be a positive number of plies below 4294967295",
            });
        }
        Ok(())
    }

    /// The seat that moves after `seat` under [`Martian4Rules::turn_order`].
    #[inline(always)]
    pub const fn next_seat(&self, seat: Seat) -> Seat {
        match self.turn_order {
            TurnOrder::Clockwise => Seat::from_index(seat.index() + 1),
            TurnOrder::Counterclockwise => Seat::from_index(seat.index() + 3),
        }
    }

    /// The seat that moved before `seat` under [`Martian4Rules::turn_order`].
    #[inline(always)]
    pub const fn previous_seat(&self, seat: Seat) -> Seat {
        match self.turn_order {
            TurnOrder::Clockwise => Seat::from_index(seat.index() + 3),
            TurnOrder::Counterclockwise => Seat::from_index(seat.index() + 1),
        }
    }

    /// The switches the shared code of both games reads (those of §15 that
    /// the two-player game has too).
    pub(crate) fn switches(&self) -> Switches {
        Switches { field_promotion: self.field_promotion, clock: self.clock, max_plies: self.max_plies }
    }

    /// Policy width under these rules (spec §14.9): 4096, doubled to 8192
    /// under [`ClockMode::Manual`] (+ 4096 = "and call the clock").
    pub const fn num_actions(&self) -> usize {
        match self.clock {
            ClockMode::Manual => 8192,
            _ => 4096,
        }
    }
}
