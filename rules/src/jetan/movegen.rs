//! Move generation, counting and attacked squares (spec §3–§7, §9).
//!
//! Everything works on `u128` bitboards with the tables of `tables`; nothing
//! here allocates.

use super::bitboard::{BOARD, FILE_A, FILE_J};
use super::piece::Piece;
use super::rules::{ChiefCapture, Escape, NoLegalMoves, SmallMaterial};
use super::tables::{tables, Tables, K_CHIEF, K_DWAR, K_FLIER, K_PADWAR, K_WARRIOR};
use super::Jetan;
use crate::game::{has_winning_move_by_play, Move, Side};

/// Piece types moved along table paths, with their table kind (the Thoat's
/// kind depends on the rules and is handled separately).
const PATH_PIECES: [(Piece, usize); 5] = [
    (Piece::Flier, K_FLIER),
    (Piece::Dwar, K_DWAR),
    (Piece::Padwar, K_PADWAR),
    (Piece::Warrior, K_WARRIOR),
    (Piece::Chief, K_CHIEF),
];

/// Panthan step deltas for `side` (spec §4.1): forward, forward-left (file −1),
/// forward-right (file +1), left, right. Each with the file mask its origin must avoid.
#[inline]
fn panthan_dirs(side: Side) -> [(i32, u128); 5] {
    match side {
        Side::South => [(10, 0), (9, FILE_A), (11, FILE_J), (-1, FILE_A), (1, FILE_J)],
        Side::North => [(-10, 0), (-11, FILE_A), (-9, FILE_J), (-1, FILE_A), (1, FILE_J)],
    }
}

#[inline]
fn shift(b: u128, delta: i32) -> u128 {
    if delta >= 0 {
        (b << delta) & BOARD
    } else {
        b >> (-delta)
    }
}

/// Squares a set of Panthans of `side` moves to or attacks (spec §4.1, §5), before
/// removing friendly squares.
#[inline]
pub(crate) fn panthan_attacks(side: Side, p: u128) -> u128 {
    let mut acc = 0;
    for (d, m) in panthan_dirs(side) {
        acc |= shift(p & !m, d);
    }
    acc
}

impl Jetan {
    /// Table kind of the Thoat under the current rules (§4.2).
    #[inline]
    pub(crate) fn thoat_kind(&self) -> usize {
        self.thoat_kind as usize
    }

    #[inline]
    fn occupied(&self) -> u128 {
        self.pos.occ[0] | self.pos.occ[1]
    }

    /// Squares attacked by `side` (spec §5) when the board occupancy is `occ`.
    /// The Princess attacks nothing.
    pub(crate) fn attacks_with(&self, t: &Tables, side: Side, occ: u128) -> u128 {
        let s = side.index();
        let pcs = &self.pos.pieces[s];
        let mut acc = panthan_attacks(side, pcs[Piece::Panthan.index()]);
        for (p, k) in PATH_PIECES {
            let mut b = pcs[p.index()];
            while b != 0 {
                let sq = b.trailing_zeros() as usize;
                b &= b - 1;
                acc |= t.reach(k, sq, occ);
            }
        }
        let tk = self.thoat_kind();
        let mut b = pcs[Piece::Thoat.index()];
        while b != 0 {
            let sq = b.trailing_zeros() as usize;
            b &= b - 1;
            acc |= t.reach(tk, sq, occ);
        }
        acc
    }

    /// Squares attacked by `side` on the current board with the square `vacate`
    /// emptied (spec §5: the moving Princess's origin).
    pub fn attacked_squares(&self, side: Side, vacate: Option<u8>) -> u128 {
        let mut occ = self.occupied();
        if let Some(v) = vacate {
            occ &= !(1u128 << v);
        }
        self.attacks_with(tables(), side, occ)
    }

    /// Princess of the side to move: `(square, normal destinations, Escape destinations)`
    /// (spec §4.8, §5, §6), or `None` if she is absent.
    #[inline]
    fn princess_dests(&self, t: &Tables) -> Option<(u8, u128, u128)> {
        let s = self.pos.stm.index();
        let pb = self.pos.pieces[s][Piece::Princess.index()];
        if pb == 0 {
            return None;
        }
        let psq = pb.trailing_zeros() as usize;
        let occ = self.occupied();
        let empty = !occ & BOARD;
        let normal = t.box3[psq] & empty;
        let escape_ok = self.pos.escape[s] && self.rules.escape != Escape::None;
        let escape = if escape_ok { t.far[psq] & empty } else { 0 };
        if normal | escape == 0 {
            return Some((psq as u8, 0, 0));
        }
        let att = self.attacks_with(t, self.pos.stm.opponent(), occ & !(1u128 << psq));
        let escape =
            if self.rules.escape == Escape::OnlyWhenAttacked && att & (1u128 << psq) == 0 { 0 } else { escape & !att };
        Some((psq as u8, normal & !att, escape))
    }

    /// Writes the legal moves of the side to move into `out` (no end-of-game test).
    pub(crate) fn gen_moves(&self, out: &mut Vec<Move>) {
        let t = tables();
        let s = self.pos.stm;
        let pcs = &self.pos.pieces[s.index()];
        let own = self.pos.occ[s.index()];
        let occ = self.occupied();
        let target = !own & BOARD;
        // Panthans (§4.1).
        let pan = pcs[Piece::Panthan.index()];
        for (d, m) in panthan_dirs(s) {
            let mut b = shift(pan & !m, d) & target;
            while b != 0 {
                let to = b.trailing_zeros() as i32;
                b &= b - 1;
                out.push(Move::new((to - d) as u8, to as u8));
            }
        }
        // Path pieces (§3, §4.2–§4.7).
        let tk = self.thoat_kind();
        for (p, k) in PATH_PIECES.into_iter().chain(std::iter::once((Piece::Thoat, tk))) {
            let mut b = pcs[p.index()];
            while b != 0 {
                let sq = b.trailing_zeros() as usize;
                b &= b - 1;
                let mut d = t.reach(k, sq, occ) & target;
                while d != 0 {
                    let to = d.trailing_zeros() as u8;
                    d &= d - 1;
                    out.push(Move::new(sq as u8, to));
                }
            }
        }
        // Princess (§4.8, §6).
        if let Some((psq, normal, escape)) = self.princess_dests(t) {
            let mut d = normal | escape;
            while d != 0 {
                let to = d.trailing_zeros() as u8;
                d &= d - 1;
                out.push(Move::new(psq, to));
            }
        }
    }

    /// Number of legal moves of the side to move (no end-of-game test), by popcounts.
    pub(crate) fn count_moves(&self) -> usize {
        let t = tables();
        let s = self.pos.stm;
        let pcs = &self.pos.pieces[s.index()];
        let own = self.pos.occ[s.index()];
        let occ = self.occupied();
        let target = !own & BOARD;
        let pan = pcs[Piece::Panthan.index()];
        let mut n = 0u32;
        for (d, m) in panthan_dirs(s) {
            n += (shift(pan & !m, d) & target).count_ones();
        }
        let tk = self.thoat_kind();
        for (p, k) in PATH_PIECES.into_iter().chain(std::iter::once((Piece::Thoat, tk))) {
            let mut b = pcs[p.index()];
            while b != 0 {
                let sq = b.trailing_zeros() as usize;
                b &= b - 1;
                n += (t.reach(k, sq, occ) & target).count_ones();
            }
        }
        if let Some((_, normal, escape)) = self.princess_dests(t) {
            n += (normal | escape).count_ones();
        }
        n as usize
    }

    /// [`crate::GameState::has_winning_move`] for Jetan (spec §8). Under the
    /// standard rules only two moves win at once: taking the enemy Princess
    /// (§8.1) and taking the enemy Chief with one's own Chief (§8.2; with any
    /// piece under `chief_captured_by_non_chief = CapturerWins`). Both are
    /// captures, checked before every other end of §8, so the test is whether
    /// a piece of the side to move reaches those squares (the Princess never
    /// captures: she moves to empty squares only). Two switches make other
    /// moves win: `no_legal_moves = Loses` (a move leaving the opponent without
    /// moves, §8.6) and `small_material = Seed000Adjudication` on the ply that
    /// ends the countdown (§8.4); there every move is played
    /// ([`has_winning_move_by_play`], which allocates). No allocation otherwise.
    pub(crate) fn winning_move_exists(&self) -> bool {
        if self.pos.outcome.is_some() {
            return false;
        }
        if self.rules.no_legal_moves == NoLegalMoves::Loses
            || (self.rules.small_material == SmallMaterial::Seed000Adjudication && self.pos.countdown == Some(1))
        {
            return has_winning_move_by_play(self);
        }
        self.captures_a_royal(self.pos.stm)
    }

    /// [`crate::GameState::threatens_win`] for Jetan: whether the side that
    /// just moved reaches the enemy Princess (or, with its Chief, the enemy
    /// Chief) as if it were to move again. Under the two switches where other
    /// moves win (see [`Jetan::winning_move_exists`]) it answers `true`, which
    /// the interface allows. No allocation.
    pub(crate) fn threat_exists(&self) -> bool {
        if self.pos.outcome.is_some() {
            return false;
        }
        if self.rules.no_legal_moves == NoLegalMoves::Loses
            || self.rules.small_material == SmallMaterial::Seed000Adjudication
        {
            return true;
        }
        self.captures_a_royal(self.pos.stm.opponent())
    }

    /// Whether a piece of `me` reaches a square whose capture wins at once:
    /// the enemy Princess (§8.1), the enemy Chief with `me`'s Chief (§8.2;
    /// with any piece under `CapturerWins`). Piece moves do not depend on
    /// whose turn it is, so this answers for either side.
    fn captures_a_royal(&self, me: Side) -> bool {
        let t = tables();
        let pcs = &self.pos.pieces[me.index()];
        let theirs = &self.pos.pieces[me.opponent().index()];
        let (princess, chief) = (theirs[Piece::Princess.index()], theirs[Piece::Chief.index()]);
        let occ = self.occupied();
        let any_chief_capture = self.rules.chief_captured_by_non_chief == ChiefCapture::CapturerWins;
        // Squares any piece wins on, and those only the Chief wins on.
        let targets = princess | if any_chief_capture { chief } else { 0 };
        let chief_targets = if any_chief_capture { 0 } else { chief };
        if targets == 0 && chief_targets == 0 {
            return false;
        }
        if panthan_attacks(me, pcs[Piece::Panthan.index()]) & targets != 0 {
            return true;
        }
        let tk = self.thoat_kind();
        for (p, k) in PATH_PIECES.into_iter().chain(std::iter::once((Piece::Thoat, tk))) {
            let goal = if p == Piece::Chief { targets | chief_targets } else { targets };
            let mut b = pcs[p.index()];
            while b != 0 {
                let sq = b.trailing_zeros() as usize;
                b &= b - 1;
                if t.reaches(k, sq, occ, goal) {
                    return true;
                }
            }
        }
        false
    }

    /// Whether the side to move has at least one legal move (§8.6), cheapest tests first.
    pub(crate) fn has_legal_move(&self) -> bool {
        let t = tables();
        let s = self.pos.stm;
        let pcs = &self.pos.pieces[s.index()];
        let own = self.pos.occ[s.index()];
        let occ = self.occupied();
        let target = !own & BOARD;
        if panthan_attacks(s, pcs[Piece::Panthan.index()]) & target != 0 {
            return true;
        }
        let tk = self.thoat_kind();
        for (p, k) in PATH_PIECES.into_iter().chain(std::iter::once((Piece::Thoat, tk))) {
            let mut b = pcs[p.index()];
            while b != 0 {
                let sq = b.trailing_zeros() as usize;
                b &= b - 1;
                if t.reach(k, sq, occ) & target != 0 {
                    return true;
                }
            }
        }
        matches!(self.princess_dests(t), Some((_, n, e)) if n | e != 0)
    }
}
