//! Move generation and counting of both games (spec §4-§8, §14.4).
//!
//! Targets of a piece = its geometric reach (§5, stopping on the first
//! occupied square) intersected with the squares it may end on: empty
//! squares and occupied squares outside the mover's zone or quadrant
//! (captures, §6), plus, when field promotion allows it, own pieces it may
//! merge with (§7, "no Queen" / "no Drone" checked in the mover's zone).
//! Two players: the one move banned by the no-undo rule (§8) is removed last.
//! Four players under a callable `Manual` clock: every move also comes with
//! the clock-call flag (§14.5).

use super::board::{Geometry, Pieces, Word};
use super::{ClockMode, PyramidState, WordOf, CALL_CLOCK, DRONE, NONE, PAWN, QUEEN};
use crate::game::Move;

/// What the side to move may do in a position: its pieces and the squares
/// each piece kind may end on.
#[derive(Copy, Clone)]
pub(crate) struct Ctx<W> {
    pub occ: W,
    pub own_p: W,
    pub own_d: W,
    pub own_q: W,
    /// Squares a Pawn may end on.
    pub pawn_ok: W,
    /// Squares a Drone may end on.
    pub drone_ok: W,
    /// Squares a Queen may end on (never a merge).
    pub queen_ok: W,
    /// The banned move `(from, to)` (§8), or `(NONE, NONE)`.
    pub ban_from: u8,
    pub ban_to: u8,
    /// [`CALL_CLOCK`] when every move has a flagged twin, else 0.
    pub flag: u8,
}

/// The context of the side to move of `s`.
#[inline(always)]
pub(crate) fn ctx<S: PyramidState>(s: &S) -> Ctx<WordOf<S>> {
    let v = s.view();
    let (zone, [p, d, q]) = (v.zone, v.bb);
    let occ = p | d | q;
    let own = occ & zone;
    let own_p = p & zone;
    let own_d = d & zone;
    let own_q = q & zone;
    let not_own = !own;
    let fp = v.rules.field_promotion;
    // §7: Drone + Pawn -> Queen if no Queen in the zone before the move;
    // Pawn + Pawn -> Drone if no Drone.
    let dp_merge = if fp && own_q == Word::ZERO { Word::MAX } else { Word::ZERO };
    let pp_merge = if fp && own_d == Word::ZERO { Word::MAX } else { Word::ZERO };
    let pawn_ok = not_own | (own_d & dp_merge) | (own_p & pp_merge);
    let drone_ok = not_own | (own_p & dp_merge);
    let (ban_from, ban_to) = v.ban.unwrap_or((NONE, NONE));
    Ctx { occ, own_p, own_d, own_q, pawn_ok, drone_ok, queen_ok: not_own, ban_from, ban_to, flag: v.flag }
}

impl<W: Word> Ctx<W> {
    /// The banned destination as a set (empty without a ban).
    #[inline(always)]
    fn ban_bit(&self) -> W {
        if self.ban_to == NONE {
            W::ZERO
        } else {
            W::bit(u32::from(self.ban_to))
        }
    }
}

/// The targets of the own piece of `kind` on `sq` before the ban is applied.
#[inline(always)]
pub(crate) fn targets<B: Geometry>(c: &Ctx<B::W>, kind: usize, sq: usize) -> B::W {
    match kind {
        PAWN => B::pawn_steps(sq) & c.pawn_ok,
        DRONE => B::drone_attacks(sq, c.occ) & c.drone_ok,
        _ => B::queen_attacks(sq, c.occ) & c.queen_ok,
    }
}

/// Calls `f` on every legal move of `s`, ignoring its outcome (Pawns, then
/// Drones, then Queens, each by origin square, destinations ascending; a
/// flagged twin after each move when the clock may be called) until `f`
/// returns true; returns whether it did. No allocation.
#[inline(always)]
pub(crate) fn any_move<S: PyramidState>(s: &S, mut f: impl FnMut(Move) -> bool) -> bool {
    let c = ctx(s);
    let ban_bit = c.ban_bit();
    for (b, kind) in [(c.own_p, PAWN), (c.own_d, DRONE), (c.own_q, QUEEN)] {
        let mut b = b;
        while b != Word::ZERO {
            let from = b.trailing_zeros() as u8;
            b &= b - Word::from_u64(1);
            let mut t = targets::<S::Board>(&c, kind, from as usize);
            if from == c.ban_from {
                t &= !ban_bit;
            }
            while t != Word::ZERO {
                let to = t.trailing_zeros() as u8;
                t &= t - Word::from_u64(1);
                if f(Move::new(from, to)) || (c.flag != 0 && f(Move::new(from, to | c.flag))) {
                    return true;
                }
            }
        }
    }
    false
}

/// Writes all legal moves of `s` into `out`, ignoring its outcome, in the
/// order of [`any_move`].
#[inline]
pub(crate) fn gen_moves<S: PyramidState>(s: &S, out: &mut Vec<Move>) {
    out.clear();
    any_move(s, |m| {
        out.push(m);
        false
    });
}

/// Number of legal moves of `s`, ignoring its outcome: Pawn and Drone moves
/// are counted set-wise with one popcount per direction; Queens one by one.
#[inline]
pub(crate) fn count_moves<S: PyramidState>(s: &S) -> usize {
    let c = ctx(s);
    let mut n = count_set_wise::<S::Board>(&c);
    if c.ban_from != NONE {
        let kind = s.view().bb.kind_at(c.ban_from);
        if targets::<S::Board>(&c, kind, c.ban_from as usize).has(c.ban_to) {
            n -= 1;
        }
    }
    let n = n as usize;
    if c.flag != 0 {
        2 * n
    } else {
        n
    }
}

/// The moves of `c`'s pieces before the ban and the clock flag.
#[inline(always)]
fn count_set_wise<B: Geometry>(c: &Ctx<B::W>) -> u32 {
    let empty = !c.occ;
    let (p, d, pok, dok) = (c.own_p, c.own_d, c.pawn_ok, c.drone_ok);
    let mut n = (B::north_east(p) & pok).count_ones()
        + (B::north_west(p) & pok).count_ones()
        + (B::south_east(p) & pok).count_ones()
        + (B::south_west(p) & pok).count_ones();
    let (dn, ds, de, dw) = (B::north(d), B::south(d), B::east(d), B::west(d));
    n += (dn & dok).count_ones()
        + (ds & dok).count_ones()
        + (de & dok).count_ones()
        + (dw & dok).count_ones()
        + (B::north(dn & empty) & dok).count_ones()
        + (B::south(ds & empty) & dok).count_ones()
        + (B::east(de & empty) & dok).count_ones()
        + (B::west(dw & empty) & dok).count_ones();
    c.own_q.for_each_square(|sq| n += (B::queen_attacks(sq as usize, c.occ) & c.queen_ok).count_ones());
    n
}

/// [`crate::GameState::has_winning_move`] of both games: whether the side
/// to move (in four-player free-for-all the team view of `martian4`) wins
/// at once with some legal move. A ply ends the game only by emptying the
/// mover's own zone (possible only with one piece left there: a capture
/// replaces the victim, a merge leaves a piece), by running the clock out
/// (a quiet ply at countdown 1; it changes no score, so the result is the
/// clock result of the current scores, `clock_win`), by reaching the move
/// cap, or by leaving the opponent without a move (two players, §9.4;
/// `may_stall` says when that is possible). In those cases every move is
/// played on a copy; otherwise a win exists exactly when the countdown is
/// 1, the clock result favours the mover and a quiet move exists. No
/// allocation.
pub(crate) fn winning_move_exists<S: PyramidState>(
    s: &S,
    may_stall: impl FnOnce() -> bool,
    clock_win: impl FnOnce() -> bool,
) -> bool {
    if s.outcome().is_some() {
        return false;
    }
    let me = s.side_to_move();
    let v = s.view();
    let occ = v.bb.occupied();
    let own = occ & v.zone;
    if own.count_ones() <= 1 || s.ply().saturating_add(1) >= v.rules.max_plies || may_stall() {
        return any_move(s, |m| {
            let mut t = *s;
            t.play_unchecked(m);
            t.outcome().is_some_and(|o| o.winner == Some(me))
        });
    }
    if v.rules.clock != ClockMode::Off && v.clock == 2 && clock_win() {
        let theirs = occ & !own;
        return any_move(s, |m| !theirs.has(m.to & !CALL_CLOCK));
    }
    false
}
