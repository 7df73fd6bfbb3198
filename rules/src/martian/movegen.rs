//! Move generation and counting (martian-chess spec §4-§8).
//!
//! Targets of a piece = its geometric reach (spec §5, stopping on the first
//! occupied square) intersected with the squares it may end on: empty squares
//! and occupied squares of the opponent's zone (captures, spec §6), plus, when
//! field promotion allows it, own pieces it may merge with (spec §7). The one
//! move banned by the no-undo rule (spec §8) is removed last.

use super::rules::ClockMode;
use super::tables::{
    drone_attacks, east, north, north_east, north_west, queen_attacks, south, south_east, south_west, west, KING_STEPS,
    ORTHO_STEPS, PAWN_STEPS, ZONES,
};
use super::{MartianChess, DRONE, PAWN, QUEEN};
use crate::game::{GameState, Move};

/// What the side to move may do in a position: its pieces and the squares
/// each piece kind may end on.
#[derive(Copy, Clone)]
pub(crate) struct Ctx {
    pub occ: u32,
    pub own_p: u32,
    pub own_d: u32,
    pub own_q: u32,
    /// Squares a Pawn may end on.
    pub pawn_ok: u32,
    /// Squares a Drone may end on.
    pub drone_ok: u32,
    /// Squares a Queen may end on (never a merge).
    pub queen_ok: u32,
    /// The banned move `(from, to)` (spec §8), or `(NONE, NONE)`.
    pub ban_from: u8,
    pub ban_to: u8,
}

/// "No square" marker.
pub(crate) const NONE: u8 = 0xFF;

impl MartianChess {
    #[inline(always)]
    pub(crate) fn ctx(&self) -> Ctx {
        let zone = ZONES[self.side.index()].0;
        let [p, d, q] = self.bb;
        let occ = p | d | q;
        let own = occ & zone;
        let own_p = p & zone;
        let own_d = d & zone;
        let own_q = q & zone;
        let not_own = !own;
        let fp = self.rules.field_promotion;
        // Spec §7: Drone + Pawn -> Queen if no Queen in the zone before the move;
        // Pawn + Pawn -> Drone if no Drone.
        let dp_merge = if fp && own_q == 0 { u32::MAX } else { 0 };
        let pp_merge = if fp && own_d == 0 { u32::MAX } else { 0 };
        let pawn_ok = not_own | (own_d & dp_merge) | (own_p & pp_merge);
        let drone_ok = not_own | (own_p & dp_merge);
        let (ban_from, ban_to) = self.active_ban().unwrap_or((NONE, NONE));
        Ctx { occ, own_p, own_d, own_q, pawn_ok, drone_ok, queen_ok: not_own, ban_from, ban_to }
    }

    /// The targets of the own piece of `kind` on `sq` before the ban is applied.
    #[inline(always)]
    pub(crate) fn piece_targets(c: &Ctx, kind: usize, sq: usize) -> u32 {
        match kind {
            PAWN => PAWN_STEPS[sq] & c.pawn_ok,
            DRONE => drone_attacks(sq, c.occ) & c.drone_ok,
            _ => queen_attacks(sq, c.occ) & c.queen_ok,
        }
    }

    /// Writes all legal moves, ignoring `outcome`.
    pub(crate) fn gen_moves(&self, out: &mut Vec<Move>) {
        out.clear();
        let c = self.ctx();
        let ban_sq = c.ban_from;
        let ban_bit = if c.ban_to == NONE { 0 } else { 1u32 << c.ban_to };
        let mut push = |from: u32, mut targets: u32| {
            if from as u8 == ban_sq {
                targets &= !ban_bit;
            }
            while targets != 0 {
                let to = targets.trailing_zeros();
                targets &= targets - 1;
                out.push(Move::new(from as u8, to as u8));
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
        if c.ban_from != NONE {
            let kind = self.kind_at(c.ban_from);
            if Self::piece_targets(&c, kind, c.ban_from as usize) >> c.ban_to & 1 != 0 {
                n -= 1;
            }
        }
        n as usize
    }

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
            let steps = if q >> sq & 1 != 0 { KING_STEPS[sq] } else { PAWN_STEPS[sq] };
            n += (steps & not_own).count_ones();
        }
        let mut s = d;
        while s != 0 && n < 2 {
            let sq = s.trailing_zeros() as usize;
            s &= s - 1;
            n += (ORTHO_STEPS[sq] & not_own).count_ones();
        }
        n >= 2 || self.count_moves() > 0
    }
}

impl MartianChess {
    /// Calls `f` on every legal move (as `gen_moves` lists them, ignoring
    /// `outcome`) until it returns true; returns whether one did. No allocation.
    #[inline]
    fn any_move(&self, mut f: impl FnMut(Move) -> bool) -> bool {
        let c = self.ctx();
        let ban_bit = if c.ban_to == NONE { 0 } else { 1u32 << c.ban_to };
        for (mut b, kind) in [(c.own_p, PAWN), (c.own_d, DRONE), (c.own_q, QUEEN)] {
            while b != 0 {
                let from = b.trailing_zeros();
                b &= b - 1;
                let mut targets = Self::piece_targets(&c, kind, from as usize);
                if from as u8 == c.ban_from {
                    targets &= !ban_bit;
                }
                while targets != 0 {
                    let to = targets.trailing_zeros();
                    targets &= targets - 1;
                    if f(Move::new(from as u8, to as u8)) {
                        return true;
                    }
                }
            }
        }
        false
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
        let [p, d, q] = self.bb;
        let theirs = (p | d | q) & ZONES[self.side.opponent().index()].0;
        let mut free = 0;
        let mut b = theirs;
        while b != 0 {
            let sq = b.trailing_zeros() as usize;
            b &= b - 1;
            let steps = match self.kind_at(sq as u8) {
                PAWN => PAWN_STEPS[sq],
                DRONE => ORTHO_STEPS[sq],
                _ => KING_STEPS[sq],
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

    /// [`crate::GameState::has_winning_move`] for Martian Chess (spec §9). A
    /// move ends the game only by emptying the mover's zone (§9.1: possible
    /// only when one piece is left there), by running the deadlock clock out
    /// (§9.2: a quiet move at countdown 1, scored with ties drawn, and a quiet
    /// move leaves the scores as they are), by reaching the move cap (§9.3) or
    /// by leaving the opponent without a move (§9.4). With one piece in the
    /// zone, on the last ply before the cap, or when the opponent might be
    /// left without moves ([`MartianChess::opponent_may_be_stuck`], rare),
    /// every move is played on a copy; otherwise a win exists exactly when the
    /// clock is at countdown 1, the mover leads on score and has a quiet move.
    /// No allocation.
    pub(crate) fn winning_move_exists(&self) -> bool {
        if self.outcome.is_some() {
            return false;
        }
        let me = self.side;
        let [p, d, q] = self.bb;
        let occ = p | d | q;
        let own = occ & ZONES[me.index()].0;
        if own.count_ones() <= 1 || self.ply.saturating_add(1) >= self.rules.max_plies || self.opponent_may_be_stuck() {
            return self.any_move(|m| {
                let mut s = *self;
                s.play_unchecked(m);
                s.outcome.is_some_and(|o| o.winner == Some(me))
            });
        }
        if self.rules.clock == ClockMode::Auto
            && self.clock == 2
            && self.scores[me.index()] > self.scores[1 - me.index()]
        {
            let theirs = occ & !own;
            return self.any_move(|m| theirs >> m.to & 1 == 0);
        }
        false
    }
}
