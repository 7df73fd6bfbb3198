//! Move generation and counting of the four-player game (martian-chess spec
//! §14.4, with the piece moves of §5 and the merges of §7).
//!
//! Targets of a piece = its geometric reach (§5, stopping on the first
//! occupied square, across canals and quadrants) intersected with the squares
//! it may end on: empty squares and occupied squares of the three other
//! quadrants (captures, §14.4 item 2, the partner's quadrant included), plus,
//! when field promotion allows it, own pieces it may merge with (§7, "no
//! Queen" / "no Drone" checked in the mover's quadrant only). There is no
//! no-undo ban (§14.4). Under the `Manual` clock every move also comes with
//! the clock-call flag while the clock is not called (§14.5).

use super::rules::ClockMode;
use super::tables::{
    drone_attacks, east, north, north_east, north_west, queen_attacks, south, south_east, south_west, west, PAWN_STEPS,
    QUADS,
};
use super::{MartianChess4, CALL_CLOCK, DRONE, PAWN, QUEEN};
use crate::game::{GameState, Move};

/// What the seat to move may do in a position: its pieces and the squares
/// each piece kind may end on.
#[derive(Copy, Clone)]
pub(crate) struct Ctx {
    pub occ: u64,
    pub own_p: u64,
    pub own_d: u64,
    pub own_q: u64,
    /// Squares a Pawn may end on.
    pub pawn_ok: u64,
    /// Squares a Drone may end on.
    pub drone_ok: u64,
    /// Squares a Queen may end on (never a merge).
    pub queen_ok: u64,
}

impl MartianChess4 {
    #[inline(always)]
    pub(crate) fn ctx(&self) -> Ctx {
        let zone = QUADS[self.seat.index()];
        let [p, d, q] = self.bb;
        let occ = p | d | q;
        let own = occ & zone;
        let own_p = p & zone;
        let own_d = d & zone;
        let own_q = q & zone;
        let not_own = !own;
        let fp = self.rules.field_promotion;
        // §7: Drone + Pawn -> Queen if no Queen in the quadrant before the move;
        // Pawn + Pawn -> Drone if no Drone.
        let dp_merge = if fp && own_q == 0 { u64::MAX } else { 0 };
        let pp_merge = if fp && own_d == 0 { u64::MAX } else { 0 };
        let pawn_ok = not_own | (own_d & dp_merge) | (own_p & pp_merge);
        let drone_ok = not_own | (own_p & dp_merge);
        Ctx { occ, own_p, own_d, own_q, pawn_ok, drone_ok, queen_ok: not_own }
    }

    /// The targets of the own piece of `kind` on `sq`.
    #[inline(always)]
    pub(crate) fn piece_targets(c: &Ctx, kind: usize, sq: usize) -> u64 {
        match kind {
            PAWN => PAWN_STEPS[sq] & c.pawn_ok,
            DRONE => drone_attacks(sq, c.occ) & c.drone_ok,
            _ => queen_attacks(sq, c.occ) & c.queen_ok,
        }
    }

    /// Whether moves come in pairs with and without the clock-call flag:
    /// `Manual` clock, not yet called (§14.5).
    #[inline(always)]
    pub(crate) fn may_call_clock(&self) -> bool {
        self.rules.clock == ClockMode::Manual && self.clock == 0
    }

    /// Writes all legal moves, ignoring `outcome`: Pawns, then Drones, then
    /// Queens, each by origin square, destinations ascending; under a callable
    /// `Manual` clock each move is followed by its flagged twin.
    pub(crate) fn gen_moves(&self, out: &mut Vec<Move>) {
        out.clear();
        let c = self.ctx();
        let flag = if self.may_call_clock() { CALL_CLOCK } else { 0 };
        let mut push = |from: u32, mut targets: u64| {
            while targets != 0 {
                let to = targets.trailing_zeros() as u8;
                targets &= targets - 1;
                out.push(Move::new(from as u8, to));
                if flag != 0 {
                    out.push(Move::new(from as u8, to | flag));
                }
            }
        };
        let mut p = c.own_p;
        while p != 0 {
            let s = p.trailing_zeros();
            p &= p - 1;
            push(s, PAWN_STEPS[s as usize] & c.pawn_ok);
        }
        let mut d = c.own_d;
        while d != 0 {
            let s = d.trailing_zeros();
            d &= d - 1;
            push(s, drone_attacks(s as usize, c.occ) & c.drone_ok);
        }
        let mut q = c.own_q;
        while q != 0 {
            let s = q.trailing_zeros();
            q &= q - 1;
            push(s, queen_attacks(s as usize, c.occ) & c.queen_ok);
        }
    }

    /// Number of legal moves, ignoring `outcome`: Pawn and Drone moves are
    /// counted set-wise with one popcount per direction; Queens one by one.
    #[inline]
    pub(crate) fn count_moves(&self) -> usize {
        let c = self.ctx();
        let empty = !c.occ;
        let (p, d, pok, dok) = (c.own_p, c.own_d, c.pawn_ok, c.drone_ok);
        let mut n = (north_east(p) & pok).count_ones()
            + (north_west(p) & pok).count_ones()
            + (south_east(p) & pok).count_ones()
            + (south_west(p) & pok).count_ones();
        let (dn, ds, de, dw) = (north(d), south(d), east(d), west(d));
        n += (dn & dok).count_ones()
            + (ds & dok).count_ones()
            + (de & dok).count_ones()
            + (dw & dok).count_ones()
            + (north(dn & empty) & dok).count_ones()
            + (south(ds & empty) & dok).count_ones()
            + (east(de & empty) & dok).count_ones()
            + (west(dw & empty) & dok).count_ones();
        let mut q = c.own_q;
        while q != 0 {
            let s = q.trailing_zeros() as usize;
            q &= q - 1;
            n += (queen_attacks(s, c.occ) & c.queen_ok).count_ones();
        }
        let n = n as usize;
        if self.may_call_clock() {
            2 * n
        } else {
            n
        }
    }

    /// Whether the seat to move has a legal move, ignoring `outcome`. A
    /// one-step move (Pawn diagonal, Drone orthogonal, Queen any direction)
    /// to a square outside the mover's own pieces is always legal (a plain
    /// move or a capture); spec §14.6 proves that one exists whenever the
    /// mover's quadrant holds a piece. Otherwise count exactly.
    #[inline]
    pub(crate) fn has_legal_move(&self) -> bool {
        let zone = QUADS[self.seat.index()];
        let [p, d, q] = self.bb;
        let own = (p | d | q) & zone;
        let (p, d, q) = (p & zone, d & zone, q & zone);
        let diag = p | q;
        let orth = d | q;
        let steps = north_east(diag)
            | north_west(diag)
            | south_east(diag)
            | south_west(diag)
            | north(orth)
            | south(orth)
            | east(orth)
            | west(orth);
        steps & !own != 0 || self.count_moves() > 0
    }

    /// Calls `f` on every legal move (as `gen_moves` lists them, ignoring
    /// `outcome`) until it returns true; returns whether one did. No allocation.
    #[inline]
    pub(crate) fn any_move(&self, mut f: impl FnMut(Move) -> bool) -> bool {
        let c = self.ctx();
        let flag = if self.may_call_clock() { CALL_CLOCK } else { 0 };
        for (mut b, kind) in [(c.own_p, PAWN), (c.own_d, DRONE), (c.own_q, QUEEN)] {
            while b != 0 {
                let from = b.trailing_zeros() as u8;
                b &= b - 1;
                let mut targets = Self::piece_targets(&c, kind, from as usize);
                while targets != 0 {
                    let to = targets.trailing_zeros() as u8;
                    targets &= targets - 1;
                    if f(Move::new(from, to)) || (flag != 0 && f(Move::new(from, to | flag))) {
                        return true;
                    }
                }
            }
        }
        false
    }

    /// [`crate::GameState::has_winning_move`] for the four-player game (spec
    /// §14.6): whether the team of the seat to move (in free-for-all the team
    /// view of the module docs of `martian4`) wins at once with some legal
    /// move. A ply ends the game only by emptying the mover's
    /// own quadrant (possible only with one piece left there: a capture
    /// replaces the victim, a merge leaves a piece), by running the clock out
    /// (a quiet ply at countdown 1; it changes no score, so the result is the
    /// clock result of the current scores), or by reaching the move cap; a
    /// seat with a piece in its quadrant always has a move (§14.6), and no
    /// other quadrant can empty. With one piece in the quadrant or on the last
    /// ply before the cap every move is played on a copy; otherwise a win
    /// exists exactly when the countdown is 1, the clock result favours the
    /// mover's team and a quiet (non-capturing) move exists. No allocation.
    pub(crate) fn winning_move_exists(&self) -> bool {
        if self.outcome.is_some() {
            return false;
        }
        let me = self.seat.team();
        let [p, d, q] = self.bb;
        let occ = p | d | q;
        let own = occ & QUADS[self.seat.index()];
        if own.count_ones() <= 1 || self.ply.saturating_add(1) >= self.rules.max_plies {
            return self.any_move(|m| {
                let mut s = *self;
                s.play_unchecked(m);
                s.outcome.is_some_and(|o| o.winner == Some(me))
            });
        }
        if self.rules.clock != ClockMode::Off
            && self.clock == 2
            && self.scored(crate::game::EndReason::Clock, self.seat).winner == Some(me)
        {
            let theirs = occ & !own;
            return self.any_move(|m| theirs >> (m.to & !CALL_CLOCK) & 1 == 0);
        }
        false
    }
}
