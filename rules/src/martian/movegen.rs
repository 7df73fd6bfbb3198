//! The two-player parts of move generation (martian-chess spec §4-§9): the
//! quick "has a legal move" test (§9.4) and the immediate-win test. The move
//! lists and counts themselves are shared with the four-player game
//! ([`crate::pyramids`]); this game adds the no-undo ban (§8).

use super::tables::{Board4x8, ZONES};
use super::{MartianChess, DRONE, PAWN};
use crate::pyramids::{self, Geometry, Pieces};

impl MartianChess {
    /// Whether the side to move has a legal move (spec §9.4), ignoring `outcome`.
    /// One-step moves to a square that is not the mover's own are always legal
    /// (plain move or capture), so two of them prove a legal move even if one is
    /// banned; otherwise count exactly.
    #[inline]
    pub(crate) fn has_legal_move(&self) -> bool {
        let zone = ZONES[self.side.index()].0;
        let [p, d, q] = self.bb;
        let occ = p | d | q;
        let not_own = !(occ & zone);
        let (p, d, q) = (p & zone, d & zone, q & zone);
        let mut n = 0u32;
        let mut s = p | q;
        while s != 0 && n < 2 {
            let sq = s.trailing_zeros() as usize;
            s &= s - 1;
            let steps = if q >> sq & 1 != 0 { Board4x8::king_steps(sq) } else { Board4x8::pawn_steps(sq) };
            n += (steps & not_own).count_ones();
        }
        let mut s = d;
        while s != 0 && n < 2 {
            let sq = s.trailing_zeros() as usize;
            s &= s - 1;
            n += (Board4x8::ortho_steps(sq) & not_own).count_ones();
        }
        n >= 2 || pyramids::count_moves(self) > 0
    }

    /// Whether some move of the side to move might leave the opponent without
    /// a legal move (spec §9.4). `false` is certain: it is returned when two of
    /// the opponent's pieces each have two one-step moves (Pawn diagonal, Drone
    /// orthogonal, Queen any direction) to squares not holding the opponent's
    /// pieces. A move changes the opponent's zone at one square only (where it
    /// lands: a piece crossing the canal, or a capturer replacing the victim),
    /// and the no-undo ban it creates concerns the piece on that square; so
    /// the other of the two pieces keeps a free square, and a one-step move to
    /// an empty square or to a piece in the mover's zone is always legal.
    fn opponent_may_be_stuck(&self) -> bool {
        let theirs = self.bb.occupied() & ZONES[self.side.opponent().index()].0;
        let mut free = 0;
        let mut b = theirs;
        while b != 0 {
            let sq = b.trailing_zeros() as usize;
            b &= b - 1;
            let steps = match self.bb.kind_at(sq as u8) {
                PAWN => Board4x8::pawn_steps(sq),
                DRONE => Board4x8::ortho_steps(sq),
                _ => Board4x8::king_steps(sq),
            };
            if (steps & !theirs).count_ones() >= 2 {
                free += 1;
                if free == 2 {
                    return false;
                }
            }
        }
        true
    }

    /// [`crate::GameState::has_winning_move`] for Martian Chess (spec §9),
    /// [`pyramids::winning_move_exists`] with this game's two extras: a move
    /// may leave the opponent without moves (§9.4) only when
    /// [`MartianChess::opponent_may_be_stuck`] (rare), and the clock result
    /// favours the mover exactly when it leads on score (ties are drawn).
    pub(crate) fn winning_move_exists(&self) -> bool {
        let me = self.side.index();
        pyramids::winning_move_exists(self, || self.opponent_may_be_stuck(), || self.scores[me] > self.scores[1 - me])
    }
}
