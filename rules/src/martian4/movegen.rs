//! The four-player parts of move generation (martian-chess spec §14.4-§14.6):
//! the clock-call flag, the quick "has a legal move" test and the
//! immediate-win test. The move lists and counts themselves are shared with
//! the two-player game ([`crate::pyramids`]): captures take pieces of the
//! three other quadrants (§14.4 item 2, the partner's included), merges
//! check "no Queen" / "no Drone" in the mover's quadrant only, and there is
//! no no-undo ban (§14.4).

use super::tables::{Board8x8, QUADS};
use super::{ClockMode, MartianChess4};
use crate::game::EndReason;
use crate::pyramids::{self, Geometry};

impl MartianChess4 {
    /// Whether moves come in pairs with and without the clock-call flag:
    /// `Manual` clock, not yet called (§14.5).
    #[inline(always)]
    pub(crate) fn may_call_clock(&self) -> bool {
        self.rules.clock == ClockMode::Manual && self.clock == 0
    }

    /// Whether the seat to move has a legal move, ignoring `outcome`. A
    /// one-step move (Pawn diagonal, Drone orthogonal, Queen any direction)
    /// to a square outside the mover's own pieces is always legal (a plain
    /// move or a capture); spec §14.6 proves that one exists whenever the
    /// mover's quadrant holds a piece. Otherwise count exactly.
    #[inline]
    pub(crate) fn has_legal_move(&self) -> bool {
        type B = Board8x8;
        let zone = QUADS[self.seat.index()];
        let [p, d, q] = self.bb;
        let own = (p | d | q) & zone;
        let (p, d, q) = (p & zone, d & zone, q & zone);
        let diag = p | q;
        let orth = d | q;
        let steps = B::north_east(diag)
            | B::north_west(diag)
            | B::south_east(diag)
            | B::south_west(diag)
            | B::north(orth)
            | B::south(orth)
            | B::east(orth)
            | B::west(orth);
        steps & !own != 0 || pyramids::count_moves(self) > 0
    }

    /// [`crate::GameState::has_winning_move`] for the four-player game (spec
    /// §14.6), [`pyramids::winning_move_exists`]: a seat with a piece in its
    /// quadrant always has a move (§14.6), so no ply can leave the next seat
    /// stuck; the clock result favours the mover's team when
    /// [`MartianChess4::scored`] says so (in free-for-all the team view of
    /// the module docs).
    pub(crate) fn winning_move_exists(&self) -> bool {
        let me = self.seat.team();
        pyramids::winning_move_exists(self, || false, || self.scored(EndReason::Clock, self.seat).winner == Some(me))
    }
}
