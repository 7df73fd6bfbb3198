//! The rules switches of spec §15 that both games have, with the same values.

use serde::{Deserialize, Serialize};

/// Deadlock-clock mode (spec §9.2 for two players, §14.5 for four; switch
/// `clock`).
///
/// The clock is "called" after the first ply that leaves `clock_plies` or
/// more consecutive quiet plies (7 with two players, `clock_plies`, 14 by
/// default, with four); from then on a capture sets the countdown back to
/// `clock_plies`, any other ply takes 1 off it, and 0 ends the game.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ClockMode {
    /// Standard (spec §9.2 item 2, §14.5): the clock is called automatically.
    #[default]
    Auto,
    /// Spec §9.2 item 3: a move may carry a "call the clock" flag. Two
    /// players: not implemented ([`RulesError::Unsupported`](crate::RulesError)).
    /// Four players: the flag is the move text suffix `*` and policy index +
    /// 4096, while the clock is not called; the countdown starts after that
    /// ply. Flagged moves are [`Move`](crate::Move)s whose `to` has
    /// [`CALL_CLOCK`](crate::martian4::CALL_CLOCK) set.
    Manual,
    /// Spec §9.2 item 4: no clock; only an empty zone (quadrant) and the move
    /// cap end the game.
    Off,
}

/// How a tied score is decided when a zone (a quadrant) empties (spec §9.1,
/// §14.7; switch `tie_on_empty_zone`). The four-player game calls it
/// `EmptyQuadrantTie`.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum EmptyZoneTie {
    /// Standard: the player who made the last move wins the tie. Four-player
    /// teams: the team of the seat that made the last ply; free-for-all: the
    /// last mover alone if it is among the seats tied for the top, else the
    /// tied seats share the win.
    #[default]
    LastMoverWins,
    /// Variant: a tie is a draw (four-player free-for-all: the seats tied for
    /// the top share the win).
    Draw,
}
