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

/// The rules switches that both games have and the shared code reads.
#[derive(Copy, Clone, Debug)]
pub(crate) struct Switches {
    /// `field_promotion` (spec §7).
    pub field_promotion: bool,
    /// `clock` (spec §9.2, §14.5).
    pub clock: ClockMode,
    /// `max_plies` (spec §9.3, §14.6).
    pub max_plies: u32,
}

/// What the shared code reads of a game state ([`PyramidState::view`]).
#[derive(Copy, Clone, Debug)]
pub(crate) struct View<W> {
    /// Bitboards of Pawns, Drones, Queens.
    pub bb: [W; 3],
    /// The squares whose pieces the side (seat) to move controls.
    pub zone: W,
    /// The switches of the rules.
    pub rules: Switches,
    /// The clock state: 0 while not called, `1 + countdown` once called.
    pub clock: u32,
    /// The scores that decide the result, indexed by
    /// [`Side::index`](crate::Side::index): the players' (two players), the
    /// teams' (four players, §14.7).
    pub scores: [u32; 2],
    /// The move banned by the no-undo rule (spec §8) as `(from, to)`, if any
    /// (two players only).
    pub ban: Option<(u8, u8)>,
    /// [`CALL_CLOCK`] while a move may call the clock (four players under
    /// `Manual`, clock not yet called, spec §14.5), else 0.
    pub flag: u8,
}

/// A game state that the shared move generation, end checks and evaluation
/// hooks work on: both games implement it with [`PyramidState::view`].
pub(crate) trait PyramidState: GameState + Copy {
    /// The board the game is played on.
    type Board: Geometry;

    /// What the shared code reads of the state.
    fn view(&self) -> View<WordOf<Self>>;
}

/// The [`GameState`] methods that both games implement alike, written into
/// the body of their `impl GameState` (so that the two impls do not repeat
/// them). The game's module must have `notation::{parse_position,
/// format_position, SYNTAX}` and `encode::encode_packed`, and the state the
/// fields `rules`, `ply`, `outcome` and `hash` and the methods `full_hash`
/// and `winning_move_exists`.
macro_rules! shared_game_state_methods {
    ($rules:ty) => {
        /// Captured pips decide the result (spec §6, §9; §14.4, §14.7).
        const HAS_SCORE: bool = true;

        fn from_position(text: &str, rules: &$rules) -> Result<Self, RulesError> {
            rules.validate()?;
            notation::parse_position(text, rules)
        }

        fn to_position(&self) -> String {
            notation::format_position(self)
        }

        fn rules(&self) -> &$rules {
            &self.rules
        }

        #[inline]
        fn ply(&self) -> u32 {
            self.ply
        }

        #[inline]
        fn legal_moves(&self, out: &mut Vec<Move>) {
            $crate::pyramids::legal_moves(self, out);
        }

        #[inline]
        fn count_legal_moves(&self) -> usize {
            $crate::pyramids::count_legal_moves(self)
        }

        #[inline]
        fn outcome(&self) -> Option<Outcome> {
            self.outcome
        }

        /// Looks only at the moves that can end the game: see
        /// `winning_move_exists` (module `movegen`).
        fn has_winning_move(&self) -> bool {
            self.winning_move_exists()
        }

        #[inline]
        fn hash(&self) -> u64 {
            self.hash
        }

        fn recompute_hash(&self) -> u64 {
            self.full_hash()
        }

        /// `side`'s score minus the other side's once the game is over: the
        /// captured pips (spec §6), in the four-player game the team scores
        /// in both modes (§14.7; free-for-all: the team view).
        fn final_score_difference(&self, side: Side) -> Option<i32> {
            self.outcome?;
            let s = $crate::pyramids::PyramidState::view(self).scores;
            Some(s[side.index()] as i32 - s[side.opponent().index()] as i32)
        }

        fn move_to_string(&self, mv: Move) -> String {
            notation::SYNTAX.move_text(mv)
        }

        fn parse_move(&self, text: &str) -> Result<Move, RulesError> {
            $crate::game::legal_move_or_error(self, notation::SYNTAX.parse_move_text(text)?)
        }

        fn encode_packed(&self, out: &mut [$crate::PackedPlane]) {
            encode::encode_packed(self, out);
        }
    };
}
pub(crate) use shared_game_state_methods;

/// Plays the move `from -> to` of the player with index `me` (whose pieces
/// stand on `own_zone`) on `bb`, adding a capture's pips to `scores[me]`
/// ([`move_piece`], [`score_capture`]); returns the change of the hash under
/// the piece keys `keys` and the score keys `score_key`, and whether the ply
/// captured.
#[allow(clippy::too_many_arguments)]
#[inline(always)]
pub(crate) fn play_pieces<W: Word, const N: usize>(
    bb: &mut [W; 3],
    scores: &mut [u32],
    me: usize,
    from: u8,
    to: u8,
    own_zone: W,
    keys: &[[u64; N]; 3],
    score_key: impl Fn(usize, u32) -> u64,
) -> (u64, bool) {
    let (mut h, victim) = move_piece(bb, from, to, own_zone, keys);
    if let Some(kind) = victim {
        h ^= score_capture(scores, me, kind, score_key);
    }
    (h, victim.is_some())
}

/// The evaluation terms both games' alpha-beta baselines share, from the
/// side to move's view: `score` per pip of score difference
/// ([`View::scores`]) plus
/// `material` per pip on the squares of its zones (`zones`, likewise) minus
/// the opponent's.
pub(crate) fn score_and_material<S: PyramidState>(s: &S, zones: [WordOf<S>; 2], score: i32, material: i32) -> i32 {
    let (me, op) = (s.side_to_move().index(), s.side_to_move().opponent().index());
    let View { bb, scores, .. } = s.view();
    score * (scores[me] as i32 - scores[op] as i32) + material * (pips(&bb, zones[me]) - pips(&bb, zones[op]))
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
    let View { bb, zone, .. } = s.view();
    let victim = bb.piece_at(to)?;
    if zone.has(to) {
        return None; // a merge, not a capture
    }
    let attacker = bb.piece_at(mv.from).map(|p| p.value() as i32).unwrap_or(0);
    Some((100 * victim.value() as i32, attacker))
}
