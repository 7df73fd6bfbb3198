//! What the two Martian Chess games share (`docs/rules/martian-chess.md`,
//! "the spec"): the pyramids (Pawn, Drone, Queen, spec §2), their moves on a
//! bitboard (§5), captures and merges (§6, §7), the deadlock clock (§9.2,
//! §14.5), the Zobrist keys and the common parts of the text formats (§10,
//! §14.8).
//!
//! The two-player game ([`crate::martian`], 4 x 8, `u32` bitboards) and the
//! four-player game ([`crate::martian4`], 8 x 8, `u64` bitboards) differ in
//! who controls which squares (a zone per side, a quadrant per seat), the
//! no-undo ban (two players only) and the clock call flag (four players
//! only). Everything else is written once here, generic over the board
//! ([`Board`]) and the state ([`PyramidState`]); each game's module keeps
//! only what is its own.
//!
//! This module imports neither game: both import it.

mod board;
mod movegen;
pub(crate) mod notation;
mod play;
mod rules;
pub(crate) mod zobrist;

pub(crate) use board::{Board, Geometry, Pieces, Word};
pub(crate) use movegen::{count_moves, gen_moves, winning_move_exists};
pub(crate) use play::{end_reason, higher_score, move_piece, next_clock, score_capture};
pub use rules::{ClockMode, EmptyZoneTie};

use crate::game::{GameState, Move};

pub(crate) const PAWN: usize = 0;
pub(crate) const DRONE: usize = 1;
pub(crate) const QUEEN: usize = 2;

/// Bit added to [`Move::to`] for a move that also calls the deadlock clock
/// (spec §14.5, four players under the `Manual` clock). The destination
/// square is `to & 63`; two-player moves never carry it.
pub const CALL_CLOCK: u8 = 0x40;

/// "No square" marker (the two-player game's absent previous ply).
pub(crate) const NONE: u8 = 0xFF;

/// A piece kind (spec §2). Pieces have no owner: the zone (two players) or
/// the quadrant (four players) decides control.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Piece {
    /// Small pyramid, 1 pip, moves one step diagonally (spec §5).
    Pawn = 0,
    /// Medium pyramid, 2 pips, moves 1-2 steps orthogonally (spec §5).
    Drone = 1,
    /// Large pyramid, 3 pips, moves like a chess queen (spec §5).
    Queen = 2,
}

impl Piece {
    /// All kinds, smallest first.
    pub const ALL: [Piece; 3] = [Piece::Pawn, Piece::Drone, Piece::Queen];

    /// Value in pips, scored when captured (spec §2, §6).
    #[inline]
    pub const fn value(self) -> u32 {
        self as u32 + 1
    }

    /// Letter in position strings: `P`, `D`, `Q` (spec §2, §10).
    #[inline]
    pub const fn letter(self) -> char {
        match self {
            Piece::Pawn => 'P',
            Piece::Drone => 'D',
            Piece::Queen => 'Q',
        }
    }

    /// The spec's name of the kind: `Pawn`, `Drone`, `Queen`.
    #[inline]
    pub const fn name(self) -> &'static str {
        match self {
            Piece::Pawn => "Pawn",
            Piece::Drone => "Drone",
            Piece::Queen => "Queen",
        }
    }

    /// The kind with index `i` (0 Pawn, 1 Drone, anything else Queen).
    #[inline]
    pub(crate) const fn from_index(i: usize) -> Piece {
        match i {
            0 => Piece::Pawn,
            1 => Piece::Drone,
            _ => Piece::Queen,
        }
    }
}

/// The bitboard word of a [`PyramidState`]'s board.
pub(crate) type WordOf<S> = <<S as PyramidState>::Board as Geometry>::W;

/// The view of a game state that the shared move generation, end checks
/// and evaluation hooks need. Both games implement it; the hooks with
/// defaults are the features only one game has.
pub(crate) trait PyramidState: GameState + Copy {
    /// The board the game is played on.
    type Board: Geometry;

    /// Bitboards of Pawns, Drones, Queens.
    fn bitboards(&self) -> &[<Self::Board as Geometry>::W; 3];

    /// The squares whose pieces the side (seat) to move controls.
    fn mover_zone(&self) -> <Self::Board as Geometry>::W;

    /// Whether merges are allowed (`field_promotion`, spec §7).
    fn field_promotion(&self) -> bool;

    /// The clock mode of the rules.
    fn clock_mode(&self) -> ClockMode;

    /// The clock state: 0 while not called, `1 + countdown` once called.
    fn clock_state(&self) -> u32;

    /// The move cap of the rules (`max_plies`).
    fn max_plies(&self) -> u32;

    /// The move banned by the no-undo rule (spec §8) as `(from, to)`, if any
    /// (two players only).
    fn ban(&self) -> Option<(u8, u8)> {
        None
    }

    /// [`CALL_CLOCK`] while a move may call the clock (four players under
    /// `Manual`, clock not yet called, spec §14.5), else 0.
    fn call_flag(&self) -> u8 {
        0
    }
}

/// `s`'s legal moves into `out` ([`GameState::legal_moves`] of both games).
#[inline]
pub(crate) fn legal_moves<S: PyramidState>(s: &S, out: &mut Vec<Move>) {
    if s.outcome().is_some() {
        out.clear();
    } else {
        gen_moves(s, out);
    }
}

/// The number of `s`'s legal moves ([`GameState::count_legal_moves`] of both games).
#[inline]
pub(crate) fn count_legal_moves<S: PyramidState>(s: &S) -> usize {
    if s.outcome().is_some() {
        0
    } else {
        count_moves(s)
    }
}

/// Pips on the squares of `mask` (an evaluation term of both games' baselines).
#[inline]
pub(crate) fn pips<W: Word>(bb: &[W; 3], mask: W) -> i32 {
    Piece::ALL.iter().map(|&p| p.value() as i32 * (bb[p as usize] & mask).count_ones() as i32).sum()
}

/// [`crate::ab::AbGame::capture_values`] of both games: `(100 * victim pips,
/// attacker pips)` for a capture, `None` for a plain move or a merge (a
/// destination in the mover's own zone).
#[inline]
pub(crate) fn capture_values<S: PyramidState>(s: &S, mv: Move) -> Option<(i32, i32)> {
    let to = mv.to & !CALL_CLOCK;
    let bb = s.bitboards();
    let victim = bb.piece_at(to)?;
    if s.mover_zone().has(to) {
        return None; // a merge, not a capture
    }
    let attacker = bb.piece_at(mv.from).map(|p| p.value() as i32).unwrap_or(0);
    Some((100 * victim.value() as i32, attacker))
}
