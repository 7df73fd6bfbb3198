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

    /// Whether one of the two switches under which moves other than a
    /// royal capture can win is on (`no_legal_moves = Loses`, §8.6;
    /// `small_material = Seed000Adjudication`, §8.4): the bitboard tests of
    /// threats, forcing moves and safe replies then answer conservatively.
    #[inline]
    fn other_moves_may_win(&self) -> bool {
        self.rules.no_legal_moves == NoLegalMoves::Loses
            || self.rules.small_material == SmallMaterial::Seed000Adjudication
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
        if self.other_moves_may_win() {
            return true;
        }
        self.captures_a_royal(self.pos.stm.opponent())
    }

    /// Whether a piece of `me` reaches a square whose capture wins at once:
    /// the enemy Princess (§8.1), the enemy Chief with `me`'s Chief (§8.2;
    /// with any piece under `CapturerWins`). Piece moves do not depend on
    /// whose turn it is, so this answers for either side.
    fn captures_a_royal(&self, me: Side) -> bool {
        let theirs = &self.pos.pieces[me.opponent().index()];
        self.royal_capture_with(
            me,
            &self.pos.pieces[me.index()],
            theirs[Piece::Princess.index()],
            theirs[Piece::Chief.index()],
            self.occupied(),
        )
    }

    /// [`Jetan::captures_a_royal`] on a board given by `me`'s pieces `pcs`,
    /// the enemy `princess` and `chief` bitboards and the occupancy `occ`.
    /// Only the pieces that could reach a target on an empty board
    /// (`Tables::origins`) are looked at: usually none or one or two.
    fn royal_capture_with(&self, me: Side, pcs: &[u128; 8], princess: u128, chief: u128, occ: u128) -> bool {
        let t = tables();
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
            if goal == 0 {
                continue;
            }
            let mut b = pcs[p.index()] & t.origins(k, goal);
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

    /// Whether the side to move, after playing the legal move `mv`, reaches
    /// the enemy Princess (or Chief, as in [`Jetan::captures_a_royal`]) on
    /// the board that move leaves, computed on bitboards without playing it.
    fn threat_after_move(&self, mv: Move) -> bool {
        let (from, to) = (mv.from as usize, mv.to as usize);
        let code = self.pos.board[from];
        if code == 0 {
            return true;
        }
        let p = (code - 1) as usize % 8;
        let me = self.pos.stm;
        let (fb, tb) = (1u128 << from, 1u128 << to);
        let theirs = &self.pos.pieces[me.opponent().index()];
        // A royal piece taken is off the board (the game may end, §8.1-8.2:
        // then the answer does not matter).
        let (princess, chief) = (theirs[Piece::Princess.index()] & !tb, theirs[Piece::Chief.index()] & !tb);
        let mut pcs = self.pos.pieces[me.index()];
        pcs[p] ^= fb | tb;
        let occ = (self.occupied() & !fb) | tb;
        self.royal_capture_with(me, &pcs, princess, chief, occ)
    }

    /// The squares on which a capture by `me`'s `piece` (an index of
    /// [`Piece`]) wins at once (§8.1, §8.2): the enemy Princess, and the
    /// enemy Chief for `me`'s Chief (for any piece under `CapturerWins`).
    #[inline]
    fn royal_goal(&self, me: Side, piece: usize) -> u128 {
        let theirs = &self.pos.pieces[me.opponent().index()];
        let chief = theirs[Piece::Chief.index()];
        let any_chief_capture = self.rules.chief_captured_by_non_chief == ChiefCapture::CapturerWins;
        theirs[Piece::Princess.index()] | if any_chief_capture || piece == Piece::Chief.index() { chief } else { 0 }
    }

    /// [`crate::GameState::winning_replies`] for Jetan, on bitboards: the
    /// opponent's royal captures (§8.1, §8.2) are computed once for the
    /// board as it is, with the squares its capturing paths cross (its
    /// pieces that could reach a royal piece on an empty board, the squares
    /// their paths need empty, and the royal pieces' squares); a move that
    /// neither leaves nor enters one of those squares, captures nothing and
    /// moves no royal piece leaves the answer as it is, and every other move
    /// is tested on the board it leaves without being played. Under the two
    /// switches where other moves win ([`Jetan::other_moves_may_win`]) it
    /// answers `false` (no cheap answer). No allocation beyond `out`.
    pub(crate) fn winning_replies_into(&self, moves: &[Move], out: &mut Vec<bool>) -> bool {
        if self.other_moves_may_win() || self.pos.outcome.is_some() {
            return false;
        }
        out.clear();
        let lines = self.enemy_lines();
        out.extend(moves.iter().map(|&m| self.enemy_wins_after(m, &lines)));
        true
    }

    /// The opponent's royal captures on the board as it is (as
    /// [`Jetan::captures_a_royal`]), and the squares a move of the side to
    /// move must leave or enter to change that answer without capturing or
    /// moving a royal piece: the royal pieces' squares and every square a
    /// path of an enemy piece to one of them needs empty (only pieces that
    /// reach one on an empty board, `Tables::origins`; a Flier's jumps and a
    /// Panthan's steps need none).
    fn enemy_lines(&self) -> EnemyLines {
        let me = self.pos.stm;
        let opp = me.opponent();
        let t = tables();
        let tk = self.thoat_kind();
        let theirs = &self.pos.pieces[opp.index()];
        let mine = &self.pos.pieces[me.index()];
        let (princess, chief) = (mine[Piece::Princess.index()], mine[Piece::Chief.index()]);
        let occ = self.occupied();
        let mut el = EnemyLines {
            now: false,
            lines: princess | chief,
            royal: princess | chief,
            panthans: theirs[Piece::Panthan.index()],
            panthan_goal: self.royal_goal(opp, Piece::Panthan.index()),
            origins: [0; 6],
            goals: [0; 6],
        };
        el.now = panthan_attacks(opp, el.panthans) & el.panthan_goal != 0;
        for (i, (p, k)) in PATH_PIECES.into_iter().chain(std::iter::once((Piece::Thoat, tk))).enumerate() {
            let goal = self.royal_goal(opp, p.index());
            let origins = theirs[p.index()] & t.origins(k, goal);
            el.origins[i] = origins;
            el.goals[i] = goal;
            let mut b = origins;
            while b != 0 {
                let sq = b.trailing_zeros() as usize;
                b &= b - 1;
                el.lines |= t.lines_to(k, sq, goal);
                el.now = el.now || t.reaches(k, sq, occ, goal);
            }
        }
        el
    }

    /// Whether the opponent reaches a royal piece of the side to move after
    /// the legal move `m` (the game not ended by it), on the board `m`
    /// leaves, without playing it: `lines.now` when `m` neither captures,
    /// moves a royal piece, nor leaves or enters a square of `lines.lines`;
    /// else, unless a royal piece moves (its squares are the targets), only
    /// the enemy pieces of `lines.origins` are looked at.
    #[inline]
    fn enemy_wins_after(&self, m: Move, lines: &EnemyLines) -> bool {
        let (fb, tb) = (1u128 << m.from, 1u128 << m.to);
        let opp = self.pos.stm.opponent();
        let captures = tb & self.pos.occ[opp.index()] != 0;
        if (fb | tb) & lines.lines == 0 && !captures && lines.royal & fb == 0 {
            return lines.now;
        }
        let occ = (self.occupied() & !fb) | tb;
        if lines.royal & fb != 0 {
            // A royal piece moves: the targets move with it.
            let mine = &self.pos.pieces[self.pos.stm.index()];
            let moved = |bb: u128| if bb & fb != 0 { (bb & !fb) | tb } else { bb };
            let mut theirs = self.pos.pieces[opp.index()];
            if captures {
                theirs.iter_mut().for_each(|x| *x &= !tb);
            }
            let (princess, chief) = (mine[Piece::Princess.index()], mine[Piece::Chief.index()]);
            // A legal move of the Princess never ends on a square the enemy
            // attacks with her origin emptied (§5, `princess_dests`), and
            // captures nothing: only the Chief can be reached after it.
            let princess_after = if princess & fb != 0 { 0 } else { princess };
            return self.royal_capture_with(opp, &theirs, princess_after, moved(chief), occ);
        }
        // The captured piece (if any) is gone; the targets stay.
        let keep = !tb;
        if panthan_attacks(opp, lines.panthans & keep) & lines.panthan_goal != 0 {
            return true;
        }
        let t = tables();
        let tk = self.thoat_kind();
        for (i, (_, k)) in PATH_PIECES.into_iter().chain(std::iter::once((Piece::Thoat, tk))).enumerate() {
            let mut b = lines.origins[i] & keep;
            while b != 0 {
                let sq = b.trailing_zeros() as usize;
                b &= b - 1;
                if t.reaches(k, sq, occ, lines.goals[i]) {
                    return true;
                }
            }
        }
        false
    }

    /// [`crate::GameState::forcing_moves`] for Jetan, from two masks of the
    /// board before any move (no allocation):
    /// * the *lines* of the side to move: every square that some path of one
    ///   of its pieces to a winning capture (`royal_goal`) needs empty. With
    ///   no threat now, a move leaves one only if its piece arrives where it
    ///   could reach a royal piece on an empty board, or it leaves a line
    ///   square (a discovered threat); those few are tested exactly
    ///   (`threat_after_move`), the rest are no threat.
    /// * with `zugzwangs`, the opponent's *waiting pieces*: up to four pieces
    ///   other than its Princess and Chief, off those lines, with a move.
    ///   After a move without a threat, a waiting piece that is still there,
    ///   still off the lines of the moved piece, and still has a move gives
    ///   the opponent a reply that moves no royal piece and opens no line,
    ///   so the mover has no winning capture after it: no zugzwang. Moves
    ///   for which no waiting piece stays so are kept.
    ///
    /// Under the two switches where other moves win (see
    /// [`Jetan::winning_move_exists`]), and when the side to move already
    /// has a winning capture, every move is kept.
    pub(crate) fn forcing_moves_into(&self, moves: &[Move], zugzwangs: bool, out: &mut Vec<Move>) {
        out.clear();
        let me = self.pos.stm;
        if self.other_moves_may_win() || self.pos.outcome.is_some() || self.captures_a_royal(me) {
            out.extend_from_slice(moves);
            return;
        }
        let t = tables();
        let tk = self.thoat_kind();
        let mine = &self.pos.pieces[me.index()];
        let mut lines = 0u128;
        for (p, k) in PATH_PIECES.into_iter().chain(std::iter::once((Piece::Thoat, tk))) {
            let goal = self.royal_goal(me, p.index());
            let mut b = mine[p.index()] & t.origins(k, goal);
            while b != 0 {
                let sq = b.trailing_zeros() as usize;
                b &= b - 1;
                lines |= t.lines_to(k, sq, goal);
            }
        }
        let opp = me.opponent();
        let occ = self.occupied();
        let opp_own = self.pos.occ[opp.index()];
        // Waiting pieces: (square, table kind or `None` for a Panthan, the
        // squares every one of its open paths needs empty: a move onto none
        // of them leaves it a move).
        let mut waiting = [(0u8, None::<usize>, 0u128); 4];
        let mut n_waiting = 0;
        if zugzwangs {
            let theirs = &self.pos.pieces[opp.index()];
            let waiters = [Piece::Panthan, Piece::Warrior, Piece::Padwar, Piece::Dwar, Piece::Flier, Piece::Thoat];
            'collect: for p in waiters {
                let kind = self.table_kind(p.index());
                let mut b = theirs[p.index()] & !lines;
                while b != 0 {
                    let sq = b.trailing_zeros() as u8;
                    b &= b - 1;
                    let needed = match kind {
                        None if panthan_attacks(opp, 1u128 << sq) & !opp_own & BOARD != 0 => Some(0),
                        None => None,
                        Some(k) => t
                            .entries(k, sq as usize)
                            .iter()
                            .filter(|&&(req, dests)| req & occ == 0 && dests & !opp_own & BOARD != 0)
                            .map(|&(req, _)| req)
                            .reduce(|x, y| x & y),
                    };
                    if let Some(needed) = needed {
                        waiting[n_waiting] = (sq, kind, needed);
                        n_waiting += 1;
                        if n_waiting == waiting.len() {
                            break 'collect;
                        }
                    }
                }
            }
        }
        // Per piece index: the table kind and the winning squares.
        let kinds: [Option<usize>; 8] = std::array::from_fn(|p| self.table_kind(p));
        let goals: [u128; 8] = std::array::from_fn(|p| self.royal_goal(me, p));
        for &m in moves {
            let (a, b) = (m.from as usize, m.to as usize);
            let code = self.pos.board[a];
            if code == 0 {
                out.push(m);
                continue;
            }
            let p = (code - 1) as usize % 8;
            let goal = goals[p];
            let kind = kinds[p];
            // Whether the moved piece, from its new square, could reach a
            // royal piece on an empty board (the Princess never captures).
            let arrives = match kind {
                _ if p == Piece::Princess.index() => false,
                None => panthan_attacks(me, 1u128 << b) & goal != 0,
                Some(k) => t.any[k * 100 + b] & goal != 0,
            };
            if ((lines >> a) & 1 != 0 || arrives) && self.threat_after_move(m) {
                out.push(m);
                continue;
            }
            if !zugzwangs {
                continue;
            }
            // No threat after `m`: a zugzwang needs every waiting piece gone.
            let mut new_lines = 0u128;
            if let (true, Some(k)) = (arrives, kind) {
                new_lines = t.lines_to(k, b, goal);
            }
            let occ2 = (occ & !(1u128 << a)) | (1u128 << b);
            let own2 = opp_own & !(1u128 << b);
            // A waiting piece keeps a move unless `m` lands on a square all of
            // its open paths need (it is then asked again).
            let quiet_reply = waiting[..n_waiting].iter().any(|&(x, k, needed)| {
                x as usize != b
                    && (new_lines >> x) & 1 == 0
                    && ((needed >> b) & 1 == 0 || piece_mobile(opp, x, k, occ2, own2))
            });
            if !quiet_reply {
                out.push(m);
            }
        }
    }

    /// [`crate::GameState::safe_reply`] for Jetan: the first move of
    /// `moves` after which the opponent reaches none of the royal pieces of
    /// the side to move (as [`Jetan::captures_a_royal`], on the board the
    /// move leaves, without playing it). Moves of the Princess and the Chief
    /// and captures are tried first: they are what parries a threat. Under
    /// the two switches where other moves win (see
    /// [`Jetan::winning_move_exists`]) it finds none. A move the Princess may
    /// make is never onto an attacked square (§5), and no move of the side to
    /// move ends the game with the opponent's win otherwise (§8).
    pub(crate) fn safe_reply_in(&self, moves: &[Move]) -> Option<Move> {
        if self.other_moves_may_win() || self.pos.outcome.is_some() {
            return None;
        }
        let me = self.pos.stm;
        let mine = &self.pos.pieces[me.index()];
        let royal = mine[Piece::Princess.index()] | mine[Piece::Chief.index()];
        let theirs_occ = self.pos.occ[me.opponent().index()];
        let lines = self.enemy_lines();
        let safe = |m: Move| !self.enemy_wins_after(m, &lines);
        let first = |m: &Move| royal & (1u128 << m.from) != 0 || theirs_occ & (1u128 << m.to) != 0;
        moves
            .iter()
            .copied()
            .filter(first)
            .find(|&m| safe(m))
            .or_else(|| moves.iter().copied().filter(|m| !first(m)).find(|&m| safe(m)))
    }

    /// [`crate::GameState::safe_reply_from_board`] for Jetan: the moves of
    /// [`Jetan::safe_reply_in`]'s first group (the Princess's and the
    /// Chief's moves, then every capture), generated from the board as
    /// [`Jetan::gen_moves`] generates them (so each is legal) and tested on
    /// the board each leaves ([`Jetan::enemy_wins_after`]), without the list
    /// of legal moves. `None` when none of them parries (a quiet move of
    /// another piece may: the caller then asks `safe_reply` with the list),
    /// and always under the two switches where other moves win.
    pub(crate) fn safe_reply_from_board(&self) -> Option<Move> {
        if self.other_moves_may_win() || self.pos.outcome.is_some() {
            return None;
        }
        let t = tables();
        let s = self.pos.stm;
        let pcs = &self.pos.pieces[s.index()];
        let own = self.pos.occ[s.index()];
        let theirs = self.pos.occ[s.opponent().index()];
        let occ = self.occupied();
        let lines = self.enemy_lines();
        let first_safe = |from: usize, mut d: u128| {
            while d != 0 {
                let m = Move::new(from as u8, d.trailing_zeros() as u8);
                d &= d - 1;
                if !self.enemy_wins_after(m, &lines) {
                    return Some(m);
                }
            }
            None
        };
        if let Some((psq, normal, escape)) = self.princess_dests(t) {
            if let Some(m) = first_safe(psq as usize, normal | escape) {
                return Some(m);
            }
        }
        let mut b = pcs[Piece::Chief.index()];
        while b != 0 {
            let sq = b.trailing_zeros() as usize;
            b &= b - 1;
            if let Some(m) = first_safe(sq, t.reach(K_CHIEF, sq, occ) & !own & BOARD) {
                return Some(m);
            }
        }
        // Captures by the other pieces (§4.1-§4.7).
        let pan = pcs[Piece::Panthan.index()];
        for (d, mask) in panthan_dirs(s) {
            let mut c = shift(pan & !mask, d) & theirs;
            while c != 0 {
                let to = c.trailing_zeros() as i32;
                c &= c - 1;
                let m = Move::new((to - d) as u8, to as u8);
                if !self.enemy_wins_after(m, &lines) {
                    return Some(m);
                }
            }
        }
        let tk = self.thoat_kind();
        for (p, k) in PATH_PIECES.into_iter().chain(std::iter::once((Piece::Thoat, tk))) {
            if p == Piece::Chief {
                continue;
            }
            let mut b = pcs[p.index()];
            while b != 0 {
                let sq = b.trailing_zeros() as usize;
                b &= b - 1;
                if let Some(m) = first_safe(sq, t.reach(k, sq, occ) & theirs) {
                    return Some(m);
                }
            }
        }
        None
    }

    /// The table kind of piece index `p` (`None` for a Panthan, whose moves
    /// are shifts, and for the Princess).
    #[inline]
    fn table_kind(&self, p: usize) -> Option<usize> {
        if p == Piece::Thoat.index() {
            return Some(self.thoat_kind());
        }
        PATH_PIECES.iter().find(|(q, _)| q.index() == p).map(|&(_, k)| k)
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

/// The opponent's royal captures now and the squares that can change them
/// ([`Jetan::enemy_lines`]).
struct EnemyLines {
    now: bool,
    lines: u128,
    /// The side to move's Princess and Chief.
    royal: u128,
    /// The enemy Panthans and the squares on which they win.
    panthans: u128,
    panthan_goal: u128,
    /// Per entry of `PATH_PIECES` then the Thoat: the enemy pieces that
    /// reach a winning square on an empty board, and those squares.
    origins: [u128; 6],
    goals: [u128; 6],
}

/// Whether `side`'s piece on `sq` (table kind `kind`, `None` for a Panthan)
/// has a move with occupancy `occ` and `side`'s own pieces `own` (spec §3-§4:
/// a Panthan or a path piece may move to any square it reaches that its own
/// side does not hold).
#[inline]
fn piece_mobile(side: Side, sq: u8, kind: Option<usize>, occ: u128, own: u128) -> bool {
    let dests = match kind {
        None => panthan_attacks(side, 1u128 << sq),
        Some(k) => tables().reach(k, sq as usize, occ),
    };
    dests & !own & BOARD != 0
}
